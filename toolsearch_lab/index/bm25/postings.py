"""Lucene's BM25 arithmetic and the posting structures behind ``BM25ToolIndex``.

Everything here is exact with respect to Lucene 9: the one-byte length norm (``SmallFloat.intToByte4``),
``BM25Similarity``'s float32 norm cache and idf, and ``BM25Scorer.score`` as
``weight - weight / (1 + freq * normInverse)`` in float32. A BooleanQuery sums its clauses' float scores
in double and rounds the total to float; :mod:`toolsearch_lab.index.bm25.scoring` does that summing.

Layout (per session snapshot, built once after tools are added):

* one *global* CSC posting matrix over the keys ``field * n_terms + term``: ``indptr`` (per key), ``docs``
  (doc ids, ascending per key), ``den`` (the exact ``1 + freq * normInverse`` per posting, float32),
  ``base`` (the posting's score for the field's base terms boost, float32, only used for bounds) and
  ``key_max`` (the best ``base`` score of each key);
* dense rows of base scores for the most frequent keys (one gather answers "what does this term add to
  each of these candidates?");
* per field, the positions needed for phrase queries.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

_F32 = np.float32
K1 = _F32(1.2)
B = _F32(0.75)
_ONE = _F32(1.0)


# --- Lucene's SmallFloat.intToByte4 / byte4ToInt -----------------------------------------------------------
# Lengths below 24 are stored exactly; above, (length - 24) keeps 4 significant bits (3 stored + 1 implicit),
# truncated. 24 = 255 - longToInt4(Integer.MAX_VALUE), so the byte range is used up exactly.
_NUM_FREE_VALUES = 24


def _long_to_int4(i: int) -> int:
    num_bits = i.bit_length()
    if num_bits < 4:
        return i  # "subnormal": stored as is
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07  # drop the implicit leading 1
    return encoded | ((shift + 1) << 3)


def _int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


def int_to_byte4(length: int) -> int:
    """Lucene ``SmallFloat.intToByte4``: the one-byte norm (0-255) stored for a field of ``length`` tokens."""
    if length < 0:
        raise ValueError(f"length must be >= 0, got {length}")
    if length < _NUM_FREE_VALUES:
        return length
    return _NUM_FREE_VALUES + _long_to_int4(length - _NUM_FREE_VALUES)


def byte4_to_int(b: int) -> int:
    """Lucene ``SmallFloat.byte4ToInt``: the length BM25 sees for norm byte ``b``."""
    if not 0 <= b <= 255:
        raise ValueError(f"norm byte must be in 0..255, got {b}")
    if b < _NUM_FREE_VALUES:
        return b
    return min(_NUM_FREE_VALUES + _int4_to_long(b - _NUM_FREE_VALUES), 2**31 - 1)


# BM25Similarity.LENGTH_TABLE: the decoded length of each of the 256 norm bytes.
LENGTH_TABLE = np.array([byte4_to_int(b) for b in range(256)], dtype=np.int64)


def encode_lengths(lengths: np.ndarray) -> np.ndarray:
    """Vectorised ``int_to_byte4`` (uint8 per document)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = lengths.copy()
    big = lengths >= _NUM_FREE_VALUES
    if big.any():
        v = lengths[big] - _NUM_FREE_VALUES
        nbits = np.frexp(v.astype(np.float64))[1].astype(np.int64)  # == int.bit_length for v < 2**53
        shift = np.maximum(nbits - 4, 0)
        normal = ((v >> shift) & 0x07) | ((shift + 1) << 3)
        out[big] = _NUM_FREE_VALUES + np.where(nbits < 4, v, normal)
    return np.asarray(out.astype(np.uint8))


def norm_inverse_cache(avgdl: np.float32) -> np.ndarray:
    """BM25Similarity's per-field cache: ``1 / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl))``, in float32
    and in Java's evaluation order."""
    lengths = LENGTH_TABLE.astype(_F32)  # Java widens int to float here (rounding very large lengths)
    return np.asarray(_ONE / (K1 * ((_ONE - B) + B * lengths / _F32(avgdl))))


def idf_array(doc_freq: np.ndarray, doc_count: int | np.ndarray) -> np.ndarray:
    """BM25Similarity.idf, ``ln(1 + (N - n + 0.5) / (n + 0.5))``: computed in double, returned as float.
    ``doc_count`` may be an array (one per term)."""
    n = np.asarray(doc_freq, dtype=np.float64)
    return np.asarray(np.log(1.0 + (doc_count - n + 0.5) / (n + 0.5)).astype(_F32))


def idf(doc_freq: int, doc_count: int) -> np.float32:
    value: np.float32 = idf_array(np.array([doc_freq]), doc_count)[0]
    return value


def bm25(weight: np.float32 | np.ndarray, one_plus_tf_norm: np.ndarray) -> np.ndarray:
    """Lucene 9's BM25Scorer.score, ``weight - weight / (1 + freq * normInverse)`` in float32, with
    ``weight = boost * idf`` and the denominator precomputed per posting."""
    return np.asarray(weight - weight / one_plus_tf_norm)


# --- building -----


class FieldBuilder:
    """Append-only token storage for one field, cheap to extend and to turn into numpy arrays."""

    def __init__(self) -> None:
        self.ids = array("i")  # positional token ids, all docs concatenated
        self.lengths = array("i")  # positions per doc (the dl Lucene stores)
        self.extra_ids = array("i")  # split_identifiers: whole compound tokens, without a position
        self.extra_docs = array("i")

    def add(self, doc: int, positional: list[int], extra: list[int]) -> None:
        self.ids.extend(positional)
        self.lengths.append(len(positional))
        if extra:
            self.extra_ids.extend(extra)
            self.extra_docs.extend([doc] * len(extra))


class FieldIndex:
    """One field at one point in time: statistics, norms, its posting lists and its positions."""

    def __init__(self, builder: FieldBuilder, n_terms: int, base_boost: float) -> None:
        lengths = np.array(builder.lengths, dtype=np.int64)
        ids = np.array(builder.ids, dtype=np.int32)
        self.n_docs = len(lengths)
        self.n_terms = n_terms
        self.lengths = lengths
        # Lucene's CollectionStatistics: docCount counts docs with at least one token in the field;
        # sumTotalTermFreq counts every indexed token (compound originals included).
        self.doc_count = int(np.count_nonzero(lengths))
        self.sum_total_term_freq = int(lengths.sum()) + len(builder.extra_ids)
        self.avgdl = _F32(self.sum_total_term_freq / self.doc_count) if self.doc_count else _F32(0.0)
        self.norms = encode_lengths(lengths)
        # (an empty field has no norms; its zeros are never read)
        self.norm_inverse = norm_inverse_cache(self.avgdl) if self.doc_count else np.zeros(256, _F32)

        # Term-frequency matrix, docs x terms, CSC: column t is term t's posting list (docs ascending).
        rows = np.repeat(np.arange(self.n_docs, dtype=np.int32), lengths)
        cols = ids
        if len(builder.extra_ids):
            rows = np.concatenate([rows, np.array(builder.extra_docs, dtype=np.int32)])
            cols = np.concatenate([cols, np.array(builder.extra_ids, dtype=np.int32)])
        tf = sp.csc_matrix((np.ones(len(rows), dtype=_F32), (rows, cols)), shape=(self.n_docs, n_terms))
        tf.sum_duplicates()  # also sorts each column's doc ids
        self.indptr = tf.indptr.astype(np.int64)
        self.docs = tf.indices.astype(np.int64)
        self.freqs = tf.data  # float32, as Lucene's scorer sees them
        self.doc_freq_of = np.diff(self.indptr)
        if self.doc_count:
            # 1 + freq * normInverse per posting: the only doc-dependent part of a term score.
            self.den = _ONE + self.freqs * self.norm_inverse[self.norms[self.docs]]
            weight = (_F32(base_boost) * idf_array(self.doc_freq_of, self.doc_count)).astype(_F32)
            self.base = bm25(np.repeat(weight, self.doc_freq_of), self.den)  # float32, exact
        else:
            self.den = np.empty(0, dtype=_F32)
            self.base = np.empty(0, dtype=_F32)
        self.key_max = np.zeros(n_terms, dtype=np.float64)
        nonempty = np.flatnonzero(self.doc_freq_of)
        if len(nonempty):
            self.key_max[nonempty] = np.maximum.reduceat(self.base, self.indptr[nonempty])
        self._build_positions(ids)

    def doc_freqs(self, terms: np.ndarray) -> np.ndarray:
        """Docs containing each term id (0 for ids unknown to this snapshot, e.g. -1)."""
        terms = np.asarray(terms, dtype=np.int64)
        known = (terms >= 0) & (terms < self.n_terms)
        return np.where(known, self.doc_freq_of[np.where(known, terms, 0)], 0)

    def doc_freq(self, term: int) -> int:
        return int(self.doc_freq_of[term]) if 0 <= term < self.n_terms else 0

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[term], self.indptr[term + 1]
        return self.docs[lo:hi], self.den[lo:hi]

    def term_freq(self, term: int, doc: int) -> int:
        if self.doc_freq(term) == 0:
            return 0
        lo = self.indptr[term]
        docs = self.docs[lo : self.indptr[term + 1]]
        i = int(np.searchsorted(docs, doc))
        return int(self.freqs[lo + i]) if i < len(docs) and docs[i] == doc else 0

    # Built with the snapshot (a stable argsort of the token stream) so no query pays for it.
    def _build_positions(self, ids: np.ndarray) -> None:
        lengths = self.lengths
        # The stream is every doc's tokens with a -1 sentinel before, between and after docs,
        # so a phrase can never match across two documents.
        slot = np.arange(len(ids), dtype=np.int64) + np.repeat(
            np.arange(1, self.n_docs + 1, dtype=np.int64), lengths
        )
        stream = np.full(len(ids) + self.n_docs + 1, -1, dtype=np.int32)
        stream[slot] = ids
        stream_doc = np.full(len(stream), -1, dtype=np.int32)
        stream_doc[slot] = np.repeat(np.arange(self.n_docs, dtype=np.int32), lengths)
        order = np.argsort(ids, kind="stable")  # by term, then by position
        self._pos_list = slot[order]
        self._pos_indptr = np.zeros(self.n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(ids, minlength=self.n_terms), out=self._pos_indptr[1:])
        self._stream_doc = stream_doc
        self._stream = stream

    def phrase_matches(self, terms: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Docs containing ``terms`` as an exact phrase (slop 0) and the number of occurrences in each,
        overlapping occurrences included (Lucene's ExactPhraseMatcher counts every start position)."""
        empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        if any(self.doc_freq(t) == 0 for t in terms):
            return empty
        counts = [self._pos_indptr[t + 1] - self._pos_indptr[t] for t in terms]
        anchor = int(np.argmin(counts))  # walk from the rarest term's positions
        a = terms[anchor]
        starts = self._pos_list[self._pos_indptr[a] : self._pos_indptr[a + 1]] - anchor
        k = len(terms)
        starts = starts[(starts >= 0) & (starts + k <= len(self._stream))]
        for offset, term in enumerate(terms):
            if offset == anchor:
                continue
            starts = starts[self._stream[starts + offset] == term]
            if not len(starts):
                return empty
        docs = self._stream_doc[starts].astype(np.int64)  # ascending, since starts are
        boundaries = np.flatnonzero(np.diff(docs)) + 1
        first = np.concatenate([[0], boundaries])
        freqs = np.diff(np.concatenate([first, [len(docs)]]))
        return docs[first], freqs

    def phrase_freq(self, terms: Sequence[int], doc: int) -> int:
        docs, freqs = self.phrase_matches(terms)
        i = int(np.searchsorted(docs, doc))
        return int(freqs[i]) if i < len(docs) and docs[i] == doc else 0

    def phrase_scores(self, terms: Sequence[int], boost: float) -> tuple[np.ndarray, np.ndarray] | None:
        """(docs, float32 scores) of a PhraseQuery on this field, or None when nothing matches."""
        if self.doc_count == 0 or min(terms) < 0:
            return None
        docs, freqs = self.phrase_matches(terms)
        if not len(docs):
            return None
        # PhraseWeight: the term idfs (as floats) summed in double, then cast to float.
        phrase_idf = _F32(idf_array(self.doc_freqs(np.array(terms)), self.doc_count).astype(np.float64).sum())
        weight = _F32(_F32(boost) * phrase_idf)
        return docs, bm25(weight, _ONE + freqs.astype(_F32) * self.norm_inverse[self.norms[docs]])


_DENSE_FRACTION = 16  # keys in more than N / 16 docs get a dense row ...
_DENSE_BUDGET = 3  # ... as long as the dense rows hold at most 3x as many cells as there are postings


class Postings:
    """All fields' posting lists in one CSC over keys ``field * n_terms + term``, plus dense rows for the
    most frequent keys."""

    def __init__(self, fields: Sequence[FieldIndex], n_docs: int, n_terms: int) -> None:
        self.n_docs = n_docs
        self.n_terms = n_terms
        self.fields = list(fields)
        offsets = np.cumsum([0] + [len(f.docs) for f in fields])
        self.indptr = np.concatenate(
            [f.indptr[:-1] + off for f, off in zip(fields, offsets, strict=False)] + [offsets[-1:]]
        ).astype(np.int64)
        self.docs = np.concatenate([f.docs for f in fields]) if fields else np.empty(0, np.int64)
        # float64 copies of exact float32 scores: np.add.at only has a fast path for matching dtypes.
        self.base = np.concatenate([f.base for f in fields]).astype(np.float64) if fields else np.empty(0)
        self.den = np.concatenate([f.den for f in fields]) if fields else np.empty(0, _F32)
        self.key_max = np.concatenate([f.key_max for f in fields]) if fields else np.empty(0)
        self.doc_count = np.array([f.doc_count for f in fields], dtype=np.float64)
        # BM25Similarity.idf of every key (float32), so a query only multiplies it by its boost
        self.key_idf = (
            np.concatenate([idf_array(f.doc_freq_of, f.doc_count) for f in fields])
            if fields
            else np.empty(0, _F32)
        )
        # (start, end) of each key's postings, and whether it has any (a bytes object: fast to index
        # from Python while a query is compiled)
        self.bounds = np.stack([self.indptr[:-1], self.indptr[1:]], axis=1)
        self.has_postings = (np.diff(self.indptr) > 0).astype(np.uint8).tobytes()
        self._build_dense()
        self._scratch = threading.local()

    def scratch(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's (mark, slot) work arrays over all docs: ``mark`` is all False between uses, ``slot``
        holds garbage (only entries written by the current search are read)."""
        bufs = getattr(self._scratch, "bufs", None)
        if bufs is None:
            bufs = self._scratch.bufs = (
                np.zeros(self.n_docs, dtype=bool),
                np.empty(self.n_docs, dtype=np.int64),
            )
        return bufs

    def scratch_f64(self) -> np.ndarray:
        """This thread's float64 work array over all docs, all zeros between uses."""
        buf = getattr(self._scratch, "f64", None)
        if buf is None:
            buf = self._scratch.f64 = np.zeros(self.n_docs, dtype=np.float64)
        return buf

    def _build_dense(self) -> None:
        """Dense rows of base scores (float32, 0 = absent) for keys in more than 1/``_DENSE_FRACTION`` of
        the docs, most frequent first, within ``_DENSE_BUDGET`` x the postings.

        They answer "what does frequent term t add to each of these candidates?" with one gather."""
        df = np.diff(self.indptr)
        n_keys = len(df)
        self.dense_row = np.full(n_keys, -1, dtype=np.int64)
        frequent = (
            np.flatnonzero(df * _DENSE_FRACTION > self.n_docs) if self.n_docs >= 64 else np.empty(0, np.int64)
        )
        max_rows = int(_DENSE_BUDGET * len(self.docs) // max(self.n_docs, 1))
        if len(frequent) > max_rows:
            frequent = frequent[np.argsort(-df[frequent], kind="stable")[:max_rows]]
        self.dense = np.zeros((len(frequent), self.n_docs), dtype=_F32)
        for r, key in enumerate(frequent.tolist()):
            a, b = self.indptr[key], self.indptr[key + 1]
            self.dense[r, self.docs[a:b]] = self.base[a:b]
        self.dense_row[frequent] = np.arange(len(frequent))
