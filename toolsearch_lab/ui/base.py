"""Plumbing shared by the UI classes: display, fixed-size figure boxes and figure updates."""

from __future__ import annotations

import ipywidgets as widgets
import plotly.graph_objects as go

from toolsearch_lab.compat import resync_figure_widget
from toolsearch_lab.ui.theme import FIG_WIDTH


class Displayable:
    """A UI class shows its ``.widget`` when it is the last expression of a cell."""

    widget: widgets.Widget

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        return self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs)


def figure_box(fig: go.FigureWidget, width: int = FIG_WIDTH) -> widgets.Box:
    """A fixed-width box around a figure, so the notebook or Voila never squeezes it."""
    return widgets.Box(
        [fig], layout=widgets.Layout(width=f"{width}px", min_width=f"{width}px", overflow="hidden")
    )


def html_sink(width: int = FIG_WIDTH, value: str = "") -> widgets.HTML:
    return widgets.HTML(value=value, layout=widgets.Layout(width=f"{width}px", min_width=f"{width}px"))


def update_figure(fig: go.FigureWidget, spec: dict) -> None:
    """Apply a figure spec from a pure render function: ``{"data": [trace dicts], "layout": {...}}``.

    The render functions always produce the same number and kinds of traces for a figure, so an update is a
    batch of property assignments (one message to the browser), never a rebuild.
    """
    data = spec["data"]
    if len(data) != len(fig.data):
        raise ValueError(f"figure has {len(fig.data)} traces, the spec has {len(data)}")
    with fig.batch_update():
        for trace, props in zip(fig.data, data, strict=False):
            trace.update(props, overwrite=True)
        fig.layout.update(spec["layout"], overwrite=True)
    resync_figure_widget(fig)


def new_figure(spec: dict) -> go.FigureWidget:
    return go.FigureWidget(data=spec["data"], layout=spec["layout"])
