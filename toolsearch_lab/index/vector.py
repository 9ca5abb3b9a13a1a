"""VectorToolIndex: Spring AI's embedding-based tool index (spec §5), with a real embedder instead of a
VectorStore.

Spring behaviour kept:
* the embedded text is the tool **description** only (``text="description"``, the default);
* ``index_tools`` embeds the whole batch in ONE embedder call; an empty batch makes no call;
* every document gets a fresh UUID, tracked per session; ``clear_index`` forgets exactly those ids;
* search: top-k = ``max_results`` (default 10), keep cosine similarity >= 0.2 (Spring's
  ``similarityThreshold``, here ``min_score_threshold`` as in every index), best first, ties in insertion
  order; ``total_matches`` = number returned; ``search_type`` "VectorToolIndex"; ``search_time_ms`` None.

Documented deviations:
* Per-session matrices instead of one shared store filtered by ``sessionId``: isolation holds by
  construction, and a null/blank session returns the empty response instead of searching every session.
* ``categoryFilter`` is honoured for tools that carry a category (Spring logs a warning and ignores it).
* ``text="full"`` embeds name + description + parameter names/descriptions (an opt-in improvement).

Options the hybrid index uses (off by default): several *views* (``text=("description", "full", "name")``:
the score is the mean cosine over the views, so no single text dominates) and ``query_clauses`` (a
multi-sentence request is also embedded sentence by sentence; each view scores the mean of the whole-query
cosine and the best sentence's cosine, because a tool serving one step matches that step's sentence
better than the blurred whole).
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolsearch_lab.embed.base import Embedder
from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Contribution,
    Explanation,
    SearchResponse,
    Tool,
    empty_response,
)
from toolsearch_lab.text.tool_text import TEXT_MODES, TextMode, tool_text

log = logging.getLogger(__name__)

__all__ = ["TEXT_MODES", "TextMode", "VectorDocument", "VectorToolIndex", "split_clauses", "tool_text"]

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def split_clauses(query: str, min_words: int = 3) -> list[str]:
    """The sentences of a multi-sentence request (each of at least ``min_words`` words), or [] when the
    query is a single sentence (then the whole query is all there is)."""
    parts = [p.strip() for p in _SENTENCE_END.split(query.strip())]
    parts = [p for p in parts if len(p.split()) >= min_words]
    return parts if len(parts) >= 2 else []


@dataclass(frozen=True)
class VectorDocument:
    """What Spring stores per tool: a unique id, the embedded text, and the session/tool metadata."""

    id: str
    text: str
    session_id: str
    tool: Tool

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "id": self.id,
            "toolName": self.tool.name,
            "toolDescription": self.tool.description,
        }


@dataclass(frozen=True)
class _Snapshot:
    """One session at one point in time (replaced, never mutated, on update)."""

    documents: tuple[VectorDocument, ...]
    matrices: tuple[np.ndarray, ...]  # per view, [n_docs, dim], unit rows


class VectorToolIndex(BaseToolIndex):
    """Cosine-similarity tool search over embeddings, one matrix per session and view (vectorised numpy)."""

    DEFAULT_SIMILARITY_THRESHOLD = 0.2
    search_type = "VectorToolIndex"
    min_score_threshold: float = DEFAULT_SIMILARITY_THRESHOLD

    def __init__(
        self,
        embedder: Embedder | None = None,
        text: TextMode | Sequence[TextMode] = "description",
        min_score_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
        default_max_results: int = DEFAULT_MAX_RESULTS,
        *,
        query_clauses: bool = False,
    ) -> None:
        super().__init__(default_max_results)
        views: tuple[TextMode, ...] = (text,) if isinstance(text, str) else tuple(dict.fromkeys(text))
        if not views or any(v not in TEXT_MODES for v in views):
            raise ValueError(
                f"VectorToolIndex: text must be one of {TEXT_MODES} or a tuple of them, got {text!r}"
            )
        self._embedder = embedder
        self.text = text
        self.views = views
        self.min_score_threshold = float(min_score_threshold)
        self.query_clauses = bool(query_clauses)
        self._sessions: dict[str, _Snapshot] = {}
        self._lock = threading.RLock()

    @property
    def embedder(self) -> Embedder:
        """The embedder given, or the process-wide cached MiniLM, taken on first use (indexing or search)."""
        if self._embedder is None:
            self._embedder = default_embedder()
        return self._embedder

    def __repr__(self) -> str:
        return (
            f"VectorToolIndex(embedder={self.embedder!r}, text={self.text!r}, "
            f"min_score_threshold={self.min_score_threshold})"
        )

    # ------------------------------------------------------------------ indexing
    def _index(self, session_id: str, tools: list[Tool]) -> None:
        if not tools:
            return  # Spring: an empty batch makes no store (embedding) call
        texts = [[tool_text(t, view) for t in tools] for view in self.views]
        # Embed outside the lock (concurrent sessions embed in parallel), every view in one call.
        vectors = np.asarray(self.embedder.embed([x for view in texts for x in view]), dtype=np.float32)
        if vectors.shape[0] != len(tools) * len(self.views):
            raise RuntimeError(
                f"{self.embedder.name}: returned {vectors.shape[0]} vectors for "
                f"{len(tools) * len(self.views)} texts"
            )
        per_view = np.split(vectors, len(self.views))
        docs = tuple(
            VectorDocument(str(uuid.uuid4()), text, session_id, tool)
            for text, tool in zip(texts[0], tools, strict=True)
        )
        with self._lock:
            old = self._sessions.get(session_id)
            if old is not None and old.matrices[0].shape[1] != vectors.shape[1]:
                raise ValueError(
                    f"VectorToolIndex: session {session_id!r} holds {old.matrices[0].shape[1]}-dim vectors, "
                    f"the embedder returned {vectors.shape[1]}-dim ones"
                )
            if old is None:
                self._sessions[session_id] = _Snapshot(docs, tuple(per_view))
            else:
                matrices = tuple(np.vstack([a, b]) for a, b in zip(old.matrices, per_view, strict=True))
                self._sessions[session_id] = _Snapshot(old.documents + docs, matrices)

    def _clear(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            log.info("VectorToolIndex: no tools tracked for session %r; nothing to clear", session_id)
        else:
            log.info("VectorToolIndex: cleared %d tools of session %r", len(session.documents), session_id)

    # ------------------------------------------------------------------ inspection (notebooks, tests)
    def documents(self, session_id: str) -> list[VectorDocument]:
        snap = self._snapshot(session_id)
        return list(snap.documents) if snap else []

    def tracked_ids(self, session_id: str) -> list[str]:
        return [d.id for d in self.documents(session_id)]

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def _snapshot(self, session_id: str | None) -> _Snapshot | None:
        key = self._session_or_none(session_id)
        if key is None:
            return None
        with self._lock:
            return self._sessions.get(key)

    def tool_matrix(self, session_id: str | None, view: str | None = None) -> tuple[list[Tool], np.ndarray]:
        """The session's tools and their unit vectors ``[n_tools, dim]`` for ``view`` (default: the first)."""
        snap = self._snapshot(session_id)
        if snap is None:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [d.tool for d in snap.documents], snap.matrices[self.views.index(view or self.views[0])]

    def view_similarities(
        self, session_id: str | None, queries: Sequence[str]
    ) -> tuple[list[Tool], dict[TextMode, np.ndarray]]:
        """Per view, the score of every query against every tool ``[n_queries, n_tools]`` (float32): the
        cosine, or with ``query_clauses`` the mean of the whole-query and best-sentence cosines."""
        snap = self._snapshot(session_id)
        if snap is None:
            return [], {v: np.zeros((len(queries), 0), dtype=np.float32) for v in self.views}
        clauses = [split_clauses(q) if self.query_clauses else [] for q in queries]
        extra = [c for cs in clauses for c in cs]
        owner = np.repeat(np.arange(len(queries)), [len(cs) for cs in clauses])
        vectors = np.asarray(self.embedder.embed(list(queries) + extra), dtype=np.float32)
        out = {}
        for view, matrix in zip(self.views, snap.matrices, strict=True):
            # One matrix-vector product per query, never one product for the batch: BLAS sums a batch in
            # another order, and search_many must give exactly the scores of search.
            rows = [matrix @ v for v in vectors]
            sims = np.array(rows, dtype=np.float32).reshape(len(vectors), len(matrix))
            whole = sims[: len(queries)]
            if extra:
                whole = whole.copy()
                part = sims[len(queries) :]
                for i in np.unique(owner):
                    whole[i] = 0.5 * whole[i] + 0.5 * part[owner == i].max(axis=0)
            out[view] = whole
        return [d.tool for d in snap.documents], out

    def similarity_matrix(
        self, session_id: str | None, queries: Sequence[str]
    ) -> tuple[list[Tool], np.ndarray]:
        """The score ``search`` ranks by, for every query and tool: ``(tools, [n_queries, n_tools])`` (the
        mean over the views; the plain cosine with one view). All queries are embedded in one call."""
        tools, views = self.view_similarities(session_id, queries)
        return tools, np.mean(np.stack(list(views.values())), axis=0)

    # ------------------------------------------------------------------ search
    def _search_many(self, requests: list[KeyedRequest], limits: list[int]) -> list[SearchResponse]:
        """Many searches with the results of one each; one embedder call per session."""

        def answer(session_id: str, members: list[int]) -> list[SearchResponse] | None:
            tools, sims = self.similarity_matrix(session_id, [requests[i].query or "" for i in members])
            if not tools:
                return None
            floor = self.min_score_threshold
            return [
                self.ranked(requests[i], tools, row, limits[i], min_score_threshold=floor).response
                for i, row in zip(members, sims, strict=True)
            ]

        return self.answer_by_session(requests, answer, empty_response)

    # ------------------------------------------------------------------ explanation
    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Each view's share of the score of ``tool_name`` (its cosine over the number of views); the
        details hold every view's cosine. Raises ``KeyError`` for an unknown session or tool."""
        tools, views = self.view_similarities(session_id, [query])
        candidates = self.positions_of(tools, session_id, tool_name)
        row = np.mean(np.stack(list(views.values())), axis=0)[0]
        j = max(candidates, key=lambda c: row[c])  # max keeps the first of equals
        rank = self.rank_of(j, row, min_score_threshold=self.min_score_threshold)
        n = len(self.views)
        detail = " (mean of whole query and best sentence)" if self.query_clauses else ""
        parts = tuple(
            Contribution(
                f"{view} view: cosine / {n}", float(s[0, j]) / n, f"cosine {float(s[0, j]):.4f}{detail}"
            )
            for view, s in views.items()
        )
        return Explanation(
            index="vector",
            tool_name=tool_name,
            query=query,
            score=float(row[j]),
            parts=parts,
            returned=rank is not None and rank <= self.default_max_results,
            rank=rank,
            details={view: float(s[0, j]) for view, s in views.items()},
        )
