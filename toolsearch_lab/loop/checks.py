"""The advisor's checks of what a caller or a model hands it, done once at the edge of a run.

A caller's bad input (messages, tools, context, session id) raises a ``ValueError``/``TypeError`` naming the
input before the run starts; a model's unusable turn is reported as a problem the loop records, because once
the run has started it ends with a stop reason and never raises.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from toolsearch_lab.jsonlimits import dumps_checked, shown
from toolsearch_lab.loop.search_tool import MAX_ARGUMENT_DEPTH
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool, session_key
from toolsearch_lab.models.base import AssistantTurn, ToolCall
from toolsearch_lab.schema import schema_problems
from toolsearch_lab.tokens import TokenCounter

__all__ = [
    "MAX_MESSAGE_DEPTH",
    "check_context",
    "check_messages",
    "check_tools",
    "session_of",
    "usable_turn",
]

# Deepest nesting accepted in the caller's messages (same reason and size as the arguments limit: JSON
# encoding recurses per level).
MAX_MESSAGE_DEPTH = MAX_ARGUMENT_DEPTH


def check_context(context: Any) -> dict[str, Any]:
    """A copy of the caller's context (``{}`` for None)."""
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise ValueError(f"context must be a dict (with the session id), got {type(context).__name__}")
    return dict(context)


def session_of(context: Mapping[str, Any], session_id: Any, key: str) -> str:
    """A request's session id: ``session_id``, or Spring's way, the ``context`` value under ``key`` (both:
    they must agree). Checked here, once (:func:`~toolsearch_lab.model.session_key`), and a plain ``str``
    from then on."""
    in_context = context.get(key)
    if session_id is not None:
        plain = session_key(session_id)
        if in_context is not None and in_context != plain:
            raise ValueError(
                f"session_id={plain!r:.60} and context[{key!r}]={in_context!r:.60} disagree; "
                "pass the session id one way"
            )
        return plain
    try:
        return session_key(in_context, what=f"context[{key!r}]")
    except ValueError:
        if in_context is None or isinstance(in_context, str):  # missing or blank: Spring's message
            raise ValueError(
                f"context must contain a non-null value for {key!r} (or pass session_id=...)"
            ) from None
        raise


def usable_turn(turn: Any) -> tuple[AssistantTurn | None, str | None]:
    """(turn, None) when the loop can use it, with dict arguments turned into the JSON text ``ToolCall``
    promises; else (None, what is wrong). A custom ``ChatModel`` may hand back anything."""
    if not isinstance(turn, AssistantTurn):
        return None, f"a {type(turn).__name__}, not an AssistantTurn"
    if turn.content is not None and not isinstance(turn.content, str):
        return None, f"content of type {type(turn.content).__name__}; expected str or None"
    if isinstance(turn.tool_calls, (str, bytes)) or not isinstance(turn.tool_calls, (list, tuple)):
        return None, f"tool_calls of type {type(turn.tool_calls).__name__}; expected a list of ToolCall"
    calls = []
    for i, call in enumerate(turn.tool_calls):
        if not isinstance(call, ToolCall) or not isinstance(call.id, str) or not isinstance(call.name, str):
            return None, f"tool_calls[{i}] that is not a ToolCall with a string id and name: {shown(call)}"
        if not isinstance(call.arguments, str):
            try:
                call = ToolCall(call.id, call.name, dumps_checked(call.arguments, MAX_ARGUMENT_DEPTH))
            except Exception as exc:  # JsonLimitError, or a str() of some argument object that raised
                return None, f"tool_calls[{i}] ({call.name!r:.60}) with arguments that are not JSON: {exc}"
        calls.append(call)
    return (turn if calls == list(turn.tool_calls) else replace(turn, tool_calls=calls)), None


def check_messages(messages: Any, counter: TokenCounter) -> list[dict[str, Any]]:
    """A copy of ``messages`` after checking each is a JSON-representable dict with a string ``role`` whose
    tokens can be counted (what every request of the run will need)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise ValueError(
            f"messages must be a list of message dicts like {{'role': 'user', 'content': '...'}}, "
            f"got {type(messages).__name__}"
        )
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(
                f"messages[{i}] must be a dict like {{'role': 'user', 'content': '...'}}, "
                f"got {type(message).__name__}: {shown(message, 60)}"
            )
        if not isinstance(message.get("role"), str):
            raise ValueError(f"messages[{i}] needs a string 'role' (system, user, assistant or tool)")
        try:
            dumps_checked(dict(message), MAX_MESSAGE_DEPTH)
        except Exception as exc:  # JsonLimitError, or a str() of some content object that raised
            raise ValueError(f"messages[{i}] ({message['role']:.20}) cannot be sent as JSON: {exc}") from None
        try:
            counter.message_tokens(message)
        except ValueError as exc:
            raise ValueError(f"messages[{i}] ({message['role']:.20}): {exc}") from None
        checked.append(dict(message))
    return checked


def check_tools(tools: Any, checked: weakref.WeakValueDictionary[int, Tool]) -> dict[str, Tool]:
    """Registered tools by name. Each schema is checked once per Tool object (``checked`` remembers them):
    a schema that is circular, not JSON (NaN, Infinity) or malformed would otherwise break token counting
    or the request in the middle of a run.

    Two different tools with one name are refused, naming both positions (Spring keeps the first
    silently, with ``putIfAbsent``; the model calls tools by name, so one of them could never run). The
    same tool listed twice is harmless and kept once. A tool named ``toolSearchTool`` is refused: the
    model could not tell it from the meta-tool."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise TypeError(f"tools must be an iterable of Tool objects, got {type(tools).__name__}")
    registered: dict[str, Tool] = {}
    positions: dict[str, int] = {}
    for i, t in enumerate(tools):
        if not isinstance(t, Tool):
            raise TypeError(f"tools must be Tool objects, got {type(t).__name__} (tools[{i}]): {shown(t)}")
        if t.name == TOOL_SEARCH_TOOL_NAME:
            raise ValueError(
                f"tools[{i}] may not be named {TOOL_SEARCH_TOOL_NAME!r}: that is the advisor's meta-tool, "
                "so the model could not call this tool; give it another name"
            )
        if checked.get(id(t)) is not t:
            problems = schema_problems(t.parameters)
            if problems:
                raise ValueError(f"tools[{i}] {t.name!r}: {problems[0]}")
            checked[id(t)] = t
        first = registered.get(t.name)
        if first is None:
            registered[t.name] = t
            positions[t.name] = i
        elif first is not t and (first != t or first.function is not t.function):
            raise ValueError(
                f"tools[{positions[t.name]}] and tools[{i}] are both named {t.name!r}; tool names must be "
                "unique (the model calls a tool by its name, so one of them could never run)"
            )
    return registered
