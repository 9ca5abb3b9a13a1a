"""VectorToolIndex: Spring AI's embedding-based tool index (spec §5), with a real embedder instead of a
VectorStore.

Spring behaviour kept:
* the embedded text is the tool **description** only (``text="description"``, the default);
* ``index_tools`` embeds the whole batch in ONE embedder call; an empty batch makes no call;
* every document gets a fresh UUID, tracked per session; ``clear_index`` forgets exactly those ids;
* search: top-k = ``max_results`` (default 10), keep cosine similarity >= 0.2, best first, ties in insertion
  order; ``total_matches`` = number returned; ``search_type`` "VectorToolIndex"; ``search_time_ms`` None.

Documented deviations:
* Per-session matrices instead of one shared store filtered by ``sessionId``: isolation holds by
  construction, and a null/blank session returns the empty response instead of searching every session.
* ``categoryFilter`` is honoured for tools that carry a category (Spring logs a warning and ignores it).
* ``text="full"`` embeds name + description + parameter names/descriptions (an opt-in improvement).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from toolsearch_lab.embed.base import Embedder, split_identifiers
from toolsearch_lab.model import (
    BaseToolIndex,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)

log = logging.getLogger(__name__)

TEXT_MODES = ("description", "full", "name")


def _parameter_lines(tool: Tool) -> list[str]:
    props = tool.parameters.get("properties") or {}
    lines = []
    if isinstance(props, dict):
        for pname, schema in props.items():
            desc = schema.get("description") if isinstance(schema, dict) else None
            words = split_identifiers(str(pname))
            lines.append(f"{words}: {desc}" if isinstance(desc, str) and desc.strip() else words)
    return lines


def tool_text(tool: Tool, mode: str = "description") -> str:
    """The text embedded for ``tool``.

    ``description``: Spring's choice. ``full``: the name with identifiers split (``get_stock_price`` ->
    ``get stock price``), the description, then ``Parameters:`` with each parameter's name and description.
    ``name``: the split name alone (a "view" the hybrid index uses). The name matters most when descriptions
    are short, vague or in another language than the queries.
    """
    if mode == "description":
        return tool.description
    if mode == "name":
        return split_identifiers(tool.name)
    if mode != "full":
        raise ValueError(f"text mode must be one of {TEXT_MODES}, got {mode!r}")
    parts = [split_identifiers(tool.name) + ".", tool.description.strip()]
    params = _parameter_lines(tool)
    if params:
        parts.append("Parameters: " + "; ".join(params) + ".")
    return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class VectorDocument:
    """What Spring stores per tool: a unique id, the embedded text, and the session/tool metadata."""

    id: str
    text: str
    session_id: str
    tool: Tool

    @property
    def metadata(self) -> dict:
        return {
            "sessionId": self.session_id,
            "id": self.id,
            "toolName": self.tool.name,
            "toolDescription": self.tool.description,
        }


class _Session:
    def __init__(self) -> None:
        self.documents: list[VectorDocument] = []
        self.matrix: np.ndarray | None = None  # [n_docs, dim], unit rows


class VectorToolIndex(BaseToolIndex):
    """Cosine-similarity tool search over embeddings, one matrix per session (vectorised numpy)."""

    DEFAULT_MAX_RESULTS = 10
    DEFAULT_SIMILARITY_THRESHOLD = 0.2
    search_type = "VectorToolIndex"

    def __init__(
        self,
        embedder: Embedder | None = None,
        text: str = "description",
        similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
        default_max_results: int = DEFAULT_MAX_RESULTS,
    ) -> None:
        if text not in TEXT_MODES:
            raise ValueError(f"VectorToolIndex: text must be one of {TEXT_MODES}, got {text!r}")
        if embedder is None:
            from toolsearch_lab.embed.base import default_embedder

            embedder = default_embedder()
        self.embedder = embedder
        self.text = text
        self.similarity_threshold = float(similarity_threshold)
        self.default_max_results = default_max_results
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return (
            f"VectorToolIndex(embedder={self.embedder!r}, text={self.text!r}, "
            f"similarity_threshold={self.similarity_threshold})"
        )

    # ------------------------------------------------------------------ indexing
    def index_tool(self, session_id: str, tool: Tool) -> None:
        self.index_tools(session_id, [tool])

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        tools = self.checked_batch(session_id, tools)
        if not tools:
            return  # Spring: an empty batch makes no store (embedding) call
        texts = [tool_text(t, self.text) for t in tools]
        # Embed outside the lock: concurrent sessions (and threads) embed in parallel.
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        if vectors.shape[0] != len(tools):
            raise RuntimeError(
                f"{self.embedder.name}: returned {vectors.shape[0]} vectors for {len(tools)} tools"
            )
        docs = [
            VectorDocument(str(uuid.uuid4()), text, session_id, tool)
            for text, tool in zip(texts, tools, strict=False)
        ]
        with self._lock:
            session = self._sessions.setdefault(session_id, _Session())
            if session.matrix is not None and session.matrix.shape[1] != vectors.shape[1]:
                raise ValueError(
                    f"VectorToolIndex: session {session_id!r} holds {session.matrix.shape[1]}-dim vectors, "
                    f"the embedder returned {vectors.shape[1]}-dim ones"
                )
            session.documents = session.documents + docs
            session.matrix = vectors if session.matrix is None else np.vstack([session.matrix, vectors])

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            log.info("VectorToolIndex: no tools tracked for session %r; nothing to clear", session_id)
        else:
            log.info("VectorToolIndex: cleared %d tools of session %r", len(session.documents), session_id)

    # ------------------------------------------------------------------ inspection (notebooks, tests)
    def documents(self, session_id: str) -> list[VectorDocument]:
        with self._lock:
            session = self._sessions.get(session_id)
            return list(session.documents) if session else []

    def tracked_ids(self, session_id: str) -> list[str]:
        return [d.id for d in self.documents(session_id)]

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def _snapshot(self, session_id: str | None) -> tuple[list[VectorDocument], np.ndarray] | None:
        if not isinstance(session_id, str) or not session_id.strip():
            return None
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.matrix is None:
                return None
            return session.documents, session.matrix  # both replaced, never mutated, on update

    def tool_matrix(self, session_id: str | None) -> tuple[list[Tool], np.ndarray]:
        """The session's tools and their unit vectors ``[n_tools, dim]`` (empty for an unknown session)."""
        snap = self._snapshot(session_id)
        if snap is None:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [d.tool for d in snap[0]], snap[1]

    def similarity_matrix(
        self, session_id: str | None, queries: Sequence[str], query_vectors: np.ndarray | None = None
    ) -> tuple[list[Tool], np.ndarray]:
        """Cosine similarity of every query to every tool of the session: ``(tools, [n_queries, n_tools])``.
        All queries are embedded in one call (the evaluation fast path); pass ``query_vectors`` to reuse
        embeddings computed elsewhere with the same embedder."""
        snap = self._snapshot(session_id)
        if snap is None:
            return [], np.zeros((len(queries), 0), dtype=np.float32)
        docs, matrix = snap
        if query_vectors is None:
            query_vectors = self.embedder.embed([q or "" for q in queries])
        q = np.asarray(query_vectors, dtype=np.float32)
        return [d.tool for d in docs], q @ matrix.T

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
        """``search`` for many queries at once, with identical results; one embedder call for all queries."""
        limit = self.resolve_max_results(
            SearchRequest(session_id, None, max_results), self.default_max_results
        )
        if self._snapshot(session_id) is None:
            return [empty_response() for _ in queries]
        tools, sims = self.similarity_matrix(session_id, [q or "" for q in queries])  # type: ignore[arg-type]
        allowed = np.array([self.category_allows(t, category_filter) for t in tools], dtype=bool)
        responses = []
        for query, row in zip(queries, sims, strict=False):
            keep = np.flatnonzero(allowed & (row >= self.similarity_threshold))
            # Stable sort on -score: equal scores keep insertion order, as a Java stable sort would.
            ranked = keep[np.argsort(-row[keep], kind="stable")][:limit]
            refs = [ToolReference(tools[i].name, float(row[i]), tools[i].description) for i in ranked]
            responses.append(SearchResponse(refs, len(refs), SearchMetadata(self.search_type, query, None)))
        return responses
