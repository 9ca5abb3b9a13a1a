"""The small chat-model contract the advisor loop talks to.

Messages and tool definitions use the OpenAI chat-completions shape, because every OpenAI-compatible server
(OpenAI, Ollama, vLLM, LM Studio) speaks it. One call returns one assistant turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from toolsearch_lab.trace import RetryRecord


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model produced it. ``arguments`` is the raw JSON string: it may be malformed,
    and the loop must answer that with an error the model can read, not crash."""

    id: str
    name: str
    arguments: str = "{}"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Usage:
    """Token usage as an API reported it (not our own count)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int | None = None  # prompt_tokens_details.cached_tokens, when the server reports it

    def to_dict(self) -> dict:
        out = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.cached_tokens is not None:
            out["cached_tokens"] = self.cached_tokens
        return out


@dataclass(frozen=True)
class AssistantTurn:
    """One model answer. ``retries`` lists the failed requests that came before it (the loop puts them in
    the iteration's trace); they are not part of the conversation."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    retries: list[RetryRecord] = field(default_factory=list)

    def to_message(self) -> dict:
        """The assistant message to append to the conversation."""
        message: dict = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        return message

    @classmethod
    def from_message(cls, message: dict) -> AssistantTurn:
        """Build a turn from an assistant message dict (used to replay recorded runs)."""
        if not isinstance(message, dict):
            raise ValueError(f"expected an assistant message dict, got {type(message).__name__}")
        if message.get("role", "assistant") != "assistant":
            raise ValueError(f"expected an assistant message, got role {message.get('role')!r:.40}")
        calls = []
        for i, raw in enumerate(message.get("tool_calls") or []):
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise ValueError(f"assistant message tool_calls[{i}] has no function.name")
            args = fn.get("arguments", "{}")
            if not isinstance(args, str):
                args = json.dumps(args)
            calls.append(ToolCall(raw.get("id") or f"call_{i}", fn["name"], args))
        return cls(message.get("content"), calls)


@runtime_checkable
class ChatModel(Protocol):
    name: str

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        """One model call: the conversation so far and the exposed tool definitions in, one turn out."""
        ...


class ScriptedModel:
    """Replays given assistant turns in order: for tests, and for replaying recorded real runs.

    Each turn may be an ``AssistantTurn`` or an assistant message dict. Calling it more often than it has
    turns raises, so a test notices a loop that runs longer than scripted.
    """

    def __init__(self, turns, name: str = "scripted") -> None:
        self.turns = [t if isinstance(t, AssistantTurn) else AssistantTurn.from_message(t) for t in turns]
        self.name = name
        self.calls: list[dict] = []  # what the loop sent each time: messages and tool names

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        if len(self.calls) >= len(self.turns):
            raise RuntimeError(f"ScriptedModel {self.name!r}: no scripted turn left (had {len(self.turns)})")
        self.calls.append(
            {
                "messages": [dict(m) for m in messages],
                "tools": [t["function"]["name"] for t in tools],
            }
        )
        return self.turns[len(self.calls) - 1]
