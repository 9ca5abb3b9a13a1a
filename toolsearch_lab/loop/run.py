"""The state of one request through the advisor loop, and what the loop returns.

A :class:`RunState` lives on the stack of ``ToolSearchAdvisor.run``, never on the advisor: one advisor
serves many sessions on many threads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from toolsearch_lab.loop.limits import Breach
from toolsearch_lab.loop.settings import AccumulationSource
from toolsearch_lab.loop.strategy import RequestPlan, search_groups
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import FailureKind, Iteration, RunTrace, SearchRecord, StopReason, ToolCallRecord

__all__ = ["RunResult", "RunState", "ToolNotFoundError", "TurnReading", "reject_all"]


class ToolNotFoundError(RuntimeError):
    """Raised only with ``strict=True``: Spring fails the whole request when the model calls a tool that is
    not exposed."""


@dataclass
class RunResult:
    """What a request gave: its ``trace``, every message of it (those it was given, with the suffix, then its
    own), the ``answer`` (None when it stopped without one) and what its searches ``found``: the names of its
    own toolSearchTool results, one group per assistant turn that searched (Spring reads them so), oldest
    first. A conversation turn adds ``found`` to the session's record."""

    trace: RunTrace
    messages: list[dict[str, Any]]
    answer: str | None
    found: tuple[tuple[str, ...], ...] = ()

    @property
    def stop_reason(self) -> StopReason:
        return self.trace.stop_reason


Scan = Literal["all", "turn", "last"]
SCANS: tuple[Scan, ...] = get_args(Scan)


@dataclass(frozen=True)
class TurnReading:
    """How a turn (``ToolSearchAdvisor.run(..., turn=...)``) reads the tools found before it. ``scan``: whose
    toolSearchTool results count among the messages the advisor holds at each request of the turn ("all"
    of them; the "turn"'s, from its last user message on; or the "last" message's only, Spring with
    ``conversationHistoryEnabled=false``). ``session_record``: also the search groups the advisor recorded
    for the session's earlier turns. Nothing here depends on where those messages came from (the caller,
    a chat memory): the turn reads what it receives."""

    scan: Scan = "all"
    session_record: bool = False

    def __post_init__(self) -> None:
        if self.scan not in SCANS or not isinstance(self.scan, str):
            raise ValueError(f"TurnReading.scan must be one of {list(SCANS)}, got {self.scan!r:.40}")
        if not isinstance(self.session_record, bool):
            given = f"{self.session_record!r:.40}"
            raise ValueError(f"TurnReading.session_record must be True or False, got {given}")

    @classmethod
    def of(cls, source: AccumulationSource, conversation_history: bool = True) -> TurnReading:
        """The reading an ``accumulation_source`` stands for: "session", the session's record plus the turn's
        own messages; "history", every message received (or, without ``conversation_history``, the last)."""
        if source == "session":
            return cls("turn", session_record=True)
        return cls("all" if conversation_history else "last")

    def scan_from(self, conversation: Sequence[dict[str, Any]]) -> int:
        if self.scan == "last":
            return -1
        if self.scan == "turn":
            users = [i for i, m in enumerate(conversation) if m.get("role") == "user"]
            return users[-1] if users else 0
        return 0


@dataclass
class RunState:
    """The state of one request. It lives on the stack of ``run``, not on the advisor: one advisor serves
    many sessions on many threads."""

    model: ChatModel
    session_id: str
    context: dict[str, Any]
    registered: dict[str, Tool]
    original: list[dict[str, Any]]
    conversation: list[dict[str, Any]]
    trace: RunTrace
    counter: TokenCounter
    all_definitions: list[dict[str, Any]]
    search_definition: dict[str, Any]
    plan: RequestPlan = field(default_factory=lambda: RequestPlan([]))  # the current request's plan
    definitions: list[dict[str, Any]] = field(default_factory=list)
    calls_per_tool: dict[str, int] = field(default_factory=dict)
    total_calls: int = 0
    search_counts: dict[str, int] = field(default_factory=dict)
    exposed_before: list[str] = field(default_factory=list)
    discovered_order: list[str] = field(default_factory=list)
    iteration_started: float = 0.0
    prebound: list[str] = field(default_factory=list)  # a strategy's pre-retrieval results
    pre_search: SearchRecord | None = None
    generation: int = 0  # the session's indexing this run relies on (see IndexedSessions)
    kept: tuple[tuple[str, ...], ...] = ()  # a conversation turn: the session's recorded search groups
    scan_from: int = 0  # a conversation turn: search results are read from conversation[scan_from:]
    opened: int = 0  # len(conversation) when the run started: the messages after it are the run's own

    def fail(self, iteration: Iteration, message: str) -> None:
        iteration.errors.append(message)
        self.trace.errors.append(message)

    def finish(self, iteration: Iteration, stop_reason: StopReason, answer: str | None = None) -> RunResult:
        self.trace.stop_reason = stop_reason
        iteration.duration_ms = (time.perf_counter() - self.iteration_started) * 1000
        found = tuple(tuple(g) for g in search_groups(self.conversation[self.opened :]))
        return RunResult(self.trace, self.conversation, answer, found)


def reject_all(run: RunState, iteration: Iteration, turn: AssistantTurn, breach: Breach) -> None:
    """A turn that would break a call limit: every call of it is rejected, and the run ends (Spring returns
    a "breach" generation without looping back to the model)."""
    message = f"limit reached: {breach[1]}"
    run.trace.errors.append(message)
    iteration.errors.append(message)
    for call in turn.tool_calls:
        iteration.tool_calls.append(
            ToolCallRecord(
                call.id, call.name, call.arguments, "rejected", "", message, failure=FailureKind.LIMIT_REACHED
            )
        )
