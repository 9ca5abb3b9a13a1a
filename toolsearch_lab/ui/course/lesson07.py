"""Notebook 07 (measuring retrieval): one task's recall@5 and reciprocal rank, worked out by hand; and the
abstention threshold that turns away nine in ten off-domain requests."""

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
            return False, f"{recall} would mean {share} of the needed tools rank in the top {k}: count them"
        if near(recall, in_top / k):
            return False, f"recall divides by the number of tools the task needs ({len(needed)}), not by k"
        if near(recall, recall_at_k(ranked, needed, len(ranked))):
            return False, f"that counts every rank shown; recall@{k} counts only ranks 1-{k}"
        return False, f"count the needed tools ranked 1-{k} and divide by the {len(needed)} the task needs"
    listed_first = next((r for r in task_ranking.ranks.values() if r is not None), None)
    if listed_first is not None and listed_first != min(ranks) and near(rr, 1 / listed_first):
        return False, (
            "that is the rank of the first tool in the task's list; the reciprocal rank uses the needed tool "
            "the index ranked highest (the first row marked needed, from the top)"
        )
    if rr in (0, 1):
        return False, "the reciprocal rank is 1 only when a needed tool is #1 and 0 when none is returned"
    return False, "the reciprocal rank is 1 / (rank of the first needed tool in the ranking)"


def solution(task_ranking: QueryResult) -> tuple[float, float]:
    ranks = [r for r in task_ranking.ranks.values() if r is not None]  # each needed tool's rank
    my_recall_at_5 = sum(1 for r in ranks if r <= 5) / len(task_ranking.relevant)
    my_rr = 1 / min(ranks)
    return my_recall_at_5, my_rr


OFF_DOMAIN_SHARE = 0.9  # the share of off-domain requests the threshold must turn away
THRESHOLD_SLACK = 0.02  # how far above the smallest such threshold an answer may be


def judge_threshold(threshold: Any, *, off_domain: Any, **_: Any) -> Judgement:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        return False, f"my_threshold should be a confidence between 0 and 1, not {threshold!r}"
    if not 0 < threshold <= 1:
        return False, "a confidence is above 0 and at most 1; at 0 the index never says 'no tool matches'"
    confidences = sorted(float(c) for c in off_domain)
    needed = -(-9 * len(confidences) // 10)
    lowest = confidences[needed - 1]  # abstaining below anything above it turns away 90 %
    share = sum(1 for c in confidences if c < threshold) / len(confidences)
    if share < OFF_DOMAIN_SHARE:
        return False, (
            f"below {threshold:.3f} the index abstains on {share:.0%} of the off-domain requests, fewer than "
            f"{OFF_DOMAIN_SHARE:.0%}: raise it (count how many confidences lie below it)"
        )
    if threshold > lowest + THRESHOLD_SLACK:
        return False, (
            f"{share:.0%} are turned away, but a lower threshold already turns away {OFF_DOMAIN_SHARE:.0%}, "
            "and every step up also turns away servable requests: look for the smallest one that does"
        )
    return True, (
        f"below {threshold:.3f} the index says 'no tool matches' for {share:.0%} of the off-domain requests; "
        "the chart shows what that costs the requests it can serve"
    )


def solution_threshold(off_domain: list[float]) -> float:
    needed = -(-9 * len(off_domain) // 10)  # 90 % of the requests, rounded up
    my_threshold = sorted(off_domain)[needed - 1] + 0.001  # just above the confidence of the needed-th lowest
    return my_threshold


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
    Exercise(
        key="07-abstention",
        notebook="07_measuring_retrieval",
        answer_cell="c23",
        hint="the index abstains when a request's confidence is below the threshold: sort the confidences "
        "and find the one that 90 % of them lie below.",
        solve=solution_threshold,
        wrong="my_threshold = 0.9  # 90 %",
        why="a threshold turns away every request whose confidence is below it, so the smallest threshold "
        "that turns away 90 % sits just above the confidence 90 % of the requests do not reach; any higher "
        "one also turns away more of the requests the catalog can serve.",
        judge=judge_threshold,
    ),
)
