"""Session eviction strategies (Spring's ToolIndexEvictionStrategy family, spec §9).

All strategies are lazy: nothing runs in the background. The advisor calls ``on_access`` once per user
request and clears the index of every session it returns, then calls ``on_removed`` for each.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import timedelta
from typing import Protocol, runtime_checkable


@runtime_checkable
class EvictionStrategy(Protocol):
    def on_access(self, session_id: str) -> set[str]: ...

    def on_removed(self, session_id: str) -> None: ...


class NeverEvict:
    """Never evicts. Sessions accumulate for the life of the process."""

    def on_access(self, session_id: str) -> set[str]:
        return set()

    def on_removed(self, session_id: str) -> None:
        pass

    def __repr__(self) -> str:
        return "NeverEvict()"


class AlwaysEvict:
    """Evicts the current session on every access, so each request re-indexes from scratch.

    Deliberately breaks the "never the current session" rule, as Spring's AlwaysEvictStrategy does: the
    advisor then clears twice per request (evict, then the fingerprint miss) and indexes once.
    """

    def on_access(self, session_id: str) -> set[str]:
        return {session_id}

    def on_removed(self, session_id: str) -> None:
        pass

    def __repr__(self) -> str:
        return "AlwaysEvict()"


class LruEviction:
    """Keeps at most ``max_sessions`` sessions; accessing one more evicts the least recently used."""

    def __init__(self, max_sessions: int = 1000) -> None:
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions <= 0:
            raise ValueError(f"LruEviction: max_sessions must be a positive integer, got {max_sessions!r}")
        self.max_sessions = max_sessions
        self._order: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def on_access(self, session_id: str) -> set[str]:
        with self._lock:
            self._order[session_id] = None
            self._order.move_to_end(session_id)
            if len(self._order) <= self.max_sessions:
                return set()
            oldest, _ = self._order.popitem(last=False)
            return {oldest}

    def on_removed(self, session_id: str) -> None:
        with self._lock:
            self._order.pop(session_id, None)

    def tracked(self) -> list[str]:
        """Tracked sessions, least recently used first."""
        with self._lock:
            return list(self._order)

    def __repr__(self) -> str:
        return f"LruEviction(max_sessions={self.max_sessions})"


def _seconds(ttl) -> float:
    if isinstance(ttl, timedelta):
        return ttl.total_seconds()
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise ValueError(f"TtlEviction: ttl must be seconds (number) or a timedelta, got {ttl!r}")
    return float(ttl)


class TtlEviction:
    """Evicts every *other* session idle for at least ``ttl`` (inclusive) when some session is accessed.

    ``clock`` returns seconds (default ``time.monotonic``); tests inject a fake clock instead of sleeping.
    """

    def __init__(self, ttl, clock: Callable[[], float] = time.monotonic) -> None:
        seconds = _seconds(ttl)
        if not seconds > 0:
            raise ValueError(f"TtlEviction: ttl must be positive, got {ttl!r}")
        self.ttl = seconds
        self._clock = clock
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def on_access(self, session_id: str) -> set[str]:
        with self._lock:
            now = self._clock()
            self._last[session_id] = now
            expired = {s for s, t in self._last.items() if s != session_id and now - t >= self.ttl}
            for s in expired:
                del self._last[s]
            return expired

    def on_removed(self, session_id: str) -> None:
        with self._lock:
            self._last.pop(session_id, None)

    def __repr__(self) -> str:
        return f"TtlEviction(ttl={self.ttl:g}s)"


class CompositeEviction:
    """The union of several strategies; every delegate sees every ``on_access`` and ``on_removed``."""

    def __init__(self, *strategies: EvictionStrategy) -> None:
        if not strategies:
            raise ValueError("CompositeEviction: at least one strategy is required")
        for s in strategies:
            if not isinstance(s, EvictionStrategy):
                raise ValueError(f"CompositeEviction: {s!r} has no on_access/on_removed")
        self.strategies = tuple(strategies)

    def on_access(self, session_id: str) -> set[str]:
        evicted: set[str] = set()
        for s in self.strategies:
            evicted |= s.on_access(session_id)
        return evicted

    def on_removed(self, session_id: str) -> None:
        for s in self.strategies:
            s.on_removed(session_id)

    def __repr__(self) -> str:
        return f"CompositeEviction({', '.join(map(repr, self.strategies))})"
