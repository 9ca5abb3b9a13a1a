"""Pure render functions for the IterationStepper's two figures: a RunTrace (and a selected iteration) in,
figure specs out (its HTML panels are :mod:`.stepper_panels`). No widgets here, so every picture is
unit-testable and cheap to recompute. Render functions take the *position* of the selected iteration (from 0)
and show it as its number from 1, as the trace, the CLI and the docs do. A replayed run adds its own search
tools and deferred tools (:mod:`.stepper_replay`).
"""

from __future__ import annotations

import weakref
from itertools import accumulate

from toolsearch_lab.trace import Iteration, RunTrace, shown_trace
from toolsearch_lab.ui import stepper_replay as replay, theme as t

# Trace order of the tools figure; update_figure relies on it never changing.
TOOLS_TRACES = (
    "toolSearchTool",
    "exposed",
    "newly exposed",
    "found, exposed next request",
    "called",
    "rejected call",
    replay.DEFERRED,
)
TOKENS_TRACES = ("tool search", "baseline", "tool search cumulative", "baseline cumulative")

CELL = 24  # marker size of one (iteration, tool) cell
ROW_PX = 30


def trace_of(run) -> RunTrace:
    """A ScenarioRun, a RunResult or a bare RunTrace → the RunTrace to show: a replayed run's is its copy
    with every key-shaped string hidden (:func:`~toolsearch_lab.trace.shown_trace`), made once per trace."""
    trace = run if isinstance(run, RunTrace) else getattr(run, "trace", None)
    if not isinstance(trace, RunTrace):
        raise TypeError(f"expected a RunTrace or an object with .trace, got {type(run).__name__}")
    if trace.source != "replay":
        return trace
    held = _SHOWN.get(id(trace))
    if held is None or held[0]() is not trace:
        held = _SHOWN[id(trace)] = (weakref.ref(trace), shown_trace(trace))
        weakref.finalize(trace, _SHOWN.pop, id(trace), None)
    return held[1]


# id(replayed trace) -> (the trace, its copy to show); an entry leaves when its trace is collected.
_SHOWN: dict[int, tuple[weakref.ref[RunTrace], RunTrace]] = {}


def tool_rows(trace: RunTrace) -> list[str]:
    """Row order: the search tool(s), then every tool as it first appeared (exposed, found, called), then the
    tools only ever sent deferred."""
    seen = [
        n
        for it in trace.iterations
        for n in (
            *it.exposed_tools,
            *(h for s in it.searches for h in s.names),
            *(c.name for c in it.tool_calls),
        )
    ]
    deferred = [n for it in trace.iterations for n in it.deferred]
    return list(dict.fromkeys([*replay.search_tools(trace), *seen, *deferred]))


def highlight(selected: int | None, n: int, colour: str = t.NEW_LIGHT) -> list[dict]:
    if selected is None or not 0 <= selected < n:
        return []
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": selected + 0.5,
            "x1": selected + 1.5,
            "y0": 0,
            "y1": 1,
            "fillcolor": colour,
            "opacity": 0.55,
            "line": {"width": 0},
            "layer": "below",
        }
    ]


TOOLS_STYLE = {
    "toolSearchTool": {"symbol": "square", "size": CELL, "color": t.SEARCH},
    "exposed": {"symbol": "square", "size": CELL, "color": t.FOUND},
    "newly exposed": {"symbol": "square", "size": CELL, "color": t.NEW},
    "found, exposed next request": {
        "symbol": "circle-open",
        "size": CELL - 10,
        "color": t.FOUND,
        "line": {"width": 3},
    },
    "called": {"symbol": "square-open", "size": CELL + 9, "color": t.CALLED, "line": {"width": 3}},
    "rejected call": {"symbol": "x-thin-open", "size": CELL, "color": t.BAD, "line": {"width": 4}},
    **replay.DEFERRED_STYLE,
}


def tools_spec(trace: RunTrace, selected: int | None = None) -> dict:
    """The accumulated tool set over iterations: one row per tool, one column per model request."""
    rows = tool_rows(trace)
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": " + ".join(replay.search_tools(trace)) if kind == "toolSearchTool" else kind,
            "x": xs,
            "y": ys,
            "text": hs,
            "hovertemplate": "%{text}<extra></extra>",
            "marker": TOOLS_STYLE[kind],
            "showlegend": True,
            "cliponaxis": False,
        }
        for kind, (xs, ys, hs) in tool_cells(trace).items()
    ]
    return {"data": data, "layout": _tools_layout(trace, rows, selected)}


def _tools_layout(trace: RunTrace, rows: list[str], selected: int | None) -> dict:
    n = len(trace.iterations)
    accumulation = trace.config.get("reference_tool_name_accumulation", True)
    title = (
        f"Tools exposed to the model in each request: {replay.discovered(trace, rows)} of "
        f"{trace.catalog_size} tools discovered"
        f"{'' if accumulation else ' (accumulation off)'}"
    )
    # Long tool names widen the label column and shrink the plot area; the legend (anchored to the plot
    # area) then wraps onto extra rows above it, so leave room for them below the title.
    top = 110 if max((len(r) for r in rows), default=0) <= 16 else 170
    return t.base_layout(
        title,
        height=top + 80 + ROW_PX * len(rows),
        xaxis=t.axis(
            "Iteration (one model request each)",
            tickmode="array",
            tickvals=list(range(1, n + 1)),
            ticktext=[str(i) for i in range(1, n + 1)],
            range=[0.4, max(n, 1) + 0.6],
            showgrid=False,
        ),
        yaxis=t.axis(
            "",
            type="category",
            categoryorder="array",
            categoryarray=rows,
            autorange="reversed",
            tickfont={"family": t.MONO, "size": t.FONT_SIZE - 1},
            showgrid=True,
            range=None,
        ),
        shapes=highlight(selected, n),
        margin={"l": 40, "r": 30, "t": top, "b": 60},
    )


def tool_cells(trace: RunTrace) -> dict[str, tuple[list, list, list]]:
    """Per marker kind of the tools figure (in :data:`TOOLS_TRACES` order): the iterations, tool names and
    hover texts of its markers."""
    cells: dict[str, tuple[list, list, list]] = {k: ([], [], []) for k in TOOLS_TRACES}
    searchers = set(replay.search_tools(trace))
    for position, it in enumerate(trace.iterations):
        for kind, name, hover in _iteration_cells(position + 1, it, searchers):
            xs, ys, hs = cells[kind]
            xs.append(position + 1)
            ys.append(name)
            hs.append(hover)
    return cells


def _iteration_cells(i: int, it: Iteration, searchers: set[str]) -> list[tuple[str, str, str]]:
    """(kind, tool, hover) of every marker in iteration ``i``'s column: exposed tools, then tools its
    searches found that are not exposed yet, then its calls, then the tools it sent deferred."""
    cells = replay.deferred_cells(i, it)
    new = set(it.newly_exposed)
    exposed = set(it.exposed_tools)
    for name in it.exposed_tools:
        if name in searchers:
            cells.append(("toolSearchTool", name, f"iteration {i}: {name} (always exposed)"))
        elif name in new:
            cells.append(("newly exposed", name, f"iteration {i}: {name} newly exposed"))
        else:
            cells.append(("exposed", name, f"iteration {i}: {name} exposed (found earlier)"))
    for name in dict.fromkeys(n for s in it.searches for n in s.names):
        if name not in exposed:
            cells.append(("found, exposed next request", name, f"iteration {i}: search returned {name}"))
    for c in it.tool_calls:
        kind = "rejected call" if c.kind == "rejected" else "called"
        hover = f"iteration {i}: model called {c.name}" + (" (rejected)" if kind != "called" else "")
        cells.append((kind, c.name, hover))
    return cells


def tokens_spec(trace: RunTrace, selected: int | None = None) -> dict:
    """Prompt tokens per model request and cumulative, tool search against sending all tools."""
    its = trace.iterations
    n = len(its)
    ts = [it.tokens.tool_search.total for it in its]
    base = [it.tokens.baseline.total for it in its]
    cum_ts, cum_base = list(accumulate(ts)), list(accumulate(base))
    total = trace.tokens_total()
    subtitle = (
        f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>grey: the per-request counterfactual, "
        f"every tool put into each of these requests ({total['prompt_tool_search']:,} vs "
        f"{total['prompt_baseline']:,} prompt tokens in all);<br>a real all-tools run makes fewer requests "
        "(the status above compares with one)</span>"
    )
    layout = t.base_layout(
        f"Prompt tokens per model request: tool search vs all {trace.catalog_size} tools<br>{subtitle}",
        height=430,
        barmode="group",
        bargap=0.35,
        xaxis=t.axis(
            "Iteration (one model request each)",
            tickmode="array",
            tickvals=list(range(1, n + 1)),
            range=[0.4, max(n, 1) + 0.6],
            showgrid=False,
        ),
        # Both axes get round ticks and headroom, so the last cumulative point never touches the top.
        yaxis=t.axis(
            "prompt tokens in this request", tickformat=",.0f", **t.nice_range(max(ts + base, default=0))
        ),
        yaxis2=t.axis(
            "cumulative prompt tokens",
            overlaying="y",
            side="right",
            showgrid=False,
            tickformat=",.0f",
            **t.nice_range(max(cum_ts + cum_base, default=0)),
        ),
        shapes=highlight(selected, n),
        margin={"l": 80, "r": 90, "t": 150, "b": 60},
    )
    return {"data": _tokens_traces(trace.catalog_size, ts, base, cum_ts, cum_base), "layout": layout}


def _tokens_traces(
    n_all: int, ts: list[int], base: list[int], cum_ts: list[int], cum_base: list[int]
) -> list[dict]:
    """Bars per request and dotted cumulative lines (on the right axis), tool search vs all tools."""
    x = list(range(1, len(ts) + 1))
    cumulative_hover = "after iteration %{x}: %{y:,} prompt tokens in total<extra></extra>"

    def line(name: str, y: list[int], colour: str) -> dict:
        return {
            "type": "scatter",
            "mode": "lines+markers",
            "name": name,
            "x": x,
            "y": y,
            "yaxis": "y2",
            "line": {"color": colour, "dash": "dot", "width": 3},
            "marker": {"size": 8},
            "hovertemplate": cumulative_hover,
        }

    return [
        {
            "type": "bar",
            "name": "tool search: this request",
            "x": x,
            "y": ts,
            "marker": {"color": t.SEARCH},
            "hovertemplate": "iteration %{x}: %{y:,} prompt tokens with tool search<extra></extra>",
        },
        {
            "type": "bar",
            "name": f"all {n_all} tools: this request",
            "x": x,
            "y": base,
            "marker": {"color": t.BASELINE},
            "hovertemplate": "iteration %{x}: %{y:,} prompt tokens sending every tool<extra></extra>",
        },
        line("tool search: cumulative", cum_ts, t.SEARCH),
        line(f"all {n_all} tools: cumulative", cum_base, t.BASELINE),
    ]
