"""Keyword mode, Spring's ``RegexToolSearcher`` exactly (spec §3): the query becomes ``(?i)(a|b|c)``, and
each tool scores name ``2*count + 1/(1 + 0.1*p)`` + description ``1*count + 0.5/(1 + 0.1*p)``, where ``p``
is the first hit's UTF-16 offset.

Spring scans tool by tool (:func:`linear_keyword_scores`, kept as the reference). For the alternation of
literals Spring's converter builds, :func:`keyword_scores` counts Java's hits once per distinct chunk of the
vocabulary that contains a literal and adds them up per text with numpy: the same scores, to the last bit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from toolsearch_lab.index.regex.corpus import Entry, KeywordCorpus, Session
from toolsearch_lab.index.regex.vocabulary import DELIMITER_CHARS, DELIMITERS, runs
from toolsearch_lab.text.java import (
    ASCII_FOLD,
    JAVA_TRIM,
    SPRING_REGEX_META,
    compile_java,
    java_find_all,
    java_is_blank,
    java_root_lower,
    spring_escape,
    utf16_len,
    utf16_offset,
)
from toolsearch_lab.text.stopwords import SPRING_REGEX_STOP_WORDS

MAX_PATTERN_LENGTH = 200
MATCH_ALL = ".*"
STOP_WORDS = SPRING_REGEX_STOP_WORDS

Hits = list[tuple[int, int]]
Part = tuple[float, list[tuple[str, int, int]]]  # a score part and its (field, start, end) hits


# ------------------------------------------------------------------------------------ query -> pattern


def spring_query_pattern(query: str | None) -> str:
    """Spring's ``convertQueryToRegexPattern`` (spec §3.1): lower-cased the Java way, split at Spring's
    delimiters, trimmed, stop words and one-character tokens dropped (unless nothing else is left), escaped,
    de-duplicated and OR-ed, with trailing tokens dropped until the pattern fits in 200 UTF-16 units."""
    if query is None or java_is_blank(query):
        return MATCH_ALL
    raw = [t.strip(JAVA_TRIM) for t in DELIMITERS.split(java_root_lower(query))]
    raw = [t for t in raw if t]
    tokens = _escape_dedupe(t for t in raw if utf16_len(t) >= 2 and t not in STOP_WORDS)
    if not tokens:
        tokens = _escape_dedupe(raw)  # fallback: "a to i" still searches for something
    if not tokens:
        return MATCH_ALL
    pattern = "(?i)(" + "|".join(tokens) + ")"
    while utf16_len(pattern) > MAX_PATTERN_LENGTH and len(tokens) > 1:
        tokens.pop()
        pattern = "(?i)(" + "|".join(tokens) + ")"
    return pattern


def is_valid_spring_pattern(pattern: object) -> bool:
    """Spring's ``isValidPattern``: a non-blank string of at most 200 UTF-16 units that compiles."""
    if not isinstance(pattern, str) or java_is_blank(pattern) or utf16_len(pattern) > MAX_PATTERN_LENGTH:
        return False
    try:
        compile_java(pattern)
    except re.error:
        return False
    return True


def _escape_dedupe(tokens: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(spring_escape(t) for t in tokens))


def _literal_alternatives(pattern: str) -> list[str] | None:
    """The folded literals of a ``(?i)(a|b\\*c|...)`` pattern (what the converter builds), or None for any
    other pattern, or when a literal holds a delimiter (its hits could then span two chunks)."""
    prefix = "(?i)("
    if not pattern.startswith(prefix) or not pattern.endswith(")"):
        return None
    literals: list[str] = []
    current: list[str] = []
    i, end = len(prefix), len(pattern) - 1
    while i < end:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= end or pattern[i + 1] not in SPRING_REGEX_META:
                return None
            current.append(pattern[i + 1])
            i += 2
            continue
        if c == "|":
            literals.append("".join(current))
            current = []
        elif c in SPRING_REGEX_META:
            return None
        else:
            current.append(c)
        i += 1
    literals.append("".join(current))
    if any(not lit or any(ch in DELIMITER_CHARS for ch in lit) for lit in literals):
        return None
    return [lit.translate(ASCII_FOLD) for lit in literals]


# ------------------------------------------------------------------------------------------- scoring


def field_part(field: str, text: str, hits: Hits, per_hit: float, bonus: float) -> Part:
    """Spring's per-field score: ``per_hit * count + bonus / (1 + 0.1 * first_utf16_offset)``."""
    if not hits:
        return 0.0, []
    score = per_hit * len(hits) + bonus / (1.0 + 0.1 * utf16_offset(text, hits[0][0]))
    return score, [(field, a, b) for a, b in hits]


def keyword_parts(entry: Entry, rx: re.Pattern[str]) -> list[Part]:
    """Spring's scoring of one tool, tool by tool: the reference the corpus paths must equal."""
    tool = entry.tool
    return [
        field_part("name", tool.name, java_find_all(rx, tool.name), 2.0, 1.0),
        field_part("description", tool.description, java_find_all(rx, tool.description), 1.0, 0.5),
    ]


def linear_keyword_scores(entries: Sequence[Entry], rx: re.Pattern[str]) -> np.ndarray:
    scores = (sum(part for part, _ in keyword_parts(e, rx)) for e in entries)
    return np.fromiter(scores, np.float64, len(entries))


def keyword_scores(session: Session, pattern: str) -> np.ndarray:
    """Every tool's score for a Java ``pattern``, in insertion order (0.0 for no match); ``re.error`` if the
    pattern does not compile."""
    rx = compile_java(pattern)
    if pattern == MATCH_ALL:
        return _match_all_scores(session.keyword_corpus())
    literals = _literal_alternatives(pattern)
    if literals is None:
        return linear_keyword_scores(session.entries, rx)
    return _literal_scores(session.keyword_corpus(), rx, literals)


def _field_scores(
    corpus: KeywordCorpus, texts: np.ndarray, counts: np.ndarray, first: np.ndarray
) -> np.ndarray:
    """Per-tool scores from the hit counts and first hit positions (Python indices) of the texts with hits."""
    offsets = first.astype(np.float64)
    for i in np.flatnonzero(corpus.astral[texts]).tolist():
        offsets[i] = utf16_offset(corpus.texts[texts[i]], int(first[i]))
    is_name = texts % 2 == 0
    per_hit = np.where(is_name, 2.0, 1.0)
    bonus = np.where(is_name, 1.0, 0.5)
    part = per_hit * counts + bonus / (1.0 + 0.1 * offsets)
    names = np.zeros(len(corpus.texts) // 2)
    descriptions = np.zeros(len(corpus.texts) // 2)
    names[texts[is_name] // 2] = part[is_name]
    descriptions[texts[~is_name] // 2] = part[~is_name]
    return names + descriptions


def _chunk_hits(rx: re.Pattern[str], words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(which word, hit count, first hit's start) for each of ``words`` that ``rx`` (an alternation of
    literals without newlines, so never an empty hit) hits, from one scan of the words joined by newlines."""
    starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
    hit_starts = np.fromiter((m.start() for m in rx.finditer("\n".join(words))), np.int64)
    which = np.searchsorted(starts, hit_starts, side="right") - 1
    hit_words, first = runs(which)
    counts = np.bincount(which, minlength=len(words))[hit_words]
    return hit_words, counts.astype(np.float64), hit_starts[first] - starts[hit_words]


def _literal_scores(corpus: KeywordCorpus, rx: re.Pattern[str], literals: list[str]) -> np.ndarray:
    """Spring's scores for an alternation of literals: Java's hits are counted once per distinct chunk that
    contains a literal, then added up over the chunk's occurrences."""
    vocabulary = corpus.vocabulary
    found = sorted({k for literal in literals for k in vocabulary.chunks_containing(literal)})
    hit_words, chunk_counts, chunk_first = _chunk_hits(rx, [vocabulary.words[k] for k in found])
    texts, positions, which = vocabulary.occurrences(np.array(found, np.int64)[hit_words])
    counts = np.bincount(texts, weights=chunk_counts[which], minlength=len(corpus.texts))
    first = np.full(len(corpus.texts), np.iinfo(np.int64).max)
    np.minimum.at(first, texts, positions + chunk_first[which])
    hit = np.flatnonzero(counts > 0)
    return _field_scores(corpus, hit, counts[hit], first[hit])


def _match_all_scores(corpus: KeywordCorpus) -> np.ndarray:
    every = np.arange(len(corpus.texts))
    return _field_scores(corpus, every, corpus.match_all_hits(), np.zeros(len(every), np.int64))
