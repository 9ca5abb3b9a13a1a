"""TokenDashboard: what tool definitions cost, per tool and per request, and what tool search does to the
prompt prefix (and so to prompt caching)."""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, load_catalog
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.tokens import ENCODINGS, TokenCounter
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure
from toolsearch_lab.ui.stepper_render import trace_of
from toolsearch_lab.ui.stepper_replay import catalog_name, replay_summary
from toolsearch_lab.ui.tokens_render import per_tool_spec, prefix_html, run_spec


@lru_cache(maxsize=8)
def _counter(encoding: str) -> TokenCounter:
    return TokenCounter(encoding)


@lru_cache(maxsize=16)
def catalog_costs(catalog: str, encoding: str) -> tuple[tuple[tuple[str, int], ...], int, dict]:
    """(rows most expensive first, total for sending all, name → cost) of a shipped catalog; cached because
    switching back and forth between catalogs must be instant."""
    rows, total = _counter(encoding).catalog_tokens(load_catalog(catalog).tools)
    return tuple(rows), total, dict(rows)


def _catalog_names(current: str) -> list[str]:
    names = list(SHIPPED_CATALOGS)
    return names if current in names else [current] + names


class TokenDashboard(Displayable):
    def __init__(self, catalog: str = "github-mcp", run=None, encoding: str = "o200k_base") -> None:
        style = {"description_width": "initial"}
        self.catalog_dropdown = widgets.Dropdown(
            options=_catalog_names(catalog),
            value=catalog,
            description="Catalog",
            style=style,
            layout=widgets.Layout(width="260px"),
        )
        self.encoding_dropdown = widgets.Dropdown(
            options=ENCODINGS,
            value=encoding,
            description="Encoding",
            style=style,
            layout=widgets.Layout(width="260px"),
        )
        self.summary = html_sink()
        self.prefix = html_sink()
        self.run = run
        self._compute()
        self.per_tool_fig = new_figure(self._per_tool_spec())
        self.run_fig = new_figure(self._run_spec())
        self._draw_text()
        self.catalog_dropdown.observe(lambda _: self.redraw(), names="value")
        self.encoding_dropdown.observe(lambda _: self.redraw(), names="value")
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.catalog_dropdown, self.encoding_dropdown]),
                self.summary,
                figure_box(self.per_tool_fig),
                figure_box(self.run_fig),
                self.prefix,
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    # ---- state ---------------------------------------------------------------------------------------------
    @property
    def catalog(self) -> str:
        return self.catalog_dropdown.value

    @property
    def encoding(self) -> str:
        return self.encoding_dropdown.value

    @property
    def trace(self):
        return trace_of(self.run) if self.run is not None else None

    def _compute(self) -> None:
        counter = _counter(self.encoding)
        rows, total, by_name = catalog_costs(self.catalog, self.encoding)
        self.rows: list[tuple[str, int]] = list(rows)
        self.total: int = total
        self.func_end = counter.tool_format.func_end
        self.search_tool_tokens = counter.tools_tokens([ToolSearchTool(None).as_tool()])
        # Costs of the run's own tools for the prefix view: the scenario's definitions when the run carries
        # them, else the catalog's (same names, same definitions for the shipped scenarios).
        self.tool_costs = dict(by_name)
        scenario = getattr(self.run, "scenario", None)
        for tool in getattr(scenario, "tools", None) or ():
            self.tool_costs[tool.name] = counter.tool_tokens(tool)
        self.tool_costs["toolSearchTool"] = counter.tool_tokens(ToolSearchTool(None).as_tool())

    def _sent(self) -> set[str]:
        trace = self.trace
        if trace is None:
            return set()
        return {catalog_name(n) for it in trace.iterations for n in it.exposed_tools}

    def _per_tool_spec(self) -> dict:
        return per_tool_spec(self.rows, self.total, self.catalog, self._sent(), self.func_end)

    def _run_spec(self) -> dict:
        return run_spec(self.trace, self.search_tool_tokens, self.total, len(self.rows))

    def _draw_text(self) -> None:
        trace = self.trace
        counter = _counter(self.encoding)
        body = (
            f"<b>{t.esc(self.catalog)}</b>: {len(self.rows)} tools cost <b>{self.total:,}</b> prompt tokens "
            f"in every request that sends them all; <span style='color:{t.SEARCH}'>toolSearchTool</span> "
            f"alone costs <b>{self.search_tool_tokens:,}</b> ({counter.encoding_name})."
        )
        if trace is not None and trace.catalog_size != len(self.rows):
            body += t.muted(f" The run below used its own catalog of {trace.catalog_size} tools.")
        self.summary.value = t.panel(body + replay_summary(trace))
        self.prefix.value = prefix_html(trace, self.tool_costs, self.func_end)

    # ---- public --------------------------------------------------------------------------------------------
    def set_run(self, run) -> None:
        """Show another run (a ScenarioRun, RunResult or RunTrace); ``None`` shows the single-request view."""
        self.run = run
        self.redraw()

    def redraw(self) -> None:
        self._compute()
        update_figure(self.per_tool_fig, self._per_tool_spec())
        update_figure(self.run_fig, self._run_spec())
        self._draw_text()
