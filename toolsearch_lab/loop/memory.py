"""Chat memory: what a conversation keeps of its earlier turns (Spring AI's ``ChatMemory``).

``add(stored, new)`` is one ``ChatMemory.add``: memory after ``new`` joins the ``stored`` messages, trimmed
once. Who adds what, and when, is the placement's (:mod:`toolsearch_lab.loop.chain`): the application
managing its own transcript adds the previous turn's messages and the new user message in one ``add``
(:class:`~toolsearch_lab.loop.conversation.Conversation`, ``memory_advisor="none"``); Spring's
``MessageChatMemoryAdvisor`` adds one message at a time (the user or tool-response message in ``before``,
the model's reply in ``after``). The two do **not** always give the same window: a window trims on each
``add``, so a reply added alone after its turn's user message was cut away stays, while the same messages
added at once are cut down to the next user message (``tests/test_conversations.py`` shows such a case).
Memory never holds the system message: the conversation sends its own each time, as a Spring application
does.

- :class:`FullHistory` - every message, nothing dropped.
- :class:`MessageWindow` - Spring's ``MessageWindowChatMemory`` (default 20 messages), its rule exactly as in
  ``spring-ai-model/.../chat/memory/MessageWindowChatMemory.java`` (``process``, ~l. 81-130; spring-ai
  ``fd3fd6e``; turn-boundary snapping added in commit 848968491f, 2026-06-05):
    1. if the new messages hold a system message that memory does not, memory's system messages go;
    2. the stored messages plus the new ones; if there are at most ``max_messages``, keep them all;
    3. otherwise remove the first ``len - max_messages`` non-system messages, then keep removing up to the
       next user message, so the window starts at a complete turn (when there is no later user message every
       non-system message goes); system messages are always kept.
  One message here is one OpenAI-style message: a tool result each, where Spring's ``ToolResponseMessage``
  holds all the results of one assistant turn (the same count unless the model calls tools in parallel).
- :class:`Compaction` - above ``max_messages``, the oldest complete turns are rewritten into one summary
  message (what Claude Code's and Codex's compaction do) and the newest turns that fit beside it are kept.
  The summary here is written deterministically from what happened (each earlier user message, quoted, the
  tools called with their arguments, the answer): it stands in for the summary a model would write, so runs
  stay offline and repeatable. It names every tool each summarised turn called, and cuts only inside
  quotes, never a line. The summary is known by a key of its message (:data:`SUMMARY_KEY`) that only
  compaction writes, never by its words: a user message that starts like a summary is quoted as what the
  user asked, like any other.

Neither a window nor a summary keeps toolSearchTool results, which is what Spring's advisor reads the
discovered tools from (``accumulation_source`` in :mod:`toolsearch_lab.loop.conversation`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, check_positive_int
from toolsearch_lab.wire import decode_search_result

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "MEMORY_KINDS",
    "SUMMARY_HEADER",
    "SUMMARY_KEY",
    "ChatMemory",
    "Compaction",
    "FullHistory",
    "MemoryKind",
    "MemoryUpdate",
    "MessageWindow",
    "describe_message",
    "parse_memory",
    "summary_message",
    "summary_text",
]

MemoryKind = Literal["full", "window", "compact"]
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)
DEFAULT_MAX_MESSAGES = 20  # MessageWindowChatMemory.DEFAULT_MAX_MESSAGES
SUMMARY_HEADER = "Summary of the earlier conversation (compacted)"
# The key that marks compaction's own summary message (its turns as data). Only compaction sets it: a user
# cannot, since a user gives text; the models send a message's role, content and calls only.
SUMMARY_KEY = "compaction"
SUMMARY_LINES = 40  # a summary keeps at most this many lines (the newest)
LINE_CHARS = 240


@dataclass(frozen=True)
class MemoryUpdate:
    """What memory holds after an ``add``, and what it removed: ``dropped`` (gone), ``summarised`` (rewritten
    into ``summary``, the one message that now stands for them)."""

    messages: list[dict[str, Any]]
    dropped: list[dict[str, Any]] = field(default_factory=list)
    summarised: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None

    @property
    def removed(self) -> list[dict[str, Any]]:
        return self.dropped + self.summarised


class ChatMemory(ABC):
    """What a conversation keeps: ``add(stored, new)`` returns what memory holds once ``new`` arrives."""

    kind: ClassVar[MemoryKind]

    @abstractmethod
    def add(self, stored: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> MemoryUpdate:
        """Memory after ``new`` messages join the ``stored`` ones (neither is changed)."""

    def describe(self) -> str:
        """The memory as the CLI spells it: ``full``, ``window:6``, ``compact:8``."""
        return self.kind

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()!r})"


def _merged(stored: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Spring's step 1 and 2: a new system message replaces the stored ones; then stored + new."""
    stored_list = [dict(m) for m in stored]
    replaces = any(m.get("role") == "system" and dict(m) not in stored_list for m in new)
    kept = [m for m in stored_list if not (replaces and m.get("role") == "system")]
    return kept + [dict(m) for m in new]


def _cut(messages: list[dict[str, Any]], limit: int) -> int:
    """How many non-system messages a window of ``limit`` removes from ``messages`` (Spring's cut, snapped
    forward to the next user message; all of them when there is none)."""
    if len(messages) <= limit:
        return 0
    non_system = [i for i, m in enumerate(messages) if m.get("role") != "system"]
    cut = len(messages) - limit
    while cut < len(non_system) and messages[non_system[cut]].get("role") != "user":
        cut += 1
    return min(cut, len(non_system))


def _split(messages: list[dict[str, Any]], cut: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept, removed): the first ``cut`` non-system messages removed, the rest kept in order."""
    removed_at = {i for i in [i for i, m in enumerate(messages) if m.get("role") != "system"][:cut]}
    kept = [m for i, m in enumerate(messages) if i not in removed_at]
    return kept, [messages[i] for i in sorted(removed_at)]


class FullHistory(ChatMemory):
    """Every message is kept (Spring's system-message rule still applies)."""

    kind = "full"

    def add(self, stored: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> MemoryUpdate:
        return MemoryUpdate(_merged(stored, new))


class MessageWindow(ChatMemory):
    """Spring's ``MessageWindowChatMemory``: the newest ``max_messages`` messages, starting at a user message,
    system messages always kept (the rule is in the module docstring)."""

    kind = "window"

    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> None:
        self.max_messages = check_positive_int(max_messages, "MessageWindow: max_messages")

    def add(self, stored: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> MemoryUpdate:
        messages = _merged(stored, new)
        kept, dropped = _split(messages, _cut(messages, self.max_messages))
        return MemoryUpdate(kept, dropped=dropped)

    def describe(self) -> str:
        return f"window:{self.max_messages}"


class Compaction(ChatMemory):
    """Above ``max_messages``, the oldest complete turns (and any earlier summary) become one summary message,
    a user message that opens the memory; the newest turns that fit beside it are kept as they were."""

    kind = "compact"

    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> None:
        check_positive_int(max_messages, "Compaction: max_messages")
        if max_messages < 2:
            raise ValueError(
                f"Compaction: max_messages must be at least 2 (the summary and the user's message), "
                f"got {max_messages}"
            )
        self.max_messages = max_messages

    def add(self, stored: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> MemoryUpdate:
        messages = _merged(stored, new)
        if len(messages) <= self.max_messages:
            return MemoryUpdate(messages)
        kept, removed = _split(messages, _cut(messages, self.max_messages - 1))
        summary = summary_message(removed)
        system = [m for m in kept if m.get("role") == "system"]
        rest = [m for m in kept if m.get("role") != "system"]
        return MemoryUpdate(system + [summary] + rest, summarised=removed, summary=summary)

    def describe(self) -> str:
        return f"compact:{self.max_messages}"


# ---- the summary -------------------------------------------------------------------------------------------
def summary_message(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The one user message that stands for ``messages``: its text for the model, and under
    :data:`SUMMARY_KEY` the same turns as data (each a line and the tools the turn called), which the next
    compaction carries over instead of reading its own words back."""
    turns = _fold(summary_turns(messages))
    text = "\n".join(
        [
            f"{SUMMARY_HEADER}. It stands in for the messages it replaced; their tool results are not kept:",
            *(turn["line"] for turn in turns),
        ]
    )
    return {"role": "user", "content": text, SUMMARY_KEY: turns}


def summary_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of :func:`summary_message`: one line per earlier user turn (what the user asked, quoted; the
    tools called with their arguments; the searches made; the answer), an earlier summary's turns carried
    over. Deterministic."""
    return str(summary_message(messages)["content"])


def summary_turns(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each user turn of ``messages`` as ``{"line", "tools", "turns"}``: an earlier summary (known by its
    :data:`SUMMARY_KEY`, never by its words) gives its turns as they were; every other user message opens a
    turn, its text quoted."""
    turns: list[dict[str, Any]] = []
    current: list[tuple[str, str]] = []  # (kind, text) of the open turn: "asked", "call", "search", "answer"

    def close() -> None:
        if current:
            turns.append(_turn_entry(current))
            current.clear()

    for message in messages:
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else ""
        earlier = _summary_turns_of(message)
        if earlier is not None:
            close()
            turns += earlier
        elif role == "user":
            close()
            current.append(("asked", f"the user asked: {_quote(text, 100)}"))
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                name = str(fn.get("name", "?"))
                if name == TOOL_SEARCH_TOOL_NAME:
                    query = _quote(_arguments(fn).get("query", ""), 60)
                    current.append(("search", f"I searched for tools ({query})"))
                else:
                    current.append(("call", name))
                    current.append(("called", f"I called {name}({_argument_text(_arguments(fn))})"))
            if text and not message.get("tool_calls"):
                current.append(("answer", text))
    close()
    return turns


def _turn_entry(parts: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """One summary line: every part of the turn; when that is longer than ``LINE_CHARS``, the short form
    (what was asked, the names of the tools called, a shorter answer). Only quotes and argument lists are
    ever shortened, never the line, so the tools a turn called are always named."""
    tools = list(dict.fromkeys(text for kind, text in parts if kind == "call"))
    answers = [text for kind, text in parts if kind == "answer"]
    full = [text for kind, text in parts if kind in ("asked", "called", "search")]
    full += [f"I answered: {_quote(answers[-1], 100)}"] if answers else []
    line = "- " + "; ".join(full)
    if len(line) > LINE_CHARS:
        short = [text for kind, text in parts if kind == "asked"]
        short += [f"tools called: {', '.join(tools)}"] if tools else []
        short += [f"I answered: {_quote(answers[-1], 60)}"] if answers else []
        line = "- " + "; ".join(short)
    return {"line": line, "tools": tools, "turns": 1}


def _summary_turns_of(message: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The turns an earlier summary carries (None: the message is not one of compaction's summaries)."""
    turns = message.get(SUMMARY_KEY)
    if message.get("role") != "user" or not isinstance(turns, list):
        return None
    if not all(
        isinstance(t, dict)
        and isinstance(t.get("line"), str)
        and isinstance(t.get("tools"), list)
        and isinstance(t.get("turns"), int)
        for t in turns
    ):
        return None
    return [dict(t) for t in turns]


def _fold(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most ``SUMMARY_LINES`` lines: the oldest turns beyond them become one line naming every tool
    they called."""
    if len(turns) <= SUMMARY_LINES:
        return turns
    old, kept = turns[: len(turns) - SUMMARY_LINES + 1], turns[len(turns) - SUMMARY_LINES + 1 :]
    tools = list(dict.fromkeys(name for turn in old for name in turn["tools"]))
    count = sum(turn["turns"] for turn in old)
    called = f"called {', '.join(tools)}" if tools else "called no tool"
    return [{"line": f"- {count} earlier turns {called}", "tools": tools, "turns": count}, *kept]


def _arguments(fn: Mapping[str, Any]) -> dict[str, Any]:
    try:
        parsed = json.loads(fn.get("arguments") or "{}")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _argument_text(arguments: Mapping[str, Any]) -> str:
    return _short(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()), 100)


def _quote(text: Any, limit: int) -> str:
    return json.dumps(_short(" ".join(str(text).split()), limit), ensure_ascii=False)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- reading memory's changes ------------------------------------------------------------------------------
def describe_message(message: Mapping[str, Any]) -> str:
    """One line for a message memory removed: its role and what it was (a call, a search result, words)."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    calls = message.get("tool_calls") or []
    if role == "assistant" and calls:
        names = ", ".join(str((c.get("function") or {}).get("name", "?")) for c in calls)
        return f"assistant: calls {_short(names, 100)}"
    if role == "tool":
        name = str(message.get("name") or "tool")
        if name.lower() == TOOL_SEARCH_TOOL_NAME.lower():
            found = decode_search_result(text) or []
            return f"tool: {TOOL_SEARCH_TOOL_NAME} result {_short(', '.join(found) or '(no tools)', 120)}"
        return f"tool: {_short(name, 60)} result"
    if _summary_turns_of(message) is not None:
        return "user: (the earlier summary)"
    return f"{role}: {_quote(text, 80)}"


def parse_memory(spec: str | ChatMemory | None) -> ChatMemory:
    """A memory from its CLI spelling: ``full``, ``window:N`` (Spring's MessageWindowChatMemory; ``window``
    alone is its default, 20) or ``compact:N``; a ChatMemory is returned as is, None is ``full``."""
    if spec is None:
        return FullHistory()
    if isinstance(spec, ChatMemory):
        return spec
    if not isinstance(spec, str):
        raise ValueError(f"memory must be 'full', 'window:N' or 'compact:N', got {spec!r:.60}")
    kind, _, number = spec.strip().partition(":")
    if kind not in MEMORY_KINDS:
        raise ValueError(
            f"memory {spec!r:.60}: unknown kind {kind!r:.30}; expected 'full', 'window:N' or 'compact:N' "
            "(N = the number of messages kept)"
        )
    if kind == "full":
        if number:
            raise ValueError(f"memory {spec!r:.60}: 'full' keeps every message and takes no number")
        return FullHistory()
    if not number:
        if kind == "window":
            return MessageWindow()
        raise ValueError(f"memory {spec!r:.60}: give the number of messages to keep, e.g. 'compact:8'")
    if not number.isdigit() or int(number) < 1:
        raise ValueError(
            f"memory {spec!r:.60}: N must be a whole number of messages >= 1, got {number!r:.30}"
        )
    return MessageWindow(int(number)) if kind == "window" else Compaction(int(number))
