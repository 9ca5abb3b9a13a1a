"""EvictionSimulator widget: controls re-simulate, the timeline and counts follow the strategy."""

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


def test_markers_a_moment_apart_in_one_session_never_overlap():
    """Two events of one session within a marker's width are drawn on different heights, and the first-index
    marker is not another shade of the reuse green."""
    app = EvictionSimulator(strategy="LRU", sessions=5, lru_max=3)
    end = app.result.request_times[-1]
    gap = 18 * end * 1.05 / PLOT_PX
    points = [
        (x, y) for tr in app.timeline_fig.data if tr.name != EVICT for x, y in zip(tr.x, tr.y, strict=True)
    ]
    close = [
        (a, b)
        for i, a in enumerate(points)
        for b in points[i + 1 :]
        if abs(a[0] - b[0]) < gap and a[1] == b[1]
    ]
    assert not close, f"overlapping markers: {close[:3]}"
    colours = {tr.name: tr.marker.color for tr in app.timeline_fig.data}
    assert colours[FIRST_INDEX] == theme.INK and colours[REUSE] == theme.GOOD
