"""Spec §15 items 66-73: fingerprint and eviction strategies."""

import hashlib
from datetime import timedelta

import pytest

from toolsearch_lab.model import Tool, ToolReference
from toolsearch_lab.session.eviction import (
    AlwaysEvict,
    CompositeEviction,
    LruEviction,
    NeverEvict,
    TtlEviction,
)
from toolsearch_lab.session.fingerprint import fingerprint


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_item66_fingerprint_reference_hashes():
    assert fingerprint([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert (
        fingerprint([("weatherTool", "Gets the weather")])
        == "d7d017c6b742cc3386e65836b89f547ed97828ae42cb1e74c1bf21ce52982e3a"
    )
    two = "e2e701c026c68ed31d39a9b347b255a90d336452bbbf7e7f172d0784aed83814"
    a = Tool("weatherTool", "Gets the weather")
    b = Tool("calculatorTool", "Does math")
    assert fingerprint([a, b]) == two
    assert fingerprint([b, a]) == two
    assert (
        fingerprint([ToolReference("weatherTool", None, "Gets the weather"), ("calculatorTool", "Does math")])
        == two
    )


def test_item67_schema_only_change_keeps_fingerprint_and_separators_prevent_collisions():
    plain = Tool("weatherTool", "Gets the weather")
    with_schema = Tool(
        "weatherTool", "Gets the weather", {"type": "object", "properties": {"city": {"type": "string"}}}
    )
    assert fingerprint([plain]) == fingerprint([with_schema])
    assert fingerprint([("ab", "c")]).startswith("d03ffe57") and fingerprint([("ab", "c")]).endswith("d568")
    assert fingerprint([("a", "bc")]).startswith("e1ebd632") and fingerprint([("a", "bc")]).endswith("333d")
    assert fingerprint([Tool("weatherTool", "Gets the weather!")]) != fingerprint([plain])


def test_fingerprint_sorts_like_java_utf16_not_code_points():
    # Java compares UTF-16 units: the astral name starts with the surrogate 0xD83D, which sorts before
    # U+FF21, while Python's code-point order puts U+FF21 first. The hash must follow Java.
    astral, high_bmp = "\U0001f600x", "\uff21x"
    assert sorted([astral, high_bmp]) == [high_bmp, astral]
    java_order = astral.encode() + b"\x00a\x01" + high_bmp.encode() + b"\x00h\x01"
    assert fingerprint([(high_bmp, "h"), (astral, "a")]) == hashlib.sha256(java_order).hexdigest()


def test_fingerprint_rejects_non_tools():
    with pytest.raises(TypeError, match="expected Tool"):
        fingerprint([42])


def test_item68_never_evicts():
    never = NeverEvict()
    assert all(never.on_access(f"s{i}") == set() for i in range(100))


def test_item69_always_evicts_current_even_in_composite():
    assert AlwaysEvict().on_access("x") == {"x"}
    assert CompositeEviction(AlwaysEvict(), LruEviction(10)).on_access("x") == {"x"}


def test_item70_lru_evicts_least_recently_used():
    lru = LruEviction(2)
    assert lru.on_access("a") == set() and lru.on_access("b") == set()
    assert lru.on_access("c") == {"a"}
    lru = LruEviction(2)
    lru.on_access("a"), lru.on_access("b"), lru.on_access("a")
    assert lru.on_access("c") == {"b"}


def test_item71_lru_reaccess_on_removed_and_validation():
    lru = LruEviction(1)
    assert lru.on_access("a") == set()
    assert lru.on_access("a") == set()
    lru = LruEviction(2)
    lru.on_access("a"), lru.on_access("b")
    lru.on_removed("a")
    assert lru.on_access("c") == set()  # a was forgotten, so nothing is over capacity
    assert lru.on_access("d") == {"b"}
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_sessions"):
            LruEviction(bad)


def test_item72_ttl_evicts_other_idle_sessions_inclusive_never_current():
    clock = FakeClock()
    ttl = TtlEviction(timedelta(seconds=10), clock=clock)
    assert ttl.on_access("a") == set()
    clock.now += 9.999
    assert ttl.on_access("b") == set()  # a idle 9.999 s < 10 s
    clock.now += 0.001
    assert ttl.on_access("b") == {"a"}  # a idle exactly 10 s: inclusive
    clock.now += 100
    assert ttl.on_access("b") == set()  # the current session is never returned, however idle
    ttl.on_access("c")
    ttl.on_removed("c")
    clock.now += 100
    assert ttl.on_access("b") == set()  # c was forgotten
    for bad in (0, -5, timedelta(0), "10m"):
        with pytest.raises(ValueError, match="ttl"):
            TtlEviction(bad)


def test_item73_composite_union_and_delegation():
    lru, clock = LruEviction(1), FakeClock()
    ttl = TtlEviction(5, clock=clock)
    both = CompositeEviction(lru, ttl)
    both.on_access("a")
    clock.now += 6
    assert both.on_access("b") == {"a"}  # from LRU and from TTL: one id in the union
    both.on_removed("b")
    assert lru.tracked() == []
    with pytest.raises(ValueError, match="at least one"):
        CompositeEviction()
    single_lru = LruEviction(1)
    single = CompositeEviction(single_lru)
    assert single.on_access("x") == set() and single.on_access("y") == {"x"}


def test_a_reindex_after_an_eviction_says_so_not_first_request():
    from toolsearch_lab import LruEviction, Tool, ToolSearchAdvisor
    from toolsearch_lab.index.regex import RegexToolIndex

    tools = [Tool("weather", "Gets the weather"), Tool("clock", "Tells the time")]
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=LruEviction(max_sessions=1))
    first = advisor.initialize_session("alice", tools)
    advisor.initialize_session("bob", tools)
    again = advisor.initialize_session("alice", tools)
    assert [e.detail for e in first if e.kind == "indexed"] == ["first request"]
    (detail,) = [e.detail for e in again if e.kind == "indexed"]
    assert detail.startswith("re-index after eviction (evicted by LruEviction")
    assert [e.reason for e in first] == ["first_request"]
    assert [(e.kind, e.reason) for e in again] == [
        ("evicted", "eviction_strategy"),
        ("indexed", "after_eviction"),
    ]
    assert [e.reason for e in advisor.initialize_session("alice", tools[:1])] == ["catalog_changed"]
    assert [e.reason for e in advisor.initialize_session("alice", tools[:1])] == ["fingerprint_unchanged"]
    assert advisor.evict_session("alice").reason == "evict_session"


def test_evicting_a_session_that_was_never_indexed_leaves_its_first_index_a_first_one():
    """AlwaysEvict evicts the current session on every request, its first included: there was nothing to
    evict yet, so the indexing that follows is the session's first, not a re-index after eviction."""
    from toolsearch_lab import AlwaysEvict, Tool, ToolSearchAdvisor
    from toolsearch_lab.index.regex import RegexToolIndex

    tools = [Tool("weather", "Gets the weather")]
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=AlwaysEvict())
    first = advisor.initialize_session("alice", tools)
    assert [(e.kind, e.reason) for e in first] == [
        ("evicted", "eviction_strategy"),
        ("indexed", "first_request"),
    ]
    second = advisor.initialize_session("alice", tools)
    assert [(e.kind, e.reason) for e in second] == [
        ("evicted", "eviction_strategy"),
        ("indexed", "after_eviction"),
    ]


def test_a_session_event_with_an_unknown_kind_or_reason_is_refused_by_name():
    from toolsearch_lab.trace import SessionEvent

    with pytest.raises(ValueError, match="SessionEvent.kind must be one of"):
        SessionEvent("vanished", "s")
    with pytest.raises(ValueError, match="SessionEvent.reason must be one of .* got 'gremlins'"):
        SessionEvent("evicted", "s", reason="gremlins")
