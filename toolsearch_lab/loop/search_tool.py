"""The ``toolSearchTool`` meta-tool the model calls to discover tools (Spring's ToolSearchTool, spec §6).

Tool-call arguments come from a model, so they are untrusted text. :func:`parse_arguments` checks them
against two limits before parsing: :data:`MAX_ARGUMENT_CHARS` and :data:`MAX_ARGUMENT_DEPTH`. A violation
is a problem the loop sends back to the model as an error result; it never raises.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, loads_checked, value_depth
from toolsearch_lab.loop.policy import hidden_tools
from toolsearch_lab.loop.settings import DEFAULT_SETTINGS, AdvisorSettings
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, SearchRequest, Tool, ToolIndex, positive_int_problem
from toolsearch_lab.trace import SearchHit, SearchRecord, recording_retries
from toolsearch_lab.wire import encode_search_result, error_result

__all__ = [
    "FALLBACK_DEFAULT_MAX_RESULTS",
    "MAX_ARGUMENT_CHARS",
    "MAX_ARGUMENT_DEPTH",
    "MAX_RESULTS_RANGE",
    "TOOL_SEARCH_TOOL_NAME",
    "TOOL_SEARCH_TOOL_SESSION_ID_KEY",
    "SearchOutcome",
    "ToolSearchTool",
    "error_result",
    "parse_arguments",
]

# The tool-context key Spring uses to hand the session id to the meta-tool.
TOOL_SEARCH_TOOL_SESSION_ID_KEY = "toolSearchToolSessionId"
# The range Spring's description names (and does not enforce); enforced only with
# ``AdvisorSettings.enforce_max_results_range``.
MAX_RESULTS_RANGE = (1, 10)
# Tool-call arguments longer than this are refused unparsed (real calls are well under 10 KB).
MAX_ARGUMENT_CHARS = 100_000
# Deepest nesting of arrays/objects accepted in tool-call arguments. Python's parser fails near 1,000;
# real tool schemas nest a few levels.
MAX_ARGUMENT_DEPTH = 64
# The index default for a third-party index without a ``default_max_results`` attribute (the built-in
# indexes all have one; 10 is their default too).
FALLBACK_DEFAULT_MAX_RESULTS = 10
# Spring binds maxResults to a Java Integer: a larger number fails its parse ("out of range of int").
JAVA_INT_MAX = 2_147_483_647


def _description(default_max_results: int, can_abstain: bool = False) -> str:
    # Our own wording. Unlike Spring's text it states what the index really searches (names and
    # descriptions; parameters only if the index was built to include them) and the real default. An index
    # that can answer "no tool matches" answers with the empty array (wire.NO_MATCH_RESULT): the model is
    # told what that means only then, so the other indexes keep the description (and its tokens) as is.
    no_match = (
        "An empty array means no tool matches: do without a tool, or search once more in other words if "
        "the capability is essential. "
        if can_abstain
        else ""
    )
    return (
        "Search the registry of available tools to find ones that can perform a capability you need. "
        "Call this when none of the tools you currently have can do the next step of the task. "
        "The search matches your query against tool names and descriptions. "
        "It returns a JSON array of matching tool names, best match first; those tools become callable "
        f"in your next step. {no_match}"
        f"Returns at most {default_max_results} names unless you set maxResults."
    )


@dataclass(frozen=True)
class SearchOutcome:
    """What one call produced: the text the model reads, and the record the trace keeps."""

    result: str
    record: SearchRecord
    is_error: bool


class ToolSearchTool:
    """The meta-tool, with the advisor's ``settings`` (:class:`~toolsearch_lab.loop.settings.AdvisorSettings`,
    checked when they were made; the defaults when none are given). Three of them are its own:

    ``max_results`` is the advisor's default; the model's own ``maxResults`` wins over it, and with neither
    the index's ``default_max_results`` applies (Spring 2.0 precedence). That precedence is resolved here,
    once: every request the index receives carries a concrete ``max_results``, and the description the
    model reads, ``SearchRecord.max_results`` in the trace and the number of results all use that one
    number. An index without a valid ``default_max_results`` gets :data:`FALLBACK_DEFAULT_MAX_RESULTS`.

    Like Spring, the model's ``maxResults`` is not clamped: 0 gives no results (the index is not asked,
    as ``SearchRequest`` wants at least 1), 20 gives up to 20, and a negative number is an error result.
    ``enforce_max_results_range=True`` refuses values outside :data:`MAX_RESULTS_RANGE` instead and puts
    the range into the schema (a deviation from Spring, which only mentions 1-10 in the description).

    ``destructive`` ("include", "exclude" or "ask") is the destructive-tool policy of
    :mod:`toolsearch_lab.loop.policy`; a search under "exclude" or "ask" needs the registered tools
    (``tools=``) to know which are destructive.

    ``index=None`` gives a meta-tool whose definition can be read (to count its tokens) and whose every
    search is an error result."""

    name = TOOL_SEARCH_TOOL_NAME

    def __init__(self, index: ToolIndex | None, settings: AdvisorSettings = DEFAULT_SETTINGS) -> None:
        if not isinstance(settings, AdvisorSettings):
            raise TypeError(
                "ToolSearchTool: settings must be an AdvisorSettings, e.g. AdvisorSettings(max_results=3), "
                f"got {type(settings).__name__}"
            )
        self.index = index
        self.settings = settings

    @property
    def index_default(self) -> int:
        """The index's ``default_max_results`` (read on every use: it is the index's setting), or
        :data:`FALLBACK_DEFAULT_MAX_RESULTS` for an index without a valid one."""
        value: Any = getattr(self.index, "default_max_results", None)
        return FALLBACK_DEFAULT_MAX_RESULTS if positive_int_problem(value) else int(value)

    def resolve_max_results(self, model_max: int | None) -> int:
        """The one place the precedence is decided: the model's value, else the advisor's, else the index's
        default."""
        if model_max is not None:
            return model_max
        configured = self.settings.max_results
        return configured if configured is not None else self.index_default

    def as_tool(self) -> Tool:
        can_abstain = getattr(self.index, "can_abstain", False) is True
        return Tool(self.name, _description(self.resolve_max_results(None), can_abstain), self.parameters())

    def definition(self) -> dict[str, Any]:
        return self.as_tool().definition()

    def parameters(self) -> dict[str, Any]:
        low, high = MAX_RESULTS_RANGE
        max_results: dict[str, Any] = {"type": "integer"}
        if self.settings.enforce_max_results_range:
            max_results.update(minimum=low, maximum=high)
        max_results["description"] = f"Maximum number of tool names to return ({low}-{high})."
        return {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool you need should do, in plain words, with specific keywords "
                    "(for example 'current weather for a city' or 'create github pull request').",
                },
                "maxResults": max_results,
                "categoryFilter": {
                    "type": "string",
                    "description": "Optional category to restrict the search to, when tools have categories.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        }

    def call(
        self,
        arguments: str | dict[str, Any],
        session_id: str,
        call_id: str = "",
        tools: Mapping[str, Tool] | None = None,
    ) -> SearchOutcome:
        """Run one search from raw arguments (parsed here). See :meth:`call_parsed`."""
        args, problem = parse_arguments(arguments)
        return self.call_parsed(args, problem, session_id, call_id, tools)

    def call_parsed(
        self,
        args: dict[str, Any],
        problem: str | None,
        session_id: str,
        call_id: str = "",
        tools: Mapping[str, Tool] | None = None,
    ) -> SearchOutcome:
        """Run one search from arguments already parsed by :func:`parse_arguments`. Every problem with the
        arguments or the index becomes an error result the model can read (and a record with ``error``
        set); nothing raises to the loop."""
        started = time.perf_counter()
        record = SearchRecord(call_id=call_id, query=None, max_results=None)

        def fail(message: str) -> SearchOutcome:
            record.error = message
            record.duration_ms = (time.perf_counter() - started) * 1000
            return SearchOutcome(error_result(message), record, True)

        checked = problem or _check_search_args(args, self.settings.enforce_max_results_range)
        if checked:
            return fail(f"toolSearchTool: {checked}")
        record.query = args["query"]
        record.category_filter = args.get("categoryFilter")
        model_max = args.get("maxResults")
        record.max_results = self.resolve_max_results(None if model_max is None else int(model_max))
        if self.index is None:
            return fail("toolSearchTool: this meta-tool has no index to search")
        destructive = self.settings.destructive
        if tools is None and destructive != "include":
            return fail(f"toolSearchTool: destructive={destructive!r} needs the registered tools (tools=)")
        hidden = hidden_tools((tools or {}).values(), destructive, record.query)
        if record.max_results > 0:
            try:
                # Asking for as many more as are hidden keeps max_results results after the filter.
                wanted = record.max_results + len(hidden)
                request = SearchRequest(session_id, record.query, wanted, record.category_filter)
                with recording_retries() as record.retries:  # an embedder's HTTP retries, for the trace
                    response = self.index.search(request)
            except Exception as exc:  # index errors (bad pattern, timeout) go back to the model
                return fail(f"toolSearchTool: search failed: {exc}")
            shown = [r for r in response.tool_references if r.tool_name not in hidden]
            record.hits = [SearchHit(r.tool_name, r.relevance_score) for r in shown[: record.max_results]]
            if response.confidence is not None:  # an index that can say "no tool matches"
                record.confidence = response.confidence.value
                record.abstained = response.confidence.abstained
                record.confidence_reason = response.confidence.verdict
        record.duration_ms = (time.perf_counter() - started) * 1000
        return SearchOutcome(encode_search_result(record.names), record, False)


def _check_search_args(args: dict[str, Any], enforce_range: bool) -> str | None:
    """What is wrong with toolSearchTool's arguments, or None."""
    unknown = sorted(set(args) - {"query", "maxResults", "categoryFilter"})
    if unknown:
        return f"unknown argument(s) {unknown}; expected query, maxResults, categoryFilter"
    if not isinstance(args.get("query"), str):
        return "'query' is required and must be a string describing the capability you need"
    model_max = args.get("maxResults")
    if model_max is not None:
        low, high = MAX_RESULTS_RANGE if enforce_range else (0, None)
        # JSON has one number type; accept 3.0 as 3 but not 3.5 or "3".
        whole = isinstance(model_max, int) or (isinstance(model_max, float) and model_max.is_integer())
        if isinstance(model_max, bool) or not whole or model_max < low or (high and model_max > high):
            wanted = f"from {low} to {high}" if high else "that is 0 or more"
            return f"'maxResults' must be an integer {wanted}, got {model_max!r:.40}"
        if model_max > JAVA_INT_MAX:  # as Spring's Integer binding answers it
            return (
                f"'maxResults' {model_max!r:.40} is out of range of int (-2147483648 - {JAVA_INT_MAX}); "
                "ask for the number of tools you need"
            )
    category = args.get("categoryFilter")
    if category is not None and not isinstance(category, str):
        return f"'categoryFilter' must be a string, got {category!r:.40}"
    return None


def parse_arguments(arguments: Any) -> tuple[dict[str, Any], str | None]:
    """Parse a model's tool-call arguments. Returns (args, problem); problem is None when they are usable.
    Text longer than :data:`MAX_ARGUMENT_CHARS` or nested deeper than :data:`MAX_ARGUMENT_DEPTH` (an
    already parsed dict too) is a problem, not an exception."""
    if isinstance(arguments, dict):
        try:
            value_depth(arguments, MAX_ARGUMENT_DEPTH)
        except JsonLimitError as exc:
            return {}, f"arguments rejected: {exc}"
        return arguments, None
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}, None
    if not isinstance(arguments, str):
        return {}, f"arguments must be a JSON object, got {type(arguments).__name__}"
    try:
        value = loads_checked(arguments, "the arguments text", MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_CHARS)
    except JsonLimitError as exc:
        return {}, f"arguments rejected: {exc}"
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {arguments[:200]!r}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None
