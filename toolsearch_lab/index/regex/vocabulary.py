"""The chunk vocabulary that makes the regex index fast: every text cut at Spring's query delimiters into
"chunks", the distinct chunks (case-folded) kept once with a trigram index, and where each one occurs.

Neither a keyword-mode token nor a required literal of a pattern contains a delimiter, so each of their hits
lies inside one chunk, and a chunk has the same hits wherever it occurs: a search looks at the few distinct
chunks that contain its literal text instead of every text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

import numpy as np

# Spring's query delimiters ``[\s,;:.!?()\[\]{}"']+``; Java's \s is ASCII-only: space, \t, \n, \x0B, \f, \r.
DELIMITER_CHARS = " \t\n\x0b\f\r,;:.!?()[]{}\"'"
DELIMITERS = re.compile(r"[ \t\n\x0b\f\r,;:.!?()\[\]{}\"']+")
_CHUNK_SPLIT = re.compile(f"({DELIMITERS.pattern})")  # keeps the delimiters, so lengths give positions
# Tools per block when the vocabulary is built, to keep the temporary lists small at 100k tools.
BUILD_BLOCK = 1024


def fold(text: str, table: dict[int, int]) -> str:
    return text.lower() if text.isascii() else text.translate(table)


def text_starts(texts: Sequence[str]) -> np.ndarray:
    """Where each text starts in ``"\\n".join(texts)``."""
    return np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])


def ranges(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``indptr[r]`` to ``indptr[r + 1]`` of every row ``r`` in ``rows`` (a CSR gather), and
    for each position which of ``rows`` it belongs to."""
    begin = indptr[rows]
    counts = indptr[rows + 1] - begin
    which = np.repeat(np.arange(len(rows)), counts)
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts - begin, counts), which


def runs(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a sorted array and where each first occurs (``np.unique`` without its hash
    table, which is far slower on these arrays)."""
    first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(ordered) else ordered
    return ordered[first], first.astype(np.int64)


def _chunk_block(texts: Sequence[str], ids: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunk id, text number, start) of every chunk of ``texts``, cut from one joined string; ``ids`` grows
    with the chunks it has not seen. The joining newline is a delimiter, so no chunk spans two texts."""
    pieces = _CHUNK_SPLIT.split("\n".join(texts))  # chunk, delimiters, chunk, ..., chunk
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
    words = pieces[0::2]
    for word in dict.fromkeys(words):
        if word not in ids:
            ids[word] = len(ids)
    chunk = np.fromiter(map(ids.__getitem__, words), np.int32, len(words))
    keep = lengths[0::2] > 0
    starts = (np.cumsum(lengths) - lengths)[0::2][keep]
    block_starts = text_starts(texts)
    owner = np.searchsorted(block_starts, starts, side="right") - 1
    return chunk[keep], owner.astype(np.int32), (starts - block_starts[owner]).astype(np.int32)


class _Trigrams:
    """Which chunks of an ASCII shelf contain each three-character sequence, so the candidates for a literal
    of three or more characters come from a few short posting lists instead of a scan of the whole shelf."""

    def __init__(self, text: str, starts: list[int]):
        codes = np.frombuffer(text.encode("ascii"), np.uint8)
        inside = codes != ord("\n")
        inside = inside[:-2] & inside[1:-1] & inside[2:]
        grams = codes[:-2].astype(np.uint32) << 16
        grams |= codes[1:-1].astype(np.uint32) << 8
        grams |= codes[2:]
        bounds = np.asarray(starts, np.int64)
        chunk = np.repeat(np.arange(len(bounds) - 1, dtype=np.uint32), bounds[1:] - bounds[:-1])[: len(grams)]
        keys = grams[inside].astype(np.uint64) << 32
        keys |= chunk[inside]
        del codes, grams, chunk, inside
        keys.sort()
        keys, _ = runs(keys)
        self.grams, first = runs((keys >> 32).astype(np.uint32))
        self.bounds = np.append(first, len(keys))
        self.chunks = (keys & 0xFFFFFFFF).astype(np.int32)  # per gram, ascending

    def candidates(self, literal: str) -> np.ndarray:
        """Chunks holding every trigram of ``literal`` (ASCII, three characters or more): a superset."""
        codes = literal.encode("ascii")
        postings = []
        for i in range(len(codes) - 2):
            gram = (codes[i] << 16) | (codes[i + 1] << 8) | codes[i + 2]
            j = int(np.searchsorted(self.grams, gram))
            if j == len(self.grams) or self.grams[j] != gram:
                return np.zeros(0, np.int32)
            postings.append(self.chunks[self.bounds[j] : self.bounds[j + 1]])
        postings.sort(key=len)
        found = postings[0]
        for other in postings[1:3]:
            found = np.intersect1d(found, other, assume_unique=True)
        return found


class _Shelf:
    """Some chunks joined by newlines into one string for ``str.find``. ASCII chunks get a shelf of their
    own, with a trigram index: ``str.find`` is fastest on ASCII strings, and trigrams faster still."""

    def __init__(self, words: list[str], ids: list[int], trigrams: bool):
        self.words, self.ids = words, ids
        self.text = "\n".join(words)
        self.starts = [0]
        for word in words:
            self.starts.append(self.starts[-1] + len(word) + 1)
        self.trigrams = _Trigrams(self.text, self.starts) if trigrams and len(self.text) >= 3 else None

    def find(self, literal: str) -> list[int]:
        if self.trigrams is not None and len(literal) >= 3:
            return [
                self.ids[k] for k in self.trigrams.candidates(literal).tolist() if literal in self.words[k]
            ]
        found: list[int] = []
        at = self.text.find(literal)
        while at >= 0:
            k = bisect.bisect_right(self.starts, at) - 1
            found.append(self.ids[k])
            at = self.text.find(literal, self.starts[k + 1])
        return found


class Vocabulary:
    """The distinct delimiter-free runs ("chunks") of a list of texts, case-folded with ``table``, and where
    each one occurs. Chunks that fold alike keep their own ids."""

    def __init__(self, texts: Sequence[str], table: dict[int, int]):
        ids: dict[str, int] = {}
        blocks = [
            _chunk_block(texts[first : first + BUILD_BLOCK], ids)
            for first in range(0, len(texts), BUILD_BLOCK)
        ]
        empty = np.zeros(0, np.int32)
        chunk = np.concatenate([b[0] for b in blocks]) if blocks else empty
        owner = np.concatenate([b[1] + i * BUILD_BLOCK for i, b in enumerate(blocks)]) if blocks else empty
        start = np.concatenate([b[2] for b in blocks]) if blocks else empty
        del blocks
        order = np.argsort(chunk, kind="stable")
        self.texts = owner[order]  # postings, grouped by chunk: which text ...
        self.positions = start[order]  # ... and where in it
        del owner, start, order
        self.indptr = np.concatenate(([0], np.cumsum(np.bincount(chunk, minlength=len(ids)))))
        self.words = [fold(word, table) for word in ids]
        ascii_ids = [k for k, w in enumerate(self.words) if w and w.isascii()]
        other_ids = [k for k, w in enumerate(self.words) if w and not w.isascii()]
        self.ascii = _Shelf([self.words[k] for k in ascii_ids], ascii_ids, trigrams=True)
        self.other = _Shelf([self.words[k] for k in other_ids], other_ids, trigrams=False)

    def chunks_containing(self, literal: str) -> list[int]:
        """Ids of the chunks that contain ``literal`` (folded, non-empty, without delimiters)."""
        found = self.other.find(literal)
        return self.ascii.find(literal) + found if literal.isascii() else found

    def occurrences(self, chunks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(text, position, which of ``chunks``) for every occurrence of the given chunks."""
        index, which = ranges(self.indptr, chunks)
        return self.texts[index], self.positions[index], which
