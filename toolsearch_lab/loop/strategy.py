"""What a strategy is: the question the advisor loop asks before every model request, and the answer.

``ToolSearchAdvisor(index)`` asks its strategy, before every model request, which tool definitions go in the
``tools`` array, which tools the model may call, and whether ``toolSearchTool`` is offered at all; at the
start of a run, what to append to the system message and which tools to retrieve before the first call.
Every strategy records the same :class:`~toolsearch_lab.trace.RunTrace` (``Iteration.exposed_tools`` is
always the ``tools`` array as sent). The strategies themselves are in :mod:`toolsearch_lab.loop.strategies`.

A strategy is stateless: everything it decides comes from the conversation so far (as Spring derives the
exposed tools from it), so one strategy object serves many runs and threads. The functions at the end read
that conversation. In a conversation (a ``Conversation``, each turn ``run(..., turn=...)``) the tools found
before come either from the messages the advisor holds (``accumulation_source="history"``, Spring's way) or
from the advisor's record of the session (``"session"``): :meth:`RequestView.found` reads whichever it was
given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.loop.search_tool import MAX_RESULTS_RANGE
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool
from toolsearch_lab.wire import decode_search_result

__all__ = [
    "RequestPlan",
    "RequestView",
    "Strategy",
    "Wrapper",
    "check_result_count",
    "first_sentence",
    "found_tools",
    "last_used",
    "one_of",
    "pick_found",
    "search_groups",
    "search_result_names",
]


@dataclass(frozen=True)
class RequestView:
    """What a strategy may look at to plan one request."""

    conversation: Sequence[Mapping[str, Any]]
    registered: Mapping[str, Tool]
    prebound: Sequence[str] = ()  # tools retrieved before the first call (PreRetrieval)
    strict: bool = False  # Spring's strictness: a search result that is not an array of names raises
    # A conversation turn: the search groups of earlier turns the advisor recorded for the session, oldest
    # first ("session"); and where search results are read from: conversation[scan_from:] (0: every message
    # the advisor holds, "history"; the turn's user message: this turn only; the last message's run of tool
    # results: Spring with conversationHistoryEnabled=false after a tool call; TurnReading.scan_from).
    kept: Sequence[Sequence[str]] = ()
    scan_from: int = 0

    @property
    def turn(self) -> int:
        """Model turns so far (assistant messages in the conversation)."""
        return sum(1 for m in self.conversation if m.get("role") == "assistant")

    def groups(self) -> list[list[str]]:
        """The search groups this request may read: the session's kept ones, then the messages' ones."""
        scanned = search_groups(self.conversation[self.scan_from :], self.strict)
        return [list(g) for g in self.kept] + scanned

    def found(self, accumulate: bool) -> list[str]:
        """Registered tools the searches so far found, in discovery order (spec §7.4-7.5): every group's
        (``accumulate``) or the latest group's only. Unknown names are dropped, as Spring does."""
        return pick_found(self.groups(), self.registered, accumulate)


@dataclass(frozen=True)
class RequestPlan:
    """One request: ``tools_array`` = registered tools whose definitions are sent, in order, after
    ``toolSearchTool`` when ``offers_search``; ``inline`` = tools callable because their definitions were
    expanded inside the conversation; ``loaded`` = the tools an unload policy may drop."""

    tools_array: list[str]
    offers_search: bool = True
    inline: list[str] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)

    @property
    def callable(self) -> list[str]:
        return self.tools_array + [n for n in self.inline if n not in self.tools_array]


class Strategy:
    """The base: Spring's accumulation-on behaviour. Subclasses override what differs."""

    name = "search-only"
    offers_search = True
    accumulation = True  # found tools stay exposed for the rest of the run (Spring's default)

    def system_suffix(self, default: str, registered: Mapping[str, Tool]) -> str:
        """Text appended to the system message ("" for none); ``default`` is the advisor's suffix."""
        return default if self.offers_search else ""

    def pre_retrieval(self) -> int | None:
        """How many tools to retrieve from the user's message before the first call (None: none)."""
        return None

    def search_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """The toolSearchTool arguments actually used (a framework may override the model's)."""
        return args

    def search_result(self, names: list[str], result: str, registered: Mapping[str, Tool]) -> str:
        """The text the model reads for a successful search that returned ``names``."""
        return result

    def plan(self, view: RequestView) -> RequestPlan:
        found = view.found(self.accumulation)
        return RequestPlan(found, True, [], found)

    def describe(self) -> dict[str, Any]:
        """The settings that identify this strategy in a trace's config."""
        return {"name": self.name}

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.describe().items() if k != "name")
        return f"{type(self).__name__}({options})"


class Wrapper(Strategy):
    """A strategy that changes what ``inner`` plans (unloading, pinning): everything else is ``inner``'s."""

    def __init__(self, inner: Strategy, suffix: str) -> None:
        self.inner = inner
        self.name = f"{inner.name}+{suffix}"
        self.offers_search = inner.offers_search
        self.accumulation = inner.accumulation

    def system_suffix(self, default: str, registered: Mapping[str, Tool]) -> str:
        return self.inner.system_suffix(default, registered)

    def pre_retrieval(self) -> int | None:
        return self.inner.pre_retrieval()

    def search_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.inner.search_arguments(args)

    def search_result(self, names: list[str], result: str, registered: Mapping[str, Tool]) -> str:
        return self.inner.search_result(names, result, registered)


# ---- reading the conversation -----------------------------------------------------------------------------
def search_result_names(content: Any, strict: bool = False) -> list[str]:
    """Tool names in a toolSearchTool result (see :func:`toolsearch_lab.wire.decode_search_result`); an
    error object or anything else has none. ``strict`` raises instead, as Spring fails a request whose
    search result is not such an array."""
    return decode_search_result(content, strict=strict) or []


def search_groups(conversation: Sequence[Mapping[str, Any]], strict: bool = False) -> list[list[str]]:
    """Names found by searches, one group per assistant turn that searched (Spring: one tool-response
    message per turn, so parallel searches of one turn form one group)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for message in conversation:
        role = message.get("role")
        if role == "assistant":
            current = None
        elif role == "tool" and str(message.get("name", "")).lower() == TOOL_SEARCH_TOOL_NAME.lower():
            if current is None:
                current = []
                groups.append(current)
            current.extend(search_result_names(message.get("content"), strict))
    return [g for g in groups if g]


def found_tools(
    conversation: Sequence[Mapping[str, Any]],
    registered: Mapping[str, Tool],
    accumulate: bool,
    strict: bool = False,
) -> list[str]:
    """Registered tools named by search results, in discovery order (spec §7.4–7.5): every search's
    (``accumulate``) or the latest searching turn's only, with all its parallel searches. Unknown names
    are dropped, as Spring does."""
    return pick_found(search_groups(conversation, strict), registered, accumulate)


def pick_found(
    groups: Sequence[Sequence[str]], registered: Mapping[str, Tool], accumulate: bool
) -> list[str]:
    """The registered names of every group (``accumulate``) or of the last one, in order, once each."""
    names: list[str] = []
    for group in groups if accumulate else groups[-1:]:
        for name in group:
            if name in registered and name not in names:
                names.append(name)
    return names


def last_used(conversation: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Tool name -> the latest model turn (1-based) that found it by search or called it."""
    last: dict[str, int] = {}
    turn = 0
    for message in conversation:
        role = message.get("role")
        if role == "assistant":
            turn += 1
            for call in message.get("tool_calls") or []:
                name = (call.get("function") or {}).get("name")
                if isinstance(name, str) and name != TOOL_SEARCH_TOOL_NAME:
                    last[name] = turn
        elif role == "tool" and str(message.get("name", "")).lower() == TOOL_SEARCH_TOOL_NAME.lower():
            for name in search_result_names(message.get("content")):
                last[name] = turn
    return last


def one_of(value: Any, default: Any, alias: Any, alias_name: str) -> Any:
    """``value``, or the same setting given under its other name ``alias_name`` (not both)."""
    if alias is None:
        return value
    if value != default:
        raise ValueError(f"give max_results or {alias_name}, not both")
    return alias


def check_result_count(value: Any, label: str) -> int:
    """A framework-set result count: an integer in toolSearchTool's :data:`MAX_RESULTS_RANGE`."""
    low, high = MAX_RESULTS_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(
            f"{label} must be an integer from {low} to {high} (toolSearchTool's maxResults range), "
            f"got {value!r}"
        )
    return value


def first_sentence(text: str, limit: int) -> str:
    sentence = " ".join((text or "").split()).split(". ")[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"
