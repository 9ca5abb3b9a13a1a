"""Every way of loading tools on the same scenario: one graded, costed run per strategy x index.

Each run goes through the same :class:`~toolsearch_lab.loop.advisor.ToolSearchAdvisor` with a different
:mod:`~toolsearch_lab.loop.strategy`, the model wrapped in a :class:`RecordingModel` so the exact requests it
received can be costed under a provider's caching rule (:mod:`toolsearch_lab.eval.cost`).

A conversation scenario adds the chat's dimensions: the chat memory (``full``, ``window:N``, ``compact:N``),
where Spring's memory advisor sits (``memory_advisor``: ``none``, ``outside``, ``inside``;
:mod:`toolsearch_lab.loop.chain`) and where found tools live (``accumulation_source``: ``session`` or
``history``). By default a conversation is billed in the three placements with Spring's reading and with the
session record beside them; its rows are costed turn by turn too (:func:`turn_costs`). The ``pinned`` row
pins the tools :func:`~toolsearch_lab.eval.pins.recommend_pins` chooses from the usage measured on the other
shipped scenarios over the same catalog (:func:`usage_pins`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolsearch_lab.eval.cost import Price, PriceTable, RequestCost, load_prices, request_costs, totals
from toolsearch_lab.eval.pins import PinRecommendation, recommend_pins
from toolsearch_lab.eval.requests import turn_costs, unexposed_requests, visible_tools
from toolsearch_lab.eval.scenarios import (
    Scenario,
    ScenarioRun,
    list_scenarios,
    load_scenario,
    run_scenario,
    scenario_model,
)
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.anthropic_native import ANTHROPIC_VARIANTS, AnthropicNative
from toolsearch_lab.loop.chain import MemoryPlacement, chat_settings
from toolsearch_lab.loop.settings import AccumulationSource
from toolsearch_lab.loop.strategies import COMPARED_BY_DEFAULT, STRATEGY_NAMES, make_strategy
from toolsearch_lab.loop.strategy import Strategy
from toolsearch_lab.models.base import AssistantTurn
from toolsearch_lab.models.simulated import AGENT_NAMES
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import saved_pct

__all__ = [
    "Headline",
    "RecordingModel",
    "StrategyRun",
    "compare",
    "compare_strategies",
    "comparison_rows",
    "headline",
    "run_spring",
    "run_strategy",
    "turn_costs",
    "usage_pins",
]


OWN_INDEX = tuple(f"anthropic-{v}" for v in ANTHROPIC_VARIANTS)  # rows that search with their own index


class RecordingModel:
    """A chat model that remembers every request (messages and tools array) before passing it on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", type(inner).__name__))
        self.requests: list[tuple[list[dict], list[dict]]] = []

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        self.requests.append(([dict(m) for m in messages], [dict(t) for t in tools]))
        return self.inner.complete(messages, tools)


@dataclass
class StrategyRun:
    strategy: Strategy
    index: str
    run: ScenarioRun
    requests: list[tuple[list[dict], list[dict]]]
    costs: list[RequestCost]
    price: Price
    visible: list[list[str]] = field(default_factory=list)  # tools the model could call, per request

    @property
    def trace(self):
        return self.run.trace

    def repriced(self, price: Price) -> StrategyRun:
        """The same run billed at another price (and, if the provider differs, under its caching rule)."""
        completions = [c.completion_tokens for c in self.costs]
        reported = [it.tokens.api_usage for it in self.trace.iterations]
        costs = request_costs(self.requests, completions, price, TokenCounter(self.trace.encoding), reported)
        return replace(self, costs=costs, price=price)

    def row(self) -> dict:
        """The comparison row: requests, prompt tokens (cached / uncached), cost, tools per request,
        success, and the first request whose next step needed a tool the strategy had not exposed."""
        sums = totals(self.costs)
        first, misses = unexposed_requests(self.run.scenario, self.trace, self.visible)
        tools = [len(it.exposed_tools) for it in self.trace.iterations]
        reported = [c.reported_cached for c in self.costs if c.reported_cached is not None]
        config = self.trace.config
        return {
            "scenario": self.run.scenario.name,
            "strategy": self.strategy.name,
            "options": self.strategy.describe(),
            "index": self.index,
            "abstention": config.get("abstention"),  # None for an index that never judges that none fits
            "turns": len(self.trace.turns) or None,
            "memory": config.get("memory"),
            **({"memory_advisor": config.get("memory_advisor")} if self.trace.turns else {}),
            "accumulation_source": config.get("accumulation_source"),
            "model": self.trace.model,
            "priced_as": self.price.model,
            "provider": self.price.provider,
            **sums,
            "reported_cached_tokens": sum(reported) if reported else None,
            "tools_per_request": tools,
            "mean_tools_per_request": sum(tools) / len(tools) if tools else 0.0,
            "success": self.run.grade.success,
            "steps_succeeded": self.run.grade.steps_succeeded,
            "steps": len(self.run.steps),
            "first_unexposed_request": first,
            "unexposed_requests": misses,
            "stop_reason": self.trace.stop_reason,
        }


def run_strategy(
    scenario: Scenario | str | Path,
    strategy: Strategy | str,
    index: str = "lucene",
    model: Any = "simulated",
    max_results: int | None = None,
    prices: PriceTable | None = None,
    price_model: str | None = None,
    encoding: str = "o200k_base",
    idle_turns: int | None = None,
    max_loaded: int | None = None,
    memory: str | None = None,
    accumulation_source: AccumulationSource | None = None,
    pinned: Sequence[str] | None = None,
    index_options: Mapping[str, Any] | None = None,
    memory_advisor: MemoryPlacement | None = None,
) -> StrategyRun:
    """One scenario run with one strategy (a Strategy, or a row name with the unload options applied; the
    ``pinned`` row pins ``pinned``, or what :func:`usage_pins` recommends). A conversation runs with
    ``memory``, ``memory_advisor`` and ``accumulation_source`` (defaults ``full``, ``none`` and
    ``session``). ``index_options`` go to
    the index's constructor (e.g. ``{"abstain": False}``); pins are measured with the index's defaults."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    price = (prices or load_prices()).price(price_model)
    if strategy == "pinned" and pinned is None:
        pinned = usage_pins(sc, index, model, price).pinned
    if isinstance(strategy, str):
        strategy = make_strategy(strategy, idle_turns, max_loaded, pinned=pinned)
    elif pinned is not None:
        raise ValueError("pinned= goes with the 'pinned' row name; a Strategy object carries its own pins")
    counter = TokenCounter(encoding)
    source = accumulation_source or ("session" if sc.turns else None)
    chat_model = scenario_model(model, sc, max_results)
    if isinstance(strategy, AnthropicNative):  # Anthropic's search runs on the server's index, not the run's
        index, chat_model = strategy.index_label, strategy.model_for(chat_model)
        search_index = strategy.make_index()
    else:
        search_index = make_index(index, **(index_options or {}))
    advisor = ToolSearchAdvisor(
        search_index,
        max_results=max_results,
        token_counter=counter,
        index_name=index,
        strategy=strategy,
        accumulation_source=source or "session",
    )
    recorder = RecordingModel(chat_model)
    run = run_scenario(
        sc,
        model=recorder,
        advisor=advisor,
        session_id=f"compare-{sc.name}-{strategy.name}",
        memory=memory if sc.turns else None,
        accumulation_source=source,
        memory_advisor=memory_advisor,
    )
    return _costed(strategy, index, run, recorder, price, counter)


def _costed(
    strategy: Strategy,
    index: str,
    run: ScenarioRun,
    recorder: RecordingModel,
    price: Price,
    counter: TokenCounter,
) -> StrategyRun:
    completions = [it.tokens.completion for it in run.trace.iterations][: len(recorder.requests)]
    completions += [0] * (len(recorder.requests) - len(completions))
    reported = [it.tokens.api_usage for it in run.trace.iterations]
    costs = request_costs(recorder.requests, completions, price, counter, reported)
    visible = [visible_tools(messages, tools) for messages, tools in recorder.requests]
    return StrategyRun(strategy, index, run, recorder.requests, costs, price, visible)


def run_spring(
    scenario: Scenario | str | Path,
    index: str = "lucene",
    accumulation: bool = False,
    model: Any = "simulated",
    prices: PriceTable | None = None,
    price_model: str | None = None,
    encoding: str = "o200k_base",
    memory: str | None = None,
    accumulation_source: AccumulationSource | None = None,
    index_options: Mapping[str, Any] | None = None,
    memory_advisor: MemoryPlacement | None = None,
) -> StrategyRun:
    """The run ``toolsearch-lab demo`` makes: Spring's advisor exactly (no strategy object), recorded and
    billed. Its requests are those of the ``search-only`` row with the same accumulation (a conversation:
    the same memory, memory advisor and accumulation source)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    counter = TokenCounter(encoding)
    recorder = RecordingModel(scenario_model(model, sc))
    run = run_scenario(
        sc,
        index=index,
        accumulation=accumulation,
        model=recorder,
        encoding=encoding,
        memory=memory,
        accumulation_source=accumulation_source,
        index_options=index_options,
        memory_advisor=memory_advisor,
    )
    price = (prices or load_prices()).price(price_model)
    return _costed(
        make_strategy("search-only" if accumulation else "search-only-no-accumulation"),
        index,
        run,
        recorder,
        price,
        counter,
    )


@dataclass(frozen=True)
class Headline:
    """A tool-search run measured against a real all-tools run of the same task (``all_tools``; None when
    it was not made), with the per-request counterfactual beside it: every tool sent in each of the
    tool-search run's own requests. The two differ because a real all-tools agent never searches, so it
    makes fewer requests; billed with a prompt cache, its repeated tool list is mostly served cached."""

    tool_search: StrategyRun
    all_tools: StrategyRun | None

    @property
    def prompt(self) -> int:
        return self.tool_search.trace.tokens_total()["prompt_tool_search"]

    @property
    def counterfactual_prompt(self) -> int:
        return self.tool_search.trace.tokens_total()["prompt_baseline"]

    @property
    def counterfactual_saved_pct(self) -> float:
        return saved_pct(self.prompt, self.counterfactual_prompt)

    @property
    def all_tools_prompt(self) -> int | None:
        return None if self.all_tools is None else totals(self.all_tools.costs)["prompt_tokens"]

    @property
    def saved_pct(self) -> float | None:
        """Prompt tokens saved against the real all-tools run (None without one)."""
        real = self.all_tools_prompt
        return None if not real else saved_pct(self.prompt, real)

    @property
    def cost_usd(self) -> float:
        return totals(self.tool_search.costs)["cost_usd"]

    @property
    def all_tools_cost_usd(self) -> float | None:
        return None if self.all_tools is None else totals(self.all_tools.costs)["cost_usd"]

    @property
    def cost_pct_of_all_tools(self) -> float | None:
        """The tool-search bill as a percentage of the all-tools bill (over 100: tool search costs more)."""
        other = self.all_tools_cost_usd
        return None if not other else 100.0 * self.cost_usd / other

    def row(self) -> dict:
        ts, real = self.tool_search, self.all_tools
        return {
            "scenario": ts.run.scenario.name,
            "strategy": ts.strategy.name,
            "requests": len(ts.costs),
            "prompt_tokens": self.prompt,
            "all_tools_requests": None if real is None else len(real.costs),
            "all_tools_prompt_tokens": self.all_tools_prompt,
            "saved_pct": self.saved_pct,
            "counterfactual_prompt_tokens": self.counterfactual_prompt,
            "counterfactual_saved_pct": self.counterfactual_saved_pct,
            "priced_as": ts.price.model,
            "provider": ts.price.provider,
            "cost_usd": self.cost_usd,
            "all_tools_cost_usd": self.all_tools_cost_usd,
            "cost_pct_of_all_tools": self.cost_pct_of_all_tools,
            "all_tools_cached_share": self.all_tools_cached_share,
            "success": ts.run.grade.success,
            "all_tools_success": None if real is None else real.run.grade.success,
        }

    @property
    def all_tools_cached_share(self) -> float | None:
        """The share of the all-tools run's prompt tokens a prompt cache serves."""
        return None if self.all_tools is None else totals(self.all_tools.costs)["cached_share"]

    def explanation(self) -> str:
        """Why the real saving and the per-request one differ, with this run's figures."""
        n = len(self.tool_search.costs)
        text = f"the per-request figure puts every tool into each of tool search's own {n} requests"
        if self.all_tools is None:
            return text + "; no real all-tools run was made to compare with"
        requests, cached = len(self.all_tools.costs), self.all_tools_cached_share or 0.0
        return (
            f"{text}, but a real all-tools agent never searches, so it makes {requests}; and, billed with "
            f"{self.tool_search.price.provider} prompt caching, {cached:.0%} of its prompt tokens are read "
            "from the cache at a discount"
        )


def headline(
    scenario: Scenario | str | Path,
    index: str = "lucene",
    accumulation: bool = False,
    model: Any = "simulated",
    prices: PriceTable | None = None,
    price_model: str | None = None,
    encoding: str = "o200k_base",
    real_baseline: bool = True,
    memory: str | None = None,
    accumulation_source: AccumulationSource | None = None,
    index_options: Mapping[str, Any] | None = None,
    memory_advisor: MemoryPlacement | None = None,
) -> Headline:
    """Spring's loop on ``scenario`` (as ``demo`` runs it) against a real all-tools run of the same task
    with the same model and price (the ``all-tools`` row of ``compare``; a conversation with the same
    memory and memory advisor); ``real_baseline=False`` skips that second run (e.g. when every request is
    paid for)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    prices = prices or load_prices()
    spring = run_spring(
        sc,
        index,
        accumulation,
        model,
        prices,
        price_model,
        encoding,
        memory,
        accumulation_source,
        index_options,
        memory_advisor,
    )
    real = (
        run_strategy(
            sc,
            "all-tools",
            index,
            model,
            prices=prices,
            price_model=price_model,
            encoding=encoding,
            memory=memory,
            memory_advisor=memory_advisor,
        )
        if real_baseline
        else None
    )
    return Headline(spring, real)


def compare(
    scenario: Scenario | str | Path,
    strategies: Sequence[str] = COMPARED_BY_DEFAULT,
    indexes: Sequence[str] = ("lucene",),
    memories: Sequence[str] | None = None,
    sources: Sequence[AccumulationSource] | None = None,
    placements: Sequence[MemoryPlacement] | None = None,
    **options: Any,
) -> list[StrategyRun]:
    """Every strategy (by default all but ``pinned``, which first measures usage on other scenarios: ask for
    it) x index on one scenario (loaded once), and for a conversation x chat setting
    (:func:`~toolsearch_lab.loop.chain.chat_settings` of ``memories``, ``sources`` and ``placements``: by
    default full memory in :data:`~toolsearch_lab.loop.chain.CHAT_SETTINGS`); ``options`` go to
    :func:`run_strategy`. A strategy with its own index (Anthropic's native search) runs once, with that
    index."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    unknown = [s for s in strategies if s not in STRATEGY_NAMES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; expected some of {list(STRATEGY_NAMES)}")
    if not sc.turns and (memories or sources or placements):
        raise ValueError(
            f"scenario {sc.name!r} is one user request: memories, sources and placements apply to "
            "conversation scenarios (several user turns)"
        )
    pins = options.pop("pinned", None)
    if "pinned" in strategies and pins is None:
        price = (options.get("prices") or load_prices()).price(options.get("price_model"))
        pins = usage_pins(sc, indexes[0], options.get("model", "simulated"), price).pinned
    dimensions = chat_settings(memories, sources, placements) if sc.turns else [(None, None, None)]
    return [
        run_strategy(
            sc,
            name,
            index,
            memory=memory,
            accumulation_source=source,
            memory_advisor=placement,
            **({"pinned": pins} if name == "pinned" else {}),
            **options,
        )
        for memory, placement, source in dimensions
        for position, index in enumerate(indexes)
        for name in strategies
        if position == 0 or name not in OWN_INDEX
    ]


def usage_pins(
    scenario: Scenario, index: str = "lucene", model: Any = "simulated", price: Price | None = None
) -> PinRecommendation:
    """What to pin for ``scenario``, from measured usage: search-only runs of the other shipped scenarios
    over the same tools whose every step a tool serves, its own task in other words left out too (so the
    row is not fitted to its own task), or, when there are none
    (your own catalog), the scenario's own search-only run (in-sample; ``measured_on`` says which). Pinned
    tokens are discounted by ``price``'s cached/uncached ratio: pinned tools lead the tools array, a
    cached prefix. Usage is measured with ``model`` when it names a simulated agent, else with the default
    one: measuring a real model's usage would mean paying for runs of every other scenario."""
    ratio = price.cache_read / price.input if price is not None and price.input else 1.0
    names = tuple(t.name for t in scenario.tools)
    if not isinstance(model, str) or model not in ("simulated", *AGENT_NAMES):
        model = "simulated"
    key = (scenario.name, scenario.tool_set, scenario.examples, names, index, model, ratio)
    if key not in _PINS:
        _PINS[key] = _measured_pins(scenario, names, index, model, ratio)
    return _PINS[key]


_PINS: dict[tuple, PinRecommendation] = {}  # usage_pins per scenario, tools, index, model, discount


def _measured_pins(
    scenario: Scenario, names: tuple[str, ...], index: str, model: Any, ratio: float
) -> PinRecommendation:
    # Only tasks a tool serves at every step: a wrong call made for a request no tool serves is not usage
    # to pin for, and github-off-catalog reuses github's own steps, which would fit github's pins to itself.
    shipped = [load_scenario(n) for n in list_scenarios()]
    others = [
        load_scenario(s.name, examples=scenario.examples) if scenario.examples else s
        for s in shipped
        if s.tool_set == scenario.tool_set and s.family != scenario.family and s.servable
    ]
    others = [o for o in others if tuple(t.name for t in o.tools) == names] or [scenario]
    traces = [run_strategy(o, "search-only", index, model).trace for o in others]
    found = recommend_pins(traces, scenario.tools, cached_ratio=ratio)
    return replace(found, measured_on=[o.name for o in others])


compare_strategies = compare  # the name ``toolsearch_lab`` exports


def comparison_rows(runs: Sequence[StrategyRun]) -> list[dict]:
    return [r.row() for r in runs]
