"""The eviction simulation: deterministic, and its counts follow each strategy's semantics (spec §9)."""

import pytest

from toolsearch_lab.eval.eviction_simulation import (
    EVICT,
    FIRST_INDEX,
    REINDEX_CHANGED,
    REINDEX_EVICTED,
    REUSE,
    SimulationConfig,
    simulate,
)

INDEX_KINDS = (FIRST_INDEX, REINDEX_EVICTED, REINDEX_CHANGED)


def per_request_outcomes(result):
    """Each request ends in exactly one index-or-reuse event for the requesting session."""
    out = {}
    for e in result.events:
        if e.kind != EVICT:
            assert e.request not in out, "two outcomes for one request"
            assert e.session == result.request_sessions[e.request]
            out[e.request] = e.kind
    return out


@pytest.mark.parametrize("strategy", ["LRU", "TTL", "Never", "Always", "Composite"])
def test_deterministic_for_a_seed_and_consistent(strategy):
    cfg = SimulationConfig(strategy=strategy, sessions=5, requests=60, lru_max=2, ttl=4.0, catalog_change=0.2)
    a, b = simulate(cfg), simulate(cfg)
    assert a.events == b.events and a.counts() == b.counts() and a.request_times == b.request_times
    c = a.counts()
    outcomes = per_request_outcomes(a)
    assert len(outcomes) == c["requests"] == 60
    assert c["index_calls"] == sum(c[k] for k in INDEX_KINDS)
    assert c[REUSE] + c["index_calls"] == c["requests"]
    assert c["tools_indexed"] == c["index_calls"] * cfg.tools_per_session
    # every index clears first; every eviction clears once more
    assert c["clear_calls"] == c["index_calls"] + c[EVICT]
    assert c[FIRST_INDEX] == len(set(a.request_sessions))


def test_other_seed_other_run():
    assert simulate(seed=1).request_sessions != simulate(seed=2).request_sessions


def test_lru_max_2_over_5_sessions_evicts_and_caps_memory():
    r = simulate(strategy="LRU", sessions=5, lru_max=2, requests=40)
    c = r.counts()
    assert c[EVICT] > 0 and c[REINDEX_EVICTED] > 0
    assert c["peak_resident"] == 2
    for e in r.events:
        if e.kind == EVICT:  # LRU never evicts the session being served
            assert e.session != r.request_sessions[e.request]


def test_never_evicts_nothing_and_reuses_everything_unchanged():
    r = simulate(strategy="Never", sessions=5, requests=40, catalog_change=0.0)
    c = r.counts()
    assert c[EVICT] == 0 and c[REINDEX_EVICTED] == 0 and c[REINDEX_CHANGED] == 0
    assert c[REUSE] == 40 - c[FIRST_INDEX]
    assert c["final_resident"] == c[FIRST_INDEX]


def test_always_evicts_every_request_and_clears_twice():
    r = simulate(strategy="Always", sessions=5, requests=30)
    c = r.counts()
    assert c[EVICT] == 30 and c[REUSE] == 0
    assert c["clear_calls"] == 60  # evict, then the fingerprint miss clears again (Spring parity)
    assert all(e.session == r.request_sessions[e.request] for e in r.events if e.kind == EVICT)


def test_ttl_evicts_only_idle_sessions():
    cfg = SimulationConfig(strategy="TTL", sessions=4, requests=80, ttl=3.0, rate=1.0)
    r = simulate(cfg)
    assert r.counts()[EVICT] > 0
    for e in r.events:
        if e.kind != EVICT:
            continue
        last = max(
            t
            for t, s in zip(r.request_times[: e.request], r.request_sessions, strict=False)
            if s == e.session
        )
        assert e.time - last >= cfg.ttl - 1e-6
        assert e.session != r.request_sessions[e.request]


def test_catalog_change_always_reindexes_returning_sessions():
    r = simulate(strategy="Never", sessions=3, requests=30, catalog_change=1.0)
    c = r.counts()
    assert c[REUSE] == 0 and c[REINDEX_CHANGED] == 30 - c[FIRST_INDEX]


def test_composite_is_at_least_as_eager_as_lru():
    lru = simulate(strategy="LRU", lru_max=3, ttl=2.0, requests=60).counts()
    both = simulate(strategy="Composite", lru_max=3, ttl=2.0, requests=60).counts()
    assert both[EVICT] >= lru[EVICT]


@pytest.mark.parametrize(
    "bad",
    [{"strategy": "FIFO"}, {"sessions": 0}, {"rate": 0}, {"catalog_change": 1.5}, {"ttl": 0}, {"lru_max": 0}],
)
def test_invalid_config(bad):
    with pytest.raises(ValueError):
        SimulationConfig(**bad)
