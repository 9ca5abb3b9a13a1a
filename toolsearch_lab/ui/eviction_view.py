"""EvictionSimulator: many sessions, one advisor, one eviction strategy; watch indexes being built, reused
and evicted over simulated time. The simulation itself is toolsearch_lab.eval.eviction_simulation."""

from __future__ import annotations

import ipywidgets as widgets

from toolsearch_lab.eval.eviction_simulation import (
    EVENT_KINDS,
    EVICT,
    FIRST_INDEX,
    REINDEX_CHANGED,
    REINDEX_EVICTED,
    REUSE,
    STRATEGIES,
    SimulationConfig,
    SimulationResult,
    simulate,
)
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure

# First index in ink, not teal: next to the green "reuse" dots a teal square was hard to tell apart.
STYLE = {
    FIRST_INDEX: {"symbol": "square", "size": 16, "color": t.INK},
    REINDEX_EVICTED: {"symbol": "diamond", "size": 18, "color": t.NEW},
    REINDEX_CHANGED: {"symbol": "diamond", "size": 18, "color": t.SEARCH},
    REUSE: {"symbol": "circle", "size": 11, "color": t.GOOD},
    EVICT: {"symbol": "x-thin-open", "size": 16, "color": t.BAD, "line": {"width": 4}},
}
EVICT_OFFSET = 0.3  # evictions sit just above the session's line so they never hide an index marker
DODGE = 0.2  # events of one session closer than a marker's width alternate below and above its line
PLOT_PX = 840  # plot-area width in pixels (figure width minus margins), to turn a marker's width into seconds


def dodged_rows(
    result: SimulationResult, rows: dict[str, int], span: float, marker_px: float = 18
) -> list[float]:
    """The y of every event (same order as ``result.events``): its session's row, nudged off the line when it
    would overlap the previous marker of that row, so two events a moment apart stay two markers."""
    gap = marker_px * span / PLOT_PX
    last: dict[tuple[str, float], float] = {}  # (session, offset) -> time of the last marker placed there
    ys = []
    for e in result.events:
        if e.kind == EVICT:
            ys.append(rows[e.session] - EVICT_OFFSET)
            continue
        for offset in (0.0, DODGE, -DODGE):
            if e.time - last.get((e.session, offset), float("-inf")) >= gap:
                break
        last[(e.session, offset)] = e.time
        ys.append(rows[e.session] + offset)
    return ys


def strategy_label(config: SimulationConfig) -> str:
    return {
        "LRU": f"LRU, at most {config.lru_max} sessions",
        "TTL": f"TTL {config.ttl:g} s idle",
        "Never": "never evict",
        "Always": "always evict (re-index every request)",
        "Composite": f"LRU({config.lru_max}) + TTL({config.ttl:g} s), Spring Boot's choice with a ttl",
    }[config.strategy]


def timeline_spec(result: SimulationResult) -> dict:
    """One row per session, one marker per event, over simulated time."""
    cfg = result.config
    names = [f"session-{i + 1}" for i in range(cfg.sessions)]
    row = {n: i for i, n in enumerate(names)}
    end = result.request_times[-1] if result.request_times else 1.0
    y_of = dict(zip(map(id, result.events), dodged_rows(result, row, end * 1.05), strict=True))
    data = []
    for kind in EVENT_KINDS:
        events = [e for e in result.events if e.kind == kind]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": kind,
                "x": [e.time for e in events],
                "y": [y_of[id(e)] for e in events],
                "text": [
                    f"t={e.time:.2f} s · {e.session} · {kind}"
                    + (f" · {t.esc(e.detail)}" if e.detail else "")
                    + f" · request {e.request}"
                    for e in events
                ],
                "hovertemplate": "%{text}<extra></extra>",
                "marker": STYLE[kind],
                "cliponaxis": False,
            }
        )
    counts = result.counts()
    title = (
        f"Session indexes over time: {strategy_label(cfg)}<br><span style='font-size:{t.FONT_SIZE - 1}px;"
        f"color:{t.MUTED}'>{counts['requests']} requests from {cfg.sessions} sessions at {cfg.rate:g}/s · "
        f"{counts[REUSE]} reused the index, {counts['index_calls']} (re-)indexed, {counts[EVICT]} evictions"
        "</span>"
    )
    layout = t.base_layout(
        title,
        height=220 + 46 * cfg.sessions,
        xaxis=t.axis("simulated time (seconds)", range=[-0.02 * end, end * 1.03], rangemode="tozero"),
        yaxis=t.axis(
            "",
            tickmode="array",
            tickvals=list(range(cfg.sessions)),
            ticktext=names,
            range=[cfg.sessions - 0.5, -0.7],
            tickfont={"family": t.MONO},
        ),
        margin={"l": 110, "r": 30, "t": 130, "b": 60},
    )
    return {"data": data, "layout": layout}


def counts_html(result: SimulationResult) -> str:
    c = result.counts()
    n = c["requests"] or 1
    cells = []
    for kind in EVENT_KINDS:
        colour = STYLE[kind]["color"]
        cells.append(
            f"<td style='padding:4px 14px 4px 0'><span style='color:{colour};font-size:{t.FONT_SIZE + 4}px'>"
            f"■</span> {kind}: <b>{c[kind]}</b></td>"
        )
    work = (
        f"index work: <b>{c['index_calls']}</b> index batches, <b>{c['tools_indexed']:,}</b> tool "
        f"definitions indexed, <b>{c['clear_calls']}</b> clear_index calls · "
        f"peak <b>{c['peak_resident']}</b> "
        f"sessions held in memory, <b>{c['final_resident']}</b> at the end"
    )
    return t.panel(
        f"<table style='border-collapse:collapse'><tr>{''.join(cells)}</tr></table>"
        f"<div><b style='color:{t.GOOD}'>{100 * c[REUSE] / n:.0f}%</b> of requests reused their index · "
        f"{work}</div>"
    )


class EvictionSimulator(Displayable):
    def __init__(
        self,
        strategy: str = "LRU",
        sessions: int = 5,
        requests: int = 40,
        rate: float = 1.0,
        catalog_change: float = 0.1,
        lru_max: int = 3,
        ttl: float = 5.0,
        seed: int = 0,
    ) -> None:
        self._build_controls(strategy, sessions, requests, rate, catalog_change, lru_max, ttl, seed)
        self.counts = html_sink()
        self.result = simulate(self.config())
        self.timeline_fig = new_figure(timeline_spec(self.result))
        self.counts.value = counts_html(self.result)
        self._enable()
        for control in self._controls():
            control.observe(lambda _: self.update(), names="value")
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.strategy_dropdown, self.lru_max, self.ttl]),
                widgets.HBox([self.sessions, self.requests, self.seed]),
                widgets.HBox([self.rate, self.catalog_change]),
                self.counts,
                figure_box(self.timeline_fig),
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    def _build_controls(
        self,
        strategy: str,
        sessions: int,
        requests: int,
        rate: float,
        catalog_change: float,
        lru_max: int,
        ttl: float,
        seed: int,
    ) -> None:
        style = {"description_width": "initial"}

        def slider(cls, value, lo, hi, step, label, width="300px", fmt=None):
            kw = {"readout_format": fmt} if fmt else {}
            return cls(
                value=value,
                min=lo,
                max=hi,
                step=step,
                description=label,
                continuous_update=False,
                style=style,
                layout=widgets.Layout(width=width),
                **kw,
            )

        self.strategy_dropdown = widgets.Dropdown(
            options=STRATEGIES,
            value=strategy,
            description="Strategy",
            style=style,
            layout=widgets.Layout(width="230px"),
        )
        self.sessions = slider(widgets.IntSlider, sessions, 1, 12, 1, "sessions")
        self.requests = slider(widgets.IntSlider, requests, 5, 150, 5, "requests")
        self.rate = slider(widgets.FloatSlider, rate, 0.1, 5.0, 0.1, "requests / s", fmt=".1f")
        self.catalog_change = slider(
            widgets.FloatSlider, catalog_change, 0.0, 0.5, 0.01, "P(catalog changed)", fmt=".2f"
        )
        self.lru_max = slider(widgets.IntSlider, lru_max, 1, 12, 1, "LRU max sessions")
        self.ttl = slider(widgets.FloatSlider, ttl, 0.5, 30.0, 0.5, "TTL (s)", fmt=".1f")
        self.seed = widgets.BoundedIntText(
            value=seed,
            min=0,
            max=10**6,
            description="seed",
            style=style,
            layout=widgets.Layout(width="160px"),
        )

    def _controls(self) -> tuple[widgets.ValueWidget, ...]:
        return (
            self.strategy_dropdown,
            self.sessions,
            self.requests,
            self.rate,
            self.catalog_change,
            self.lru_max,
            self.ttl,
            self.seed,
        )

    def config(self) -> SimulationConfig:
        return SimulationConfig(
            strategy=self.strategy_dropdown.value,
            sessions=int(self.sessions.value),
            requests=int(self.requests.value),
            rate=float(self.rate.value),
            catalog_change=float(self.catalog_change.value),
            lru_max=int(self.lru_max.value),
            ttl=float(self.ttl.value),
            seed=int(self.seed.value),
        )

    def _enable(self) -> None:
        # Grey out the knobs the chosen strategy ignores, so nobody wonders why moving them does nothing.
        s = self.strategy_dropdown.value
        self.lru_max.disabled = s not in ("LRU", "Composite")
        self.ttl.disabled = s not in ("TTL", "Composite")

    def update(self) -> None:
        """Re-simulate with the current controls and redraw (about a millisecond of simulation)."""
        self._enable()
        self.result = simulate(self.config())
        update_figure(self.timeline_fig, timeline_spec(self.result))
        self.counts.value = counts_html(self.result)
