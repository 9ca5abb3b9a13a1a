"""The ``toolSearchTool`` meta-tool the model calls to discover tools (Spring's ToolSearchTool, spec §6)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.trace import SearchHit, SearchRecord

TOOL_SEARCH_TOOL_NAME = "toolSearchTool"
# The tool-context key Spring uses to hand the session id to the meta-tool.
TOOL_SEARCH_TOOL_SESSION_ID_KEY = "toolSearchToolSessionId"
MAX_RESULTS_RANGE = (1, 10)


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
    and with neither the index default (10 for the built-in indexes) applies — Spring 2.0 precedence."""

    name = TOOL_SEARCH_TOOL_NAME

    def __init__(self, index, max_results: int | None = None, index_default: int = 10) -> None:
        if max_results is not None and (
            isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1
        ):
            raise ValueError(
                f"ToolSearchTool: max_results must be a positive integer or None, got {max_results!r}"
            )
        self.index = index
        self.max_results = max_results
        self.index_default = index_default

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
        """Run one search. Every problem with the arguments or the index becomes an error result the model
        can read (and a record with ``error`` set); nothing raises to the loop."""
        started = time.perf_counter()
        record = SearchRecord(call_id=call_id, query=None, max_results=None)

        def fail(message: str) -> SearchOutcome:
            record.error = message
            record.duration_ms = (time.perf_counter() - started) * 1000
            return SearchOutcome(error_result(message), record, True)

        args, problem = parse_arguments(arguments)
        if problem:
            return fail(f"toolSearchTool: {problem}")
        unknown = sorted(set(args) - {"query", "maxResults", "categoryFilter"})
        if unknown:
            return fail(
                f"toolSearchTool: unknown argument(s) {unknown}; expected query, maxResults, categoryFilter"
            )
        query = args.get("query")
        if not isinstance(query, str):
            return fail(
                "toolSearchTool: 'query' is required and must be a string describing the capability you need"
            )
        record.query = query
        model_max = args.get("maxResults")
        if model_max is not None:
            low, high = MAX_RESULTS_RANGE
            # JSON has one number type; accept 3.0 as 3 but not 3.5 or "3".
            if isinstance(model_max, float) and model_max.is_integer():
                model_max = int(model_max)
            if isinstance(model_max, bool) or not isinstance(model_max, int) or not low <= model_max <= high:
                return fail(
                    f"toolSearchTool: 'maxResults' must be an integer from {low} to {high}, got {model_max!r}"
                )
        category = args.get("categoryFilter")
        if category is not None and not isinstance(category, str):
            return fail(f"toolSearchTool: 'categoryFilter' must be a string, got {category!r}")
        record.category_filter = category
        effective = model_max if model_max is not None else self.max_results
        record.max_results = effective if effective is not None else self.index_default
        try:
            response = self.index.search(SearchRequest(session_id, query, effective, category))
        except Exception as exc:  # index errors (bad pattern, timeout) go back to the model
            return fail(f"toolSearchTool: search failed: {exc}")
        record.hits = [SearchHit(r.tool_name, r.relevance_score) for r in response.tool_references]
        record.duration_ms = (time.perf_counter() - started) * 1000
        return SearchOutcome(json.dumps(record.names, ensure_ascii=False), record, False)


def parse_arguments(arguments: str | dict) -> tuple[dict, str | None]:
    """Parse a model's tool-call arguments. Returns (args, problem); problem is None when they are usable."""
    if isinstance(arguments, dict):
        return arguments, None
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}, None
    if not isinstance(arguments, str):
        return {}, f"arguments must be a JSON object, got {type(arguments).__name__}"
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {arguments[:200]!r}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None
