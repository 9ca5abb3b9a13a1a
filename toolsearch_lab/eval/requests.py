"""Reading a recorded run's requests (:mod:`toolsearch_lab.eval.compare`): which tools each request let the
model call, which requests lacked the tool their step needed, and a conversation's bill turn by turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolsearch_lab.eval.cost import RequestCost, totals
from toolsearch_lab.eval.scenarios import Scenario, ScenarioStep
from toolsearch_lab.loop.strategy import search_result_names
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.trace import RunTrace

__all__ = ["turn_costs", "unexposed_requests", "visible_tools"]


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
    scenario: Scenario | Sequence[ScenarioStep], trace: Any, visible: Sequence[Sequence[str]]
) -> tuple[int | None, int]:
    """(first request number, count of requests) whose current step's tools were none of them callable.

    The current step of a request is the first step not yet done by the tools that ran before it (a step is
    done when its expected tools ran in order since it started, or one of its ``also_accepted`` ran); in a
    conversation, the first step of the request's turn not yet done in that turn. A step no tool serves is
    passed over: no tool of it can be callable."""
    if isinstance(scenario, Scenario) and scenario.turns:
        first, misses = None, 0
        for number, turn in enumerate(scenario.turns, start=1):
            part = [it for it in trace.iterations if it.turn == number]
            f, m = _unexposed(turn.steps, part, visible)
            first, misses = first if first is not None else f, misses + m
        return first, misses
    steps = scenario.steps if isinstance(scenario, Scenario) else scenario
    return _unexposed(steps, trace.iterations, visible)


def _unexposed(
    steps: Sequence[ScenarioStep], iterations: Sequence[Any], visible: Sequence[Sequence[str]]
) -> tuple[int | None, int]:
    steps = [s for s in steps if s.servable]
    step, since, first, misses = 0, [], None, 0
    for iteration in iterations:
        number = iteration.number
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


def turn_costs(trace: RunTrace, costs: Sequence[RequestCost]) -> list[dict]:
    """A conversation's bill turn by turn: requests, prompt tokens (cached / uncached), cost, steps done."""
    out = []
    for record in trace.turns:
        rows = [c for c, it in zip(costs, trace.iterations, strict=False) if it.turn == record.number]
        steps = [s for s in trace.steps if s.turn == record.number]
        out.append(
            {
                "turn": record.number,
                "user_message": record.user_message,
                **{k: v for k, v in totals(rows).items() if k != "cached_share"},
                "steps_succeeded": sum(s.success for s in steps),
                "steps": len(steps),
                "carried": record.carried,
                "lost": record.lost,
            }
        )
    return out
