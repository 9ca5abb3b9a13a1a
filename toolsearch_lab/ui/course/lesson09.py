"""Notebook 09 (real runs): a function that finds the first request whose context held a tool a search loaded,
run on the notebook's Claude Code session and on two runs the notebook never shows."""

from __future__ import annotations

from functools import cache
from typing import Any

from toolsearch_lab.eval.scenarios import run_scenario
from toolsearch_lab.trace.run import RunTrace
from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.course.functions import Case, FunctionCheck

TARGET = "mcp__github__add_issue_comment"
# Simulated runs over the GitHub catalog, each with a tool that entered the context some requests before the
# model called it (or without the model ever calling it): "the request that called it" is not the answer.
UNSEEN = (
    ("github-bugfix-week", "pull_request_read"),
    ("github-release-day-user", "request_pull_request_reviewers"),
)


def _first(run: RunTrace, tool: str, found: Any) -> int | None:
    return next((it.number for it in run.iterations if found(it, tool)), None)


def judge(request: Any, *, run: RunTrace, tool: str, **_: Any) -> Judgement:
    """One answer of ``first_in_context(run, tool)``, judged against the run."""
    first = _first(run, tool, lambda it, t: t in it.exposed_tools)
    searched = _first(run, tool, lambda it, t: any(t in s.names for s in it.searches))
    called = _first(run, tool, lambda it, t: any(c.name == t for c in it.tool_calls))
    last = len(run.iterations)
    if isinstance(request, bool) or not isinstance(request, int):
        return (
            False,
            "first_in_context should return a request number (an int, it.number), "
            f"not a {type(request).__name__}",
        )
    if request == first:
        return (
            True,
            "a search result reaches the model with the request after the one whose response searched",
        )
    if not 1 <= request <= last:
        return False, "that is not a request of the run: a run's requests are numbered from 1 (it.number)"
    if request == searched:
        return False, (
            "that is the request whose response asked for the tool; the search result goes back to the model "
            "with a later request, so this request was sent without it"
        )
    if request == called:
        return False, (
            "that is the first request whose response called the tool; a tool can sit in the context for a "
            "while before the model calls it: what a request held is its exposed_tools"
        )
    return False, (
        f"request {request} is not the first whose context held the tool: compare its exposed_tools with "
        "those of the requests before it"
    )


def _cases(session: RunTrace) -> list[Case]:
    shown = Case("the notebook's Claude Code session", (session, TARGET), {"run": session, "tool": TARGET})
    return [shown, *_unseen()]


@cache
def _unseen() -> tuple[Case, ...]:
    cases = []
    for scenario, tool in UNSEEN:
        run = run_scenario(scenario, index="lucene").trace
        cases.append(Case(f"a simulated run of {scenario} ({tool})", (run, tool), {"run": run, "tool": tool}))
    return tuple(cases)


LOOK_AT = (  # when the function is right on the notebook's session only
    "on that run, is the tool in the exposed_tools of the request your function returned, and in those of "
    "the requests before it?"
)


def solution() -> Any:
    def first_in_context(run, tool):
        return next(it.number for it in run.iterations if tool in it.exposed_tools)

    return first_in_context


EXERCISES = (
    Exercise(
        key="09",
        notebook="09_real_models",
        answer_cell="c09",
        hint="run.iterations[i].exposed_tools is what request number run.iterations[i].number held when it "
        "was sent.",
        solve=solution,
        wrong="def first_in_context(run, tool):\n"
        "    return next(it.number for it in run.iterations for s in it.searches if tool in s.names)",
        why="a tool a search loads enters the context of the requests sent after its result came back, and "
        "stays there whether or not the model calls it at once.",
        judge=FunctionCheck(solution, "run", _cases, judge, LOOK_AT),
    ),
)
