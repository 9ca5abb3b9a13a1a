"""Notebook 11 (choosing a strategy): which strategy that completes the task is cheapest, caching counted?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.strategy_lab import cheapest_successful


def judge(answer: Any, *, rows: Sequence[dict], **_: Any) -> Judgement:
    """Notebook 11's exercise: which strategy that completes the task is cheapest, caching counted."""
    by_name = {r["strategy"]: r for r in rows}
    if not isinstance(answer, str) or answer not in by_name:
        return False, (
            f"my_cheapest should be a strategy name, as written in the first column of the table at the top "
            f"of this notebook (with its hyphens), not {answer!r}"
        )
    best = cheapest_successful(rows)
    if best is None:
        return False, "no strategy completed the task in these runs, so none is the cheapest that works"
    mine = by_name[answer]
    if answer == best["strategy"]:
        return True, (
            f"{answer} completes the task for ${mine['cost_usd']:.4f}, {mine['cached_share']:.0%} of "
            f"its {mine['prompt_tokens']:,} prompt tokens served from the cache"
        )
    if not mine["success"]:
        return False, (
            f"{answer} does not complete the task (see its steps in the table): a run that fails does not "
            "count, however little it costs"
        )
    why = (
        f"{answer} completes the task, but it is not the cheapest run that does: compare the cost of the "
        "runs that succeed"
    )
    if answer == "all-tools":
        why += "; a cached token is cheaper, not free, and every request still carries every definition"
    return False, why


def solution(rows: Sequence[dict]) -> str:
    my_cheapest = min((r for r in rows if r["success"]), key=lambda r: r["cost_usd"])["strategy"]
    return my_cheapest


EXERCISES = (
    Exercise(
        key="11",
        notebook="11_choosing_a_strategy",
        answer_cell="c11",
        hint="the cost column prices cached tokens at the cache-read rate; a run that fails does not count.",
        solve=solution,
        wrong='my_cheapest = "all-tools"',
        why="caching makes a repeated prefix cheaper, not free: all tools still pays for every definition in "
        "every request, while the search strategies send a few, and only a run that completes the task "
        "counts.",
        judge=judge,
    ),
)
