"""Tables of replayed runs (:func:`~toolsearch_lab.replay.load.load_transcript`): the runs side by side, and
one run request by request, with the API's usage beside this project's count, each labelled; and a logged
run re-priced under every strategy, with its searches asked of every index
(:func:`~toolsearch_lab.eval.replay_compare.compare_replay`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolsearch_lab.eval.replay_compare import EVERY_RERUN, ReplayComparison
from toolsearch_lab.trace import RunTrace
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.display import Html, Table
from toolsearch_lab.ui.stepper_render import trace_of
from toolsearch_lab.ui.stepper_replay import our_count_label, search_tools, tool_of


def runs_overview(runs: Mapping[str, Any]) -> Table:
    """One row per run (``label -> trace``): its format and model, its requests and searches, and what its
    first request sent: the tools in the model's context and the ones deferred."""
    rows = []
    for label, run in runs.items():
        trace = trace_of(run)
        first = trace.iterations[0] if trace.iterations else None
        rows.append(
            [
                label,
                trace.replay.format if trace.replay is not None else trace.source,
                trace.model,
                len(trace.iterations),
                len(trace.searches()),
                ", ".join(search_tools(trace)),
                len(first.exposed_tools) if first else None,
                len(first.deferred) if first else None,
            ]
        )
    columns = ["run", "format", "model", "requests", "searches", "search tool", "in context", "deferred"]
    return Table(columns, rows, caption="in context and deferred: what the first request sent")


def request_table(run: Any, price_model: str | None = None) -> Table:
    """One row per request: the tools in context (and the ones new in it), deferred, each search (its query
    as written) and how many tools it loaded (their names are "new" in a later request), the calls (a failed
    one marked ✗ with what it answered), our count, the API's usage and what it cost. The cost is the run's
    model's price in the shipped table, or ``price_model``'s."""
    from toolsearch_lab.eval.cost import billed_costs, load_prices

    trace: RunTrace = trace_of(run)
    table = load_prices()
    price = table.price(price_model) if price_model else table.for_model(trace.model)
    rows = []
    for it in trace.iterations:
        usage = it.tokens.api_usage or {}
        searches = [f"{tool_of(it, s)} “{s.query}” → {_found(s)}" for s in it.searches]
        new = [n for n in it.newly_exposed if it.number > 1]
        agent = trace.replay.agent_of(it.number) if trace.replay is not None else None
        rows.append(
            [
                it.number if agent is None else f"{it.number} (sub-agent {agent})",
                len(it.exposed_tools),
                _chips(new, t.INK, t.NEW_LIGHT) if new else None,
                len(it.deferred),
                Html("<br>".join(t.esc(s) for s in searches), "; ".join(searches)) if searches else None,
                _calls(it) or None,
                it.tokens.tool_search.total,
                usage.get("prompt_tokens"),
                usage.get("cached_tokens"),
                f"${billed_costs([usage], price)[0].cost_usd:.4f}" if price is not None and usage else None,
            ]
        )
    columns = ["request", "in context", "new", "deferred", "searches", "called", "ours"]
    columns += ["API prompt", "API cached", "cost"]
    priced = f"cost: {price.model} prices of {table.taken}" if price else f"no price for {trace.model}"
    caption = f"{our_count_label(trace)} API: the usage the run recorded; {priced}."
    return Table(columns, rows, caption=caption)


def _calls(it: Any) -> str:
    """The tools a request called; a failed call marked ✗ with the start of what it answered."""
    return ", ".join(
        f"✗ {c.name} ({t.clip(c.result or c.error or '', 80)})" if c.error else c.name
        for c in it.tool_calls
        if c.kind == "tool"
    )


def _found(search: Any) -> str:
    """What a search loaded, briefly: the names enter the context (column "new") with a later request."""
    if search.error:
        return f"error {search.error}"
    count = len(search.names)
    return f"{count} tool{'s' if count != 1 else ''}" if count else "nothing"


def _figure(text: str) -> Html:
    """A number shown with the decimals given (a table shows floats with three)."""
    return Html(text, text)


def _chips(names: list[str], fg: str, bg: str) -> Html:
    return Html("".join(t.chip(n, fg, bg) for n in names), ", ".join(names))


def replay_comparison_table(comparison: ReplayComparison) -> Table:
    """A logged run re-priced (:func:`~toolsearch_lab.eval.replay_compare.compare_replay`): one row per
    strategy and index with its bill, the calls it had not exposed, and what it assumes, in one line."""
    rows = [
        [
            r.strategy,
            r.index,
            *(r.bill[k] for k in ("requests", "prompt_tokens", "cached_tokens", "cache_write_tokens")),
            r.bill["completion_tokens"],
            _figure(f"{r.cost_usd:.4f}"),
            None if r.mean_tools is None else _figure(f"{r.mean_tools:.1f}"),
            r.refused_calls,
            r.assumes,
        ]
        for r in comparison.rows
    ]
    columns = [
        "strategy",
        "index",
        "requests",
        "prompt",
        "cached",
        "written",
        "output",
        "USD",
        "tools/request",
    ]
    price = f"{comparison.priced_as}; {comparison.price.provider}'s caching rule"
    caption = f"{comparison.file}: {price}. In every re-run, {EVERY_RERUN}."
    if comparison.provenance:
        caption += f" Provenance: {comparison.provenance}"
    return Table([*columns, "refused", "assumes"], rows, caption=caption)


def replay_search_table(comparison: ReplayComparison) -> Table:
    """The model's own search queries asked of every index: per index, hit@1 and hit@k against the tool
    the model then called, and each search's rank and results (the first row: the log's own search)."""
    hits = comparison.searches
    cases = [c for c in hits.cases if c.scored]
    rows = []
    for summary in hits.indexes:
        answers = [next(a for a in c.answers if a.index == summary.index) for c in cases]
        cells = [
            f"#{a.rank} of {', '.join(a.names)}" if a.rank else f"miss: {', '.join(a.names) or 'nothing'}"
            for a in answers
        ]
        rows.append(
            [
                summary.index,
                f"{summary.hit_at_1}/{summary.searches}",
                f"{summary.hit_at_k}/{summary.searches}",
                round(summary.mrr, 2),
                *cells,
            ]
        )
    columns = [
        "index",
        "hit@1",
        f"hit@{hits.k}",
        "MRR",
        *(f"“{c.query}” → {', '.join(c.targets)}" for c in cases),
    ]
    left = len(hits.cases) - len(cases)
    caption = (
        f"over the {hits.searchable} tools the log's searches searched; a column per scored search: the "
        "query, then the tool the model called next"
        + (f"; {left} search(es) not scored (no such call after it, or a select: lookup)" if left else "")
    )
    return Table(columns, rows, caption=caption)
