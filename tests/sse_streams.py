"""Streamed (server-sent events) forms of the fake servers' answers, as each API documents its stream, so a
test can serve the same answer streamed and unstreamed (``Reply(body=..., headers=EVENT_STREAM)``).

Texts and tool-call arguments are sent in two pieces each, so assembling them is exercised.
"""

from __future__ import annotations

import json
from typing import Any

from openai_fake_server import Reply

EVENT_STREAM = {"Content-Type": "text/event-stream"}


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    lines = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


def streamed(reply: Reply) -> Reply:
    """``reply`` (a fake server's JSON answer: a chat completion, a message or a response) as its stream."""
    body = reply.json
    if body.get("object") == "chat.completion":
        events = chat_completion_events(body)
    elif body.get("type") == "message":
        events = message_events(body)
    else:
        events = response_events(body)
    return Reply(status=reply.status, body=_sse(events), headers=dict(EVENT_STREAM))


def chat_completion_events(body: dict) -> list[tuple[str | None, Any]]:
    head = {k: body[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    message = body["choices"][0]["message"]

    def chunk(delta: dict, finish: str | None = None) -> tuple[None, dict]:
        return None, head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _halves(message["content"] or "") if piece]
    for index, call in enumerate(message.get("tool_calls") or []):
        first, second = _halves(call["function"]["arguments"])
        start = {"index": index, "id": call["id"], "type": "function"}
        events.append(chunk({"tool_calls": [start | {"function": {"name": call["function"]["name"]}}]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in (first, second)
        ]
    events.append(chunk({}, body["choices"][0]["finish_reason"]))
    events.append((None, head | {"choices": [], "usage": body["usage"]}))
    return [*events, (None, "[DONE]")]


def message_events(body: dict) -> list[tuple[str | None, Any]]:
    usage = body["usage"]
    start = {k: v for k, v in body.items() if k not in ("content", "stop_reason", "usage")}
    start |= {"content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            opened, deltas = (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": piece} for piece in _halves(block["text"])],
            )
        else:
            opened = {k: v for k, v in block.items() if k != "input"} | {"input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _halves(json.dumps(block["input"]))
            ]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened})
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
        )
    )
    return [*events, ("message_stop", {"type": "message_stop"})]


def response_events(body: dict) -> list[tuple[str | None, Any]]:
    created = body | {"status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": created})
    ]
    for index, item in enumerate(body["output"]):
        events.append(
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": index})
        )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    return [*events, ("response.completed", {"type": "response.completed", "response": body})]


def response_body(output: list[dict], usage: tuple[int, int] = (40, 8), model: str = "fake-model") -> dict:
    """An OpenAI Responses answer (``"object": "response"``) with the given output items."""
    prompt, completion = usage
    return {
        "id": f"resp_fake_{abs(hash(json.dumps(output))) % 10**8}",
        "object": "response",
        "created_at": 1,
        "model": model,
        "status": "completed",
        "output": output,
        "usage": {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion},
    }
