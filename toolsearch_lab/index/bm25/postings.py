"""Lucene's BM25 arithmetic and the posting structures and top-k scorer behind ``BM25ToolIndex``.

Everything here is exact with respect to Lucene 9: the one-byte length norm (``SmallFloat.intToByte4``),
``BM25Similarity``'s float32 norm cache and idf, and ``BM25Scorer.score`` as
``weight - weight / (1 + freq * normInverse)`` in float32. A BooleanQuery sums its clauses' float scores
in double and rounds the total to float; Spring's query nests two of those levels (the four top-level
clauses, and the SHOULD terms inside descTerms / nameTerms).

Layout (per session snapshot, built once after tools are added):

* one *global* CSC posting matrix over the keys ``field * n_terms + term``: ``indptr`` (per key), ``docs``
  (doc ids, ascending per key), ``den`` (the exact ``1 + freq * normInverse`` per posting, float32),
  ``base`` (the posting's score for the field's base terms boost, float32, only used for bounds) and
  ``key_max`` (the best ``base`` score of each key);
* a *forward* index (CSR, doc -> its postings' keys and denominators) to rescore a few docs exactly;
* per field, the positions needed for phrase queries.

A search (:func:`top_k`) is then a handful of numpy calls, whatever the number of query terms:

1. **bounds** — every posting of the "essential" query terms (their concatenated slices) goes into one
   ``np.bincount``: ``P(d)`` is, to float32 precision, the sum of the doc's essential leaf scores. Terms
   whose summed best scores cannot reach the k-th best ``P`` are skipped (MaxScore); they are usually the
   frequent words of a natural-language query ("to", "the", "a" ...), i.e. most postings.
2. **finalists** — only docs whose upper bound reaches the k-th best lower bound survive (usually k plus
   ties), with margins far above the float32 rounding error.
3. **exact** — the finalists are rescored exactly from the forward index, in Lucene's float32/double
   order, and ranked by (score desc, doc id asc), Lucene's ``TopScoreDocCollector`` order.

The result equals scoring every document (see the proof sketch in :func:`top_k`); when pruning cannot
help (very common terms only, huge ``k``, masses of ties) :func:`exact_all` scores every matching doc.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

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
    return out.astype(np.uint8)


def norm_inverse_cache(avgdl: np.float32) -> np.ndarray:
    """BM25Similarity's per-field cache: ``1 / (k1 * ((1 - b) + b * LENGTH_TABLE[i] / avgdl))``, in float32
    and in Java's evaluation order."""
    lengths = LENGTH_TABLE.astype(_F32)  # Java widens int to float here (rounding very large lengths)
    return _ONE / (K1 * ((_ONE - B) + B * lengths / _F32(avgdl)))


def idf_array(doc_freq: np.ndarray, doc_count) -> np.ndarray:
    """BM25Similarity.idf, ``ln(1 + (N - n + 0.5) / (n + 0.5))``: computed in double, returned as float.
    ``doc_count`` may be an array (one per term)."""
    n = np.asarray(doc_freq, dtype=np.float64)
    return np.log(1.0 + (doc_count - n + 0.5) / (n + 0.5)).astype(_F32)


def idf(doc_freq: int, doc_count: int) -> np.float32:
    return idf_array(np.array([doc_freq]), doc_count)[0]


def bm25(weight: np.float32 | np.ndarray, one_plus_tf_norm: np.ndarray) -> np.ndarray:
    """Lucene 9's BM25Scorer.score, ``weight - weight / (1 + freq * normInverse)`` in float32, with
    ``weight = boost * idf`` and the denominator precomputed per posting."""
    return weight - weight / one_plus_tf_norm


# --- building -------------------------------------------------------------------------------------------------


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
        self.norm_inverse = norm_inverse_cache(self.avgdl) if self.doc_count else None

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


# --- the query -----------------------------------------------------------------------------------------------


@dataclass
class CompiledQuery:
    """Spring's rewritten BooleanQuery as arrays: one row per matching TermQuery leaf, plus phrase leaves.

    ``group`` numbers the top-level clauses; a leaf's score is summed (double) into its group, each group
    rounded to float, the groups summed (double) and rounded to float."""

    keys: np.ndarray  # int64, field * n_terms + term, unique
    weight: np.ndarray  # float32, boost * idf (Lucene's exact weight)
    mult: np.ndarray  # float64, boost / the field's base boost (the leaf's score ~ mult * base score)
    group: np.ndarray  # int64
    lo: np.ndarray  # posting range of each leaf in the global arrays
    hi: np.ndarray
    phrases: list[tuple[int, np.ndarray, np.ndarray]]  # (group, docs, float32 scores)
    n_groups: int
    unique: bool = True  # every (field, term) in one leaf only (always true for Spring's query)

    @property
    def doc_freq(self) -> np.ndarray:
        return self.hi - self.lo


def compile_query(
    postings: Postings,
    keys: list[int],
    boost: list[float],
    base: list[float],
    group: list[int],
    phrases: list[tuple[int, np.ndarray, np.ndarray]],
    n_groups: int,
) -> CompiledQuery:
    """Term leaves given as parallel lists (``keys`` = field * n_terms + term, known terms only; ``base`` =
    the field's terms boost); leaves matching nothing are dropped. Computes Lucene's weights."""
    unique = len(set(keys)) == len(keys)
    k = np.array(keys, dtype=np.int64)
    lo = postings.indptr.take(k)
    hi = postings.indptr.take(k + 1)
    df = hi - lo
    b = np.array(boost, dtype=np.float64)
    m = b / np.array(base, dtype=np.float64)
    g = np.array(group, dtype=np.int64)
    keep = df > 0
    if not keep.all():
        idx = np.flatnonzero(keep)
        k, lo, hi, df, b, m, g = k[idx], lo[idx], hi[idx], df[idx], b[idx], m[idx], g[idx]
    weight = b.astype(_F32) * postings.key_idf.take(k)  # float32 boost * float32 idf, as Lucene
    return CompiledQuery(k, weight, m, g, lo, hi, phrases, n_groups, unique)


def compile_leaves(
    postings: Postings,
    keys: list[int],
    boost: list[float],
    mult: list[float],
    group: list[int],
    n_groups: int,
) -> CompiledQuery:
    """:func:`compile_query` for leaves already restricted to keys with postings (``postings.has_postings``)
    and with ``mult`` = boost / the field's terms boost computed by the caller: four small arrays and two
    gathers, for the search hot path."""
    k = np.array(keys, dtype=np.int64)
    bounds = postings.bounds.take(k, axis=0)
    weight = np.array(boost, dtype=_F32) * postings.key_idf.take(k)  # float32 boost * float32 idf
    return CompiledQuery(
        k,
        weight,
        np.array(mult, dtype=np.float64),
        np.array(group, dtype=np.int64),
        bounds[:, 0],
        bounds[:, 1],
        [],
        n_groups,
        len(set(keys)) == len(keys),
    )


# --- scoring -------------------------------------------------------------------------------------------------

_SAMPLE_STRIDE = 8  # top-k preselection: the k-th best of every 8th doc
_REL = 1e-6  # relative slack on bounds: float32 rounding of leaf, clause and total sums is ~1e-7 each
_DENSE_FRACTION = 16  # keys in more than N / 16 docs get a dense row ...
_DENSE_BUDGET = 3  # ... as long as the dense rows hold at most 3x as many cells as there are postings


def leaf_scores(postings: Postings, q: CompiledQuery, i: int) -> np.ndarray:
    """Exact scores of leaf ``i``'s postings (float32 values, as float64).

    The stored ``base`` score is exact for the field's base boost; multiplying weight and score by a power
    of two commutes with float rounding, so ``2 * base`` is exact for twice the boost (a repeated token)."""
    a, b, m = int(q.lo[i]), int(q.hi[i]), float(q.mult[i])
    if m == 1.0:
        return postings.base[a:b]
    if m in (2.0, 4.0, 8.0):
        return postings.base[a:b] * m
    return bm25(q.weight[i], postings.den[a:b]).astype(np.float64)


def top_k(
    postings: Postings, q: CompiledQuery, eligible: np.ndarray | None, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` eligible matching docs and their exact float32 scores, best first (ties: doc id asc).

    MaxScore over dense rows. Candidates are the docs matched by a rare leaf (no dense row) or a phrase;
    each is scored exactly, frequent leaves looked up in their dense rows; theta is the k-th best score.
    Frequent leaves whose summed best scores (with a float32 margin) stay below theta are *skipped*: a doc
    matching only them scores below theta, so k docs beat it. The other frequent leaves add their docs
    to the candidates, which are scored again. The result equals scoring every doc; when the candidates
    would cost more than that, :func:`exact_all` scores every posting instead."""
    n_leaves = len(q.keys)
    if n_leaves == 0 and not q.phrases:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=_F32)
    if not q.unique:
        return exact_all(postings, q, eligible, k)
    df = q.hi - q.lo
    n_docs = postings.n_docs
    # Rough costs in nanoseconds (numpy on one core, fitted on the MetaTool benchmark at 1k-100k tools):
    # scoring every posting with np.add.at, then a pass over all docs; versus scattering the sparse
    # postings and gathering dense rows per candidate, with a larger fixed cost (more numpy calls).
    cost_all = (14 * int(df.sum())) // 10 + n_docs // 4 + 21_000
    if _pruned_cost(0, 0, 0, n_docs) >= cost_all:  # pruning cannot pay off: skip the planning too
        return exact_all(postings, q, eligible, k)
    rows = postings.dense_row[q.keys]
    # a dense row holds base scores: usable when the leaf's score is base * (a power of two), exactly
    is_dense = (rows >= 0) & ((q.mult == 1.0) | (q.mult == 2.0) | (q.mult == 4.0))
    n_dense = int(np.count_nonzero(is_dense))
    sparse_df = int(df[~is_dense].sum())
    if not n_dense or _pruned_cost(sparse_df, min(sparse_df, n_docs), n_dense, n_docs) >= cost_all:
        return exact_all(postings, q, eligible, k)
    sparse = np.flatnonzero(~is_dense)
    dense = np.flatnonzero(is_dense)
    lo, hi = q.lo.tolist(), q.hi.tolist()
    sources = [postings.docs[lo[i] : hi[i]] for i in sparse.tolist()] + [d for _, d, _ in q.phrases]
    cands = _union(postings, sources)
    docs, scores = _eligible(cands, exact_scores(postings, q, cands, sparse, dense), eligible)
    upper = q.mult[dense] * postings.key_max[q.keys[dense]]
    order = np.argsort(upper, kind="stable")
    slack = float(np.sum(q.weight, dtype=np.float64)) * _REL + 1e-9
    cum = np.cumsum(upper[order]) * (1 + _REL) + slack
    theta = _kth(scores, k) if len(scores) >= k else 0.0
    n_skip = int(np.searchsorted(cum, theta, side="left"))  # cum[:n_skip] < theta: skipped
    if n_skip == n_dense:
        return _top(docs, scores, k)
    promoted = dense[order[n_skip:]]
    estimate = min(len(cands) + int(df[promoted].sum()), n_docs)
    if _pruned_cost(sparse_df, estimate, n_dense, n_docs) >= cost_all:
        return exact_all(postings, q, eligible, k)
    sources += [postings.docs[lo[i] : hi[i]] for i in promoted.tolist()]
    cands = _union(postings, sources)
    docs, scores = _eligible(cands, exact_scores(postings, q, cands, sparse, dense), eligible)
    return _top(docs, scores, k)


def _pruned_cost(sparse_df: int, n_cands: int, n_dense: int, n_docs: int) -> int:
    return 2 * sparse_df + 2 * n_cands * (n_dense + 1) + n_docs // 4 + 80_000


def _union(postings: Postings, sources: list[np.ndarray]) -> np.ndarray:
    """Sorted union of doc-id arrays (a mark array beats sorting the concatenation)."""
    if not sources:
        return np.empty(0, dtype=np.int64)
    if len(sources) == 1:
        return sources[0]  # posting lists and phrase matches are sorted and unique
    mark, _ = postings.scratch()
    out = None
    try:
        for d in sources:
            mark[d] = True
        out = np.flatnonzero(mark)
    finally:
        if out is None:  # interrupted: clear everything
            mark[:] = False
        else:
            mark[out] = False
    return out


def _eligible(
    docs: np.ndarray, scores: np.ndarray, eligible: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    if eligible is None:
        return docs, scores
    keep = eligible[docs]
    return docs[keep], scores[keep]


def _kth(values: np.ndarray, k: int) -> float:
    return float(np.partition(values, len(values) - k)[len(values) - k])


def exact_scores(
    postings: Postings, q: CompiledQuery, docs: np.ndarray, sparse: np.ndarray, dense: np.ndarray
) -> np.ndarray:
    """Exact float32 scores of ``docs`` (sorted, unique), which must include every doc matched by a
    ``sparse`` leaf or a phrase: sparse leaves are scattered from their postings, ``dense`` leaves gathered
    from their dense rows. Each clause sums its leaves in double and rounds to float; the total sums the
    clauses in double and rounds to float (Lucene's BooleanQuery; the double sums of a few dozen floats
    are exact, so the order of the additions does not matter)."""
    n = len(docs)
    acc = np.zeros((q.n_groups, n), dtype=np.float64)
    group = q.group.tolist()
    if len(sparse):
        _, slot = postings.scratch()
        slot[docs] = np.arange(n)
        lo, hi, mult = q.lo.tolist(), q.hi.tolist(), q.mult.tolist()
        base, pdocs = postings.base, postings.docs
        per_group: dict[int, list[int]] = {}
        for i in sparse.tolist():
            per_group.setdefault(group[i], []).append(i)
        for g, leaves in per_group.items():
            if len(leaves) == 1:
                i = leaves[0]
                d, s = pdocs[lo[i] : hi[i]], leaf_scores(postings, q, i)
            else:
                d = np.concatenate([pdocs[lo[i] : hi[i]] for i in leaves])
                s = np.concatenate(
                    [base[lo[i] : hi[i]] if mult[i] == 1.0 else leaf_scores(postings, q, i) for i in leaves]
                )
            np.add.at(acc[g], slot.take(d), s)
    if len(dense):
        rows = postings.dense_row[q.keys[dense]].tolist()
        scores = np.empty((len(rows), n), dtype=_F32)
        for j, r in enumerate(rows):
            postings.dense[r].take(docs, out=scores[j])
        mult = q.mult[dense]
        if (mult != 1.0).any():
            scores *= mult.astype(_F32)[:, None]  # powers of two: exact
        groups = q.group[dense]
        if (groups == groups[0]).all():
            acc[groups[0]] += scores.sum(axis=0, dtype=np.float64)
        else:
            for g in np.unique(groups).tolist():
                acc[g] += scores[groups == g].sum(axis=0, dtype=np.float64)
    clauses = acc.astype(_F32)
    for g, pdocs, pscores in q.phrases:
        i = np.minimum(np.searchsorted(pdocs, docs), len(pdocs) - 1)
        found = pdocs[i] == docs
        clauses[g, found] = pscores[i[found]]
    return clauses.sum(axis=0, dtype=np.float64).astype(_F32)


def exact_all(
    postings: Postings, q: CompiledQuery, eligible: np.ndarray | None, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Score every matching doc exactly and keep the top k.

    The clause with the most postings is accumulated over all docs (one ``np.add.at``, float64, rounded
    to float); the other clauses (name terms, phrases: few postings) only over the docs they match, each
    summed in a zeroed per-thread float64 buffer, rounded to float and added (in double) to the total."""
    n_docs = postings.n_docs
    lo, hi, group, mult = q.lo.tolist(), q.hi.tolist(), q.group.tolist(), q.mult.tolist()
    docs, base = postings.docs, postings.base
    active = sorted(set(group).union(g for g, _, _ in q.phrases))
    if len(active) > 1 and n_docs * (len(active) - 1) <= _DENSE_CLAUSES_MAX:
        return _exact_all_dense(postings, q, eligible, k, active)
    main = group[max(range(len(group)), key=lambda i: hi[i] - lo[i])] if group else -1
    acc = np.zeros(n_docs, dtype=np.float64)
    others: dict[int, list[int]] = {}
    mine = []
    for i, g in enumerate(group):
        if g == main:
            mine.append(i)
        else:
            others.setdefault(g, []).append(i)
    if len(mine) == 1:
        np.add.at(acc, docs[lo[mine[0]] : hi[mine[0]]], leaf_scores(postings, q, mine[0]))
    elif mine:
        np.add.at(
            acc,
            np.concatenate([docs[lo[i] : hi[i]] for i in mine]),
            np.concatenate(
                [base[lo[i] : hi[i]] if mult[i] == 1.0 else leaf_scores(postings, q, i) for i in mine]
            ),
        )
    total = acc.astype(_F32)
    if others or q.phrases:
        # the small clauses: (docs, float32 clause scores) each; then total = float(sum of the clauses)
        small: list[tuple[np.ndarray, np.ndarray | None, list[int]]] = []
        for leaves in others.values():
            if len(leaves) == 1:
                i = leaves[0]
                small.append((docs[lo[i] : hi[i]], leaf_scores(postings, q, i), leaves))
            else:
                small.append((np.concatenate([docs[lo[i] : hi[i]] for i in leaves]), None, leaves))
        for _, pdocs, pscores in q.phrases:
            small.append((pdocs, pscores, []))
        if len(small) == 1 and small[0][1] is not None:
            touched = small[0][0]  # one leaf or one phrase: sorted, unique
        else:
            touched = np.unique(np.concatenate([d for d, _, _ in small]))
        extra = total.take(touched).astype(np.float64)
        buf = postings.scratch_f64()
        for d, s, leaves in small:
            if s is not None:  # one leaf (its float32 score is the clause score) or one phrase
                if d is touched:
                    extra += s
                else:
                    extra[np.searchsorted(touched, d)] += s
                continue
            try:
                np.add.at(buf, d, np.concatenate([leaf_scores(postings, q, i) for i in leaves]))
                extra += buf.take(touched).astype(_F32)
            finally:
                buf[d] = 0.0
        total[touched] = extra.astype(_F32)
    if eligible is not None:
        total[~eligible] = 0
    return _top_dense(total, k)


_DENSE_CLAUSES_MAX = 40_000  # exact_all: one row per clause over all docs when the extra rows are this small


def _exact_all_dense(
    postings: Postings, q: CompiledQuery, eligible: np.ndarray | None, k: int, active: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_all` for small indexes: every clause (``active``: the groups with leaves or phrases) gets
    a float64 row over all docs, all term leaves go into one ``np.add.at`` (each clause's postings in leaf
    order, as the sparse variant adds them); the rows are rounded to float, phrase scores written in, and
    the clauses summed in double (clause order) and rounded to float. A doc a clause does not match has 0
    there, which adds nothing: the same float scores as the sparse variant, with fewer numpy calls."""
    n_docs = postings.n_docs
    lo, hi, group, mult = q.lo.tolist(), q.hi.tolist(), q.group.tolist(), q.mult.tolist()
    docs, base = postings.docs, postings.base
    row = {g: r for r, g in enumerate(active)}
    order = sorted(range(len(group)), key=group.__getitem__)  # stable: leaf order within a clause
    acc = np.zeros((len(active), n_docs), dtype=np.float64)
    if order:
        d = np.concatenate([docs[lo[i] : hi[i]] for i in order])
        s = np.concatenate(
            [base[lo[i] : hi[i]] if mult[i] == 1.0 else leaf_scores(postings, q, i) for i in order]
        )
        ends: dict[int, int] = {}  # clause row -> end of its postings in d (rows are contiguous, ascending)
        end = 0
        for i in order:
            end += hi[i] - lo[i]
            ends[row[group[i]]] = end
        start = 0
        for r, end in ends.items():  # shift each clause's doc ids to its row
            if r:
                d[start:end] += r * n_docs
            start = end
        np.add.at(acc.reshape(-1), d, s)
    clauses = acc.astype(_F32)
    for g, pdocs, pscores in q.phrases:
        clauses[row[g], pdocs] = pscores
    if len(active) == 2:
        # float(double(a) + double(b)) == a + b in float: rounding twice is innocuous for one addition
        # when the wider format has at least 2p + 2 bits (53 >= 2 * 24 + 2)
        total = clauses[0] + clauses[1]
    else:
        total = clauses[0].astype(np.float64)
        for r in range(1, len(active)):
            total += clauses[r]
        total = total.astype(_F32)
    if eligible is not None:
        total[~eligible] = 0
    return _top_dense(total, k)


def _top_dense(total: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k of a float32 score per doc (0 = no match). The k-th best score of every 8th doc is a lower
    bound of the k-th best overall: only docs at or above it (about 8k) go to the exact selection."""
    n_docs = len(total)
    sample = total[::_SAMPLE_STRIDE]
    if len(sample) > k:
        floor = np.partition(sample, len(sample) - k)[len(sample) - k]
        cands = np.flatnonzero(total >= floor) if floor > 0 else np.flatnonzero(total)
    else:
        cands = np.flatnonzero(total)
    if len(cands) > 64 * k and n_docs > k:  # a sample far from typical (e.g. scores sorted by doc id)
        kth = np.partition(total, n_docs - k)[n_docs - k]
        cands = np.flatnonzero(total >= kth) if kth > 0 else np.flatnonzero(total)
    return _top(cands, total[cands], k)


def _top(docs: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k by score descending, ties by doc id ascending (Lucene's TopScoreDocCollector order).
    ``docs`` must be ascending."""
    if len(docs) <= 128:  # few: one sort
        order = np.lexsort((docs, -scores))[:k]
        return docs[order], scores[order]
    if len(docs) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = np.flatnonzero(scores >= kth)
        if len(keep) > k:  # ties at the k-th score: lowest doc ids win
            above = keep[scores[keep] > kth]
            keep = np.concatenate([above, keep[scores[keep] == kth][: k - len(above)]])
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docs, -scores))
    return docs[order], scores[order]
