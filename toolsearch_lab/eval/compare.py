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
    chat_model_for,
    load_scenario,
    run_scenario,
)
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.strategy import STRATEGY_NAMES, Strategy, make_strategy, search_result_names
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import AssistantTurn
from toolsearch_lab.tokens import TokenCounter

__all__ = [
    "RecordingModel",
    "StrategyRun",
    "compare",
    "compare_strategies",
    "comparison_rows",
    "run_strategy",
]


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
    advisor = ToolSearchAdvisor(
        make_index(index), max_results=max_results, token_counter=counter, index_name=index, strategy=strategy
    )
    recorder = RecordingModel(chat_model_for(model, sc))
    run = run_scenario(sc, model=recorder, advisor=advisor, session_id=f"compare-{sc.name}-{strategy.name}")
    price = (prices or load_prices()).price(price_model)
    completions = [it.tokens.completion for it in run.trace.iterations][: len(recorder.requests)]
    completions += [0] * (len(recorder.requests) - len(completions))
    reported = [it.tokens.api_usage for it in run.trace.iterations]
    costs = request_costs(recorder.requests, completions, price, counter, reported)
    visible = [visible_tools(messages, tools) for messages, tools in recorder.requests]
    return StrategyRun(strategy, index, run, recorder.requests, costs, price, visible)


def compare(
    scenario: Scenario | str | Path,
    strategies: Sequence[str] = STRATEGY_NAMES,
    indexes: Sequence[str] = ("lucene",),
    **options: Any,
) -> list[StrategyRun]:
    """Every strategy x index on one scenario (loaded once); ``options`` go to :func:`run_strategy`."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    unknown = [s for s in strategies if s not in STRATEGY_NAMES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; expected some of {list(STRATEGY_NAMES)}")
    return [run_strategy(sc, name, index, **options) for index in indexes for name in strategies]


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
