"""Every way of loading tools on the same scenario: one graded, costed run per strategy x index.

Each run goes through the same :class:`~toolsearch_lab.loop.advisor.ToolSearchAdvisor` with a different
:mod:`~toolsearch_lab.loop.strategy`, the model wrapped in a :class:`RecordingModel` so the exact requests it
received can be costed under a provider's caching rule (:mod:`toolsearch_lab.eval.cost`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolsearch_lab.eval.cost import Price, PriceTable, RequestCost, load_prices, request_costs, totals
from toolsearch_lab.eval.scenarios import (
    Scenario,
    ScenarioRun,
    ScenarioStep,
    load_scenario,
    run_scenario,
)
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.anthropic_native import ANTHROPIC_VARIANTS, AnthropicNative
from toolsearch_lab.loop.strategies import STRATEGY_NAMES, make_strategy
from toolsearch_lab.loop.strategy import Strategy, search_result_names
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import AssistantTurn
from toolsearch_lab.models.factory import make_model
from toolsearch_lab.tokens import TokenCounter

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
        first, misses = unexposed_requests(self.run.scenario.steps, self.trace, self.visible)
        tools = [len(it.exposed_tools) for it in self.trace.iterations]
        reported = [c.reported_cached for c in self.costs if c.reported_cached is not None]
        return {
            "scenario": self.run.scenario.name,
            "strategy": self.strategy.name,
            "options": self.strategy.describe(),
            "index": self.index,
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
) -> StrategyRun:
    """One scenario run with one strategy (a Strategy, or a row name with the unload options applied)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    if isinstance(strategy, str):
        strategy = make_strategy(strategy, idle_turns, max_loaded)
    counter = TokenCounter(encoding)
    chat_model = make_model(model, sc.agent_steps())
    if isinstance(strategy, AnthropicNative):  # Anthropic's search runs on the server's index, not the run's
        index, chat_model = strategy.index_label, strategy.model_for(chat_model)
        search_index = strategy.make_index()
    else:
        search_index = make_index(index)
    advisor = ToolSearchAdvisor(
        search_index, max_results=max_results, token_counter=counter, index_name=index, strategy=strategy
    )
    recorder = RecordingModel(chat_model)
    run = run_scenario(sc, model=recorder, advisor=advisor, session_id=f"compare-{sc.name}-{strategy.name}")
    return _costed(strategy, index, run, recorder, (prices or load_prices()).price(price_model), counter)


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
) -> StrategyRun:
    """The run ``toolsearch-lab demo`` makes: Spring's advisor exactly (no strategy object), recorded and
    billed. Its requests are those of the ``search-only`` row with the same accumulation."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    counter = TokenCounter(encoding)
    recorder = RecordingModel(make_model(model, sc.agent_steps()))
    run = run_scenario(sc, index=index, accumulation=accumulation, model=recorder, encoding=encoding)
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
        return 100.0 * (1 - self.prompt / self.counterfactual_prompt) if self.counterfactual_prompt else 0.0

    @property
    def all_tools_prompt(self) -> int | None:
        return None if self.all_tools is None else totals(self.all_tools.costs)["prompt_tokens"]

    @property
    def saved_pct(self) -> float | None:
        """Prompt tokens saved against the real all-tools run (None without one)."""
        real = self.all_tools_prompt
        return None if not real else 100.0 * (1 - self.prompt / real)

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
) -> Headline:
    """Spring's loop on ``scenario`` (as ``demo`` runs it) against a real all-tools run of the same task
    with the same model and price (the ``all-tools`` row of ``compare``); ``real_baseline=False`` skips
    that second run (e.g. when every request is paid for)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    prices = prices or load_prices()
    spring = run_spring(sc, index, accumulation, model, prices, price_model, encoding)
    real = (
        run_strategy(sc, "all-tools", index, model, prices=prices, price_model=price_model, encoding=encoding)
        if real_baseline
        else None
    )
    return Headline(spring, real)


def compare(
    scenario: Scenario | str | Path,
    strategies: Sequence[str] = STRATEGY_NAMES,
    indexes: Sequence[str] = ("lucene",),
    **options: Any,
) -> list[StrategyRun]:
    """Every strategy x index on one scenario (loaded once); ``options`` go to :func:`run_strategy`. A
    strategy with its own index (Anthropic's native search) runs once, with that index."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    unknown = [s for s in strategies if s not in STRATEGY_NAMES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; expected some of {list(STRATEGY_NAMES)}")
    return [
        run_strategy(sc, name, index, **options)
        for position, index in enumerate(indexes)
        for name in strategies
        if position == 0 or name not in OWN_INDEX
    ]


compare_strategies = compare  # the name ``toolsearch_lab`` exports


def comparison_rows(runs: Sequence[StrategyRun]) -> list[dict]:
    return [r.row() for r in runs]


def visible_tools(messages: Sequence[Mapping], tools: Sequence[Mapping]) -> list[str]:
    """Tools a request let the model call: the tools array plus definitions expanded inline by search
    results in the conversation."""
    names = [t["function"]["name"] for t in tools if t["function"]["name"] != TOOL_SEARCH_TOOL_NAME]
    for message in messages:
        if message.get("role") == "tool" and message.get("name") == TOOL_SEARCH_TOOL_NAME:
            content = message.get("content")
            if isinstance(content, str) and content.lstrip().startswith("[{"):
                names += [n for n in search_result_names(content) if n not in names]
    return names


def unexposed_requests(
    steps: Sequence[ScenarioStep], trace: Any, visible: Sequence[Sequence[str]]
) -> tuple[int | None, int]:
    """(first request number, count of requests) whose current step's tools were none of them callable.

    The current step of a request is the first step not yet done by the tools that ran before it (a step is
    done when its expected tools ran in order since it started, or one of its ``also_accepted`` ran)."""
    step, since, first, misses = 0, [], None, 0
    for number, iteration in enumerate(trace.iterations, start=1):
        if step >= len(steps):
            break
        needed = set(steps[step].expected_tools) | set(steps[step].also_accepted)
        callable_now = set(visible[number - 1]) if number - 1 < len(visible) else set()
        if not needed & callable_now:
            misses += 1
            first = first if first is not None else number
        for call in iteration.tool_calls:
            if call.kind != "tool":
                continue
            since.append(call.name)
            if step < len(steps) and _done(steps[step], since):
                step, since = step + 1, []
    return first, misses


def _done(step: ScenarioStep, called: list[str]) -> bool:
    if any(n in called for n in step.also_accepted):
        return True
    position = 0
    for name in step.expected_tools:
        if name not in called[position:]:
            return False
        position = called.index(name, position) + 1
    return bool(step.expected_tools)
