"""Notebook 04 (the loop and accumulation): which calls does the loop refuse with accumulation off?"""

from __future__ import annotations

from typing import Any

from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.stepper_demos import rejected_calls, remembering_runs

REMEMBERED = ("weather", "clothing", "currentTime")  # what the remembering model calls in request 4


def judge(rejected: Any, **_: Any) -> Judgement:
    if isinstance(rejected, str):
        rejected = [rejected]
    if not isinstance(rejected, list | tuple | set) or not all(isinstance(n, str) for n in rejected):
        return False, f"my_rejected should be a list of tool names, not {type(rejected).__name__}"
    unknown = sorted(set(rejected) - set(REMEMBERED))
    if unknown:
        return False, (
            f"the model called three tools in request 4, the ones named in the text above (spelled as "
            f"there); {', '.join(unknown)} is not one of them"
        )
    runs = remembering_runs()
    truth = rejected_calls(runs["accumulation off"])
    latest = sorted(set(REMEMBERED) - set(truth))
    if sorted(set(rejected)) == truth:
        return True, (
            f"request 4 exposed only {', '.join(latest)} (the latest search's result): "
            f"{', '.join(truth)} were found by earlier searches and are gone"
        )
    if not rejected:
        return False, "with accumulation off a request exposes only the latest search's results"
    kept = sorted(set(rejected) & set(latest))
    if kept:
        return False, f"{', '.join(kept)} came from the latest search, which stays exposed"
    return False, (
        "your list misses a call: which tools did the searches before the latest one find? With accumulation "
        "off they are not exposed any more"
    )


def solution() -> list[str]:
    my_rejected = ["weather", "clothing"]
    return my_rejected


EXERCISES = (
    Exercise(
        key="04",
        notebook="04_the_loop_and_accumulation",
        answer_cell="c09",
        hint="with accumulation off a request exposes toolSearchTool and the latest search's results only.",
        solve=solution,
        wrong='my_rejected = ["weather"]',
        why="the third search (current time) returned only currentTime; with accumulation off, request 4 "
        "exposes just that, so the tools of the first two searches are refused.",
        judge=judge,
    ),
)
