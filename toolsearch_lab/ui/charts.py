"""Line charts in the project's look, for notebook cells that plot measured numbers (notebook 06).

They are FigureWidgets, like every other figure of the kit: JupyterLab and Voila render them through the
widget manager that the other views already need, with zoom and hover.

Series names pick their colour from the shared meaning: "all tools" is grey and "tool search" violet as in
every other view, an index kind ("regex", "lucene", ...) has the colour the IndexExplorer gives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.index_explorer import KIND_COLOURS

SERIES_COLOURS = {"all tools": t.BASELINE, "tool search": t.SEARCH, **KIND_COLOURS}


def log_axis(title: str) -> dict:
    """A log axis labelled at whole decades only (10, 100, 1,000): no cluttered "2 / 5" minor labels."""
    return t.axis(title, type="log", dtick=1, tickformat=",~g", minor={"ticks": "inside", "ticklen": 4})


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
        xaxis=log_axis(x_title) if log_x else t.axis(x_title),
        yaxis=log_axis(y_title) if log_y else t.axis(y_title, rangemode="tozero"),
    )
    return go.FigureWidget(data=data, layout=layout)
