"""The vectors shipped with the package: used for the shipped texts, never for a changed text or another
embedder, and close to what the model computes."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, load_catalog
from toolsearch_lab.embed import CachedEmbedder, MiniLMEmbedder, shipped_vectors, text_key
from toolsearch_lab.embed.shipped import (
    ShippedVectors,
    dequantise,
    quantise,
    shipped_path,
    write_shipped_vectors,
)
from toolsearch_lab.eval.datasets import load_dataset
from toolsearch_lab.index.vector import TEXT_MODES, VectorToolIndex, tool_text


@pytest.fixture()
def cached(tmp_path) -> CachedEmbedder:
    """The default embedder's setup over an empty cache directory: whatever is not shipped runs the model."""
    return CachedEmbedder(MiniLMEmbedder(), cache_dir=tmp_path, progress=False)


def test_the_default_embedder_has_shipped_vectors():
    name = MiniLMEmbedder().name
    assert shipped_path(name).is_file()
    assert len(shipped_vectors(name)) > 20_000


@pytest.mark.parametrize("catalog", list(SHIPPED_CATALOGS))
def test_every_view_of_every_shipped_catalog_is_shipped(cached, catalog):
    index = VectorToolIndex(cached, text="full")
    tools = list(load_catalog(catalog).tools)
    index.index_tools("s", tools)
    for mode in TEXT_MODES:
        cached.embed([tool_text(t, mode) for t in tools])
    assert cached.embedder.calls == 0  # the model never ran
    assert cached.misses == 0
    assert cached.shipped_hits == len(tools) * (1 + len(TEXT_MODES))


def test_dataset_queries_are_shipped(cached):
    queries = [q.query for q in load_dataset("metatool").queries[:500]]
    queries += [q.query for q in load_dataset("livemcpbench").queries]
    cached.embed(queries)
    assert cached.embedder.calls == 0


def test_shipped_vectors_match_the_model(cached):
    texts = [t.description for t in load_catalog("livemcpbench").tools[:12]]
    shipped = cached.embed(texts)
    fresh = MiniLMEmbedder().embed(texts)
    np.testing.assert_allclose(np.linalg.norm(shipped, axis=1), 1.0, atol=1e-5)
    assert np.sum(shipped * fresh, axis=1).min() >= 0.999


def test_a_changed_text_is_embedded_not_reused(cached):
    text = load_catalog("livemcpbench").tools[0].description
    changed = text + " Also sends email."
    vectors = cached.embed([text, changed])
    assert cached.embedder.calls == 1 and cached.misses == 1 and cached.shipped_hits == 1
    assert float(vectors[0] @ vectors[1]) < 0.999  # the new text got its own vector
    np.testing.assert_allclose(vectors[1], MiniLMEmbedder().embed([changed])[0], atol=1e-5)


def test_another_embedder_never_gets_the_shipped_vectors(tmp_path):
    other = CachedEmbedder(MiniLMEmbedder(max_length=128), cache_dir=tmp_path, progress=False)
    assert other.shipped_store is None
    other.embed([load_catalog("metatool").tools[0].description])
    assert other.embedder.calls == 1
    off = CachedEmbedder(MiniLMEmbedder(), cache_dir=tmp_path / "off", progress=False, shipped=False)
    off.embed([load_catalog("metatool").tools[0].description])
    assert off.embedder.calls == 1


def test_int8_round_trip_keeps_cosine_and_unit_length():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(200, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows, scales = quantise(vectors)
    assert rows.dtype == np.int8 and np.abs(rows).max() == 127
    back = dequantise(rows, scales)
    np.testing.assert_allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)
    assert np.sum(back * vectors, axis=1).min() > 0.9999
    zero_rows, zero_scales = quantise(np.zeros((1, 4), dtype=np.float32))
    assert not np.isnan(dequantise(zero_rows, zero_scales)).any()


def test_a_file_for_another_embedder_is_not_used(tmp_path):
    vectors = np.eye(3, 8, dtype=np.float32)
    keys = [text_key(t) for t in ("a", "b", "c")]
    path = tmp_path / "v.npz"
    write_shipped_vectors(path, "embedder-A", keys, vectors)
    assert ShippedVectors(path, "embedder-A").get_many([text_key("b"), text_key("zzz")])[1] is None
    np.testing.assert_allclose(ShippedVectors(path, "embedder-A").get_many([text_key("b")])[0], vectors[1])
    assert ShippedVectors(path, "embedder-B").get_many(keys) == [None, None, None]
    with pytest.raises(ValueError, match="2 keys but 3 vectors"):
        write_shipped_vectors(path, "embedder-A", keys[:2], vectors)
