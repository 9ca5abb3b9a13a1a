"""What the regex index keeps per session: the tools with their searchable texts, and (built at the first
search that needs it) each mode's corpus over those texts."""

from __future__ import annotations

import string
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolsearch_lab.index.regex.vocabulary import BUILD_BLOCK, Vocabulary, runs, text_starts
from toolsearch_lab.model import Tool
from toolsearch_lab.text.java import ASCII_FOLD, JAVA_LINE_TERMINATOR, has_astral

# Pattern mode uses regex's Unicode IGNORECASE, under which these three non-ASCII letters also match an ASCII
# letter (İ~i, ſ~s, K~k; tests/test_regex_scale.py checks the list against regex itself).
UNICODE_FOLD = str.maketrans(string.ascii_uppercase + "\u0130\u017f\u212a", string.ascii_lowercase + "isk")
_MAX_SCHEMA_DEPTH = 8


@dataclass(frozen=True)
class Entry:
    tool: Tool
    parameter_fields: tuple[tuple[str, str], ...]  # (field label, text), only used in pattern mode

    @classmethod
    def of(cls, tool: Tool) -> Entry:
        return cls(tool, tuple(_parameter_fields(tool.parameters)))

    def texts(self) -> list[str]:
        """Pattern mode's texts: name, description, then every parameter text, in this order."""
        return [self.tool.name, self.tool.description, *(text for _, text in self.parameter_fields)]


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


def java_match_all_hits(texts: Sequence[str]) -> np.ndarray:
    """Hits of Java's ``.*`` in each text: every line (split at Java's line terminators) gives its own text,
    if it has any, plus the empty match at its end. Lines are cut from joined blocks of texts; the joining
    newline is itself a terminator, so no line spans two texts."""
    hits = np.zeros(len(texts))
    for first in range(0, len(texts), BUILD_BLOCK):
        block = texts[first : first + BUILD_BLOCK]
        lengths = np.fromiter(map(len, JAVA_LINE_TERMINATOR.split("\n".join(block))), np.int64)
        owner = np.searchsorted(text_starts(block), np.cumsum(lengths + 1) - lengths - 1, side="right") - 1
        hits[first : first + len(block)] = np.bincount(
            owner, weights=1.0 + (lengths > 0), minlength=len(block)
        )
    return hits


class KeywordCorpus:
    """Keyword mode's view of a session: texts ``2*i`` (name) and ``2*i + 1`` (description) of tool ``i``."""

    def __init__(self, entries: Sequence[Entry]):
        self.texts = [text for e in entries for text in (e.tool.name, e.tool.description)]
        self.vocabulary = Vocabulary(self.texts, ASCII_FOLD)
        self.astral = np.fromiter(map(has_astral, self.texts), bool, len(self.texts))
        self._match_all_hits: np.ndarray | None = None

    def match_all_hits(self) -> np.ndarray:
        if self._match_all_hits is None:
            self._match_all_hits = java_match_all_hits(self.texts)
        return self._match_all_hits


class PatternCorpus:
    """Pattern mode's view of a session: the distinct texts of its tools (a parameter name such as ``owner``
    occurs in many tools but is matched once), and where each occurs: tool ``owner[i]``, position
    ``slot[i]`` in its ``Entry.texts``, for ``i`` from ``indptr[t]`` to ``indptr[t + 1]``."""

    def __init__(self, entries: Sequence[Entry]):
        ids: dict[str, int] = {}
        per_tool = [[ids.setdefault(text, len(ids)) for text in e.texts()] for e in entries]
        self.texts = list(ids)
        sizes = np.array([len(t) for t in per_tool], np.int64)
        text_ids = np.fromiter((i for texts in per_tool for i in texts), np.int64, int(sizes.sum()))
        order = np.argsort(text_ids, kind="stable")
        self.owner = np.repeat(np.arange(len(per_tool)), sizes)[order]
        self.slot = (np.arange(len(text_ids)) - np.repeat(np.cumsum(sizes) - sizes, sizes))[order]
        self.indptr = np.concatenate(([0], np.cumsum(np.bincount(text_ids, minlength=len(ids)))))
        self.vocabulary = Vocabulary(self.texts, UNICODE_FOLD)

    def texts_containing(self, clauses: list[list[str]]) -> np.ndarray:
        """The texts that contain, for every clause, at least one of its pieces; every text if no clauses."""
        found: np.ndarray | None = None
        for clause in clauses:
            chunks = sorted({k for piece in clause for k in self.vocabulary.chunks_containing(piece)})
            texts, _ = runs(np.sort(self.vocabulary.occurrences(np.array(chunks, np.int64))[0]))
            found = texts if found is None else np.intersect1d(found, texts, assume_unique=True)
        return np.arange(len(self.texts)) if found is None else found


class Session:
    """One session's tools (an immutable tuple) and their corpus, built at the first search that needs it."""

    def __init__(self, entries: tuple[Entry, ...]):
        self.entries = entries
        self._keyword: KeywordCorpus | None = None
        self._pattern: PatternCorpus | None = None
        self._lock = threading.Lock()

    def keyword_corpus(self) -> KeywordCorpus:
        with self._lock:
            if self._keyword is None:
                self._keyword = KeywordCorpus(self.entries)
            return self._keyword

    def pattern_corpus(self) -> PatternCorpus:
        with self._lock:
            if self._pattern is None:
                self._pattern = PatternCorpus(self.entries)
            return self._pattern
