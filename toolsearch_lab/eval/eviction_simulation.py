"""Simulate many sessions hitting one long-lived ToolSearchAdvisor and record what eviction does.

The question it answers: with a given eviction strategy, how often does a request get its session's index for
free (fingerprint unchanged), and how often must it clear and re-index because the session was evicted or its
catalog changed? Nothing is faked about the decision itself: every simulated request goes through a real
:meth:`ToolSearchAdvisor.initialize_session` with a real strategy from
:mod:`toolsearch_lab.session.eviction` and the real :func:`~toolsearch_lab.session.fingerprint.fingerprint`.
Only the index is a counter (we measure work, not search) and time is a simulated clock, so TTL runs
instantly and a seed reproduces a run exactly.

Pure: ``simulate(config)`` returns a :class:`SimulationResult`; the EvictionSimulator widget only draws it.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, field

from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import SearchResponse, Tool, check_positive_int
from toolsearch_lab.session.eviction import (
    AlwaysEvict,
    CompositeEviction,
    LruEviction,
    NeverEvict,
    TtlEviction,
)
from toolsearch_lab.trace import SessionEvent

STRATEGIES: tuple[str, ...] = ("LRU", "TTL", "Never", "Always", "Composite")

# Event kinds, in the order the timeline legend lists them.
FIRST_INDEX = "first index"
REINDEX_EVICTED = "re-index after eviction"
REINDEX_CHANGED = "re-index: catalog changed"
REUSE = "reuse"
EVICT = "evict"
EVENT_KINDS: tuple[str, ...] = (FIRST_INDEX, REINDEX_EVICTED, REINDEX_CHANGED, REUSE, EVICT)


@dataclass(frozen=True)
class SimulationConfig:
    """One simulation. ``rate`` is requests per simulated second over all sessions together (Poisson
    arrivals); each request comes from a session drawn uniformly; ``catalog_change`` is the probability that a
    returning session's tool catalog changed since its last request (a tool added, a description edited)."""

    strategy: str = "LRU"
    sessions: int = 5
    requests: int = 40
    rate: float = 1.0
    catalog_change: float = 0.1
    lru_max: int = 3
    ttl: float = 5.0
    tools_per_session: int = 12
    seed: int = 0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        for name in ("sessions", "requests", "lru_max", "tools_per_session"):
            check_positive_int(getattr(self, name), name)
        if not self.rate > 0:
            raise ValueError(f"rate must be > 0 requests per second, got {self.rate!r}")
        if not 0.0 <= self.catalog_change <= 1.0:
            raise ValueError(f"catalog_change must be a probability in [0, 1], got {self.catalog_change!r}")
        if not self.ttl > 0:
            raise ValueError(f"ttl must be > 0 seconds, got {self.ttl!r}")


@dataclass(frozen=True)
class SimEvent:
    time: float  # simulated seconds since the start
    request: int  # which request caused it (0-based)
    session: str
    kind: str  # one of EVENT_KINDS
    detail: str = ""


@dataclass
class SimulationResult:
    config: SimulationConfig
    events: list[SimEvent] = field(default_factory=list)
    request_times: list[float] = field(default_factory=list)
    request_sessions: list[str] = field(default_factory=list)
    clear_calls: int = 0  # index.clear_index calls (AlwaysEvict makes two per request, as in Spring)
    index_calls: int = 0  # index.index_tools batches
    tools_indexed: int = 0  # tool definitions (re-)indexed in total: the work eviction costs
    resident: list[int] = field(default_factory=list)  # sessions holding an index after each request

    def counts(self) -> dict[str, int]:
        tally = Counter(e.kind for e in self.events)
        out = {kind: tally.get(kind, 0) for kind in EVENT_KINDS}
        out.update(
            requests=len(self.request_times),
            clear_calls=self.clear_calls,
            index_calls=self.index_calls,
            tools_indexed=self.tools_indexed,
            peak_resident=max(self.resident, default=0),
            final_resident=self.resident[-1] if self.resident else 0,
        )
        return out

    def reuse_rate(self) -> float:
        n = len(self.request_times)
        return sum(e.kind == REUSE for e in self.events) / n if n else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "counts": self.counts()}


class _CountingIndex(BaseToolIndex):
    """An index that only counts: the simulation measures indexing work, not search quality."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.clear_calls = 0
        self.index_calls = 0
        self.tools_indexed = 0

    def _index(self, session_id: str, tools: list[Tool]) -> None:
        self.index_calls += 1
        self.sizes[session_id] = self.sizes.get(session_id, 0) + len(tools)
        self.tools_indexed += len(tools)

    def _clear(self, session_id: str) -> None:
        self.clear_calls += 1
        self.sizes.pop(session_id, None)

    def _search(self, request: KeyedRequest, limit: int) -> SearchResponse:
        return SearchResponse([], 0, None)


class _SimClock:
    """Simulated seconds for TtlEviction: the simulation sets ``now`` before each request."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_strategy(config: SimulationConfig, clock):
    """The strategy object for ``config.strategy``. "Composite" is what Spring Boot builds when
    ``eviction.ttl`` is set: LRU(max) united with TTL(ttl)."""
    if config.strategy == "LRU":
        return LruEviction(config.lru_max)
    if config.strategy == "TTL":
        return TtlEviction(config.ttl, clock=clock)
    if config.strategy == "Never":
        return NeverEvict()
    if config.strategy == "Always":
        return AlwaysEvict()
    return CompositeEviction(LruEviction(config.lru_max), TtlEviction(config.ttl, clock=clock))


def session_catalog(session: int, version: int, size: int) -> list[Tool]:
    """Session ``session``'s tools at catalog ``version``: each version edits one description, which is
    exactly the kind of change the fingerprint (names + descriptions) notices."""
    tools = [Tool(f"s{session}_tool_{k}", f"Tool {k} of session {session}.") for k in range(size)]
    if version:
        k = version % size
        tools[k] = Tool(tools[k].name, f"Tool {k} of session {session}, revision {version}.")
    return tools


def simulate(config: SimulationConfig | None = None, **overrides) -> SimulationResult:
    """Run the simulation. Same config (seed included) → identical result."""
    if config is None:
        config = SimulationConfig(**overrides)
    elif overrides:
        config = SimulationConfig(**{**asdict(config), **overrides})
    rng = random.Random(config.seed)
    clock = _SimClock()
    index = _CountingIndex()
    advisor = ToolSearchAdvisor(index, eviction=make_strategy(config, clock))
    result = SimulationResult(config)
    names = [f"session-{i + 1}" for i in range(config.sessions)]
    version = [0] * config.sessions
    seen: set[str] = set()  # sessions indexed at least once: only their catalogs can change
    catalogs: dict[tuple[int, int], list[Tool]] = {}
    t = 0.0
    for request in range(config.requests):
        t += rng.expovariate(config.rate)
        clock.now = t
        s = rng.randrange(config.sessions)
        # Draw the change for every request, so a strategy never changes the random stream the others see.
        changed = rng.random() < config.catalog_change
        if changed and names[s] in seen:
            version[s] += 1
        key = (s, version[s])
        if key not in catalogs:
            catalogs[key] = session_catalog(s, version[s], config.tools_per_session)
        result.request_times.append(round(t, 6))
        result.request_sessions.append(names[s])
        for ev in advisor.initialize_session(names[s], catalogs[key]):
            result.events.append(_sim_event(ev, t, request))
        seen.add(names[s])
        result.resident.append(len(index.sizes))
    result.clear_calls = index.clear_calls
    result.index_calls = index.index_calls
    result.tools_indexed = index.tools_indexed
    return result


def _sim_event(ev: SessionEvent, t: float, request: int) -> SimEvent:
    if ev.kind == "evicted":
        return SimEvent(t, request, ev.session_id, EVICT, ev.detail)
    if ev.kind == "reused":
        return SimEvent(t, request, ev.session_id, REUSE, ev.detail)
    if ev.reason == "catalog_changed":
        return SimEvent(t, request, ev.session_id, REINDEX_CHANGED, f"{ev.tool_count} tools re-indexed")
    if ev.reason == "after_eviction":
        return SimEvent(t, request, ev.session_id, REINDEX_EVICTED, f"{ev.tool_count} tools re-indexed")
    return SimEvent(t, request, ev.session_id, FIRST_INDEX, f"{ev.tool_count} tools indexed")
