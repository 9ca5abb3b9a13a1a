"""How fast are the indexes at 1k / 10k / 100k tools, and does BM25 keep its memory flat?

    .venv/bin/python benchmarks/search_speed.py [--quick] [--sizes 1000,10000,100000] [--queries 200]
        [--parts regex,bm25,memory]

Synthetic catalogs of 1k / 10k / 100k distinct tools are recombined, with a fixed seed, from the real tools
shipped in data/ (MetaTool, LiveMCPBench, GitHub MCP server); each tool also gets three parameters taken
from real tools (pattern mode searches them). Queries are real MetaTool user queries. Every figure compares
engines in one process, answering the same queries in the same order, so the ratios hold on a noisy
machine even when the absolute milliseconds do not (run it a few times and take medians).

Parts:

* ``regex`` - RegexToolIndex in Spring's keyword mode (MetaTool queries) and in pattern mode (a fixed list
  of ordinary patterns), p50 / p99 per ``search()``, against a plain ``re``/``regex`` loop over every tool
  in the same process (Spring's linear scan, which is what the index did before it had a chunk vocabulary;
  at 100k it answers only a few queries, because each takes seconds). The reference's top 10 must equal
  the index's, names and scores, or the run says MISMATCH. Build = ``index_tools`` + the first search
  (which builds the session's chunk vocabulary); +RSS is the process's resident memory added by both. A
  pattern without literal text (every text must be matched) is tried once at the largest size: it is
  answered, or its error says whether the catalog's size or the pattern is to blame.
* ``bm25`` - BM25ToolIndex next to bm25s and rank_bm25 on the same text (name + description) cut into the
  same tokens (our StandardAnalyzer port), so the comparison is about scoring and retrieval, not tokenisers.
  BM25ToolIndex: build = ``index_tools`` + the first search; a query is a full ``search()`` call: analysis,
  Spring's four-clause query (phrases included), Lucene-exact float32 BM25, top 10 with Lucene's tie order,
  ``ToolReference`` objects, min_score_threshold 0.0 so nothing is filtered. bm25s (method="lucene",
  k1=1.2, b=0.75, its default numpy backend): build = tokenising + ``index``; a query is tokenising +
  ``retrieve([tokens], k=10)``. It scores one field with one term clause per token; no phrases, no second
  field. rank_bm25 (BM25Okapi): ``get_scores`` + top 10; very slow at 100k, so it gets a subsample of
  queries there.
* ``memory`` - the process's resident memory (VmRSS) around a 100k-tool BM25ToolIndex: before indexing,
  after ``index_tools``, after the first search, and after 1,000 searches.

Needs the test extras (bm25s, rank-bm25). ``--quick`` (1k and 10k tools, 50 queries, 200 searches at 10k
tools for the memory part) takes about two minutes; the full run about eight on two idle cores.
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
import regex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the plain-loop BM25 reference lives with the tests

from bm25_reference import naive_scores

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import PatternError, RegexToolIndex
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
    index = BM25ToolIndex(min_score_threshold=0.0)
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
    small = BM25ToolIndex(min_score_threshold=0.0)
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
            worst = max(worst, abs((r.relevance_score or 0.0) - expected[i]) / expected[i])
            checked += 1
    return (
        f"OK: {checked} top-10 scores from {len(queries)} queries over {sample} tools match the naive "
        f"reference (max rel. diff {worst:.1e}, float32 vs float64)"
    )


def load_real_parameters() -> list[tuple[str, dict]]:
    """(name, schema) of every parameter of the shipped LiveMCPBench and GitHub MCP tools."""
    params: list[tuple[str, dict]] = []
    schemas = [
        t["parameters"] for t in json.loads((ROOT / "data/livemcpbench/normalized.json").read_text())["tools"]
    ]
    for snap in sorted(glob.glob(str(ROOT / "data/mcp_catalogs/github-mcp-server/toolsnaps/*.snap"))):
        schemas.append(json.loads(Path(snap).read_text(encoding="utf-8")).get("inputSchema") or {})
    for schema in schemas:
        for name, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict):
                params.append(
                    (
                        name,
                        {"type": sub.get("type", "string"), "description": str(sub.get("description", ""))},
                    )
                )
    return params


def with_parameters(tools: list[Tool], params: list[tuple[str, dict]], rng: random.Random) -> list[Tool]:
    """The same tools, each with three real parameters (names and descriptions) drawn at random."""
    out = []
    for t in tools:
        chosen = dict(rng.sample(params, 3))
        out.append(Tool(t.name, t.description, {"type": "object", "properties": chosen}))
    return out


PATTERNS = [
    "email",
    "get_.*issue",
    "send|post",
    "weather|forecast",
    r"^list_\w+",
    "create.*(issue|pull)",
    r"repo(sitory)?",
    "image",
    r"search_\w*_v2",
    "calendar|event",
]
NO_LITERAL_PATTERN = r"^[a-z]+_[a-z]+\d$"


def utf16_offset(text: str, index: int) -> int:
    """Java's Matcher.start(): astral characters count as two UTF-16 units."""
    return len(text[:index].encode("utf-16-le", "surrogatepass")) // 2


def keyword_reference(tools: list[Tool], pattern: str, limit: int = 10) -> list[tuple[str, float]]:
    """Spring's keyword-mode search written as the obvious loop (spec §3.3): every name and description
    through ``re.finditer``, hits counted, the first one's UTF-16 offset, a stable sort. The converter's
    patterns are alternations of literals, so there are no empty matches to treat the Java way."""
    rx = re.compile(pattern, re.ASCII)
    scored = []
    for tool in tools:
        score = 0.0
        for text, per_hit, bonus in ((tool.name, 2.0, 1.0), (tool.description, 1.0, 0.5)):
            starts = [m.start() for m in rx.finditer(text)]
            if starts:
                score += per_hit * len(starts) + bonus / (1.0 + 0.1 * utf16_offset(text, starts[0]))
        if score > 0:
            scored.append((tool.name, score))
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored[:limit]


def pattern_reference(tools: list[Tool], pattern: str, limit: int = 10) -> list[tuple[str, float]]:
    """Pattern mode as a plain loop: the pattern through ``regex`` over every text of every tool."""
    rx = regex.compile(pattern, regex.IGNORECASE | regex.V0)

    def part(text: str, per_hit: float, bonus: float) -> float:
        starts = [m.start() for m in rx.finditer(text)]
        return per_hit * len(starts) + bonus / (1.0 + 0.1 * utf16_offset(text, starts[0])) if starts else 0.0

    scored = []
    for tool in tools:
        count, firsts = 0, []
        for name, sub in tool.parameters["properties"].items():
            for text in (name, sub["description"]):
                starts = [m.start() for m in rx.finditer(text)]
                count += len(starts)
                firsts += [utf16_offset(text, start) for start in starts[:1]]
        params = 1.0 * count + 0.5 / (1.0 + 0.1 * min(firsts)) if count else 0.0
        score = part(tool.name, 2.0, 1.0) + part(tool.description, 1.0, 0.5) + params
        if score > 0:
            scored.append((tool.name, score))
    scored.sort(key=lambda pair: pair[1], reverse=True)
    return scored[:limit]


def bench_regex_mode(tools: list[Tool], mode: str, queries: list[str], reference_queries: int) -> dict:
    """p50/p99 of the index and of the plain loop, whether their top 10s agree, and the budget errors."""
    index = RegexToolIndex(mode=mode)
    rss = vm_rss_mb()
    started = time.perf_counter()
    index.index_tools("bench", tools)
    index.search(SearchRequest("bench", queries[0]))
    build = time.perf_counter() - started
    rss = vm_rss_mb() - rss
    times, errors, answers = [], [], {}
    for q in queries:
        started = time.perf_counter()
        try:
            response = index.search(SearchRequest("bench", q))
        except PatternError as exc:
            errors.append(str(exc))
            continue
        times.append(time.perf_counter() - started)
        answers[q] = [(r.tool_name, r.relevance_score) for r in response.tool_references]
    reference = keyword_reference if mode == "keywords" else pattern_reference
    ref_times, mismatches = [], 0
    for q in [q for q in dict.fromkeys(queries) if q in answers][:reference_queries]:
        started = time.perf_counter()
        expected = reference(tools, index.convert_query_to_regex_pattern(q) if mode == "keywords" else q)
        ref_times.append(time.perf_counter() - started)
        mismatches += expected != answers[q]
    return {
        "build": build,
        "rss": rss,
        "times": times,
        "ref_times": ref_times,
        "mismatches": mismatches,
        "checked": len(ref_times),
        "errors": errors,
    }


def print_regex(sizes: list[int], queries: list[str], real: list[tuple[str, str]], quick: bool) -> None:
    params = load_real_parameters()
    print("RegexToolIndex: chunk vocabulary vs the plain loop (Spring's linear scan), same process")
    header = (
        f"{'tools':>7} | {'mode':<8} | {'build s':>7} | {'+RSS MB':>7} | {'p50 ms':>7} | {'p99 ms':>7} | "
        f"{'loop p50':>9} | "
        f"{'speed-up':>8} | top 10 = loop | searches"
    )
    print(header)
    print("-" * len(header))
    no_literal_error = None
    for size in sizes:
        tools = with_parameters(
            synthetic_tools(size, real, random.Random(SEED + size)), params, random.Random(SEED - size)
        )
        ref_queries = 3 if size >= 100_000 else (10 if size >= 10_000 else 30)
        for mode, qs in (("keywords", queries), ("pattern", PATTERNS * (2 if quick else 5))):
            r = bench_regex_mode(tools, mode, qs, 2 if quick and size >= 100_000 else ref_queries)
            p50, p99 = (float(np.percentile(np.array(r["times"]) * 1000, q)) for q in (50, 99))
            ref = float(np.median(r["ref_times"])) * 1000 if r["ref_times"] else float("nan")
            agree = "OK" if not r["mismatches"] else f"MISMATCH {r['mismatches']}"
            print(
                f"{size:>7} | {mode:<8} | {r['build']:>7.2f} | {r['rss']:>7.0f} | {p50:>7.2f} | "
                f"{p99:>7.2f} | {ref:>9.1f} | "
                f"{ref / p50:>7.0f}x | {agree} ({r['checked']}) | {len(r['times'])}"
                + (f", {len(r['errors'])} over budget" if r["errors"] else "")
            )
        if size == max(sizes):
            index = RegexToolIndex(mode="pattern")
            index.index_tools("bench", tools)
            try:
                index.search(SearchRequest("bench", NO_LITERAL_PATTERN))
            except PatternError as exc:
                no_literal_error = str(exc)
        print("-" * len(header))
    print(
        f"pattern without literal text at {max(sizes):,} tools: "
        f"{no_literal_error or 'answered within the budget'}\n"
    )


def vm_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def print_memory(real: list[tuple[str, str]], queries: list[str], size: int, searches: int) -> None:
    """Resident memory around a BM25ToolIndex of ``size`` tools: does it stay flat across searches?"""
    tools = synthetic_tools(size, real, random.Random(SEED + size))
    index = BM25ToolIndex(min_score_threshold=0.0)
    before = vm_rss_mb()
    index.index_tools("bench", tools)
    indexed = vm_rss_mb()
    started = time.perf_counter()
    index.search(SearchRequest("bench", queries[0]))
    first = time.perf_counter() - started
    after_first = vm_rss_mb()
    for i in range(searches):
        index.search(SearchRequest("bench", queries[i % len(queries)]))
    after = vm_rss_mb()
    print(
        f"BM25ToolIndex memory at {size:,} tools (VmRSS, MB): before indexing {before:.0f}, "
        f"after index_tools {indexed:.0f}, after the first search {after_first:.0f} "
        f"(it took {first * 1000:.0f} ms), after "
        f"{searches:,} searches {after:.0f}: {after - after_first:+.0f} MB across the searches\n"
    )


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


def print_bm25(sizes: list[int], queries: list[str], real: list[tuple[str, str]], rank_max_100k: int) -> None:
    print(describe_engines())
    header = (
        f"{'tools':>7} | {'engine':<13} | {'build s':>8} | {'p50 ms':>7} | {'p95 ms':>7} | "
        f"{'p50 / bm25s':>11} | queries"
    )
    print(header)
    print("-" * len(header))
    last_tools = None
    for size in sizes:
        tools = synthetic_tools(size, real, random.Random(SEED + size))
        texts = [f"{t.name} {t.description}" for t in tools]
        ours_build, ours_t, _ = bench_ours(tools, queries)
        s_build, s_t = bench_bm25s(texts, queries)
        rq = queries if size < 100_000 else queries[:rank_max_100k]
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
        print(check_against_naive(last_tools, queries[:30], sample=300) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="1k and 10k tools, fewer queries")
    parser.add_argument("--sizes", default=None, help="default 1000,10000,100000 (--quick: 1000,10000)")
    parser.add_argument("--queries", type=int, default=None, help="default 200 (--quick: 50)")
    parser.add_argument("--parts", default="regex,bm25,memory")
    parser.add_argument("--memory-tools", type=int, default=None, help="default 100000 (--quick: 10000)")
    parser.add_argument("--rank-bm25-max-queries-100k", type=int, default=20)
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("1000,10000" if args.quick else "1000,10000,100000")).split(",")]
    parts = set(args.parts.split(","))

    rng = random.Random(SEED)
    real = load_real_tools()
    queries = load_queries(args.queries or (50 if args.quick else 200), rng)
    print(f"{len(real)} real tools recombined; {len(queries)} MetaTool queries; seed {SEED}\n")
    if "regex" in parts:
        print_regex(sizes, queries, real, args.quick)
    if "bm25" in parts:
        print_bm25(sizes, queries, real, args.rank_bm25_max_queries_100k)
    if "memory" in parts:
        memory_tools = args.memory_tools or (10_000 if args.quick else 100_000)
        print_memory(real, queries, memory_tools, 200 if args.quick else 1000)


if __name__ == "__main__":
    main()
