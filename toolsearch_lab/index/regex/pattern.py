"""Pattern mode, after Anthropic's regex tool search: the query is a Python ``re`` pattern, matched on the
``regex`` package with timeouts against every searchable text of a tool; case-insensitively unless the
index was built ``case_sensitive`` (Anthropic's own default, see :mod:`toolsearch_lab.index.regex`).

A pattern is checked before it is compiled (length, syntax, how far its counted repeats expand), the literal
text every match must contain narrows the texts to match (:func:`required_clauses`), and
:class:`PatternMatcher` runs the matches under the per-call timeout and the whole search's budget.
"""

from __future__ import annotations

import importlib
import re
import sys
import time
from enum import Enum
from typing import Any, Protocol

import numpy as np
import regex

from toolsearch_lab.index.regex.corpus import Entry, PatternCorpus, Session
from toolsearch_lab.index.regex.keywords import MAX_PATTERN_LENGTH, Hits, Part, field_part
from toolsearch_lab.index.regex.vocabulary import DELIMITERS, ranges
from toolsearch_lab.text.java import utf16_offset

# The stdlib parser gives us Python-``re`` syntax checking and a tree to measure repeat expansion; it moved
# to re._parser in 3.11 (sre_parse still imports there, with a DeprecationWarning).
if sys.version_info >= (3, 11):
    _sre_parser: Any = importlib.import_module("re._parser")
else:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parser

# regex expands counted repeats, so "(((a{999}){999}){999})" (22 chars) exhausts memory at compile time.
# We refuse patterns whose repeats would expand to more than this many elements.
_MAX_EXPANDED_SIZE = 10_000
# At most this many required literals (the longest) are looked up in the vocabulary: one or two usually
# leave a handful of texts, and every further lookup costs more than it saves.
_MAX_REQUIRED_CLAUSES = 3
# When a search runs out of time, the pattern is blamed if one text cost, on average, this share of the
# per-call timeout in CPU (5 ms by default): ordinary patterns take tens of microseconds per tool text even
# on a loaded machine (1,000 ms for 32,000 texts at 100k tools), heavy backtracking takes milliseconds.
_SLOW_TEXT_SHARE = 0.1
# A text whose match timed out while busy in CPU is tried again with these multiples of the per-call timeout.
_RETRY_FACTORS = (2, 4)


class PatternProblem(str, Enum):
    """Why a search pattern is unusable, set where the problem is found (Anthropic's error codes tell a
    pattern too long from any other problem)."""

    EMPTY = "empty"
    TOO_LONG = "too-long"
    INVALID = "invalid"  # not a regular expression Python's ``re`` (or ``regex``) accepts
    TOO_COMPLEX = "too-complex"  # nested too deeply, or counted repeats that expand too far
    TIMEOUT = "timeout"  # matching ran out of time (:class:`PatternTimeoutError`)


class PatternError(ValueError):
    """The search pattern is unusable: empty, too long, invalid, too complex or too slow (``kind``)."""

    def __init__(self, pattern: Any, problem: str, kind: PatternProblem):
        self.pattern = pattern
        self.problem = problem
        self.kind = kind
        shown = repr(pattern) if len(str(pattern)) <= 80 else repr(str(pattern)[:77]) + "..."
        super().__init__(f"search pattern {shown}: {problem}")


class PatternTimeoutError(PatternError):
    """Matching exceeded the time budget: one text took too long (the pattern), or all of them did."""

    def __init__(self, pattern: Any, problem: str):
        super().__init__(pattern, problem, PatternProblem.TIMEOUT)


# ------------------------------------------------------------------------------------ checking a pattern


def compile_user_pattern(pattern: Any, case_sensitive: bool = False) -> tuple[regex.Pattern, Any]:
    """Validate a pattern-mode query (Python ``re`` syntax, <= 200 characters, bounded repeat expansion) and
    compile it with ``regex`` so every match call can take a timeout; also returns the parsed tree.
    ``case_sensitive``: no IGNORECASE flag (a ``(?i)`` in the pattern still turns it on)."""
    flags = 0 if case_sensitive else re.IGNORECASE
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(
            f"RegexToolIndex: query must be a regular expression string (pattern mode), "
            f"got {type(pattern).__name__}: {pattern!r:.40}"
        )
    if pattern is None or not pattern.strip():
        raise PatternError(
            pattern,
            "the pattern is empty; pass a regular expression such as 'weather|forecast'",
            PatternProblem.EMPTY,
        )
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(
            pattern,
            f"the pattern is {len(pattern)} characters long; the limit is {MAX_PATTERN_LENGTH}",
            PatternProblem.TOO_LONG,
        )
    try:
        tree = _sre_parser.parse(pattern, flags)
    except re.error as exc:
        problem = f"not a valid regular expression: {exc}"
        raise PatternError(pattern, problem, PatternProblem.INVALID) from None
    except RecursionError:
        raise PatternError(pattern, "the pattern nests too deeply", PatternProblem.TOO_COMPLEX) from None
    size = _expanded_size(tree)
    if size > _MAX_EXPANDED_SIZE:
        raise PatternError(
            pattern,
            f"too complex: its counted repeats expand to about {size:,} elements "
            f"(limit {_MAX_EXPANDED_SIZE:,}); use smaller {{m,n}} counts",
            PatternProblem.TOO_COMPLEX,
        )
    try:
        return regex.compile(pattern, (0 if case_sensitive else regex.IGNORECASE) | regex.V0), tree
    except (regex.error, RecursionError, MemoryError, OverflowError) as exc:
        problem = f"not a valid regular expression: {exc}"
        raise PatternError(pattern, problem, PatternProblem.INVALID) from None


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


def required_literals(items: Any) -> list[list[str]]:
    """Clauses of ASCII text that every match of the parsed pattern ``items`` contains: each clause lists
    alternatives, one of which (at least) is in the matched text. Whatever is not a plain ASCII literal, a
    group, a repeat of at least one, or an alternation of such things requires nothing we can use."""
    clauses: list[list[str]] = []
    run: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL" and av < 0x80:
            run.append(chr(av))
            continue
        if run:
            clauses.append(["".join(run)])
            run = []
        if name == "SUBPATTERN":
            clauses += required_literals(av[-1])
        elif name == "ATOMIC_GROUP":
            clauses += required_literals(av)
        elif name.endswith("REPEAT") and av[0] >= 1:
            clauses += required_literals(av[2])
        elif name == "BRANCH":
            options = [lookup_clauses(required_literals(branch), 1) for branch in av[1]]
            if all(options):
                clauses.append(sorted({piece for option in options for piece in option[0]}))
    if run:
        clauses.append(["".join(run)])
    return clauses


def lookup_clauses(clauses: list[list[str]], limit: int = _MAX_REQUIRED_CLAUSES) -> list[list[str]]:
    """The ``limit`` most selective clauses, each alternative cut to its longest delimiter-free piece (what
    the vocabulary can find) and folded; clauses with a piece shorter than two characters narrow nothing."""
    usable = []
    for clause in clauses:
        pieces = {max(DELIMITERS.split(text.lower()), key=len) for text in clause}
        if min(len(p) for p in pieces) >= 2:
            usable.append(sorted(pieces))
    usable.sort(key=lambda pieces: -min(len(p) for p in pieces))
    return usable[:limit]


# ------------------------------------------------------------------------------------------- matching


class TimeLimits(Protocol):
    """Where a matcher reads its limits (and a search its case rule): the index's settings."""

    pattern_call_timeout_s: float
    pattern_budget_s: float
    case_sensitive: bool


class PatternMatcher:
    """Runs one search's matches under its time limits, and keeps the figures its errors quote: each call
    may take ``call_timeout_s`` and all of them together what is left of ``budget_s``. ``scope`` is (tools,
    distinct texts in the catalog, texts to match, whether required literals narrowed them)."""

    def __init__(self, query: str, rx: regex.Pattern, limits: TimeLimits, scope: tuple[int, int, int, bool]):
        self.query, self.rx = query, rx
        self.call_timeout_s, self.budget_s = limits.pattern_call_timeout_s, limits.pattern_budget_s
        self.deadline = time.perf_counter() + self.budget_s
        self.tools, self.catalog_texts, self.to_match, self.narrowed = scope
        self.texts_done = self.chars_done = 0
        self.cpu_started = time.thread_time()

    def find(self, text: str) -> Hits:
        remaining = self.deadline - time.perf_counter()
        if remaining <= 0:
            raise self.over_budget()
        timeout = min(remaining, self.call_timeout_s)
        cpu_started = time.thread_time()
        try:
            hits = self._match(text, timeout)
        except TimeoutError:
            hits = self._after_timeout(text, timeout, time.thread_time() - cpu_started)
        self.texts_done += 1
        self.chars_done += len(text)
        return hits

    def _match(self, text: str, timeout: float) -> Hits:
        return [m.span() for m in self.rx.finditer(text, timeout=timeout)]

    def _after_timeout(self, text: str, timeout: float, cpu_used: float) -> Hits:
        # The timeout is wall-clock, so a thread descheduled on a busy machine hits it with a trivial pattern.
        # A try that spent under half its time in CPU was waiting: the next gets what is left of the budget.
        # One that looks busy may still have been stalled (on a shared virtual machine the host's preemption
        # of the vCPU can count as the thread's CPU time), so the next gets twice, then four times the
        # timeout: backtracking costs the same on every try, and a stall rarely lasts through three.
        factors, allowed = iter(_RETRY_FACTORS), timeout
        while True:
            left = self.deadline - time.perf_counter()
            if left <= 0:
                raise self.over_budget() from None
            if cpu_used < allowed / 2:
                allowed = left
            else:
                factor = next(factors, None)
                if factor is None:
                    break
                allowed = min(left, factor * timeout)
            cpu_started = time.thread_time()
            try:
                return self._match(text, allowed)
            except TimeoutError:
                cpu_used = time.thread_time() - cpu_started
        if timeout < self.call_timeout_s:
            raise self.over_budget() from None
        tries = ", ".join(f"{f * timeout * 1000:.0f}" for f in (1, *_RETRY_FACTORS))
        raise PatternTimeoutError(
            self.query,
            f"matching one text timed out on each of {1 + len(_RETRY_FACTORS)} tries ({tries} ms; "
            "catastrophic backtracking?); simplify it, e.g. avoid nested quantifiers like (a+)+ or (a|aa)+",
        ) from None

    def over_budget(self) -> PatternTimeoutError:
        """The whole search ran out of time: say whether the pattern or the catalog's size is the cost."""
        spent = (
            f"the search took longer than its total budget of {self.budget_s * 1000:.0f} ms after matching "
            f"{self.texts_done:,} of the {self.to_match:,} distinct texts it had to match"
        )
        per_text_s = (time.thread_time() - self.cpu_started) / max(self.texts_done, 1)
        if self.texts_done and per_text_s > self.call_timeout_s * _SLOW_TEXT_SHARE:
            blame = (
                f"the pattern is the cost (catastrophic backtracking?): it took {per_text_s * 1000:.1f} ms "
                "of CPU per text on average (ordinary patterns take a few microseconds); simplify it, e.g. "
                "avoid nested quantifiers like (a+)+ or (a|aa)+"
            )
        elif self.narrowed:
            blame = (
                f"the catalog's size is the cost: {self.to_match:,} of its {self.catalog_texts:,} "
                f"distinct texts ({self.tools:,} tools) contain the pattern's literal text; use a more "
                "specific pattern or a larger pattern_budget_s"
            )
        else:
            blame = (
                f"the catalog's size is the cost: the pattern has no literal text (a word such as 'email') "
                f"to narrow the search, so all {self.catalog_texts:,} distinct texts of {self.tools:,} tools "
                "must be matched; add a literal word or use a larger pattern_budget_s"
            )
        return PatternTimeoutError(self.query, f"{spent}; {blame}")


# ------------------------------------------------------------------------------------------- scoring


def pattern_parts(entry: Entry, hits: dict[int, Hits]) -> list[Part]:
    """Score parts of one tool from the hits in its texts (numbered as in ``Entry.texts``): Spring's name
    and description parts, plus a parameter part counted like the description's, with ``count`` summed over
    all parameter texts and ``p`` the smallest first-hit offset among them."""
    tool = entry.tool
    param_hits: list[tuple[str, int, int]] = []
    firsts = []
    for i, (label, text) in enumerate(entry.parameter_fields, start=2):
        found = hits.get(i)
        if found:
            firsts.append(utf16_offset(text, found[0][0]))
            param_hits += [(label, a, b) for a, b in found]
    param_score = 1.0 * len(param_hits) + 0.5 / (1.0 + 0.1 * min(firsts)) if param_hits else 0.0
    return [
        field_part("name", tool.name, hits.get(0, []), 2.0, 1.0),
        field_part("description", tool.description, hits.get(1, []), 1.0, 0.5),
        (param_score, param_hits),
    ]


def pattern_scores(
    corpus: PatternCorpus, tools: int, matcher: PatternMatcher, texts: np.ndarray
) -> np.ndarray:
    """Match ``texts`` (the only ones that can match), then add up ``pattern_parts`` for every tool they
    occur in, with numpy but in the same order of operations, so the sums are bit for bit the same."""
    found = []
    for t in texts.tolist():
        hits = matcher.find(corpus.texts[t])
        if hits:
            found.append((t, len(hits), utf16_offset(corpus.texts[t], hits[0][0])))
    ids, counts, firsts = (np.array([f[i] for f in found], np.int64) for i in range(3))
    index, which = ranges(corpus.indptr, ids)
    tool, slot = corpus.owner[index], corpus.slot[index]
    count, first = counts[which].astype(np.float64), firsts[which]
    name, description = np.zeros(tools), np.zeros(tools)
    name[tool[slot == 0]] = 2.0 * count[slot == 0] + 1.0 / (1.0 + 0.1 * first[slot == 0])
    description[tool[slot == 1]] = 1.0 * count[slot == 1] + 0.5 / (1.0 + 0.1 * first[slot == 1])
    params = slot >= 2
    param_count = np.bincount(tool[params], weights=count[params], minlength=tools)
    param_first = np.full(tools, np.inf)
    np.minimum.at(param_first, tool[params], first[params])
    parameters = np.where(param_count > 0, 1.0 * param_count + 0.5 / (1.0 + 0.1 * param_first), 0.0)
    return name + description + parameters


def pattern_mode_scores(session: Session, query: Any, limits: TimeLimits) -> np.ndarray:
    """Every tool's score for a pattern-mode ``query``, in insertion order (0.0 for no match); the pattern
    is checked before the session's corpus is built."""
    rx, tree = compile_user_pattern(query, limits.case_sensitive)
    assert isinstance(query, str)  # compile_user_pattern refuses anything else
    corpus = session.pattern_corpus()
    clauses = lookup_clauses(required_literals(tree))
    texts = corpus.texts_containing(clauses)
    tools = len(session.entries)
    scope = (tools, len(corpus.texts), len(texts), bool(clauses))
    return pattern_scores(corpus, tools, PatternMatcher(query, rx, limits, scope), texts)
