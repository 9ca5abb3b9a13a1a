"""The tool model and the search contract shared by every index (Spring: ToolReference, ToolSearchRequest,
ToolSearchResponse, ToolIndex)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


@dataclass(frozen=True)
class Tool:
    """One tool definition as a model sees it: a name, a description and a JSON Schema for its arguments.

    ``function`` is what the advisor executes when the model calls the tool; it is not part of the
    definition, so it is left out of equality and of every export.
    """

    name: str
    description: str
    parameters: dict = field(default_factory=lambda: {"type": "object", "properties": {}})
    category: str | None = None
    function: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        label = repr(self.name) if isinstance(self.name, str) else "<unnamed>"
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.match(self.name):
            raise ValueError(
                f"tool {label}: field 'name' must match {TOOL_NAME_PATTERN.pattern} "
                f"(1-128 letters, digits, '_', '.', ':' or '-'), got {self.name!r:.80}"
            )
        if not isinstance(self.description, str):
            raise ValueError(
                f"tool {label}: field 'description' must be a string, got {type(self.description).__name__}"
            )
        if not isinstance(self.parameters, dict):
            raise ValueError(
                f"tool {label}: field 'parameters' must be a JSON Schema object (dict), "
                f"got {type(self.parameters).__name__}"
            )
        if self.parameters.get("type") != "object":
            raise ValueError(
                f'tool {label}: field \'parameters\' must have "type": "object", '
                f"got {self.parameters.get('type')!r}"
            )
        if self.category is not None and not isinstance(self.category, str):
            raise ValueError(
                f"tool {label}: field 'category' must be a string or None, got {type(self.category).__name__}"
            )

    def definition(self) -> dict:
        """The OpenAI chat-completions ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolReference:
    """A search hit: the tool's name, its raw relevance score and its description (Spring's ``summary``)."""

    tool_name: str
    relevance_score: float | None
    summary: str

    def __post_init__(self) -> None:
        if self.tool_name is None:
            raise ValueError("ToolReference: tool_name is required")
        if self.summary is None:
            raise ValueError(f"ToolReference {self.tool_name!r}: summary is required")

    def to_dict(self) -> dict:
        # Spring serialises with NON_ABSENT: null fields are left out.
        out: dict[str, Any] = {"toolName": self.tool_name}
        if self.relevance_score is not None:
            out["relevanceScore"] = self.relevance_score
        out["summary"] = self.summary
        return out


@dataclass(frozen=True)
class SearchRequest:
    session_id: str | None
    query: str | None
    max_results: int | None = None
    category_filter: str | None = None


@dataclass(frozen=True)
class SearchMetadata:
    search_type: str
    query: str | None
    search_time_ms: float | None = None

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"searchType": self.search_type, "query": self.query}
        if self.search_time_ms is not None:
            out["searchTimeMs"] = self.search_time_ms
        return out


@dataclass(frozen=True)
class SearchResponse:
    tool_references: list[ToolReference] = field(default_factory=list)
    total_matches: int | None = None
    metadata: SearchMetadata | None = None

    @property
    def tool_names(self) -> list[str]:
        return [r.tool_name for r in self.tool_references]

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"toolReferences": [r.to_dict() for r in self.tool_references]}
        if self.total_matches is not None:
            out["totalMatches"] = self.total_matches
        if self.metadata is not None:
            out["searchMetadata"] = self.metadata.to_dict()
        return out


def empty_response() -> SearchResponse:
    """What Spring's indexes answer for a blank or unknown session: no refs, no count, no metadata."""
    return SearchResponse([], None, None)


@runtime_checkable
class ToolIndex(Protocol):
    """Per-session tool index. A search in one session never sees another session's tools."""

    def index_tool(self, session_id: str, tool: Tool) -> None: ...

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None: ...

    def search(self, request: SearchRequest) -> SearchResponse: ...

    def clear_index(self, session_id: str) -> None: ...


class BaseToolIndex:
    """Shared helpers for the built-in indexes. ``index_tools`` delegates to ``index_tool`` in order
    (Spring's default method); indexes that batch more cheaply override it."""

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        for tool in tools:
            self.index_tool(session_id, tool)

    @staticmethod
    def check_tool(tool: Any) -> Tool:
        if not isinstance(tool, Tool):
            raise TypeError(f"expected a Tool, got {type(tool).__name__}: {tool!r:.80}")
        return tool

    def checked_batch(self, session_id: Any, tools: Iterable[Any]) -> list[Tool]:
        """Validate an ``index_tools`` call up front, so a bad entry leaves the session untouched."""
        self.check_session_id(session_id)
        return [self.check_tool(t) for t in tools]

    @staticmethod
    def check_session_id(session_id: Any) -> str:
        if not isinstance(session_id, str) or not session_id.strip():
            raise ValueError(f"session_id must be a non-blank string, got {session_id!r:.80}")
        return session_id

    @staticmethod
    def resolve_max_results(request: SearchRequest, default: int) -> int:
        value = request.max_results
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"max_results must be an integer >= 1 or None, got {value!r:.40}")
        if value < 1:
            raise ValueError(f"max_results must be >= 1, got {value}")
        return value

    @staticmethod
    def category_allows(tool: Tool, category_filter: str | None) -> bool:
        """Spring ignores categoryFilter; we honour it when tools carry a category (documented deviation).
        Tools without a category are kept, so a filter never hides uncategorised catalogs."""
        if not category_filter:
            return True
        if tool.category is None:
            return True
        return tool.category.casefold() == category_filter.casefold()
