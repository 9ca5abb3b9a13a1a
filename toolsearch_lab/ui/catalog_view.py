"""CatalogView: what each tool of an imported catalog costs, and what the search finds for a typed query.

The bar chart is the TokenDashboard's per-tool chart; the tools the current query finds are teal, as they
are in every view. Below it: the ranked hits and what a request with tool search would carry instead.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure
from toolsearch_lab.ui.tokens_render import per_tool_spec

SESSION = "catalog-view"
KINDS = ("regex", "lucene", "vector", "hybrid")


def hits_html(
    query: str, hits: list[tuple[str, float | None]], costs: dict[str, int], total: int, meta: int
) -> str:
    """The ranked hits with their cost, and the request's tool tokens with tool search vs all tools."""
    if not hits:
        found = t.muted("nothing found: the model would see only toolSearchTool and could search again")
    else:
        best = max((s for _, s in hits if s is not None), default=None)
        found = "".join(
            f"<div>{i}. {t.chip(name, t.FOUND, t.FOUND_LIGHT)} {t.score_bar(score, best)} "
            f"{t.muted(f'{costs.get(name, 0):,} tokens')}</div>"
            for i, (name, score) in enumerate(hits, 1)
        )
    sent = meta + sum(costs.get(name, 0) for name, _ in hits)
    return t.panel(
        t.heading(f"“{t.esc(query)}”")
        + found
        + f"<div style='margin-top:6px'>next request's tools: toolSearchTool ({meta:,}) + these = "
        f"<b style='color:{t.SEARCH}'>{sent:,}</b> tokens, against <b>{total:,}</b> for all {len(costs)} "
        "tools</div>"
    )


class CatalogView(Displayable):
    """``tools``: a list of Tool (e.g. ``load_catalog(path).tools``); ``name`` labels the chart."""

    def __init__(
        self,
        tools: list,
        name: str = "my catalog",
        query: str = "",
        index: str = "lucene",
        max_results: int = 3,
        counter: TokenCounter | None = None,
    ) -> None:
        if not tools:
            raise ValueError("CatalogView needs at least one tool")
        self.tools, self.name = list(tools), name
        self.counter = counter or TokenCounter()
        self.rows, self.total = self.counter.catalog_tokens(self.tools)
        self.costs = dict(self.rows)
        self.meta_cost = self.counter.tool_tokens(ToolSearchTool(None).as_tool())
        self._indexes: dict[str, Any] = {}
        style = {"description_width": "initial"}
        self.query_box = widgets.Text(
            value=query,
            description="Query",
            continuous_update=False,
            style=style,
            layout=widgets.Layout(width="520px"),
        )
        self.index_dropdown = widgets.Dropdown(
            options=KINDS, value=index, description="Index", style=style, layout=widgets.Layout(width="200px")
        )
        self.max_results = widgets.IntSlider(
            value=max_results,
            min=1,
            max=10,
            description="maxResults",
            style=style,
            layout=widgets.Layout(width="260px"),
        )
        self.found: list[tuple[str, float | None]] = []
        self.fig = new_figure(self._spec())
        self.details = html_sink()
        self.search()
        for control in (self.query_box, self.index_dropdown, self.max_results):
            control.observe(lambda _: self.search(), names="value")
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.query_box, self.index_dropdown, self.max_results]),
                figure_box(self.fig),
                self.details,
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    def _spec(self) -> dict:
        sent = {name for name, _ in self.found}
        func_end = self.counter.tool_format.func_end
        return per_tool_spec(self.rows, self.total, self.name, sent, func_end, "found by the query")

    def _index(self, kind: str) -> Any:
        if kind not in self._indexes:
            index = make_index(kind)
            index.index_tools(SESSION, self.tools)
            self._indexes[kind] = index
        return self._indexes[kind]

    def search(self) -> None:
        """Search the catalog with the current query and index; colour the found tools in the chart."""
        query = self.query_box.value.strip()
        if not query:
            self.found = []
            self.details.value = t.panel(t.muted("Type a query to see what the search finds."))
        else:
            request = SearchRequest(SESSION, query, int(self.max_results.value))
            refs = self._index(self.index_dropdown.value).search(request).tool_references
            self.found = [(r.tool_name, r.relevance_score) for r in refs]
            self.details.value = hits_html(query, self.found, self.costs, self.total, self.meta_cost)
        update_figure(self.fig, self._spec())
