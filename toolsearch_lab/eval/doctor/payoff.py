"""Does tool search pay off for this catalog, and with which settings?

The search side is counted from the real pieces: the ``toolSearchTool`` definition the advisor exposes
(``loop/search_tool.py``) and the system-message suffix it appends (``loop/advisor.py``). The task has the
shape of the runs ``eval.compare.headline`` measures: the all-tools agent never searches, so it makes
``calls_per_task`` requests (tool calls, then the answer); the tool-search agent makes ``searches_per_task``
more, by default one search before each tool call (``calls_per_task - 1``), as Spring's loop does when each
step needs a tool it has not found yet. Each request carries the conversation so far (every call and its
result, ``result_tokens`` each, and with search every search and the names it found), so the requests a
search adds cost what a real run's do: on a small catalog they carry more conversation than the tools they
leave out, and with accumulation the found tools grow with every search, so search pays off only up to
some task length (``Payoff.pays_off_up_to_calls``).

The verdict rule: tool search is recommended only when a typical task saves at least ``MIN_SAVED_SHARE``
(25 %) of its tokens **and** of its bill, billed with the provider's prompt caching (``eval.cost``, at the
shipped price table's default model), **and** at least ``MIN_SAVED_TOKENS`` (1,000) tokens, on a catalog
of at least ``MIN_TOOLS_FOR_SEARCH`` tools. Why: the all-tools requests repeat one identical tool list,
which a prompt cache serves at a discount once the prefix reaches 1,024 tokens, while the tool-search
requests change their tools as tools are found and mostly miss the cache, so a token saving can vanish
(or turn into a loss) on the bill; and every search is an extra model round-trip and a chance to miss the
right tool, which a saving of a few hundred tokens, or of a few percent, does not pay for. On the 12
tools of ``mcp-server-git`` (806 tokens a request) search costs more than it saves: the verdict is no.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from toolsearch_lab.eval.cost import Price, load_prices, request_costs, request_segments, totals
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
from toolsearch_lab.loop.search_tool import MAX_RESULTS_RANGE, TOOL_SEARCH_TOOL_NAME, ToolSearchTool
from toolsearch_lab.loop.settings import DEFAULT_SYSTEM_MESSAGE_SUFFIX, AdvisorSettings
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import REPLY_PRIMING, TokenCounter

MIN_TOOLS_FOR_SEARCH = 10  # Claude Code's guidance: below about 10 tools, loading everything is faster
MIN_SAVED_SHARE = 0.25  # see the module docstring: the verdict rule
MIN_SAVED_TOKENS = 1_000
MAX_HIT_LOSS = 0.02  # maxResults below k only when the probes' hit rate drops at most this much from k
RESULT_TOKENS = 100  # an assumed typical tool result: a status line, a small JSON object
ANSWER_TOKENS = 100  # an assumed final answer: a short paragraph (billed both ways alike)
MAX_CALLS = 64  # the break-even scan's horizon: tasks longer than this are not judged
_QUERY = json.dumps({"query": "a tool for the next step"})
_SYSTEM = "You are a helpful assistant."


def payoff(
    cost: CostReport,
    counter: TokenCounter,
    max_results: int,
    calls_per_task: int,
    searches_per_task: int | None = None,
    tools: Sequence[Tool] = (),
    price: Price | None = None,
    result_tokens: int = RESULT_TOKENS,
) -> Payoff:
    """The task's tokens both ways (module docstring), its conversation included, and, when ``tools`` are
    given, its bill both ways under ``price`` (default: the shipped price table's default model) with that
    provider's prompt caching, from :func:`~toolsearch_lab.eval.cost.request_costs` (the one implementation
    of the caching rules). ``result_tokens``: the size of a typical tool result."""
    if not cost.tools:
        raise ValueError("payoff: the cost report has no tools; expected at least one")
    enc = counter.encoding_name
    catalog = cost.total[enc]
    meta_tool = ToolSearchTool(None, AdvisorSettings(max_results=max_results)).as_tool()
    meta = counter.tool_tokens(meta_tool)
    suffix = counter.count(DEFAULT_SYSTEM_MESSAGE_SUFFIX)
    overhead = meta + suffix + counter.tool_format.func_end
    costs = [t.tokens[enc] for t in cost.tools]
    mean = sum(costs) / max(len(costs), 1)
    shown = min(max_results, len(costs))
    discovered = round(shown * mean)
    accumulate = accumulates(calls_per_task, discovered, catalog)
    task = _Task([t.name for t in cost.tools], costs, shown, accumulate, result_tokens)

    def searches(calls: int) -> int:
        return max(calls - 1, 0) if searches_per_task is None else searches_per_task

    tokens = _Tokens(counter, costs, meta)

    def both(calls: int) -> tuple[int, int]:
        every, with_search = task.requests(calls, searches(calls))
        return tokens.task(every, searching=False), tokens.task(with_search, searching=True)

    every, with_search = task.requests(calls_per_task, searches(calls_per_task))  # tokens and bill alike
    all_tokens, search_tokens = tokens.task(every, searching=False), tokens.task(with_search, searching=True)
    cheaper = [n for n, (a, s) in ((n, both(n)) for n in range(1, MAX_CALLS + 1)) if s < a]
    break_even = cheaper[0] if cheaper else None
    worse_after = cheaper[-1] if cheaper and cheaper[-1] < MAX_CALLS else None
    # Smallest catalog (at this mean tool cost) whose per-task cost exceeds the search's.
    per_call_needed = (search_tokens - (all_tokens - calls_per_task * catalog)) / calls_per_task
    per_call_needed -= counter.tool_format.func_end
    break_even_tools = max(1, math.floor(per_call_needed / mean) + 1) if mean > 0 else None
    price = price or load_prices().price()
    bill_all, bill_search = (
        (
            _bill(every, [], list(tools), counter, price),
            _bill(with_search, [meta_tool], list(tools), counter, price),
        )
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
        result_tokens=result_tokens,
        accumulation=accumulate,
        pays_off_up_to_calls=worse_after,
    )


def accumulates(calls: int, discovered: int, catalog: int) -> bool:
    """The accumulation rule: keep found tools when, even if every call searched, they would cost under
    half of sending everything."""
    return calls * discovered < catalog / 2


Request = tuple[list[dict[str, Any]], list[int]]  # the messages, and the catalog tools exposed (indexes)


class _Task:
    """A task of ``calls`` model calls as the runs ``eval.compare.headline`` measures make it, request by
    request, both ways. Every request carries the system message, the user's message and the conversation
    so far: each tool call and its result (``result_tokens``), and with search each search call and the
    names it found. Sending every tool, the calls are tool calls and then the answer; with search, the
    searches come first when there are more of them than tool calls, else one before each of the first
    tool calls; each search finds ``shown`` tools, different ones per search (a task's steps need different
    tools), exposed on the requests after it beside toolSearchTool (all found so far with accumulation)."""

    def __init__(
        self, names: list[str], costs: list[int], shown: int, accumulate: bool, result_tokens: int
    ) -> None:
        self.names, self.shown, self.accumulate = names, shown, accumulate
        self.by_cost = sorted(range(len(names)), key=lambda i: (costs[i], i))
        self.result = " ".join(["ok"] * max(result_tokens, 0))  # one token per word in every encoding

    def _found(self, search: int) -> list[int]:
        """``shown`` tools spread evenly over the catalog sorted by cost, so a search finds tools of typical
        cost (not the catalog's first few), shifted by one per search."""
        n = len(self.names)
        stride = max(n // max(self.shown, 1), 1)
        return [self.by_cost[(search + i * stride) % n] for i in range(self.shown)]

    def _call(self, number: int, name: str, arguments: str, result: str) -> list[dict[str, Any]]:
        call_id = f"call_{number}"
        function = {"name": name, "arguments": arguments}
        return [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function", "function": function}]},
            {"role": "tool", "tool_call_id": call_id, "content": result},
        ]  # fmt: skip

    def requests(self, calls: int, searches: int) -> tuple[list[Request], list[Request]]:
        start = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "Do the task."}]
        every: list[Request] = []
        talk = list(start)
        for call in range(calls):
            every.append((list(talk), list(range(len(self.names)))))
            if call < calls - 1:
                talk += self._call(call, self.names[call % len(self.names)], "{}", self.result)
        with_search: list[Request] = []
        talk = [{"role": "system", "content": _SYSTEM + DEFAULT_SYSTEM_MESSAGE_SUFFIX}, start[1]]
        exposed: list[int] = []
        steps = ["search"] * max(searches - (calls - 1), 0)
        for call in range(calls - 1):
            steps += ["search", "call"] if call < searches else ["call"]
        made = 0
        for step in [*steps, "answer"]:
            with_search.append((list(talk), list(exposed)))
            if step == "search":
                found = self._found(made)
                exposed = list(dict.fromkeys(exposed + found)) if self.accumulate else found
                names = json.dumps([self.names[i] for i in found])
                talk += self._call(len(talk), TOOL_SEARCH_TOOL_NAME, _QUERY, names)
                made += 1
            elif step == "call":
                name = self.names[exposed[0]] if exposed else self.names[0]
                talk += self._call(len(talk), name, "{}", self.result)
        return every, with_search


class _Tokens:
    """Prompt tokens of a task's requests: the same segments as ``eval.cost.request_segments`` (tools,
    tools block end, messages, reply priming), each distinct message counted once. A task's conversation
    only grows, so each request's messages extend the previous request's: only the new ones are added."""

    def __init__(self, counter: TokenCounter, tool_costs: list[int], meta: int) -> None:
        self.counter, self.costs, self.meta = counter, tool_costs, meta
        self.catalog = sum(tool_costs)
        self.seen: dict[str, int] = {}

    def _message(self, message: dict[str, Any]) -> int:
        key = json.dumps(message, sort_keys=True)
        if key not in self.seen:
            self.seen[key] = request_segments([message], [], self.counter)[0].tokens
        return self.seen[key]

    def task(self, requests: list[Request], searching: bool) -> int:
        total = carried = before = 0
        for messages, exposed in requests:
            carried += sum(self._message(m) for m in messages[before:])
            before = len(messages)
            every = len(exposed) == len(self.costs)
            tools = (self.catalog if every else sum(self.costs[i] for i in exposed)) + (
                self.meta if searching else 0
            )
            end = self.counter.tool_format.func_end if (exposed or searching) else 0
            total += tools + end + carried + REPLY_PRIMING
        return total


def _bill(
    requests: list[Request], meta: list[Tool], tools: list[Tool], counter: TokenCounter, price: Price
) -> float:
    """The bill (USD) of one way of running the task: :class:`_Task`'s requests with ``meta`` and the tools
    they expose, so the tools array changes as a real run's does and the cache serves what a real run's
    would, and the model's replies (each request's reply is the call the conversation adds next; the last
    one an answer of ``ANSWER_TOKENS``), which a search's extra requests add to."""
    wire = [(m, [*meta, *(tools[i] for i in exposed)]) for m, exposed in requests]
    replies = [  # the message the next request adds after this one's conversation
        counter.message_tokens(requests[i + 1][0][len(m)]) for i, (m, _) in enumerate(requests[:-1])
    ]
    rows = request_costs(wire, [*replies, ANSWER_TOKENS], price, counter)  # type: ignore[arg-type]
    return float(totals(rows)["cost_usd"])


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
        upto = f" up to {pay.pays_off_up_to_calls}" if pay.pays_off_up_to_calls else ""
        return f"saves {tokens} per task: {task}; search pays off from {calls}{upto} per task"
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
    accumulate = pay.accumulation  # decided once, by payoff(), whose figures assume it
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
