"""EvictionSimulator: many sessions, one advisor, one eviction strategy; watch indexes being built, reused
and evicted over simulated time. The simulation itself is toolsearch_lab.eval.eviction_simulation.

Also the tables of notebook 06: what ``initialize_session`` did request by request, and the fingerprint
cache defeated when the advisor is rebuilt for every request."""

from __future__ import annotations

from typing import Any

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
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.session.eviction import LruEviction
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure
from toolsearch_lab.ui.display import Table

# First index in ink, not teal: next to the green "reuse" dots a teal square was hard to tell apart.
STYLE: dict[str, dict[str, Any]] = {
    FIRST_INDEX: {"symbol": "square", "size": 16, "color": t.INK},
    REINDEX_EVICTED: {"symbol": "diamond", "size": 18, "color": t.NEW},
    REINDEX_CHANGED: {"symbol": "diamond", "size": 18, "color": t.SEARCH},
    REUSE: {"symbol": "circle", "size": 11, "color": t.GOOD},
    EVICT: {"symbol": "x-thin-open", "size": 16, "color": t.BAD, "line": {"width": 4}},
}
# Each session's row is a shaded band with three lanes a marker's height apart (above the line, on it, below
# it), all inside the band: a marker off the line still sits in its own session's row, never between two.
LANE = 0.27  # in rows: ROW_PX * LANE must be at least the largest marker (18 px), LANE + half of it < 0.5
EVICT_OFFSET = LANE
DODGE = LANE
ROW_PX = 72  # height of one session's row in pixels
MARGIN_TOP, MARGIN_BOTTOM = 130, 60
PLOT_PX = 840  # plot-area width in pixels (figure width minus margins), to turn a marker's width into seconds


# A dense timeline draws smaller markers rather than overlapping ones.
MARKER_SCALES = (1.0, 0.8, 0.65, 0.5, 0.4)


def dodged_rows(
    result: SimulationResult, rows: dict[str, int], span: float, marker_px: float = 18
) -> tuple[list[float], bool]:
    """The y of every event (same order as ``result.events``): its session's row has three lanes, evictions
    prefer the one above the line and index or reuse events the line itself; an event that would overlap the
    previous marker in its lane takes the next free lane, so two events a moment apart stay two markers.
    The flag says whether every event found a free lane."""
    gap = marker_px * span / PLOT_PX
    last: dict[tuple[str, float], float] = {}  # (session, offset) -> time of the last marker placed there
    ys, fits = [], True
    for e in result.events:
        lanes = (-EVICT_OFFSET, DODGE, 0.0) if e.kind == EVICT else (0.0, DODGE, -EVICT_OFFSET)
        free = [o for o in lanes if e.time - last.get((e.session, o), float("-inf")) >= gap]
        # every lane busy (a burst of one session's events within a marker's width): the least recent one
        offset = free[0] if free else min(lanes, key=lambda o: last[(e.session, o)])
        fits = fits and bool(free)
        last[(e.session, offset)] = e.time
        ys.append(rows[e.session] + offset)
    return ys, fits


def placed_markers(result: SimulationResult, rows: dict[str, int], span: float) -> tuple[list[float], float]:
    """The events' y (see :func:`dodged_rows`) at the largest marker scale at which every event has a lane."""
    largest = max(style["size"] for style in STYLE.values())
    for scale in MARKER_SCALES:
        ys, fits = dodged_rows(result, rows, span, largest * scale)
        if fits:
            return ys, scale
    return ys, scale


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
    ys, scale = placed_markers(result, row, end * 1.05)
    y_of = dict(zip(map(id, result.events), ys, strict=True))
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
                "marker": {**STYLE[kind], "size": round(STYLE[kind]["size"] * scale)},
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
        height=MARGIN_TOP + MARGIN_BOTTOM + ROW_PX * cfg.sessions,
        xaxis=t.axis("simulated time (seconds)", range=[-0.02 * end, end * 1.03], rangemode="tozero"),
        yaxis=t.axis(
            "",
            tickmode="array",
            tickvals=list(range(cfg.sessions)),
            ticktext=names,
            range=[cfg.sessions - 0.5, -0.5],
            tickfont={"family": t.MONO},
            showgrid=False,
        ),
        margin={"l": 110, "r": 30, "t": MARGIN_TOP, "b": MARGIN_BOTTOM},
        shapes=row_bands(cfg.sessions),
    )
    return {"data": data, "layout": layout}


def row_bands(sessions: int) -> list[dict]:
    """A band per session row (every other one shaded) and a line through its middle, under the markers."""
    bands = [
        {"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "y0": i - 0.5, "y1": i + 0.5, "layer": "below",
         "line": {"width": 0}, "fillcolor": t.BASELINE_LIGHT if i % 2 else "#F9FAFB"}
        for i in range(sessions)
    ]  # fmt: skip
    lines = [
        {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": i, "y1": i, "layer": "below",
         "line": {"width": 1, "color": t.GRID}}
        for i in range(sessions)
    ]  # fmt: skip
    return bands + lines


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


# ---- notebook 06: session events request by request, and the advisor rebuilt per request ------------------
def _event_label(event, seen: bool = False) -> str:
    """An advisor event in words; a re-index of a session indexed before (``seen``) by another advisor
    says so (this advisor's own events already say when a re-index follows an eviction)."""
    if event.kind == "evicted":
        return f"evicted {event.session_id}"
    if event.kind == "reused":
        return f"reused {event.session_id}'s index"
    if event.reason == "catalog_changed":
        why = "catalog changed"
    elif event.reason == "after_eviction":
        why = REINDEX_EVICTED
    elif seen:
        why = "again: this advisor's fingerprint map is empty"
    else:
        why = FIRST_INDEX
    return f"indexed {event.session_id} ({why})"


def session_events_table(advisor, requests) -> Table:
    """Run ``requests`` ((session, catalog label, tools) triples) through ``advisor.initialize_session`` and
    show what each did."""
    rows = []
    for number, (session, label, tools) in enumerate(requests, start=1):
        events = advisor.initialize_session(session, tools)
        rows.append([number, session, label, "; ".join(_event_label(e) for e in events)])
    return Table(["request", "session", "catalog", "what initialize_session did"], rows)


def index_builds(events) -> int:
    return sum(e.kind == "indexed" for e in events)


def rebuilt_advisor_runs(tools, requests: int = 3, index: str = "lucene") -> dict[str, list]:
    """The events of ``requests`` requests of one session with an unchanged catalog, two ways: one advisor
    kept for the application's lifetime, and a new advisor per request sharing the index and the eviction
    strategy, which is what Spring Boot's auto-configuration does (``builder.copy().build()`` on every
    ``call()``): its fingerprint map starts empty each time."""
    kept = ToolSearchAdvisor(make_index(index))
    shared_index, shared_eviction = make_index(index), LruEviction()
    out: dict[str, list] = {"one advisor, kept": [], "a new advisor per request (Spring Boot)": []}
    for _ in range(requests):
        out["one advisor, kept"].append(kept.initialize_session("alice", tools))
        fresh = ToolSearchAdvisor(shared_index, eviction=shared_eviction)
        out["a new advisor per request (Spring Boot)"].append(fresh.initialize_session("alice", tools))
    return out


def rebuilt_advisor_table(runs: dict[str, list]) -> Table:
    rows = []
    for label, per_request in runs.items():
        cells = ["; ".join(_event_label(e, n > 0) for e in events) for n, events in enumerate(per_request)]
        rows.append([label, *cells, index_builds(e for events in per_request for e in events)])
    count = len(next(iter(runs.values())))
    columns = ["advisor", *(f"request {n + 1}" for n in range(count)), "index builds"]
    return Table(columns, rows, caption="one session, the same catalog in every request")
