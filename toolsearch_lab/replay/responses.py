"""OpenAI Responses transcripts: ``POST /v1/responses`` exchanges with ``tool_search``, request by request.

A request's history is its own ``input`` when the whole conversation is replayed (``store: false``), or,
with ``previous_response_id``, the history of the response it names plus that response's output plus its
own ``input`` (the API keeps the state; the transcript must hold the earlier exchanges, or the request is
refused by name). What was in the model's context: the non-deferred tools (``tool_search`` among them) and
every function a ``tool_search_output`` in the history loaded ("Tools that were not listed as part of this
array will not be available to the model", OpenAI's tool search guide). Functions inside a namespace are
named ``namespace.function``.

A hosted search (``execution: "server"``) comes back whole in one response: a ``tool_search_call`` and the
``tool_search_output`` after it. A client search (``execution: "client"``) is a ``tool_search_call`` whose
``call_id`` your next request answers with a ``tool_search_output``; the search belongs to the response that
made the call. Refused by name: an unknown item type, an output answering no call, a usage whose fields are
not counts, a ``previous_response_id`` naming no earlier response.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolsearch_lab.replay.common import (
    ChatRequest,
    Recording,
    Request,
    TranscriptError,
    arguments_text,
    check_count,
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
    unknown,
)
from toolsearch_lab.replay.exchanges import exchanges
from toolsearch_lab.trace import ANSWERED, ReplaySettings, SearchTool, StopReason, ToolCallRecord

__all__ = ["KNOWN_ITEMS", "openai_usage", "read_responses"]

SEARCH_TOOL = "tool_search"
SEARCH_TOOL_GUIDE = "OpenAI, https://developers.openai.com/api/docs/guides/tools-tool-search"
# Hosted tools a request may declare besides functions and namespaces: in the context, named by type.
HOSTED_TOOLS = (
    "web_search",
    "web_search_preview",
    "file_search",
    "code_interpreter",
    "image_generation",
    "computer_use_preview",
    "computer",
    "local_shell",
    "shell",
    "apply_patch",
    "custom",
    "mcp",
)
# Items of other tools: read as calls of those tools (their outputs as inputs that need no check).
OTHER_CALLS = (
    "web_search_call",
    "file_search_call",
    "computer_call",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "custom_tool_call",
)
OTHER_INPUTS = (
    "computer_call_output",
    "local_shell_call_output",
    "shell_call_output",
    "apply_patch_call_output",
    "mcp_approval_response",
    "custom_tool_call_output",
    "item_reference",
    "compaction",
)
# The status of the last response, when it is not an answer and no call is waiting (StopReason's names).
STATUSES: tuple[StopReason, ...] = ("completed", "incomplete", "failed", "cancelled", "in_progress", "queued")
KNOWN_ITEMS = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "tool_search_call",
    "tool_search_output",
    *OTHER_CALLS,
    *OTHER_INPUTS,
)


def openai_usage(usage: Any, where: str) -> dict[str, Any]:
    """A Responses ``usage`` checked: ``prompt_tokens`` = input tokens, ``cached_tokens`` =
    ``input_tokens_details.cached_tokens``, ``completion_tokens`` = output tokens (reasoning included, as
    billed); ``raw`` = the object as written."""
    usage = expect(usage, Mapping, where, "a usage object")
    prompt = check_count(usage, "input_tokens", where)
    output = check_count(usage, "output_tokens", where)
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": output}
    total = usage.get("total_tokens")
    out["total_tokens"] = check_count(usage, "total_tokens", where) if total is not None else prompt + output
    for key, inner, name in (
        ("input_tokens_details", "cached_tokens", "cached_tokens"),
        ("input_tokens_details", "cache_write_tokens", "cache_write_tokens"),
        ("output_tokens_details", "reasoning_tokens", "reasoning_tokens"),
    ):
        details = usage.get(key)
        if details is None:
            continue
        if not isinstance(details, Mapping):
            raise TranscriptError(f"{where}.{key}: expected an object, got {json.dumps(details)[:40]}")
        if details.get(inner) is not None:
            out[name] = check_count(details, inner, f"{where}.{key}")
    return {**out, "source": "openai-responses", "raw": dict(usage)}


class _Declared:
    """The tools one request declares: qualified names in order, deferred ones, definitions (the full ones,
    and what the model sees of a deferred function: its name and description)."""

    def __init__(self, tools: Any, where: str) -> None:
        tools = expect(tools if tools is not None else [], list, where, "a list of tools")
        self.order: list[str] = []
        self.deferred: set[str] = set()
        self.full: dict[str, dict[str, Any]] = {}
        self.visible: list[dict[str, Any]] = []  # deferred functions and namespaces as the model sees them
        self.namespaces: list[str] = []
        self.descriptions: dict[str, str] = {}  # namespace -> its description
        self.client_search = False  # tool_search with execution "client": the caller runs the searches
        self.search_deferred = False  # tool_search itself sent with defer_loading
        for i, tool in enumerate(tools):
            at = f"{where}[{i}]"
            tool = expect(tool, Mapping, at, "a tool object")
            kind = tool.get("type")
            if kind == "function":
                self._function(tool, None, at)
            elif kind == "namespace":
                ns = expect(tool.get("name"), str, f"{at}.name", "the namespace's name")
                members = expect(tool.get("tools", []), list, f"{at}.tools", "the namespace's functions")
                for j, member in enumerate(members):
                    self._function(
                        expect(member, Mapping, f"{at}.tools[{j}]", "a function"), ns, f"{at}.tools[{j}]"
                    )
                self.visible.append(function_definition(ns, tool.get("description", "")))
                self.namespaces.append(ns)
                description = tool.get("description")
                self.descriptions[ns] = description if isinstance(description, str) else ""
            elif kind == SEARCH_TOOL:
                self.order.append(SEARCH_TOOL)
                self.client_search = tool.get("execution") == "client"
                self.search_deferred = tool.get("defer_loading") is True
                self.full[SEARCH_TOOL] = function_definition(
                    SEARCH_TOOL, tool.get("description", ""), tool.get("parameters")
                )
            elif kind in HOSTED_TOOLS:
                name = str(tool.get("server_label") or tool.get("name") or kind)
                self.order.append(name)
                self.full[name] = function_definition(name, tool.get("description", ""))
            else:
                raise unknown(
                    f"{at}.type", "tool type", kind, ("function", "namespace", SEARCH_TOOL, *HOSTED_TOOLS)
                )

    def _function(self, tool: Mapping[str, Any], namespace: str | None, at: str) -> None:
        name = expect(tool.get("name"), str, f"{at}.name", "the function's name")
        qualified = f"{namespace}.{name}" if namespace else name
        self.order.append(qualified)
        self.full[qualified] = function_definition(name, tool.get("description", ""), tool.get("parameters"))
        if tool.get("defer_loading") is True:
            self.deferred.add(qualified)
            if namespace is None:
                self.visible.append(function_definition(name, tool.get("description", "")))


def read_responses(records: list[Any], where: str) -> Recording:
    """Every successful exchange of an OpenAI Responses transcript as a :class:`Request`."""
    notes: list[str] = []
    calls = exchanges(records, where, notes)
    inputs = [_input_items(e.request.get("input"), f"{where}: {e.where}, request.input") for e in calls]
    histories: dict[
        str, list[tuple[str, Mapping[str, Any]]]
    ] = {}  # response id -> history including its output
    requests = []
    for position, exchange in enumerate(calls):
        at = f"{where}: {exchange.where}"
        body = exchange.request
        own = [(f"{at}, request.input[{k}]", item) for k, item in enumerate(inputs[position])]
        previous = body.get("previous_response_id")
        if previous is not None:
            if previous not in histories:
                raise TranscriptError(
                    f"{at}, request.previous_response_id: {str(previous)[:80]!r} names no earlier response "
                    "in the file"
                )
            history = histories[previous] + own
        else:
            history = own
        declared = _Declared(body.get("tools"), f"{at}, request.tools")
        walk = _Walk(declared)
        chat = walk.read(body.get("instructions"), history)
        response = exchange.response
        if "usage" not in response:
            raise TranscriptError(f"{at}, response: no 'usage' object; every completed response has one")
        output = expect(response.get("output"), list, f"{at}, response.output", "a list of output items")
        in_context = ordered([n for n in declared.order if n not in declared.deferred] + walk.loaded)
        request = Request(
            in_context=in_context,
            deferred=[n for n in declared.order if n in declared.deferred and n not in in_context],
            usage=openai_usage(response["usage"], f"{at}, response.usage"),
            stop=response.get("status"),
            chat=ChatRequest(
                chat,
                [
                    walk.definitions.get(n) or declared.full.get(n) or function_definition(n)
                    for n in in_context
                ]
                + [d for d in declared.visible if d["function"]["name"] not in in_context],
                [d for n, d in declared.full.items() if n != SEARCH_TOOL],
            ),
        )
        following = inputs[position + 1] if position + 1 < len(calls) else []
        _read_output(request, output, declared, following, f"{at}, response.output")
        if isinstance(response.get("id"), str):
            histories[response["id"]] = history + [
                (f"{at}, response.output[{k}]", item) for k, item in enumerate(output)
            ]
        requests.append(request)
    last = calls[-1].response
    declarations = [_Declared(e.request.get("tools"), where) for e in calls]
    client = any(d.client_search for d in declarations)
    deferred = next((n for n, d in enumerate(declarations, start=1) if d.search_deferred), None)
    if deferred is not None:
        notes.append(deferred_search_tool(deferred, SEARCH_TOOL, SEARCH_TOOL_GUIDE))
    stop = _stop_reason(last.get("status"), requests[-1], notes)
    return Recording(
        requests=requests,
        model=str(calls[0].request.get("model") or last.get("model") or "unknown"),
        user_request=_first_user_text(inputs[0]),
        session_id="",
        index="openai:tool_search" + ("(client)" if client else "(hosted)"),
        catalog_size=len({n for d in declarations for n in d.order} - {SEARCH_TOOL}),
        final_answer=requests[-1].text if stop == ANSWERED else None,
        stop_reason=stop,
        notes=notes,
        definitions=first_declared(d.full for d in declarations),
        namespace_descriptions=first_declared(d.descriptions for d in declarations),
        settings=ReplaySettings(
            format="openai-responses",
            search_tools=[SearchTool(SEARCH_TOOL, "client" if client else "hosted")],
            namespaces=ordered([ns for d in declarations for ns in d.namespaces]),
            deferred_tools=ordered([n for d in declarations for n in d.order if n in d.deferred]),
            served_model=text_or_none(last.get("model")),
            endpoint=calls[0].host,
            exchanges=len(records),
        ),
    )


def _stop_reason(status: Any, last: Request, notes: list[str]) -> StopReason:
    """How the run ended: an answer (the last response completed with text and no call), calls waiting
    for their results, or the last response's status; a status not known here is named in ``notes``."""
    if status == "completed" and last.text is not None and not last.calls:
        return ANSWERED
    if last.calls:
        return "unfinished"
    known = next((s for s in STATUSES if s == status), None)
    if known is None:
        notes.append(f"the last response's status {str(status)[:60]!r} is not known")
        return "unknown"
    return known


def _input_items(value: Any, where: str) -> list[Mapping[str, Any]]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    items = expect(value if value is not None else [], list, where, "text or a list of input items")
    return [expect(item, Mapping, f"{where}[{k}]", "an input item") for k, item in enumerate(items)]


def _kind(item: Mapping[str, Any]) -> Any:
    return item.get("type", "message" if "role" in item else None)


class _Walk:
    """Reads a request's history: every output answers a call before it, the functions loaded so far,
    and the chat-completions form our counter reads."""

    def __init__(self, declared: _Declared) -> None:
        self.declared = declared
        self.loaded: list[str] = []
        self.definitions: dict[str, dict[str, Any]] = {}
        self.function_calls: set[str] = set()
        self.search_calls: set[str] = set()
        self.hosted_pending = 0

    def read(self, instructions: Any, history: list[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
        chat: list[dict[str, Any]] = []
        if isinstance(instructions, str) and instructions:
            chat.append({"role": "system", "content": instructions})
        for at, item in history:
            kind = _kind(item)
            if kind not in KNOWN_ITEMS:
                raise unknown(at, "input item type", kind)
            if kind == "message":
                role = item.get("role")
                chat.append(
                    {
                        "role": role if role in ("system", "developer", "assistant") else "user",
                        "content": _text(item.get("content")),
                    }
                )
            elif kind in ("function_call", "custom_tool_call"):
                self.function_calls.add(str(item.get("call_id")))
                chat.append(_assistant_call(item.get("call_id"), _qualified(item), item.get("arguments")))
            elif kind in ("function_call_output", "custom_tool_call_output"):
                if str(item.get("call_id")) not in self.function_calls:
                    raise orphan(at, kind, item.get("call_id"), "function_call", "call_id")
                chat.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(item.get("call_id")),
                        "content": content_text(item.get("output")),
                    }
                )
            elif kind == "tool_search_call":
                if item.get("execution") == "client":
                    self.search_calls.add(str(item.get("call_id")))
                else:
                    self.hosted_pending += 1
                chat.append(
                    _assistant_call(item.get("call_id") or item.get("id"), SEARCH_TOOL, item.get("arguments"))
                )
            elif kind == "tool_search_output":
                chat.append(self._search_output(item, at))
        return chat

    def _search_output(self, item: Mapping[str, Any], at: str) -> dict[str, Any]:
        if item.get("execution") == "client" or item.get("call_id") is not None:
            if str(item.get("call_id")) not in self.search_calls:
                raise orphan(at, "tool_search_output", item.get("call_id"), "tool_search_call", "call_id")
        elif self.hosted_pending:
            self.hosted_pending -= 1
        else:
            raise TranscriptError(f"{at}: a hosted tool_search_output answers no tool_search_call before it")
        names, definitions = loaded_tools(item.get("tools"), self.declared, at)
        for name in names:
            if name not in self.loaded:
                self.loaded.append(name)
        self.definitions.update(definitions)
        # The loaded definitions go "at the end of the model's context window" (OpenAI): counted with the
        # request's tools, so the output itself reads as the names it loaded.
        return {
            "role": "tool",
            "tool_call_id": str(item.get("call_id") or ""),
            "content": json.dumps(names, ensure_ascii=False),
        }


def loaded_tools(tools: Any, declared: _Declared, at: str) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The qualified names a ``tool_search_output`` loaded, and their definitions (the declared one when
    the output names a declared tool by name only)."""
    tools = expect(tools if tools is not None else [], list, f"{at}.tools", "a list of tools")
    names: list[str] = []
    definitions: dict[str, dict[str, Any]] = {}

    def add(tool: Mapping[str, Any], namespace: str | None) -> None:
        name = expect(tool.get("name"), str, f"{at}.tools", "tools with names")
        qualified = f"{namespace}.{name}" if namespace else name
        names.append(qualified)
        definitions[qualified] = declared.full.get(qualified) or function_definition(
            name, tool.get("description", ""), tool.get("parameters")
        )

    for tool in tools:
        tool = expect(tool, Mapping, f"{at}.tools", "tool objects")
        if tool.get("type") == "namespace":
            ns = str(tool.get("name"))
            for member in expect(tool.get("tools") or [], list, f"{at}.tools", "a namespace's list of tools"):
                add(expect(member, Mapping, f"{at}.tools", "tool objects"), ns)
        else:
            add(tool, None)
    return names, definitions


def _read_output(
    request: Request, output: list[Any], declared: _Declared, following: list[Mapping[str, Any]], where: str
) -> None:
    hosted: list[Mapping[str, Any]] = []  # hosted tool_search_calls waiting for their output
    answers = {
        str(i.get("call_id")): i
        for i in following
        if _kind(i) in ("function_call_output", "tool_search_output", "custom_tool_call_output")
    }
    text: list[str] = []
    for k, item in enumerate(output):
        at = f"{where}[{k}]"
        item = expect(item, Mapping, at, "an output item")
        kind = _kind(item)
        if kind not in KNOWN_ITEMS or kind in ("function_call_output", "item_reference", "compaction"):
            raise unknown(at, "output item type", kind)
        if kind == "message":
            text.append(_text(item.get("content")))
        elif kind == "tool_search_call" and item.get("execution") != "client":
            hosted.append(item)
        elif kind == "tool_search_call":
            call_id = str(item.get("call_id"))
            answer = answers.get(call_id)
            names = loaded_tools(answer.get("tools"), declared, at)[0] if answer is not None else []
            _search(request, call_id, item.get("arguments"), names, answer is not None)
        elif kind == "tool_search_output":
            if not hosted:
                raise TranscriptError(f"{at}: tool_search_output answers no tool_search_call before it")
            call = hosted.pop(0)
            names = loaded_tools(item.get("tools"), declared, at)[0]
            _search(request, str(call.get("id") or ""), call.get("arguments"), names, True)
        elif kind in ("function_call", "custom_tool_call"):
            call_id = str(item.get("call_id"))
            answer = answers.get(call_id)
            result = result_text(answer.get("output")) if answer is not None else ""
            request.calls.append(
                ToolCallRecord(
                    call_id, _qualified(item), arguments_text(item.get("arguments")), "tool", result
                )
            )
        elif kind in OTHER_CALLS:
            request.calls.append(
                ToolCallRecord(
                    str(item.get("id") or ""),
                    str(kind).removesuffix("_call"),
                    arguments_text(item.get("action") or item.get("arguments") or {}),
                    "tool",
                    "ran on the server",
                )
            )
    for call in hosted:  # a hosted search whose output never came
        request.searches.append(
            search_record(
                str(call.get("id") or ""), call.get("arguments"), [], "no tool_search_output in this response"
            )
        )
    request.text = clip("\n".join(t for t in text if t)) if text else None


def _search(request: Request, call_id: str, arguments: Any, names: list[str], answered: bool) -> None:
    record = search_record(call_id, arguments, names, None)
    request.searches.append(record)
    result = json.dumps(names) if answered else ""
    request.calls.append(ToolCallRecord(call_id, SEARCH_TOOL, arguments_text(arguments), "search", result))


def _qualified(item: Mapping[str, Any]) -> str:
    name = str(item.get("name"))
    namespace = item.get("namespace")
    return f"{namespace}.{name}" if isinstance(namespace, str) and namespace else name


def _assistant_call(call_id: Any, name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    call = {"id": str(call_id), "type": "function", "function": {"name": name, "arguments": text}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text") or p.get("refusal") or "")
            for p in content
            if isinstance(p, Mapping) and p.get("type") in ("input_text", "output_text", "text", "refusal")
        )
    return ""


def _first_user_text(items: list[Mapping[str, Any]]) -> str:
    for item in items:
        if _kind(item) == "message" and item.get("role") == "user":
            text = _text(item.get("content"))
            if text:
                return clip(text)
    return ""
