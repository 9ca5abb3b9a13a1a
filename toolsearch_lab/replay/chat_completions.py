"""OpenAI Chat Completions transcripts: ``POST /v1/chat/completions`` exchanges, read request by request.

This is what this lab's own ``OpenAIChatModel`` speaks, and every OpenAI-compatible server (llama.cpp,
Ollama, vLLM): a run recorded with ``record_to=`` (:mod:`toolsearch_lab.models.recorder`) replays here.
The API has no tool search of its own: what was in the model's context is the request's ``tools``, all of
them. A search is a call of this lab's (and Spring's) search tool, ``toolSearchTool``, whose result, in the
next request, is a search result on the wire (:mod:`toolsearch_lab.wire`: a JSON array of names or of
definitions); the tools it names entered the context of a later request. A call's result is the ``tool``
message answering its id in the next request; a result that is an error result (``{"error": ...}``, the
loop's) marks the call failed.

No request declares tools it leaves out, so the baseline our count compares with ("every tool loaded") is
every tool any request of the run declared, the search tool aside. Refused by name: a message of an unknown
role, a tool result answering no call, a response without ``choices`` or ``usage``, a usage whose fields are
not counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.replay import common
from toolsearch_lab.replay.common import (
    ChatRequest,
    Recording,
    Request,
    TranscriptError,
    clip,
    expect,
    function_definition,
    orphan,
    result_text,
    search_record,
    text_or_none,
)
from toolsearch_lab.replay.exchanges import exchanges
from toolsearch_lab.trace import (
    ANSWERED,
    CallKind,
    FailureKind,
    ReplaySettings,
    SearchTool,
    StopReason,
    ToolCallRecord,
)
from toolsearch_lab.wire import decode_search_result, is_error_result

__all__ = ["chat_usage", "read_chat_completions"]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
FINISH_REASONS: dict[str, StopReason] = {
    "stop": ANSWERED,
    "tool_calls": "unfinished",
    "function_call": "unfinished",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def chat_usage(usage: Any, where: str) -> dict[str, Any]:
    """A Chat Completions ``usage`` checked: ``prompt_tokens``, ``completion_tokens``, ``cached_tokens`` =
    ``prompt_tokens_details.cached_tokens``; ``raw`` = the object as written."""
    usage = expect(usage, Mapping, where, "a usage object")
    prompt = common.check_count(usage, "prompt_tokens", where)
    output = common.check_count(usage, "completion_tokens", where, required=False)
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": output}
    total = usage.get("total_tokens")
    out["total_tokens"] = (
        common.check_count(usage, "total_tokens", where) if total is not None else prompt + output
    )
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping) and details.get("cached_tokens") is not None:
        out["cached_tokens"] = common.check_count(details, "cached_tokens", f"{where}.prompt_tokens_details")
    return {**out, "source": "openai-chat-completions", "raw": dict(usage)}


def read_chat_completions(records: list[Any], where: str) -> Recording:
    """Every successful exchange of a Chat Completions transcript as a :class:`Request`."""
    notes: list[str] = []
    calls = exchanges(records, where, notes)
    histories = [_messages(e.request.get("messages"), f"{where}: {e.where}, request.messages") for e in calls]
    declared = [_tools(e.request.get("tools"), f"{where}: {e.where}, request.tools") for e in calls]
    every = {n: d for tools in declared for n, d in tools.items() if n != TOOL_SEARCH_TOOL_NAME}
    requests = []
    for position, exchange in enumerate(calls):
        at = f"{where}: {exchange.where}"
        _check_results(histories[position], f"{at}, request.messages")
        following = histories[position + 1] if position + 1 < len(calls) else []
        request = Request(
            in_context=list(declared[position]),
            deferred=[],
            chat=ChatRequest(histories[position], list(declared[position].values()), list(every.values())),
        )
        _read_answer(request, exchange.response, following, f"{at}, response")
        requests.append(request)
    searched = any(r.searches for r in requests)
    last = calls[-1].response
    stop = _stop_reason(requests[-1], notes)
    first_user = next((m for m in histories[0] if m["role"] == "user"), None)
    return Recording(
        requests=requests,
        model=str(calls[0].request.get("model") or last.get("model") or "unknown"),
        user_request=clip(common.content_text(first_user["content"])) if first_user else "",
        session_id="",
        index=f"chat-completions:{TOOL_SEARCH_TOOL_NAME if searched else 'no search tool'}",
        catalog_size=len(every),
        final_answer=requests[-1].text if stop == ANSWERED else None,
        stop_reason=stop,
        notes=notes,
        definitions=every,
        settings=ReplaySettings(
            format="openai-chat-completions",
            search_tools=[SearchTool(TOOL_SEARCH_TOOL_NAME, "client")] if searched else [],
            served_model=text_or_none(last.get("model")),
            endpoint=calls[0].host,
            exchanges=len(records),
        ),
    )


def _messages(value: Any, where: str) -> list[dict[str, Any]]:
    """The request's messages in the form our counter reads: text parts kept, other parts named."""
    out = []
    for i, message in enumerate(expect(value, list, where, "a list of messages")):
        at = f"{where}[{i}]"
        message = expect(message, Mapping, at, "a message object")
        role = message.get("role")
        if role not in ROLES:
            raise TranscriptError(f"{at}.role: expected one of {', '.join(ROLES)}, got {str(role)[:40]!r}")
        kept: dict[str, Any] = {"role": role, "content": _content(message.get("content"))}
        if isinstance(message.get("name"), str):
            kept["name"] = message["name"]
        if role == "tool":
            kept["tool_call_id"] = str(message.get("tool_call_id"))
        calls = message.get("tool_calls")
        if calls:
            kept["tool_calls"] = [_call(c, f"{at}.tool_calls[{j}]") for j, c in enumerate(calls)]
        out.append(kept)
    return out


def _content(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(p.get("text") or p.get("refusal") or "")
            if isinstance(p, Mapping) and p.get("type") in ("text", "refusal")
            else f"[{p.get('type', 'part') if isinstance(p, Mapping) else 'part'}]"
            for p in content
        ]
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def _call(call: Any, where: str) -> dict[str, Any]:
    call = expect(call, Mapping, where, "a tool call object")
    function = expect(call.get("function"), Mapping, f"{where}.function", "the called function")
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    name = expect(function.get("name"), str, f"{where}.function.name", "the function's name")
    return {"id": str(call.get("id")), "type": "function", "function": {"name": name, "arguments": text}}


def _tools(value: Any, where: str) -> dict[str, dict[str, Any]]:
    """name -> definition of the request's tools, in order."""
    tools: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(expect(value if value is not None else [], list, where, "a list of tools")):
        at = f"{where}[{i}]"
        function = expect(expect(tool, Mapping, at, "a tool").get("function"), Mapping, at, "a function tool")
        name = expect(function.get("name"), str, f"{at}.function.name", "the function's name")
        tools[name] = function_definition(name, function.get("description", ""), function.get("parameters"))
    return tools


def _check_results(messages: list[dict[str, Any]], where: str) -> None:
    asked: set[str] = set()
    for i, message in enumerate(messages):
        asked.update(c["id"] for c in message.get("tool_calls") or ())
        if message["role"] == "tool" and message["tool_call_id"] not in asked:
            raise orphan(
                f"{where}[{i}]", "a tool message", message["tool_call_id"], "tool call", "tool_call_id"
            )


def _read_answer(
    request: Request, body: Mapping[str, Any], following: list[dict[str, Any]], where: str
) -> None:
    """The calls, searches, text and usage of one answer; results come from the next request."""
    choices = expect(body.get("choices"), list, f"{where}.choices", "a list of choices")
    if not choices:
        raise TranscriptError(f"{where}.choices: empty; a completion has at least one choice")
    if "usage" not in body:
        raise TranscriptError(f"{where}: no 'usage' object (servers send it unless a stream left it out)")
    request.usage = chat_usage(body["usage"], f"{where}.usage")
    choice = expect(choices[0], Mapping, f"{where}.choices[0]", "a choice")
    message = expect(choice.get("message"), Mapping, f"{where}.choices[0].message", "the message")
    request.stop = choice.get("finish_reason")
    text = message.get("content")
    request.text = clip(text) if isinstance(text, str) and text else None
    results = {m["tool_call_id"]: m["content"] for m in following if m["role"] == "tool"}
    for j, raw in enumerate(message.get("tool_calls") or ()):
        call = _call(raw, f"{where}.choices[0].message.tool_calls[{j}]")
        _record_call(request, call, results.get(call["id"]))


def _record_call(request: Request, call: dict[str, Any], result: str | None) -> None:
    name, arguments = call["function"]["name"], call["function"]["arguments"]
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError:
        parsed = arguments
    failed = result is not None and is_error_result(result)
    found = decode_search_result(result) if result is not None and not failed else None
    kind: CallKind = "search" if name == TOOL_SEARCH_TOOL_NAME else "tool"
    error = "the tool reported an error" if failed else None
    if kind == "search":
        request.searches.append(search_record(call["id"], parsed, found or [], error))
        failure = FailureKind.SEARCH_FAILED if failed else None
    else:
        failure = FailureKind.TOOL_ERROR if failed else None
    shown = result_text(result) if result is not None else ""
    request.calls.append(
        ToolCallRecord(
            call["id"], name, common.arguments_text(arguments), kind, shown, error, failure=failure
        )
    )


def _stop_reason(request: Request, notes: list[str]) -> StopReason:
    reason = str(request.stop)
    if reason in FINISH_REASONS:
        return FINISH_REASONS[reason]
    notes.append(f"the last response's finish_reason {reason[:60]!r} is not known")
    return "unknown"
