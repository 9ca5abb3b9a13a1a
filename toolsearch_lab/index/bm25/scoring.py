"""The query as arrays (:class:`CompiledQuery`) and the exact top-k scorer of ``BM25ToolIndex``, over the
posting structures of :mod:`toolsearch_lab.index.bm25.postings`.

A BooleanQuery sums its clauses' float scores in double and rounds the total to float; Spring's query nests
two of those levels (the four top-level clauses, and the SHOULD terms inside descTerms / nameTerms).
A search (:func:`top_k`) is MaxScore over the dense rows, a few dozen numpy calls whatever the query
length:

1. **candidates** — the docs matched by a rare leaf (one without a dense row) or a phrase are scored
   exactly (:func:`exact_scores`: rare leaves scattered from their postings, frequent ones gathered from
   their dense rows); the k-th best score is theta.
2. **skip** — frequent leaves whose summed best scores (with a float32 margin) stay below theta cannot lift
   a doc into the top k and are skipped; they are usually the frequent words of a natural-language query
   ("to", "the", "a" ...), i.e. most postings. The other frequent leaves add their docs to the
   candidates, which are scored again.
3. **rank** — by (score desc, doc id asc), Lucene's ``TopScoreDocCollector`` order.

The result equals scoring every document. A cost model (the ``NS_*`` constants) sends a query to
:func:`exact_all`, which scores every matching doc, when pruning cannot pay off (very common terms only,
huge ``k``); both paths return the same top k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolsearch_lab.index.bm25.postings import Postings, bm25

__all__ = ["CompiledQuery", "compile_leaves", "exact_all", "exact_scores", "leaf_scores", "top_k"]

_F32 = np.float32


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
        return np.asarray(self.hi - self.lo)


def compile_leaves(
    postings: Postings,
    keys: list[int],
    boost: list[float],
    mult: list[float],
    group: list[int],
    n_groups: int,
) -> CompiledQuery:
    """The query's TermQuery leaves as arrays. ``keys`` (field * n_terms + term) must have postings
    (``postings.has_postings``); ``mult`` is each leaf's boost / its field's terms boost. Computes Lucene's
    weights (float32 boost x float32 idf): four small arrays and two gathers, for the search hot path."""
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


# --- scoring -----

_SAMPLE_STRIDE = 8  # top-k preselection: the k-th best of every 8th doc
_REL = 1e-6  # relative slack on bounds: float32 rounding of leaf, clause and total sums is ~1e-7 each


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
    cost_all = _exact_all_cost(int(df.sum()), n_docs)
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


# The cost model choosing between exact_all and MaxScore pruning, in nanoseconds. The constants were
# measured with numpy on one core of this machine class: benchmarks/search_speed.py's MetaTool-derived
# catalogs at 1k, 10k and 100k tools, timing each path over its query set and fitting per-posting,
# per-doc and fixed costs by least squares (rounded). Only the comparison matters, so the rounding is
# harmless: both paths return the same top k.
NS_PER_POSTING_SCATTER = 1.4  # exact_all: np.add.at of one posting's score
NS_PER_DOC_PASS = 0.25  # one pass over all docs (top-k selection, mark arrays)
NS_EXACT_ALL_FIXED = 21_000  # exact_all's fixed numpy-call overhead
NS_PER_SPARSE_POSTING = 2  # pruning: scattering a rare leaf's postings
NS_PER_CANDIDATE_ROW = 2  # pruning: one dense-row gather for one candidate
NS_PRUNED_FIXED = 80_000  # pruning's fixed overhead (planning, more numpy calls)


def _exact_all_cost(n_postings: int, n_docs: int) -> int:
    return int(NS_PER_POSTING_SCATTER * n_postings + NS_PER_DOC_PASS * n_docs) + NS_EXACT_ALL_FIXED


def _pruned_cost(sparse_df: int, n_cands: int, n_dense: int, n_docs: int) -> int:
    return (
        NS_PER_SPARSE_POSTING * sparse_df
        + NS_PER_CANDIDATE_ROW * n_cands * (n_dense + 1)
        + int(NS_PER_DOC_PASS * n_docs)
        + NS_PRUNED_FIXED
    )


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
    return np.asarray(clauses.sum(axis=0, dtype=np.float64).astype(_F32))


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
        _add_small_clauses(postings, q, total, list(others.values()))
    if eligible is not None:
        total[~eligible] = 0
    return _top_dense(total, k)


def _add_small_clauses(
    postings: Postings, q: CompiledQuery, total: np.ndarray, others: list[list[int]]
) -> None:
    """Add the small clauses (``others``: each clause's leaves, and the phrases) to ``total`` in place, over
    the docs they match only: each clause's float32 score, summed with the total in double, rounded."""
    lo, hi, docs = q.lo.tolist(), q.hi.tolist(), postings.docs
    # (docs, float32 clause scores or None when several leaves must be summed first, leaves) per clause
    small: list[tuple[np.ndarray, np.ndarray | None, list[int]]] = []
    for leaves in others:
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
