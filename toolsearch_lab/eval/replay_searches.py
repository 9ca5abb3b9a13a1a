"""The model's own search queries in a logged run, asked again of every index of the lab: would the index
have returned the tool the model then called?

**The tool the model then called**, for one logged search: the first response after the search's result
(in the same user turn; a server-side search's own response counts, from the search on) that calls a tool the
search could have returned (one the log sent deferred), and of that response's calls from there to its next
search, every such tool. A search with no such call after it (the run ended, or the model only used tools it
had loaded) has no target and is left out of hit@k. An index **hits at k** when one of the target tools is
among its first k results; its rank is the place of the first target it returned.

Claude Code's ``select:a,b`` lookups name their tools, they do not search: listed, not scored. A query
written for Anthropic's regex search is a pattern: Anthropic's regex index (``anthropic-regex``) takes it as
written, every other index as text. A natural-language query goes to ``anthropic-regex`` as the pattern the
lab's simulated agents write from its words (:func:`~toolsearch_lab.loop.anthropic_native.pattern_of`). The
row ``logged`` is the provider's own search: what the log says it returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from toolsearch_lab.eval.replay_script import LoggedCall, LoggedSearch, Script
from toolsearch_lab.index.anthropic import anthropic_index
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.loop.anthropic_native import ANTHROPIC_VARIANTS, MAX_RESULTS, pattern_of
from toolsearch_lab.model import SearchRequest, ToolIndex

__all__ = ["SEARCH_INDEXES", "IndexAnswer", "IndexHits", "SearchCase", "SearchHits", "search_hits"]

# Every index of the lab a query is asked of: the five kinds and Anthropic's two reproduced searches.
SEARCH_INDEXES = (*INDEX_KINDS, *(f"anthropic-{v}" for v in ANTHROPIC_VARIANTS))
LOGGED = "logged"


@dataclass(frozen=True)
class IndexAnswer:
    """What one index returned for one query: its first k names, the rank of the first target among them
    (None: no target in its first k), how the query was put to it, and an error (a bad pattern)."""

    index: str
    names: list[str]
    rank: int | None
    query_as: str
    error: str | None = None


@dataclass(frozen=True)
class SearchCase:
    """One logged search: its place (1-based) and request, the log's search tool, the query as written,
    what the log says it returned, the tools the model then called (see the module docstring), whether it
    is a ``select:`` lookup, and each index's answer."""

    number: int
    request: int
    tool: str
    query: str
    logged: list[str]
    targets: list[str]
    select: bool
    pattern: bool  # written for Anthropic's regex search
    answers: list[IndexAnswer] = field(default_factory=list)

    @property
    def scored(self) -> bool:
        return bool(self.targets) and not self.select


@dataclass(frozen=True)
class IndexHits:
    """One index over the scored searches: how many had a target in its first result and in its first k,
    and the mean reciprocal rank (a miss counts 0)."""

    index: str
    searches: int
    hit_at_1: int
    hit_at_k: int
    mrr: float


@dataclass
class SearchHits:
    """Every logged search with each index's answer, and each index's hit@1 / hit@k over the scored ones."""

    k: int
    cases: list[SearchCase]
    indexes: list[IndexHits]
    searchable: int  # tools the indexes searched

    @property
    def scored(self) -> int:
        return sum(c.scored for c in self.cases)

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "searchable_tools": self.searchable,
            "scored": self.scored,
            "indexes": [asdict(i) for i in self.indexes],
            "cases": [{**asdict(c), "scored": c.scored} for c in self.cases],
        }


def search_hits(
    script: Script,
    indexes: Sequence[str] = SEARCH_INDEXES,
    k: int = 5,
    built: Mapping[str, ToolIndex] | None = None,
) -> SearchHits:
    """Every search of ``script`` asked of each of ``indexes`` (names from :data:`SEARCH_INDEXES`, or ready
    indexes in ``built``, by label) over the tools the log's searches searched, and hit@1 / hit@k of each
    against the tools the model then called."""
    unknown = [i for i in indexes if i not in SEARCH_INDEXES and i not in (built or {})]
    if unknown:
        raise ValueError(f"unknown indexes {unknown}; expected some of {list(SEARCH_INDEXES)}")
    searchable = [t for t in script.tools if t.name in set(script.searchable)]
    cases = _cases(script)
    for label in indexes:
        index = (built or {}).get(label) or _index(label)
        index.index_tools("replay-searches", searchable)
        queries = [_query_for(label, c) for c in cases]
        for case, (query, how) in zip(cases, queries, strict=True):
            case.answers.append(_answer(index, label, query, how, case.targets, k))
    for case in cases:
        case.answers.insert(0, _ranked(LOGGED, case.logged[:k], case.targets, "as the log returned it"))
    labels = [LOGGED, *indexes]
    return SearchHits(k, cases, [_hits(label, cases) for label in labels], len(searchable))


def _index(label: str) -> ToolIndex:
    if label.startswith("anthropic-"):
        return anthropic_index(label.removeprefix("anthropic-"), MAX_RESULTS)
    return make_index(label)


def _cases(script: Script) -> list[SearchCase]:
    searchable = set(script.searchable)
    cases: list[SearchCase] = []
    for turn in script.turns:
        moves = [(r.number, m) for r in turn.responses for m in r.moves]
        for position, (request, move) in enumerate(moves):
            if isinstance(move, LoggedSearch):
                cases.append(
                    SearchCase(
                        len(cases) + 1,
                        request,
                        move.tool,
                        move.query,
                        list(move.names),
                        _targets(moves[position + 1 :], searchable),
                        move.is_select,
                        move.is_pattern,
                    )
                )
    return cases


def _targets(after: Sequence[tuple[int, Any]], searchable: set[str]) -> list[str]:
    """The searchable tools of the first response (after a search) that calls one, from its first such
    call to its next search."""
    start = next(
        (i for i, (_, m) in enumerate(after) if isinstance(m, LoggedCall) and m.name in searchable), None
    )
    if start is None:
        return []
    response = after[start][0]
    names: list[str] = []
    for number, move in after[start:]:
        if number != response or isinstance(move, LoggedSearch):
            break
        if move.name in searchable and move.name not in names:
            names.append(move.name)
    return names


def _query_for(label: str, case: SearchCase) -> tuple[str, str]:
    """The query ``label`` is asked, and how it was made from the logged one."""
    if label == "anthropic-regex":
        if case.pattern:
            return case.query, "the pattern as written"
        return pattern_of(case.query), "a pattern of its words"
    return case.query, "the pattern, as text" if case.pattern else "as written"


def _answer(index: ToolIndex, label: str, query: str, how: str, targets: list[str], k: int) -> IndexAnswer:
    try:
        names = index.search(SearchRequest("replay-searches", query, k)).tool_names
    except ValueError as exc:  # a pattern the regex index cannot take: a miss, with the reason
        return IndexAnswer(label, [], None, how, str(exc))
    return _ranked(label, names[:k], targets, how)


def _ranked(label: str, names: list[str], targets: list[str], how: str) -> IndexAnswer:
    rank = next((i for i, n in enumerate(names, start=1) if n in targets), None)
    return IndexAnswer(label, names, rank, how)


def _hits(label: str, cases: list[SearchCase]) -> IndexHits:
    ranks = [next(a.rank for a in c.answers if a.index == label) for c in cases if c.scored]
    return IndexHits(
        label,
        len(ranks),
        sum(r == 1 for r in ranks),
        sum(r is not None for r in ranks),
        sum(1 / r for r in ranks if r) / len(ranks) if ranks else 0.0,
    )
