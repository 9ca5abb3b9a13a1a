"""The :class:`RegexToolIndex` itself: per-session tool lists, search, ranking and explanations. How a
query is scored lives in :mod:`.keywords` (Spring's keyword mode) and :mod:`.pattern` (pattern mode)."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, get_args

import numpy as np

from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.index.regex.corpus import Entry, Session
from toolsearch_lab.index.regex.keywords import (
    is_valid_spring_pattern,
    keyword_parts,
    keyword_scores,
    spring_query_pattern,
)
from toolsearch_lab.index.regex.pattern import (
    PatternMatcher,
    compile_user_pattern,
    pattern_mode_scores,
    pattern_parts,
)
from toolsearch_lab.model import (
    DEFAULT_MAX_RESULTS,
    Contribution,
    Explanation,
    SearchResponse,
    Tool,
    empty_response,
)
from toolsearch_lab.text.java import compile_java

log = logging.getLogger(__package__)  # the whole package logs as ``toolsearch_lab.index.regex``

RegexMode = Literal["keywords", "pattern"]
MODES: tuple[RegexMode, ...] = get_args(RegexMode)


class MatchSpan(NamedTuple):
    field: str  # "name", "description", "parameter:<path>" or "parameter:<path>:description"
    start: int  # Python string indices into the field's text
    end: int
    text: str


@dataclass(frozen=True)
class RegexDetails:
    """The regex index's evidence behind an :class:`~toolsearch_lab.model.Explanation` (its ``details``):
    every hit, the pattern, the texts searched and the score split into its parts."""

    tool_name: str
    query: str | None
    pattern: str
    spans: list[MatchSpan]
    name_score: float
    description_score: float
    parameter_score: float
    fields: dict[str, str]

    @property
    def score(self) -> float:
        return self.name_score + self.description_score + self.parameter_score


class RegexToolIndex(BaseToolIndex):
    """Per-session list of tools searched with a regular expression (spec §3). Thread-safe: writers swap in a
    new session snapshot under a lock (copy-on-write, like Spring's CopyOnWriteArrayList); searches read a
    snapshot without locking, so they never wait for each other (except once, while its corpus is built)."""

    def __init__(
        self,
        mode: RegexMode = "keywords",
        *,
        default_max_results: int = DEFAULT_MAX_RESULTS,
        pattern_call_timeout_s: float = 0.05,
        pattern_budget_s: float = 1.0,
        case_sensitive: bool = False,
    ):
        super().__init__(default_max_results)
        if mode not in MODES:
            raise ValueError(f"RegexToolIndex: unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        for label, value in (
            ("pattern_call_timeout_s", pattern_call_timeout_s),
            ("pattern_budget_s", pattern_budget_s),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"RegexToolIndex: {label} must be a number of seconds > 0, got {value!r}")
        self.mode = mode
        if case_sensitive and mode != "pattern":
            raise ValueError(
                "RegexToolIndex: case_sensitive applies to mode='pattern' (keyword mode is Spring's)"
            )
        self.case_sensitive = bool(case_sensitive)
        self.pattern_call_timeout_s = float(pattern_call_timeout_s)
        self.pattern_budget_s = float(pattern_budget_s)
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        sizes = f"sessions={len(self._sessions)}, tools={self.total_size()}"
        return f"{type(self).__name__}(mode={self.mode!r}, {sizes})"

    # -- indexing -------------------------------------------------------------------------------------

    def _index(self, session: str, tools: list[Tool]) -> None:
        """Append in order, in one copy. Duplicates are kept (Spring does not de-duplicate)."""
        entries = tuple(Entry.of(t) for t in tools)
        with self._lock:
            old = self._sessions.get(session)
            self._sessions[session] = Session((old.entries if old else ()) + entries)

    def _clear(self, session: str) -> None:
        with self._lock:
            self._sessions.pop(session, None)

    def size(self, session_id: str | None) -> int:
        key = self._session_or_none(session_id)
        session = self._sessions.get(key) if key is not None else None
        return len(session.entries) if session else 0

    def total_size(self) -> int:
        return sum(len(session.entries) for session in list(self._sessions.values()))

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()

    # -- query -> pattern -----------------------------------------------------------------------------

    def convert_query_to_regex_pattern(self, query: str | None) -> str:
        """Spring's ``convertQueryToRegexPattern`` (spec §3.1). Override to change keyword-mode patterns; the
        result is compiled Java-style (see :func:`toolsearch_lab.text.java.compile_java`)."""
        return spring_query_pattern(query)

    @staticmethod
    def is_valid_pattern(pattern: Any) -> bool:
        """Spring's ``isValidPattern``: a non-blank string of at most 200 UTF-16 units that compiles."""
        return is_valid_spring_pattern(pattern)

    # -- search ---------------------------------------------------------------------------------------

    def _search(self, request: KeyedRequest, limit: int) -> SearchResponse:
        session = self._sessions.get(request.session_id)
        if session is None:  # a snapshot: writers replace it, never mutate it
            return empty_response()
        started = time.perf_counter()
        try:
            scores = self._scores(session, request.query)
        except (
            re.error
        ) as exc:  # keyword mode only, and only via an overridden convert_query_to_regex_pattern
            log.error("RegexToolIndex.search: pattern does not compile (%s), returning no results", exc)
            return SearchResponse([], None, self.metadata(request, started))
        tools = [e.tool for e in session.entries]
        return self.ranked(request, tools, scores, limit, matched_only=True, started=started).response

    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Why the first tool named ``tool_name`` in the session scores what it does for ``query``: the
        name / description / parameter parts (they add up to the score ``search`` gives), its rank, and in
        ``details`` a :class:`RegexDetails` with every hit. Span offsets are Python string indices into
        ``details.fields[span.field]`` (the score itself uses UTF-16 offsets, like Java)."""
        session = self._sessions.get(session_id) or Session(())
        entries = session.entries
        position = self.positions_of([e.tool for e in entries], session_id, tool_name)[0]
        details = self._details(entries[position], query)
        rank = self.rank_of(position, self._scores(session, query), matched_only=True)
        return Explanation(
            index=type(self).__name__,
            tool_name=tool_name,
            query=query,
            score=details.score,
            parts=_contributions(details, with_parameters=self.mode == "pattern"),
            returned=rank is not None and rank <= self.default_max_results,
            rank=rank,
            details=details,
        )

    # -- internals ------------------------------------------------------------------------------------

    def _scores(self, session: Session, query: str | None) -> np.ndarray:
        """Every tool's score, in insertion order (0.0 for no match)."""
        if self.mode == "pattern":
            return pattern_mode_scores(session, query, self)
        return keyword_scores(session, self.convert_query_to_regex_pattern(query))

    def _details(self, entry: Entry, query: str) -> RegexDetails:
        texts = entry.texts()
        if self.mode == "pattern":
            rx, _ = compile_user_pattern(query, self.case_sensitive)
            matcher = PatternMatcher(query, rx, self, (1, len(texts), len(texts), False))
            pattern, parts = query, pattern_parts(entry, {i: matcher.find(t) for i, t in enumerate(texts)})
        else:
            pattern = self.convert_query_to_regex_pattern(query)
            parts = keyword_parts(entry, compile_java(pattern)) + [(0.0, [])]
        fields = {
            "name": entry.tool.name,
            "description": entry.tool.description,
            **dict(entry.parameter_fields),
        }
        spans = [MatchSpan(f, a, b, fields[f][a:b]) for _, hits in parts for f, a, b in hits]
        return RegexDetails(
            entry.tool.name, query, pattern, spans, parts[0][0], parts[1][0], parts[2][0], fields
        )


def _contributions(details: RegexDetails, with_parameters: bool) -> tuple[Contribution, ...]:
    """The score's parts as shared ``Contribution``s (a parameter part only where parameters are searched)."""

    def detail(field_prefix: str) -> str:
        count = sum(1 for s in details.spans if s.field.startswith(field_prefix))
        return f"{count} hit{'s' if count != 1 else ''} of {details.pattern!r}"

    parts = [
        Contribution("name", details.name_score, detail("name")),
        Contribution("description", details.description_score, detail("description")),
    ]
    if with_parameters:
        parts.append(Contribution("parameters", details.parameter_score, detail("parameter:")))
    return tuple(parts)
