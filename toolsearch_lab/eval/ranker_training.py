"""Fitting the learned index's ranker (:mod:`toolsearch_lab.index.learned`) on labelled queries.

Every query-tool pair of a catalog becomes a row of the index's features (:class:`RankingSignals`). A
logistic regression on (relevant - irrelevant) feature differences learns the ranking (RankNet's loss with a
linear scorer); Platt scaling on single rows then turns the score into a probability without changing the
order. The result is a :class:`RankerModel`, saved as plain JSON: ``toolsearch-lab train-ranker`` fits one
on a user's own labelled queries, and ``benchmarks/learned_ranker.py`` trains on one dataset and evaluates
on the other. scikit-learn is imported only when a model is fitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolsearch_lab.index.learned import FEATURES, RankerError, RankerModel, RankingSignals
from toolsearch_lab.model import Tool

LabelledQuery = tuple[str, Sequence[str]]  # (query, names of the relevant tools)

# What the shipped model and ``fit_ranker`` use by default: every feature but these absolute ones. Raw
# cosines and description lengths shift with catalog size and query style, and models using them
# transferred worse between the two datasets (benchmarks/learned_ranker.py --all-features).
_ABSOLUTE = ("cosine description", "cosine full text", "cosine name", "description length (log words)")
DEFAULT_FEATURES = tuple(f for f in FEATURES if f not in _ABSOLUTE)


@dataclass
class TrainingData:
    """Pairs (relevant tool minus irrelevant tool, per query) for the ranking fit, and single rows with
    0/1 labels for the calibration of its scores into probabilities."""

    pairs: np.ndarray  # [n_pairs, len(FEATURES)]
    pair_weights: np.ndarray  # each query's pairs sum to 1, so every query counts the same
    rows: np.ndarray  # [n_rows, len(FEATURES)]
    labels: np.ndarray  # [n_rows] 0/1
    queries: int = 0


def pairs_from_features(
    x: np.ndarray,
    names: Sequence[str],
    relevant: Sequence[Sequence[str]],
    *,
    negatives: int = 100,
    rng: np.random.Generator | None = None,
) -> TrainingData:
    """Training data from feature rows ``x`` ``[n_queries, n_tools, F]`` of tools ``names``: each query's
    relevant tools paired with up to ``negatives`` random irrelevant ones. Queries none of whose relevant
    tools is among ``names`` are skipped."""
    rng = rng if rng is not None else np.random.default_rng(0)
    name_array = np.asarray(names)
    pairs, weights, rows, labels = [], [], [], []
    for i, wanted in enumerate(relevant):
        positive = np.flatnonzero(np.isin(name_array, list(wanted)))
        negative = np.setdiff1d(np.arange(len(name_array)), positive)
        if not len(positive) or not len(negative):
            continue
        negative = rng.choice(negative, size=min(negatives, len(negative)), replace=False)
        diff = (x[i, positive][:, None, :] - x[i, negative][None, :, :]).reshape(-1, x.shape[2])
        pairs.append(diff)
        weights.append(np.full(len(diff), 1.0 / len(diff)))
        rows.append(x[i, np.concatenate([positive, negative])])
        labels.append(np.r_[np.ones(len(positive)), np.zeros(len(negative))])
    if not pairs:
        return TrainingData(np.zeros((0, x.shape[2])), np.zeros(0), np.zeros((0, x.shape[2])), np.zeros(0), 0)
    return TrainingData(
        np.concatenate(pairs),
        np.concatenate(weights),
        np.concatenate(rows),
        np.concatenate(labels),
        len(pairs),
    )


def training_data(
    signals: RankingSignals,
    session_id: str,
    queries: Sequence[LabelledQuery],
    *,
    negatives: int = 100,
    seed: int = 0,
    chunk: int = 1024,
) -> TrainingData:
    """:func:`pairs_from_features` over a session's tools, scoring ``chunk`` queries at a time (memory)."""
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, len(queries), chunk):
        part = queries[start : start + chunk]
        tools, x = signals.features(session_id, [q for q, _ in part])
        names = [t.name for t in tools]
        parts.append(pairs_from_features(x, names, [r for _, r in part], negatives=negatives, rng=rng))
    return combine(parts)


def combine(parts: Sequence[TrainingData], *, per_part: bool = False) -> TrainingData:
    """One training set from several; ``per_part=True`` rescales weights so each part counts the same
    (catalogs of very different query counts)."""
    used = [p for p in parts if p.queries]
    if not used:
        raise RankerError("training data: no query has a relevant tool that is in its catalog")
    weights = [p.pair_weights / p.queries if per_part else p.pair_weights for p in used]
    return TrainingData(
        np.concatenate([p.pairs for p in used]),
        np.concatenate(weights),
        np.concatenate([p.rows for p in used]),
        np.concatenate([p.labels for p in used]),
        sum(p.queries for p in used),
    )


def _fit_pairs(data: TrainingData, cols: list[int], c: float) -> np.ndarray:
    """Weights per raw feature unit from a logistic regression on pair differences (RankNet's loss with a
    linear scorer): P(relevant ranks above irrelevant) = sigmoid(w . (x_rel - x_irr))."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn costs a second to import

    d = data.pairs[:, cols]
    sd = d.std(axis=0)
    sd[sd < 1e-9] = 1.0
    x = np.concatenate([d / sd, -d / sd])  # both orders, so the classes balance and no intercept is needed
    y = np.r_[np.ones(len(d)), np.zeros(len(d))]
    w = np.r_[data.pair_weights, data.pair_weights]
    clf = LogisticRegression(C=c, max_iter=3000, fit_intercept=False)
    clf.fit(x, y, sample_weight=w * len(w) / w.sum())
    return np.asarray(clf.coef_[0]) / sd


def _calibrate(score: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(a, b) so that sigmoid(a * score + b) is the probability of relevance (Platt scaling, a > 0)."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn costs a second to import

    clf = LogisticRegression(C=1e6, max_iter=1000).fit(score[:, None], labels)
    a = float(clf.coef_[0][0])
    if a <= 0:
        raise RankerError("fit_ranker: the fitted scores do not separate relevant from irrelevant tools")
    return a, float(clf.intercept_[0])


def fit_ranker(
    catalogs: Sequence[tuple[Sequence[Tool], Sequence[LabelledQuery]]],
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    embedder: Any = None,
    c: float = 0.01,
    negatives: int = 100,
    seed: int = 0,
    info: dict[str, Any] | None = None,
) -> RankerModel:
    """Fit a linear ranker on labelled queries over one or more catalogs (each catalog weighs the same).

    A logistic regression on (relevant - irrelevant) feature differences learns the ranking; Platt scaling
    on single rows then turns the score into a probability without changing the order. ``c``:
    scikit-learn's inverse regularisation strength (small: weights stay modest, which transferred better
    between datasets)."""
    unknown = [f for f in features if f not in FEATURES]
    if unknown or not features:
        raise RankerError(f"fit_ranker: unknown or no features {unknown}; known: {list(FEATURES)}")
    if not catalogs:
        raise RankerError("fit_ranker: no catalogs to learn from")
    signals = RankingSignals(embedder=embedder)
    parts = []
    for n, (tools, queries) in enumerate(catalogs):
        signals.index_tools(f"training-{n}", list(tools))
        parts.append(training_data(signals, f"training-{n}", queries, negatives=negatives, seed=seed))
        signals.clear(f"training-{n}")
    return fit_model(
        combine(parts, per_part=True), features=features, c=c, info={"negatives": negatives, **(info or {})}
    )


def fit_model(
    data: TrainingData,
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    c: float = 0.01,
    info: dict | None = None,
) -> RankerModel:
    """The ranker fitted on prepared :class:`TrainingData` (see :func:`fit_ranker`)."""
    cols = [FEATURES.index(f) for f in features]
    w = _fit_pairs(data, cols, c)
    a, b = _calibrate(data.rows[:, cols] @ w, data.labels)
    mean, scale = data.rows[:, cols].mean(axis=0), data.rows[:, cols].std(axis=0)
    scale[scale < 1e-9] = 1.0
    coef = a * w * scale  # per standard deviation of each feature
    intercept = b + a * float(w @ mean)
    meta = {"queries": data.queries, "pairs": int(len(data.pairs)), "c": c, **(info or {})}
    return RankerModel(
        tuple(features), tuple(mean.tolist()), tuple(scale.tolist()), tuple(coef.tolist()), intercept, meta
    )
