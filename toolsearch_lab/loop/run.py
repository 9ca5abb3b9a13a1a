"""The state of one request through the advisor loop, and what the loop returns.

A :class:`RunState` lives on the stack of ``ToolSearchAdvisor.run``, never on the advisor: one advisor
serves many sessions on many threads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from toolsearch_lab.loop.chain import Downstream
from toolsearch_lab.loop.limits import Breach
from toolsearch_lab.loop.settings import AccumulationSource
from toolsearch_lab.loop.strategy import RequestPlan, search_groups
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import FailureKind, Iteration, RunTrace, SearchRecord, StopReason, ToolCallRecord

__all__ = ["RunResult", "RunState", "ToolNotFoundError", "TurnReading", "last_message_start", "reject_all"]


class ToolNotFoundError(RuntimeError):
    """Raised only with ``strict=True``: Spring fails the whole request when the model calls a tool that is
    not exposed. ``result``: the request up to that call, its trace ending on the failure (stop reason
    "error", the call recorded as refused)."""

    def __init__(self, message: str, result: RunResult | None = None) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class RunResult:
    """What a request gave: its ``trace``, every message of it (those it was given, with the suffix, then its
    own), the ``answer`` (None when it stopped without one) and what its searches ``found``: the names of its
    own toolSearchTool results, one group per assistant turn that searched (Spring reads them so), oldest
    first. A conversation turn adds ``found`` to the session's record. ``exposed``: the tools each model
    request let the model call (its tools array, and definitions read inline), in order."""

    trace: RunTrace
    messages: list[dict[str, Any]]
    answer: str | None
    found: tuple[tuple[str, ...], ...] = ()
    exposed: tuple[tuple[str, ...], ...] = ()

    @property
    def stop_reason(self) -> StopReason:
        return self.trace.stop_reason


Scan = Literal["all", "turn"]
SCANS: tuple[Scan, ...] = get_args(Scan)


@dataclass(frozen=True)
class TurnReading:
    """How a turn (``ToolSearchAdvisor.run(..., turn=...)``) reads the tools found before it.

    ``scan``: whose toolSearchTool results count at each request of the turn. "all" is Spring's
    (``prepareIteration`` reads ``extractToolNameReferences`` over the instructions the advisor holds): the
    messages it received, then its own turn's; "turn" reads the advisor's whole turn history from the turn's
    last user message on, whatever the instructions hold. ``session_record``: also the search groups the
    advisor recorded for the session's earlier turns (this toolkit's record, not Spring's). ``history``:
    Spring's ``conversationHistoryEnabled``; off, each request after a tool call holds [system, last
    message] only (``ToolCallingAdvisor.doGetNextInstructionsForToolCall``), so "all" finds only what that
    last message holds: a found tool is gone once it has run (spring-ai #7034). Nothing here depends on
    where the messages came from (the caller, a chat memory): the turn reads what it receives."""

    scan: Scan = "all"
    session_record: bool = False
    history: bool = True

    def __post_init__(self) -> None:
        if self.scan not in SCANS or not isinstance(self.scan, str):
            raise ValueError(f"TurnReading.scan must be one of {list(SCANS)}, got {self.scan!r:.40}")
        for name in ("session_record", "history"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"TurnReading.{name} must be True or False, got {value!r:.40}")

    @classmethod
    def of(cls, source: AccumulationSource, history: bool = True) -> TurnReading:
        """The reading an ``accumulation_source`` stands for: "session", the session's record plus the turn's
        own messages; "history", the instructions the advisor holds (Spring's). ``history``: the loop's own
        conversation history (Boot turns it off when a memory advisor sits inside the loop)."""
        if source == "session":
            return cls("turn", session_record=True, history=history)
        return cls("all", history=history)

    def scan_from(self, conversation: Sequence[dict[str, Any]], opened: int) -> int:
        """Where the request's search results are read from, in ``conversation`` (the advisor's whole turn
        history; ``opened``: how many messages the run received): the turn's last user message on ("turn");
        everything ("all" with history); or, without history once the run has called tools, the last
        message (its run of tool results, Spring's one ``ToolResponseMessage``)."""
        if self.scan == "turn":
            users = [i for i, m in enumerate(conversation[:opened]) if m.get("role") == "user"]
            return users[-1] if users else 0
        return 0 if self.history else last_message_start(conversation, opened)


def last_message_start(conversation: Sequence[dict[str, Any]], opened: int) -> int:
    """Where Spring's "last message" begins once a run has called tools: the run of tool results that ends
    ``conversation`` (its one ``ToolResponseMessage``); 0 before the run's first reply (``opened``: how many
    messages the run received), when the request holds what it received."""
    if len(conversation) <= opened:
        return 0
    start = len(conversation)
    while start > opened and conversation[start - 1].get("role") == "tool":
        start -= 1
    return start if start < len(conversation) else len(conversation) - 1


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
    reading: TurnReading | None = None  # a conversation turn: how the tools found before are read
    downstream: Downstream | None = None  # what runs between the advisor and the model (a memory inside)
    opened: int = 0  # len(conversation) when the run started: the messages after it are the run's own
    sent: list[dict[str, Any]] = field(default_factory=list)  # the messages the current request carries
    exposed: list[tuple[str, ...]] = field(default_factory=list)  # what each request let the model call

    def scan_from(self) -> int:
        """Where this request's search results are read from in :attr:`conversation` (everything for a plain
        request; a turn: :meth:`TurnReading.scan_from`)."""
        return 0 if self.reading is None else self.reading.scan_from(self.conversation, self.opened)

    def instructions(self) -> list[dict[str, Any]]:
        """What the advisor sends down the chain for this request: its whole turn history, or, with the
        loop's history off once it has called tools, Spring's [system, last message]."""
        if self.reading is None or self.reading.history or len(self.conversation) <= self.opened:
            return self.conversation
        system = next((m for m in self.conversation if m.get("role") == "system"), None)
        last = last_message_start(self.conversation, self.opened)
        return ([system] if system is not None else []) + self.conversation[last:]

    def fail(self, iteration: Iteration, message: str) -> None:
        iteration.errors.append(message)
        self.trace.errors.append(message)

    def finish(self, iteration: Iteration, stop_reason: StopReason, answer: str | None = None) -> RunResult:
        self.trace.stop_reason = stop_reason
        iteration.duration_ms = (time.perf_counter() - self.iteration_started) * 1000
        found = tuple(tuple(g) for g in search_groups(self.conversation[self.opened :]))
        return RunResult(self.trace, self.conversation, answer, found, tuple(self.exposed))


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
