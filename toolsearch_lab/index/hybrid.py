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
(:mod:`.operations`). Every option is a field of one frozen :class:`~.hybrid_settings.HybridSettings`,
checked once.

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
from typing import Any

import numpy as np

from toolsearch_lab.embed.base import Embedder
from toolsearch_lab.index.abstention import Abstention, AbstentionModel
from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest, Rerank
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.diversity import category_codes, diversify
from toolsearch_lab.index.hybrid_evidence import HybridHit, Scores, empty_scores, hits, rank_text
from toolsearch_lab.index.hybrid_settings import DEFAULT_VIEWS, HybridSettings, normalise
from toolsearch_lab.index.links import PrerequisiteLinks, lift, prerequisite_links
from toolsearch_lab.index.ngram import CharNgramToolIndex
from toolsearch_lab.index.operations import MissingOperation, OperationIndex, swapped
from toolsearch_lab.index.vector import TextMode, VectorToolIndex
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Contribution,
    Explanation,
    SearchConfidence,
    SearchRequest,
    SearchResponse,
    Tool,
    empty_response,
)
from toolsearch_lab.text.stopwords import strip_stop_words


class HybridToolIndex(BaseToolIndex):
    """Keyword + embedding search fused into one ranking (see the module docstring for the design).

    ``HybridToolIndex(keyword_index=None, vector_index=None, *, embedder=None, abstention=None,
    settings=None, default_max_results=10, **options)``: ``options`` are fields of
    :class:`~.hybrid_settings.HybridSettings` (``vector_weight=0.6``, ``abstain=False``, ...), applied over
    ``settings`` (default: the defaults); the index keeps the result as ``settings``.

    Components (attributes, each a real index): ``keyword_index`` - by default ``BM25ToolIndex(0,
    analyzer="words", fields="full", stemmer=..., stop_words=...)``, or any ``BM25ToolIndex`` you pass (a
    Spring-layout one gets the query with stop words stripped, as before); ``char_index`` - character
    n-gram TF-IDF, blended into the keyword side by ``char_share``; ``vector_index`` - a
    ``VectorToolIndex`` over the settings' views with ``embedder`` (default: the cached MiniLM, taken on
    first use), or the one you pass, used as is (its own views, query clauses and threshold). Results: the
    top ``max_results`` (default ``default_max_results``), optionally only those with fused score >=
    ``min_score_threshold``.

    ``abstention`` is the abstention model (an :class:`AbstentionModel` or the path of one; default: the
    shipped one, fitted for the default MiniLM embedder), loaded on first use; with another embedder the
    index does not abstain and ``abstention_note`` says why. Every response carries its ``confidence``.
    With ``diversity``, scores are the re-ranked ones, and ``explain`` shows the penalty.
    """

    search_type = "HybridToolIndex"

    def __init__(
        self,
        keyword_index: BM25ToolIndex | None = None,
        vector_index: VectorToolIndex | None = None,
        *,
        embedder: Embedder | None = None,
        abstention: AbstentionModel | str | os.PathLike[str] | None = None,
        settings: HybridSettings | None = None,
        default_max_results: int = DEFAULT_MAX_RESULTS,
        **options: Any,
    ) -> None:
        super().__init__(default_max_results)
        self.settings = s = HybridSettings.of(settings, options)
        self.keyword_index = keyword_index or BM25ToolIndex(
            0.0, analyzer="words", fields="full", stemmer=s.stemmer, stop_words=s.strip_stopwords
        )
        self.char_index = CharNgramToolIndex() if s.char_share > 0 else None
        # Threshold -1: the hybrid reads every raw similarity; cutting happens after fusion.
        self.vector_index = vector_index or VectorToolIndex(
            embedder, text=s.views, min_score_threshold=-1.0, query_clauses=s.query_clauses
        )
        self._abstention_source = abstention
        self._abstention: Abstention | None = None
        self._tools: dict[str, list[Tool]] = {}
        self._links: dict[str, PrerequisiteLinks] = {}
        self._operations: dict[str, OperationIndex] = {}
        self._lock = threading.RLock()

    @property
    def views(self) -> tuple[TextMode, ...]:
        return self.vector_index.views

    @property
    def min_score_threshold(self) -> float | None:
        """The fused score a result needs (None: no cut)."""
        return self.settings.min_score_threshold

    def _abstention_state(self) -> Abstention:
        """The abstention model, loaded on first use; it applies only to the embedder it was fitted for."""
        with self._lock:
            if self._abstention is None:
                if not self.settings.abstain:
                    self._abstention = Abstention(None, "abstention is off (abstain=False)", None)
                else:
                    used = self.vector_index.embedder
                    name = str(getattr(used, "name", type(used).__name__))
                    s = self.settings
                    small = (s.small_catalog, s.small_catalog_confidence)
                    self._abstention = Abstention.settle(
                        self._abstention_source, name, self.views, s.min_confidence, small
                    )
            return self._abstention

    @property
    def abstention(self) -> AbstentionModel | None:
        """The abstention model the index applies (None: it never abstains)."""
        return self._abstention_state().model

    @property
    def abstention_note(self) -> str | None:
        """Why the index does not abstain (None: it does)."""
        return self._abstention_state().note

    @property
    def min_confidence(self) -> float | None:
        """The confidence below which a search returns no tools (None: the index never abstains)."""
        return self._abstention_state().min_confidence

    @property
    def can_abstain(self) -> bool:
        """Whether a search may return no tools because the index judged that none fits."""
        return self.abstention is not None

    @property
    def abstention_setting(self) -> str:
        """When a search returns no tools because none fits, in words (a run's config records it)."""
        return self._abstention_state().setting(self.settings.near_miss)

    @property
    def components(self) -> dict[str, BaseToolIndex]:
        """The component indexes by role, for side-by-side views (``char`` only when ``char_share`` > 0)."""
        out: dict[str, BaseToolIndex] = {"keyword": self.keyword_index, "vector": self.vector_index}
        if self.char_index is not None:
            out["char"] = self.char_index
        return out

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"HybridToolIndex(views={list(self.views)}, vector_weight={s.vector_weight}, "
            f"char_share={s.char_share}, stemmer={s.stemmer!r}, "
            f"normalisation={s.normalisation!r}, strip_stopwords={s.strip_stopwords}, "
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
        if self.settings.strip_stopwords and self.keyword_index.analyzer == "standard":
            return [strip_stop_words(q) for q in queries]
        return queries

    def score_matrix(self, session_id: str, queries: Sequence[str | None]) -> Scores:
        """Every component score of every query x tool, raw and normalised, and the fused score. Empty
        (no tools) for an unknown session, or when a concurrent change left the components apart."""
        s = self.settings
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
        vector_n = normalise(vector, s.normalisation)
        word_n = normalise(keyword, s.normalisation)
        char_n = normalise(char, s.normalisation) if s.char_share > 0 else np.zeros_like(char)
        keyword_n = word_n
        if s.char_share > 0:
            keyword_n = (1.0 - s.char_share) * word_n + s.char_share * char_n
        fused = s.vector_weight * vector_n + (1.0 - s.vector_weight) * keyword_n
        score = fused
        raised: list[dict[int, int]] = [{} for _ in texts]
        if s.prerequisite_lift > 0:
            links = self.prerequisite_links(session_id)
            if len(links):
                lifted = [
                    lift(row, text, links, s.prerequisite_lift)
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
        def answer(
            session_id: str, members: list[int]
        ) -> list[tuple[SearchResponse, list[HybridHit]]] | None:
            m = self.score_matrix(session_id, [requests[i].query for i in members])
            if not m.tools:  # unknown session, or cleared while this search started
                return None
            return [self._answer(requests[i], m, row, limits[i]) for row, i in enumerate(members)]

        return self.answer_by_session(requests, answer, lambda: (empty_response(), []))

    def _answer(
        self, request: KeyedRequest, m: Scores, i: int, limit: int
    ) -> tuple[SearchResponse, list[HybridHit]]:
        allowed = self.category_mask(m.tools, request.category_filter)
        ranked = self.ranked(
            request,
            m.tools,
            m.score[i],
            limit,
            min_score_threshold=self.settings.min_score_threshold,
            allowed=allowed,
            rerank=self._reranker(request.session_id, m, i),
            confidence=self.confidence_at(request.session_id, request.query or "", m, i, allowed),
        )
        found = hits(m, i, ranked.columns, self.vector_index.min_score_threshold)
        if self.settings.diversity > 0:
            found = [
                dataclasses.replace(h, score=float(v), diversity_penalty=float(m.score[i, j] - v))
                for h, j, v in zip(found, ranked.columns.tolist(), ranked.scores.tolist(), strict=True)
            ]
        return ranked.response, found

    def _reranker(self, session_id: str, m: Scores, i: int) -> Rerank | None:
        """With ``diversity``, the greedy re-ranking of :func:`.diversify` (None: by score alone)."""
        return functools.partial(self._diversified, session_id, m, i) if self.settings.diversity > 0 else None

    def _diversified(
        self, session_id: str, m: Scores, i: int, order: np.ndarray, limit: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The first ``limit`` of the candidate columns ``order`` (best first) re-ranked by
        :func:`.diversify`, with the score each is returned with."""
        score = m.score[i]
        groups = vectors = None
        if self.settings.diversity_by == "category":
            groups = category_codes(m.tools)
        else:
            view = "description" if "description" in self.views else self.views[0]
            tools, vectors = self.vector_index.tool_matrix(session_id, view)
            if len(tools) != len(m.tools):  # changed while this search ran: rank by score alone
                return order[:limit], score[order[:limit]]
        exempt = list(m.raised[i]) if m.raised else []
        weight = self.settings.diversity
        return diversify(score, order, weight, limit, groups=groups, vectors=vectors, exempt=exempt)

    def confidence(self, request: SearchRequest) -> SearchConfidence | None:
        """How sure the index is that some tool fits ``request`` (None when it does not abstain)."""
        keyed = self._keyed(request)
        if keyed is None or self.abstention is None:
            return None
        m = self.score_matrix(keyed.session_id, [keyed.query])
        if not m.tools:
            return None
        allowed = self.category_mask(m.tools, keyed.category_filter)
        return self.confidence_at(keyed.session_id, keyed.query or "", m, 0, allowed)

    def confidence_at(
        self, session_id: str, query: str, m: Scores, i: int, allowed: np.ndarray
    ) -> SearchConfidence | None:
        """How sure the index is that some tool fits ``query``, row ``i`` of :meth:`score_matrix` ``m``,
        over the tools ``allowed`` (:meth:`category_mask`): the abstention model's confidence, and with
        ``near_miss`` the operation it asks for when no tool offers it. None when the index does not
        abstain."""
        model = self.abstention
        if model is None:
            return None
        best = {
            str(v): np.array([s[i][allowed].max() if allowed.any() else -1.0]) for v, s in m.views.items()
        }
        x = model.evidence(best)
        threshold, rule = self._abstention_state().threshold_for(int(allowed.sum()))
        confidence = SearchConfidence(float(model.confidence(x)[0]), threshold, model.reason(x[0]), rule=rule)
        if confidence.abstained or not self.settings.near_miss or not allowed.any():
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
        return found[0] if found is not None and found[1] > self.settings.near_miss_gain else None

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

    # ------------------------------------------------------------------ explanation
    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """The fused score of ``tool_name`` as its three weighted, normalised parts; ``details`` is the
        :class:`HybridHit` with each component's own raw score and rank."""
        m = self.score_matrix(session_id, [query])
        candidates = self.positions_of(m.tools, session_id, tool_name)
        score = m.score[0]
        j = max(candidates, key=lambda c: score[c])
        hit = hits(m, 0, np.array([j]), self.vector_index.min_score_threshold)[0]
        floor = self.settings.min_score_threshold
        above = floor is None or bool(score[j] >= floor)
        # Ranked as search ranks: among the tools it may return (all of them, when this one is below)
        ranked = self.ranked(
            SearchRequest(session_id, query),
            m.tools,
            score,
            len(m.tools),
            min_score_threshold=floor if above else None,
            rerank=self._reranker(session_id, m, 0),
        )
        rank = int(np.flatnonzero(ranked.columns == j)[0]) + 1
        value = float(ranked.scores[rank - 1])
        if self.settings.diversity > 0:
            hit = dataclasses.replace(hit, score=value, diversity_penalty=float(score[j]) - value)
        confidence = self.confidence_at(session_id, query, m, 0, np.ones(len(m.tools), dtype=bool))
        kept = above and not (confidence and confidence.abstained)
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
        s = self.settings
        w, c = s.vector_weight, s.char_share
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
                    f"raised to {s.prerequisite_lift:.2f} x the score of {hit.prerequisite_of}",
                    hit.score + hit.diversity_penalty - hit.fused,
                    f"{hit.prerequisite_of} needs what this tool looks up",
                )
            )
        if hit.diversity_penalty:
            parts.append(
                Contribution(
                    f"diversity penalty ({s.diversity:.2f} x redundancy by {s.diversity_by})",
                    -hit.diversity_penalty,
                    "repeats a tool ranked above it",
                )
            )
        return tuple(parts)


__all__ = ["DEFAULT_VIEWS", "HybridHit", "HybridSettings", "HybridToolIndex", "normalise", "strip_stop_words"]
