"""Notebook 09 (real runs): the request whose context first held a tool a search loaded."""

from __future__ import annotations

from typing import Any

from toolsearch_lab.ui.course.base import Exercise, Judgement

TARGET = "mcp__github__add_issue_comment"


def _numbers(session: Any) -> tuple[int, int, int]:
    """(first request whose context held the target, the request whose response searched for it, requests)."""
    first = next(it.number for it in session.iterations if TARGET in it.exposed_tools)
    searched = next(it.number for it in session.iterations for s in it.searches if TARGET in s.names)
    return first, searched, len(session.iterations)


def judge(request: Any, *, session: Any, **_: Any) -> Judgement:
    first, searched, last = _numbers(session)
    if isinstance(request, bool) or not isinstance(request, int):
        return False, f"my_request should be a request number (an int from 1 to {last}), not {request!r:.40}"
    if request == first:
        return (
            True,
            "a search result reaches the model with the request after the one whose response searched",
        )
    if not 1 <= request <= last:
        return False, f"the session made {last} requests, numbered from 1: pick one of them"
    if request == searched:
        return False, (
            "that request's response asked ToolSearch for it; the search result goes back to the model with "
            "a later request, so this request was sent without it"
        )
    if request < searched:
        return (
            False,
            "the tool was still deferred then: it is in that request's deferred list, not its exposed_tools",
        )
    return (
        False,
        "it was in the context earlier than that: look for the first request whose exposed_tools holds it",
    )


def solution(session: Any) -> int:
    target = "mcp__github__add_issue_comment"
    my_request = next(it.number for it in session.iterations if target in it.exposed_tools)
    return my_request


EXERCISES = (
    Exercise(
        key="09",
        notebook="09_real_models",
        answer_cell="c09",
        hint="session.iterations[i].exposed_tools is what request number session.iterations[i].number held.",
        solve=solution,
        wrong="my_request = next(it.number for it in session.iterations for s in it.searches\n"
        '                  if "mcp__github__add_issue_comment" in s.names)',
        why="a tool a search loads enters the context of the requests sent after its result came back.",
        judge=judge,
    ),
)
