"""Messages for the conversation tests, written short: a user, assistant or system message, an assistant
turn calling one tool, and a tool's result."""

from __future__ import annotations

import json
from typing import Any


def u(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def a(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def s(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "function": function}]}


def result(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}
