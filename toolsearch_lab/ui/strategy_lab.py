"""StrategyLab: every way of loading tools on one scenario: the comparison table, a cost-vs-success Pareto
plot (one point per strategy x index) and, per strategy, which part of each request a prompt cache serves.

The ``pinned`` row (a checkbox, on unless the lab is given runs without it) keeps the tools
:func:`~toolsearch_lab.eval.compare.usage_pins` recommends (measured on the other shipped scenarios over the
same catalog) always loaded, first in every tools array.

The pure render functions (:func:`table_html`, :func:`pareto_spec`, :func:`prefix_html`) take comparison
rows and runs from :mod:`toolsearch_lab.eval.compare`; :class:`StrategyLab` wires them to widgets that change
the scenario, the indexes, maxResults, the unload policy and the prices live. Re-pricing never re-runs a
scenario; changing the scenario, index, maxResults or unload policy does (results are cached per setting).
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import copy
from dataclasses import replace

import ipywidgets as widgets
import plotly.graph_objects as go

from toolsearch_lab.eval.compare import OWN_INDEX, StrategyRun, compare, comparison_rows
from toolsearch_lab.eval.cost import Price, PriceTable, in_hashset_order, load_prices, request_costs
from toolsearch_lab.eval.scenarios import list_scenarios
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.loop.strategies import COMPARED_BY_DEFAULT, STRATEGY_NAMES
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure

SPRING_ORDER = "search-only, HashSet order"  # the search-only run as Spring orders its tools array

# One colour per strategy, in the shared meaning where there is one: all tools grey, Spring's search violet.
STRATEGY_COLOURS = {
    "all-tools": t.BASELINE,
    "search-only": t.SEARCH,
    SPRING_ORDER: "#3B0764",
    "search-only-no-accumulation": t.SEARCH_LIGHT,
    "listed-names": "#2563EB",
    "inline-references": t.FOUND,
    "pre-retrieval": t.NEW,
    "retrieve-then-bind": "#DB2777",
    "pinned": "#0D9488",  # search-only with the tools measured usage recommends always loaded
    "anthropic-regex": "#D97706",  # Anthropic's native search: amber, its own index
    "anthropic-bm25": "#92400E",
}
GOOD_TINT = "#DCFCE7"  # the winning row: ink on pale green
POINT_PX, RING_PX = 13, 9  # a Pareto point's marker, and how much wider it is per point drawn over it
RATE_RANGE = (-0.08, 1.12)  # the success axis: every rate (0 to 1) inside it, with room for the markers
INDEX_SYMBOLS = {
    "regex": "square",
    "lucene": "circle",
    "vector": "diamond",
    "hybrid": "triangle-up",
    "anthropic-regex": "star",
    "anthropic-bm25": "star",
}
UNLOAD_POLICIES: dict[str, dict[str, int | None]] = {
    "keep everything": {"idle_turns": None, "max_loaded": None},
    "drop after 2 idle turns": {"idle_turns": 2, "max_loaded": None},
    "drop after 4 idle turns": {"idle_turns": 4, "max_loaded": None},
    "keep at most 5": {"idle_turns": None, "max_loaded": 5},
    "keep at most 10": {"idle_turns": None, "max_loaded": 10},
}


def _base(name: str) -> str:
    return name.removesuffix("+unload")


def _colour(name: str) -> str:
    return STRATEGY_COLOURS.get(_base(name), t.INK)


def _name_cell(name: str) -> str:
    """A strategy's name in ink beside a swatch of its colour: some strategy colours are too light for
    text on white."""
    swatch = (
        f"<span style='display:inline-block;width:12px;height:12px;border-radius:3px;margin-right:6px;"
        f"vertical-align:-1px;background:{_colour(name)};border:1px solid {t.INK}'></span>"
    )
    return f"{swatch}<b style='color:{t.INK}'>{t.esc(name)}</b>"


class HtmlPanel:
    """Rendered HTML for a notebook cell (tables and bar views); a one-line text form for logs."""

    def __init__(self, html: str, text: str) -> None:
        self.html, self.text = html, text

    def _repr_html_(self) -> str:
        return f'<div class="{t.NO_MATH}">{self.html}</div>'

    def __repr__(self) -> str:
        return self.text


# ---- pure render functions ---------------------------------------------------------------------------------
def table_html(rows: Sequence[dict], width: int = t.PANEL_WIDTH, mark_best: bool = True) -> str:
    """The comparison table; with ``mark_best`` the cheapest successful row is marked (★, tinted green). Rows
    of a conversation also say their chat memory, where its memory advisor sat and where found tools were
    kept."""
    best = cheapest_successful(rows) if mark_best else None
    chat = any(r.get("memory") for r in rows)
    head = [
        "strategy",
        "index",
        *(["memory", "memory at", "tools in"] if chat else []),
        "requests",
        "prompt",
        "cached",
        "uncached",
        "cost $",
        "tools/req",
        "success",
        "1st miss",
    ]
    cells = "".join(f"<th style='padding:4px 8px;text-align:left'>{h}</th>" for h in head)
    out = [f"<table style='border-collapse:collapse;font-size:{t.FONT_SIZE - 1}px'><tr>{cells}</tr>"]
    for r in rows:
        mark = " ★" if r is best else ""
        colour = t.GOOD if r["success"] else t.BAD
        values = [
            _name_cell(r["strategy"]) + mark,
            t.esc(r["index"]),
            *(
                [t.esc(r.get("memory")), t.esc(r.get("memory_advisor")), t.esc(r.get("accumulation_source"))]
                if chat
                else []
            ),
            str(r["requests"]),
            t.fmt_int(r["prompt_tokens"]),
            f"{t.fmt_int(r['cached_tokens'])} ({r['cached_share']:.0%})",
            t.fmt_int(r["uncached_tokens"] + r["cache_write_tokens"]),
            f"{r['cost_usd']:.4f}",
            f"{r['mean_tools_per_request']:.1f}",
            f"<span style='color:{colour}'>{'yes' if r['success'] else 'no'} "
            f"{r['steps_succeeded']}/{r['steps']}</span>",
            "-" if r["first_unexposed_request"] is None else str(r["first_unexposed_request"]),
        ]
        tint = f"background:{GOOD_TINT};" if r is best else ""
        out.append(
            f"<tr style='{tint}'>"
            + "".join(f"<td style='padding:3px 8px;border-top:1px solid {t.GRID}'>{v}</td>" for v in values)
            + "</tr>"
        )
    out.append("</table>")
    note = t.muted(
        "cached = prompt tokens a prompt cache serves (priced at the cache-read rate); "
        + ("★ cheapest run that completed the task; " if mark_best else "")
        + "1st miss = first request whose step needed a tool the strategy had not exposed."
        + "".join(
            f" Pinned row: {t.esc(', '.join(pins) or 'nothing (no tool met the bar)')} always loaded."
            for pins in dict.fromkeys(
                tuple(r["options"]["pinned"]) for r in rows if "pinned" in r.get("options", {})
            )
        )
    )
    return t.panel("".join(out) + f"<div style='margin-top:6px'>{note}</div>", width)


def pareto_spec(rows: Sequence[dict], priced: str = "") -> dict:
    """Cost (x) vs step success rate (y): one point per strategy x index, hover for the details. Lower
    right is worse; the frontier is the upper left."""
    data = []
    names = list(dict.fromkeys(_base(r["strategy"]) for r in rows))
    ordered = [r for name in names for r in rows if _base(r["strategy"]) == name]  # the drawing order
    sizes = _ring_sizes(ordered)
    for name in names:
        mine = [r for r in rows if _base(r["strategy"]) == name]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": [r["cost_usd"] for r in mine],
                "y": [r["steps_succeeded"] / r["steps"] for r in mine],
                "marker": {
                    "size": [sizes[id(r)] for r in mine],
                    "opacity": 0.9,
                    "color": STRATEGY_COLOURS.get(name, t.INK),
                    "symbol": [INDEX_SYMBOLS.get(r["index"], "circle") for r in mine],
                    "line": {"width": 1, "color": t.INK},
                },
                "customdata": [
                    [
                        r["index"],
                        r["requests"],
                        r["prompt_tokens"],
                        r["cached_tokens"],
                        r["mean_tools_per_request"],
                        r["steps_succeeded"] / r["steps"],
                    ]
                    for r in mine
                ],
                "hovertemplate": (
                    f"<b>{t.esc(name)}</b> · %{{customdata[0]}}<br>"
                    "$%{x:.4f} · %{customdata[5]:.0%} of steps<br>"
                    "%{customdata[1]} requests · %{customdata[2]:,} prompt tokens, "
                    "%{customdata[3]:,} cached<br>"
                    "%{customdata[4]:.1f} tools per request<extra></extra>"
                ),
            }
        )
    scenario = rows[0]["scenario"] if rows else ""
    layout = t.base_layout(
        f"Cost vs success on {t.esc(scenario)}: one point per strategy × index<br>"
        f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>priced as {t.esc(priced)}, "
        "caching counted · shape = index (○ lucene, □ regex, ◇ vector, △ hybrid) · best is top left<br>"
        "points at the same place are drawn as rings, one inside the other; hover for exact figures</span>",
        height=520,
        # Log scale: the all-tools run costs an order of magnitude more, which crowds every other point
        # into one corner on a linear axis.
        xaxis=t.axis("cost of the run (USD, log scale)", type="log", tickformat="$.3f", dtick="D2"),
        yaxis=t.axis("steps succeeded", tickformat=".0%", range=list(RATE_RANGE)),
        margin={"l": 80, "r": 30, "t": 150, "b": 60},
    )
    return {"data": data, "layout": layout}


def _ring_sizes(ordered: Sequence[dict]) -> dict[int, int]:
    """Each row's marker size (by ``id``): points are drawn where their figures put them, never moved, so
    runs with the same cost and success coincide; a point drawn earlier is a ring around the ones drawn over
    it, so every one of them stays visible."""
    sizes = {}
    for k, row in enumerate(ordered):
        spot = (row["cost_usd"], row["steps_succeeded"] / row["steps"])
        over = sum((r["cost_usd"], r["steps_succeeded"] / r["steps"]) == spot for r in ordered[k + 1 :])
        sizes[id(row)] = POINT_PX + RING_PX * over
    return sizes


PREFIX_LABEL_PX = 300  # the figures beside each bar; long tool names wrap inside it instead of overflowing


def prefix_html(run: StrategyRun, width: int = t.PANEL_WIDTH) -> str:
    """Per request of one run: cached (hatched), written to the cache (amber) and plain input (solid)."""
    rows = run.costs
    bar_px = width - 24 - 36 - PREFIX_LABEL_PX - 16
    scale = bar_px / max((r.prompt_tokens for r in rows), default=1)
    colour = _colour(run.strategy.name)
    hatch = (
        f"repeating-linear-gradient(45deg,{t.BASELINE_LIGHT},{t.BASELINE_LIGHT} 6px,#FFFFFF 6px,#FFFFFF 9px)"
    )
    out = [
        t.heading(
            f"{t.esc(run.strategy.name)} · {t.esc(run.index)}: what a prompt cache serves, request by request"
        ),
        "<table style='border-collapse:collapse;table-layout:fixed'>",
        f"<col style='width:36px'><col style='width:{bar_px}px'><col style='width:{PREFIX_LABEL_PX}px'>",
    ]
    for r, it in zip(rows, run.trace.iterations, strict=False):
        parts = [
            (r.cached_tokens, f"background:{hatch};border:1px solid {t.BASELINE_LIGHT}", "cached"),
            (r.cache_write_tokens, f"background:{t.NEW}", "written to the cache"),
            (r.uncached_tokens, f"background:{colour}", "plain input"),
        ]
        bar = "".join(
            f"<div title='{n:,} tokens {label}' "
            f"style='flex:none;width:{max(round(n * scale), 1 if n else 0)}px;height:16px;{style}'></div>"
            for n, style, label in parts
        )
        figures = f"{r.cached_tokens:,}/{r.prompt_tokens:,} cached"
        if r.reported_cached is not None:  # the server's own figure, beside the model's
            figures += f" (server: {r.reported_cached:,})"
        more = len(it.newly_exposed) - 2
        added = ", ".join(it.newly_exposed[:2]) + (f" +{more} more" if more > 0 else "")
        note = (
            f"<div style='color:{t.MUTED};font-size:{t.FONT_SIZE - 4}px;overflow-wrap:anywhere'>"
            f"+ {t.esc(added)}</div>"
            if it.newly_exposed
            else ""
        )
        out.append(
            f"<tr><td style='padding:2px 8px 2px 0;font-weight:700;vertical-align:top'>{r.number}</td>"
            f"<td style='vertical-align:top;padding-top:3px'><div style='display:flex'>{bar}</div></td>"
            f"<td style='padding:2px 0 2px 12px;font-family:{t.MONO};font-size:{t.FONT_SIZE - 3}px'>"
            f"{figures}{note}</td></tr>"
        )
    out.append("</table>")
    return t.panel("".join(out), width)


def spring_order_run(run: StrategyRun, jvm: int = 0) -> StrategyRun:
    """A search-only run re-billed with each tools array in the order Spring's advisor sends it (a Java
    HashSet's, :func:`~toolsearch_lab.eval.cost.hashset_order`) instead of discovery order. The model sees
    the same tools, so the run and its grade are unchanged; only what a prompt cache can reuse differs.
    ``jvm`` picks one JVM's hash codes: another JVM start gives another order."""
    if run.strategy.name not in ("search-only", "search-only-no-accumulation"):
        raise ValueError(f"spring_order_run needs a search-only run, got {run.strategy.name!r}")
    requests = in_hashset_order(run.requests, jvm)
    completions = [c.completion_tokens for c in run.costs]
    reported = [it.tokens.api_usage for it in run.trace.iterations]
    costs = request_costs(requests, completions, run.price, TokenCounter(run.trace.encoding), reported)
    strategy = copy(run.strategy)
    strategy.name = SPRING_ORDER if run.strategy.name == "search-only" else f"{SPRING_ORDER}, no accumulation"
    return replace(run, strategy=strategy, requests=requests, costs=costs)


def comparison_table(rows: Sequence[dict], mark_best: bool = True) -> HtmlPanel:
    """:func:`table_html` for a notebook cell."""
    return HtmlPanel(table_html(rows, mark_best=mark_best), f"comparison table: {len(rows)} runs")


def prefix_view(*runs: StrategyRun) -> HtmlPanel:
    """:func:`prefix_html` of each run, one under the other, for a notebook cell."""
    return HtmlPanel("".join(prefix_html(r) for r in runs), f"cache prefix of {len(runs)} run(s)")


def pareto_figure(rows: Sequence[dict], priced: str = "") -> go.FigureWidget:
    """:func:`pareto_spec` as a figure."""
    return new_figure(pareto_spec(rows, priced))


def cheapest_successful(rows: Sequence[dict]) -> dict | None:
    """The cheapest row that completed the task (None when none did): the one the table marks as best."""
    ok = [r for r in rows if r["success"]]
    return min(ok, key=lambda r: r["cost_usd"]) if ok else None


# ---- the widget --------------------------------------------------------------------------------------------
class StrategyLab(Displayable):
    """Compare the strategies on a scenario; change scenario, indexes, maxResults, unload and prices."""

    def __init__(
        self,
        scenario: str = "livemcpbench",
        indexes: Sequence[str] = ("lucene",),
        prices: PriceTable | None = None,
        price_model: str | None = None,
        runs: Sequence[StrategyRun] | None = None,
    ) -> None:
        """``runs``: runs already made of ``scenario`` with ``indexes`` (maxResults 5, nothing unloaded),
        e.g. by :func:`~toolsearch_lab.eval.compare.compare` in the cell above, so the lab does not repeat
        them."""
        self.prices = prices or load_prices()
        self._build_controls(scenario, indexes, self.prices.price(price_model))
        self.table, self.prefix = html_sink(), html_sink()
        self.figure: go.FigureWidget | None = None
        self._cache: dict[tuple, list[StrategyRun]] = {}
        if runs is not None:
            self.pinned.value = any(r.strategy.name == "pinned" for r in runs)
            self._cache[self._key()] = self._checked_seed(list(runs))
        self.runs: list[StrategyRun] = []
        self._rerun()
        for w in (self.scenario, self.indexes, self.max_results, self.unload, self.pinned):
            w.observe(lambda _: self._rerun(), names="value")
        self.model.observe(lambda _: self._model_changed(), names="value")
        for w in (self.input_price, self.cached_price, self.output_price):
            w.observe(lambda _: self._reprice(), names="value")
        self.focus.observe(lambda _: self._draw_prefix(), names="value")
        controls = widgets.VBox(
            [
                widgets.HBox([self.scenario, self.max_results, self.unload, self.pinned]),
                widgets.HBox(
                    [
                        self.indexes,
                        widgets.VBox([self.model, self.input_price, self.cached_price, self.output_price]),
                    ]
                ),
            ]
        )
        assert self.figure is not None  # drawn by the first run
        self.widget = widgets.VBox([controls, self.table, figure_box(self.figure), self.focus, self.prefix])

    def _build_controls(self, scenario: str, indexes: Sequence[str], price: Price) -> None:
        style = {"description_width": "initial"}
        names = [n for n in list_scenarios() if not n.endswith("-user")]
        self.scenario = widgets.Dropdown(
            options=names if scenario in names else [scenario, *names],
            value=scenario,
            description="Scenario",
            style=style,
        )
        self.indexes = widgets.SelectMultiple(
            options=INDEX_KINDS, value=tuple(indexes), description="Indexes", rows=4, style=style
        )
        self.max_results = widgets.IntSlider(value=5, min=1, max=10, description="maxResults", style=style)
        self.unload = widgets.Dropdown(
            options=list(UNLOAD_POLICIES), value="keep everything", description="Unload", style=style
        )
        self.model = widgets.Dropdown(
            options=sorted(self.prices.models), value=price.model, description="Priced as", style=style
        )
        self.input_price = widgets.FloatText(value=price.input, description="input $/M", style=style)
        self.cached_price = widgets.FloatText(value=price.cache_read, description="cached $/M", style=style)
        self.output_price = widgets.FloatText(value=price.output, description="output $/M", style=style)
        self.focus = widgets.Dropdown(description="Prefix view", style=style)
        # The pinned row measures usage on the other shipped scenarios first (a few more runs).
        self.pinned = widgets.Checkbox(value=True, description="pinned row (measured usage)", indent=False)

    @property
    def rows(self) -> list[dict]:
        return comparison_rows(self.runs)

    def price(self) -> Price:
        base = self.prices.price(self.model.value)
        return replace(
            base,
            input=self.input_price.value,
            cache_read=self.cached_price.value,
            output=self.output_price.value,
        )

    def _key(self) -> tuple:
        return (
            self.scenario.value,
            tuple(self.indexes.value) or ("lucene",),
            self.max_results.value,
            self.unload.value,
            bool(self.pinned.value),
        )

    def _checked_seed(self, runs: list[StrategyRun]) -> list[StrategyRun]:
        scenario, indexes, max_results, _, _ = self._key()
        wrong = [
            f"{r.strategy.name} · {r.index}"
            for r in runs
            if r.run.scenario.name != scenario
            or (r.index not in indexes and r.strategy.name not in OWN_INDEX)
            or r.trace.config.get("max_results", max_results) not in (max_results, None)
            or r.strategy.name.endswith("+unload")
        ]
        if not runs or wrong:
            raise ValueError(
                f"StrategyLab(runs=...) must be runs of {scenario!r} with indexes {list(indexes)}, "
                f"maxResults {max_results} and nothing unloaded; these are not: "
                f"{', '.join(wrong) or 'none given'}"
            )
        return runs

    def _rerun(self) -> None:
        key = self._key()
        if key not in self._cache:
            self._cache[key] = compare(
                key[0],
                STRATEGY_NAMES if key[4] else COMPARED_BY_DEFAULT,
                indexes=key[1],
                max_results=key[2],
                prices=self.prices,
                price_model=self.model.value,
                idle_turns=UNLOAD_POLICIES[key[3]]["idle_turns"],
                max_loaded=UNLOAD_POLICIES[key[3]]["max_loaded"],
            )
        self.runs = [r.repriced(self.price()) for r in self._cache[key]]
        self._draw()

    def _model_changed(self) -> None:
        price = self.prices.price(self.model.value)
        with self.input_price.hold_trait_notifications():
            self.input_price.value, self.cached_price.value = price.input, price.cache_read
            self.output_price.value = price.output
        self._reprice()

    def _reprice(self) -> None:
        self.runs = [r.repriced(self.price()) for r in self.runs]
        self._draw()

    def _draw(self) -> None:
        rows = self.rows
        self.table.value = table_html(rows)
        price = self.price()
        spec = pareto_spec(rows, f"{price.model} ({price.provider} caching)")
        if self.figure is None:
            self.figure = new_figure(spec)
        else:
            update_figure(self.figure, spec)
        labels = [f"{r.strategy.name} · {r.index}" for r in self.runs]
        keep = self.focus.value if self.focus.value in labels else labels[0]
        self.focus.options, self.focus.value = labels, keep
        self._draw_prefix()

    def _draw_prefix(self) -> None:
        labels = [f"{r.strategy.name} · {r.index}" for r in self.runs]
        if self.focus.value in labels:
            self.prefix.value = prefix_html(self.runs[labels.index(self.focus.value)])
