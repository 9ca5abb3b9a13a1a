"""Retrieval metrics for tool indexes (the ``toolsearch-lab eval`` command lives in ``cli/eval.py``).

Relevance is binary: a tool is relevant to a query iff it is in the query's ``relevant_tools`` (R, |R| >= 1).
``ranked`` is the list the index returned (best first, no duplicates), at most ``depth`` long.

* ``recall@k``  = |R ∩ ranked[:k]| / |R|. (With more relevant tools than k, 1.0 is unreachable; that is the
  usual definition and the one the peer numbers in the benchmark use.)
* ``hit@k``     = 1 if R ∩ ranked[:k] is non-empty, else 0.
* ``nDCG@10``   = DCG / IDCG with DCG = sum over relevant tools at 1-based rank r <= 10 of 1/log2(r + 1), and
  IDCG the same sum for a perfect ranking: sum_{r=1}^{min(|R|, 10)} 1/log2(r + 1).
* ``MRR``       = 1 / rank of the first relevant tool in ``ranked``, 0 if none is returned (so it is
  MRR@depth, depth = max(k, 10) by default).
* ``server recall@k`` / ``server hit@k`` (catalogs of several servers, ``Dataset.servers``): the same with
  each tool replaced by its server - the share of the relevant tools' servers with some tool in the top k.
* ``answered`` (indexes that can say "no tool matches"): the share of searches that returned tools.

Every metric is averaged over queries (macro average). Indexes apply their own thresholds and abstention,
so a tool that an index filters out, or a search it abstains on, counts as not found: that is what the
model would see.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.model import SearchRequest, SearchResponse, check_positive_int

# ------------------------------------------------------------------------------------------ metric functions


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """|relevant ∩ ranked[:k]| / |relevant|."""
    rel = set(relevant)
    if not rel:
        raise ValueError("recall_at_k: relevant set is empty")
    return len(rel.intersection(ranked[:k])) / len(rel)


def hit_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1.0 if any relevant tool is in ranked[:k], else 0.0."""
    rel = set(relevant)
    return 1.0 if any(name in rel for name in ranked[:k]) else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int = 10) -> float:
    """Binary-gain nDCG@k: sum of 1/log2(rank+1) over relevant hits in the top k, divided by the ideal sum
    over the first min(|relevant|, k) ranks."""
    rel = set(relevant)
    if not rel:
        raise ValueError("ndcg_at_k: relevant set is empty")
    dcg = sum(1.0 / math.log2(r + 2) for r, name in enumerate(ranked[:k]) if name in rel)
    idcg = sum(1.0 / math.log2(r + 2) for r in range(min(len(rel), k)))
    return dcg / idcg


def server_recall_hit_at_k(
    ranked: Sequence[str], relevant: Iterable[str], servers: dict[str, str], k: int
) -> tuple[float, float]:
    """(server recall@k, server hit@k): the share of the relevant tools' servers with a tool in the top k,
    and whether any has one. A tool missing from ``servers`` is its own server."""
    wanted = {servers.get(t, t) for t in relevant}
    if not wanted:
        raise ValueError("server_recall_hit_at_k: relevant set is empty")
    got = {servers.get(t, t) for t in ranked[:k]}
    return len(wanted & got) / len(wanted), float(bool(wanted & got))


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str]) -> float:
    """1 / (1-based rank of the first relevant tool), 0.0 if no relevant tool was returned."""
    rel = set(relevant)
    for r, name in enumerate(ranked):
        if name in rel:
            return 1.0 / (r + 1)
    return 0.0


# ------------------------------------------------------------------------------------------------ results


@dataclass
class QueryResult:
    """One query's outcome, kept for notebooks: what came back and where each relevant tool landed."""

    id: str
    query: str
    relevant: tuple[str, ...]
    ranked: list[str]  # names returned by the index, best first (up to the evaluation depth)
    scores: list[float]  # the index's scores for ``ranked``
    k: int
    confidence: float | None = None  # an index that can say "no tool matches": its confidence
    abstained: bool = False  # it returned nothing because it judged that no tool fits
    group: str | None = None  # the query's suite, API server or catalog, where the dataset says

    @property
    def ranks(self) -> dict[str, int | None]:
        """1-based rank of each relevant tool, None if the index did not return it."""
        pos = {name: i + 1 for i, name in enumerate(self.ranked)}
        return {name: pos.get(name) for name in self.relevant}

    @property
    def top_k(self) -> list[str]:
        return self.ranked[: self.k]

    @property
    def recall(self) -> float:
        return recall_at_k(self.ranked, self.relevant, self.k)

    @property
    def hit(self) -> bool:
        return hit_at_k(self.ranked, self.relevant, self.k) == 1.0

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "id": self.id,
            "query": self.query,
            "relevant": list(self.relevant),
            "ranks": self.ranks,
            "top_k": self.top_k,
            "scores": [round(s, 6) for s in self.scores[: self.k]],
        }
        if self.confidence is not None:
            out.update(confidence=round(self.confidence, 4), abstained=self.abstained)
        return out


@dataclass
class EvalResult:
    dataset: str
    index: str
    k: int
    depth: int
    metrics: dict[str, float]
    per_query: list[QueryResult] = field(repr=False)
    seconds: float = 0.0

    def misses(self) -> list[QueryResult]:
        """Queries with no relevant tool in the top k (the notebooks' "what went wrong" list)."""
        return [q for q in self.per_query if not q.hit]

    def by_group(self, servers: dict[str, str] | None = None) -> dict[str, dict[str, float]]:
        """The metrics of each query group (suite, API server), in first-seen order."""
        groups: dict[str, list[QueryResult]] = {}
        for q in self.per_query:
            if q.group is not None:
                groups.setdefault(q.group, []).append(q)
        return {g: aggregate(rs, self.k, servers) for g, rs in groups.items()}

    def to_dict(self, per_query: bool = False) -> dict:
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "index": self.index,
            "k": self.k,
            "queries": len(self.per_query),
            "metrics": {m: round(v, 4) for m, v in self.metrics.items()},
            "seconds": round(self.seconds, 2),
        }
        if per_query:
            out["per_query"] = [q.to_dict() for q in self.per_query]
        return out

    def summary(self) -> str:
        parts = "  ".join(f"{m}={v:.3f}" for m, v in self.metrics.items())
        return (
            f"{self.dataset} | {self.index} | {len(self.per_query)} queries | {parts} | {self.seconds:.1f}s"
        )


def aggregate(
    results: Sequence[QueryResult], k: int, servers: dict[str, str] | None = None
) -> dict[str, float]:
    """The macro averages (module docstring); server-level figures with ``servers``, ``answered`` when the
    index gave a confidence."""
    n = max(len(results), 1)
    out = {
        f"recall@{k}": sum(recall_at_k(r.ranked, r.relevant, k) for r in results) / n,
        f"hit@{k}": sum(hit_at_k(r.ranked, r.relevant, k) for r in results) / n,
        "ndcg@10": sum(ndcg_at_k(r.ranked, r.relevant, 10) for r in results) / n,
        "mrr": sum(reciprocal_rank(r.ranked, r.relevant) for r in results) / n,
    }
    if servers:
        pairs = [server_recall_hit_at_k(r.ranked, r.relevant, servers, k) for r in results]
        out[f"server recall@{k}"] = sum(p[0] for p in pairs) / n
        out[f"server hit@{k}"] = sum(p[1] for p in pairs) / n
    if any(r.confidence is not None for r in results):
        out["answered"] = sum(1 for r in results if not r.abstained) / n
    return out


# --------------------------------------------------------------------------------------------- evaluation


def search_queries(index: Any, session_id: str, queries: Sequence[str], depth: int) -> list[SearchResponse]:
    """Every query's response. Indexes with ``search_many`` (vector, hybrid) answer every query in one
    batch: one embedding call and matrix products instead of 21k separate searches. Others are looped."""
    if hasattr(index, "search_many"):
        responses: list[SearchResponse] = []
        chunk = 4096  # bounds the [queries x tools] score matrices in memory
        for start in range(0, len(queries), chunk):
            batch = [SearchRequest(session_id, q, depth) for q in queries[start : start + chunk]]
            responses.extend(index.search_many(batch))
        return responses
    return [index.search(SearchRequest(session_id, q, depth)) for q in queries]


def rank_queries(
    index: Any, session_id: str, queries: Sequence[str], depth: int
) -> list[tuple[list[str], list[float]]]:
    """(names, scores) per query (:func:`search_queries`)."""
    out = []
    for resp in search_queries(index, session_id, queries, depth):
        refs = resp.tool_references
        out.append(([r.tool_name for r in refs], [float(r.relevance_score or 0.0) for r in refs]))
    return out


def evaluate(
    index: Any, dataset: Any, k: int = 5, *, depth: int | None = None, session_id: str = "evaluation"
) -> EvalResult:
    """Index ``dataset.tools`` in a fresh session of ``index``, search every query with ``max_results =
    depth`` (default max(k, 10), so nDCG@10 and MRR see ten results), and score the rankings.

    The session is cleared afterwards. ``index`` is any ToolIndex; ``dataset`` a :class:`datasets.Dataset`.
    """
    check_positive_int(k, "evaluate: k")
    depth = depth or max(k, 10)
    if depth < k:
        raise ValueError(f"depth ({depth}) must be >= k ({k})")
    start = time.perf_counter()
    index.clear_index(session_id)
    index.index_tools(session_id, dataset.tools)
    try:
        responses = search_queries(index, session_id, [q.query for q in dataset.queries], depth)
    finally:
        index.clear_index(session_id)
    results = [_result(q, response, k) for q, response in zip(dataset.queries, responses, strict=True)]
    servers = getattr(dataset, "servers", None) or None
    return EvalResult(
        dataset=dataset.name,
        index=getattr(index, "label", None) or type(index).__name__,
        k=k,
        depth=depth,
        metrics=aggregate(results, k, servers),
        per_query=results,
        seconds=time.perf_counter() - start,
    )


def _result(query: Any, response: SearchResponse, k: int) -> QueryResult:
    refs = response.tool_references
    confidence = getattr(response, "confidence", None)
    return QueryResult(
        query.id,
        query.query,
        query.relevant_tools,
        [r.tool_name for r in refs],
        [float(r.relevance_score or 0.0) for r in refs],
        k,
        confidence=None if confidence is None else confidence.value,
        abstained=bool(confidence is not None and confidence.abstained),
        group=getattr(query, "group", None),
    )
