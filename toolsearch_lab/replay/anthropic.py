"""Anthropic Messages transcripts: ``POST /v1/messages`` exchanges with tool search, read request by request.

What a request had in the model's context: its non-deferred tools (the server search tools
``tool_search_tool_regex``/``tool_search_tool_bm25`` among them) and every tool a ``tool_reference`` in its
history loaded, since the API expands references "throughout the entire conversation history" (Anthropic,
tool search tool docs). References come from a server search's ``tool_search_tool_result`` (or its 2025 form,
a ``tool_result`` answering a ``server_tool_use``) and from your own search tool's ``tool_result`` (the
documented client-side path): a tool whose results hold ``tool_reference`` blocks anywhere in the transcript
is a search tool, and every call of it is a search.

Refused by name (the API would never have produced or accepted them): an unknown content block, a search
result answering no search, a reference to a tool the request does not declare, a tool result answering no
call, a response without usage. Usage is kept as the API wrote it (``raw``) beside the sums this project
compares with its own count: prompt = input + cache writes + cache reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolsearch_lab.replay.anthropic_api import (
    KNOWN_BLOCKS,
    SEARCH_TOOL_NOT_DEFERRED,
    SERVER_RESULT_BLOCKS,
    STOP_REASONS,
    Declared,
    anthropic_usage,
    blocks,
    references_in,
    search_references,
)
from toolsearch_lab.replay.common import (
    ChatRequest,
    Recording,
    Request,
    TranscriptError,
    arguments_text,
    clip,
    content_text,
    deferred_search_tool,
    expect,
    first_declared,
    function_definition,
    ordered,
    orphan,
    result_text,
    search_record,
    text_or_none,
    undeclared,
    unknown,
)
from toolsearch_lab.replay.exchanges import Exchange, exchanges
from toolsearch_lab.trace import ANSWERED, FailureKind, ReplaySettings, SearchTool, ToolCallRecord

__all__ = ["read_messages"]


def read_messages(records: list[Any], where: str) -> Recording:
    """Every successful exchange of an Anthropic Messages transcript as a :class:`Request`."""
    notes: list[str] = []
    calls = exchanges(records, where, notes)
    bodies = [
        (
            e,
            expect(
                e.request.get("messages"), list, f"{where}: {e.where}, request.messages", "a list of messages"
            ),
        )
        for e in calls
    ]
    client_search = _client_search_tools([m for _, messages in bodies for m in messages], calls)
    requests = []
    for position, (exchange, messages) in enumerate(bodies):
        at = f"{where}: {exchange.where}"
        following = bodies[position + 1][1] if position + 1 < len(bodies) else []
        requests.append(_request(exchange, messages, following, client_search, at, notes))
        if position + 1 < len(bodies):
            _check_echo(exchange, messages, following, at, notes)
    first, last = calls[0], calls[-1]
    declared = [Declared(e.request, where) for e in calls]
    notes += _deferred_search_tools(declared, client_search)
    server = {name: variant for d in declared for name, variant in d.search.items()}
    search_tools = [SearchTool(n, v) for n, v in server.items()]
    search_tools += [SearchTool(n, "client") for n in sorted(client_search) if n not in server]
    stop = STOP_REASONS.get(str(last.response.get("stop_reason")), "unknown")
    if stop == "unknown":
        notes.append(
            f"the last response's stop_reason {str(last.response.get('stop_reason'))[:60]!r} is not known"
        )
    return Recording(
        requests=requests,
        model=str(first.request.get("model") or last.response.get("model") or "unknown"),
        user_request=_first_user_text(bodies[0][1]),
        session_id="",
        index=f"anthropic:{'+'.join(s.name for s in search_tools) or 'no search tool'}",
        catalog_size=len({n for d in declared for n in d.order}),
        final_answer=requests[-1].text if stop == ANSWERED else None,
        stop_reason=stop,
        notes=notes,
        definitions=first_declared(d.definitions for d in declared),
        settings=ReplaySettings(
            format="anthropic-messages",
            search_tools=search_tools,
            deferred_tools=ordered([n for d in declared for n in d.order if n in d.deferred]),
            served_model=text_or_none(last.response.get("model")),
            endpoint=first.host,
            exchanges=len(records),
        ),
    )


def _deferred_search_tools(declared: list[Declared], client_search: set[str]) -> list[str]:
    """A note for each search tool a request sends deferred (the first request that does)."""
    notes: list[str] = []
    seen: set[str] = set()
    for number, tools in enumerate(declared, start=1):
        for name in sorted((set(tools.search) | client_search) & tools.deferred - seen):
            seen.add(name)
            notes.append(deferred_search_tool(number, name, SEARCH_TOOL_NOT_DEFERRED))
    return notes


def _client_search_tools(messages: list[Any], calls: list[Exchange]) -> set[str]:
    """Names of your own search tools: tools whose ``tool_result`` holds ``tool_reference`` blocks."""
    names_by_id = {}
    for message in messages:
        for block in blocks(message):
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                names_by_id[block["id"]] = block.get("name")
    found = set()
    for message in messages:
        for block in blocks(message):
            if block.get("type") == "tool_result" and references_in(block.get("content")):
                name = names_by_id.get(block.get("tool_use_id"))
                if isinstance(name, str):
                    found.add(name)
    return found


def _request(
    exchange: Exchange,
    messages: list[Any],
    following: list[Any],
    client_search: set[str],
    at: str,
    notes: list[str],
) -> Request:
    declared = Declared(exchange.request, f"{at}, request")
    history = _History(declared, client_search, f"{at}, request")
    chat = history.read(exchange.request.get("system"), messages)
    in_context = ordered([n for n in declared.order if n not in declared.deferred] + history.loaded)
    response = exchange.response
    content = expect(response.get("content"), list, f"{at}, response.content", "a list of content blocks")
    if "usage" not in response:
        raise TranscriptError(f"{at}, response: no 'usage' object; every Messages response has one")
    request = Request(
        in_context=in_context,
        deferred=[n for n in declared.order if n in declared.deferred and n not in in_context],
        usage=anthropic_usage(response["usage"], f"{at}, response.usage"),
        stop=response.get("stop_reason"),
        # Loaded tools are counted where the API expands them, inline in the history; the tools array
        # holds the non-deferred ones (deferred definitions are "not included in the system prompt").
        chat=ChatRequest(
            chat,
            [d for n, d in declared.definitions.items() if n not in declared.deferred],
            [d for n, d in declared.definitions.items() if n not in declared.search],
        ),
    )
    _read_response(request, content, declared, client_search, _results(following), f"{at}, response")
    return request


class _History:
    """Walks a request's messages: checks every result answers a call before it, collects the tools the
    history's references loaded, and writes the chat-completions form our counter reads (a reference
    becomes the loaded definitions inline, as the API expands it)."""

    def __init__(self, declared: Declared, client_search: set[str], where: str) -> None:
        self.declared, self.client_search, self.where = declared, client_search, where
        self.loaded: list[str] = []
        self.calls: dict[str, str] = {}  # tool_use / server_tool_use id -> name

    def read(self, system: Any, messages: list[Any]) -> list[dict[str, Any]]:
        chat: list[dict[str, Any]] = []
        if system:
            chat.append({"role": "system", "content": _text_of(system)})
        for i, message in enumerate(messages):
            at = f"{self.where}.messages[{i}]"
            message = expect(message, Mapping, at, "a message object")
            role = message.get("role")
            if role not in ("user", "assistant"):
                raise TranscriptError(f"{at}.role: expected 'user' or 'assistant', got {str(role)[:40]!r}")
            content = message.get("content")
            if isinstance(content, str):
                chat.append({"role": role, "content": content})
                continue
            content = expect(content, list, f"{at}.content", "text or a list of content blocks")
            chat += self._blocks(role, content, at)
        return chat

    def _blocks(self, role: str, content: list[Any], at: str) -> list[dict[str, Any]]:
        chat: list[dict[str, Any]] = []
        text: list[str] = []
        calls: list[dict[str, Any]] = []

        def flush() -> None:
            if text or calls:
                message: dict[str, Any] = {"role": role, "content": "\n".join(text) or None}
                if calls:
                    message["tool_calls"] = list(calls)
                chat.append(message)
            text.clear()
            calls.clear()

        for j, block in enumerate(content):
            where = f"{at}.content[{j}]"
            block = expect(block, Mapping, where, "a content block")
            kind = block.get("type")
            if kind in ("text", "thinking"):
                text.append(str(block.get("text") or block.get("thinking") or ""))
            elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                call_id = expect(block.get("id"), str, f"{where}.id", "the call's id")
                self.calls[call_id] = str(block.get("name"))
                calls.append(_chat_call(call_id, str(block.get("name")), block.get("input")))
            elif kind in ("tool_result", "tool_search_tool_result", *SERVER_RESULT_BLOCKS):
                flush()
                chat.append(self._result(block, kind, where))
            elif kind not in KNOWN_BLOCKS and kind not in ("image", "document", "search_result"):
                raise unknown(where, "content block type", kind, KNOWN_BLOCKS)
        flush()
        return chat

    def _result(self, block: Mapping[str, Any], kind: str, where: str) -> dict[str, Any]:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or call_id not in self.calls:
            raise orphan(where, kind, call_id, "tool_use")
        content = block.get("content")
        references = (
            search_references(content) if kind == "tool_search_tool_result" else references_in(content)
        )
        for name in references:
            if not self.declared.declares(name):
                raise undeclared(where, name)
            if name not in self.loaded:
                self.loaded.append(name)
        if references:
            text = json.dumps(
                [self.declared.definitions.get(n, function_definition(n)) for n in references],
                ensure_ascii=False,
            )
        else:
            text = content_text(content) if kind != "tool_search_tool_result" else "[]"
        return {"role": "tool", "tool_call_id": call_id, "content": text}


def _results(messages: list[Any]) -> dict[str, Mapping[str, Any]]:
    """tool_use id -> the ``tool_result`` block answering it, in the request that follows a response."""
    out = {}
    for message in messages:
        for block in blocks(message):
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                out[block["tool_use_id"]] = block
    return out


def _read_response(
    request: Request,
    content: list[Any],
    declared: Declared,
    client_search: set[str],
    results: dict[str, Mapping[str, Any]],
    where: str,
) -> None:
    """The searches, calls and text of one response; a client search's references come from the next
    request's ``tool_result`` (``results``)."""
    pending: dict[str, tuple[str, Any]] = {}  # server_tool_use id -> (name, input)
    text: list[str] = []
    for j, block in enumerate(content):
        at = f"{where}.content[{j}]"
        block = expect(block, Mapping, at, "a content block")
        kind = block.get("type")
        if kind not in KNOWN_BLOCKS:
            raise unknown(at, "content block type", kind, KNOWN_BLOCKS)
        if kind == "text":
            text.append(str(block.get("text") or ""))
        elif kind in ("server_tool_use", "mcp_tool_use"):
            call_id = expect(block.get("id"), str, f"{at}.id", "the call's id")
            pending[call_id] = (str(block.get("name")), block.get("input"))
        elif kind in ("tool_search_tool_result", "tool_result", *SERVER_RESULT_BLOCKS):
            _server_result(request, block, kind, pending, declared, at)
        elif kind == "tool_use":
            _client_call(request, block, client_search, results, at)
    for call_id, (name, arguments) in pending.items():  # a server call whose result never came (pause_turn)
        request.calls.append(
            ToolCallRecord(
                call_id,
                name,
                arguments_text(arguments),
                "tool",
                "",
                "no result in this response",
                failure=FailureKind.NO_RESULT,
            )
        )
    request.text = clip("\n".join(text)) if text else None


def _server_result(
    request: Request,
    block: Mapping[str, Any],
    kind: str,
    pending: dict[str, Any],
    declared: Declared,
    at: str,
) -> None:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or call_id not in pending:
        expected = "server_tool_use" if kind != "mcp_tool_result" else "mcp_tool_use"
        raise orphan(at, kind, call_id, expected)
    name, arguments = pending.pop(call_id)
    content = block.get("content")
    if kind == "tool_search_tool_result" or (kind == "tool_result" and name in declared.search):
        error = None
        if isinstance(content, Mapping) and content.get("type") == "tool_search_tool_result_error":
            error = str(content.get("error_code") or "error")
            references = []
        elif kind == "tool_search_tool_result":
            if not isinstance(content, Mapping) or content.get("type") != "tool_search_tool_search_result":
                found = content.get("type") if isinstance(content, Mapping) else type(content).__name__
                raise TranscriptError(
                    f"{at}.content: expected a tool_search_tool_search_result or a "
                    f"tool_search_tool_result_error, got {str(found)[:60]!r}"
                )
            references = search_references(content)
        else:
            references = references_in(content)
        for ref in references:
            if not declared.declares(ref):
                raise undeclared(at, ref)
        search = search_record(call_id, arguments, references, error)
        request.searches.append(search)
        result = json.dumps(references) if error is None else json.dumps({"error": error})
        failed = None if error is None else FailureKind.SEARCH_FAILED
        request.calls.append(
            ToolCallRecord(call_id, name, arguments_text(arguments), "search", result, error, failure=failed)
        )
    else:
        request.calls.append(
            ToolCallRecord(call_id, name, arguments_text(arguments), "tool", result_text(content))
        )


def _client_call(
    request: Request,
    block: Mapping[str, Any],
    client_search: set[str],
    results: dict[str, Mapping[str, Any]],
    at: str,
) -> None:
    call_id = expect(block.get("id"), str, f"{at}.id", "the call's id")
    name = expect(block.get("name"), str, f"{at}.name", "the tool's name")
    arguments = block.get("input")
    answer = results.get(call_id)
    content = answer.get("content") if answer is not None else None
    error = "the tool reported an error" if answer is not None and answer.get("is_error") else None
    if name in client_search:
        references = references_in(content)
        request.searches.append(search_record(call_id, arguments, references, error))
        failed = None if error is None else FailureKind.SEARCH_FAILED
        request.calls.append(
            ToolCallRecord(
                call_id,
                name,
                arguments_text(arguments),
                "search",
                result_text(content),
                error,
                failure=failed,
            )
        )
        return
    result = result_text(content) if answer is not None else ""
    failed = None if error is None else FailureKind.TOOL_ERROR
    request.calls.append(
        ToolCallRecord(call_id, name, arguments_text(arguments), "tool", result, error, failure=failed)
    )


def _check_echo(
    exchange: Exchange, messages: list[Any], following: list[Any], at: str, notes: list[str]
) -> None:
    """The API wants each assistant turn sent back unchanged; a log whose next request differs is read as
    logged, and the difference is named."""
    position = len(messages)
    if len(following) <= position:
        notes.append(f"exchange {exchange.number}: the next request does not carry this response's turn")
        return
    sent = following[position]
    if not isinstance(sent, Mapping) or sent.get("role") != "assistant":
        notes.append(
            f"exchange {exchange.number}: the next request's message {position} is not this response's turn"
        )
        return
    if _without_cache_marks(sent.get("content")) != _without_cache_marks(exchange.response.get("content")):
        notes.append(
            f"exchange {exchange.number}: the turn sent back in the next request differs from this response"
        )


def _without_cache_marks(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


def _chat_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def _first_user_text(messages: list[Any]) -> str:
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                return clip(text)
    return ""
