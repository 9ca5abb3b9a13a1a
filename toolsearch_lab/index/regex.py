"""RegexToolIndex: Spring AI's keyword-regex tool index, ported faithfully (spec §3), plus an
Anthropic-style "pattern" mode where the query *is* a regular expression.

Keyword mode (default, ``mode="keywords"``) reproduces Spring exactly:

* the query is lower-cased like Java's ``toLowerCase(Locale.ROOT)``, split on ``[\\s,;:.!?()\\[\\]{}"']+``
  (ASCII ``\\s``), trimmed like ``String.trim`` (code points <= U+0020), filtered (stop words, length < 2,
  with an unfiltered fallback pass), escaped with Spring's own escaping (not ``re.escape``), de-duplicated and
  OR-ed into ``(?i)(a|b|c)``; the pattern is capped at 200 UTF-16 units by dropping trailing tokens;
* matching is ASCII-only case-insensitive (Java's ``(?i)`` without UNICODE_CASE), Java ``find()`` loop
  semantics (after an empty match the search resumes one character later), and Java's ``.`` (which does not
  match ``\\r``, U+0085, U+2028 or U+2029 either);
* score = name ``2*count + 1/(1 + 0.1*p)`` + description ``1*count + 0.5/(1 + 0.1*p)``, where ``p`` is the
  first hit's UTF-16 offset, like Java's ``Matcher.start()``; stable sort, descending.

Documented deviations from Spring:

* ``max_results`` < 1 or not an int raises ``ValueError`` (Spring: 0 gives no results, negative throws).
* ``category_filter`` is honoured for tools that carry a category; uncategorised tools are always kept, so for
  catalogs without categories it has no effect, as in Spring.
* ``search_time_ms`` is a float with microsecond resolution (Spring: whole milliseconds).

Pattern mode (``mode="pattern"``) follows Anthropic's regex tool search: the query is a Python ``re``
pattern of at most 200 characters, matched case-insensitively (Unicode) against the tool name, description,
parameter names and parameter descriptions (nested ``properties``/``items`` too). Matching runs on the
``regex`` package with timeouts, so catastrophic backtracking cannot hang a search: each match call may take
at most ``pattern_call_timeout_s`` (default 50 ms), and one whole search at most ``pattern_budget_s`` (default
1 s; 10,000 tools with three parameters each take about 0.4 s). Patterns whose counted repeats would expand to
more than 10,000 elements (``(((a{999}){999}){999})`` exhausts memory inside ``regex.compile``) are refused
before compiling. Problems are raised as ``PatternError`` (a ``ValueError``; timeouts as its subclass
``PatternTimeoutError``) with a message naming the problem, for the meta-tool to hand back to the model.
Scoring reuses the formula above plus a parameter part counted like description hits,
``1*count + 0.5/(1 + 0.1*p)``, with ``count`` summed over all parameter texts and ``p`` the smallest first-hit
offset among them.

Known limits of the Java parity: the final-sigma rule of ``toLowerCase`` depends on Java's word
BreakIterator, which ``java_root_lower`` approximates (exact for ordinary text; differs on contrived mixes of
marks, surrogates and punctuation). Patterns returned by an overridden ``convert_query_to_regex_pattern`` only
get Java's ``.`` translated; Java-only syntax (``\\Q..\\E``, Unicode-aware ``\\b``) is not, and empty
matches inside astral characters are counted per code point, not per UTF-16 unit.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import regex

from toolsearch_lab.model import (
    BaseToolIndex,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)

try:  # the stdlib parser gives us Python-``re`` syntax checking and a tree to measure repeat expansion
    from re import _parser as _sre_parser  # Python >= 3.11
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parser  # type: ignore[no-redef]

log = logging.getLogger(__name__)

DEFAULT_MAX_RESULTS = 10
MAX_PATTERN_LENGTH = 200
MATCH_ALL = ".*"
MODES = ("keywords", "pattern")

# Spring's list, exact (spec §3.2; 95 words, although the spec's prose says 81).
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "can",
        "need",
        "dare",
        "ought",
        "used",
        "to",
        "of",
        "in",
        "for",
        "on",
        "with",
        "at",
        "by",
        "from",
        "as",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "between",
        "and",
        "or",
        "but",
        "if",
        "because",
        "until",
        "while",
        "although",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "him",
        "his",
        "she",
        "her",
        "it",
        "its",
        "they",
        "them",
        "their",
        "all",
        "any",
        "both",
        "each",
        "every",
        "some",
        "no",
        "not",
        "only",
        "just",
        "also",
        "very",
        "too",
        "so",
    ]
)

# Java's \s is ASCII-only: space, \t, \n, \x0B, \f, \r.
_DELIMITERS = re.compile(r"[ \t\n\x0b\f\r,;:.!?()\[\]{}\"']+")
_SPRING_META = frozenset("\\.*+?^${}[]|()")
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim() strips every code point <= U+0020
# Character.isWhitespace: Zs/Zl/Zp except no-break spaces, plus these controls.
_JAVA_WS_CONTROLS = frozenset("\t\n\x0b\f\r\x1c\x1d\x1e\x1f")
_NO_BREAK_SPACES = frozenset("\u00a0\u2007\u202f")
# Java's "." excludes every line terminator, not just "\n".
_JAVA_DOT = "[^\n\r\x85\u2028\u2029]"
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

# Pattern mode: regex expands counted repeats, so "(((a{999}){999}){999})" (22 chars) exhausts memory at
# compile time. We refuse patterns whose repeats would expand to more than this many elements.
_MAX_EXPANDED_SIZE = 10_000
_MAX_SCHEMA_DEPTH = 8


class PatternError(ValueError):
    """The search pattern is unusable: empty, too long, invalid, too complex or too slow."""

    def __init__(self, pattern: Any, problem: str):
        self.pattern = pattern
        self.problem = problem
        shown = repr(pattern) if len(str(pattern)) <= 80 else repr(str(pattern)[:77]) + "..."
        super().__init__(f"search pattern {shown}: {problem}")


class PatternTimeoutError(PatternError):
    """Matching exceeded the time budget (typically catastrophic backtracking)."""


class MatchSpan(NamedTuple):
    field: str  # "name", "description", "parameter:<path>" or "parameter:<path>:description"
    start: int  # Python string indices into the field's text
    end: int
    text: str


@dataclass(frozen=True)
class Explanation:
    """Why one tool scored what it did: every hit, and the score split into its parts."""

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


@dataclass(frozen=True)
class _Entry:
    tool: Tool
    parameter_fields: tuple[tuple[str, str], ...]  # (field label, text), only used in pattern mode


# ---------------------------------------------------------------------------------------------- Java parity


def _utf16_len(s: str) -> int:
    return len(s) + len(_ASTRAL.findall(s))


def _utf16_offset(s: str, index: int) -> int:
    """Java's Matcher.start() counts UTF-16 units; astral characters are two of them."""
    return index if s.isascii() else index + len(_ASTRAL.findall(s, 0, index))


def _java_is_blank(s: str) -> bool:
    return all(
        c in _JAVA_WS_CONTROLS
        or (unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in _NO_BREAK_SPACES)
        for c in s
    )


# ConditionalSpecialCasing.isCased: Lu/Ll/Lt plus this fixed list of Other_Lowercase/Other_Uppercase ranges.
_JAVA_OTHER_CASED = (
    (0x02B0, 0x02B8),
    (0x02C0, 0x02C1),
    (0x02E0, 0x02E4),
    (0x0345, 0x0345),
    (0x037A, 0x037A),
    (0x1D2C, 0x1D61),
    (0x2160, 0x217F),
    (0x24B6, 0x24E9),
)


def _java_cased(c: str) -> bool:
    if unicodedata.category(c) in ("Lu", "Ll", "Lt"):
        return True
    return any(lo <= ord(c) <= hi for lo, hi in _JAVA_OTHER_CASED)


def _letter(c: str) -> bool:
    return unicodedata.category(c)[0] == "L" or unicodedata.category(c) == "Mc"


def _wordish(c: str) -> bool:
    return _letter(c) or unicodedata.category(c)[0] == "N"


def _ignorable(c: str) -> bool:  # combining marks and format characters; the JDK treats U+00AD as mid-word
    return unicodedata.category(c) in ("Mn", "Me", "Cf") and c != "\u00ad"


def _java_final_sigma(s: str, i: int) -> bool:
    """Java's Final_Cased test for the capital sigma at ``s[i]``: a cased character before it and none after
    it *within the same word*, with words approximated from the JDK word BreakIterator rules: letters and
    digits run together; ``- _ ' " .`` U+00AD U+2027 join two letters, ``' " . ,`` join two digits; combining
    marks attach to a preceding letter or digit. (Python's own rule only skips case-ignorable characters,
    so ``"ΑΣ-Β".lower()`` gives ``"ας-β"`` where Java gives ``"ασ-β"``.)"""

    def base_before(j: int) -> str:  # nearest character before j that is not a combining mark
        while j >= 0 and _ignorable(s[j]):
            j -= 1
        return s[j] if j >= 0 else ""

    def in_word(j: int) -> bool:
        c, before = s[j], base_before(j - 1)
        after = s[j + 1] if j + 1 < len(s) else ""
        if _wordish(c):
            return True
        if _ignorable(c):
            return bool(before) and _wordish(before)
        if not before or not after:
            return False
        mid_word = c in "'\".\u00ad\u2027" or unicodedata.category(c) in ("Pd", "Pc")
        if mid_word and _letter(before) and _letter(after):
            return True
        return (
            c in "'\".,"
            and _wordish(before)
            and not _letter(before)
            and _wordish(after)
            and not _letter(after)
        )

    j = i - 1
    while j >= 0 and in_word(j) and not _java_cased(s[j]):
        j -= 1
    if j < 0 or not in_word(j):
        return False  # no cased character before the sigma in its word
    j = i + 1
    while j < len(s) and in_word(j):
        if _java_cased(s[j]):
            return False
        j += 1
    return True


def java_root_lower(s: str) -> str:
    """``String.toLowerCase(Locale.ROOT)``. Python's ``str.lower`` never looks at the process locale and
    applies the same unconditional Unicode mappings as Java's ROOT locale (``"I"`` -> ``"i"``, ``"İ"`` ->
    ``"i̇"``, i.e. i + U+0307, two characters, never the Turkish dotless ``ı``). The one context-dependent
    rule, final sigma, uses word boundaries in Java, so capital sigma is handled here the Java way."""
    if "Σ" not in s:
        return s.lower()
    return "".join(
        ("ς" if _java_final_sigma(s, i) else "σ") if c == "Σ" else c.lower() for i, c in enumerate(s)
    )


def spring_escape(token: str) -> str:
    """Backslash before each of ``\\ . * + ? ^ $ { } [ ] | ( )`` and nothing else (not ``re.escape``)."""
    return "".join("\\" + c if c in _SPRING_META else c for c in token)


def _java_to_python(pattern: str) -> str:
    """Rewrite Java's ``.`` outside character classes; everything our converter emits is otherwise
    identical in both dialects (escaped literals, ``|``, groups, inline ``(?i)``)."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":  # leading "]" is literal
                out.append(pattern[i : i + (2 if pattern[i + 1] == "]" else 3)])
                i += len(out[-1])
                continue
        elif c == ".":
            c = _JAVA_DOT
        out.append(c)
        i += 1
    return "".join(out)


def _compile_java(pattern: str) -> re.Pattern:
    # re.ASCII makes the inline (?i) ASCII-only, like Java without UNICODE_CASE: "é" does not match "É".
    return re.compile(_java_to_python(pattern), re.ASCII)


def _java_find_all(rx: re.Pattern, text: str) -> list[tuple[int, int]]:
    """Every hit of Java's ``while (m.find())`` loop. While hits are non-empty, finditer is identical; after
    an empty hit Java resumes one character later, so we continue the Java way from there."""
    spans: list[tuple[int, int]] = []
    for m in rx.finditer(text):
        spans.append(m.span())
        if m.start() == m.end():
            break
    else:
        return spans
    pos = spans[-1][1] + 1
    while pos <= len(text):
        m = rx.search(text, pos)
        if m is None:
            break
        spans.append(m.span())
        pos = m.end() + 1 if m.start() == m.end() else m.end()
    return spans


# ---------------------------------------------------------------------------------------------- the index


class RegexToolIndex(BaseToolIndex):
    """Per-session list of tools searched with a regular expression (spec §3). Thread-safe: writers swap in a
    new tuple under a lock (copy-on-write, like Spring's CopyOnWriteArrayList); searches read a snapshot
    without locking, so they never wait for each other."""

    def __init__(
        self, mode: str = "keywords", *, pattern_call_timeout_s: float = 0.05, pattern_budget_s: float = 1.0
    ):
        if mode not in MODES:
            raise ValueError(f"RegexToolIndex: unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        for label, value in (
            ("pattern_call_timeout_s", pattern_call_timeout_s),
            ("pattern_budget_s", pattern_budget_s),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"RegexToolIndex: {label} must be a number of seconds > 0, got {value!r}")
        self.mode = mode
        self.pattern_call_timeout_s = float(pattern_call_timeout_s)
        self.pattern_budget_s = float(pattern_budget_s)
        self._sessions: dict[str, tuple[_Entry, ...]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mode={self.mode!r}, sessions={len(self._sessions)}, tools={self.total_size()})"

    # -- indexing -------------------------------------------------------------------------------------

    def index_tool(self, session_id: str, tool: Tool) -> None:
        self.index_tools(session_id, [tool])

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        """Append in order, in one copy. Duplicates are kept (Spring does not de-duplicate)."""
        self.check_session_id(session_id)
        entries = tuple(_Entry(self.check_tool(t), tuple(_parameter_fields(t.parameters))) for t in tools)
        with self._lock:
            self._sessions[session_id] = self._sessions.get(session_id, ()) + entries

    def clear_index(self, session_id: str) -> None:
        """Drop the session's tools; unknown sessions are a no-op."""
        with self._lock:
            self._sessions.pop(session_id, None)

    def size(self, session_id: str | None) -> int:
        return len(self._sessions.get(session_id, ())) if isinstance(session_id, str) else 0

    def total_size(self) -> int:
        return sum(len(entries) for entries in list(self._sessions.values()))

    def close(self) -> None:
        with self._lock:
            self._sessions.clear()

    # -- query -> pattern -----------------------------------------------------------------------------

    def convert_query_to_regex_pattern(self, query: str | None) -> str:
        """Spring's ``convertQueryToRegexPattern`` (spec §3.1). Override to change keyword-mode patterns; the
        result is compiled Java-style (see ``_compile_java``)."""
        if query is None or _java_is_blank(query):
            return MATCH_ALL
        raw = [t.strip(_JAVA_TRIM) for t in _DELIMITERS.split(java_root_lower(query))]
        raw = [t for t in raw if t]
        tokens = _escape_dedupe(t for t in raw if _utf16_len(t) >= 2 and t not in STOP_WORDS)
        if not tokens:
            tokens = _escape_dedupe(raw)  # fallback: "a to i" still searches for something
        if not tokens:
            return MATCH_ALL
        pattern = "(?i)(" + "|".join(tokens) + ")"
        while _utf16_len(pattern) > MAX_PATTERN_LENGTH and len(tokens) > 1:
            tokens.pop()
            pattern = "(?i)(" + "|".join(tokens) + ")"
        return pattern

    @staticmethod
    def is_valid_pattern(pattern: Any) -> bool:
        """Spring's ``isValidPattern``: a non-blank string of at most 200 UTF-16 units that compiles."""
        if (
            not isinstance(pattern, str)
            or _java_is_blank(pattern)
            or _utf16_len(pattern) > MAX_PATTERN_LENGTH
        ):
            return False
        try:
            _compile_java(pattern)
        except re.error:
            return False
        return True

    # -- search ---------------------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResponse:
        limit = self.resolve_max_results(request, DEFAULT_MAX_RESULTS)
        session_id = request.session_id
        if not isinstance(session_id, str) or _java_is_blank(session_id):
            log.warning("RegexToolIndex.search: blank session id, returning an empty response")
            return empty_response()
        entries = self._sessions.get(session_id)  # a snapshot: writers replace the tuple, never mutate it
        if entries is None:
            return empty_response()
        started = time.perf_counter()
        try:
            _, score_parts = self._scorer(request.query, started)
        except (
            re.error
        ) as exc:  # keyword mode only, and only via an overridden convert_query_to_regex_pattern
            log.error("RegexToolIndex.search: pattern does not compile (%s), returning no results", exc)
            return SearchResponse([], None, self._metadata(request, started))
        scored = []
        for entry in entries:
            if self.category_allows(entry.tool, request.category_filter):
                value = sum(part for part, _ in score_parts(entry))
                if value > 0:
                    scored.append((value, entry.tool))
        scored.sort(key=lambda pair: pair[0], reverse=True)  # sort is stable: ties keep insertion order
        refs = [ToolReference(tool.name, value, tool.description) for value, tool in scored[:limit]]
        return SearchResponse(refs, len(refs), self._metadata(request, started))

    def explain(self, session_id: str, query: str | None, tool_name: str) -> Explanation:
        """Every hit of ``query`` in the first tool named ``tool_name`` in the session, and the score split
        into name / description / parameter parts. Span offsets are Python string indices into
        ``fields[span.field]`` (the score itself uses UTF-16 offsets, like Java)."""
        entry = next((e for e in self._sessions.get(session_id, ()) if e.tool.name == tool_name), None)
        if entry is None:
            raise ValueError(f"explain: no tool named {tool_name!r} in session {session_id!r}")
        pattern, score_parts = self._scorer(query, time.perf_counter())
        parts = score_parts(entry) + [(0.0, [])]  # keyword mode has no parameter part
        fields = {
            "name": entry.tool.name,
            "description": entry.tool.description,
            **dict(entry.parameter_fields),
        }
        spans = [MatchSpan(f, a, b, fields[f][a:b]) for _, hits in parts for f, a, b in hits]
        return Explanation(
            entry.tool.name, query, pattern, spans, parts[0][0], parts[1][0], parts[2][0], fields
        )

    # -- internals ------------------------------------------------------------------------------------

    def _metadata(self, request: SearchRequest, started: float) -> SearchMetadata:
        elapsed_ms = round((time.perf_counter() - started) * 1000.0, 3)
        return SearchMetadata(type(self).__name__, request.query, elapsed_ms)

    def _scorer(self, query: str | None, started: float) -> tuple[str, Callable[[_Entry], list]]:
        """Returns (pattern, score_parts); score_parts(entry) gives [(score, [(field, start, end), ...]), ...]
        for the name, the description and, in pattern mode, the parameters."""
        if self.mode == "keywords":
            pattern = self.convert_query_to_regex_pattern(query)
            rx = _compile_java(pattern)

            def keyword_parts(entry: _Entry) -> list:
                tool = entry.tool
                return [
                    _part("name", tool.name, _java_find_all(rx, tool.name), 2.0, 1.0),
                    _part("description", tool.description, _java_find_all(rx, tool.description), 1.0, 0.5),
                ]

            return pattern, keyword_parts

        user_rx = _compile_user_pattern(query)
        deadline = started + self.pattern_budget_s

        def over_budget() -> PatternTimeoutError:
            return PatternTimeoutError(
                query,
                f"the search took longer than its total budget of {self.pattern_budget_s * 1000:.0f} ms; "
                "use a simpler or more specific pattern",
            )

        def find(text: str) -> list[tuple[int, int]]:
            # Each call may take at most pattern_call_timeout_s (catastrophic backtracking shows up at once)
            # and never more than what is left of the whole search's pattern_budget_s.
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise over_budget()
            timeout = min(remaining, self.pattern_call_timeout_s)

            def match(limit: float) -> list[tuple[int, int]]:
                if user_rx.search(text, timeout=limit) is None:  # cheap path: most fields do not match
                    return []
                return [m.span() for m in user_rx.finditer(text, timeout=limit)]

            cpu_started = time.thread_time()
            try:
                return match(timeout)
            except TimeoutError:
                # Fix (issue 6): the timeout is wall-clock. On a busy machine (8 searching threads on 2 cores,
                # a kernel doing other work) a trivial pattern such as 's\d+_' was refused as "catastrophic
                # backtracking" because its thread was descheduled. Backtracking burns CPU; waiting does not:
                # if this thread used less than half the timeout in CPU, retry once with what is left of the
                # whole search's budget. Real backtracking is still refused after one call timeout.
                left = deadline - time.perf_counter()
                if time.thread_time() - cpu_started < timeout / 2 and left > 0:
                    try:
                        return match(left)
                    except TimeoutError:
                        pass
                if timeout < self.pattern_call_timeout_s or deadline - time.perf_counter() <= 0:
                    raise over_budget() from None  # the whole-search budget ran out, not this one call's
                raise PatternTimeoutError(
                    query,
                    f"matching one text took longer than {timeout * 1000:.0f} ms (catastrophic backtracking?); "
                    "simplify it, e.g. avoid nested quantifiers like (a+)+ or (a|aa)+",
                ) from None

        def pattern_parts(entry: _Entry) -> list:
            tool = entry.tool
            param_hits, firsts = [], []
            for label, text in entry.parameter_fields:
                hits = find(text)
                if hits:
                    firsts.append(_utf16_offset(text, hits[0][0]))
                    param_hits += [(label, a, b) for a, b in hits]
            param_score = 1.0 * len(param_hits) + 0.5 / (1.0 + 0.1 * min(firsts)) if param_hits else 0.0
            return [
                _part("name", tool.name, find(tool.name), 2.0, 1.0),
                _part("description", tool.description, find(tool.description), 1.0, 0.5),
                (param_score, param_hits),
            ]

        return query, pattern_parts


def _part(
    field: str, text: str, hits: list[tuple[int, int]], per_hit: float, bonus: float
) -> tuple[float, list]:
    """Spring's per-field score: ``per_hit * count + bonus / (1 + 0.1 * first_utf16_offset)``."""
    if not hits:
        return 0.0, []
    score = per_hit * len(hits) + bonus / (1.0 + 0.1 * _utf16_offset(text, hits[0][0]))
    return score, [(field, a, b) for a, b in hits]


def _escape_dedupe(tokens: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(spring_escape(t) for t in tokens))


def _parameter_fields(schema: Any, prefix: str = "", depth: int = 0) -> Iterable[tuple[str, str]]:
    """(label, text) for every parameter name and description, walking nested objects and arrays of objects.
    Depth-limited because a Python dict can contain itself."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or depth > _MAX_SCHEMA_DEPTH:
        return
    for name, sub in props.items():
        path = f"{prefix}{name}"
        yield f"parameter:{path}", str(name)
        if isinstance(sub, dict):
            if isinstance(sub.get("description"), str):
                yield f"parameter:{path}:description", sub["description"]
            yield from _parameter_fields(sub, path + ".", depth + 1)
            yield from _parameter_fields(sub.get("items"), path + "[].", depth + 1)


def _compile_user_pattern(pattern: Any) -> regex.Pattern:
    """Validate a pattern-mode query (Python ``re`` syntax, <= 200 characters, bounded repeat expansion) and
    compile it with ``regex`` so every match call can take a timeout."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise PatternError(
            pattern, "the pattern is empty; pass a regular expression such as 'weather|forecast'"
        )
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(
            pattern, f"the pattern is {len(pattern)} characters long; the limit is {MAX_PATTERN_LENGTH}"
        )
    try:
        tree = _sre_parser.parse(pattern, re.IGNORECASE)
    except re.error as exc:
        raise PatternError(pattern, f"not a valid regular expression: {exc}") from None
    except RecursionError:
        raise PatternError(pattern, "the pattern nests too deeply") from None
    size = _expanded_size(tree)
    if size > _MAX_EXPANDED_SIZE:
        raise PatternError(
            pattern,
            f"too complex: its counted repeats expand to about {size:,} elements (limit {_MAX_EXPANDED_SIZE:,});"
            " use smaller {m,n} counts",
        )
    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.V0)
    except (regex.error, RecursionError, MemoryError, OverflowError) as exc:
        raise PatternError(pattern, f"not a valid regular expression: {exc}") from None


def _expanded_size(items: Any) -> int:
    """Rough node count after expanding counted repeats (what ``regex`` allocates at compile time)."""
    total = 0
    for op, av in items:
        name = str(op)
        if name.endswith("REPEAT"):
            low, high, sub = av
            total += max(low if high == _sre_parser.MAXREPEAT else high, 1) * _expanded_size(sub)
        elif name == "SUBPATTERN":
            total += _expanded_size(av[-1])
        elif name == "BRANCH":
            total += sum(_expanded_size(sub) for sub in av[1])
        elif name == "ATOMIC_GROUP":
            total += _expanded_size(av)
        elif name in ("ASSERT", "ASSERT_NOT"):
            total += _expanded_size(av[1])
        elif name == "GROUPREF_EXISTS":
            total += _expanded_size(av[1]) + (_expanded_size(av[2]) if av[2] else 0)
        else:
            total += 1
    return total


__all__ = [
    "DEFAULT_MAX_RESULTS",
    "MAX_PATTERN_LENGTH",
    "STOP_WORDS",
    "Explanation",
    "MatchSpan",
    "PatternError",
    "PatternTimeoutError",
    "RegexToolIndex",
    "java_root_lower",
    "spring_escape",
]
