"""CharNgramToolIndex: TF-IDF cosine over character 3-5-grams of each tool's full text.

Sub-word overlap survives what word matching cannot: derivations a stemmer leaves apart
(``translator``/``translation``), typos ("Povides strology services"), glued compounds (``web scraper``/
``webscraping``). The hybrid index uses it as half of its keyword side; on its own it is a usable index.

Features: scikit-learn's ``char_wb`` analyzer (n-grams within word boundaries), hashed into 2^20 buckets
(collisions are negligible at catalog sizes); weights: sublinear tf x smooth idf (scikit-learn's
``ln((1 + N) / (1 + df)) + 1``) over the session's tools, rows scaled to unit length; score: the cosine.
The idf is rebuilt when tools are added (``index_tools``), with sparse array operations.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize as l2_rows

from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Contribution,
    Explanation,
    SearchResponse,
    Tool,
    empty_response,
)
from toolsearch_lab.text.tool_text import tool_text

N_FEATURES = 1 << 20
_HASHER = HashingVectorizer(
    analyzer="char_wb", ngram_range=(3, 5), n_features=N_FEATURES, alternate_sign=False, norm=None
)


def _weights(raw: Any, idf: np.ndarray) -> Any:
    """Sublinear tf x idf, rows scaled to unit length."""
    x = raw.astype(np.float64, copy=True)
    x.data = (1.0 + np.log(x.data)) * idf[x.indices]
    return l2_rows(x)


@dataclass(frozen=True)
class _Snapshot:
    tools: tuple[Tool, ...]
    raw: Any  # csr [tools x features], raw counts
    idf: np.ndarray  # [features]
    matrix: Any  # csr [features x tools], unit columns


def _snapshot(tools: tuple[Tool, ...], raw: Any) -> _Snapshot:
    n_docs = len(tools)
    df = np.bincount(raw.indices, minlength=N_FEATURES).astype(np.float64)
    idf = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
    return _Snapshot(tools, raw, idf, _weights(raw, idf).T.tocsr())


class CharNgramToolIndex(BaseToolIndex):
    """Character n-gram TF-IDF cosine per session. ``min_score_threshold`` (default 0) drops weaker
    matches."""

    search_type = "CharNgramToolIndex"
    min_score_threshold: float = 0.0

    def __init__(
        self, min_score_threshold: float = 0.0, default_max_results: int = DEFAULT_MAX_RESULTS
    ) -> None:
        super().__init__(default_max_results)
        self.min_score_threshold = float(min_score_threshold)
        self._sessions: dict[str, _Snapshot] = {}
        self._lock = threading.Lock()

    def _index(self, session_id: str, tools: list[Tool]) -> None:
        if not tools:
            return
        raw = _HASHER.transform([tool_text(t, "full") for t in tools]).tocsr()
        with self._lock:
            old = self._sessions.get(session_id)
            if old is not None:
                tools, raw = list(old.tools) + tools, sp.vstack([old.raw, raw]).tocsr()
            self._sessions[session_id] = _snapshot(tuple(tools), raw)

    def _clear(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def score_matrix(
        self, session_id: str | None, queries: Sequence[str | None]
    ) -> tuple[list[Tool], np.ndarray]:
        """``(tools, [n_queries, n_tools])``: the cosine of every query with every tool of the session."""
        key = self._session_or_none(session_id)
        with self._lock:
            snap = self._sessions.get(key) if key is not None else None
        if snap is None:
            return [], np.zeros((len(queries), 0))
        q = _weights(_HASHER.transform([x or "" for x in queries]).tocsr(), snap.idf)
        return list(snap.tools), (q @ snap.matrix).toarray().astype(np.float64)

    def _search_many(self, requests: list[KeyedRequest], limits: list[int]) -> list[SearchResponse]:
        """Many searches; those of one session are scored in one sparse product. A tool is returned when
        it shares an n-gram with the query (score > 0) and scores at least ``min_score_threshold``."""
        floor = self.min_score_threshold

        def answer(session_id: str, members: list[int]) -> list[SearchResponse] | None:
            tools, scores = self.score_matrix(session_id, [requests[i].query for i in members])
            if not tools:
                return None
            return [
                self.ranked(
                    requests[i], tools, row, limits[i], min_score_threshold=floor, matched_only=True
                ).response
                for i, row in zip(members, scores, strict=True)
            ]

        return self.answer_by_session(requests, answer, empty_response)

    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """The cosine as one part; ``details`` lists the query's n-grams the tool shares (up to 20)."""
        tools, scores = self.score_matrix(session_id, [query])
        candidates = self.positions_of(tools, session_id, tool_name)
        row = scores[0]
        j = max(candidates, key=lambda c: row[c])
        rank = self.rank_of(j, row, min_score_threshold=self.min_score_threshold, matched_only=True)
        shared = _shared_ngrams(query, tool_text(tools[j], "full"))
        return Explanation(
            index="char n-grams",
            tool_name=tool_name,
            query=query,
            score=float(row[j]),
            parts=(Contribution("character 3-5-gram TF-IDF cosine", float(row[j]), ", ".join(shared[:20])),),
            returned=rank is not None and rank <= self.default_max_results,
            rank=rank,
            details={"shared_ngrams": shared},
        )


def _shared_ngrams(query: str, text: str) -> list[str]:
    analyse = _HASHER.build_analyzer()
    mine = set(analyse(text))
    return sorted({g.strip() for g in analyse(query) if g in mine and g.strip()}, key=lambda g: (-len(g), g))
