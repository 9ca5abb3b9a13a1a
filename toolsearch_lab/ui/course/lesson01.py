"""Notebook 01 (why tool search): how many model requests does an agent that holds every tool make?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsearch_lab.ui.course.base import Exercise, Judgement

if TYPE_CHECKING:
    from toolsearch_lab.eval.scenarios.running import ScenarioRun


def judge(requests: Any, *, head: Any, **_: Any) -> Judgement:
    if isinstance(requests, bool) or not isinstance(requests, int):
        return False, f"my_requests should be a whole number of model requests, not {requests!r}"
    actual = len(head.all_tools.costs)
    searched = len(head.tool_search.costs)
    steps = len(head.tool_search.run.steps)
    if requests == actual:
        return True, (
            f"the real all-tools run made {actual} requests for {steps} steps (a call per step, then the "
            f"answer); tool search made {searched}, because every search is a model request of its own"
        )
    if requests == searched:
        return False, "that is the tool-search run; an agent that holds every tool never searches"
    if requests <= 1:
        return False, "each tool call is a model request of its own, and the answer needs one more"
    if requests == steps:
        return (
            False,
            "a request per step, yes; now count what the model still has to do after the last result",
        )
    return False, "count the requests one by one: a tool call per step is a request, and so is the answer"


def solution(run: ScenarioRun) -> int:
    my_requests = len(run.steps) + 1  # one tool call per step, then the answer
    return my_requests


EXERCISES = (
    Exercise(
        key="01",
        notebook="01_why_tool_search",
        answer_cell="c11",
        hint="the agent calls one tool per step, and each call is a model request; what comes after the last "
        "tool result?",
        solve=solution,
        wrong="my_requests = len(run.trace.iterations)",
        why="an agent that holds every tool never searches: it makes one request per step plus one to "
        "answer, so fewer requests than a tool-search run, which spends requests on searching.",
        judge=judge,
    ),
)
