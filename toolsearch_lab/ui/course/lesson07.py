"""Notebook 07 (measuring retrieval): one task's recall@5 and reciprocal rank, worked out by hand; and a
function that finds the abstention threshold turning away nine in ten off-domain requests, run on the
notebook's requests and on two sets of off-domain requests the notebook never shows."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from toolsearch_lab.eval.metrics import recall_at_k, reciprocal_rank
from toolsearch_lab.eval.offcatalog import catalog_tools, load_offcatalog
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.course.functions import Case, FunctionCheck

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
        return False, "the reciprocal rank is 1 only when a needed tool ranks first, 0 when none is returned"
    return False, "the reciprocal rank is 1 / (rank of the first needed tool in the ranking)"


def solution(task_ranking: QueryResult) -> tuple[float, float]:
    ranks = [r for r in task_ranking.ranks.values() if r is not None]  # each needed tool's rank
    my_recall_at_5 = sum(1 for r in ranks if r <= 5) / len(task_ranking.relevant)
    my_rr = 1 / min(ranks)
    return my_recall_at_5, my_rr


OFF_DOMAIN_SHARE = 0.9  # the share of off-domain requests the threshold must turn away
THRESHOLD_SLACK = 0.02  # how far above the smallest such threshold an answer may be
# Off-domain requests the notebook never shows, each set over its own catalog (off-catalog set, catalog):
# questions written by others to the same GitHub catalog, and requests to Spring's demo shop. The smallest
# threshold that turns away nine in ten of each lies well away from the notebook's.
UNSEEN = (
    ("bfcl-irrelevance", "github-mcp", "BFCL's irrelevance questions to the same GitHub catalog"),
    ("calibration", "spring-demo", "off-domain requests to Spring's demo shop (26 tools)"),
)


def judge_threshold(threshold: Any, *, off_domain: Any, **_: Any) -> Judgement:
    """One answer of ``my_threshold(off_domain)``. A refusal says which requirement the threshold misses and
    where to look, never by how much: no share, no count, no direction to move it in."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        return False, (
            "my_threshold should return one confidence, a number between 0 and 1, "
            f"not a {type(threshold).__name__}"
        )
    if not 0 < threshold <= 1:
        return False, "a confidence is above 0 and at most 1; at 0 the index never says 'no tool matches'"
    confidences = sorted(float(c) for c in off_domain)
    needed = -(-9 * len(confidences) // 10)
    lowest = confidences[needed - 1]  # abstaining below anything above it turns away 90 %
    share = sum(1 for c in confidences if c < threshold) / len(confidences)
    at_most = sum(1 for c in confidences if c <= threshold) / len(confidences)
    if share < OFF_DOMAIN_SHARE <= at_most:
        return False, (
            "your threshold is one of the confidences, and a request whose confidence equals the threshold "
            "is still served: the index abstains only when a confidence is below it"
        )
    if share < OFF_DOMAIN_SHARE:
        return False, (
            "the index still serves some of the requests it should turn away: sort the confidences, count "
            "how many nine in ten of them is (rounded up), and see whether that many lie below your threshold"
        )
    if threshold > lowest + THRESHOLD_SLACK:
        return False, (
            "it turns away enough of them, but it is not the smallest threshold that does, and a request the "
            "catalog serves whose confidence falls in between is turned away for nothing: which confidence "
            "must the threshold lie just above?"
        )
    return True, (
        f"below {threshold:.3f} the index says 'no tool matches' for {share:.0%} of the off-domain requests; "
        "the chart shows what that costs the requests it can serve"
    )


@cache
def off_domain_confidences(offcatalog: str, catalog: str) -> tuple[float, ...]:
    """The hybrid index's confidence, with no threshold, for each off-domain request of the off-catalog set
    ``offcatalog`` to ``catalog``: what section 5 of the notebook computes for ``off_domain``."""
    index = make_index("hybrid", min_confidence=0.0)
    index.index_tools(catalog, catalog_tools(catalog))
    requests = [r.query for r in load_offcatalog(offcatalog, catalog) if r.kind == "off-domain"]
    found = [index.search(SearchRequest(catalog, query)).confidence for query in requests]
    return tuple(c.value for c in found if c is not None)


def _threshold_cases(off_domain: Any) -> list[Case]:
    unseen = [
        Case(label, (list(values),), {"off_domain": values})
        for offcatalog, catalog, label in UNSEEN
        for values in [off_domain_confidences(offcatalog, catalog)]
    ]
    shown = Case("the notebook's off-domain requests", (list(off_domain),), {"off_domain": off_domain})
    return [shown, *unseen]


LOOK_AT = (  # when the function is right on the notebook's requests only
    "on that set, sort the confidences: which one must the threshold lie just above, and does your function "
    "find it from the confidences it is given?"
)


def solution_threshold() -> Any:
    def my_threshold(confidences):
        needed = -(-9 * len(confidences) // 10)  # 90 % of the requests, rounded up
        return sorted(confidences)[needed - 1] + 0.001  # just above the needed-th lowest confidence

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
        "it is given and find the one that 90 % of them lie below.",
        solve=solution_threshold,
        wrong="def my_threshold(confidences):\n"
        "    return sorted(confidences)[int(0.9 * len(confidences))]  # the 90th percentile",
        why="a threshold turns away every request whose confidence is below it, so the smallest threshold "
        "that turns away 90 % sits just above the confidence 90 % of the requests do not reach; any higher "
        "one also turns away more of the requests the catalog can serve.",
        judge=FunctionCheck(
            solution_threshold, "confidence list", _threshold_cases, judge_threshold, LOOK_AT
        ),
    ),
)
