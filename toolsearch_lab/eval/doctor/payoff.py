"""Does tool search pay off for this catalog, and with which settings?

The search side is counted from the real pieces: the ``toolSearchTool`` definition the advisor exposes
(``loop/search_tool.py``) and the system-message suffix it appends (``loop/advisor.py``).
"""

from __future__ import annotations

import math

from toolsearch_lab.eval.doctor.report import (
    ConfusablePair,
    CostReport,
    Finding,
    IndexScore,
    Payoff,
    Recommendation,
    ToolFindability,
)
from toolsearch_lab.loop.advisor import DEFAULT_SYSTEM_MESSAGE_SUFFIX
from toolsearch_lab.loop.search_tool import MAX_RESULTS_RANGE, ToolSearchTool
from toolsearch_lab.tokens import TokenCounter

MIN_TOOLS_FOR_SEARCH = 10  # Claude Code's guidance: below about 10 tools, loading everything is faster
RANK_COVERAGE = 0.9  # maxResults covers this share of the probes that find their tool
_MAX_CALLS = 10_000


def payoff(
    cost: CostReport, counter: TokenCounter, max_results: int, calls_per_task: int, searches_per_task: int
) -> Payoff:
    enc = counter.encoding_name
    catalog = cost.total[enc]
    meta = counter.tool_tokens(ToolSearchTool(None, max_results=max_results).as_tool())
    suffix = counter.count(DEFAULT_SYSTEM_MESSAGE_SUFFIX)
    overhead = meta + suffix + counter.tool_format.func_end
    mean = sum(t.tokens[enc] for t in cost.tools) / max(len(cost.tools), 1)
    discovered = round(min(max_results, len(cost.tools)) * mean)

    def with_search(calls: int) -> int:
        return (calls + searches_per_task) * overhead + calls * discovered

    all_tokens = calls_per_task * catalog
    search_tokens = with_search(calls_per_task)
    break_even = next((n for n in range(1, _MAX_CALLS) if with_search(n) < n * catalog), None)
    # Smallest catalog (at this mean tool cost) whose per-task cost exceeds the search's.
    per_call_needed = search_tokens / calls_per_task - counter.tool_format.func_end
    break_even_tools = max(1, math.floor(per_call_needed / mean) + 1) if mean > 0 else None
    return Payoff(
        encoding=enc,
        catalog_tokens=catalog,
        meta_tool_tokens=meta,
        suffix_tokens=suffix,
        search_overhead_tokens=overhead,
        mean_tool_tokens=round(mean, 1),
        max_results=max_results,
        discovered_tokens=discovered,
        calls_per_task=calls_per_task,
        searches_per_task=searches_per_task,
        tokens_per_task_all=all_tokens,
        tokens_per_task_search=search_tokens,
        saved_per_task=all_tokens - search_tokens,
        break_even_calls=break_even,
        break_even_tools=break_even_tools,
    )


def pick_index(scores: list[IndexScore], findability: list[ToolFindability], k: int) -> tuple[str, str]:
    """The index whose probes find their tool most often (then best MRR, then the order given). When the
    indexes miss different probes, the reason says how many any of them finds: the case for a hybrid."""
    best = max(scores, key=lambda s: (round(s.found_at_k, 6), round(s.mrr, 6)))
    others = ", ".join(f"{s.index} {s.found_at_k:.0%}" for s in scores if s is not best)
    reason = f"{best.index} finds {best.found_at_k:.0%} of the tools' own queries in the top {k}" + (
        f" (vs {others})" if others else ""
    )
    probes = [q for t in findability for q in t.queries]
    any_hit = sum(1 for q in probes if any(r is not None and r <= k for r in q.ranks.values()))
    union = any_hit / len(probes) if probes else 0.0
    if len(scores) > 1 and "hybrid" not in {s.index for s in scores} and union >= best.found_at_k + 0.05:
        reason += (
            f"; they miss different queries and together find {union:.0%}, so try the hybrid index, which "
            "fuses keyword and vector scores"
        )
    return best.index, reason


def pick_max_results(
    findability: list[ToolFindability], index: str, pairs: list[ConfusablePair], k: int
) -> tuple[int, str]:
    """The smallest maxResults that covers RANK_COVERAGE of the probes the chosen index finds."""
    low, high = MAX_RESULTS_RANGE
    ranks = sorted(r for t in findability for q in t.queries if (r := q.ranks.get(index)) is not None)
    if not ranks:
        return k, f"{index} found no probe within the searched depth; kept k = {k}"
    covered = ranks[min(len(ranks) - 1, math.ceil(RANK_COVERAGE * len(ranks)) - 1)]
    value = min(max(covered, low), high)
    reason = f"{RANK_COVERAGE:.0%} of the probes {index} finds come back at rank {covered} or better"
    if pairs and value < 2:
        value = 2
        reason += f"; raised to 2 so both tools of a confusable pair ({pairs[0].a} / {pairs[0].b}) come back"
    return value, reason


def recommend(
    index: tuple[str, str], max_results: tuple[int, str], pay: Payoff, n_tools: int
) -> Recommendation:
    use = pay.saved_per_task > 0 and n_tools >= MIN_TOOLS_FOR_SEARCH
    if n_tools < MIN_TOOLS_FOR_SEARCH:
        why_use = f"only {n_tools} tools: below about {MIN_TOOLS_FOR_SEARCH}, sending them all is simpler"
    elif pay.saved_per_task > 0:
        why_use = (
            f"a {pay.calls_per_task}-call task costs {pay.tokens_per_task_search:,} tokens with search vs "
            f"{pay.tokens_per_task_all:,} sending all {n_tools} tools ({pay.encoding}); search pays off from "
            f"{pay.break_even_calls} call(s) per task"
        )
    else:
        why_use = (
            f"sending all {n_tools} tools ({pay.catalog_tokens:,} tokens) is cheaper than the search "
            f"overhead and discovered tools at {pay.calls_per_task} calls per task"
        )
    accumulated = pay.calls_per_task * pay.discovered_tokens
    accumulate = accumulated < pay.catalog_tokens / 2
    why_acc = (
        f"even if every call searched, the kept tools would cost {accumulated:,} tokens, under half of "
        f"sending everything ({pay.catalog_tokens:,}); keeping them saves repeat searches"
        if accumulate
        else f"kept tools could reach {accumulated:,} tokens, close to sending everything "
        f"({pay.catalog_tokens:,}); turn accumulation off or evict (LRU)"
    )
    reasons = {
        "tool_search": why_use,
        "index": index[1],
        "max_results": max_results[1],
        "accumulation": why_acc,
    }
    return Recommendation(use, index[0], max_results[0], accumulate, reasons)


def payoff_finding(pay: Payoff, rec: Recommendation, n_tools: int) -> Finding:
    if rec.use_tool_search:
        return Finding(
            "info",
            "payoff",
            "",
            f"tool search saves {pay.saved_per_task:,} tokens per {pay.calls_per_task}-call task "
            f"({pay.saved_per_task / max(pay.tokens_per_task_all, 1):.0%}); {rec.reasons['tool_search']}",
            f"use {rec.index} with maxResults {rec.max_results}, accumulation "
            f"{'on' if rec.accumulation else 'off'}",
            0.0,
            [],
            {"saved_per_task": pay.saved_per_task, "break_even_calls": pay.break_even_calls},
        )
    return Finding(
        "warning" if n_tools >= MIN_TOOLS_FOR_SEARCH else "info",
        "payoff",
        "",
        f"tool search does not pay off here: {rec.reasons['tool_search']}",
        "send every tool; revisit when the catalog grows past "
        + (f"{pay.break_even_tools} tools" if pay.break_even_tools else "a few dozen tools"),
        0.5 if n_tools >= MIN_TOOLS_FOR_SEARCH else 0.0,
        [],
        {"saved_per_task": pay.saved_per_task, "break_even_tools": pay.break_even_tools},
    )
