"""The ``toolSearchTool`` meta-tool the model calls to discover tools (Spring's ToolSearchTool, spec §6).

Tool-call arguments come from a model, so they are untrusted text. :func:`parse_arguments` checks them
against two limits before parsing: :data:`MAX_ARGUMENT_CHARS` and :data:`MAX_ARGUMENT_DEPTH`. A violation
is a problem the loop sends back to the model as an error result; it never raises.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, loads_checked, value_depth
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, SearchRequest, Tool
from toolsearch_lab.trace import SearchHit, SearchRecord

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
MAX_RESULTS_RANGE = (1, 10)
# Tool-call arguments longer than this are refused unparsed (real calls are well under 10 KB).
MAX_ARGUMENT_CHARS = 100_000
# Deepest nesting of arrays/objects accepted in tool-call arguments. Python's parser fails near 1,000;
# real tool schemas nest a few levels.
MAX_ARGUMENT_DEPTH = 64
# The index default for a third-party index without a ``default_max_results`` attribute (the built-in
# indexes all have one; 10 is their default too).
FALLBACK_DEFAULT_MAX_RESULTS = 10


def _description(default_max_results: int) -> str:
    # Our own wording. Unlike Spring's text it states what the index really searches (names and
    # descriptions; parameters only if the index was built to include them) and the real default.
    return (
        "Search the registry of available tools to find ones that can perform a capability you need. "
        "Call this when none of the tools you currently have can do the next step of the task. "
        "The search matches your query against tool names and descriptions. "
        "It returns a JSON array of matching tool names, best match first; those tools become callable "
        "in your next step. "
        f"Returns at most {default_max_results} names unless you set maxResults."
    )


@dataclass(frozen=True)
class SearchOutcome:
    """What one call produced: the text the model reads, and the record the trace keeps."""

    result: str
    record: SearchRecord
    is_error: bool


def error_result(message: str) -> str:
    """A model-readable error. It is a JSON object, never an array, so the loop does not mistake it for
    search results."""
    return json.dumps({"error": message}, ensure_ascii=False)


class ToolSearchTool:
    """The meta-tool. ``max_results`` is the advisor's default; the model's own ``maxResults`` wins over it,
    and with neither the index's ``default_max_results`` applies (Spring 2.0 precedence: the request then
    carries ``max_results=None``). The description the model reads, ``SearchRecord.max_results`` in the
    trace and the number of results all use that one number. An index without ``default_max_results``
    gets :data:`FALLBACK_DEFAULT_MAX_RESULTS` in the request itself, so the promise still holds."""

    name = TOOL_SEARCH_TOOL_NAME

    def __init__(self, index: Any, max_results: int | None = None) -> None:
        if max_results is not None and (
            isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1
        ):
            raise ValueError(
                f"ToolSearchTool: max_results must be a positive integer or None, got {max_results!r}"
            )
        self.index = index
        self.max_results = max_results

    @property
    def index_default(self) -> int:
        """The index's ``default_max_results`` (read on every use: it is the index's setting), or
        :data:`FALLBACK_DEFAULT_MAX_RESULTS` for an index without a valid one."""
        value = getattr(self.index, "default_max_results", None)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return FALLBACK_DEFAULT_MAX_RESULTS
        return value

    def _index_has_default(self) -> bool:
        return self.index_default == getattr(self.index, "default_max_results", None)

    def as_tool(self) -> Tool:
        return Tool(self.name, _description(self.max_results or self.index_default), self.parameters())

    def definition(self) -> dict:
        return self.as_tool().definition()

    @staticmethod
    def parameters() -> dict:
        low, high = MAX_RESULTS_RANGE
        return {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What the tool you need should do, in plain words, with specific keywords "
                    "(for example 'current weather for a city' or 'create github pull request').",
                },
                "maxResults": {
                    "type": "integer",
                    "minimum": low,
                    "maximum": high,
                    "description": f"Maximum number of tool names to return ({low}-{high}).",
                },
                "categoryFilter": {
                    "type": "string",
                    "description": "Optional category to restrict the search to, when tools have categories.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        }

    def call(self, arguments: str | dict, session_id: str, call_id: str = "") -> SearchOutcome:
        """Run one search from raw arguments (parsed here). See :meth:`call_parsed`."""
        args, problem = parse_arguments(arguments)
        return self.call_parsed(args, problem, session_id, call_id)

    def call_parsed(
        self, args: dict, problem: str | None, session_id: str, call_id: str = ""
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

        checked = problem or _check_search_args(args)
        if checked:
            return fail(f"toolSearchTool: {checked}")
        record.query = args["query"]
        record.category_filter = args.get("categoryFilter")
        model_max = args.get("maxResults")
        effective = int(model_max) if model_max is not None else self.max_results
        record.max_results = effective if effective is not None else self.index_default
        if effective is None and not self._index_has_default():
            effective = record.max_results  # the index has no default we know: ask for the one we promised
        try:
            request = SearchRequest(session_id, record.query, effective, record.category_filter)
            response = self.index.search(request)
        except Exception as exc:  # index errors (bad pattern, timeout) go back to the model
            return fail(f"toolSearchTool: search failed: {exc}")
        record.hits = [SearchHit(r.tool_name, r.relevance_score) for r in response.tool_references]
        record.duration_ms = (time.perf_counter() - started) * 1000
        return SearchOutcome(json.dumps(record.names, ensure_ascii=False), record, False)


def _check_search_args(args: dict) -> str | None:
    """What is wrong with toolSearchTool's arguments, or None."""
    unknown = sorted(set(args) - {"query", "maxResults", "categoryFilter"})
    if unknown:
        return f"unknown argument(s) {unknown}; expected query, maxResults, categoryFilter"
    if not isinstance(args.get("query"), str):
        return "'query' is required and must be a string describing the capability you need"
    model_max = args.get("maxResults")
    if model_max is not None:
        low, high = MAX_RESULTS_RANGE
        # JSON has one number type; accept 3.0 as 3 but not 3.5 or "3".
        whole = isinstance(model_max, int) or (isinstance(model_max, float) and model_max.is_integer())
        if isinstance(model_max, bool) or not whole or not low <= model_max <= high:
            return f"'maxResults' must be an integer from {low} to {high}, got {model_max!r:.40}"
    category = args.get("categoryFilter")
    if category is not None and not isinstance(category, str):
        return f"'categoryFilter' must be a string, got {category!r:.40}"
    return None


def parse_arguments(arguments: Any) -> tuple[dict, str | None]:
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
