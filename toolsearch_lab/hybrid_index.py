"""HybridToolIndex: one ranking from a keyword index (BM25) and embedding similarity.

Why not plain reciprocal-rank fusion? RRF throws the scores away: a tool the embeddings rank 1st by a wide
margin and BM25 ranks 40th ends up below tools both rank mediocrely. On paraphrased requests, where BM25 is
often wrong, that makes the fusion *worse* than embeddings alone: on MetaTool, naive RRF of Spring's BM25
and MiniLM(description) gets recall@5 .721, MiniLM alone .757. This index fuses scores instead. Each choice
below was measured on the two development datasets only (``benchmarks/retrieval_quality.py`` prints the
ablation; recall@5 LiveMCPBench / MetaTool, starting from naive RRF .335 / .721):

1. **Min-max normalisation per query, then a convex combination** (``normalisation="minmax"``,
   ``vector_weight`` = 0.75): both score lists are mapped to [0, 1] over every tool of the session and
   ``fused = w * vector + (1 - w) * keyword``. Keeps the margins RRF discards: .337 / .762. Candidate depth
   is the whole session (cheap at catalog sizes; no "tool missing from one list" special case). z-score
   normalisation is within noise of min-max (.417 / .789 at the end), RRF clearly worse (.411 / .712).
   w = 0.7-0.8 is a plateau on both datasets (w = 0.5: .397 / .726; w = 1.0, embeddings only: .401 / .778).
2. **BM25 splits identifiers and indexes parameter names/descriptions**, and runs with ``min_score=0``
   (Lucene's raw-score threshold 0.25 would drop weak-but-useful evidence before fusion weighs it): names
   like ``get_stock_price`` then match "stock price". .350 / .775.
3. **Stop words removed from the keyword query** (``strip_stopwords``): Spring's Lucene analyzer keeps them,
   so "the", "of", "with" in long requests add noise matches. .364 / .781.
4. **Three embedding views per tool** (``views``): the description (Spring's text), the "full" text (split
   name + description + parameters) and the split name alone; the vector score is their mean cosine.
   Names carry meaning short, vague or non-English descriptions lack, and averaging keeps any single view
   from dominating. .403 / .790.
5. **Multi-sentence requests also embedded per sentence** (``query_clauses``): the vector score of each view
   is the mean of the whole-query cosine and the best sentence's cosine, because a tool serving one step of
   a multi-step task matches that step's sentence better than the blurred whole. Single-sentence queries
   are unaffected. .420 / .791 (the default).

Per-result component scores (raw and normalised, per view, and each component's rank) come from
:meth:`HybridToolIndex.explain_search`, for the notebooks' "why did this tool rank here" view.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .tool import (
    BaseToolIndex,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)
from .vector_index import TEXT_MODES, VectorToolIndex

DEFAULT_VIEWS = ("description", "full", "name")
DEFAULT_VECTOR_WEIGHT = 0.75
NORMALISATIONS = ("minmax", "zscore", "rrf")
_WORD = re.compile(r"\S+")
_PUNCT = ".,!?;:\"'()[]{}<>`*"


def _stop_words() -> frozenset[str]:
    # scikit-learn's English list (318 words; a dependency already); loaded lazily to keep imports cheap.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def strip_stop_words(query: str) -> str:
    """The query without English stop words, for the keyword side. A query made only of stop words is kept
    as is, so it can still match something."""
    stop = _stop_words()
    kept = [w for w in _WORD.findall(query) if w.lower().strip(_PUNCT) not in stop]
    return " ".join(kept) if kept else query


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def split_clauses(query: str, min_words: int = 3) -> list[str]:
    """The sentences of a multi-sentence request (each of at least ``min_words`` words), or [] when the
    query is a single sentence (then the whole query is all there is)."""
    parts = [p.strip() for p in _SENTENCE_END.split(query.strip())]
    parts = [p for p in parts if len(p.split()) >= min_words]
    return parts if len(parts) >= 2 else []


def normalise(scores: np.ndarray, method: str = "minmax") -> np.ndarray:
    """Row-wise score normalisation of a ``[n_queries, n_tools]`` matrix.

    ``minmax``: (s - min) / (max - min), a row with no spread becomes 1 where s > 0 else 0.
    ``zscore``: (s - mean) / std. ``rrf``: 1 / (60 + rank), rank 1-based (scores only order the tools).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    if method == "minmax":
        lo = scores.min(axis=1, keepdims=True)
        hi = scores.max(axis=1, keepdims=True)
        spread = hi - lo
        flat = spread <= 1e-12
        out = (scores - lo) / np.where(flat, 1.0, spread)
        return np.where(flat, (scores > 0).astype(np.float64), out)
    if method == "zscore":
        std = scores.std(axis=1, keepdims=True)
        return (scores - scores.mean(axis=1, keepdims=True)) / np.where(std <= 1e-12, 1.0, std)
    if method == "rrf":
        ranks = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1) + 1
        return 1.0 / (60.0 + ranks)
    raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {method!r}")


@dataclass(frozen=True)
class HybridHit:
    """One fused result with the evidence behind it (ranks are 1-based within the session)."""

    tool_name: str
    score: float  # fused
    vector_score: float  # mean cosine over the views
    keyword_score: float  # raw BM25 (0 = no keyword match)
    vector_normalised: float
    keyword_normalised: float
    vector_rank: int
    keyword_rank: int | None  # None when the keyword index did not match the tool at all
    view_scores: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "toolName": self.tool_name,
            "score": round(self.score, 6),
            "vectorScore": round(self.vector_score, 6),
            "keywordScore": round(self.keyword_score, 6),
            "vectorNormalised": round(self.vector_normalised, 6),
            "keywordNormalised": round(self.keyword_normalised, 6),
            "vectorRank": self.vector_rank,
            "keywordRank": self.keyword_rank,
            "viewScores": {k: round(v, 6) for k, v in self.view_scores.items()},
        }


class HybridToolIndex(BaseToolIndex):
    """Keyword + embedding search fused into one ranking (see the module docstring for the design).

    ``keyword_index``: any ToolIndex whose ``search`` returns raw scores (default:
    ``BM25ToolIndex(min_score=0, split_identifiers=True, include_parameters=True)``). ``vector_index``: a
    :class:`VectorToolIndex` to use as the only view, or None to build one per entry of ``views`` over
    ``embedder`` (default: the cached MiniLM). Results: the top ``max_results`` (default 10), optionally only
    those with fused score >= ``min_score`` (default None: no cut, because fused scores are relative to the
    query - the best tool scores near 1 whether or not it is any good).
    """

    DEFAULT_MAX_RESULTS = 10
    search_type = "HybridToolIndex"

    def __init__(
        self,
        keyword_index: Any = None,
        vector_index: VectorToolIndex | None = None,
        *,
        embedder: Any = None,
        views: Sequence[str] = DEFAULT_VIEWS,
        vector_weight: float = DEFAULT_VECTOR_WEIGHT,
        normalisation: str = "minmax",
        strip_stopwords: bool = True,
        query_clauses: bool = True,
        min_score: float | None = None,
        default_max_results: int = DEFAULT_MAX_RESULTS,
    ) -> None:
        if not 0.0 <= vector_weight <= 1.0:
            raise ValueError(f"vector_weight must be within [0, 1], got {vector_weight}")
        if normalisation not in NORMALISATIONS:
            raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {normalisation!r}")
        if keyword_index is None:
            from .lucene_index import BM25ToolIndex

            keyword_index = BM25ToolIndex(min_score=0.0, split_identifiers=True, include_parameters=True)
        if vector_index is not None:
            self.views: dict[str, VectorToolIndex] = {vector_index.text: vector_index}
        else:
            bad = [v for v in views if v not in TEXT_MODES]
            if not views or bad:
                raise ValueError(f"views must be a non-empty subset of {TEXT_MODES}, got {list(views)!r}")
            if embedder is None:
                from .embedders import default_embedder

                embedder = default_embedder()
            # Threshold -1: the hybrid reads raw similarities; cutting happens after fusion.
            self.views = {
                v: VectorToolIndex(embedder, text=v, similarity_threshold=-1.0) for v in dict.fromkeys(views)
            }
        self.keyword_index = keyword_index
        self.vector_weight = float(vector_weight)
        self.normalisation = normalisation
        self.strip_stopwords = strip_stopwords
        self.query_clauses = query_clauses
        self.min_score = None if min_score is None else float(min_score)
        self.default_max_results = default_max_results
        self._tools: dict[str, list[Tool]] = {}
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return (
            f"HybridToolIndex(views={list(self.views)}, vector_weight={self.vector_weight}, "
            f"normalisation={self.normalisation!r}, strip_stopwords={self.strip_stopwords}, "
            f"keyword_index={type(self.keyword_index).__name__})"
        )

    # ------------------------------------------------------------------ indexing
    def index_tool(self, session_id: str, tool: Tool) -> None:
        self.index_tools(session_id, [tool])

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        self.check_session_id(session_id)
        tools = [self.check_tool(t) for t in tools]
        if not tools:
            return
        with self._lock:
            # One lock around all components keeps their document orders identical, which the fusion
            # relies on (row j is the same tool in every component).
            for view in self.views.values():
                view.index_tools(session_id, tools)
            self.keyword_index.index_tools(session_id, tools)
            self._tools.setdefault(session_id, []).extend(tools)

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            for view in self.views.values():
                view.clear_index(session_id)
            self.keyword_index.clear_index(session_id)
            self._tools.pop(session_id, None)

    def tools(self, session_id: str) -> list[Tool]:
        with self._lock:
            return list(self._tools.get(session_id, []))

    # ------------------------------------------------------------------ scoring
    def _vector_scores(
        self, queries: Sequence[str], matrices: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        # Multi-sentence requests ("find X, then do Y. Finally Z.") are also embedded sentence by sentence:
        # a tool that serves one step matches its sentence far better than the blurred whole.
        clauses = [split_clauses(q) if self.query_clauses else [] for q in queries]
        extra = [c for cs in clauses for c in cs]
        owner = np.repeat(np.arange(len(queries)), [len(cs) for cs in clauses])
        out: dict[str, np.ndarray] = {}
        cache: dict[int, np.ndarray] = {}
        for name, view in self.views.items():
            # Views usually share one embedder: embed the queries once, not once per view.
            key = id(view.embedder)
            if key not in cache:
                cache[key] = np.asarray(view.embedder.embed(list(queries) + extra), dtype=np.float32)
            sims = cache[key] @ matrices[name].T
            whole = sims[: len(queries)]
            if extra:
                whole = whole.copy()
                part = sims[len(queries) :]
                for i in np.unique(owner):
                    whole[i] = 0.5 * whole[i] + 0.5 * part[owner == i].max(axis=0)
            out[name] = whole
        return out

    def _keyword_scores(self, session_id: str, queries: Sequence[str], tools: list[Tool]) -> np.ndarray:
        positions: dict[str, list[int]] = {}
        for j, t in enumerate(tools):
            positions.setdefault(t.name, []).append(j)
        scores = np.zeros((len(queries), len(tools)), dtype=np.float64)
        for i, query in enumerate(queries):
            text = strip_stop_words(query) if self.strip_stopwords else query
            response = self.keyword_index.search(SearchRequest(session_id, text, len(tools)))
            for ref in response.tool_references:
                for j in positions.get(ref.tool_name, ()):
                    scores[i, j] = max(scores[i, j], float(ref.relevance_score or 0.0))
        return scores

    def score_matrix(self, session_id: str, queries: Sequence[str]) -> dict[str, Any]:
        """Every component score of every query x tool: ``tools``, ``views`` (name -> cosine matrix),
        ``vector`` (mean cosine), ``keyword`` (raw BM25), their normalised forms and ``fused``."""
        queries = [q or "" for q in queries]
        # One consistent snapshot: index_tools updates every component under the same lock, so the tool
        # list and the view matrices read here describe the same documents, row for row. A concurrent
        # clear_index after this point only makes the keyword side find less; it never raises.
        with self._lock:
            tools = list(self._tools.get(session_id, [])) if isinstance(session_id, str) else []
            matrices = {name: view.tool_matrix(session_id)[1] for name, view in self.views.items()}
        if not tools or any(m.shape[0] != len(tools) for m in matrices.values()):
            empty = np.zeros((len(queries), 0))
            return {
                "tools": [],
                "views": {name: empty for name in self.views},
                **dict.fromkeys(
                    ("vector", "keyword", "vector_normalised", "keyword_normalised", "fused"), empty
                ),
            }
        views = self._vector_scores(queries, matrices)
        vector = np.mean(np.stack(list(views.values())), axis=0).astype(np.float64)
        keyword = self._keyword_scores(session_id, queries, tools)
        vector_n = normalise(vector, self.normalisation)
        keyword_n = normalise(keyword, self.normalisation)
        fused = self.vector_weight * vector_n + (1.0 - self.vector_weight) * keyword_n
        return {
            "tools": tools,
            "views": views,
            "vector": vector,
            "keyword": keyword,
            "vector_normalised": vector_n,
            "keyword_normalised": keyword_n,
            "fused": fused,
        }

    # ------------------------------------------------------------------ search
    def search(self, request: SearchRequest) -> SearchResponse:
        return self.search_many(
            request.session_id, [request.query], request.max_results, request.category_filter
        )[0]

    def search_many(
        self,
        session_id: str | None,
        queries: Sequence[str | None],
        max_results: int | None = None,
        category_filter: str | None = None,
    ) -> list[SearchResponse]:
        """``search`` for many queries at once (one embedding call for all of them)."""
        return [resp for resp, _ in self._search(session_id, queries, max_results, category_filter)]

    def explain_search(self, request: SearchRequest) -> list[HybridHit]:
        """The results of ``search(request)`` with every component score behind each one."""
        return self._search(
            request.session_id, [request.query], request.max_results, request.category_filter
        )[0][1]

    def _search(
        self,
        session_id: str | None,
        queries: Sequence[str | None],
        max_results: int | None,
        category_filter: str | None,
    ) -> list[tuple[SearchResponse, list[HybridHit]]]:
        limit = self.resolve_max_results(
            SearchRequest(session_id, None, max_results), self.default_max_results
        )
        if not isinstance(session_id, str) or not session_id.strip():
            return [(empty_response(), []) for _ in queries]
        m = self.score_matrix(session_id, [q or "" for q in queries])
        tools: list[Tool] = m["tools"]
        if not tools:  # unknown session, or cleared while this search started
            return [(empty_response(), []) for _ in queries]
        allowed = np.array([self.category_allows(t, category_filter) for t in tools], dtype=bool)
        out = []
        for i, query in enumerate(queries):
            fused = m["fused"][i]
            passing = allowed if self.min_score is None else allowed & (fused >= self.min_score)
            keep = np.flatnonzero(passing)
            ranked = keep[np.argsort(-fused[keep], kind="stable")][:limit]
            vec_rank = np.empty(len(tools), dtype=np.int64)
            vec_rank[np.argsort(-m["vector"][i], kind="stable")] = np.arange(1, len(tools) + 1)
            kw_rank = np.empty(len(tools), dtype=np.int64)
            kw_rank[np.argsort(-m["keyword"][i], kind="stable")] = np.arange(1, len(tools) + 1)
            refs, hits = [], []
            for j in ranked:
                t = tools[j]
                refs.append(ToolReference(t.name, float(fused[j]), t.description))
                hits.append(
                    HybridHit(
                        tool_name=t.name,
                        score=float(fused[j]),
                        vector_score=float(m["vector"][i, j]),
                        keyword_score=float(m["keyword"][i, j]),
                        vector_normalised=float(m["vector_normalised"][i, j]),
                        keyword_normalised=float(m["keyword_normalised"][i, j]),
                        vector_rank=int(vec_rank[j]),
                        keyword_rank=int(kw_rank[j]) if m["keyword"][i, j] > 0 else None,
                        view_scores={v: float(s[i, j]) for v, s in m["views"].items()},
                    )
                )
            out.append((SearchResponse(refs, len(refs), SearchMetadata(self.search_type, query, None)), hits))
        return out
