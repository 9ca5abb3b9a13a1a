"""Embedders and the embedding cache: MiniLM (real model), TF-IDF, OpenAI-compatible HTTP (real client against
a loopback server), and the on-disk cache."""

from __future__ import annotations

import base64
import gc
import json
import threading
from pathlib import Path

import numpy as np
import pytest

from toolsearch_lab.embed import (
    EmbeddingError,
    MiniLMEmbedder,
    OpenAIEmbedder,
    TfidfEmbedder,
    verify_model_file,
)
from toolsearch_lab.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_dir


class CountingEmbedder:
    """Deterministic fake: a text's vector depends only on the text. Counts calls and texts embedded."""

    def __init__(self, dim: int = 8, name: str = "counting-v1") -> None:
        self.dim = dim
        self.name = name
        self.calls = 0
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts):
        texts = list(texts)
        with self._lock:
            self.calls += 1
            self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            rng = np.random.default_rng(abs(hash(t)) % (2**32))
            out[i] = rng.normal(size=self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


# ---------------------------------------------------------------------------------------------- MiniLM


def test_minilm_shape_dtype_and_unit_norm(minilm):
    vectors = minilm.embed(["get the weather forecast", "", "a much longer text " * 200])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_paraphrase_scores_above_unrelated(minilm):
    a, b, c = minilm.embed(
        [
            "What will the weather be like tomorrow?",
            "Show me tomorrow's weather forecast",
            "Convert this PDF to Word",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


def test_minilm_batching_and_padding_do_not_change_vectors(minilm):
    texts = [
        "short",
        "a somewhat longer sentence about sending email to a colleague",
        "list open pull requests",
    ]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    # int8 dynamic quantisation computes activation scales per batch, so equality is approximate.
    assert np.all(np.sum(together * alone, axis=1) > 0.995)


def test_minilm_hidden_states_give_every_text_one_vector_per_word_piece(minilm):
    texts = ["weather", "send an email to a colleague", "list open pull requests on github"]
    seen = {}
    for rows, ids, mask, hidden in minilm.hidden_states(texts):
        assert hidden.shape == (*ids.shape, 384) and mask.shape == ids.shape
        for r, row in enumerate(rows.tolist()):
            seen[row] = ids[r, : int(mask[r].sum())].tolist()
    assert sorted(seen) == [0, 1, 2]
    assert len(seen[0]) == 3  # [CLS] weather [SEP]
    assert all(len(seen[i]) < len(seen[i + 1]) for i in range(2))
    calls = minilm.calls
    assert list(minilm.hidden_states([])) == [] and minilm.calls == calls


def test_lone_surrogates_are_replaced_not_fatal(minilm, tmp_path):
    vec = minilm.embed(["weather \ud800"])
    assert vec.shape == (1, 384) and np.isfinite(vec).all()
    cached = CachedEmbedder(CountingEmbedder(), tmp_path)
    assert cached.embed(["x \udfff"]).shape == (1, 8)


def test_minilm_rejects_a_bare_string(minilm):
    with pytest.raises(TypeError, match="single str"):
        minilm.embed("hello")


def test_model_file_hash_mismatch_is_a_clear_error(tmp_path):
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbeddingError, match="sha256"):
        verify_model_file(fake, "0" * 64)
    with pytest.raises(EmbeddingError, match="missing"):
        verify_model_file(tmp_path / "absent.onnx", "0" * 64)


# ---------------------------------------------------------------------------------------------- TF-IDF


def test_tfidf_embedder_fits_and_normalises():
    emb = TfidfEmbedder()
    with pytest.raises(EmbeddingError, match="fit"):
        emb.embed(["x"])
    emb.fit(["getWeather returns the forecast", "sendEmail sends a message", "calculator adds numbers"])
    vectors = emb.embed(["weather forecast", "zzz unknown words"])
    assert vectors.shape == (2, emb.dim)
    assert abs(np.linalg.norm(vectors[0]) - 1.0) < 1e-5
    assert np.linalg.norm(vectors[1]) == 0.0  # no known term: zero vector, not NaN
    docs = emb.embed(["getWeather returns the forecast", "sendEmail sends a message"])
    assert float(vectors[0] @ docs[0]) > float(vectors[0] @ docs[1])
    name = emb.name
    assert name != TfidfEmbedder().fit(["other corpus"]).name


def test_tfidf_embedder_with_svd():
    emb = TfidfEmbedder(svd_components=2).fit(["a b c", "b c d", "d e f", "weather forecast today"])
    assert emb.embed(["b c"]).shape == (1, 2)
    assert emb.name.endswith("svd2")


# ---------------------------------------------------------------------------------------------- cache


def test_cache_second_call_does_not_run_the_model(tmp_path):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path)
    first = cached.embed(["alpha", "beta", "alpha"])
    assert inner.calls == 1 and inner.texts == ["alpha", "beta"]  # duplicates embedded once
    second = cached.embed(["beta", "alpha"])
    assert inner.calls == 1
    np.testing.assert_array_equal(second, first[[1, 0]])
    assert first.dtype == np.float32


def test_cache_persists_across_instances_and_processes_share_files(tmp_path):
    texts = [f"text {i}" for i in range(300)]  # >= the buffered-write threshold: written at once
    a = CachedEmbedder(CountingEmbedder(), tmp_path, progress=False)
    expected = a.embed(texts)
    inner = CountingEmbedder()
    b = CachedEmbedder(inner, tmp_path, progress=False)
    np.testing.assert_array_equal(b.embed(texts), expected)
    assert inner.calls == 0
    # A different embedder name never sees those vectors.
    other = CountingEmbedder(name="counting-v2")
    CachedEmbedder(other, tmp_path).embed(["text 1"])
    assert other.calls == 1


def test_small_misses_are_buffered_then_flushed(tmp_path):
    a = CachedEmbedder(CountingEmbedder(), tmp_path)
    a.embed(["one query"])
    a.flush()
    inner = CountingEmbedder()
    CachedEmbedder(inner, tmp_path).embed(["one query"])
    assert inner.calls == 0


def test_small_misses_are_kept_when_the_cached_embedder_is_dropped_before_exit(tmp_path):
    # An embedder made inside a function (a benchmark's main, a notebook helper) is gone by exit time.
    def embed_once():
        CachedEmbedder(CountingEmbedder(), tmp_path).embed(["one query"])

    embed_once()
    gc.collect()
    inner = CountingEmbedder()
    CachedEmbedder(inner, tmp_path).embed(["one query"])
    assert inner.calls == 0


def test_cache_survives_concurrent_writers_and_corrupt_shards(tmp_path):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path, progress=False)
    threads = [
        threading.Thread(target=cached.embed, args=([f"t{j}-{i}" for i in range(300)],)) for j in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cache_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    (cache_dir / "broken.npz").write_bytes(b"garbage")
    fresh_inner = CountingEmbedder()
    fresh = CachedEmbedder(fresh_inner, tmp_path, progress=False)
    fresh.embed([f"t{j}-{i}" for j in range(4) for i in range(300)])
    assert fresh_inner.calls == 0
    assert not list(cache_dir.glob(".tmp-*"))  # no temp files left behind


def test_cache_compacts_many_shards(tmp_path):
    cache = EmbeddingCache("x", cache_dir=tmp_path)
    for i in range(40):
        cache.put_many([f"k{i}"], np.ones((1, 3), dtype=np.float32) * i)
    assert len(list(cache.directory.glob("*.npz"))) <= 33
    fresh = EmbeddingCache("x", cache_dir=tmp_path)
    assert [float(v[0]) for v in fresh.get_many(["k0", "k39"])] == [0.0, 39.0]


def test_another_writers_unfinished_file_is_neither_read_nor_deleted(tmp_path, caplog):
    """A writer's ``.tmp-*.npz`` is still being written: readers skip it (no warning about a torn file) and
    compaction leaves it alone, so the other process can still move it into place."""
    cache = EmbeddingCache("x", cache_dir=tmp_path)
    cache.put_many(["k0"], np.ones((1, 3), dtype=np.float32))
    in_flight = cache.directory / ".tmp-another-writer.npz"
    in_flight.write_bytes(b"half a zip file")
    for i in range(1, 40):  # enough shards to compact
        cache.put_many([f"k{i}"], np.ones((1, 3), dtype=np.float32) * i)
    with caplog.at_level("WARNING"):
        fresh = EmbeddingCache("x", cache_dir=tmp_path)
        assert float(fresh.get_many(["k39"])[0][0]) == 39.0
    assert in_flight.exists()
    assert not [r for r in caplog.records if "unreadable" in r.getMessage()]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_shard_with_non_finite_vectors_is_ignored_by_name_and_recomputed(tmp_path, caplog, bad):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path, progress=False)
    cached.embed([f"t{i}" for i in range(300)])
    shard = next(p for p in cached.cache.directory.glob("*.npz"))
    with np.load(shard) as data:
        keys, vectors = data["keys"], data["vectors"].copy()
    vectors[0, 0] = bad
    np.savez(shard, keys=keys, vectors=vectors)
    fresh_inner = CountingEmbedder()
    with caplog.at_level("WARNING"):
        out = CachedEmbedder(fresh_inner, tmp_path, progress=False).embed(["t0"])
    assert np.isfinite(out).all() and fresh_inner.calls == 1
    assert any(shard.name in r.getMessage() and "non-finite" in r.getMessage() for r in caplog.records)


def test_cache_dir_env_override(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "embeddings"
    inner = CountingEmbedder()
    CachedEmbedder(inner).embed([f"q{i}" for i in range(300)])
    assert list((tmp_path / "embeddings").iterdir())


# ---------------------------------------------------------------------------------------------- OpenAI

SECRET = "sk-test-SECRET-0123456789"


def _embedding_reply(body: dict, dim: int = 4) -> dict:
    data = []
    for i, text in enumerate(body["input"]):
        vec = np.array([len(text), 1.0, float(i), 2.0][:dim], dtype=np.float32)
        if body.get("encoding_format") == "base64":
            emb = base64.b64encode(vec.tobytes()).decode()
        else:
            emb = vec.tolist()
        data.append({"object": "embedding", "index": i, "embedding": emb})
    data.reverse()  # servers may answer out of order; the client must sort by index
    return {
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


def _handler(calls: list):
    from werkzeug import Response

    def handle(request):
        body = json.loads(request.data)
        calls.append((dict(request.headers), body))
        return Response(json.dumps(_embedding_reply(body)), content_type="application/json")

    return handle


def test_openai_embedder_batches_and_normalises(httpserver):
    calls: list = []
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(_handler(calls))
    emb = OpenAIEmbedder(
        "my-model", base_url=httpserver.url_for("/v1"), api_key=SECRET, batch_size=2, max_retries=0
    )
    vectors = emb.embed(["a", "bbb", "", "dd", "e"])
    assert vectors.shape == (5, 4) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert [len(body["input"]) for _, body in calls] == [2, 2, 1]
    assert calls[1][1]["input"][0] == " "  # empty string replaced: the API rejects ""
    expected = np.array([3.0, 1.0, 1.0, 2.0]) / np.linalg.norm([3.0, 1.0, 1.0, 2.0])
    np.testing.assert_allclose(vectors[1], expected, rtol=1e-6)  # order restored from "index"
    assert calls[0][0]["Authorization"] == f"Bearer {SECRET}"
    assert emb.dim == 4


def test_openai_embedder_retries_after_429(httpserver):
    from werkzeug import Response

    calls: list = []
    httpserver.expect_ordered_request("/v1/embeddings").respond_with_response(
        Response(
            json.dumps({"error": {"message": "slow down"}}),
            status=429,
            headers={"retry-after-ms": "10"},
            content_type="application/json",
        )
    )
    httpserver.expect_ordered_request("/v1/embeddings").respond_with_handler(_handler(calls))
    emb = OpenAIEmbedder("m", base_url=httpserver.url_for("/v1"), api_key=SECRET, max_retries=2)
    assert emb.embed(["hello"]).shape == (1, 4)
    assert len(calls) == 1
    httpserver.check_assertions()


def test_openai_embedder_never_leaks_the_key(httpserver):
    from werkzeug import Response

    httpserver.expect_request("/v1/embeddings").respond_with_response(
        Response(
            json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET}"}}),
            status=401,
            content_type="application/json",
        )
    )
    emb = OpenAIEmbedder("m", base_url=httpserver.url_for("/v1"), api_key=SECRET, max_retries=0)
    assert SECRET not in repr(emb) and SECRET not in str(vars(emb))
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["x"])
    assert "401" in str(info.value) and "OPENAI_API_KEY" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None  # no SDK exception chained


def test_openai_embedder_without_configuration_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    emb = OpenAIEmbedder()  # constructing is fine: the client is built on first use
    with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
        emb.embed(["x"])


def test_openai_embedder_reads_environment(httpserver, monkeypatch):
    calls: list = []
    httpserver.expect_request("/v1/embeddings").respond_with_handler(_handler(calls))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", httpserver.url_for("/v1"))
    emb = OpenAIEmbedder("m", max_retries=0)
    assert emb.embed(["x"]).shape == (1, 4)
    assert SECRET not in repr(emb)
    assert httpserver.url_for("/v1").rstrip("/") in emb.name  # cache identity includes the endpoint


def test_openai_embedder_unreachable_server():
    emb = OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", api_key=SECRET, max_retries=0, timeout=2)
    with pytest.raises(EmbeddingError, match="cannot reach") as info:
        emb.embed(["x"])
    assert SECRET not in str(info.value)


def test_resources_are_shipped():
    base = Path(__file__).resolve().parents[1] / "toolsearch_lab" / "resources" / "minilm"
    for name in [
        "tokenizer.json",
        "vocab.txt",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "PROVENANCE.md",
    ]:
        assert (base / name).is_file(), name


@pytest.mark.parametrize(
    "body", ["{not json", json.dumps({"data": "x"}), json.dumps({"data": [{"index": 0}]})]
)
def test_openai_embedder_unreadable_bodies_are_embedding_errors(httpserver, body):
    from werkzeug import Response

    httpserver.expect_request("/v1/embeddings").respond_with_response(
        Response(body, status=200, content_type="application/json")
    )
    emb = OpenAIEmbedder("m", base_url=httpserver.url_for("/v1"), api_key=SECRET, max_retries=0)
    with pytest.raises(EmbeddingError, match="OpenAIEmbedder: ") as info:
        emb.embed(["x"])
    assert info.value.__context__ is None


def test_a_key_in_the_base_urls_query_string_stays_on_the_wire_only(httpserver, tmp_path):
    from werkzeug import Response

    seen: list = []

    def handle(request):
        seen.append(request.full_path)
        return Response(json.dumps({"error": {"message": f"bad key {SECRET}"}}), status=401)

    httpserver.expect_request("/v1/embeddings").respond_with_handler(handle)
    url = httpserver.url_for("/v1") + f"?api-key={SECRET}"
    emb = OpenAIEmbedder("m", base_url=url, api_key="sk-other-0123456789abcdef", max_retries=0)
    cached = CachedEmbedder(emb, tmp_path)
    for shown in (repr(emb), emb.name, str(vars(emb)), repr(cached), emb.base_url):
        assert SECRET not in shown, shown
    with pytest.raises(EmbeddingError) as info:
        cached.embed(["x"])
    assert SECRET not in str(info.value) and "401" in str(info.value)
    assert seen and seen[0].startswith("/v1/embeddings?") and SECRET in seen[0]  # sent, on the right path
    assert not [p for p in tmp_path.rglob("*") if SECRET in str(p)]
