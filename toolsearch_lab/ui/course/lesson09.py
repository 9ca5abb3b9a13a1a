"""Notebook 09 (real models): the share of prompt tokens that tool search saved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsearch_lab.ui.course.base import Exercise, Judgement

if TYPE_CHECKING:
    from toolsearch_lab.eval.scenarios.running import ScenarioRun


def judge(saving: Any, *, offline: Any, **_: Any) -> Judgement:
    totals = offline.trace.tokens_total()
    expected = round(100 * (1 - totals["prompt_tool_search"] / totals["prompt_baseline"]))
    if isinstance(saving, bool) or not isinstance(saving, int | float):
        return False, f"my_saving_pct should be a number, not {saving!r}"
    if abs(saving - expected) <= 1:
        return True, f"offline, tool search saved {expected}% of prompt tokens"
    if abs(saving - (100 - expected)) <= 1:
        return False, "that is the share tool search still sent; the saving is the rest"
    if 0 < saving < 1:
        return False, "give a percentage (e.g. 40), not a fraction"
    if saving in (0, 100):
        sent = "as much as sending every tool" if saving == 0 else "nothing at all"
        return False, f"{saving:g}% would mean tool search sent {sent}: read the two prompt totals"
    return False, "compare prompt_tool_search with prompt_baseline in offline.trace.tokens_total()"


def solution(offline: ScenarioRun) -> float:
    totals = offline.trace.tokens_total()
    my_saving_pct = 100 * (1 - totals["prompt_tool_search"] / totals["prompt_baseline"])
    return my_saving_pct


EXERCISES = (
    Exercise(
        key="09",
        notebook="09_real_models",
        answer_cell="c09",
        hint="offline.trace.tokens_total() has prompt_tool_search and prompt_baseline.",
        solve=solution,
        wrong="totals = offline.trace.tokens_total()\n"
        'my_saving_pct = 100 * totals["prompt_tool_search"] / totals["prompt_baseline"]',
        why="the saving is one minus the ratio of what tool search sent to what sending every tool sends.",
        judge=judge,
    ),
)
