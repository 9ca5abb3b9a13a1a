"""EvictionSimulator widget: controls re-simulate, the timeline and counts follow the strategy."""

import pytest

from toolsearch_lab.eval.eviction_simulation import EVICT, FIRST_INDEX, REUSE, STRATEGIES
from toolsearch_lab.ui import EvictionSimulator, theme
from toolsearch_lab.ui.eviction_view import PLOT_PX


def evict_trace(app):
    return next(tr for tr in app.timeline_fig.data if tr.name == EVICT)


def test_lru_never_always():
    app = EvictionSimulator(strategy="LRU", sessions=5, lru_max=2, requests=40)
    assert len(evict_trace(app).x) > 0 and evict_trace(app).marker.color == theme.BAD
    assert "LRU, at most 2 sessions" in app.timeline_fig.layout.title.text
    assert not app.lru_max.disabled and app.ttl.disabled

    # a browser sends a Dropdown's selection as its index
    app.strategy_dropdown.set_state({"index": STRATEGIES.index("Never")})
    assert len(evict_trace(app).x) == 0
    assert app.lru_max.disabled and app.ttl.disabled
    assert "evict: <b>0</b>" in app.counts.value

    app.strategy_dropdown.value = "Always"
    assert len(evict_trace(app).x) == 40
    reuse = next(tr for tr in app.timeline_fig.data if tr.name == REUSE)
    assert len(reuse.x) == 0
    assert "80</b> clear_index calls" in app.counts.value


def test_controls_change_the_simulation():
    app = EvictionSimulator(strategy="TTL", sessions=4, requests=60, ttl=2.0)
    assert not app.ttl.disabled and app.lru_max.disabled
    evictions = len(evict_trace(app).x)
    app.ttl.value = 30.0  # nobody idles for 30 s: no evictions
    assert len(evict_trace(app).x) < evictions
    app.sessions.value = 8
    assert len(app.timeline_fig.layout.yaxis.tickvals) == 8
    assert app.result.config.sessions == 8
    before = list(app.timeline_fig.data[0].x)
    app.seed.value = 7
    assert list(app.timeline_fig.data[0].x) != before
    app.rate.value = 4.0
    assert app.result.request_times[-1] < 60 / 2  # faster arrivals, shorter timeline


def _overlaps(app):
    """Pairs of markers (evictions included) closer than a marker in both directions, in pixels."""
    layout = app.timeline_fig.layout
    width_s = layout.xaxis.range[1] - layout.xaxis.range[0]
    rows = abs(layout.yaxis.range[0] - layout.yaxis.range[1])
    row_px = (layout.height - layout.margin.t - layout.margin.b) / rows
    points = [
        (x * PLOT_PX / width_s, y * row_px, tr.marker.size)
        for tr in app.timeline_fig.data
        for x, y in zip(tr.x, tr.y, strict=True)
    ]
    return [
        (a, b)
        for i, a in enumerate(points)
        for b in points[i + 1 :]
        if abs(a[0] - b[0]) < (a[2] + b[2]) / 2 and abs(a[1] - b[1]) < (a[2] + b[2]) / 2
    ]


@pytest.mark.parametrize(
    "settings",
    [
        {"strategy": "LRU", "sessions": 5, "lru_max": 3},
        {"strategy": "LRU", "sessions": 6, "lru_max": 2, "requests": 80},
        {"strategy": "TTL", "sessions": 4, "ttl": 2.0, "requests": 60},
        {"strategy": "Never", "sessions": 6, "requests": 80},
        {"strategy": "Composite", "sessions": 8, "lru_max": 3, "ttl": 4.0, "requests": 100, "rate": 2.0},
    ],
)
def test_markers_never_overlap(settings):
    """No two markers, evictions included, are drawn on top of each other (closer than their size in both x
    and y, in pixels of the plot), and the first-index marker is not another shade of the reuse green."""
    app = EvictionSimulator(**settings)
    close = _overlaps(app)
    assert not close, f"overlapping markers (x px, y px, size): {close[:3]}"
    colours = {tr.name: tr.marker.color for tr in app.timeline_fig.data}
    assert colours[FIRST_INDEX] == theme.INK and colours[REUSE] == theme.GOOD


def test_session_events_say_why_a_session_is_indexed_again():
    from toolsearch_lab import LruEviction, ToolSearchAdvisor, load_scenario, make_index
    from toolsearch_lab.ui.eviction_view import session_events_table

    tools = load_scenario("spring-demo").tools
    advisor = ToolSearchAdvisor(make_index("regex"), eviction=LruEviction(max_sessions=1))
    table = session_events_table(
        advisor,
        [("alice", "a", tools), ("alice", "b", tools[1:]), ("bob", "a", tools), ("alice", "b", tools[1:])],
    )
    what = [row[-1] for row in table.rows]
    assert what[0] == "indexed alice (first index)"
    assert what[1] == "indexed alice (catalog changed)"
    assert what[2] == "evicted alice; indexed bob (first index)"
    assert what[3] == "evicted bob; indexed alice (re-index after eviction)"  # not "first request"


def test_an_advisor_rebuilt_per_request_re_indexes_every_request():
    from toolsearch_lab import load_scenario
    from toolsearch_lab.ui.eviction_view import index_builds, rebuilt_advisor_runs, rebuilt_advisor_table

    runs = rebuilt_advisor_runs(load_scenario("spring-demo").tools, requests=4)
    builds = [index_builds(e for events in per_request for e in events) for per_request in runs.values()]
    assert builds == [1, 4]
    assert rebuilt_advisor_table(runs).rows[1][-1] == 4
