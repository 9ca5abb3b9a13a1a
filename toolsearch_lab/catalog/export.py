"""Export tools in the shapes provider APIs take, including their native deferred-loading ("tool search")
mechanisms, so a catalog measured here can be sent to a real model unchanged.

Sources for the shapes (checked when this was written; both APIs are recent, so re-check before relying on
an exact detail):

* Anthropic Messages, "Tool search tool" doc (https://platform.claude.com/docs/en/agents-and-tools/tool-use/
  tool-search-tool), section on custom client-side search: every searchable tool is sent with
  ``"defer_loading": true``; your own search tool answers with a normal ``tool_result`` whose content is a
  list of ``{"type": "tool_reference", "tool_name": ...}`` blocks; at least one tool must not be deferred.
* OpenAI Responses, "Tool search" guide (https://developers.openai.com/api/docs/guides/tools-tool-search) and
  the typed params of the ``openai`` Python SDK: ``types/responses/tool_search_tool_param.py``
  (``{"type": "tool_search", "execution": "client", "description", "parameters"}``),
  ``function_tool_param.py`` (``defer_loading``, ``strict``) and
  ``response_tool_search_output_item_param_param.py`` (``{"type": "tool_search_output", "call_id",
  "execution", "status", "tools": [...]}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, find_non_finite
from toolsearch_lab.model import Tool
from toolsearch_lab.schema import MAX_CATALOG_DEPTH, schema_problems

__all__ = [
    "DEFAULT_SEARCH_DESCRIPTION",
    "DEFAULT_SEARCH_PARAMETERS",
    "anthropic_tool_reference_result",
    "openai_tool_search_output",
    "to_anthropic_tools",
    "to_mcp_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
]

DEFAULT_SEARCH_DESCRIPTION = (
    "Search the tool catalog for tools that can do what the current task needs. Call it when none of the "
    "tools you can already use fits. It matches tool names and descriptions and makes the tools it finds "
    "available to call."
)
DEFAULT_SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": (
                "What the needed tool should do, in a few specific words (e.g. 'current weather for a city')."
            ),
        }
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _tools(tools: Iterable[Tool]) -> list[Tool]:
    """The tools to export, each checked: a ``Tool`` built in code is not schema-checked the way a loaded
    catalog is, and an export must never carry NaN/Infinity (invalid JSON) or a malformed schema."""
    out = list(tools)
    seen: set[str] = set()
    for i, t in enumerate(out):
        if not isinstance(t, Tool):
            raise TypeError(f"tools[{i}]: expected a Tool, got {type(t).__name__}: {t!r:.80}")
        if t.name in seen:
            raise ValueError(f"tools[{i}]: duplicate tool name {t.name!r}; providers reject duplicate names")
        problems = schema_problems(t.parameters)
        if t.output_schema is not None:
            problems += schema_problems(t.output_schema, "output_schema")
        if t.annotations:
            try:
                bad = find_non_finite(t.annotations, "annotations", MAX_CATALOG_DEPTH)
            except JsonLimitError as exc:
                bad = f"annotations: {exc}"
            problems += [bad] if bad else []
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ValueError(f"tools[{i}] {t.name!r}: {problems[0]}{more}; it cannot be exported")
        seen.add(t.name)
    return out


def to_openai_tools(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """OpenAI chat-completions ``tools``: ``[{"type": "function", "function": {name, description,
    parameters}}]``. No ``strict`` key: chat completions default it to false, which our schemas need
    (strict mode requires every property to be required and ``additionalProperties: false``)."""
    return [t.definition() for t in _tools(tools)]


def to_mcp_tools(tools: Iterable[Tool]) -> dict[str, Any]:
    """An MCP ``tools/list`` result: ``{"tools": [{"name", "title", "description", "inputSchema",
    "outputSchema", "annotations", "_meta"}]}``, the optional four only when the tool has them (reads back
    with ``tools_from_json``, equal to the tools exported). MCP is the only shape with these fields: the
    OpenAI and Anthropic exports leave them out."""
    return {"tools": [_mcp_tool(t) for t in _tools(tools)]}


def _mcp_tool(t: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": t.name}
    if t.title is not None:
        out["title"] = t.title
    out["description"] = t.description
    out["inputSchema"] = t.parameters
    if t.output_schema is not None:
        out["outputSchema"] = t.output_schema
    if t.annotations is not None:
        out["annotations"] = t.annotations
    if t.meta is not None:
        out["_meta"] = t.meta
    return out


def _anthropic_tool(t: Tool) -> dict[str, Any]:
    return {"name": t.name, "description": t.description, "input_schema": t.parameters}


def to_anthropic_tools(
    tools: Iterable[Tool], search_tool: Tool | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Anthropic Messages ``tools`` for client-side tool search: ``search_tool`` first and not deferred, then
    every other tool with ``"defer_loading": true``.

    ``search_tool`` is your search :class:`Tool` (its results go back through
    :func:`anthropic_tool_reference_result`), or a server tool dict such as
    ``{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}``, passed through as is.
    If it is also in ``tools`` it is listed once. Without one, every tool is deferred; the API then answers
    400 ("At least one tool must have defer_loading=false") unless you add a non-deferred tool yourself."""
    out: list[dict[str, Any]] = []
    search_name = None
    if isinstance(search_tool, Tool):
        out.append(_anthropic_tool(search_tool))
        search_name = search_tool.name
    elif isinstance(search_tool, dict):
        if not isinstance(search_tool.get("name"), str):
            raise TypeError(f"search_tool dict needs a string 'name', got {search_tool!r:.120}")
        out.append(dict(search_tool))
        search_name = search_tool["name"]
    elif search_tool is not None:
        raise TypeError(f"search_tool must be a Tool, a dict or None, got {type(search_tool).__name__}")
    for t in _tools(tools):
        if t.name == search_name:
            continue
        out.append({**_anthropic_tool(t), "defer_loading": True})
    return out


def anthropic_tool_reference_result(tool_use_id: str, names: Iterable[str]) -> dict[str, Any]:
    """The ``tool_result`` content block your search tool returns to Claude: ``{"type": "tool_result",
    "tool_use_id": ..., "content": [{"type": "tool_reference", "tool_name": ...}]}``.
    The API expands each reference into the (deferred) definition sent in ``tools``; every name must be
    there, or the request fails with 400 "Tool reference 'X' not found in available tools".

    Repeated names are sent once (first position kept). With no names the content is a short text block
    instead of an empty list: the doc shows no empty client-side result, and a text block is always valid."""
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise ValueError(f"tool_use_id must be a non-empty string, got {tool_use_id!r:.80}")
    if isinstance(names, str):
        raise TypeError("names must be a list of tool names, not one string")
    unique = list(dict.fromkeys(names))
    for n in unique:
        if not isinstance(n, str) or not n:
            raise ValueError(f"tool names must be non-empty strings, got {n!r:.80}")
    content: list[dict[str, Any]] = [{"type": "tool_reference", "tool_name": n} for n in unique]
    if not content:
        content = [{"type": "text", "text": "No matching tools found."}]
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


def _responses_function(t: Tool, defer_loading: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "function",
        "name": t.name,
        "description": t.description,
        "parameters": t.parameters,
        # Responses function tools default to strict mode, which rejects optional properties and schemas
        # without additionalProperties:false (most real catalogs); say false explicitly.
        "strict": False,
    }
    if defer_loading:
        out["defer_loading"] = True
    return out


def to_openai_responses_tools(tools: Iterable[Tool], search_tool: Tool | None = None) -> list[dict[str, Any]]:
    """OpenAI Responses ``tools`` for client-executed tool search: one ``{"type": "tool_search",
    "execution": "client", "description", "parameters"}`` entry (from ``search_tool``, else
    :data:`DEFAULT_SEARCH_DESCRIPTION` / :data:`DEFAULT_SEARCH_PARAMETERS`), then every tool as a flat
    Responses function tool with ``"defer_loading": true`` and ``"strict": false``.

    The model answers with a ``tool_search_call`` item (``call_id``, ``arguments`` per your parameters); you
    run the search and send back :func:`openai_tool_search_output`. Uncertain detail: the tool_search entry
    has no ``name`` field in the SDK types, so ``search_tool.name`` is not sent."""
    if search_tool is not None and not isinstance(search_tool, Tool):
        raise TypeError(f"search_tool must be a Tool or None, got {type(search_tool).__name__}")
    search_entry = {
        "type": "tool_search",
        "execution": "client",
        "description": search_tool.description if search_tool else DEFAULT_SEARCH_DESCRIPTION,
        "parameters": search_tool.parameters if search_tool else DEFAULT_SEARCH_PARAMETERS,
    }
    skip = search_tool.name if search_tool else None
    return [search_entry] + [_responses_function(t, True) for t in _tools(tools) if t.name != skip]


def openai_tool_search_output(call_id: str, tools: Iterable[Tool]) -> dict[str, Any]:
    """The input item that answers a client-executed ``tool_search_call``: ``{"type": "tool_search_output",
    "call_id": <the call's call_id>, "execution": "client", "status": "completed", "tools": [...]}``.

    ``tools`` are the found tools, as the same function definitions sent in the request (``defer_loading``
    kept), so the loaded definition is byte-identical to the declared one. Uncertain detail: the guide also
    allows loading tools that were never declared; whether ``defer_loading`` must be present on loaded tools
    is not spelled out, and the OpenAI guide warns that changing or removing loaded tools in later turns
    breaks the prompt cache, so keep every earlier ``tool_search_output`` in the input unchanged."""
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"call_id must be the tool_search_call's non-empty call_id, got {call_id!r:.80}")
    return {
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": [_responses_function(t, True) for t in _tools(tools)],
    }
