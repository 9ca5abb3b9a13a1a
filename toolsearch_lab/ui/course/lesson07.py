"""Notebook 07 (measuring retrieval): one task's recall@5 and reciprocal rank, worked out by hand."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsearch_lab.eval.metrics import recall_at_k, reciprocal_rank
from toolsearch_lab.ui.course.base import Exercise, Judgement

if TYPE_CHECKING:
    from toolsearch_lab.eval.metrics import QueryResult


def _fraction_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not a share between 0 and 1 (None when it is one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{name} should be a number between 0 and 1, not {value!r}"
    if 1 < value <= 100:
        return f"{name} is a share between 0 and 1 (e.g. 0.5), not a percentage"
    if not 0 <= value <= 1:
        return f"{name} is a share between 0 and 1, not {value}"
    return None


def judge(recall: Any, rr: Any, *, task_ranking: Any, **_: Any) -> Judgement:
    for name, value in (("my_recall_at_5", recall), ("my_rr", rr)):
        problem = _fraction_problem(name, value)
        if problem:
            return False, problem
    ranked, needed, k = task_ranking.ranked, task_ranking.relevant, 5
    want_recall, want_rr = recall_at_k(ranked, needed, k), reciprocal_rank(ranked, needed)
    ranks = [r for r in task_ranking.ranks.values() if r is not None]
    in_top = sum(1 for r in ranks if r <= k)

    def near(a: float, b: float) -> bool:
        return abs(a - b) <= 0.01

    if near(recall, want_recall) and near(rr, want_rr):
        first = f"1/{min(ranks)}" if ranks else "0 (none returned)"
        return True, (
            f"recall@{k} = {in_top} of {len(needed)} needed tools in the top {k} = {want_recall:.2f}; "
            f"reciprocal rank = {first} = {want_rr:.2f}: only the best-ranked needed tool counts"
        )
    if near(recall, want_rr) and near(rr, want_recall) and not near(want_recall, want_rr):
        return False, "the two answers are swapped: recall@5 first, then the reciprocal rank"
    if not near(recall, want_recall):
        if recall in (0, 1):
            share = "none" if recall == 0 else "all"
            return False, f"{recall} would mean {share} of the needed tools rank in the top {k}: count the ✓"
        if near(recall, in_top / k):
            return False, f"recall divides by the number of tools the task needs ({len(needed)}), not by k"
        if near(recall, recall_at_k(ranked, needed, len(ranked))):
            return False, f"that counts every rank shown; recall@{k} counts only ranks 1-{k}"
        return False, f"count the needed tools ranked 1-{k} and divide by the {len(needed)} the task needs"
    listed_first = next((r for r in task_ranking.ranks.values() if r is not None), None)
    if listed_first is not None and listed_first != min(ranks) and near(rr, 1 / listed_first):
        return False, (
            "that is the rank of the first tool in the task's list; the reciprocal rank uses the needed tool "
            "the index ranked highest (the first ✓ from the top)"
        )
    if rr in (0, 1):
        return False, "the reciprocal rank is 1 only when a needed tool is #1 and 0 when none is returned"
    return False, "the reciprocal rank is 1 / (rank of the first needed tool in the ranking)"


def solution(task_ranking: QueryResult) -> tuple[float, float]:
    ranks = [r for r in task_ranking.ranks.values() if r is not None]  # each needed tool's rank
    my_recall_at_5 = sum(1 for r in ranks if r <= 5) / len(task_ranking.relevant)
    my_rr = 1 / min(ranks)
    return my_recall_at_5, my_rr


EXERCISES = (
    Exercise(
        key="07",
        notebook="07_measuring_retrieval",
        answer_cell="c09",
        hint="recall@5 = needed tools in ranks 1-5 / tools the task needs; the reciprocal rank is "
        "1 / the rank of the highest ✓.",
        solve=solution,
        wrong="my_recall_at_5 = 2 / 10  # two needed tools among ten results\nmy_rr = 1 / 4",
        why="recall asks how many of the needed tools the model would see; the reciprocal rank only looks at "
        "how far down the first useful tool is.",
        judge=judge,
    ),
)
