"""HybridToolIndex: one ranking from keyword scores (stemmed BM25 + character n-grams) and embedding
similarity.

Why fuse scores and not ranks: reciprocal-rank fusion throws the scores away, so a tool the embeddings rank
1st by a wide margin and BM25 ranks 40th ends up below tools both rank mediocrely; on paraphrased requests,
where BM25 is often wrong, that makes the fusion worse than embeddings alone. Here each side is min-max
normalised per query over the whole session and combined, ``fused = w * vector + (1 - w) * keyword``; the
keyword side is half word BM25 (identifiers split, stop words removed, Porter-stemmed, parameters indexed,
no score threshold) and half character 3-5-gram TF-IDF; the vector side is the mean cosine over three views
of each tool (description, full text, split name), with multi-sentence requests also matched per sentence.
Every default was measured, and the record of what was tried (and what was not kept) is
``docs/hybrid-lab-log.md``.

Two steps follow the fusion, both on by default. **Prerequisites** (:mod:`.links`): a tool that looks up
what the best-ranked tool needs (``list_issues`` for a tool taking an ``issue_number``) is raised to 0.8 of
that tool's score, unless the request already names the thing by number. **Abstention**
(:mod:`.abstention`): when a calibrated probability that any tool fits, computed from the raw description
and full-text similarities, is below ``min_confidence``, the search returns no tools and says so in the
response's ``confidence``; so does a near-miss, a request for an operation no tool of its object offers
(:mod:`.operations`).

The components are real indexes, exposed as attributes: ``keyword_index`` (a configured
:class:`~toolsearch_lab.index.bm25.index.BM25ToolIndex`), ``char_index`` (a
:class:`~toolsearch_lab.index.ngram.CharNgramToolIndex`, None when ``char_share`` is 0) and
``vector_index`` (a :class:`~toolsearch_lab.index.vector.VectorToolIndex` over the views). Searched on
their own they rank exactly as the hybrid's explanation says: every raw score and rank in
:meth:`HybridToolIndex.explain` / :meth:`~HybridToolIndex.explain_search` is the one in that component's
own column of the index explorer.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from toolsearch_lab.embed.base import Embedder
from toolsearch_lab.index.abstention import AbstentionModel
from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.diversity import DIVERSITY_BY, DiversityBy, category_codes, diversify
from toolsearch_lab.index.hybrid_evidence import HybridHit, Scores, empty_scores, hits, rank_text
from toolsearch_lab.index.links import PREREQUISITE_WEIGHT, PrerequisiteLinks, lift, prerequisite_links
from toolsearch_lab.index.ngram import CharNgramToolIndex
from toolsearch_lab.index.operations import NEAR_MISS_GAIN, MissingOperation, OperationIndex, swapped
from toolsearch_lab.index.vector import TEXT_MODES, TextMode, VectorToolIndex
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Contribution,
    Explanation,
    SearchConfidence,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)
from toolsearch_lab.text.normalise import STEMMERS, Stemmer
from toolsearch_lab.text.stopwords import strip_stop_words

DEFAULT_VIEWS: tuple[TextMode, ...] = ("description", "full", "name")
DEFAULT_VECTOR_WEIGHT = 0.7
DEFAULT_CHAR_SHARE = 0.5
DEFAULT_STEMMER: Stemmer = "porter"
Normalisation = Literal["minmax", "zscore", "rrf"]
NORMALISATIONS: tuple[Normalisation, ...] = get_args(Normalisation)


@functools.lru_cache(maxsize=1)
def _shipped_abstention() -> AbstentionModel:
    return AbstentionModel.load()


def normalise(scores: np.ndarray, method: Normalisation = "minmax") -> np.ndarray:
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
        return np.asarray((scores - scores.mean(axis=1, keepdims=True)) / np.where(std <= 1e-12, 1.0, std))
    if method == "rrf":
        ranks = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1) + 1
        return 1.0 / (60.0 + ranks)
    raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {method!r}")


class HybridToolIndex(BaseToolIndex):
    """Keyword + embedding search fused into one ranking (see the module docstring for the design).

    Components (attributes, each a real index): ``keyword_index`` - by default
    ``BM25ToolIndex(min_score=0, analyzer="words", fields="full", stemmer=stemmer, stop_words=...)``, or any
    ``BM25ToolIndex`` you pass (a Spring-layout one gets the query with stop words stripped, as before);
    ``char_index`` - character n-gram TF-IDF, blended into the keyword side by ``char_share``;
    ``vector_index`` - a ``VectorToolIndex`` over ``views`` with ``embedder`` (default: the cached MiniLM),
    or the one you pass. Results: the top ``max_results`` (default ``default_max_results``), optionally
    only those with fused score >= ``min_score`` (default None: no cut, because fused scores are relative
    to the query - the best tool scores near 1 whether or not it is any good).

    ``prerequisites`` (default on) raises the tools that look up what the best tool needs to
    ``prerequisite_weight`` of its score (:mod:`.links`). ``abstain`` (default on) returns no tools when
    the calibrated confidence that any tool fits is below ``min_confidence`` (None: the model's default,
    chosen on calibration data); ``abstention`` is that model (default: the shipped one, fitted for the
    default MiniLM embedder; with another embedder the index does not abstain and ``abstention_note``
    says why). With abstention on, ``near_miss`` (default on) also returns no tools for a request whose
    operation no tool named after its object offers, when swapping its verb brings it closer to the tools by
    more than ``near_miss_gain`` (:mod:`.operations`). Every response carries its ``confidence``.

    ``diversity`` (default 0: off) re-ranks the final ranking greedily so that a tool repeating what is
    already above it loses ``diversity`` x its redundancy: by ``diversity_by="category"`` a tool of a
    category (server) already taken, by ``"description"`` the cosine to the most similar description taken
    (:mod:`.diversity`). Its scores are then the adjusted ones, and ``explain`` shows the penalty.
    """

    search_type = "HybridToolIndex"

    def __init__(
        self,
        keyword_index: BM25ToolIndex | None = None,
        vector_index: VectorToolIndex | None = None,
        *,  # a vector_index given is used as is: its own views, query_clauses and threshold
        embedder: Embedder | None = None,
        views: Sequence[TextMode] = DEFAULT_VIEWS,
        vector_weight: float = DEFAULT_VECTOR_WEIGHT,
        char_share: float = DEFAULT_CHAR_SHARE,
        stemmer: Stemmer = DEFAULT_STEMMER,
        normalisation: Normalisation = "minmax",
        strip_stopwords: bool = True,
        query_clauses: bool = True,
        min_score: float | None = None,
        default_max_results: int = DEFAULT_MAX_RESULTS,
        prerequisites: bool = True,
        prerequisite_weight: float = PREREQUISITE_WEIGHT,
        abstain: bool = True,
        min_confidence: float | None = None,
        abstention: AbstentionModel | str | os.PathLike[str] | None = None,
        near_miss: bool = True,
        near_miss_gain: float = NEAR_MISS_GAIN,
        diversity: float = 0.0,
        diversity_by: DiversityBy = "category",
    ) -> None:
        super().__init__(default_max_results)
        _check_options(vector_weight, char_share, stemmer, normalisation, views)
        if not 0.0 <= diversity <= 1.0:
            raise ValueError(f"diversity must be within [0, 1], got {diversity}")
        if diversity_by not in DIVERSITY_BY:
            raise ValueError(f"diversity_by must be one of {DIVERSITY_BY}, got {diversity_by!r}")
        self.diversity = float(diversity)
        self.diversity_by = diversity_by
        if not 0.0 <= prerequisite_weight <= 1.0:
            raise ValueError(f"prerequisite_weight must be within [0, 1], got {prerequisite_weight}")
        if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be a probability within [0, 1], got {min_confidence}")
        if not 0.0 <= near_miss_gain <= 2.0:
            raise ValueError(f"near_miss_gain must be a cosine margin within [0, 2], got {near_miss_gain}")
        self.near_miss = bool(near_miss)
        self.near_miss_gain = float(near_miss_gain)
        self.vector_weight = float(vector_weight)
        self.char_share = float(char_share)
        self.stemmer = stemmer
        self.normalisation = normalisation
        self.strip_stopwords = strip_stopwords
        self.min_score = None if min_score is None else float(min_score)
        self.keyword_index = keyword_index or BM25ToolIndex(
            0.0, analyzer="words", fields="full", stemmer=stemmer, stop_words=strip_stopwords
        )
        self.char_index = CharNgramToolIndex() if char_share > 0 else None
        # Threshold -1: the hybrid reads every raw similarity; cutting happens after fusion.
        self.vector_index = vector_index or VectorToolIndex(
            embedder,
            text=tuple(views),
            similarity_threshold=-1.0,
            query_clauses=query_clauses,
        )
        self._tools: dict[str, list[Tool]] = {}
        self._links: dict[str, PrerequisiteLinks] = {}
        self._operations: dict[str, OperationIndex] = {}
        self._lock = threading.RLock()
        self.prerequisite_weight = float(prerequisite_weight) if prerequisites else 0.0
        self.abstention: AbstentionModel | None = None
        self.abstention_note: str | None = "abstention is off (abstain=False)"
        if abstain:
            if isinstance(abstention, AbstentionModel):
                model = abstention
            else:
                model = AbstentionModel.load(abstention) if abstention is not None else _shipped_abstention()
            used = self.vector_index.embedder
            self.abstention_note = model.applies_to(
                str(getattr(used, "name", type(used).__name__)), self.views
            )
            self.abstention = model if self.abstention_note is None else None
        self.min_confidence = None
        if self.abstention is not None:
            self.min_confidence = self.abstention.min_confidence if min_confidence is None else min_confidence

    @property
    def views(self) -> tuple[TextMode, ...]:
        return self.vector_index.views

    @property
    def can_abstain(self) -> bool:
        """Whether a search may return no tools because the index judged that none fits."""
        return self.abstention is not None

    @property
    def abstention_setting(self) -> str:
        """When a search returns no tools because none fits, in words (a run's config records it)."""
        if self.abstention is None:
            return "off"
        return (
            f"below confidence {self.min_confidence:.3f}; near-miss check {'on' if self.near_miss else 'off'}"
        )

    @property
    def components(self) -> dict[str, BaseToolIndex]:
        """The component indexes by role, for side-by-side views (``char`` only when ``char_share`` > 0)."""
        out: dict[str, BaseToolIndex] = {"keyword": self.keyword_index, "vector": self.vector_index}
        if self.char_index is not None:
            out["char"] = self.char_index
        return out

    def __repr__(self) -> str:
        return (
            f"HybridToolIndex(views={list(self.views)}, vector_weight={self.vector_weight}, "
            f"char_share={self.char_share}, stemmer={self.stemmer!r}, "
            f"normalisation={self.normalisation!r}, strip_stopwords={self.strip_stopwords}, "
            f"keyword_index={self.keyword_index!r})"
        )

    # ------------------------------------------------------------------ indexing
    def _index(self, session_id: str, tools: list[Tool]) -> None:
        if not tools:
            return
        with self._lock:
            # One lock around all components keeps their document orders identical, which the fusion
            # relies on (column j is the same tool in every component).
            for component in self.components.values():
                component.index_tools(session_id, tools)
            self._tools.setdefault(session_id, []).extend(tools)
            self._links.pop(session_id, None)
            self._operations.pop(session_id, None)

    def _clear(self, session_id: str) -> None:
        with self._lock:
            for component in self.components.values():
                component.clear_index(session_id)
            self._tools.pop(session_id, None)
            self._links.pop(session_id, None)
            self._operations.pop(session_id, None)

    def prerequisite_links(self, session_id: str) -> PrerequisiteLinks:
        """The session's prerequisite links (found on first use after tools were added)."""
        key = self._session_or_none(session_id)
        with self._lock:
            tools = self._tools.get(key, []) if key is not None else []
            if key is not None and key not in self._links:
                self._links[key] = prerequisite_links(tools)
            return self._links.get(key, PrerequisiteLinks({})) if key is not None else PrerequisiteLinks({})

    def operations(self, session_id: str) -> OperationIndex:
        """The operations the session's tools offer, by the nouns of their names (built on first use)."""
        key = self._session_or_none(session_id)
        if key is None:
            return OperationIndex([])
        with self._lock:
            if key not in self._operations:
                self._operations[key] = OperationIndex(self._tools.get(key, []))
            return self._operations[key]

    def tools(self, session_id: str) -> list[Tool]:
        key = self._session_or_none(session_id)
        with self._lock:
            return list(self._tools.get(key, [])) if key is not None else []

    # ------------------------------------------------------------------ scoring
    def _keyword_queries(self, queries: list[str]) -> list[str]:
        if self.strip_stopwords and self.keyword_index.analyzer == "standard":
            return [strip_stop_words(q) for q in queries]
        return queries

    def score_matrix(self, session_id: str, queries: Sequence[str | None]) -> Scores:
        """Every component score of every query x tool, raw and normalised, and the fused score. Empty
        (no tools) for an unknown session, or when a concurrent change left the components apart."""
        texts = [q or "" for q in queries]
        tools = self.tools(session_id)
        _, views = self.vector_index.view_similarities(session_id, texts)
        _, keyword = self.keyword_index.score_matrix(session_id, self._keyword_queries(texts))
        char = np.zeros((len(texts), len(tools)))
        if self.char_index is not None:
            _, char = self.char_index.score_matrix(session_id, texts)
        shapes = {m.shape[1] for m in [keyword, char, *views.values()]}
        if not tools or shapes != {len(tools)}:
            return empty_scores(len(texts), self.views)
        vector = np.mean(np.stack(list(views.values())), axis=0).astype(np.float64)
        keyword = keyword.astype(np.float64)
        vector_n = normalise(vector, self.normalisation)
        word_n = normalise(keyword, self.normalisation)
        char_n = normalise(char, self.normalisation) if self.char_share > 0 else np.zeros_like(char)
        keyword_n = word_n
        if self.char_share > 0:
            keyword_n = (1.0 - self.char_share) * word_n + self.char_share * char_n
        fused = self.vector_weight * vector_n + (1.0 - self.vector_weight) * keyword_n
        score = fused
        raised: list[dict[int, int]] = [{} for _ in texts]
        if self.prerequisite_weight > 0:
            links = self.prerequisite_links(session_id)
            if len(links):
                lifted = [
                    lift(row, text, links, self.prerequisite_weight)
                    for row, text in zip(fused, texts, strict=True)
                ]
                score, raised = np.stack([r for r, _ in lifted]), [d for _, d in lifted]
        parts = (vector_n, word_n, char_n, keyword_n, fused, score, raised)
        return Scores(tools, views, vector, keyword, char, *parts)

    # ------------------------------------------------------------------ search
    def _search_many(self, requests: list[KeyedRequest], limits: list[int]) -> list[SearchResponse]:
        """Many searches at once (one embedding call per session), with the results of one each."""
        return [response for response, _ in self._searchhits(requests, limits)]

    def explain_search(self, request: SearchRequest) -> list[HybridHit]:
        """The results of ``search(request)`` with every component score behind each one."""
        keyed = self._keyed(request)
        return self._searchhits([keyed], [self._limit(keyed)])[0][1] if keyed is not None else []

    def _searchhits(
        self, requests: list[KeyedRequest], limits: list[int]
    ) -> list[tuple[SearchResponse, list[HybridHit]]]:
        out: list[tuple[SearchResponse, list[HybridHit]]] = [(empty_response(), []) for _ in requests]
        by_session: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            by_session.setdefault(r.session_id, []).append(i)
        for session_id, members in by_session.items():
            m = self.score_matrix(session_id, [requests[i].query for i in members])
            if not m.tools:  # unknown session, or cleared while this search started
                continue
            for row, i in enumerate(members):
                out[i] = self._ranked(requests[i], m, row, limits[i])
        return out

    def confidence(self, request: SearchRequest) -> SearchConfidence | None:
        """How sure the index is that some tool fits ``request`` (None when it does not abstain)."""
        keyed = self._keyed(request)
        if keyed is None or self.abstention is None:
            return None
        m = self.score_matrix(keyed.session_id, [keyed.query])
        if not m.tools:
            return None
        allowed = self.allowed_tools(m.tools, keyed.category_filter)
        return self.confidence_at(keyed.session_id, keyed.query or "", m, 0, allowed)

    def allowed_tools(self, tools: list[Tool], category_filter: str | None) -> np.ndarray:
        """A mask of the tools a request with ``category_filter`` may return."""
        return np.array([self.category_allows(t, category_filter) for t in tools], dtype=bool)

    def confidence_at(
        self, session_id: str, query: str, m: Scores, i: int, allowed: np.ndarray
    ) -> SearchConfidence | None:
        """How sure the index is that some tool fits ``query``, row ``i`` of :meth:`score_matrix` ``m``,
        over the tools ``allowed`` (:meth:`allowed_tools`): the abstention model's confidence, and with
        ``near_miss`` the operation it asks for when no tool offers it. None when the index does not
        abstain."""
        model = self.abstention
        if model is None:
            return None
        best = {
            str(v): np.array([s[i][allowed].max() if allowed.any() else -1.0]) for v, s in m.views.items()
        }
        x = model.evidence(best)
        confidence = SearchConfidence(float(model.confidence(x)[0]), self.min_confidence, model.reason(x[0]))
        if confidence.abstained or not self.near_miss or not allowed.any():
            return confidence
        missing = self.missing_operation(session_id, query, m, i, allowed)
        return (
            confidence if missing is None else dataclasses.replace(confidence, near_miss=missing.describe())
        )

    def missing_operation(
        self, session_id: str, query: str, m: Scores, i: int, allowed: np.ndarray
    ) -> MissingOperation | None:
        """The operation ``query`` asks for when it is a near-miss (:mod:`.operations`): no tool named
        after its object offers it, and swapping its verb brings it closer to the tools by more than
        ``near_miss_gain``."""
        found = self.operation_gain(session_id, query, m, i, allowed)
        return found[0] if found is not None and found[1] > self.near_miss_gain else None

    def operation_gain(
        self, session_id: str, query: str, m: Scores, i: int, allowed: np.ndarray
    ) -> tuple[MissingOperation, float] | None:
        """When no tool named after the request's object offers its operation: that operation, and how much
        closer (mean over the views of the best raw similarity) the best verb-swapped request comes."""
        missing = self.operations(session_id).missing(query, allowed)
        if missing is None:
            return None
        _, views = self.vector_index.view_similarities(session_id, swapped(query))
        if {s.shape[1] for s in views.values()} != {len(allowed)}:  # the session changed meanwhile
            return None
        own = np.mean([s[i][allowed].max() for s in m.views.values()])
        other = np.mean([s[:, allowed].max(axis=1) for s in views.values()], axis=0).max()
        return missing, float(other - own)

    def _ranked(
        self, request: KeyedRequest, m: Scores, i: int, limit: int
    ) -> tuple[SearchResponse, list[HybridHit]]:
        score = m.score[i]
        allowed = self.allowed_tools(m.tools, request.category_filter)
        meta = SearchMetadata(self.search_type, request.query, None)
        confidence = self.confidence_at(request.session_id, request.query or "", m, i, allowed)
        if confidence is not None and confidence.abstained:
            return SearchResponse([], 0, meta, confidence), []
        passing = allowed if self.min_score is None else allowed & (score >= self.min_score)
        keep = np.flatnonzero(passing)
        ranked, shown = self._order(request.session_id, m, i, keep, limit)
        found = hits(m, i, ranked, self.vector_index.similarity_threshold)
        if self.diversity > 0:
            found = [
                dataclasses.replace(h, score=float(v), diversity_penalty=float(score[j] - v))
                for h, j, v in zip(found, ranked.tolist(), shown.tolist(), strict=True)
            ]
        refs = [
            ToolReference(m.tools[j].name, float(v), m.tools[j].description)
            for j, v in zip(ranked.tolist(), shown.tolist(), strict=True)
        ]
        return SearchResponse(refs, len(refs), meta, confidence), found

    def _order(
        self, session_id: str, m: Scores, i: int, keep: np.ndarray, limit: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The first ``limit`` of the candidate columns ``keep`` in result order, with the score each is
        returned with: by score, or with ``diversity`` the greedy re-ranking of :func:`.diversify`."""
        score = m.score[i]
        order = keep[np.argsort(-score[keep], kind="stable")]
        if self.diversity <= 0:
            return order[:limit], score[order[:limit]]
        groups = vectors = None
        if self.diversity_by == "category":
            groups = category_codes(m.tools)
        else:
            view = "description" if "description" in self.views else self.views[0]
            tools, vectors = self.vector_index.tool_matrix(session_id, view)
            if len(tools) != len(m.tools):  # changed while this search ran: rank by score alone
                return order[:limit], score[order[:limit]]
        exempt = list(m.raised[i]) if m.raised else []
        return diversify(score, order, self.diversity, limit, groups=groups, vectors=vectors, exempt=exempt)

    # ------------------------------------------------------------------ explanation
    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """The fused score of ``tool_name`` as its three weighted, normalised parts; ``details`` is the
        :class:`HybridHit` with each component's own raw score and rank."""
        m = self.score_matrix(session_id, [query])
        candidates = self.positions_of(m.tools, session_id, tool_name)
        score = m.score[0]
        j = max(candidates, key=lambda c: score[c])
        hit = hits(m, 0, np.array([j]), self.vector_index.similarity_threshold)[0]
        passing = np.ones(len(m.tools), dtype=bool)
        if self.min_score is not None and score[j] >= self.min_score:
            passing = score >= self.min_score  # as search ranks: among the tools it may return
        order, shown = self._order(session_id, m, 0, np.flatnonzero(passing), len(m.tools))
        rank = int(np.flatnonzero(order == j)[0]) + 1
        value = float(shown[rank - 1])
        if self.diversity > 0:
            hit = dataclasses.replace(hit, score=value, diversity_penalty=float(score[j]) - value)
        confidence = self.confidence_at(session_id, query, m, 0, np.ones(len(m.tools), dtype=bool))
        kept = (self.min_score is None or score[j] >= self.min_score) and not (
            confidence and confidence.abstained
        )
        return Explanation(
            index="hybrid",
            tool_name=tool_name,
            query=query,
            score=value,
            parts=self._parts(hit),
            returned=kept and rank <= self.default_max_results,
            rank=rank if kept else None,
            details=hit,
        )

    def _parts(self, hit: HybridHit) -> tuple[Contribution, ...]:
        w, c = self.vector_weight, self.char_share
        parts = [
            Contribution(
                f"{w:.2f} x vector (normalised)",
                w * hit.vector_normalised,
                f"score {hit.vector_score:.4f}, {rank_text(hit.vector_rank)} in the vector column",
            ),
            Contribution(
                f"{(1 - w) * (1 - c):.2f} x BM25 (normalised)",
                (1 - w) * ((1 - c) * hit.word_normalised),
                f"score {hit.keyword_score:.4f}, {rank_text(hit.keyword_rank)} in the BM25 column",
            ),
        ]
        if c > 0:
            parts.append(
                Contribution(
                    f"{(1 - w) * c:.2f} x char n-grams (normalised)",
                    (1 - w) * (c * hit.char_normalised),
                    f"cosine {hit.char_score:.4f}, {rank_text(hit.char_rank)} in the char n-gram column",
                )
            )
        if hit.prerequisite_of is not None and hit.fused is not None:
            parts.append(
                Contribution(
                    f"raised to {self.prerequisite_weight:.2f} x the score of {hit.prerequisite_of}",
                    hit.score + hit.diversity_penalty - hit.fused,
                    f"{hit.prerequisite_of} needs what this tool looks up",
                )
            )
        if hit.diversity_penalty:
            parts.append(
                Contribution(
                    f"diversity penalty ({self.diversity:.2f} x redundancy by {self.diversity_by})",
                    -hit.diversity_penalty,
                    "repeats a tool ranked above it",
                )
            )
        return tuple(parts)


def _check_options(
    vector_weight: float, char_share: float, stemmer: object, normalisation: object, views: Sequence[object]
) -> None:
    if not 0.0 <= vector_weight <= 1.0:
        raise ValueError(f"vector_weight must be within [0, 1], got {vector_weight}")
    if not 0.0 <= char_share <= 1.0:
        raise ValueError(f"char_share must be within [0, 1], got {char_share}")
    if stemmer not in STEMMERS:
        raise ValueError(f"stemmer must be one of {list(STEMMERS)}, got {stemmer!r}")
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {normalisation!r}")
    if isinstance(views, str) or not views or any(v not in TEXT_MODES for v in views):
        raise ValueError(f"views must be a non-empty subset of {TEXT_MODES}, got {views!r}")


__all__ = ["DEFAULT_VIEWS", "HybridHit", "HybridToolIndex", "normalise", "strip_stop_words"]
