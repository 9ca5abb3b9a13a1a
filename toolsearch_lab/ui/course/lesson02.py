"""Notebook 02 (build it yourself): which requests of a scripted model get an error result?"""

from __future__ import annotations

from typing import Any

from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.models.base import ScriptedModel
from toolsearch_lab.ui.course.base import Exercise, Judgement


def error_requests(script: list, tools: list) -> tuple[list[int], list[int], list[int]]:
    """(requests whose call got an error result, requests that searched, requests that called a tool) when
    ``script`` runs through Spring's advisor with accumulation off, as in notebook 02."""
    advisor = ToolSearchAdvisor(make_index("lucene"), reference_tool_name_accumulation=False)
    trace = advisor.run(
        ScriptedModel(script), [{"role": "user", "content": "check"}], tools, session_id="02"
    ).trace
    kinds = [(it.number, {c.kind for c in it.tool_calls}) for it in trace.iterations]
    return (
        [n for n, k in kinds if "rejected" in k],
        [n for n, k in kinds if "search" in k],
        [n for n, k in kinds if k - {"search"}],
    )


def judge(turns: Any, *, script: list, tools: list, **_: Any) -> Judgement:
    if isinstance(turns, int) and not isinstance(turns, bool):
        turns = [turns]
    if not isinstance(turns, list | tuple | set) or not all(
        isinstance(n, int) and not isinstance(n, bool) for n in turns
    ):
        return False, f"my_error_requests should be a list of request numbers, e.g. [2, 5], not {turns!r}"
    outside = sorted(n for n in set(turns) if not 1 <= n <= len(script))
    if outside:
        return False, f"the script has {len(script)} turns, numbered 1 to {len(script)}; {outside} is not one"
    errors, searches, calls = error_requests(script, tools)
    chosen = sorted(set(turns))
    if chosen == errors:
        return True, (
            f"requests {errors} call a tool that the latest search did not return, so the loop answers them "
            "with an error result; every other call names a tool the latest search exposed"
        )
    if not chosen:
        return (
            False,
            "some calls name a tool that no search has returned yet, or that a later search replaced",
        )
    refused_searches = sorted(set(chosen) & set(searches))
    if refused_searches:
        return False, f"request {refused_searches} is a toolSearchTool call: the meta-tool is always exposed"
    if set(chosen) >= set(calls):
        return False, "not every call fails: a tool that the latest search returned is exposed, and it runs"
    missed = sorted(set(errors) - set(chosen))
    if missed:
        return False, f"request {missed} also calls a tool the latest search did not return"
    return (
        False,
        f"request {sorted(set(chosen) - set(errors))} calls a tool the latest search returned: it runs",
    )


def solution() -> list[int]:
    my_error_requests = [1, 6]  # weather before any search; currentTime after the weather search
    return my_error_requests


EXERCISES = (
    Exercise(
        key="02",
        notebook="02_build_it_yourself",
        answer_cell="c07",
        hint="walk the script: after each search only the tools it returned are exposed; a call to any other "
        "tool gets an error result.",
        solve=solution,
        wrong="my_error_requests = [1]",
        why="the loop exposes only what the latest search returned (accumulation off): request 1 calls "
        "weather before any search, request 6 calls currentTime after the weather search replaced it.",
        judge=judge,
    ),
)
