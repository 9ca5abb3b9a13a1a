#!/usr/bin/env python3
"""Build the shipped vectors: every text the package's own data makes the default embedder embed.

    python tools/build_vectors.py            # write toolsearch_lab/resources/vectors/<embedder>.npz
    python tools/build_vectors.py --check    # exit 1 if a shipped text has no shipped vector

The texts are *recorded*, not guessed: the default embedder is replaced by one that notes every text it is
asked for, then the real code paths run over the shipped data - the vector and hybrid indexes over every
shipped catalog (each view: description, full text, name), both datasets' queries (with the per-sentence
clauses the hybrid embeds), the off-catalog and servable sets of the abstention fit and its tests, every
scenario (both wordings) through the vector and hybrid
indexes with the simulated agent, and notebook 06's catalogs up to the sizes it runs the hybrid at. So
whatever text those paths build (a changed ``tool_text``, a new scenario) is what gets shipped.

Vectors come from the on-disk cache or the model (never from an older shipped file), are stored as int8
(:mod:`toolsearch_lab.embed.shipped`), and the script checks each row's cosine with the float32 vector.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import toolsearch_lab.embed.default as default_module
from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, load_catalog
from toolsearch_lab.embed import CachedEmbedder, MiniLMEmbedder, text_key
from toolsearch_lab.embed.shipped import (
    dequantise,
    quantise,
    shipped_path,
    shipped_vectors,
    write_shipped_vectors,
)
from toolsearch_lab.eval.abstention import evidence
from toolsearch_lab.eval.datasets import SHIPPED_DATASETS, load_dataset
from toolsearch_lab.eval.offcatalog import calibration_sets, held_out_sets
from toolsearch_lab.eval.scaling import catalog_of, distractor_pool
from toolsearch_lab.eval.scenarios import list_scenarios, load_scenario, run_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.text.tool_text import TEXT_MODES

# Notebook 06 runs the hybrid up to this many tools (the pool of real tools plus a few renamed copies); the
# vector index's description view is covered at any size, since renamed copies keep their descriptions.
SCALING_HYBRID_MAX = 1000
SCALING_TARGETS = ("currentTime", "weather", "clothing")
EMBEDDING_KINDS = ("vector", "hybrid")  # the learned index embeds exactly what the hybrid embeds


class RecordingEmbedder(CachedEmbedder):
    """The cached MiniLM, ignoring shipped vectors, that remembers every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(MiniLMEmbedder(), shipped=False)
        self.seen: dict[str, str] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            self.seen.setdefault(text_key(text), text)
        return super().embed(texts)


def record_catalogs_and_datasets() -> None:
    for name in SHIPPED_CATALOGS:
        index = make_index("hybrid")
        index.index_tools("build", list(load_catalog(name).tools))
        make_index("vector", text=TEXT_MODES).index_tools("build", list(load_catalog(name).tools))
    for name in SHIPPED_DATASETS:
        dataset = load_dataset(name)
        index = make_index("hybrid")
        index.index_tools("build", dataset.tools)
        index.score_matrix("build", [q.query for q in dataset.queries])


def record_scenarios() -> None:
    for name in list_scenarios():  # both wordings: "<name>-user" is a scenario of its own
        try:
            scenario = load_scenario(name)
        except ValueError as exc:  # a broken scenario file is reported, not fatal: --check shows the gap
            print(f"  skipped scenario {name}: {exc}")
            continue
        for kind in EMBEDDING_KINDS:
            run_scenario(scenario, index=kind)


def record_abstention() -> None:
    """The off-catalog and servable sets the abstention model is fitted and judged on (over every catalog
    they name), so the fit and its test need no embedding."""
    evidence(calibration_sets() + held_out_sets())


def record_scaling() -> None:
    targets = [t for t in load_scenario("spring-demo").tools if t.name in SCALING_TARGETS]
    pool = distractor_pool(exclude=SCALING_TARGETS)
    make_index("vector").index_tools("build", catalog_of(len(pool) + len(targets), targets, pool))
    make_index("hybrid").index_tools("build", catalog_of(SCALING_HYBRID_MAX, targets, pool))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report texts missing from the file")
    args = parser.parse_args(argv)
    recorder = RecordingEmbedder()
    default_module._DEFAULT = recorder  # every index built with the default embedder now records
    started = time.perf_counter()
    for step in (record_catalogs_and_datasets, record_abstention, record_scenarios, record_scaling):
        step()
        print(f"{step.__name__}: {len(recorder.seen):,} distinct texts so far", flush=True)
    keys = sorted(recorder.seen)
    name = recorder.embedder.name
    if args.check:
        store = shipped_vectors(name)
        found = store.get_many(keys) if store is not None else [None] * len(keys)
        missing = [recorder.seen[k] for k, v in zip(keys, found, strict=True) if v is None]
        print(f"{len(keys) - len(missing):,} of {len(keys):,} shipped texts have shipped vectors")
        for text in missing[:10]:
            print(f"  missing: {text[:100]!r}")
        return 1 if missing else 0
    vectors = recorder.embed([recorder.seen[k] for k in keys])
    rows, scales = quantise(vectors)
    agreement = np.sum(dequantise(rows, scales) * vectors, axis=1)
    path = shipped_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_shipped_vectors(path, name, keys, vectors)
    print(
        f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB): {len(keys):,} texts of {name}; int8 vs float32 "
        f"cosine min {agreement.min():.5f}, mean {agreement.mean():.6f}; "
        f"{time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
