"""The run trace: the contract between the advisor loop (and the transcript readers) and every visual.

Plain dataclasses that round-trip through JSON exactly (``RunTrace.from_json(t.to_json()) == t``). Nothing
secret goes in: the loop records tool names, arguments, results (as the model read them: registered secrets
hidden), token counts, retries and timings, never API keys, URLs with credentials or HTTP headers. A replayed
run holds its log's texts as they are; :func:`shown_trace` is its copy to show. Every fact a view branches on
is a typed field: where the trace came from (``RunTrace.source``, and a replay's settings in
``RunTrace.replay``), why the run stopped (:data:`StopReason`), why a tool call got an error result
(:class:`FailureKind`), what happened to the session (:data:`SessionReason`); the words beside them are for
people.

Iterations are numbered from 1 (``Iteration.number``), as the CLI, the widgets and the docs show them.
A conversation (:class:`~toolsearch_lab.loop.conversation.Conversation`) is one trace too: its iterations
are numbered across the whole conversation and each carries the ``turn`` (user message) it belongs to;
``RunTrace.turns`` says per turn what the user wrote, what chat memory dropped or rewrote before it, which
found tools the turn started with and which it had lost. A single request has no turns (``turns == []``,
``Iteration.turn is None``).
Traces written by earlier versions load in the current shape (:func:`~toolsearch_lab.trace.codec.upgrade`).

The parts: :mod:`.records` (one request: tokens, searches, tool calls, retries), :mod:`.turns` (stop
reasons, session events, graded steps, conversation turns), :mod:`.source` (where a trace came from),
:mod:`.run` (the :class:`RunTrace`), :mod:`.codec` (JSON) and :mod:`.shown` (a copy to show, secrets
hidden).
"""

from __future__ import annotations

from toolsearch_lab.trace.codec import MAX_TRACE_DEPTH, TRACE_VERSION
from toolsearch_lab.trace.records import (
    REFUSALS,
    CallKind,
    FailureKind,
    Iteration,
    IterationTokens,
    RequestTokens,
    RetryRecord,
    SearchHit,
    SearchRecord,
    TokenCount,
    ToolCallRecord,
    note_retry,
    recording_retries,
)
from toolsearch_lab.trace.run import RunTrace, saved_pct
from toolsearch_lab.trace.shown import shown_trace
from toolsearch_lab.trace.source import (
    CHAT_COMPLETIONS_COUNT,
    Provider,
    ReplaySettings,
    SearchTool,
    SearchVariant,
    SubAgent,
    TraceSource,
    TranscriptFormat,
)
from toolsearch_lab.trace.turns import (
    ANSWERED,
    MemoryRecord,
    SessionEvent,
    SessionEventKind,
    SessionReason,
    StepOutcome,
    StopReason,
    TurnRecord,
)

__all__ = [
    "ANSWERED",
    "CHAT_COMPLETIONS_COUNT",
    "MAX_TRACE_DEPTH",
    "REFUSALS",
    "TRACE_VERSION",
    "CallKind",
    "FailureKind",
    "Iteration",
    "IterationTokens",
    "MemoryRecord",
    "Provider",
    "ReplaySettings",
    "RequestTokens",
    "RetryRecord",
    "RunTrace",
    "SearchHit",
    "SearchRecord",
    "SearchTool",
    "SubAgent",
    "SearchVariant",
    "SessionEvent",
    "SessionEventKind",
    "SessionReason",
    "StepOutcome",
    "StopReason",
    "TokenCount",
    "ToolCallRecord",
    "TraceSource",
    "TranscriptFormat",
    "TurnRecord",
    "note_retry",
    "recording_retries",
    "saved_pct",
    "shown_trace",
]
