"""Tables of replayed runs (:func:`~toolsearch_lab.replay.load.load_transcript`): the runs side by side, and
one run request by request, with the API's usage beside this project's count, each labelled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def request_table(run: Any) -> Table:
    """One row per request: the tools in context (and the ones new in it), deferred, each search and how many
    tools it loaded (their names are "new" in a later request), the calls, our count and the API's usage."""
    trace: RunTrace = trace_of(run)
    rows = []
    for it in trace.iterations:
        usage = it.tokens.api_usage or {}
        searches = [f"{tool_of(it, s)} “{s.query}” → {_found(s)}" for s in it.searches]
        new = [n for n in it.newly_exposed if it.number > 1]
        rows.append(
            [
                it.number,
                len(it.exposed_tools),
                _chips(new, t.INK, t.NEW_LIGHT) if new else None,
                len(it.deferred),
                Html("<br>".join(t.esc(s) for s in searches), "; ".join(searches)) if searches else None,
                ", ".join(c.name for c in it.tool_calls if c.kind == "tool") or None,
                it.tokens.tool_search.total,
                usage.get("prompt_tokens"),
                usage.get("cached_tokens"),
            ]
        )
    columns = ["request", "in context", "new", "deferred", "searches", "called", "ours"]
    columns += ["API prompt", "API cached"]
    return Table(columns, rows, caption=f"{our_count_label(trace)} API: the usage the run recorded.")


def _found(search: Any) -> str:
    """What a search loaded, briefly: the names enter the context (column "new") with a later request."""
    if search.error:
        return f"error {search.error}"
    count = len(search.names)
    return f"{count} tool{'s' if count != 1 else ''}" if count else "nothing"


def _chips(names: list[str], fg: str, bg: str) -> Html:
    return Html("".join(t.chip(n, fg, bg) for n in names), ", ".join(names))
