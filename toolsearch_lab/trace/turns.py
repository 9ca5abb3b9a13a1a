"""What a run says beside its requests: why it stopped (:data:`StopReason`), what happened to the session's
index (:class:`SessionEvent`), how each graded step went, and, for a conversation, each user turn and what
chat memory did before it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from toolsearch_lab.trace.records import check_choice

__all__ = [
    "ANSWERED",
    "MemoryRecord",
    "SessionEvent",
    "SessionEventKind",
    "SessionReason",
    "StepOutcome",
    "StopReason",
    "TurnRecord",
]

StopReason = Literal[
    "running",  # not over yet: the trace of a run still going
    # The loop's ends.
    "answered",  # the model answered without calling a tool (a replayed run: the log ends on an answer)
    "error",  # a model request failed, or its answer could not be used (RunTrace.errors says why)
    "max_calls_per_tool",  # a turn called one tool more often than allowed: its calls were refused
    "max_total_tool_calls",  # a turn took the run past its total of tool calls
    "refused",  # a tool call needed a person's yes and did not get it (declined, or no one to ask)
    # A replayed run's ends other than an answer.
    "unfinished",  # the log ends on tool calls, with no answer after them
    # Anthropic's stop_reason of the last response, as the API names it.
    "max_tokens",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
    # The status of the last OpenAI response ("completed": with no answer text and no calls).
    "completed",
    "incomplete",
    "failed",
    "cancelled",
    "in_progress",
    "queued",
    "unknown",  # the log names no end this version knows (RunTrace.errors quotes what it named)
]
ANSWERED: Final = "answered"  # the one end views and graders treat as success

SessionEventKind = Literal["evicted", "indexed", "reused", "reindexed", "evicted_during_run"]
# Why it happened. Views read this, never the words of ``detail`` (which are for people and may change).
SessionReason = Literal[
    "first_request",  # indexed: the session had no index yet
    "catalog_changed",  # indexed: the registered tools' fingerprint changed
    "after_eviction",  # indexed, reindexed or evicted_during_run: the session had been evicted
    "fingerprint_unchanged",  # reused
    "eviction_strategy",  # evicted: the eviction strategy chose it
    "evict_session",  # evicted: by evict_session() (a logout)
    "reindexed_by_other_request",  # reindexed: another request of the session indexed the same tools
]


@dataclass
class SessionEvent:
    """What happened to the session's index at the start of a user request.

    kind: "evicted" (cleared by the eviction strategy or evict_session), "indexed" (fingerprint new or
    changed: clear + re-index) or "reused" (fingerprint unchanged: no work). During a run, before a
    search: "reindexed" (the session had been evicted since the run started and was indexed again) or
    "evicted_during_run" (evicted, and left so: Spring's behaviour, ``protect_running_sessions=False``).
    ``reason`` says why (:data:`SessionReason`; None only in traces written before it existed);
    ``detail`` says it in words. ``iteration`` is the iteration number of a mid-run event (None for the
    start of the request).
    """

    kind: SessionEventKind
    session_id: str
    fingerprint: str | None = None
    tool_count: int = 0
    detail: str = ""
    iteration: int | None = None
    reason: SessionReason | None = None
    turn: int | None = None  # the conversation turn whose request it happened in (None: no turns)

    def __post_init__(self) -> None:
        check_choice("SessionEvent", "kind", self.kind, SessionEventKind)
        check_choice("SessionEvent", "reason", self.reason, SessionReason, optional=True)


@dataclass
class StepOutcome:
    """How one step of a graded scenario went: the tools it expected (``also_accepted`` would do as well;
    none for a request no tool serves), the tools that ran for it (when it failed, or when no tool serves
    it: what ran between the neighbouring successful steps)."""

    need: str
    expected: list[str]
    success: bool
    called: list[str] = field(default_factory=list)
    also_accepted: list[str] = field(default_factory=list)
    turn: int | None = None  # the conversation turn the step was asked in (None: a single request)


@dataclass
class MemoryRecord:
    """What chat memory did when a turn's user message arrived (with the previous turn's messages): how many
    messages it was given and kept, a one-line description of each message it dropped (``window``) or
    rewrote into its summary (``compact``), the summary it wrote, and the tool names of the toolSearchTool
    results that left the conversation with them (what ``accumulation_source="history"`` can no longer read).
    """

    memory: str  # "full", "window:6", "compact:8"
    given: int
    kept: int
    dropped: list[str] = field(default_factory=list)
    summarised: list[str] = field(default_factory=list)
    summary: str | None = None
    search_results_removed: list[str] = field(default_factory=list)


@dataclass
class TurnRecord:
    """One user message of a conversation and how its turn went. ``carried``: found tools the turn's first
    request exposed from earlier turns; ``lost``: tools found earlier in the conversation or in the turn
    that the same accumulation rule would expose, but a request of the turn lacked (what memory, the
    memory's placement, the loop's own history or an eviction took away); ``first_request_tools``: the
    tools array of the turn's first request."""

    number: int
    user_message: str
    memory: MemoryRecord | None = None
    carried: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    stop_reason: StopReason = "running"
    answer: str | None = None
    first_request_tools: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_choice("TurnRecord", "stop_reason", self.stop_reason, StopReason)
