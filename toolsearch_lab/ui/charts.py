"""Line charts in the project's look, and the table beside them, for notebook cells that show measured
numbers (notebook 08).

They are FigureWidgets, like every other figure of the kit: JupyterLab and Voila render them through the
widget manager that the other views already need, with zoom and hover.

Series names pick their colour from the shared meaning: "all tools" is grey and "tool search" violet as in
every other view, an index kind ("regex", "lucene", ...) has the colour the IndexExplorer gives it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.display import Html, Table
from toolsearch_lab.ui.index_explorer import KIND_COLOURS, kind_label

SERIES_COLOURS = {"all tools": t.BASELINE, "tool search": t.SEARCH, **KIND_COLOURS}


def log_axis(title: str, values: Sequence[float] = ()) -> dict:
    """A log axis labelled at whole decades (10, 100, 1,000) when ``values`` span three decades or more,
    and at 1, 2 and 5 in each decade when they span fewer (a latency from 0.3 to 8 ms would otherwise be
    labelled at 1 and 10 only)."""
    positive = [v for v in values if v > 0]
    narrow = bool(positive) and max(positive) / min(positive) < 1000
    return t.axis(
        title,
        type="log",
        dtick="D2" if narrow else 1,
        tickformat=",~r",  # 1,000,000 rather than 1e+6; 0.2 stays 0.2
        minor={"ticks": "inside", "ticklen": 4},
    )


def line_chart(
    title: str,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 420,
) -> go.FigureWidget:
    """One line per ``series`` entry (name → (x values, y values)), coloured by what the name means."""
    data = [
        go.Scatter(
            x=list(x),
            y=list(y),
            name=name,
            mode="lines+markers",
            line={"color": SERIES_COLOURS.get(name, t.INK), "width": 3},
            marker={"size": 9},
        )
        for name, (x, y) in series.items()
    ]
    layout = t.base_layout(
        title,
        height=height,
        xaxis=log_axis(x_title, [v for x, _ in series.values() for v in x]) if log_x else t.axis(x_title),
        yaxis=(
            log_axis(y_title, [v for _, y in series.values() for v in y])
            if log_y
            else t.axis(y_title, rangemode="tozero")
        ),
    )
    return go.FigureWidget(data=data, layout=layout)


def error_chart(
    title: str,
    refused: Mapping[str, Sequence[tuple[float, bool]]],
    loaded: Mapping[str, Sequence[tuple[float, bool]]],
    thresholds: Sequence[float],
    marks: Mapping[str, object] | None = None,
) -> go.FigureWidget:
    """Both errors of a confidence threshold on one plot. ``refused``: per kind of request a tool serves,
    each request's (confidence, refused at any threshold, as a near-miss is); the line is the share
    wrongly refused at each threshold (confidence below it, or refused anyway). ``loaded``: the same for
    kinds no tool serves; the line is the share still given tools. ``marks``: labelled thresholds drawn
    as dotted lines (a mark that is not a number, such as an unanswered exercise, is left out)."""

    Wrong = Callable[[float, bool, float], bool]

    def share(items: Sequence[tuple[float, bool]], wrong: Wrong) -> list[float]:
        return [sum(wrong(v, flag, x) for v, flag in items) / max(len(items), 1) for x in thresholds]

    series = {
        f"wrongly refused: {name}": (list(thresholds), share(items, lambda v, flag, x: flag or v < x))
        for name, items in refused.items()
    }
    series.update(
        {
            f"wrongly loaded: {name}": (
                list(thresholds),
                share(items, lambda v, flag, x: not flag and v >= x),
            )
            for name, items in loaded.items()
        }
    )
    fig = line_chart(title, series, "threshold (no tools below this confidence)", "share of the requests")
    colours = [t.BAD] * len(refused) + [t.NEW, t.SEARCH, t.FOUND][: len(loaded)]
    for trace, colour in zip(fig.data, colours, strict=False):
        trace.line.color, trace.marker.size = colour, 4
    for label, x in (marks or {}).items():
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            fig.add_vline(x=x, line={"dash": "dot", "color": t.MUTED}, annotation_text=label)
    return fig


def rank_table(
    measured: Mapping[tuple[str, int], Mapping], sizes: Sequence[int], max_results: int = 10
) -> Table:
    """``measured`` maps (index kind, catalog size) to a ``measure_index`` row: one table row per index and
    target tool, one column per size, each cell the target's rank (green at #1, amber lower, red when it
    is not among the ``max_results`` the model would see; – when that size was not measured)."""
    kinds = list(dict.fromkeys(kind for kind, _ in measured))
    targets = list(dict.fromkeys(name for row in measured.values() for name in row["ranks"]))
    rows = []
    for kind in kinds:
        for target in targets:
            cells: list[Any] = [kind_label(kind), target]
            for size in sizes:
                row = measured.get((kind, size))
                cells.append(None if row is None else _rank_cell(row["ranks"].get(target), max_results))
            rows.append(cells)
    caption = f"rank of each target tool; ✗ = not in the top {max_results}, so the model never sees it"
    return Table(["index", "target", *(f"{size:,} tools" for size in sizes)], rows, caption=caption)


def _rank_cell(rank: int | None, max_results: int) -> Html:
    if rank is None:
        return Html(f"<b style='color:{t.BAD}'>✗</b>", "✗")
    colour = t.GOOD if rank == 1 else t.NEW
    return Html(f"<b style='color:{colour}'>#{rank}</b>", f"#{rank}")
