"""Replies in the shape of Anthropic's Messages API, for tests that drive the real ``anthropic`` SDK against
the loopback fake server (:class:`openai_fake_server.FakeOpenAIServer` serves any JSON on any path).

    with FakeOpenAIServer() as server:
        server.enqueue(message_response([text("hi")]))
        model = AnthropicChatModel(base_url=server.url, api_key="test-key", model="fake")
"""

from __future__ import annotations

import itertools
from typing import Any

from openai_fake_server import Reply

_ids = itertools.count(1)


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict | None = None, id: str | None = None) -> dict:
    return {"type": "tool_use", "id": id or f"toolu_fake_{next(_ids)}", "name": name, "input": input or {}}


def message_response(
    content: list[dict],
    usage: dict[str, Any] | None = None,
    stop_reason: str | None = None,
    model: str = "fake-claude",
) -> Reply:
    """A 200 Messages answer; ``stop_reason`` defaults to tool_use when a block calls a tool."""
    calls = any(block.get("type") == "tool_use" for block in content)
    body = {
        "id": f"msg_fake_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 12, "output_tokens": 4},
    }
    return Reply(json=body)


def anthropic_error(status: int, kind: str, message: str = "error", headers: dict | None = None) -> Reply:
    """An Anthropic-shaped error body: {"type": "error", "error": {"type", "message"}}."""
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return Reply(status=status, json=body, headers=dict(headers or {}))
