"""A logged run re-priced under every strategy of the strategy lab, and its searches asked of every index:
``compare_replay(path)`` (``toolsearch-lab replay FILE --compare``).

The log (:func:`~toolsearch_lab.replay.load.read_recording`) becomes a script (:mod:`.replay_script`): the
model's moves, as logged. Each strategy row runs that script through the same
:class:`~toolsearch_lab.loop.advisor.ToolSearchAdvisor` the strategy lab (:mod:`.compare`) uses, with the
row's strategy and index, and prices the requests the loop made under the price's provider's caching rule
(:mod:`.cost`), on the run's own catalog. What a counterfactual cannot know it assumes, and each row says so
in one line (:attr:`ReplayRow.assumes`); what every re-run assumes is :data:`EVERY_RERUN`. The searches
part is :mod:`.replay_searches`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.eval.cost import (
    Price,
    PriceTable,
    RequestCost,
    billed_costs,
    load_prices,
    request_costs,
    totals,
)
from toolsearch_lab.eval.pins import recommend_pins
from toolsearch_lab.eval.provider_facts import BY_KEY as FACTS
from toolsearch_lab.eval.replay_script import LoggedIndex, LoggedModel, Script, read_script
from toolsearch_lab.eval.replay_searches import SEARCH_INDEXES, SearchHits, search_hits
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.anthropic_native import AnthropicNative
from toolsearch_lab.loop.pinning import Pinned
from toolsearch_lab.loop.run import TurnReading
from toolsearch_lab.loop.strategies import make_strategy
from toolsearch_lab.loop.strategy import Strategy
from toolsearch_lab.model import Tool, ToolIndex, check_positive_int
from toolsearch_lab.replay.common import Recording
from toolsearch_lab.replay.load import read_recording
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import FailureKind, RunTrace, TranscriptFormat

__all__ = ["EVERY_RERUN", "REPLAY_STRATEGIES", "ReplayComparison", "ReplayRow", "compare_replay"]

LOGGED = "logged"
SPRING = ("search-only", "search-only-no-accumulation")
OTHERS = ("listed-names", "inline-references", "pre-retrieval", "retrieve-then-bind", "pinned")
ANTHROPIC = ("anthropic-regex", "anthropic-bm25")
OPENAI = ("openai-deferred-flat", "openai-deferred-namespaces")
REPLAY_STRATEGIES = ("all-tools", *SPRING, *OTHERS, *ANTHROPIC, *OPENAI)
NAMESPACE_SIZE = 9  # OpenAI: "keep each namespace under 10 functions"
EVERY_RERUN = (
    "the model's moves are kept as logged (another index or loading could change what a model does: the "
    "rows assume it would not); a call the strategy had not exposed gets the loop's error instead of its "
    "result (column 'refused'); the tools the log kept loaded stay loaded wherever there is a search; "
    "output tokens are the log's"
)


@dataclass(frozen=True)
class ReplayRow:
    """One way of running the logged run: its strategy and index, what it assumes (one line), its bill
    request by request (``costs``; the sums are :attr:`bill`), the mean tools array, the logged calls it had
    not exposed and the searches it made (None for the rows read from the log)."""

    strategy: str
    index: str | None
    assumes: str
    costs: list[RequestCost]
    mean_tools: float | None = None
    refused_calls: int | None = None
    searches: int | None = None

    @property
    def bill(self) -> dict[str, Any]:
        """The sums (:func:`~toolsearch_lab.eval.cost.totals`): requests, prompt tokens cached / written /
        uncached, output tokens, ``cost_usd``."""
        return totals(self.costs)

    @property
    def cost_usd(self) -> float:
        return float(self.bill["cost_usd"])

    def to_dict(self) -> dict[str, Any]:
        head = {"strategy": self.strategy, "index": self.index, "assumes": self.assumes}
        tail = {"mean_tools": self.mean_tools, "refused_calls": self.refused_calls, "searches": self.searches}
        return {**head, **self.bill, **tail, "per_request": [c.to_dict() for c in self.costs]}


@dataclass
class ReplayComparison:
    """A logged run (``file``, its ``format``, ``model``, ``provenance``) re-priced (``rows``, the first two
    read from the log) at ``price`` (``priced_as`` says how it was chosen), and its searches asked of every
    index (``searches``). ``notes``: what the log could not give as it is (e.g. definitions)."""

    file: str | None
    format: TranscriptFormat
    model: str
    provenance: str | None
    price: Price
    priced_as: str
    prices_taken: str
    rows: list[ReplayRow]
    searches: SearchHits
    kept: list[str]
    notes: list[str] = field(default_factory=list)

    def row(self, strategy: str, index: str | None = None) -> ReplayRow:
        """The row of ``strategy`` (with ``index``, for the rows that take one)."""
        found = [r for r in self.rows if r.strategy == strategy and (index is None or r.index == index)]
        if not found:
            raise KeyError(f"no row {strategy!r}{f' with index {index!r}' if index else ''}")
        return found[0]

    def to_dict(self) -> dict[str, Any]:
        read = {name: getattr(self, name) for name in ("file", "format", "model", "provenance", "notes")}
        price = {"priced_as": self.price.model, "provider": self.price.provider, "pricing": self.priced_as}
        return {
            **read,
            **price,
            "prices_taken": self.prices_taken,
            "every_rerun": EVERY_RERUN,
            "kept_loaded": self.kept,
            "rows": [r.to_dict() for r in self.rows],
            "searches": self.searches.to_dict(),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def compare_replay(
    path: str | os.PathLike[str],
    *,
    format: TranscriptFormat | None = None,
    catalog: str | os.PathLike[str] | ToolCatalog | list[Tool] | None = None,
    strategies: Sequence[str] = REPLAY_STRATEGIES,
    indexes: Sequence[str] = INDEX_KINDS,
    index: str = "lucene",
    k: int = 5,
    prices: PriceTable | None = None,
    price_model: str | None = None,
    encoding: str = "o200k_base",
) -> ReplayComparison:
    """A logged run (a transcript file, or a shipped one by name; ``format`` and ``catalog`` as for
    :func:`~toolsearch_lab.replay.load.load_transcript`) re-priced under ``strategies`` and its searches
    asked of every index. Spring's loop runs with the logged search results and with each of ``indexes``;
    the other strategies of the lab with ``index``. ``k``: hit@k of the searches. Prices: ``price_model``,
    else the run's own model when ``prices`` (default: the shipped table) has it, else a stand-in of the
    provider, named in ``priced_as``."""
    unknown = [s for s in strategies if s not in REPLAY_STRATEGIES]
    unknown += [i for i in (*indexes, index) if i not in INDEX_KINDS]
    if unknown:
        raise ValueError(
            f"unknown strategies or indexes {unknown}; strategies: {list(REPLAY_STRATEGIES)}, "
            f"indexes: {list(INDEX_KINDS)}"
        )
    check_positive_int(k, "compare_replay: k")
    recording = read_recording(path, format=format, catalog=catalog)
    script = read_script(recording)
    settings = recording.settings
    table = prices or load_prices()
    price, priced_as = table.for_run(recording.model, settings.provider, price_model)
    counter = TokenCounter(encoding)
    built: dict[str, ToolIndex] = {}
    logged = _logged_rows(recording, settings.search_tool_names, price, counter)
    runner = _Runner(script, price, counter, built)
    rows = [*logged, *(row for name in strategies for row in runner.rows(name, indexes, index))]
    hits = search_hits(script, [*indexes, *SEARCH_INDEXES[len(INDEX_KINDS) :]], k, built)
    return ReplayComparison(
        settings.file,
        settings.format,
        recording.model,
        settings.provenance,
        price,
        priced_as,
        table.taken,
        rows,
        hits,
        script.kept,
        [*recording.notes, *script.notes],
    )


def _logged_rows(
    recording: Recording, search_tools: list[str], price: Price, counter: TokenCounter
) -> list[ReplayRow]:
    """The run as the API billed it, and as this project counts its requests."""
    chats = [(r.chat, r.usage) for r in recording.requests if r.chat is not None]
    outputs = [int((usage or {}).get("completion_tokens") or 0) for _, usage in chats]
    ours = request_costs([(chat.messages, chat.tools) for chat, _ in chats], outputs, price, counter)
    searches = sum(len(r.searches) for r in recording.requests)
    label = ", ".join(search_tools) or "none"
    return [
        _row(
            LOGGED,
            label,
            "the run as billed: the API's usage in the log (invented, in a hand-written log), at the price; "
            "it counts what no log holds (the provider's tokenizer, its prompts): compare re-runs with row 2",
            billed_costs([r.usage for r in recording.requests], price),
            searches=searches,
        ),
        _row(
            f"{LOGGED} (our count)",
            label,
            f"the logged requests as this project counts them (o200k), under {price.provider}'s caching "
            "rule: the baseline of every re-run",
            ours,
            [len(chat.tools) for chat, _ in chats],
            searches=searches,
        ),
    ]


def _row(
    strategy: str,
    index: str | None,
    assumes: str,
    costs: list[RequestCost],
    tools: list[int] | None = None,
    refused: int | None = None,
    searches: int | None = None,
) -> ReplayRow:
    return ReplayRow(
        strategy, index, assumes, costs, sum(tools) / len(tools) if tools else None, refused, searches
    )


class _Runner:
    """Runs the script under one strategy and index at a time, sharing each index between rows."""

    def __init__(
        self, script: Script, price: Price, counter: TokenCounter, built: dict[str, ToolIndex]
    ) -> None:
        self.script = script
        self.price = price
        self.counter = counter
        self.built = built
        self._pins: list[str] | None = None

    def rows(self, name: str, indexes: Sequence[str], index: str) -> list[ReplayRow]:
        if name in SPRING:
            return [self._spring(name, i) for i in (LOGGED, *indexes)]
        if name in ANTHROPIC:
            return [self._anthropic(name)]
        if name in OPENAI:
            return [self._openai(name)]
        return [self._lab(name, index)]

    def _anthropic(self, name: str) -> ReplayRow:
        native = AnthropicNative("regex" if name == "anthropic-regex" else "bm25")
        regex = native.variant == "regex"
        if not regex:
            how = "the model's queries as written"
        elif any(s.is_pattern for s in self.script.searches()):
            how = "the model's patterns as written"
        else:
            how = "patterns made of the model's words"
        line = (
            f"Anthropic's {native.variant} search reproduced: the tools array never changes, at most 5 tools "
            f"found per search, expanded in place; {how}, the model's calls kept"
        )
        return self.run(name, self._kept(native), native.make_index(), native.index_label, line, regex)

    def _spring(self, name: str, index: str) -> ReplayRow:
        accumulation = "on" if name == "search-only" else "off: only the latest search's tools exposed"
        where = (
            "each search returns what the logged search returned, the model's calls kept"
            if index == LOGGED
            else f"the model's queries re-run on {index}: the tools it returns are exposed, its calls kept"
        )
        line = f"Spring's loop, accumulation {accumulation}; {where}"
        return self.run(name, self._kept(make_strategy(name)), self._index(index), index, line)

    def _lab(self, name: str, index: str) -> ReplayRow:
        if name == "all-tools":
            line = "every tool in every request; the model's searches are not made, its calls kept"
            return self.run(name, make_strategy(name), self._index(index), None, line)
        if name == "pre-retrieval":
            line = (
                f"the top 10 tools for the user's first message on {index}, no search tool: the model's "
                "searches are not made, a call to a tool not retrieved is refused (kept tools not loaded)"
            )
            return self.run(name, make_strategy(name), self._index(index), index, line)
        if name == "pinned":
            pins = self._pinned(index)
            shown = ", ".join(pins) or "none"
            line = (
                f"Spring's loop (accumulation on) on {index}, with {shown} always loaded: what "
                "recommend_pins picks from this run's own search-only re-run (in-sample: fitted to this "
                "run); the model's calls kept"
            )
            strategy = Pinned(make_strategy("search-only"), list(dict.fromkeys([*self.script.kept, *pins])))
            return self.run(name, strategy, self._index(index), index, line)
        lines = {
            "listed-names": "Spring's loop + every deferred tool's name in the system message",
            "inline-references": "the tools array is the search tool alone, found definitions in its results",
            "retrieve-then-bind": "every search's tools bound for the run at the framework's limit of 5",
        }
        line = f"{lines[name]}; the model's queries re-run on {index}, its calls kept"
        return self.run(name, self._kept(make_strategy(name)), self._index(index), index, line)

    def _openai(self, name: str) -> ReplayRow:
        flat = name == "openai-deferred-flat"
        searchable = [t for t in self.script.tools if t.name in set(self.script.searchable)]
        if flat:
            surface = [t.definition() for t in searchable]
            how = f"flat: {FACTS['openai-flat-billed'].rule}, in every request"
        else:
            spaces, stand_in = self._namespaces(searchable)
            named = self.script.namespace_descriptions
            surface = [Tool(ns, named.get(ns) or _stand_in(fns)).definition() for ns, fns in spaces.items()]
            whose = (
                "stand-ins: the log names none"
                if stand_in
                else "the log's own"
                if spaces
                else "none deferred"
            )
            how = f"in {len(spaces)} namespaces ({whose}): {FACTS['openai-namespace-surface'].rule}"
        line = (
            f"OpenAI tool_search {how}; {FACTS['openai-loaded-at-end'].rule}; each search returns what the "
            "logged search returned, the model's calls kept"
        )
        strategy = self._kept(make_strategy("inline-references"))
        return self.run(name, strategy, LoggedIndex(self.script.searches()), LOGGED, line, surface=surface)

    def _namespaces(self, searchable: list[Tool]) -> tuple[dict[str, list[str]], bool]:
        spaces = {ns: list(members) for ns, members in self.script.namespaces.items()}
        placed = {n for members in spaces.values() for n in members}
        rest = [t.name for t in searchable if t.name not in placed]
        for start in range(0, len(rest), NAMESPACE_SIZE):
            spaces[f"tools_{start // NAMESPACE_SIZE + 1}"] = rest[start : start + NAMESPACE_SIZE]
        return spaces, bool(rest)

    def _kept(self, strategy: Strategy) -> Strategy:
        """The strategy with the tools the log kept loaded always in the tools array."""
        return Pinned(strategy, self.script.kept) if self.script.kept and strategy.offers_search else strategy

    def _index(self, kind: str) -> ToolIndex:
        if kind == LOGGED:
            return LoggedIndex(self.script.searches())
        if kind not in self.built:
            self.built[kind] = make_index(kind)
        return self.built[kind]

    def _pinned(self, index: str) -> list[str]:
        if self._pins is None:
            _, traces = self.play(self._kept(make_strategy("search-only")), self._index(index), index)
            ratio = self.price.cache_read / self.price.input if self.price.input else 1.0
            self._pins = recommend_pins(traces, self.script.tools, self.counter, cached_ratio=ratio).pinned
        return self._pins

    def run(
        self,
        name: str,
        strategy: Strategy,
        index: ToolIndex,
        label: str | None,
        line: str,
        regex: bool = False,
        surface: list[dict[str, Any]] | None = None,
    ) -> ReplayRow:
        model, traces = self.play(strategy, index, label or name, regex)
        requests = [(messages, tools + (surface or [])) for messages, tools in model.requests]
        costs = request_costs(requests, model.outputs, self.price, self.counter)
        calls = [c for t in traces for it in t.iterations for c in it.tool_calls]
        refused = sum(c.failure is FailureKind.NOT_EXPOSED for c in calls)
        searches = sum(c.kind == "search" for c in calls)
        return _row(name, label, line, costs, [len(t) for _, t in requests], refused, searches)

    def play(
        self, strategy: Strategy, index: ToolIndex, label: str, regex: bool = False
    ) -> tuple[LoggedModel, list[RunTrace]]:
        """The script through the advisor loop, turn by turn (a later turn gets the earlier ones' messages
        and reads the tools they found from them, as the logged agents do)."""
        script = self.script
        model = LoggedModel(script, regex_queries=regex)
        advisor = ToolSearchAdvisor(
            index, index_name=label, strategy=strategy, token_counter=self.counter, **_limits(script)
        )
        tools = script.tools_for(model)
        history: list[dict[str, Any]] = []
        traces = []
        for turn in script.turns:
            given = [*history, *turn.opening]
            reading = TurnReading.of("history") if len(script.turns) > 1 else None
            result = advisor.run(model, given, tools, session_id=f"replay-{label}", turn=reading)
            traces.append(result.trace)
            last_user = max((i for i, m in enumerate(result.messages) if m.get("role") == "user"), default=0)
            history = [*given, *result.messages[last_user + 1 :]]
            model.next_turn()
        return model, traces


def _limits(script: Script) -> dict[str, Any]:
    """Advisor limits the logged run cannot reach: every logged call and search runs, results whole."""
    calls = script.calls()
    searches = script.searches()
    longest = max((len(c.result) for c in calls), default=0)
    return {
        "max_calls_per_tool": max(40, len(calls) + 1),
        "max_total_tool_calls": max(150, len(calls) + len(searches) + 1),
        "max_repeated_searches": max(3, len(searches) + 1),
        "max_tool_result_chars": max(100_000, longest + 1),
        "tool_timeout": None,
    }


def _stand_in(members: list[str]) -> str:
    return "Functions: " + ", ".join(members)
