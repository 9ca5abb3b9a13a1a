"""Why a tool scored what it did under :class:`~toolsearch_lab.index.bm25.index.BM25ToolIndex`.

The index plans Spring's query as :class:`PlanGroup` clauses of :class:`PlanItem` leaves (after Lucene's
rewrite); :func:`explain_doc` scores each leaf the slow, obvious way, one posting list at a time, and keeps
the ones that match the document, with every BM25 input (:class:`TermContribution`).
:func:`build_explanation` wraps them in the shared :class:`~toolsearch_lab.model.Explanation`, with a
:class:`BM25Details` (table rows and a text rendering) as its ``details``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolsearch_lab.index.base import BaseToolIndex
from toolsearch_lab.index.bm25.postings import LENGTH_TABLE, FieldIndex, bm25, idf, idf_array
from toolsearch_lab.model import Contribution, Explanation

__all__ = [
    "BM25Clause",
    "BM25Details",
    "PlanGroup",
    "PlanItem",
    "TermContribution",
    "build_explanation",
    "explain_doc",
]

_F32 = np.float32


@dataclass(frozen=True)
class PlanItem:
    """One leaf query: a TermQuery (one term) or a PhraseQuery (several)."""

    field: str
    terms: tuple[str, ...]
    boost: float

    @property
    def is_phrase(self) -> bool:
        return len(self.terms) > 1


@dataclass(frozen=True)
class PlanGroup:
    """One top-level SHOULD clause of the rewritten BooleanQuery. Lucene sums a nested BooleanQuery's
    leaves in double and rounds to float before the outer sum, so groups are kept apart."""

    label: str
    items: tuple[PlanItem, ...]


@dataclass(frozen=True)
class TermContribution:
    """One leaf of the explanation: a term (or a phrase) in one field and what it added to the score."""

    clause: str
    field: str
    kind: str  # "term" or "phrase"
    term: str
    boost: float
    doc_freq: int
    doc_count: int
    idf: float
    tf: int
    dl: int  # the field's real token count
    dl_norm: int  # the length BM25 used: Lucene's one-byte norm, decoded
    avgdl: float
    contribution: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class BM25Clause:
    """One top-level clause of the rewritten query and the leaves of it that matched one tool."""

    clause: str
    score: float
    terms: tuple[TermContribution, ...]


@dataclass(frozen=True)
class BM25Details:
    """The BM25 evidence behind an :class:`~toolsearch_lab.model.Explanation` (its ``details``): the query
    tokens, every matching clause and leaf with the BM25 inputs. Leaf contributions sum to their clause
    score and clause scores to the total (in float32, in Lucene's summation order; the float64 sum of the
    rounded values can differ in the last float32 bit)."""

    tool_name: str
    query: str
    tokens: tuple[str, ...]
    score: float
    min_score_threshold: float
    clauses: tuple[BM25Clause, ...]

    @property
    def matched(self) -> bool:
        return self.score > 0

    @property
    def above_threshold(self) -> bool:
        return self.matched and _F32(self.score) >= _F32(self.min_score_threshold)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per matching leaf, ready for a DataFrame or an HTML table."""
        return [t.to_dict() for c in self.clauses for t in c.terms]

    def _status(self) -> str:
        if self.above_threshold:
            return "(kept)"
        return f"(below min_score_threshold {self.min_score_threshold})" if self.matched else "(no match)"

    def to_text(self) -> str:
        lines = [
            f"{self.tool_name!r} for query {self.query!r} (tokens {list(self.tokens)}): "
            f"score {self.score:.5f} {self._status()}"
        ]
        for c in self.clauses:
            lines.append(f"  {c.score:.5f}  {c.clause}")
            for t in c.terms:
                lines.append(
                    f"      {t.contribution:.5f}  {t.field}:{t.term!r} {t.kind} boost={t.boost:g} "
                    f"idf={t.idf:.5f} (n={t.doc_freq}, N={t.doc_count}) tf={t.tf} "
                    f"dl={t.dl} (as {t.dl_norm}) avgdl={t.avgdl:.4f}"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def build_explanation(
    tool_name: str,
    query: str,
    terms: Sequence[str],
    row: np.ndarray,
    doc: int,
    clauses: list[BM25Clause],
    *,
    min_score_threshold: float,
    max_results: int,
) -> Explanation:
    """The shared :class:`Explanation` of ``doc``: its score in ``row`` (every tool's exact score), one part
    per matching clause, its rank among the tools a search keeps, and the :class:`BM25Details`."""
    score = float(row[doc])
    details = BM25Details(tool_name, query, tuple(terms), score, min_score_threshold, tuple(clauses))
    parts = tuple(
        Contribution(
            c.clause, c.score, ", ".join(f"{t.field}:{t.term} {t.contribution:.4f}" for t in c.terms)
        )
        for c in clauses
    )
    floor = float(_F32(min_score_threshold))
    rank = BaseToolIndex.rank_of(doc, row, min_score_threshold=floor, matched_only=True)
    return Explanation(
        index="lucene",
        tool_name=tool_name,
        query=query,
        score=score,
        parts=parts,
        returned=rank is not None and rank <= max_results,
        rank=rank,
        details=details,
    )


def explain_doc(
    fields: Mapping[str, FieldIndex], groups: Sequence[PlanGroup], ids: Mapping[str, int], doc: int
) -> list[BM25Clause]:
    """The clauses of ``groups`` that match ``doc``, each with its matching leaves; ``ids`` maps the query
    terms to term ids (-1 when unknown to the index)."""
    clauses: list[BM25Clause] = []
    for g in groups:
        leaves: list[TermContribution] = []
        group_sum = 0.0
        for item_index, docs, scores in _group_hits(fields, g, ids):  # in Lucene's summation order
            i = int(np.searchsorted(docs, doc))
            if i < len(docs) and docs[i] == doc:
                leaf = _leaf(fields, g, g.items[item_index], ids, doc, len(docs), float(_F32(scores[i])))
                group_sum += leaf.contribution
                leaves.append(leaf)
        if leaves:
            clauses.append(BM25Clause(g.label, float(_F32(group_sum)), tuple(leaves)))
    return clauses


def _group_hits(
    fields: Mapping[str, FieldIndex], group: PlanGroup, ids: Mapping[str, int]
) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(item index, docs, float32 scores) of each leaf of one clause that matches something, scored
    one by one (the slow, obvious way; for explanations)."""
    out = []
    for i, item in enumerate(group.items):
        fs = fields[item.field]
        term_ids = [ids.get(t, -1) for t in item.terms]
        if item.is_phrase:
            hits = fs.phrase_scores(term_ids, item.boost)
            if hits is not None:
                out.append((i, hits[0], hits[1]))
        elif fs.doc_count and fs.doc_freq(term_ids[0]):
            docs, den = fs.postings(term_ids[0])
            weight = _F32(_F32(item.boost) * idf(len(docs), fs.doc_count))
            out.append((i, docs, bm25(weight, den)))
    return out


def _leaf(
    fields: Mapping[str, FieldIndex],
    group: PlanGroup,
    item: PlanItem,
    ids: Mapping[str, int],
    doc: int,
    matches: int,
    contribution: float,
) -> TermContribution:
    """One matching leaf of an explanation, with every BM25 input."""
    fs = fields[item.field]
    term_ids = [ids.get(t, -1) for t in item.terms]
    doc_freqs = fs.doc_freqs(np.array(term_ids))
    return TermContribution(
        clause=group.label,
        field=item.field,
        kind="phrase" if item.is_phrase else "term",
        term=" ".join(item.terms),
        boost=item.boost,
        doc_freq=matches if item.is_phrase else int(doc_freqs[0]),
        doc_count=fs.doc_count,
        idf=float(_F32(idf_array(doc_freqs, fs.doc_count).astype(np.float64).sum())),
        tf=fs.phrase_freq(term_ids, doc) if item.is_phrase else fs.term_freq(term_ids[0], doc),
        dl=int(fs.lengths[doc]),
        dl_norm=int(LENGTH_TABLE[fs.norms[doc]]),
        avgdl=float(fs.avgdl),
        contribution=contribution,
    )
