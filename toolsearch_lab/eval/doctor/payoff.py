"""Does tool search pay off for this catalog, and with which settings?

The search side is counted from the real pieces: the ``toolSearchTool`` definition the advisor exposes
(``loop/search_tool.py``) and the system-message suffix it appends (``loop/advisor.py``). The task has the
shape of the runs ``eval.compare.headline`` measures: the all-tools agent never searches, so it makes
``calls_per_task`` requests (tool calls, then the answer); the tool-search agent makes ``searches_per_task``
more, by default one search before each tool call (``calls_per_task - 1``), as Spring's loop does when each
step needs a tool it has not found yet.

The verdict rule: tool search is recommended only when a typical task saves at least ``MIN_SAVED_SHARE``
(25 %) of its tokens **and** of its bill, billed with the provider's prompt caching (``eval.cost``, at the
shipped price table's default model), **and** at least ``MIN_SAVED_TOKENS`` (1,000) tokens, on a catalog
of at least ``MIN_TOOLS_FOR_SEARCH`` tools. Why: the all-tools requests repeat one identical tool list,
which a prompt cache serves at a discount once the prefix reaches 1,024 tokens, while the tool-search
requests change their tools as tools are found and mostly miss the cache, so a token saving can vanish
(or turn into a loss) on the bill; and every search is an extra model round-trip and a chance to miss the
right tool, which a saving of a few hundred tokens, or of a few percent, does not pay for. On the 12
tools of ``mcp-server-git`` (806 tokens a request) search saves too little: the verdict is no.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from toolsearch_lab.eval.cost import Price, load_prices, request_costs, totals
from toolsearch_lab.eval.doctor.report import (
    ConfusablePair,
    CostReport,
    Finding,
    IndexScore,
    Payoff,
    Recommendation,
    ToolFindability,
    plural,
)
from toolsearch_lab.loop.advisor import DEFAULT_SYSTEM_MESSAGE_SUFFIX
from toolsearch_lab.loop.search_tool import MAX_RESULTS_RANGE, ToolSearchTool
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import TokenCounter

MIN_TOOLS_FOR_SEARCH = 10  # Claude Code's guidance: below about 10 tools, loading everything is faster
MIN_SAVED_SHARE = 0.25  # see the module docstring: the verdict rule
MIN_SAVED_TOKENS = 1_000
MAX_HIT_LOSS = 0.02  # maxResults below k only when the probes' hit rate drops at most this much from k
_MAX_CALLS = 10_000
_SYSTEM = "You are a helpful assistant."


def payoff(
    cost: CostReport,
    counter: TokenCounter,
    max_results: int,
    calls_per_task: int,
    searches_per_task: int | None = None,
    tools: Sequence[Tool] = (),
    price: Price | None = None,
) -> Payoff:
    """The task's tokens both ways (module docstring) and, when ``tools`` are given, its bill both ways
    under ``price`` (default: the shipped price table's default model) with that provider's prompt caching,
    from :func:`~toolsearch_lab.eval.cost.request_costs` (the one implementation of the caching rules)."""
    enc = counter.encoding_name
    catalog = cost.total[enc]
    meta = counter.tool_tokens(ToolSearchTool(None, max_results=max_results).as_tool())
    suffix = counter.count(DEFAULT_SYSTEM_MESSAGE_SUFFIX)
    overhead = meta + suffix + counter.tool_format.func_end
    mean = sum(t.tokens[enc] for t in cost.tools) / max(len(cost.tools), 1)
    discovered = round(min(max_results, len(cost.tools)) * mean)

    def searches(calls: int) -> int:
        return max(calls - 1, 0) if searches_per_task is None else searches_per_task

    def with_search(calls: int) -> int:
        return (calls + searches(calls)) * overhead + calls * discovered

    all_tokens = calls_per_task * catalog
    search_tokens = with_search(calls_per_task)
    break_even = next((n for n in range(1, _MAX_CALLS) if with_search(n) < n * catalog), None)
    # Smallest catalog (at this mean tool cost) whose per-task cost exceeds the search's.
    per_call_needed = search_tokens / calls_per_task - counter.tool_format.func_end
    break_even_tools = max(1, math.floor(per_call_needed / mean) + 1) if mean > 0 else None
    price = price or load_prices().price()
    bill_all, bill_search = (
        _bills(list(tools), counter, max_results, calls_per_task, searches(calls_per_task), price)
        if tools
        else (0.0, 0.0)
    )
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
        searches_per_task=searches(calls_per_task),
        search_every_call=searches_per_task is None,
        priced_as=price.model if tools else "",
        bill_all_usd=bill_all,
        bill_search_usd=bill_search,
        bill_saved_share=round(1 - bill_search / bill_all, 4) if bill_all else 0.0,
        tokens_per_task_all=all_tokens,
        tokens_per_task_search=search_tokens,
        saved_per_task=all_tokens - search_tokens,
        saved_share=round((all_tokens - search_tokens) / all_tokens, 4) if all_tokens else 0.0,
        break_even_calls=break_even,
        break_even_tools=break_even_tools,
    )


def _bills(
    tools: list[Tool], counter: TokenCounter, max_results: int, calls: int, searches: int, price: Price
) -> tuple[float, float]:
    """The task's prompt bill (USD) sending every tool, and with tool search: the same system and user
    message in every request (the conversation a task adds is the same both ways), every tool in each
    all-tools request; with search, a request exposing only toolSearchTool before each of the first
    ``searches`` calls, and each call exposing toolSearchTool plus ``max_results`` tools, different ones
    per call (a task's steps need different tools), so the tools array changes as a real run's does."""
    user = {"role": "user", "content": "Do the task."}
    plain = [{"role": "system", "content": _SYSTEM}, user]
    searching = [{"role": "system", "content": _SYSTEM + DEFAULT_SYSTEM_MESSAGE_SUFFIX}, user]
    meta = ToolSearchTool(None, max_results=max_results).as_tool()
    shown = min(max_results, len(tools))
    every = [(plain, tools) for _ in range(calls)]
    with_search: list[tuple[list[dict], list[Tool]]] = [(searching, [meta])] * max(searches - calls, 0)
    for call in range(calls):
        if call < searches:
            with_search.append((searching, [meta]))
        found = [tools[(call * shown + i) % len(tools)] for i in range(shown)]
        with_search.append((searching, [meta, *found]))

    def bill(requests: list[tuple[list[dict], list[Tool]]]) -> float:
        rows = request_costs(requests, [0] * len(requests), price, counter)  # type: ignore[arg-type]
        return float(totals(rows)["cost_usd"])

    return bill(every), bill(with_search)


def _hit(score: IndexScore, k: int) -> float:
    """The share of every probe (own-words and user-style) that found its tool in the top k."""
    return score.hit_at[min(k, len(score.hit_at)) - 1] if score.hit_at else score.found_at_k


def pick_index(scores: list[IndexScore], findability: list[ToolFindability], k: int) -> tuple[str, str]:
    """The index whose probes, own-words and user-style, find their tool most often (then best MRR, then
    the order given): own-words probes alone favour the keyword indexes, which match the tools' own
    words. When the indexes miss different probes, the reason says how many any of them finds."""
    best = max(scores, key=lambda s: (round(_hit(s, k), 6), round(s.mrr, 6)))
    others = ", ".join(f"{s.index} {_hit(s, k):.0%}" for s in scores if s is not best)
    reason = (
        f"{best.index} finds {_hit(best, k):.0%} of the probes (the tools' own words and requests without "
        f"them) in the top {k}" + (f" (vs {others})" if others else "")
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


def pick_max_results(score: IndexScore, pairs: list[ConfusablePair], k: int) -> tuple[int, str]:
    """The smallest maxResults whose measured hit rate (the chosen index's probes, own-words and
    user-style, finding their tool in the top maxResults) is at most MAX_HIT_LOSS below the hit rate at
    ``k``: fewer results only where they cost (almost) nothing."""
    low, high = MAX_RESULTS_RANGE
    hit = score.hit_at
    if not hit:
        return k, f"{score.index} has no measured hit rates; kept k = {k}"
    at_k = hit[min(k, len(hit)) - 1]
    value = next((c for c in range(low, min(high, len(hit)) + 1) if hit[c - 1] >= at_k - MAX_HIT_LOSS), k)
    if value < k:
        reason = (
            f"{score.index}'s probes find their tool in the top {value} {hit[value - 1]:.0%} of the time, "
            f"vs {at_k:.0%} in the top {k}: fewer results lose at most {MAX_HIT_LOSS * 100:.0f} points"
        )
    else:
        value = k
        shorter = f"; in the top {k - 1}: {hit[k - 2]:.0%}" if k >= 2 else ""
        reason = (
            f"{score.index}'s probes find their tool in the top {k} {at_k:.0%} of the time{shorter}: "
            f"fewer results would lose more than {MAX_HIT_LOSS * 100:.0f} points"
        )
    if pairs and value < 2:
        value = 2
        reason += f"; raised to 2 so both tools of a confusable pair ({pairs[0].a} / {pairs[0].b}) come back"
    return value, reason


def pays_off(pay: Payoff, n_tools: int) -> bool:
    """The verdict rule (module docstring)."""
    billed = pay.bill_saved_share if pay.priced_as else pay.saved_share
    return (
        n_tools >= MIN_TOOLS_FOR_SEARCH
        and pay.saved_per_task >= MIN_SAVED_TOKENS
        and pay.saved_share >= MIN_SAVED_SHARE
        and billed >= MIN_SAVED_SHARE
    )


def verdict_reason(pay: Payoff, n_tools: int, use: bool) -> str:
    """Why tool search is (not) recommended, the deciding fact first, so the verdict line never reads
    "no: saves ...": a "yes" leads with the saving, a "no" with the rule the task fails (too few tools,
    more tokens, a bigger bill, too small a saving), and only then the figures."""
    task = (
        f"a {pay.calls_per_task}-call task costs {pay.tokens_per_task_search:,} tokens with search vs "
        f"{pay.tokens_per_task_all:,} sending all {plural(n_tools, 'tool')} ({pay.encoding})"
    )
    bill = pay.bill_saved_share
    if pay.priced_as:
        task += f"; billed at {pay.priced_as} prices with prompt caching, search " + (
            f"saves {bill:.0%} of the bill" if bill >= 0 else f"costs {-bill:.0%} more"
        )
    rule = (
        f"it takes {MIN_SAVED_SHARE:.0%} of the tokens and of the bill, and {MIN_SAVED_TOKENS:,} tokens, to "
        "pay for the extra search round-trips"
    )
    tokens = f"{abs(pay.saved_per_task):,} tokens ({abs(pay.saved_share):.0%})"
    if n_tools < MIN_TOOLS_FOR_SEARCH:
        few = (
            f"only {plural(n_tools, 'tool')}: below about {MIN_TOOLS_FOR_SEARCH}, sending them all is simpler"
        )
        return f"{few}; {task}"
    if use:
        calls = plural(pay.break_even_calls or 0, "call")
        return f"saves {tokens} per task: {task}; search pays off from {calls} per task"
    if pay.saved_per_task <= 0:
        return (
            f"search costs {tokens} more per task than sending every tool ({pay.catalog_tokens:,} tokens a "
            f"request): {task}"
        )
    if pay.saved_per_task >= MIN_SAVED_TOKENS and pay.saved_share >= MIN_SAVED_SHARE:  # the bill decides
        billed = (
            f"a task costs {-bill:.0%} more with search"
            if bill < 0
            else f"search saves only {bill:.0%} of a task's bill"
        )
        return (
            f"billed with prompt caching, {billed} (the repeated all-tools list is served from the cache), "
            f"although the prompt would shrink by {tokens}: {task}; {rule}"
        )
    return f"the saving is too small: {tokens} per task: {task}; {rule}"


def recommend(
    index: tuple[str, str], max_results: tuple[int, str], pay: Payoff, n_tools: int
) -> Recommendation:
    use = pays_off(pay, n_tools)
    why_use = verdict_reason(pay, n_tools, use)
    accumulated = pay.calls_per_task * pay.discovered_tokens
    accumulate = accumulated < pay.catalog_tokens / 2
    if accumulate:
        why_acc = (
            f"even if every call searched, the kept tools would cost {accumulated:,} tokens, under half of "
            f"sending everything ({pay.catalog_tokens:,}); keeping them saves repeat searches"
        )
    else:
        than = (
            "more than sending everything"
            if accumulated > pay.catalog_tokens
            else "as much as sending everything"
            if accumulated == pay.catalog_tokens
            else "more than half of sending everything"
        )
        why_acc = (
            f"kept tools could reach {accumulated:,} tokens, {than} ({pay.catalog_tokens:,}); turn "
            "accumulation off or evict (LRU)"
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
            f"tool search pays off: {rec.reasons['tool_search']}",
            f"use {rec.index} with maxResults {rec.max_results}, accumulation "
            f"{'on' if rec.accumulation else 'off'}",
            0.0,
            [],
            {
                "saved_per_task": pay.saved_per_task,
                "saved_share": pay.saved_share,
                "break_even_calls": pay.break_even_calls,
            },
        )
    return Finding(
        "warning" if n_tools >= MIN_TOOLS_FOR_SEARCH else "info",
        "payoff",
        "",
        f"tool search does not pay off here: {rec.reasons['tool_search']}",
        "send every tool; revisit when the catalog grows"
        + (f" well past {plural(pay.break_even_tools, 'tool')}" if pay.break_even_tools else ""),
        0.5 if n_tools >= MIN_TOOLS_FOR_SEARCH else 0.0,
        [],
        {
            "saved_per_task": pay.saved_per_task,
            "saved_share": pay.saved_share,
            "break_even_tools": pay.break_even_tools,
        },
    )
