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


_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "cache_write_tokens")
_OPTIONAL_KEYS = ("cached_tokens", "cache_write_tokens")


@dataclass(frozen=True)
class Usage:
    """Token usage as an API reported it (not our own count)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int | None = None  # prompt_tokens_details.cached_tokens, when the server reports it
    cache_write_tokens: int | None = None  # Anthropic's cache_creation_input_tokens (part of prompt_tokens)

    def to_dict(self) -> dict:
        out = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        for key in _OPTIONAL_KEYS:
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_dict(cls, data: object) -> Usage:
        """The inverse of :meth:`to_dict`, for usage read back from a file: counts are integers >= 0."""
        if not isinstance(data, dict):
            raise ValueError(f"usage must be an object, got {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in _USAGE_KEYS)
        if unknown:
            raise ValueError(f"usage has unknown keys {unknown}; expected some of {list(_USAGE_KEYS)}")
        counts: dict[str, int | None] = {}
        for key in _USAGE_KEYS:
            value = data.get(key)
            if value is None and key in _OPTIONAL_KEYS:
                counts[key] = None
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"usage {key} must be an integer >= 0, got {value!r:.40}")
            counts[key] = value
        return cls(**counts)  # type: ignore[arg-type]


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
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(
                f"assistant message content must be a string or null, got {type(content).__name__}"
            )
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise ValueError(f"assistant message tool_calls must be a list, got {type(raw_calls).__name__}")
        calls = []
        for i, raw in enumerate(raw_calls):
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise ValueError(f"assistant message tool_calls[{i}] has no function.name")
            call_id = raw.get("id")
            if call_id is not None and not isinstance(call_id, str):
                raise ValueError(
                    f"assistant message tool_calls[{i}].id must be a string, got {call_id!r:.40}"
                )
            args = fn.get("arguments", "{}")
            if not isinstance(args, str):
                args = json.dumps(args)
            calls.append(ToolCall(call_id or f"call_{i}", fn["name"], args))
        return cls(content, calls)


@runtime_checkable
class ChatModel(Protocol):
    name: str

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        """One model call: the conversation so far and the exposed tool definitions in, one turn out."""
        ...


class ScriptExhausted(RuntimeError):
    """A :class:`ScriptedModel` was called after its last turn: the loop ran longer than scripted."""


class ScriptedModel:
    """Replays given assistant turns in order: for tests, and for replaying recorded real runs.

    Each turn may be an ``AssistantTurn`` or an assistant message dict. Calling it more often than it has
    turns raises :class:`ScriptExhausted`, so a test notices a loop that runs longer than scripted.
    """

    def __init__(self, turns, name: str = "scripted") -> None:
        self.turns = [t if isinstance(t, AssistantTurn) else AssistantTurn.from_message(t) for t in turns]
        self.name = name
        self.calls: list[dict] = []  # what the loop sent each time: messages and tool names

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        if len(self.calls) >= len(self.turns):
            raise ScriptExhausted(
                f"ScriptedModel {self.name!r}: no scripted turn left (had {len(self.turns)})"
            )
        self.calls.append(
            {
                "messages": [dict(m) for m in messages],
                "tools": [t["function"]["name"] for t in tools],
            }
        )
        return self.turns[len(self.calls) - 1]
