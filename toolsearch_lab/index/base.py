"""The template every built-in index follows: :class:`BaseToolIndex` checks each call's arguments and keys
its session once (:func:`~toolsearch_lab.model.session_key`, the one session rule), then calls the hooks a
subclass implements. The contract itself, :class:`~toolsearch_lab.model.ToolIndex`, is Spring's interface;
this is how every index here meets it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, final

import numpy as np

from toolsearch_lab.jsonlimits import shown
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Explanation,
    NotIndexedError,
    SearchConfidence,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    check_positive_int,
    empty_response,
    session_key,
)

log = logging.getLogger(__name__)

__all__ = ["BaseToolIndex", "KeyedRequest", "Ranked", "Rerank"]

T = TypeVar("T")
# (every passing column, best first; limit) -> (the columns answered with, the score each is shown with)
Rerank = Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class KeyedRequest(SearchRequest):
    """A :class:`SearchRequest` whose session id passed :func:`session_key`: what an index's ``_search``
    hook receives (a plain, non-blank ``str`` session)."""

    session_id: str


class Ranked(NamedTuple):
    """What :meth:`BaseToolIndex.ranked` answers: the response, and for each of its references, in order,
    its column (position among the tools ranked) and its score."""

    response: SearchResponse
    columns: np.ndarray
    scores: np.ndarray


class BaseToolIndex:
    """The template every built-in index follows (scikit-learn's way: one contract, checked once, here).

    The public methods check their arguments and key the session by :func:`session_key` once, then call
    the protected hooks a subclass implements:

    - ``_index(session, tools)`` and/or ``_index_tool(session, tool)``: each defaults to the other
      (Spring's ``indexTools`` is one ``indexTool`` per tool, in order), so implement at least one;
    - ``_clear(session)``;
    - ``_search(request, limit)`` and/or ``_search_many(requests, limits)``: each defaults to the other;
      ``limit`` is the request's ``max_results`` or the index's ``default_max_results``;
    - ``_explain(session, query, tool_name)`` for an index that explains its scores.

    A search hook scores the session's tools and hands the scores to :meth:`ranked`, the one ranking tail
    (category filter, score floor, stable top-k, the response); a batching ``_search_many`` answers each
    session's requests together through :meth:`answer_by_session`.

    Hooks receive a plain ``str`` session and a ``request.session_id`` that is one; a search whose session
    id breaks the rule gets Spring's empty response without reaching them. Subclasses call
    ``super().__init__(default_max_results)`` (validated once, here).
    """

    default_max_results: int = DEFAULT_MAX_RESULTS  # for subclasses that do not call __init__

    def __init__(self, default_max_results: int = DEFAULT_MAX_RESULTS) -> None:
        self.default_max_results = check_positive_int(
            default_max_results, f"{type(self).__name__}: default_max_results"
        )

    # -- the contract (not overridden: subclasses implement the hooks) --------------------------------

    @final
    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        """Add ``tools`` to the session, in order. Every entry is checked first, so a bad one leaves the
        session untouched."""
        session = session_key(session_id)
        self._index(session, [_checked_tool(t) for t in tools])

    @final
    def index_tool(self, session_id: str, tool: Tool) -> None:
        self._index_tool(session_key(session_id), _checked_tool(tool))

    @final
    def clear_index(self, session_id: str) -> None:
        """Forget the session's tools; an unknown session is a no-op."""
        self._clear(session_key(session_id))

    @final
    def search(self, request: SearchRequest) -> SearchResponse:
        keyed = self._keyed(request)
        if keyed is None:
            return empty_response()
        return self._search(keyed, self._limit(keyed))

    @final
    def search_many(self, requests: Sequence[SearchRequest]) -> list[SearchResponse]:
        """``[search(r) for r in requests]``; batching indexes answer them together, identically."""
        out = [empty_response() for _ in requests]
        keyed = [(i, k) for i, k in enumerate(map(self._keyed, requests)) if k is not None]
        if keyed:
            answers = self._search_many([k for _, k in keyed], [self._limit(k) for _, k in keyed])
            for (i, _), answer in zip(keyed, answers, strict=True):
                out[i] = answer
        return out

    @final
    def explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Why ``tool_name`` scored what it did for ``query`` in the session (see :class:`Explanation`)."""
        session = session_key(session_id)
        if not isinstance(query, str):
            raise TypeError(f"explain: query must be a str, got {type(query).__name__}")
        if not isinstance(tool_name, str):
            raise TypeError(f"explain: tool_name must be a str, got {type(tool_name).__name__}")
        return self._explain(session, query, tool_name)

    # -- the hooks ---------------------------------------------------------------------------------------

    def _index(self, session: str, tools: list[Tool]) -> None:
        for tool in tools:
            self._index_tool(session, tool)

    def _index_tool(self, session: str, tool: Tool) -> None:
        self._index(session, [tool])

    def _clear(self, session: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _clear")

    def _search(self, request: KeyedRequest, limit: int) -> SearchResponse:
        return self._search_many([request], [limit])[0]

    def _search_many(self, requests: list[KeyedRequest], limits: list[int]) -> list[SearchResponse]:
        return [self._search(r, k) for r, k in zip(requests, limits, strict=True)]

    def _explain(self, session: str, query: str, tool_name: str) -> Explanation:
        raise NotImplementedError(f"{type(self).__name__} does not explain its scores")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that implements neither hook of a pair would recurse forever: say so at definition."""
        super().__init_subclass__(**kwargs)
        for pair in (("_index", "_index_tool"), ("_search", "_search_many")):
            if all(getattr(cls, hook) is getattr(BaseToolIndex, hook) for hook in pair):
                raise TypeError(f"{cls.__name__} must implement {pair[0]} or {pair[1]}")
        for public in ("index_tools", "index_tool", "clear_index", "search", "search_many", "explain"):
            if public in vars(cls):
                raise TypeError(
                    f"{cls.__name__} overrides {public}, which checks and keys the session for every index; "
                    f"implement the hook instead (see BaseToolIndex)"
                )

    # -- helpers for subclasses ------------------------------------------------------------------------

    @property
    def search_type(self) -> str:
        """The ``searchType`` of this index's responses (an index Spring has keeps Spring's class name)."""
        return type(self).__name__

    def ranked(
        self,
        request: SearchRequest,
        tools: Sequence[Tool],
        scores: np.ndarray,
        limit: int,
        *,
        min_score_threshold: float | None = None,
        matched_only: bool = False,
        allowed: np.ndarray | None = None,
        rerank: Rerank | None = None,
        confidence: SearchConfidence | None = None,
        started: float | None = None,
    ) -> Ranked:
        """The ranking tail of every index: of ``tools`` and their ``scores`` (one per tool), the tools the
        request's category filter allows (``allowed``: that mask, when the caller has it), that matched
        (score > 0, with ``matched_only``) and score at least ``min_score_threshold`` (Spring keeps a score
        equal to it), best first with ties in catalog order (a stable sort, as Java's), the first ``limit``.

        ``scores`` are compared in their own dtype: float32 scores against a float32 threshold, as Spring
        compares floats. ``rerank`` replaces the cut at ``limit`` (the hybrid's diverse re-ranking). An
        abstaining ``confidence`` answers no tools; any ``confidence`` goes into the response, and so does
        the time since ``started`` (a ``time.perf_counter()`` reading), in ms."""
        if confidence is not None and confidence.abstained:
            answer = SearchResponse([], 0, self.metadata(request), confidence)
            return Ranked(answer, np.empty(0, dtype=np.int64), np.empty(0))
        if allowed is None and request.category_filter:
            allowed = self.category_mask(tools, request.category_filter)
        order = _best_first(scores, allowed, min_score_threshold, matched_only)
        if rerank is None:
            columns, shown = order[:limit], scores[order[:limit]]
        else:
            columns, shown = rerank(order, limit)
        refs = [
            ToolReference(tools[j].name, v, tools[j].description)
            for j, v in zip(columns.tolist(), shown.tolist(), strict=True)
        ]
        response = SearchResponse(refs, len(refs), self.metadata(request, started), confidence)
        return Ranked(response, columns, shown)

    def metadata(self, request: SearchRequest, started: float | None = None) -> SearchMetadata:
        """A response's metadata: this index's ``search_type``, the query, and the time since ``started``
        (a ``time.perf_counter()`` reading) in ms, when given."""
        elapsed_ms = None if started is None else round((time.perf_counter() - started) * 1000.0, 3)
        return SearchMetadata(self.search_type, request.query, elapsed_ms)

    @staticmethod
    def rank_of(
        column: int,
        scores: np.ndarray,
        *,
        min_score_threshold: float | None = None,
        matched_only: bool = False,
    ) -> int | None:
        """The 1-based rank :meth:`ranked` gives the tool at ``column`` of ``scores`` with these options, no
        category filter and no limit; None when it does not return it (for ``explain``)."""
        order = _best_first(scores, None, min_score_threshold, matched_only)
        where = np.flatnonzero(order == column)
        return int(where[0]) + 1 if len(where) else None

    @staticmethod
    def answer_by_session(
        requests: Sequence[KeyedRequest],
        answer: Callable[[str, list[int]], Sequence[T] | None],
        empty: Callable[[], T],
    ) -> list[T]:
        """A batch answered session by session, so each session's queries are scored together (one
        embedding or scoring call): ``answer(session, members)`` answers the requests at the positions
        ``members``, in order, or returns None (a session without tools) to leave them ``empty()``."""
        out = [empty() for _ in requests]
        members: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            members.setdefault(r.session_id, []).append(i)
        for session, positions in members.items():
            answers = answer(session, positions)
            if answers is not None:
                for i, a in zip(positions, answers, strict=True):
                    out[i] = a
        return out

    def _keyed(self, request: Any) -> KeyedRequest | None:
        """The request with its session keyed, or None when the session id breaks the rule (Spring answers
        such a search with the empty response)."""
        if not isinstance(request, SearchRequest):
            raise TypeError(f"expected a SearchRequest, got {type(request).__name__}: {shown(request)}")
        if request.query is not None and not isinstance(request.query, str):
            raise TypeError(f"SearchRequest.query must be a str or None, got {type(request.query).__name__}")
        session = self._session_or_none(request.session_id)
        if session is None:
            log.warning("%s.search: no usable session id, returning the empty response", type(self).__name__)
            return None
        return KeyedRequest(session, request.query, request.max_results, request.category_filter)

    @staticmethod
    def _session_or_none(session_id: Any) -> str | None:
        """:func:`session_key` for lookups that answer "nothing" rather than raise (searches, inspection)."""
        try:
            return session_key(session_id)
        except ValueError:
            return None

    def _limit(self, request: SearchRequest) -> int:
        return request.max_results if request.max_results is not None else self.default_max_results

    @staticmethod
    def positions_of(tools: Sequence[Tool], session_id: str, tool_name: str) -> list[int]:
        """Where ``tool_name`` sits in a session's ``tools`` (for ``explain``); :class:`NotIndexedError`
        naming the session or the tool when it is not there."""
        if not tools:
            raise NotIndexedError(f"explain: session {session_id!r} holds no tools")
        found = [i for i, t in enumerate(tools) if t.name == tool_name]
        if not found:
            raise NotIndexedError(f"explain: no tool named {tool_name!r} in session {session_id!r}")
        return found

    @staticmethod
    def category_allows(tool: Tool, category_filter: str | None) -> bool:
        """Spring ignores categoryFilter; we honour it when tools carry a category (documented deviation).
        Tools without a category are kept, so a filter never hides uncategorised catalogs."""
        if not category_filter:
            return True
        if tool.category is None:
            return True
        return tool.category.casefold() == category_filter.casefold()

    @classmethod
    def category_mask(cls, tools: Sequence[Tool], category_filter: str | None) -> np.ndarray:
        """:meth:`category_allows` of each tool, as a boolean mask."""
        if not category_filter:
            return np.ones(len(tools), dtype=bool)
        allowed = (cls.category_allows(t, category_filter) for t in tools)
        return np.fromiter(allowed, dtype=bool, count=len(tools))


def _best_first(
    scores: np.ndarray, allowed: np.ndarray | None, min_score_threshold: float | None, matched_only: bool
) -> np.ndarray:
    """The columns that pass (``allowed``, None: all), best first; ties keep catalog order (a stable sort,
    as Java's)."""
    keep = allowed
    if matched_only:
        keep = scores > 0 if keep is None else keep & (scores > 0)
    if min_score_threshold is not None:
        above = scores >= min_score_threshold
        keep = above if keep is None else keep & above
    order = np.arange(len(scores)) if keep is None else keep.nonzero()[0]
    return order[np.argsort(-scores[order], kind="stable")]


def _checked_tool(tool: Any) -> Tool:
    if not isinstance(tool, Tool):
        raise TypeError(f"expected a Tool, got {type(tool).__name__}: {shown(tool)}")
    return tool
