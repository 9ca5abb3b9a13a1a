"""The Anthropic Messages API as the transcript readers see it: its content block types, its server-side
search tools, its stop reasons, its ``usage`` object, the tools one request declares and the
``tool_reference`` blocks that load them. Read by :mod:`.anthropic` (Messages transcripts) and
:mod:`.claude_code` (Claude Code calls the same API)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolsearch_lab.replay.common import check_count, expect, function_definition
from toolsearch_lab.trace import ANSWERED, SearchVariant, StopReason

__all__ = [
    "KNOWN_BLOCKS",
    "SEARCH_TOOL_NOT_DEFERRED",
    "SEARCH_TOOL_TYPES",
    "SERVER_RESULT_BLOCKS",
    "STOP_REASONS",
    "Declared",
    "anthropic_usage",
    "blocks",
    "references_in",
    "search_references",
]

# The server-side search tools, by the start of their type ("tool_search_tool_regex_20251119"), and how each
# searches.
SEARCH_TOOL_TYPES: dict[str, SearchVariant] = {
    "tool_search_tool_regex": "regex",
    "tool_search_tool_bm25": "bm25",
}
# Where Anthropic says the model sees "the Tool Search Tool itself plus any tools with defer_loading: false".
SEARCH_TOOL_NOT_DEFERRED = "Anthropic, https://www.anthropic.com/engineering/advanced-tool-use"
# Content blocks of a response (and of the assistant turns sent back) this reader knows. Server tools other
# than tool search are read as calls of those tools.
SERVER_RESULT_BLOCKS = (
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_result",
)
KNOWN_BLOCKS = (
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "server_tool_use",
    "tool_search_tool_result",
    "tool_result",
    "mcp_tool_use",
    "container_upload",
    *SERVER_RESULT_BLOCKS,
)
# The last response's stop_reason, as the trace's StopReason: an answer, tool calls still waiting for their
# results, or another end the API names.
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": ANSWERED,
    "stop_sequence": ANSWERED,
    "tool_use": "unfinished",
    "max_tokens": "max_tokens",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "model_context_window_exceeded",
}


def anthropic_usage(usage: Any, where: str, source: str = "anthropic") -> dict[str, Any]:
    """A Messages ``usage`` object checked and summed: ``prompt_tokens`` = input + cache writes + cache
    reads (what the request's prompt was), ``cached_tokens`` = cache reads, ``cache_write_tokens`` = cache
    writes, ``completion_tokens`` = output; ``raw`` = the object as written."""
    usage = expect(usage, Mapping, where, "a usage object")
    fresh = check_count(usage, "input_tokens", where)
    written = check_count(usage, "cache_creation_input_tokens", where, required=False)
    read = check_count(usage, "cache_read_input_tokens", where, required=False)
    output = check_count(usage, "output_tokens", where)
    prompt = fresh + written + read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "cached_tokens": read,
        "cache_write_tokens": written,
        "source": source,
        "raw": dict(usage),
    }


class Declared:
    """The tools one request declares: in order, which are deferred, which search, and their definitions."""

    def __init__(self, body: Mapping[str, Any], where: str) -> None:
        tools = expect(body.get("tools", []), list, f"{where}.tools", "a list of tools")
        self.order: list[str] = []
        self.deferred: set[str] = set()
        self.search: dict[str, SearchVariant] = {}  # server-side search tools
        self.definitions: dict[str, dict[str, Any]] = {}
        self.toolsets = 0  # mcp_toolset entries: their tools are listed by the server, not here
        for i, tool in enumerate(tools):
            at = f"{where}.tools[{i}]"
            tool = expect(tool, Mapping, at, "a tool object")
            kind = tool.get("type")
            if kind == "mcp_toolset":
                self.toolsets += 1
                continue
            name = expect(tool.get("name"), str, f"{at}.name", "the tool's name")
            self.order.append(name)
            if tool.get("defer_loading") is True:
                self.deferred.add(name)
            variant = next((v for t, v in SEARCH_TOOL_TYPES.items() if str(kind).startswith(t)), None)
            if variant is not None:
                self.search[name] = variant
                schema = {"type": "object", "properties": {"query": {"type": "string"}}}
                self.definitions[name] = function_definition(name, "", schema)
            else:
                self.definitions[name] = function_definition(
                    name, tool.get("description", ""), tool.get("input_schema")
                )

    def declares(self, name: str) -> bool:
        return name in self.definitions or self.toolsets > 0


def blocks(message: Any) -> list[Mapping[str, Any]]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def references_in(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [
        b["tool_name"]
        for b in content
        if isinstance(b, Mapping)
        and b.get("type") == "tool_reference"
        and isinstance(b.get("tool_name"), str)
    ]


def search_references(content: Any) -> list[str]:
    if isinstance(content, Mapping) and content.get("type") == "tool_search_tool_search_result":
        refs = content.get("tool_references")
        return references_in(refs)
    return []
