"""A streamed (server-sent events) answer of a model API, assembled into the body the same call returns
unstreamed, so a recorded or logged stream replays like any other exchange.

Three streams are read, each as its provider documents it:

* **Anthropic Messages** (``stream: true``; "Streaming Messages",
  https://docs.anthropic.com/en/docs/build-with-claude/streaming): ``message_start`` carries the message
  without content, ``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` build each
  block (``text_delta``, ``input_json_delta`` whose ``partial_json`` pieces make a tool call's input,
  ``thinking_delta``, ``signature_delta``, ``citations_delta``), ``message_delta`` sets the stop reason and
  the final usage, ``message_stop`` ends.
* **OpenAI Chat Completions** (``stream: true``;
  https://platform.openai.com/docs/api-reference/chat-streaming): ``chat.completion.chunk`` objects whose
  ``delta`` pieces make the message and its tool calls (arguments arrive in pieces, by ``index``), the last
  chunk with ``usage`` when ``stream_options.include_usage`` was set, then ``data: [DONE]``.
* **OpenAI Responses** (``stream: true``;
  https://platform.openai.com/docs/api-reference/responses-streaming): the ``response.completed`` (or
  ``.incomplete`` / ``.failed``) event carries the whole response; a stream cut before it is assembled from
  ``response.created`` and each ``response.output_item.done``.

A stream that is none of these, or an event that is not JSON, is a :class:`StreamError` naming the event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["StreamError", "assemble", "events", "is_event_stream"]


class StreamError(ValueError):
    """A server-sent event stream that cannot be assembled into a response: says which event and why."""


def is_event_stream(text: str) -> bool:
    """Whether ``text`` reads as server-sent events (its first line is an ``event:`` or ``data:`` field)."""
    first = text.lstrip("\ufeff\r\n").split("\n", 1)[0]
    return first.startswith(("event:", "data:", ":"))


def events(text: str) -> list[tuple[str | None, str]]:
    """The (event name, data) of each event; comment lines (``:``, pings) are skipped, data lines of one
    event are joined with line feeds, and an event cut at the end of the text is kept (a cut stream)."""
    found: list[tuple[str | None, str]] = []
    name: str | None = None
    data: list[str] = []
    for line in [*text.replace("\r\n", "\n").split("\n"), ""]:
        if not line:
            if data:
                found.append((name, "\n".join(data)))
            name, data = None, []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    return found


def assemble(text: str) -> dict[str, Any]:
    """The body the call would have returned unstreamed, from the text of its stream."""
    payloads: list[tuple[int, Mapping[str, Any]]] = []
    for number, (name, data) in enumerate(events(text), start=1):
        if data.strip() == "[DONE]":
            continue
        try:
            payload = json.loads(data)
        except json.JSONDecodeError:
            raise StreamError(f"event {number} ({name or 'unnamed'}): its data is not JSON") from None
        if not isinstance(payload, Mapping):
            raise StreamError(f"event {number} ({name or 'unnamed'}): its data is not a JSON object")
        payloads.append((number, payload))
    if not payloads:
        raise StreamError("the stream holds no event")
    first = payloads[0][1]
    if first.get("object") == "chat.completion.chunk":
        return _chat_completion(payloads)
    kind = str(first.get("type") or "")
    if kind.startswith("response."):
        return _response(payloads)
    if kind in ("message_start", "ping", "error") or kind.startswith(("content_block", "message_")):
        return _message(payloads)
    raise StreamError(
        f"event 1: {kind or first.get('object') or 'an untyped event'!s:.60} starts no stream known here "
        "(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses)"
    )


# ---- Anthropic Messages ----------------------------------------------------------------------------------
def _message(payloads: Iterable[tuple[int, Mapping[str, Any]]]) -> dict[str, Any]:
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    for number, event in payloads:
        kind = event.get("type")
        if kind == "error":
            return dict(event)  # the API's error body, as an unstreamed call answers it
        if kind == "message_start":
            message = dict(_field(event, "message", number))
            message["content"] = []
            continue
        if kind == "ping":
            continue
        if message is None:
            raise StreamError(f"event {number} ({kind}): comes before message_start")
        if kind == "content_block_start":
            index = _index(event, number)
            blocks[index] = dict(_field(event, "content_block", number))
            if blocks[index].get("type") in ("tool_use", "server_tool_use", "mcp_tool_use"):
                partial[index] = []
        elif kind == "content_block_delta":
            _block_delta(blocks, partial, event, number)
        elif kind == "message_delta":
            message.update(_field(event, "delta", number))
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                message["usage"] = {**(message.get("usage") or {}), **usage}
        elif kind not in ("content_block_stop", "message_stop"):
            raise StreamError(f"event {number}: unknown Messages stream event {str(kind)[:60]!r}")
    if message is None:
        raise StreamError("the stream has no message_start")
    for index, pieces in partial.items():
        text = "".join(pieces)
        try:
            blocks[index]["input"] = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError:
            raise StreamError(f"content block {index}: its input_json_delta pieces are not JSON") from None
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _block_delta(
    blocks: dict[int, dict[str, Any]], partial: dict[int, list[str]], event: Mapping[str, Any], number: int
) -> None:
    index = _index(event, number)
    if index not in blocks:
        raise StreamError(f"event {number}: a delta for content block {index}, which never started")
    delta = _field(event, "delta", number)
    block, kind = blocks[index], delta.get("type")
    if kind == "text_delta":
        block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
    elif kind == "input_json_delta":
        partial.setdefault(index, []).append(str(delta.get("partial_json") or ""))
    elif kind == "thinking_delta":
        block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
    elif kind == "signature_delta":
        block["signature"] = str(block.get("signature") or "") + str(delta.get("signature") or "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))
    else:
        raise StreamError(f"event {number}: unknown content block delta {str(kind)[:60]!r}")


# ---- OpenAI Chat Completions -----------------------------------------------------------------------------
def _chat_completion(payloads: Iterable[tuple[int, Mapping[str, Any]]]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    choices: dict[int, dict[str, Any]] = {}
    for number, chunk in payloads:
        if "error" in chunk:
            return dict(chunk)
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if chunk.get(key) is not None:
                body[key] = chunk[key]
        if chunk.get("usage") is not None:
            body["usage"] = chunk["usage"]
        for piece in chunk.get("choices") or []:
            if not isinstance(piece, Mapping):
                raise StreamError(f"event {number}: a choice that is not an object")
            _choice_delta(choices, piece, number)
    body["object"] = "chat.completion"
    body["choices"] = [_finished_choice(choices[i]) for i in sorted(choices)]
    return body


def _choice_delta(choices: dict[int, dict[str, Any]], piece: Mapping[str, Any], number: int) -> None:
    index = piece.get("index", 0)
    index = index if isinstance(index, int) else 0
    choice = choices.setdefault(index, {"index": index, "message": {"role": "assistant"}, "calls": {}})
    if piece.get("finish_reason") is not None:
        choice["finish_reason"] = piece["finish_reason"]
    delta = piece.get("delta") or {}
    if not isinstance(delta, Mapping):
        raise StreamError(f"event {number}: a delta that is not an object")
    message = choice["message"]
    for key in ("content", "refusal", "reasoning_content"):
        if isinstance(delta.get(key), str):
            message[key] = str(message.get(key) or "") + delta[key]
    for call in delta.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            raise StreamError(f"event {number}: a tool call delta that is not an object")
        at = call.get("index", len(choice["calls"]))
        slot = choice["calls"].setdefault(at, {"type": "function", "function": {"name": "", "arguments": ""}})
        if call.get("id"):
            slot["id"] = call["id"]
        function = call.get("function") or {}
        for key in ("name", "arguments"):
            if isinstance(function.get(key), str):
                slot["function"][key] += function[key]


def _finished_choice(choice: dict[str, Any]) -> dict[str, Any]:
    calls = choice.pop("calls")
    message = choice["message"]
    message["content"] = message.get("content") or None  # a stream's opening "" is no text
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    choice.setdefault("finish_reason", None)
    return choice


# ---- OpenAI Responses ------------------------------------------------------------------------------------
_FINAL = ("response.completed", "response.incomplete", "response.failed")


def _response(payloads: Iterable[tuple[int, Mapping[str, Any]]]) -> dict[str, Any]:
    started: dict[str, Any] | None = None
    items: dict[int, Any] = {}
    for number, event in payloads:
        kind = event.get("type")
        if kind in _FINAL:
            return dict(_field(event, "response", number))
        if kind == "error":
            return {"error": {k: v for k, v in event.items() if k != "type"}}
        if kind == "response.created":
            started = dict(_field(event, "response", number))
        elif kind == "response.output_item.done":
            position = event.get("output_index", len(items))
            items[position if isinstance(position, int) else len(items)] = event.get("item")
    if started is None:
        raise StreamError("the stream has neither response.completed nor response.created")
    started["output"] = [items[i] for i in sorted(items)]
    return started


def _field(event: Mapping[str, Any], key: str, number: int) -> Mapping[str, Any]:
    value = event.get(key)
    if not isinstance(value, Mapping):
        raise StreamError(f"event {number} ({event.get('type')}): no {key!r} object")
    return value


def _index(event: Mapping[str, Any], number: int) -> int:
    index = event.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise StreamError(f"event {number} ({event.get('type')}): no integer 'index'")
    return index
