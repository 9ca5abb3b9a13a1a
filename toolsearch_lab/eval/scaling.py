"""Catalogs of any size for scaling experiments: a few target tools hidden among real distractors."""

from __future__ import annotations

import time

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.model import SearchRequest, Tool

SUFFIXES = ["v2", "lite", "pro", "beta", "cloud", "local", "batch", "admin", "sync", "plus", "ext", "x"]


def distractor_pool(sources=("github-mcp", "livemcpbench", "metatool"), exclude=()) -> list[Tool]:
    """Every tool of the shipped catalogs, in catalog order, minus the names in ``exclude``. A name that
    two catalogs share is kept once (the first), so the catalogs built from the pool have unique names."""
    seen = set(exclude)
    pool = []
    for source in sources:
        for tool in load_catalog(source).tools:
            if tool.name not in seen:
                seen.add(tool.name)
                pool.append(tool)
    return pool


def catalog_of(size: int, targets: list[Tool], pool: list[Tool]) -> list[Tool]:
    """``targets`` first, then distractors up to ``size`` tools: the real pool, then renamed copies of it
    (a suffix and a serial keep names unique) once the pool runs out. Deterministic."""
    if size < len(targets):
        raise ValueError(f"catalog_of: size {size} is smaller than the {len(targets)} target tools")
    if not pool:
        raise ValueError("catalog_of: the distractor pool is empty")
    out = list(targets)
    for i in range(size - len(targets)):
        tool = pool[i % len(pool)]
        if i >= len(pool):
            suffix = SUFFIXES[(i // len(pool)) % len(SUFFIXES)]
            tool = Tool(f"{tool.name[:100]}_{suffix}{i}", tool.description, tool.parameters, tool.category)
        out.append(tool)
    return out


def measure_index(index, tools: list[Tool], queries: dict[str, str], max_results: int = 10) -> dict:
    """Index ``tools`` once, run each query, and report the rank of its target tool (None when it is not in
    the top ``max_results``), the median search time in ms and the indexing time in s.

    Each query is searched once untimed first: an embedding index embeds a query on its first search and
    caches the vector, so without it the first catalog measured would pay for the embedding and the rest
    would not, and latency would seem to fall as the catalog grows."""
    started = time.perf_counter()
    index.index_tools("scale", tools)
    index_s = time.perf_counter() - started
    ranks, times = {}, []
    for target, query in queries.items():
        index.search(SearchRequest("scale", query, max_results))
        started = time.perf_counter()
        found = index.search(SearchRequest("scale", query, max_results)).tool_names
        times.append((time.perf_counter() - started) * 1000)
        ranks[target] = found.index(target) + 1 if target in found else None
    return {"ranks": ranks, "search_ms": sorted(times)[len(times) // 2], "index_s": index_s}
