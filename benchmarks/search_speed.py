"""How fast is BM25ToolIndex next to bm25s and rank_bm25 on the same documents and queries?

    .venv/bin/python benchmarks/search_speed.py [--sizes 1000,10000,100000] [--queries 200]

Synthetic catalogs of 1k / 10k / 100k distinct tools are recombined, with a fixed seed, from the real tools
shipped in data/ (MetaTool, LiveMCPBench, GitHub MCP server). Queries are real MetaTool user queries.
All three engines get the same text (name + description) cut into the same tokens (our StandardAnalyzer
port), so the comparison is about scoring and retrieval, not tokenisers.

* BM25ToolIndex: build = ``index_tools`` + the first search (which builds the arrays); a query is a full
  ``search()`` call: analysis, Spring's four-clause query (phrases included), Lucene-exact float32 BM25,
  top 10 with Lucene's tie order, ``ToolReference`` objects, min_score 0.0 so nothing is filtered.
* bm25s (method="lucene", k1=1.2, b=0.75, its default numpy backend): build = tokenising + ``index``; a
  query is tokenising + ``retrieve([tokens], k=10)`` of one query (sorted top 10, float32 sums). It scores
  one field with one term clause per token; no phrases, no second field.
* rank_bm25 (BM25Okapi): ``get_scores`` + top 10; very slow at 100k, so it gets a subsample of queries there.

Every engine answers the same queries once each, in the same order, right after its own build, in one
process (so the ratios compare like with like on a noisy machine; run it a few times and take medians).

Needs the test extras (bm25s, rank-bm25). Runs in about two to four minutes.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolsearch_lab.index.bm25.index import BM25ToolIndex, naive_scores
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.text.lucene import analyze

SEED = 20260521
INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.:-]")
SUFFIXES = ["v2", "pro", "lite", "beta", "cloud", "local", "batch", "admin", "sync", "plus", "x", "ext"]


def load_real_tools() -> list[tuple[str, str]]:
    tools = []
    for path in ("data/metatool/normalized.json", "data/livemcpbench/normalized.json"):
        for t in json.loads((ROOT / path).read_text(encoding="utf-8"))["tools"]:
            tools.append((t["name"], t["description"]))
    for snap in sorted(glob.glob(str(ROOT / "data/mcp_catalogs/github-mcp-server/toolsnaps/*.snap"))):
        t = json.loads(Path(snap).read_text(encoding="utf-8"))
        tools.append((t["name"], t["description"]))
    return [(n, d) for n, d in tools if d]


def synthetic_tools(n: int, real: list[tuple[str, str]], rng: random.Random) -> list[Tool]:
    """n distinct tools: a real name plus a suffix and a serial, and a description made of one real
    description followed by the first sentence of another (so vocabularies and lengths stay realistic)."""
    out = []
    for i in range(n):
        name, desc = real[rng.randrange(len(real))]
        _, other = real[rng.randrange(len(real))]
        tail = other.split(". ")[0]
        new_name = f"{INVALID_NAME_CHARS.sub('_', name)[:100]}_{rng.choice(SUFFIXES)}{i}"
        out.append(Tool(new_name, f"{desc} {tail}"))
    return out


def load_queries(count: int, rng: random.Random) -> list[str]:
    queries = json.loads((ROOT / "data/metatool/normalized.json").read_text(encoding="utf-8"))["queries"]
    return [q["query"] for q in rng.sample(queries, count)]


def percentiles(samples_s: list[float]) -> tuple[float, float]:
    ms = np.array(samples_s) * 1000.0
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def bench_ours(tools: list[Tool], queries: list[str]) -> tuple[float, list[float], BM25ToolIndex]:
    index = BM25ToolIndex(min_score=0.0)
    t0 = time.perf_counter()
    index.index_tools("bench", tools)
    index.search(SearchRequest("bench", "warm up"))  # builds the arrays, as the first real search would
    build = time.perf_counter() - t0
    times = []
    for q in queries:
        t = time.perf_counter()
        index.search(SearchRequest("bench", q, max_results=10))
        times.append(time.perf_counter() - t)
    return build, times, index


def bench_bm25s(texts: list[str], queries: list[str]) -> tuple[float, list[float]]:
    import bm25s

    t0 = time.perf_counter()
    corpus = [analyze(t) for t in texts]
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index(corpus, show_progress=False)
    build = time.perf_counter() - t0
    times = []
    for q in queries:
        t = time.perf_counter()
        tokens = analyze(q)
        retriever.retrieve([tokens or [""]], k=10, show_progress=False)
        times.append(time.perf_counter() - t)
    return build, times


def bench_rank_bm25(texts: list[str], queries: list[str]) -> tuple[float, list[float]]:
    from rank_bm25 import BM25Okapi

    t0 = time.perf_counter()
    retriever = BM25Okapi([analyze(t) or [""] for t in texts], k1=1.2, b=0.75)
    build = time.perf_counter() - t0
    times = []
    for q in queries:
        t = time.perf_counter()
        scores = retriever.get_scores(analyze(q))
        np.argsort(-scores, kind="stable")[:10]
        times.append(time.perf_counter() - t)
    return build, times


def check_against_naive(tools: list[Tool], queries: list[str], sample: int) -> str:
    """Compare our top-10 scores with the loop-based reference implementation on a corpus sample."""
    small = BM25ToolIndex(min_score=0.0)
    small.index_tools("check", tools[:sample])
    worst, checked = 0.0, 0
    pairs = [(t.name, t.description) for t in tools[:sample]]
    for q in queries:
        expected = naive_scores(pairs, q)
        got = small.search(SearchRequest("check", q, max_results=10)).tool_references
        want = sorted(range(len(pairs)), key=lambda i: (-expected[i], i))
        want = [i for i in want if expected[i] > 0][:10]
        if [r.tool_name for r in got] != [pairs[i][0] for i in want]:
            return f"MISMATCH in ranking for query {q!r}"
        for r, i in zip(got, want, strict=False):
            worst = max(worst, abs(r.relevance_score - expected[i]) / expected[i])
            checked += 1
    return f"OK: {checked} top-10 scores from {len(queries)} queries over {sample} tools match the naive reference (max rel. diff {worst:.1e}, float32 vs float64)"


def describe_engines() -> str:
    """One line per engine: versions and the settings that matter for speed."""
    import bm25s

    try:
        import numba  # noqa: F401

        numba_note = "numba installed"
    except ImportError:
        numba_note = "numba not installed"
    backend = bm25s.BM25(method="lucene").backend
    return (
        f"numpy {np.__version__}; bm25s {bm25s.__version__} (backend={backend!r}, {numba_note}); "
        "BM25ToolIndex: pure numpy/scipy, exact float32 scores, MaxScore pruning or full scoring per query"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rank-bm25-max-queries-100k", type=int, default=20)
    args = parser.parse_args()

    rng = random.Random(SEED)
    real = load_real_tools()
    queries = load_queries(args.queries, rng)
    print(f"{len(real)} real tools recombined; {len(queries)} MetaTool queries; seed {SEED}")
    print(describe_engines() + "\n")
    header = (
        f"{'tools':>7} | {'engine':<13} | {'build s':>8} | {'p50 ms':>7} | {'p95 ms':>7} | "
        f"{'p50 / bm25s':>11} | queries"
    )
    print(header)
    print("-" * len(header))
    last_tools = None
    for size in [int(s) for s in args.sizes.split(",")]:
        tools = synthetic_tools(size, real, random.Random(SEED + size))
        texts = [f"{t.name} {t.description}" for t in tools]
        ours_build, ours_t, _ = bench_ours(tools, queries)
        s_build, s_t = bench_bm25s(texts, queries)
        rq = queries if size < 100_000 else queries[: args.rank_bm25_max_queries_100k]
        r_build, r_t = bench_rank_bm25(texts, rq)
        s_p50 = percentiles(s_t)[0]
        for name, build, times in (
            ("BM25ToolIndex", ours_build, ours_t),
            ("bm25s", s_build, s_t),
            ("rank_bm25", r_build, r_t),
        ):
            p50, p95 = percentiles(times)
            print(
                f"{size:>7} | {name:<13} | {build:>8.2f} | {p50:>7.3f} | {p95:>7.3f} | "
                f"{p50 / s_p50:>10.2f}x | {len(times)}"
            )
        print("-" * len(header))
        last_tools = tools
    if last_tools is not None:
        print(check_against_naive(last_tools, queries[:30], sample=300))


if __name__ == "__main__":
    main()
