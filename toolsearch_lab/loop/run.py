"""The state of one request through the advisor loop, and what the loop returns.

A :class:`RunState` lives on the stack of ``ToolSearchAdvisor.run``, never on the advisor: one advisor
serves many sessions on many threads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolsearch_lab.loop.limits import Breach
from toolsearch_lab.loop.strategy import RequestPlan
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
    trace: RunTrace
    messages: list[dict[str, Any]]
    answer: str | None

    @property
    def stop_reason(self) -> StopReason:
        return self.trace.stop_reason


@dataclass(frozen=True)
class TurnReading:
    """How a conversation turn reads the tools found before it (:mod:`toolsearch_lab.loop.conversation`):
    ``scan`` = which messages' search results count ("all" sent, the "turn" since its user message, or the
    "last" message only, Spring with ``conversationHistoryEnabled=false``); ``session_record``: also the
    search groups the advisor recorded for the session's earlier turns."""

    scan: Literal["all", "turn", "last"] = "all"
    session_record: bool = False

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

    def fail(self, iteration: Iteration, message: str) -> None:
        iteration.errors.append(message)
        self.trace.errors.append(message)

    def finish(self, iteration: Iteration, stop_reason: StopReason, answer: str | None = None) -> RunResult:
        self.trace.stop_reason = stop_reason
        iteration.duration_ms = (time.perf_counter() - self.iteration_started) * 1000
        return RunResult(self.trace, self.conversation, answer)


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
