"""Ways of loading tools, side by side: the strategies, and :func:`make_strategy` to build one by name.

``ToolSearchAdvisor(index)`` is Spring's advisor: its strategy is :class:`SearchOnly`. What a strategy is
(the question the loop asks it before every request) is :mod:`toolsearch_lab.loop.strategy`.

The strategies compared, each a class here (with the system each one comes from):

- :class:`AllTools` - every definition in every request; no meta-tool (the baseline).
- :class:`SearchOnly` - ``toolSearchTool`` first, found tools appended to the ``tools`` array
  (``accumulation`` on: every search's results stay; off: only the latest search's). Spring AI's advisor.
- :class:`ListedNames` - SearchOnly plus the names (optionally one line each) of every deferred tool in the
  system message. Claude Code's deferred tools; OpenAI ``defer_loading`` with namespaces.
- :class:`InlineReferences` - the ``tools`` array never changes (``toolSearchTool`` alone); a search result
  carries the full definitions of the tools found, so they are expanded inside the conversation and callable
  from then on. Anthropic's ``tool_reference`` blocks with ``defer_loading``.
- :class:`PreRetrieval` - top-k tools retrieved from the user's message before the first call, no
  meta-tool. RAG-MCP and many RAG agent recipes.
- :class:`RetrieveThenBind` - a retrieval call returns ids and the framework binds them for the rest of the
  run, at a limit the framework sets (the model cannot ask for more). langgraph-bigtool.
- :class:`~toolsearch_lab.loop.anthropic_native.AnthropicNative` (``anthropic-regex``, ``anthropic-bm25``) -
  Anthropic's server-side tool search reproduced: deferred tools, its regex (case-sensitive, 200 characters)
  or BM25 search, at most 5 results expanded in place.
- :class:`Unload` - a wrapper over any of them: drop loaded tools unused for ``idle_turns`` model turns,
  and/or keep at most ``max_loaded`` (most recently used first). Asked for in anthropics/claude-code#27215,
  NousResearch/hermes-agent#6318.
- :class:`~toolsearch_lab.loop.pinning.Pinned` (row ``pinned``) - search-only with some tools always loaded,
  first in the tools array. Claude Code's ``alwaysLoad``; which to pin: ``recommend_pins``.

A new strategy goes in a module of its own, subclassing :class:`~toolsearch_lab.loop.strategy.Strategy`,
and is named in :data:`STRATEGY_NAMES` and :func:`make_strategy` here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolsearch_lab.loop.anthropic_native import AnthropicNative
from toolsearch_lab.loop.pinning import Pinned
from toolsearch_lab.loop.strategy import (
    RequestPlan,
    RequestView,
    Strategy,
    Wrapper,
    check_result_count,
    first_sentence,
    found_tools,
    last_used,
    one_of,
)
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool, check_positive_int
from toolsearch_lab.wire import encode_inline_result

__all__ = [
    "COMPARED_BY_DEFAULT",
    "RESULT_COUNT_STRATEGIES",
    "STRATEGY_NAMES",
    "UNLOADABLE",
    "AllTools",
    "InlineReferences",
    "ListedNames",
    "PreRetrieval",
    "RetrieveThenBind",
    "SearchOnly",
    "Unload",
    "make_strategy",
    "resolve_strategy",
]


class AllTools(Strategy):
    name = "all-tools"
    offers_search = False

    def plan(self, view: RequestView) -> RequestPlan:
        return RequestPlan(list(view.registered), False)


class SearchOnly(Strategy):
    """Spring's loop, the advisor's default strategy: ``toolSearchTool`` plus the found tools, every
    search's (``accumulation``, Spring's ``referenceToolNameAccumulation``) or the latest one's only."""

    def __init__(self, accumulation: bool = True) -> None:
        self.accumulation = bool(accumulation)
        self.name = "search-only" if self.accumulation else "search-only-no-accumulation"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "accumulation": self.accumulation}


class ListedNames(Strategy):
    """Search plus a list of every deferred tool in the system message: names only, or ``one_line``
    (name: first sentence of the description, cut at ``line_chars``)."""

    name = "listed-names"

    def __init__(self, one_line: bool = False, line_chars: int = 80) -> None:
        if isinstance(line_chars, bool) or not isinstance(line_chars, int) or line_chars < 10:
            raise ValueError(f"ListedNames: line_chars must be an integer >= 10, got {line_chars!r}")
        self.one_line = bool(one_line)
        self.line_chars = line_chars

    def system_suffix(self, default: str, registered: Mapping[str, Tool]) -> str:
        if self.one_line:
            lines = [
                f"- {t.name}: {first_sentence(t.description, self.line_chars)}" for t in registered.values()
            ]
            listing = "\n".join(lines)
        else:
            listing = ", ".join(registered)
        return (
            f"{default}\nThese tools exist but are not loaded; call {TOOL_SEARCH_TOOL_NAME} with a tool's "
            f"name or what it does to load it:\n{listing}"
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "one_line": self.one_line}


class InlineReferences(Strategy):
    """The ``tools`` array is ``toolSearchTool`` alone in every request (so the cached prefix never changes);
    a search result is the list of the found tools' full definitions, which stay callable for the run.

    Anthropic's API expands ``tool_reference`` blocks server-side; over OpenAI-compatible chat completions
    the found tools are not in ``tools``, so this works with a model willing to call a function it read
    about in a tool result (the simulated agent is; check a real model with a recorded run)."""

    name = "inline-references"

    def search_result(self, names: list[str], result: str, registered: Mapping[str, Tool]) -> str:
        return encode_inline_result(registered[n].definition() for n in names if n in registered)

    def plan(self, view: RequestView) -> RequestPlan:
        found = view.found(self.accumulation)
        # Tools the session record carries from earlier turns have no definition in the messages any more:
        # the advisor sends them in the tools array.
        inline = [n for n in found if n in found_tools(view.conversation, view.registered, True, view.strict)]
        return RequestPlan([n for n in found if n not in inline], True, inline, found)


class PreRetrieval(Strategy):
    """Retrieve ``max_results`` tools from the user's message before the first call and send only those;
    the model gets no search tool, so a tool the retrieval missed stays out of reach. (``k`` is the same
    setting under its retrieval-paper name.)"""

    name = "pre-retrieval"
    offers_search = False

    def __init__(self, max_results: int = 10, *, k: int | None = None) -> None:
        self.max_results = check_result_count(one_of(max_results, 10, k, "k"), "PreRetrieval: max_results")

    @property
    def k(self) -> int:
        return self.max_results

    def pre_retrieval(self) -> int | None:
        return self.max_results

    def plan(self, view: RequestView) -> RequestPlan:
        bound = [n for n in view.prebound if n in view.registered]
        return RequestPlan(bound, False, [], bound)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "max_results": self.max_results}


class RetrieveThenBind(Strategy):
    """A retrieval tool returns ids; the framework binds every id returned for the rest of the run, at its
    own ``max_results`` per retrieval (the model's ``maxResults`` is replaced; ``limit`` is the same
    setting under langgraph-bigtool's name). Within one run this binds like accumulation-on search; the
    difference that matters in production, state kept by the framework rather than read from the
    conversation, survives compaction, which a single run does not show."""

    name = "retrieve-then-bind"

    def __init__(self, max_results: int = 5, *, limit: int | None = None) -> None:
        self.max_results = check_result_count(
            one_of(max_results, 5, limit, "limit"), "RetrieveThenBind: max_results"
        )

    @property
    def limit(self) -> int:
        return self.max_results

    def search_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        return {**args, "maxResults": self.max_results}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "max_results": self.max_results}


class Unload(Wrapper):
    """Any strategy, with its loaded tools dropped when unused for more than ``idle_turns`` model turns
    and/or capped at ``max_loaded`` (the most recently found or called stay). A tool counts as used on the
    turn that found it and on every turn that called it. Dropped tools can be found again by searching."""

    def __init__(self, inner: Strategy, idle_turns: int | None = None, max_loaded: int | None = None) -> None:
        if not isinstance(inner, Strategy) or isinstance(inner, Unload):
            raise ValueError(f"Unload: inner must be a Strategy (not another Unload), got {inner!r}")
        for label, value in (("idle_turns", idle_turns), ("max_loaded", max_loaded)):
            if value is not None:
                check_positive_int(value, f"Unload: {label} (or None)")
        if idle_turns is None and max_loaded is None:
            raise ValueError("Unload: set idle_turns, max_loaded or both")
        super().__init__(inner, "unload")
        self.idle_turns = idle_turns
        self.max_loaded = max_loaded

    def plan(self, view: RequestView) -> RequestPlan:
        plan = self.inner.plan(view)
        used = last_used(view.conversation)
        keep = list(plan.loaded)
        if self.idle_turns is not None:
            keep = [n for n in keep if view.turn - used.get(n, 0) <= self.idle_turns]
        if self.max_loaded is not None and len(keep) > self.max_loaded:
            recent = sorted(keep, key=lambda n: -used.get(n, 0))[: self.max_loaded]
            keep = [n for n in keep if n in recent]
        dropped = set(plan.loaded) - set(keep)
        return RequestPlan(
            [n for n in plan.tools_array if n not in dropped],
            plan.offers_search,
            [n for n in plan.inline if n not in dropped],
            keep,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inner": self.inner.describe(),
            "idle_turns": self.idle_turns,
            "max_loaded": self.max_loaded,
        }


def resolve_strategy(strategy: Any, accumulation: bool | None) -> tuple[Strategy, bool]:
    """The advisor's strategy and whether the caller chose it. Without one it is Spring's loop,
    ``SearchOnly(accumulation)`` (default on); a chosen strategy owns its accumulation, so a different
    ``accumulation`` is an error rather than a second, conflicting setting."""
    if isinstance(strategy, Strategy):
        if accumulation is not None and bool(accumulation) != strategy.accumulation:
            raise ValueError(
                f"ToolSearchAdvisor: reference_tool_name_accumulation={accumulation!r} disagrees with "
                f"strategy {strategy!r} (accumulation={strategy.accumulation}); set it on the strategy"
            )
        return strategy, True
    if strategy is not None:
        raise ValueError(f"ToolSearchAdvisor: strategy must be a Strategy or None, got {strategy!r:.80}")
    return SearchOnly(True if accumulation is None else bool(accumulation)), False


# ---- by name ----------------------------------------------------------------------------------------------
STRATEGY_NAMES = (
    "all-tools",
    "search-only",
    "search-only-no-accumulation",
    "listed-names",
    "inline-references",
    "pre-retrieval",
    "retrieve-then-bind",
    "pinned",
    "anthropic-regex",
    "anthropic-bm25",
)

# What compare runs unless told: every row but pinned, whose pins come from running other scenarios first.
COMPARED_BY_DEFAULT = tuple(n for n in STRATEGY_NAMES if n != "pinned")
UNLOADABLE = ("search-only", "search-only-no-accumulation", "listed-names", "retrieve-then-bind")
RESULT_COUNT_STRATEGIES = ("pre-retrieval", "retrieve-then-bind")


def make_strategy(
    name: str,
    idle_turns: int | None = None,
    max_loaded: int | None = None,
    max_results: int | None = None,
    pinned: Sequence[str] | None = None,
) -> Strategy:
    """A strategy by its row name (see :data:`STRATEGY_NAMES`), wrapped in :class:`Unload` when an unload
    option is given and the strategy can reload what it drops (:data:`UNLOADABLE`): all-tools loads nothing;
    inline references live in the conversation history, and dropping them would mean rewriting it
    (compaction, not modelled); pre-retrieval has no search to get a dropped tool back.

    ``max_results`` is the result count of the strategies that own one (:data:`RESULT_COUNT_STRATEGIES`:
    pre-retrieval's ``k``, retrieve-then-bind's ``limit``; None keeps their defaults, 10 and 5). The others
    search with the model's ``maxResults`` or the advisor's, so a value given for them is refused rather
    than ignored. ``pinned`` is the ``pinned`` row's tools (required there, refused elsewhere)."""
    builders: dict[str, Callable[[], Strategy]] = {
        "all-tools": AllTools,
        "search-only": lambda: SearchOnly(True),
        "search-only-no-accumulation": lambda: SearchOnly(False),
        "listed-names": ListedNames,
        "inline-references": InlineReferences,
        "pre-retrieval": lambda: PreRetrieval(10 if max_results is None else max_results),
        "retrieve-then-bind": lambda: RetrieveThenBind(5 if max_results is None else max_results),
        "pinned": lambda: Pinned(SearchOnly(True), pinned or ()),
        "anthropic-regex": lambda: AnthropicNative("regex"),
        "anthropic-bm25": lambda: AnthropicNative("bm25"),
    }
    if name not in builders:
        raise ValueError(f"unknown strategy {name!r}; expected one of {list(STRATEGY_NAMES)}")
    if max_results is not None and name not in RESULT_COUNT_STRATEGIES:
        raise ValueError(
            f"strategy {name!r} has no result count of its own (its searches use the model's maxResults, "
            f"else the advisor's max_results): max_results applies to {', '.join(RESULT_COUNT_STRATEGIES)}"
        )
    if (name == "pinned") != (pinned is not None):
        raise ValueError(
            "strategy 'pinned' needs pinned=[tool names] (recommend_pins measures which), and only it takes "
            f"them; got strategy {name!r} with pinned={pinned!r:.80}"
        )
    strategy = builders[name]()
    if (idle_turns is not None or max_loaded is not None) and name in UNLOADABLE:
        strategy = Unload(strategy, idle_turns, max_loaded)
    return strategy
