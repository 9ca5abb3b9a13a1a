"""LearnedToolIndex: learning to rank. The hybrid's signals, fused by a model fitted on labelled queries.

The hybrid index (:mod:`.hybrid`) fuses keyword and embedding scores with weights tuned by hand. Search
engines instead *learn* the fusion: every query-tool pair becomes a row of features, a classifier learns
which rows are relevant from labelled queries, and its score ranks the tools. Here:

* **Features** (:data:`FEATURES`) come from what the other indexes already compute over one session:
  the cosine of each embedding view (description, full text, name) and the mean cosine's z-score, min-max
  value and reciprocal rank among the session's tools; the same three for BM25 over stemmed words and for
  character n-gram TF-IDF; whether any word matched; the hand-tuned hybrid score itself; the share of the
  tool's name words and of its parameter-name words that appear in the query; and the description's
  length. Per-query normalised features (z-score, min-max, rank) are what let a model trained on one
  catalog transfer to another: raw BM25 and cosine values depend on catalog size and query length.
* **Model**: scikit-learn's ``LogisticRegression`` on standardised features (:func:`fit_ranker`). A linear
  model is shipped as plain JSON (feature names, means, scales, weights, intercept; :class:`RankerModel`),
  so loading a model never runs pickle, and each tool's score is a sum of readable per-feature parts
  (:meth:`LearnedToolIndex.explain`).
* **Score**: the model's probability that the tool is relevant, ``sigmoid(intercept + sum w_i x_i)``.

The shipped model (``resources/ranker/learned-ranker.json``) is fitted on both shipped datasets, so its
figures on them are in-sample; ``benchmarks/learned_ranker.py`` trains on one dataset and evaluates on the
other (and leave-one-server-out within LiveMCPBench) for the honest figures. ``toolsearch-lab
train-ranker`` fits a model on a user's own labelled queries.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolsearch_lab.index.hybrid import HybridToolIndex, normalise
from toolsearch_lab.model import (
    BaseToolIndex,
    Contribution,
    Explanation,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)
from toolsearch_lab.text.normalise import keyword_tokens, stem_tokens
from toolsearch_lab.text.stopwords import ENGLISH_STOP_WORDS

MODEL_FORMAT = "toolsearch-lab-ranker-1"
SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "resources" / "ranker" / "learned-ranker.json"

FEATURES = (
    "cosine description",
    "cosine full text",
    "cosine name",
    "cosine z-score",
    "cosine min-max",
    "cosine 1/rank",
    "bm25 z-score",
    "bm25 min-max",
    "bm25 1/rank",
    "any word matched",
    "char n-gram z-score",
    "char n-gram min-max",
    "char n-gram 1/rank",
    "hybrid score",
    "name words in query",
    "parameter words in query",
    "description length (log words)",
)


class RankerError(ValueError):
    """A ranker model file or training input is malformed (the message names the field at fault)."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -500.0, 500.0)))


@dataclass(frozen=True)
class RankerModel:
    """A linear ranker: ``logit = intercept + sum(coef_i * (x_i - mean_i) / scale_i)``; score = sigmoid."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    info: dict[str, Any] = field(default_factory=dict)  # what it was trained on, with which settings

    def __post_init__(self) -> None:
        n = len(self.features)
        for name in ("mean", "scale", "coef"):
            if len(getattr(self, name)) != n:
                raise RankerError(f"ranker model: {name} has {len(getattr(self, name))} values, expected {n}")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise RankerError(f"ranker model: unknown features {unknown}; known: {list(FEATURES)}")
        values = (*self.mean, *self.scale, *self.coef, self.intercept)
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
            raise RankerError("ranker model: mean, scale, coef and intercept must be finite numbers")
        if any(s <= 0 for s in self.scale):
            raise RankerError("ranker model: every scale must be > 0")

    def standardised(self, x: np.ndarray) -> np.ndarray:
        """Feature rows ``[..., len(FEATURES)]`` -> this model's standardised inputs ``[..., n]``."""
        cols = [FEATURES.index(f) for f in self.features]
        return (x[..., cols] - np.asarray(self.mean)) / np.asarray(self.scale)

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self.standardised(x) @ np.asarray(self.coef) + self.intercept

    def scores(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(self.logits(x))

    def weights(self) -> dict[str, float]:
        """Feature -> weight per standard deviation (comparable across features), largest first."""
        pairs = sorted(zip(self.features, self.coef, strict=True), key=lambda p: -abs(p[1]))
        return dict(pairs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, doc: Any, where: str = "ranker model") -> RankerModel:
        if not isinstance(doc, dict):
            raise RankerError(f"{where}: expected a JSON object, got {type(doc).__name__}")
        if doc.get("format") != MODEL_FORMAT:
            raise RankerError(f"{where}: format is {doc.get('format')!r}, expected {MODEL_FORMAT!r}")
        missing = [k for k in ("features", "mean", "scale", "coef", "intercept") if k not in doc]
        if missing:
            raise RankerError(f"{where}: missing field {missing[0]!r}")

        def numbers(key: str) -> tuple[float, ...]:
            value = doc[key]
            if not isinstance(value, list) or not all(isinstance(v, (int, float)) for v in value):
                raise RankerError(f"{where}: {key!r} must be a list of numbers, got {value!r:.60}")
            return tuple(float(v) for v in value)

        if not isinstance(doc["features"], list) or not all(isinstance(f, str) for f in doc["features"]):
            raise RankerError(f"{where}: 'features' must be a list of feature names")
        if not isinstance(doc["intercept"], (int, float)):
            raise RankerError(f"{where}: 'intercept' must be a number, got {doc['intercept']!r:.60}")
        return cls(
            tuple(doc["features"]),
            numbers("mean"),
            numbers("scale"),
            numbers("coef"),
            float(doc["intercept"]),
            dict(doc.get("info") or {}),
        )

    def save(self, path: str | os.PathLike) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> RankerModel:
        """A model from a JSON file (default: the shipped one)."""
        path = Path(path) if path is not None else SHIPPED_MODEL
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RankerError(f"ranker model {path}: no such file") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RankerError(f"ranker model {path}: not valid JSON: {exc}") from None
        return cls.from_dict(doc, where=f"ranker model {path}")


# ------------------------------------------------------------------------------------------- features

_STOP = ENGLISH_STOP_WORDS


def _terms(text: str) -> set[str]:
    return set(stem_tokens(keyword_tokens(text, _STOP), "porter"))


@dataclass(frozen=True)
class _ToolTerms:
    name: frozenset[str]
    params: frozenset[str]
    length: float


def _tool_terms(tool: Tool) -> _ToolTerms:
    props = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
    params: set[str] = set()
    for pname in props if isinstance(props, dict) else ():
        params |= _terms(str(pname))
    return _ToolTerms(
        frozenset(_terms(tool.name)), frozenset(params), math.log1p(len(tool.description.split()))
    )


def _reciprocal_rank(scores: np.ndarray) -> np.ndarray:
    ranks = np.empty_like(scores)
    order = np.argsort(-scores, axis=1, kind="stable")
    np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1, dtype=np.float64)[None, :], axis=1)
    return 1.0 / ranks


def _overlap(query_terms: list[set[str]], tool_sets: list[frozenset[str]]) -> np.ndarray:
    out = np.zeros((len(query_terms), len(tool_sets)))
    for j, terms in enumerate(tool_sets):
        if terms:
            out[:, j] = [len(terms & q) / len(terms) for q in query_terms]
    return out


def feature_matrix(m: Any, queries: Sequence[str], terms: Sequence[_ToolTerms]) -> np.ndarray:
    """``[n_queries, n_tools, len(FEATURES)]`` from a hybrid :meth:`~.HybridToolIndex.score_matrix`."""
    views = m.views
    first = next(iter(views.values()))
    vector, keyword, chars = m.vector, m.keyword, m.char
    query_terms = [_terms(q) for q in queries]
    columns = [
        views.get("description", first),
        views.get("full", first),
        views.get("name", first),
        normalise(vector, "zscore"),
        m.vector_normalised,
        _reciprocal_rank(vector),
        normalise(keyword, "zscore"),
        normalise(keyword, "minmax"),
        np.where(keyword > 0, _reciprocal_rank(keyword), 0.0),
        (keyword > 0).astype(np.float64),
        normalise(chars, "zscore"),
        normalise(chars, "minmax"),
        np.where(chars > 0, _reciprocal_rank(chars), 0.0),
        m.fused,
        _overlap(query_terms, [t.name for t in terms]),
        _overlap(query_terms, [t.params for t in terms]),
        np.broadcast_to(np.array([t.length for t in terms]), vector.shape),
    ]
    return np.stack([np.asarray(c, dtype=np.float64) for c in columns], axis=-1)


# ------------------------------------------------------------------------------------------- signals


class RankingSignals:
    """The features of one index's sessions: a :class:`HybridToolIndex` for the scores, plus each tool's
    name and parameter words and description length."""

    def __init__(self, hybrid: HybridToolIndex | None = None, *, embedder: Any = None) -> None:
        self.hybrid = hybrid if hybrid is not None else HybridToolIndex(embedder=embedder)
        self._terms: dict[str, list[_ToolTerms]] = {}
        self._lock = threading.RLock()

    def index_tools(self, session_id: str, tools: list[Tool]) -> None:
        terms = [_tool_terms(t) for t in tools]
        with self._lock:  # one lock keeps the hybrid's rows and ours in the same order
            self.hybrid.index_tools(session_id, tools)
            self._terms.setdefault(session_id, []).extend(terms)

    def clear(self, session_id: str) -> None:
        with self._lock:
            self.hybrid.clear_index(session_id)
            self._terms.pop(session_id, None)

    def features(self, session_id: str, queries: Sequence[str]) -> tuple[list[Tool], np.ndarray]:
        """The session's tools and the feature rows of every query x tool, ``[n_queries, n_tools, F]``."""
        queries = [q or "" for q in queries]
        with self._lock:
            m = self.hybrid.score_matrix(session_id, queries)
            terms = list(self._terms.get(session_id, []))
        tools: list[Tool] = m.tools
        if not tools or len(terms) != len(tools):
            return [], np.zeros((len(queries), 0, len(FEATURES)))
        return tools, feature_matrix(m, queries, terms)


# ------------------------------------------------------------------------------------------- training

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


# ------------------------------------------------------------------------------------------- the index


class LearnedToolIndex(BaseToolIndex):
    """Tools ranked by a learned model over the hybrid's signals (see the module docstring).

    ``model``: a :class:`RankerModel`, a path to a model JSON file, or None for the shipped model.
    ``hybrid``: the :class:`HybridToolIndex` that computes the signals (default: one with its defaults
    over ``embedder``, the cached MiniLM unless given). Results: the top ``max_results`` (default 10) by
    score, optionally only those scoring at least ``min_score`` (a probability, 0-1).
    """

    search_type = "LearnedToolIndex"

    def __init__(
        self,
        model: RankerModel | str | os.PathLike | None = None,
        *,
        embedder: Any = None,
        hybrid: HybridToolIndex | None = None,
        min_score: float | None = None,
        default_max_results: int = 10,
    ) -> None:
        super().__init__(default_max_results)
        self.model = model if isinstance(model, RankerModel) else RankerModel.load(model)
        self.signals = RankingSignals(hybrid, embedder=embedder)
        self.min_score = None if min_score is None else float(min_score)

    def __repr__(self) -> str:
        trained = self.model.info.get("trained_on", "?")
        return f"LearnedToolIndex(model trained on {trained}, features={len(self.model.features)})"

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        tools = self.checked_batch(session_id, tools)
        if tools:
            self.signals.index_tools(session_id, tools)

    def clear_index(self, session_id: str) -> None:
        self.signals.clear(session_id)

    def features(self, session_id: str, queries: Sequence[str]) -> tuple[list[Tool], np.ndarray]:
        """The session's tools and the feature rows of every query x tool, ``[n_queries, n_tools, F]``."""
        return self.signals.features(session_id, queries)

    def search(self, request: SearchRequest) -> SearchResponse:
        return self.search_many([request])[0]

    def search_many(self, requests: Sequence[SearchRequest]) -> list[SearchResponse]:
        """``search`` for many requests; requests of one session are scored in one batch."""
        requests = [self.check_request(r) for r in requests]
        out: list[SearchResponse | None] = [None] * len(requests)
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(requests):
            if isinstance(r.session_id, str) and r.session_id.strip():
                groups.setdefault(r.session_id, []).append(i)
            else:
                out[i] = empty_response()
        for session_id, members in groups.items():
            tools, x = self.features(session_id, [requests[i].query or "" for i in members])
            scores = self.model.scores(x) if tools else None
            for row, i in enumerate(members):
                out[i] = self._respond(requests[i], tools, None if scores is None else scores[row])
        return [r if r is not None else empty_response() for r in out]

    def _respond(
        self, request: SearchRequest, tools: list[Tool], scores: np.ndarray | None
    ) -> SearchResponse:
        if scores is None or not tools:
            return empty_response()
        allowed = np.array([self.category_allows(t, request.category_filter) for t in tools], dtype=bool)
        if self.min_score is not None:
            allowed &= scores >= self.min_score
        keep = np.flatnonzero(allowed)
        ranked = keep[np.argsort(-scores[keep], kind="stable")][: self.limit(request)]
        refs = [ToolReference(tools[j].name, float(scores[j]), tools[j].description) for j in ranked]
        return SearchResponse(refs, len(refs), SearchMetadata(self.search_type, request.query, None))

    def explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Why ``tool_name`` scored what it did: each feature's share of the logit (weight x standardised
        value), the intercept, and the logistic squash that turns the logit into the score."""
        self.check_explain_args(session_id, query, tool_name)
        tools, x = self.features(session_id, [query])
        positions = self.positions_of(tools, session_id, tool_name)  # NotIndexedError when absent
        scores = self.model.scores(x[0])
        j = max(positions, key=lambda p: scores[p])  # a duplicated name: the copy search would show first
        z = self.model.standardised(x[0, j])
        logit = float(self.model.logits(x[0, j]))
        parts = [Contribution("intercept", self.model.intercept)]
        raw_values = [x[0, j, FEATURES.index(f)] for f in self.model.features]
        for name, w, zi, raw in zip(self.model.features, self.model.coef, z, raw_values, strict=True):
            parts.append(Contribution(name, float(w * zi), f"value {raw:.4g}, weight {w:+.3f} per sd"))
        score = float(scores[j])
        parts.append(Contribution("logistic squash", score - logit, f"sigmoid({logit:.4g}) = {score:.4g}"))
        response = self._respond(SearchRequest(session_id, query, max(len(tools), 1)), tools, scores)
        names = response.tool_names  # the whole ranking: the rank counts even beyond default_max_results
        rank = names.index(tool_name) + 1 if tool_name in names else None
        details = {"logit": logit, "features": dict(zip(FEATURES, x[0, j].tolist(), strict=True))}
        return Explanation(
            self.search_type,
            tool_name,
            query,
            score,
            tuple(parts),
            rank is not None and rank <= self.default_max_results,
            rank,
            details,
        )
