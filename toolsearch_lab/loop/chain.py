"""Spring's advisor chain around the tool-search advisor: where a chat-memory advisor sits, and what it does.

A Spring ``ChatClient`` runs its advisors by order, lowest first on the way to the model (outermost) and
last on the way back. The tool-search advisor runs the tool loop at ``ToolCallingAdvisor.DEFAULT_ORDER``
(:data:`TOOL_SEARCH_ADVISOR_ORDER`, +300): an advisor of lower order wraps the whole loop and runs once per
user request; one of higher order runs inside it, once per model request. Where the memory advisor sits (a
:data:`MemoryPlacement`) decides what each request carries, read from spring-ai ``fd3fd6e``:

- ``"none"``: no memory advisor. The application keeps the transcript (tool messages included) and sends it
  with each user message; whatever trims it (a window the application applies) trims the found tools with it.
- ``"outside"``: ``MessageChatMemoryAdvisor`` at its default order,
  ``Advisor.DEFAULT_CHAT_MEMORY_PRECEDENCE_ORDER`` (:data:`DEFAULT_CHAT_MEMORY_ORDER`, +200; commit
  933bfbbce3). Its ``before`` runs once per user request and stores only the user message; its ``after``
  stores only the final answer. No tool message is ever stored, so each new user turn starts with
  ``toolSearchTool`` alone.
- ``"inside"``: the memory advisor at +1000 (:data:`INSIDE_MEMORY_ORDER`, as Spring's integration tests place
  it). It stores every request's user or tool-response message and every reply, and puts what it holds into
  each request *downstream* of the tool-search advisor, whose scan never sees it. Boot's
  ``DefaultChatClient.autoRegisterToolCallingAdvisor`` (~l. 1217-1237) turns the loop's own history off when a
  memory advisor of higher order is registered (``conversationHistoryEnabled(!hasDownstreamMemoryAdvisor)``,
  :func:`conversation_history_enabled`), and ``ToolCallingAdvisor.doGetNextInstructionsForToolCall``
  (~l. 222-234) then continues with [system, last message] only (spring-ai #7034).

:class:`MemoryAdvisor` is ``MessageChatMemoryAdvisor`` (``before`` ~l. 73-107, ``after`` ~l. 136-148) over one
conversation: it reads memory *first*, then stores the new message, so a request carries up to N stored
messages plus the new one. In the ``"inside"`` placement it is what ``ToolSearchAdvisor.run(...,
downstream=...)`` calls around each model request (the :class:`Downstream` protocol).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, Protocol, get_args

from toolsearch_lab.loop.memory import ChatMemory, MemoryUpdate, parse_memory
from toolsearch_lab.loop.settings import ACCUMULATION_SOURCES, AccumulationSource

__all__ = [
    "CHAT_SETTINGS",
    "DEFAULT_CHAT_MEMORY_ORDER",
    "HIGHEST_PRECEDENCE",
    "INSIDE_MEMORY_ORDER",
    "MEMORY_PLACEMENTS",
    "TOOL_SEARCH_ADVISOR_ORDER",
    "Downstream",
    "MemoryAdvisor",
    "MemoryPlacement",
    "chat_settings",
    "check_memory_placement",
    "check_placement",
    "conversation_history_enabled",
    "last_user_or_tool_response",
    "why_lost",
]

HIGHEST_PRECEDENCE: Final = -(2**31)  # Spring's Ordered.HIGHEST_PRECEDENCE (Integer.MIN_VALUE)
TOOL_SEARCH_ADVISOR_ORDER: Final = HIGHEST_PRECEDENCE + 300  # ToolCallingAdvisor.DEFAULT_ORDER
DEFAULT_CHAT_MEMORY_ORDER: Final = HIGHEST_PRECEDENCE + 200  # Advisor.DEFAULT_CHAT_MEMORY_PRECEDENCE_ORDER
INSIDE_MEMORY_ORDER: Final = HIGHEST_PRECEDENCE + 1000  # where Spring's integration tests put memory inside

MemoryPlacement = Literal["none", "outside", "inside"]
MEMORY_PLACEMENTS: tuple[MemoryPlacement, ...] = get_args(MemoryPlacement)
_ORDERS: dict[str, int] = {"outside": DEFAULT_CHAT_MEMORY_ORDER, "inside": INSIDE_MEMORY_ORDER}
# A conversation's settings compared by default, (memory advisor, accumulation source): Spring's reading in
# each placement, and this toolkit's session record with the application resending its transcript.
CHAT_SETTINGS: tuple[tuple[MemoryPlacement, AccumulationSource], ...] = (
    ("none", "session"),
    ("none", "history"),
    ("outside", "history"),
    ("inside", "history"),
)


def check_placement(placement: Any, where: str) -> MemoryPlacement:
    """``placement`` if it is one of :data:`MEMORY_PLACEMENTS`; else a ``ValueError`` naming ``where``."""
    if not isinstance(placement, str) or placement not in MEMORY_PLACEMENTS:
        raise ValueError(
            f"{where}: memory_advisor must be one of {list(MEMORY_PLACEMENTS)} (where Spring's memory "
            f"advisor sits: none, outside the tool loop at +200, inside it at +1000), got {placement!r:.40}"
        )
    return placement


def chat_settings(
    memories: Sequence[str] | None = None,
    sources: Sequence[AccumulationSource] | None = None,
    placements: Sequence[MemoryPlacement] | None = None,
) -> list[tuple[str, MemoryPlacement, AccumulationSource]]:
    """(memory, memory advisor, accumulation source) of each conversation run a comparison makes: every memory
    (default full) in :data:`CHAT_SETTINGS` when neither ``placements`` nor ``sources`` is given; else every
    placement given (default none) with every source given (default history when placements are given,
    session when not). Each value is checked first. Compaction inside the tool loop is refused when asked
    for (the ``Conversation`` refuses it) and left out of the defaults."""
    for spec in memories or ():
        parse_memory(spec)
    for placement in placements or ():
        check_placement(placement, "chat settings")
    for source in sources or ():
        if source not in ACCUMULATION_SOURCES:
            raise ValueError(
                f"accumulation source must be one of {list(ACCUMULATION_SOURCES)}, got {source!r:.40}"
            )
    if placements is None and sources is None:
        settings = [(m, p, s) for m in memories or ["full"] for p, s in CHAT_SETTINGS]
        return [(m, p, s) for m, p, s in settings if not _compacts_inside(parse_memory(m), p)]
    chosen = sources or (["history"] if placements else ["session"])
    settings = [(m, p, s) for m in memories or ["full"] for p in placements or ["none"] for s in chosen]
    for memory, placement, _ in settings:
        check_memory_placement(parse_memory(memory), placement)
    return settings


def check_memory_placement(memory: ChatMemory, placement: MemoryPlacement) -> None:
    """Refuse compaction inside the tool loop: it rewrites whole turns, between user turns, and inside the
    loop it would rewrite the turn being worked on."""
    if _compacts_inside(memory, placement):
        raise ValueError(
            f"memory {memory.describe()!r} with the memory advisor 'inside': compaction rewrites whole turns "
            "between user turns, not the turn the tool loop is working on; use 'full' or 'window:N' inside, "
            "or compaction with 'none' or 'outside'"
        )


def _compacts_inside(memory: ChatMemory, placement: str) -> bool:
    return placement == "inside" and memory.kind == "compact"


_WHY_LOST = {
    "none": "the transcript memory kept no longer holds the search results that found them",
    "outside": "memory outside the tool loop stores no tool result, so the turn searches again",
    "inside": "the loop's own history is off: after a tool call the advisor reads only the last message",
    "session": "the session was evicted, and its record with it",
}


def why_lost(config: Mapping[str, Any]) -> str:
    """Why a conversation's turn lacked found tools, from its trace's config (placement and source)."""
    if config.get("accumulation_source") == "session":
        return _WHY_LOST["session"]
    return _WHY_LOST.get(str(config.get("memory_advisor", "none")), _WHY_LOST["none"])


def conversation_history_enabled(placement: MemoryPlacement) -> bool:
    """Boot's rule: the loop keeps its own history unless a memory advisor of higher order than the tool
    advisor is registered (``!hasDownstreamMemoryAdvisor``)."""
    return placement == "none" or _ORDERS[placement] <= TOOL_SEARCH_ADVISOR_ORDER


class Downstream(Protocol):
    """What runs between the tool-search advisor and the model on every request (Spring: the advisors of
    higher order): ``before`` turns the advisor's messages into the ones the model receives, ``after`` sees
    the model's reply."""

    def before(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def after(self, message: dict[str, Any]) -> None: ...


def last_user_or_tool_response(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Spring's ``Prompt.getLastUserOrToolResponseMessage``: the last user message, or the last tool-response
    message, whichever comes later. Spring's one ``ToolResponseMessage`` holds every result of an assistant
    turn: here those are the run of tool messages that ends there. None: nothing (Spring would store an
    empty user message; a conversation always has a user message)."""
    for i in range(len(messages) - 1, -1, -1):
        role = messages[i].get("role")
        if role == "user":
            return [dict(messages[i])]
        if role == "tool":
            start = i
            while start > 0 and messages[start - 1].get("role") == "tool":
                start -= 1
            return [dict(m) for m in messages[start : i + 1]]
    return []


class MemoryAdvisor:
    """Spring's ``MessageChatMemoryAdvisor`` over one conversation's ``memory`` at ``placement``
    ("outside" or "inside"). :attr:`stored` is what memory holds; :attr:`log` every ``add`` made, in order:
    (how many messages it was given, what memory did)."""

    def __init__(self, memory: ChatMemory, placement: MemoryPlacement) -> None:
        if check_placement(placement, "MemoryAdvisor") == "none":
            raise ValueError("MemoryAdvisor: 'none' means no memory advisor; use 'outside' or 'inside'")
        self.memory = memory
        self.placement = placement
        self.order = _ORDERS[placement]
        self.stored: list[dict[str, Any]] = []
        self.log: list[tuple[int, MemoryUpdate]] = []

    def before(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Read memory, put it before ``messages`` unless they already hold it (``isMemoryAlreadyInPrompt``),
        move the first system message to the front; then store the last user or tool-response message."""
        held = [dict(m) for m in self.stored]
        prompt = [dict(m) for m in messages]
        out = prompt if _contains_run(prompt, held) else held + prompt
        first_system = next((i for i, m in enumerate(out) if m.get("role") == "system"), None)
        if first_system is not None:
            out.insert(0, out.pop(first_system))
        self._add(last_user_or_tool_response(out))
        return out

    def after(self, message: dict[str, Any]) -> None:
        """Store the model's reply."""
        self._add([dict(message)])

    def _add(self, new: list[dict[str, Any]]) -> None:
        if new:
            update = self.memory.add(self.stored, new)
            self.stored = update.messages
            self.log.append((len(new), update))

    def __repr__(self) -> str:
        order = self.order - HIGHEST_PRECEDENCE
        return f"MemoryAdvisor({self.memory.describe()!r}, {self.placement!r}, order=HIGHEST+{order})"


def _contains_run(messages: list[dict[str, Any]], run: list[dict[str, Any]]) -> bool:
    """True when ``run`` is empty or appears in ``messages`` as one contiguous stretch (Spring's
    ``isMemoryAlreadyInPrompt``: memory is not put in twice)."""
    if not run:
        return True
    return any(messages[i : i + len(run)] == run for i in range(len(messages) - len(run) + 1))
