"""How the advisor runs one tool call of the model: the meta-tool's searches (with the session restored if it
was evicted mid-run), the registered tools the request exposed, and the error results for everything else.
Nothing here raises, except ``strict``'s :class:`~toolsearch_lab.loop.run.ToolNotFoundError`; every
setting is read from the advisor's :class:`~toolsearch_lab.loop.settings.AdvisorSettings`, checked when they
were made.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from toolsearch_lab.jsonlimits import shown
from toolsearch_lab.loop.execution import bounded_content, bounded_error, run_tool
from toolsearch_lab.loop.limits import repeated_search
from toolsearch_lab.loop.run import RunState, ToolNotFoundError
from toolsearch_lab.loop.search_tool import (
    TOOL_SEARCH_TOOL_SESSION_ID_KEY,
    SearchOutcome,
    ToolSearchTool,
    parse_arguments,
)
from toolsearch_lab.loop.sessions import IndexedSessions
from toolsearch_lab.loop.settings import AdvisorSettings
from toolsearch_lab.loop.strategy import Strategy
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import ToolCall
from toolsearch_lab.trace import REFUSALS, CallKind, FailureKind, SearchRecord, ToolCallRecord
from toolsearch_lab.wire import error_result

__all__ = ["Advisor", "execute_call", "search_session"]


class Advisor(Protocol):
    """What a call needs from the advisor that runs it (its public attributes)."""

    settings: AdvisorSettings
    search_tool: ToolSearchTool
    strategy: Strategy
    sessions: IndexedSessions


def execute_call(
    advisor: Advisor, call: ToolCall, exposed: set[str], run: RunState
) -> tuple[ToolCallRecord, str, SearchRecord | None]:
    """Run one tool call; returns (record, tool-message content, search record or None). Never raises
    unless ``strict``. Everything stays local: one advisor serves many sessions on many threads."""
    started = time.perf_counter()
    limit = advisor.settings.max_tool_result_chars

    def done(
        kind: CallKind,
        content: str | None,
        error: str | None = None,
        search: SearchRecord | None = None,
        flags: list[str] | None = None,
        failure: FailureKind | None = None,
    ) -> tuple[ToolCallRecord, str, SearchRecord | None]:
        """The call's record and tool message; ``content=None`` means the error result of ``error`` (a
        ``failure``). Both go through the one size limit (``max_tool_result_chars``) before the model or
        the trace sees them."""
        if content is None:
            content, error = bounded_error(error or "", limit)
        elif kind != "tool":  # run_tool's content is bounded already
            content, cut = bounded_content(content, limit)
            if cut and error is None:
                error = f"result cut to {limit} characters ({cut} cut)"
        ms = (time.perf_counter() - started) * 1000
        record = ToolCallRecord(
            call.id, call.name, call.arguments, kind, content, error, ms, list(flags or []), failure
        )
        return record, content, search

    args, problem = parse_arguments(call.arguments)
    searchable = run.plan.offers_search
    if call.name == TOOL_SEARCH_TOOL_NAME and searchable:
        result, record, failure = _search_call(advisor, call, args, problem, run)
        if failure is None:
            return done("search", result, None, record)
        outcome = done("search", None, record.error, record, failure=failure)
        record.error = outcome[0].error  # the search's record keeps the same (cut) message
        return outcome
    if call.name not in exposed:
        if advisor.settings.strict:
            raise ToolNotFoundError(f"No ToolCallback found for tool name: {call.name}")
        known = "registered but not discovered yet" if call.name in run.registered else "not a known tool"
        then = (
            f"Call {TOOL_SEARCH_TOOL_NAME} first to discover the tools you need, then call one of the "
            "names it returns."
            if searchable
            else "Use one of the tools you were given, or answer."
        )
        message = f"tool {shown(call.name, 130)} is not available ({known}). {then}"
        return done("rejected", None, message, failure=FailureKind.NOT_EXPOSED)
    tool = run.registered[call.name]
    if problem:
        return done("rejected", None, f"{call.name}: {problem}", failure=FailureKind.BAD_ARGUMENTS)
    if tool.function is None:
        message = f"tool {call.name!r} has no implementation in this catalog, so it cannot be run"
        return done("rejected", None, message, failure=FailureKind.NO_IMPLEMENTATION)
    tool_context = {**run.context, TOOL_SEARCH_TOOL_SESSION_ID_KEY: run.session_id}
    ran = run_tool(tool, tool.function, args, tool_context, limit, advisor.settings.tool_timeout)
    kind: CallKind = "rejected" if ran.failure in REFUSALS else "tool"  # refused: it did not run
    return done(kind, ran.content, ran.error, None, ran.flags, ran.failure)


def _search_call(
    advisor: Advisor, call: ToolCall, args: dict[str, Any], problem: str | None, run: RunState
) -> tuple[str, SearchRecord, FailureKind | None]:
    """One toolSearchTool call with its parsed arguments: (the result text, the trace's record, why it is
    an error result or None)."""
    refused = repeated_search(args, call.id, run.search_counts, advisor.settings.max_repeated_searches)
    if refused is not None:
        return error_result(refused.error or ""), refused, FailureKind.REPEATED_SEARCH
    if not problem:
        args = advisor.strategy.search_arguments(args)
    outcome = search_session(advisor, run, args, problem, call.id)
    if outcome.is_error:
        return outcome.result, outcome.record, FailureKind.SEARCH_FAILED
    result = advisor.strategy.search_result(outcome.record.names, outcome.result, run.registered)
    return result, outcome.record, None


def search_session(
    advisor: Advisor, run: RunState, args: dict[str, Any], problem: str | None, call_id: str
) -> SearchOutcome:
    """One search of the run's session, after making sure the session still holds the run's tools: a
    session evicted since the run started is re-indexed first (or, with Spring's behaviour, searched
    empty), with a ``SessionEvent`` in the trace either way. Checked again after the search, in case
    the eviction came while it ran."""
    tools = list(run.registered.values())
    for _ in range(2):
        run.generation, event = advisor.sessions.restore(
            run.session_id, tools, run.generation, advisor.settings.protect_running_sessions
        )
        if event is not None:
            event.iteration = len(run.trace.iterations) or None
            run.trace.session_events.append(event)
        outcome = advisor.search_tool.call_parsed(args, problem, run.session_id, call_id, run.registered)
        if advisor.sessions.generation(run.session_id) == run.generation:
            break
    return outcome
