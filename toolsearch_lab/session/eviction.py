"""Session eviction strategies (Spring's ToolIndexEvictionStrategy family, spec §9).

All strategies are lazy: nothing runs in the background. The advisor calls ``on_access`` once per user
request and clears the index of every session it returns, then calls ``on_removed`` for each.

A strategy may also have ``pin(session_id)``/``unpin(session_id)``: the advisor pins a session for the
length of each of its runs, and a pinned session is not evicted by other sessions' requests (so a run that
waits on a slow model does not lose its tools under it). Pins count: two concurrent runs of a session pin
it twice. ``LruEviction`` may then hold more than ``max_sessions`` for a while (one per running session
beyond the limit); the extra ones go at the first access after they are unpinned. ``TtlEviction`` does not
count a running session as idle. A strategy without the two methods is used as before (Spring's
behaviour: any session, running or not, can be evicted).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import timedelta
from typing import Protocol, runtime_checkable

from toolsearch_lab.model import check_positive_int


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


class _Pins:
    """How many runs hold each session (the module docstring says what a pin does)."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}

    def pin(self, session_id: str) -> None:
        self._count[session_id] = self._count.get(session_id, 0) + 1

    def unpin(self, session_id: str) -> bool:
        """Release one pin; True when the session is no longer pinned at all."""
        left = self._count.get(session_id, 0) - 1
        if left > 0:
            self._count[session_id] = left
            return False
        self._count.pop(session_id, None)
        return True

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._count

    def __len__(self) -> int:
        return len(self._count)


class LruEviction:
    """Keeps at most ``max_sessions`` sessions; accessing one more evicts the least recently used session
    that is not pinned (running)."""

    def __init__(self, max_sessions: int = 1000) -> None:
        self.max_sessions = check_positive_int(max_sessions, "LruEviction: max_sessions")
        self._order: OrderedDict[str, None] = OrderedDict()
        self._pins = _Pins()
        self._lock = threading.Lock()

    def on_access(self, session_id: str) -> set[str]:
        with self._lock:
            self._order[session_id] = None
            self._order.move_to_end(session_id)
            evicted: set[str] = set()
            if len(self._order) <= self.max_sessions:
                return evicted
            # Oldest first, skipping running sessions (and this one, the most recent). With no pins this
            # stops at the first: exactly one eviction per access over the limit, as before.
            excess = len(self._order) - self.max_sessions
            for candidate in self._order:
                if len(evicted) == excess:
                    break
                if candidate != session_id and candidate not in self._pins:
                    evicted.add(candidate)
            for candidate in evicted:
                del self._order[candidate]
            return evicted

    def on_removed(self, session_id: str) -> None:
        with self._lock:
            self._order.pop(session_id, None)

    def pin(self, session_id: str) -> None:
        with self._lock:
            self._pins.pin(session_id)

    def unpin(self, session_id: str) -> None:
        with self._lock:
            self._pins.unpin(session_id)

    def pinned(self) -> int:
        """How many sessions are pinned (running) now."""
        with self._lock:
            return len(self._pins)

    def tracked(self) -> list[str]:
        """Tracked sessions, least recently used first."""
        with self._lock:
            return list(self._order)

    def __repr__(self) -> str:
        return f"LruEviction(max_sessions={self.max_sessions})"


def _seconds(ttl: float | timedelta) -> float:
    if isinstance(ttl, timedelta):
        return ttl.total_seconds()
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise ValueError(f"TtlEviction: ttl must be seconds (number) or a timedelta, got {ttl!r}")
    return float(ttl)


class TtlEviction:
    """Evicts every *other* session idle for at least ``ttl`` (inclusive) when some session is accessed.

    ``clock`` returns seconds (default ``time.monotonic``); tests inject a fake clock instead of sleeping.
    """

    def __init__(self, ttl: float | timedelta, clock: Callable[[], float] = time.monotonic) -> None:
        seconds = _seconds(ttl)
        if not seconds > 0:
            raise ValueError(f"TtlEviction: ttl must be positive, got {ttl!r}")
        self.ttl = seconds
        self._clock = clock
        self._last: dict[str, float] = {}
        self._pins = _Pins()
        self._lock = threading.Lock()

    def on_access(self, session_id: str) -> set[str]:
        with self._lock:
            now = self._clock()
            self._last[session_id] = now
            expired = {
                s
                for s, t in self._last.items()
                if s != session_id and s not in self._pins and now - t >= self.ttl
            }
            for s in expired:
                del self._last[s]
            return expired

    def on_removed(self, session_id: str) -> None:
        with self._lock:
            self._last.pop(session_id, None)

    def pin(self, session_id: str) -> None:
        with self._lock:
            self._pins.pin(session_id)

    def unpin(self, session_id: str) -> None:
        with self._lock:
            if self._pins.unpin(session_id) and session_id in self._last:
                self._last[session_id] = self._clock()  # it was in use until now: idle from here

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

    def pin(self, session_id: str) -> None:
        for s in self.strategies:
            pin = getattr(s, "pin", None)
            if pin is not None:
                pin(session_id)

    def unpin(self, session_id: str) -> None:
        for s in self.strategies:
            unpin = getattr(s, "unpin", None)
            if unpin is not None:
                unpin(session_id)

    def __repr__(self) -> str:
        return f"CompositeEviction({', '.join(map(repr, self.strategies))})"
