"""Which sessions the advisor has indexed, and with which catalog (Spring's
``indexedSessionFingerprints`` plus the eviction strategy).

A session is re-indexed only when the fingerprint of its registered tools changed; evicting a session
clears its index and forgets its fingerprint, so the next request indexes it again. Each session has its
own lock, so two requests of one session never index it at the same time, while other sessions go on.
Session ids reach this module already checked (a plain non-blank ``str``).

The session also holds the advisor's record of the search groups its turns found (``run(..., turn=...)``
adds each turn's; the ``"session"`` accumulation source reads them back,
:mod:`toolsearch_lab.loop.conversation`);
evicting the session forgets the record with the index and the fingerprint.

Runs pin their session (:meth:`IndexedSessions.pin`) so that eviction strategies that know pins do not
evict it under them. Each indexing of a session gets a new ``generation`` number: a run remembers the
generation it started with, and a different one (or none) later means the session was evicted during
the run, which :meth:`IndexedSessions.restore` detects and repairs.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolsearch_lab.model import Tool, ToolIndex
from toolsearch_lab.session.eviction import EvictionStrategy
from toolsearch_lab.session.fingerprint import fingerprint
from toolsearch_lab.trace import SessionEvent, SessionReason

__all__ = ["IndexedSessions"]

# How many evicted sessions keep the reason they were evicted, for the trace of a run that finds its
# session gone (older reasons are dropped: the event then says "evicted" without who did it), and the most
# characters of reason text kept in all. Sessions are remembered by a digest of their id, so a 100 KB id
# costs 32 bytes here: the memory is bounded in bytes, not only in entries.
_REASONS_KEPT = 4096
_REASON_CHARS = 200
_REASONS_CHARS_KEPT = 256_000


def _digest(session_id: str) -> bytes:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).digest()


@dataclass
class _SessionState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    fingerprint: str | None = None
    generation: int = 0
    found: list[tuple[str, ...]] = field(default_factory=list)  # search groups of the conversation's turns


class IndexedSessions:
    def __init__(self, index: ToolIndex, eviction: EvictionStrategy) -> None:
        self.index = index
        self.eviction = eviction
        self._states: dict[str, _SessionState] = {}
        self._lock = threading.Lock()
        self._generations = itertools.count(1)
        # digest of the session id -> (why it was evicted, the same in words), for the event of its next
        # indexing; _why_chars: the characters of words kept in all
        self._evicted_why: OrderedDict[bytes, tuple[SessionReason, str]] = OrderedDict()
        self._why_chars = 0

    def _state(self, session_id: str) -> _SessionState:
        with self._lock:
            return self._states.setdefault(session_id, _SessionState())

    def fingerprint_of(self, session_id: str) -> str | None:
        with self._lock:
            state = self._states.get(session_id)
        return state.fingerprint if state else None

    def generation(self, session_id: str) -> int:
        """The number of the session's current indexing (0: not indexed now)."""
        with self._lock:
            state = self._states.get(session_id)
        return state.generation if state and state.fingerprint is not None else 0

    def found_groups(self, session_id: str) -> list[tuple[str, ...]]:
        """The search groups the session's conversation turns found, oldest first ([] after an eviction)."""
        with self._lock:
            state = self._states.get(session_id)
            return list(state.found) if state else []

    def record_found(self, session_id: str, groups: Sequence[Sequence[str]]) -> None:
        """Add a turn's search groups to the session's record (a session evicted since keeps only these)."""
        state = self._state(session_id)
        with self._lock:
            state.found.extend(tuple(g) for g in groups if g)

    def pin(self, session_id: str) -> None:
        """Tell the eviction strategy a run of ``session_id`` started (if it knows pins)."""
        pin = getattr(self.eviction, "pin", None)
        if pin is not None:
            pin(session_id)

    def unpin(self, session_id: str) -> None:
        unpin = getattr(self.eviction, "unpin", None)
        if unpin is not None:
            unpin(session_id)

    def evict(
        self, session_id: str, reason: SessionReason = "evict_session", why: str = "evict_session"
    ) -> SessionEvent:
        state = self._state(session_id)
        with state.lock:
            self.index.clear_index(session_id)
            had_index = state.fingerprint is not None
            state.fingerprint = None
            state.generation = 0
        with self._lock:
            state.found.clear()
            self._states.pop(session_id, None)
            # Only a session that had an index is re-indexed "after eviction": evicting one that was never
            # indexed (AlwaysEvict on a first request) leaves its next indexing a first one.
            if had_index:
                self._remember(session_id, reason, why)
        self.eviction.on_removed(session_id)
        return SessionEvent("evicted", session_id, detail=why, reason=reason)

    def _remember(self, session_id: str, reason: SessionReason, why: str) -> None:
        """Keep why ``session_id`` was evicted, within the bounds above (the caller holds ``_lock``)."""
        key, why = _digest(session_id), why[:_REASON_CHARS]
        old = self._evicted_why.pop(key, None)
        self._why_chars += len(why) - (len(old[1]) if old else 0)
        self._evicted_why[key] = (reason, why)
        while len(self._evicted_why) > _REASONS_KEPT or self._why_chars > _REASONS_CHARS_KEPT:
            self._why_chars -= len(self._evicted_why.popitem(last=False)[1][1])

    def _forget(self, session_id: str) -> tuple[SessionReason, str] | None:
        old = self._evicted_why.pop(_digest(session_id), None)
        if old is not None:
            self._why_chars -= len(old[1])
        return old

    def initialize(self, session_id: str, tools: list[Tool]) -> list[SessionEvent]:
        """Eviction, then fingerprint compare-and-reindex (atomic per session)."""
        return self.initialize_run(session_id, tools)[0]

    def initialize_run(self, session_id: str, tools: list[Tool]) -> tuple[list[SessionEvent], int]:
        """``initialize``, and the generation it left the session at, read under the session's lock: read
        later, an eviction in between would hand the run generation 0, which looks like "never indexed"
        and lets the run search an empty index without an event."""
        events = []
        for evicted in sorted(self.eviction.on_access(session_id)):
            events.append(self.evict(evicted, "eviction_strategy", f"evicted by {self.eviction!r}"))
        current = fingerprint(tools)
        state = self._state(session_id)
        with state.lock:
            if state.fingerprint != current:
                reason: SessionReason
                if state.fingerprint is not None:
                    reason, why = "catalog_changed", "catalog changed"
                else:
                    reason, why = self._first_index_reason(session_id)
                self._reindex(session_id, state, tools, current)
                events.append(SessionEvent("indexed", session_id, current, len(tools), why, reason=reason))
            else:
                events.append(
                    SessionEvent(
                        "reused",
                        session_id,
                        current,
                        len(tools),
                        "fingerprint unchanged",
                        reason="fingerprint_unchanged",
                    )
                )
            return events, state.generation

    def _first_index_reason(self, session_id: str) -> tuple[SessionReason, str]:
        """A session without an index was never indexed, or was evicted: say which."""
        with self._lock:
            evicted = self._evicted_why.get(_digest(session_id))
        if evicted is None:
            return "first_request", "first request"
        return "after_eviction", f"re-index after eviction ({evicted[1]})"

    def restore(
        self, session_id: str, tools: list[Tool], generation: int, reindex: bool
    ) -> tuple[int, SessionEvent | None]:
        """Check that the session still holds the indexing a run started with (``generation``). If it was
        evicted since, return an event saying so and, with ``reindex``, index ``tools`` again; the result
        is (the generation the run holds from now on, the event or None)."""
        if self.generation(session_id) == generation:
            return generation, None
        with self._lock:
            why = self._evicted_why.get(_digest(session_id), ("after_eviction", "evicted"))[1]
        current = fingerprint(tools)
        state = self._state(session_id)
        with state.lock:
            if state.fingerprint == current:  # another request of this session indexed the same tools
                detail = f"{why} during the run; another request of the session re-indexed the same tools"
                event = SessionEvent(
                    "reindexed", session_id, current, len(tools), detail, reason="reindexed_by_other_request"
                )
                return state.generation, event
            if not reindex:
                detail = f"{why} during the run; not re-indexed (Spring's behaviour): searches find nothing"
                # 0 from now on: the run reports this eviction once, not at every search
                return 0, SessionEvent(
                    "evicted_during_run", session_id, None, 0, detail, reason="after_eviction"
                )
            self._reindex(session_id, state, tools, current)
            detail = f"{why} during the run; re-indexed before the next search"
            event = SessionEvent(
                "reindexed", session_id, current, len(tools), detail, reason="after_eviction"
            )
            return state.generation, event

    def _reindex(self, session_id: str, state: _SessionState, tools: list[Tool], current: str) -> None:
        """Clear and index the session (the caller holds ``state.lock``)."""
        self.index.clear_index(session_id)
        self.index.index_tools(session_id, list(tools))
        state.fingerprint = current
        state.generation = next(self._generations)
        with self._lock:
            self._states[session_id] = state  # an eviction may have dropped it meanwhile
            self._forget(session_id)
