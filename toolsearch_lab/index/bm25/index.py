"""``BM25ToolIndex``: Spring AI's ``LuceneToolIndex`` re-implemented on numpy/scipy, score for score.

Spring indexes each tool as a Lucene document with two analysed fields, ``toolName`` and
``toolDescription`` (StandardAnalyzer, see :mod:`toolsearch_lab.text.lucene`), and searches with one
BooleanQuery of four SHOULD clauses (spec §4)::

    descPhrase        the query tokens as an exact phrase (a TermQuery when there is one token)
    descTerms         the query tokens as SHOULD TermQueries
    namePhrase  x4    the same phrase on the name
    nameTerms   x2    the same terms on the name

scored with Lucene's BM25 (k1 = 1.2, b = 0.75), including its lossy one-byte document-length norm and its
32-bit float arithmetic. Lucene rewrites identical SHOULD clauses into one clause with the summed boost
(``BooleanQuery.rewrite``), so a one-token query scores as ``desc x2 + name x6``; we do the same.

Per session the index keeps a snapshot (:mod:`.session`, :mod:`.postings`): every field's posting
lists in one CSC over (field, term) keys with each posting's exact BM25 denominator and score, dense score
rows for the most frequent keys, Lucene-encoded lengths and the positions for phrase matching. A search
turns the query into arrays in one go (one row per TermQuery leaf) and ranks with MaxScore pruning and an
exact rescoring of the survivors, a few dozen numpy calls whatever the query length; the top k equals
scoring every document (see :func:`toolsearch_lab.index.bm25.scoring.top_k`). ``index_tools`` builds the
arrays right away, so no search pays for them; ``index_tool`` (one tool at a time) only marks the session
dirty and the next search or batch rebuilds once, so adding n tools one by one stays O(n), not O(n^2).
``explain`` replays the same query leaf by leaf (:mod:`toolsearch_lab.index.bm25.explain`).

Deviations from Spring (all deliberate, see the README section): additions are visible immediately,
``search_time_ms`` is filled in, ``category_filter`` is honoured for tools that carry a category, and
opt-in options change scoring when switched on. With the defaults, scores are Lucene's. The options:

* ``split_identifiers`` also indexes and queries the parts of camelCase, snake_case and dotted identifiers;
* ``include_parameters`` indexes parameter names and descriptions as a third field (SHOULD terms,
  ``parameter_boost``);
* ``stop_words`` drops scikit-learn's English stop words: with Spring's StandardAnalyzer from the query
  only (``BM25ToolIndex(stop_words=True, split_identifiers=True)`` is the analysis that closes the gap to
  ``bm25s``, docs/index.md), with ``analyzer="words"`` from tools and queries; a query made only of them
  keeps them;
* ``analyzer="words"`` replaces Lucene's StandardAnalyzer by the keyword tokenizer of
  :mod:`toolsearch_lab.text.normalise` (identifiers split, possessives dropped), with ``stemmer``
  ("porter", "s" or "none");
* ``fields="full"`` indexes one field, ``tool_text(tool, "full")`` (split name, description, parameters),
  and queries each distinct query term once as a SHOULD TermQuery (boost 1, no phrase clauses). This is
  the hybrid index's keyword side.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
import scipy.sparse as sp

from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.index.bm25.explain import (
    BM25Clause,
    BM25Details,
    TermContribution,
    build_explanation,
    explain_doc,
)
from toolsearch_lab.index.bm25.postings import (
    LENGTH_TABLE,
    byte4_to_int,
    encode_lengths,
    int_to_byte4,
    norm_inverse_cache,
)
from toolsearch_lab.index.bm25.query import (
    _SPRING_FIELDS,
    DESCRIPTION_FIELD,
    FULL_FIELD,
    NAME_FIELD,
    PARAMETERS_FIELD,
    QueryShape,
)
from toolsearch_lab.index.bm25.scoring import exact_all, top_k
from toolsearch_lab.index.bm25.session import Session, Snapshot, build_snapshot
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Explanation,
    SearchResponse,
    Tool,
    empty_response,
)
from toolsearch_lab.text.lucene import analyze, analyze_split
from toolsearch_lab.text.normalise import STEMMERS, Stemmer, keyword_tokens, stem_tokens
from toolsearch_lab.text.stopwords import ENGLISH_STOP_WORDS, strip_stop_words
from toolsearch_lab.text.tool_text import parameter_text, tool_text

log = logging.getLogger(__name__)

Analyzer = Literal["standard", "words"]
FieldLayout = Literal["spring", "full"]
ANALYZERS: tuple[Analyzer, ...] = get_args(Analyzer)
FIELD_LAYOUTS: tuple[FieldLayout, ...] = get_args(FieldLayout)

_F32 = np.float32


@functools.lru_cache(maxsize=1024)
def _analyze_query_cached(query: str, split: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(positional, extra) query tokens; queries repeat a lot in agent loops, analysis is pure."""
    if split:
        positional, extra = analyze_split(query)
        return tuple(positional), tuple(extra)
    return tuple(analyze(query)), ()


# --- the index -----


class BM25ToolIndex(BaseToolIndex):
    """Spring AI's LuceneToolIndex: per-session BM25 over tool name and description, Lucene-exact scores.

    ``min_score_threshold`` is Spring's minScoreThreshold (raw BM25; Spring applies it after the top-N
    cut, which keeps the same tools as applying it before, since the cut is by score). The other options
    (identifier splitting, parameters, the "words" analyzer with stop words and stemming, one "full" text
    field) are described in the module docstring; all are off by default.
    """

    DEFAULT_MIN_SCORE_THRESHOLD = 0.25
    search_type = "LuceneToolIndex"  # Spring's metadata value (the wire keeps Spring's name)
    SEARCH_TYPE = search_type  # the earlier spelling
    min_score_threshold: float = DEFAULT_MIN_SCORE_THRESHOLD

    def __init__(
        self,
        min_score_threshold: float = DEFAULT_MIN_SCORE_THRESHOLD,
        *,
        split_identifiers: bool = False,
        include_parameters: bool = False,
        parameter_boost: float = 1.0,
        analyzer: Analyzer = "standard",
        fields: FieldLayout = "spring",
        stemmer: Stemmer = "none",
        stop_words: bool = False,
        default_max_results: int = DEFAULT_MAX_RESULTS,
    ) -> None:
        super().__init__(default_max_results)
        _check_options(min_score_threshold, parameter_boost, analyzer, fields, stemmer)
        self.min_score_threshold = float(min_score_threshold)
        self.split_identifiers = bool(split_identifiers)
        self.include_parameters = bool(include_parameters)
        self.parameter_boost = float(parameter_boost)
        self.analyzer = analyzer
        self.fields = fields
        self.stemmer = stemmer
        self.stop_words = ENGLISH_STOP_WORDS if stop_words else None
        # (field, phrase boost or None for terms only, terms boost) per top-level clause pair
        self._clauses: list[tuple[str, float | None, float]] = (
            [(FULL_FIELD, None, 1.0)]
            if fields == "full"
            else [(f, pb, tb) for f, _, pb, tb in _SPRING_FIELDS]
            + ([(PARAMETERS_FIELD, None, self.parameter_boost)] if include_parameters else [])
        )
        self._field_names = [NAME_FIELD, DESCRIPTION_FIELD] if fields == "spring" else [FULL_FIELD]
        if fields == "spring" and include_parameters:
            self._field_names.append(PARAMETERS_FIELD)
        self._field_pos = {name: i for i, name in enumerate(self._field_names)}
        self._shape = QueryShape(tuple(self._clauses), self._field_pos, terms_once=fields == "full")
        # The terms boost of each field: the posting arrays keep each posting's score for it (for bounds).
        self._base_boost = {f: tb for f, _, tb in self._clauses}
        self._sessions: dict[str, Session] = {}
        self._sessions_lock = threading.Lock()

    # -- analysis -----

    def _analyze(self, text: str) -> tuple[list[str], list[str]]:
        if self.analyzer == "words":
            return stem_tokens(keyword_tokens(text, self.stop_words), self.stemmer), []
        if self.split_identifiers:
            return analyze_split(text)
        return analyze(text), []

    def _field_texts(self, tool: Tool) -> dict[str, str]:
        if self.fields == "full":
            return {FULL_FIELD: tool_text(tool, "full")}
        texts = {NAME_FIELD: tool.name, DESCRIPTION_FIELD: tool.description}
        if self.include_parameters:
            texts[PARAMETERS_FIELD] = parameter_text(tool.parameters)
        return texts

    # -- indexing -----

    def _session(self, session_id: str, create: bool) -> Session | None:
        with self._sessions_lock:
            session = self._sessions.get(session_id)
            if session is None and create:
                session = self._sessions[session_id] = Session(self._field_names)
            return session

    def _index_tool(self, session: str, tool: Tool) -> None:
        """Add one tool; the search arrays are rebuilt by the next search or ``index_tools`` call."""
        self._add(session, [tool], build=False)

    def _index(self, session: str, tools: list[Tool]) -> None:
        """Add a batch of tools and build the session's search arrays now (no search pays for them)."""
        self._add(session, tools, build=True)

    def _add(self, session_id: str, tools: list[Tool], build: bool) -> None:
        if not tools:
            return
        # Analyse outside the lock: it is the expensive part and touches no shared state.
        analysed = [{f: self._analyze(text) for f, text in self._field_texts(tool).items()} for tool in tools]
        session = self._session(session_id, create=True)
        assert session is not None
        with session.lock:
            for tool, fields in zip(tools, analysed, strict=True):
                doc = len(session.tools)
                session.tools.append(tool)
                for name, (positional, extra) in fields.items():
                    session.builders[name].add(
                        doc, [session.term_id(t) for t in positional], [session.term_id(t) for t in extra]
                    )
            analysed.clear()  # the token lists are in the builders now: free them before the build's peak
            session.snapshot = self._build_snapshot(session) if build else None

    def _clear(self, session: str) -> None:
        with self._sessions_lock:
            self._sessions.pop(session, None)

    def size(self, session_id: str) -> int:
        key = self._session_or_none(session_id)
        session = self._session(key, create=False) if key is not None else None
        if session is None:
            return 0
        with session.lock:
            return len(session.tools)

    def total_size(self) -> int:
        with self._sessions_lock:
            sessions = list(self._sessions.values())
        return sum(len(s.tools) for s in sessions)

    def close(self) -> None:
        """Drop every session (Spring closes each session's writer and directory). The index stays usable."""
        with self._sessions_lock:
            self._sessions.clear()

    # -- snapshots -----

    def _snapshot_of(self, session_id: str | None) -> Snapshot | None:
        """The session's current search structures (built now if single tools were added since)."""
        key = self._session_or_none(session_id)
        session = self._session(key, create=False) if key is not None else None
        if session is None:
            return None
        with session.lock:
            if session.snapshot is None:
                session.snapshot = self._build_snapshot(session)
            return session.snapshot

    def _build_snapshot(self, session: Session) -> Snapshot:
        return build_snapshot(session, self._field_names, self._base_boost, self.fields == "full")

    # -- query -----

    def _query_tokens(self, query: str | None, snap: Snapshot) -> tuple[list[str], list[str]]:
        """(phrase tokens, term tokens). Without identifier splitting both are the analysed query; a "words"
        query made only of stop words (or of stop words and unknown words) keeps its stop words."""
        if not isinstance(query, str) or not query:
            return [], []
        if self.analyzer == "words":
            terms = list(_analyze_words_cached(query, self.stemmer, self.stop_words))
            if self.stop_words is not None and not any(t in snap.vocab for t in terms):
                terms = list(_analyze_words_cached(query, self.stemmer, None))
            return terms, terms
        if self.stop_words is not None:
            query = strip_stop_words(query)
        positional, extra = _analyze_query_cached(query, self.split_identifiers)
        return list(positional), list(positional + extra)

    def _search(self, request: KeyedRequest, limit: int) -> SearchResponse:
        started = time.perf_counter()
        snap = self._snapshot_of(request.session_id)
        if snap is None:
            return empty_response()
        phrase, terms = self._query_tokens(request.query, snap)
        if not terms:
            return empty_response()  # Spring: buildQuery returns null
        ids = {t: snap.vocab.get(t, -1) for t in terms}
        query = self._shape.compile(snap.postings, snap.fields, phrase, terms, ids)
        eligible = snap.eligible(request.category_filter)
        docs, scores = top_k(snap.postings, query, eligible, limit)
        # top_k kept only eligible docs: ranking its k again keeps them, in its order (score, then doc id)
        tools = [snap.tools[d] for d in docs.tolist()]
        return self._response(request, tools, scores, None, limit, started)

    def _response(
        self,
        request: KeyedRequest,
        tools: Sequence[Tool],
        scores: np.ndarray,
        allowed: np.ndarray | None,
        limit: int,
        started: float,
    ) -> SearchResponse:
        # Java compares float with float and keeps equality: the float32 scores against the float32
        # threshold. Lucene's order, score descending then doc id ascending, is the stable one.
        threshold = float(_F32(self.min_score_threshold))
        response = self.ranked(
            request,
            tools,
            scores,
            limit,
            min_score_threshold=threshold,
            matched_only=True,
            allowed=allowed,
            started=started,
        ).response
        if log.isEnabledFor(logging.DEBUG):
            for ref in response.tool_references:
                log.debug("hit %s score %.5f", ref.tool_name, ref.relevance_score)
        return response

    # -- batches -----

    def _search_many(self, requests: list[KeyedRequest], limits: list[int]) -> list[SearchResponse]:
        """``search`` for each request, with identical results. With ``fields="full"`` (terms-only queries)
        the requests of one session are scored together in one sparse matrix product."""
        if self.fields != "full":
            return [self._search(r, k) for r, k in zip(requests, limits, strict=True)]

        def answer(session_id: str, members: list[int]) -> list[SearchResponse] | None:
            started = time.perf_counter()
            snap, scores = self._score_rows(session_id, [requests[i].query for i in members])
            if snap is None:  # no such session, or cleared meanwhile
                return None
            return [
                self._row_response(requests[i], snap, row, limits[i], started)
                for i, row in zip(members, scores, strict=True)
            ]

        return self.answer_by_session(requests, answer, empty_response)

    def _row_response(
        self, request: KeyedRequest, snap: Snapshot, row: np.ndarray, limit: int, started: float
    ) -> SearchResponse:
        if not request.query:
            return empty_response()
        eligible = snap.eligible(request.category_filter)
        allowed = np.ones(len(row), dtype=bool) if eligible is None else eligible
        return self._response(request, snap.tools, row, allowed, limit, started)

    def score_matrix(self, session_id: str, queries: Sequence[str | None]) -> tuple[list[Tool], np.ndarray]:
        """``(tools, scores)``: the exact score ``search`` gives every tool for every query, ``[n_queries,
        n_tools]`` float32 (0 where a tool does not match), before ``min_score_threshold``."""
        snap, scores = self._score_rows(session_id, queries)
        return (list(snap.tools) if snap else []), scores

    def _score_rows(
        self, session_id: str | None, queries: Sequence[str | None]
    ) -> tuple[Snapshot | None, np.ndarray]:
        snap = self._snapshot_of(session_id)
        if snap is None:
            return None, np.zeros((len(queries), 0), dtype=_F32)
        plans = [self._query_tokens(q, snap) for q in queries]
        if self.fields != "full":
            return snap, np.stack([self._score_row(snap, phrase, terms) for phrase, terms in plans])
        # One clause of distinct terms, each scoring its base posting score: the clause is the double sum
        # of a few float32 values (exact in any order), rounded to float - as the one-query path computes.
        rows, cols = [], []
        for i, (_, terms) in enumerate(plans):
            keys = {snap.vocab[t] for t in terms if t in snap.vocab}
            rows += [i] * len(keys)
            cols += sorted(keys)
        assert snap.by_key is not None  # built for fields="full"
        q = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), snap.by_key.shape[0]))
        return snap, (q @ snap.by_key).toarray().astype(_F32)

    def _score_row(self, snap: Snapshot, phrase: list[str], terms: list[str]) -> np.ndarray:
        row = np.zeros(len(snap.tools), dtype=_F32)
        if terms:
            query = self._shape.compile(
                snap.postings, snap.fields, phrase, terms, {t: snap.vocab.get(t, -1) for t in terms}
            )
            docs, scores = exact_all(snap.postings, query, None, max(len(snap.tools), 1))
            row[docs] = scores
        return row

    # -- explanation -----

    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Break the score of ``tool_name`` for ``query`` into clauses (the parts) and terms (in
        ``details``, a :class:`BM25Details`).

        If the session holds several tools with that name, the best-scoring one (then the first) is
        explained. Raises :class:`~toolsearch_lab.model.NotIndexedError` (a ``KeyError``) when the session
        or the tool is unknown."""
        snap = self._snapshot_of(session_id)
        candidates = self.positions_of(snap.tools if snap else (), session_id, tool_name)
        assert snap is not None  # positions_of raised otherwise
        phrase, terms = self._query_tokens(query, snap)
        row = self._score_row(snap, phrase, terms)
        doc = max(candidates, key=lambda c: row[c])  # max keeps the first of equals
        groups = self._shape.plan(phrase, terms) if terms else []
        clauses = explain_doc(snap.fields, groups, {t: snap.vocab.get(t, -1) for t in terms}, doc)
        return build_explanation(
            tool_name,
            query,
            terms,
            row,
            doc,
            clauses,
            min_score_threshold=self.min_score_threshold,
            max_results=self.default_max_results,
        )


def _check_options(
    floor: object, parameter_boost: object, analyzer: object, fields: object, stemmer: object
) -> None:
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not math.isfinite(floor):
        raise ValueError(f"min_score_threshold must be a finite number >= 0, got {floor!r}")
    if floor < 0:
        raise ValueError(f"min_score_threshold must be >= 0, got {floor}")
    if not isinstance(parameter_boost, (int, float)) or not parameter_boost > 0:
        raise ValueError(f"parameter_boost must be a number > 0, got {parameter_boost!r}")
    if analyzer not in ANALYZERS:
        raise ValueError(f"analyzer must be one of {ANALYZERS}, got {analyzer!r}")
    if fields not in FIELD_LAYOUTS:
        raise ValueError(f"fields must be one of {FIELD_LAYOUTS}, got {fields!r}")
    if stemmer not in STEMMERS:
        raise ValueError(f"stemmer must be one of {list(STEMMERS)}, got {stemmer!r}")


@functools.lru_cache(maxsize=1024)
def _analyze_words_cached(query: str, stemmer: Stemmer, stop_words: frozenset[str] | None) -> tuple[str, ...]:
    return tuple(stem_tokens(keyword_tokens(query, stop_words), stemmer))


# Spring's name for the same index; the index kind "lucene" (make_index, ToolSearchConfig) builds it too.
LuceneToolIndex = BM25ToolIndex

__all__ = [
    "ANALYZERS",
    "FIELD_LAYOUTS",
    "LENGTH_TABLE",
    "BM25Clause",
    "BM25Details",
    "BM25ToolIndex",
    "LuceneToolIndex",
    "TermContribution",
    "byte4_to_int",
    "encode_lengths",
    "int_to_byte4",
    "norm_inverse_cache",
]
