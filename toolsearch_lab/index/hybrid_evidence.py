"""The hybrid index's evidence: every component score of a batch of requests (:class:`Scores`) and, per
result, the raw scores and ranks behind it (:class:`HybridHit`), as the index explorer and ``explain``
show them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolsearch_lab.model import Tool
from toolsearch_lab.text.tool_text import TextMode

__all__ = ["HybridHit", "Scores", "empty_scores", "hits", "rank_text"]


def _ranks(row: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """1-based rank of every tool in a component's own ranking (score descending, ties in insertion order,
    as the component's ``search`` orders them); 0 where the component does not return the tool."""
    order = np.flatnonzero(matched)
    order = order[np.argsort(-row[order], kind="stable")]
    ranks = np.zeros(len(row), dtype=np.int64)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


@dataclass(frozen=True)
class HybridHit:
    """One fused result with the evidence behind it. Raw scores and ranks are the components' own (the
    rank a component's ``search`` gives the tool; None when it does not return it)."""

    tool_name: str
    score: float  # what search ranks by: the fused score, or the share of another tool's it was raised to
    vector_score: float  # the vector component's score: mean cosine over the views
    keyword_score: float  # the BM25 component's score (0 = no word match)
    vector_normalised: float
    keyword_normalised: float  # the keyword side: normalised word and character scores, blended
    vector_rank: int | None
    keyword_rank: int | None
    view_scores: dict[str, float] = field(default_factory=dict)
    char_score: float = 0.0  # the character n-gram component's cosine (0 when char_share is 0)
    char_rank: int | None = None
    word_normalised: float = 0.0
    char_normalised: float = 0.0
    fused: float | None = None  # the weighted sum of the parts (None: equal to score)
    prerequisite_of: str | None = None  # the tool this one was raised for, as what it needs looked up
    diversity_penalty: float = 0.0  # taken off score by the hybrid's diverse re-ranking (0 when off)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "toolName": self.tool_name,
            "score": round(self.score, 6),
            "vectorScore": round(self.vector_score, 6),
            "keywordScore": round(self.keyword_score, 6),
            "vectorNormalised": round(self.vector_normalised, 6),
            "keywordNormalised": round(self.keyword_normalised, 6),
            "vectorRank": self.vector_rank,
            "keywordRank": self.keyword_rank,
            "charScore": round(self.char_score, 6),
            "charRank": self.char_rank,
            "viewScores": {k: round(v, 6) for k, v in self.view_scores.items()},
            "prerequisiteOf": self.prerequisite_of,
        }
        if self.diversity_penalty:  # only with diversity on: the output without it stays as it was
            out["diversityPenalty"] = round(self.diversity_penalty, 6)
        return out


@dataclass(frozen=True)
class Scores:
    """Every component score of a batch of queries over one session's tools, ``[n_queries, n_tools]``."""

    tools: list[Tool]
    views: dict[TextMode, np.ndarray]
    vector: np.ndarray
    keyword: np.ndarray
    char: np.ndarray
    vector_normalised: np.ndarray
    word_normalised: np.ndarray
    char_normalised: np.ndarray
    keyword_normalised: np.ndarray
    fused: np.ndarray
    score: np.ndarray  # fused, with prerequisites raised: what search ranks by
    raised: list[dict[int, int]] = field(default_factory=list)  # per query: raised tool -> the tool it serves


def hits(m: Scores, i: int, columns: np.ndarray, vector_threshold: float) -> list[HybridHit]:
    """The evidence for the tools at ``columns`` of query ``i``; ranks are each component's own."""
    vec_rank = _ranks(m.vector[i], m.vector[i] >= np.float32(vector_threshold))
    kw_rank = _ranks(m.keyword[i], m.keyword[i] > 0)
    char_rank = _ranks(m.char[i], m.char[i] > 0)
    raised = m.raised[i] if m.raised else {}
    return [
        HybridHit(
            tool_name=m.tools[j].name,
            score=float(m.score[i, j]),
            vector_score=float(m.vector[i, j]),
            keyword_score=float(m.keyword[i, j]),
            vector_normalised=float(m.vector_normalised[i, j]),
            keyword_normalised=float(m.keyword_normalised[i, j]),
            vector_rank=int(vec_rank[j]) or None,
            keyword_rank=int(kw_rank[j]) or None,
            view_scores={v: float(s[i, j]) for v, s in m.views.items()},
            char_score=float(m.char[i, j]),
            char_rank=int(char_rank[j]) or None,
            word_normalised=float(m.word_normalised[i, j]),
            char_normalised=float(m.char_normalised[i, j]),
            fused=float(m.fused[i, j]),
            prerequisite_of=m.tools[raised[j]].name if j in raised else None,
        )
        for j in columns.tolist()
    ]


def rank_text(rank: int | None) -> str:
    return f"rank {rank}" if rank else "not returned"


def empty_scores(n_queries: int, views: Sequence[TextMode]) -> Scores:
    e = np.zeros((n_queries, 0))
    return Scores([], dict.fromkeys(views, e), e, e, e, e, e, e, e, e, e, [{} for _ in range(n_queries)])
