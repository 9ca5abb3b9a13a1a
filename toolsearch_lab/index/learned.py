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
* **Model**: scikit-learn's ``LogisticRegression`` on standardised features, fitted by
  :func:`toolsearch_lab.eval.ranker_training.fit_ranker`. A linear model is shipped as plain JSON
  (feature names, means, scales, weights, intercept; :class:`RankerModel`), so loading a model never runs
  pickle, and each tool's score is a sum of readable per-feature parts (:meth:`LearnedToolIndex.explain`).
* **Score**: the model's probability that the tool is relevant, ``sigmoid(intercept + sum w_i x_i)``.

The shipped model (``resources/ranker/learned-ranker.json``) is fitted on the development datasets (BFCL
turns and tasks, LiveMCPBench, 3,000 MetaTool queries, the GitHub example requests), so its figures on
them are in-sample; ``benchmarks/learned_ranker.py`` trains on one dataset and evaluates on the others
for the honest figures, and AgentDojo is never trained on. ``toolsearch-lab train-ranker`` fits a model on
a user's own labelled queries.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolsearch_lab.atomic import write_text
from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.index.hybrid import HybridToolIndex, normalise
from toolsearch_lab.index.model_file import (
    check_linear_fields,
    linear_dict,
    linear_fields_from,
    read_model_json,
)
from toolsearch_lab.model import (
    Contribution,
    Explanation,
    SearchResponse,
    Tool,
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


_MAX_MODEL_DEPTH = 16  # the format is an object of lists; "info" may hold a little nesting


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -500.0, 500.0))))


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
        check_linear_fields(vars(self), FEATURES, "ranker model", RankerError)

    def standardised(self, x: np.ndarray) -> np.ndarray:
        """Feature rows ``[..., len(FEATURES)]`` -> this model's standardised inputs ``[..., n]``."""
        cols = [FEATURES.index(f) for f in self.features]
        return np.asarray((x[..., cols] - np.asarray(self.mean)) / np.asarray(self.scale))

    def logits(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.standardised(x) @ np.asarray(self.coef) + self.intercept)

    def scores(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(self.logits(x))

    def weights(self) -> dict[str, float]:
        """Feature -> weight per standard deviation (comparable across features), largest first."""
        pairs = sorted(zip(self.features, self.coef, strict=True), key=lambda p: -abs(p[1]))
        return dict(pairs)

    def to_dict(self) -> dict[str, Any]:
        return {**linear_dict(self, MODEL_FORMAT), "info": self.info}

    @classmethod
    def from_dict(cls, doc: Any, where: str = "ranker model") -> RankerModel:
        return cls(**linear_fields_from(doc, MODEL_FORMAT, FEATURES, where, RankerError))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as JSON, atomically: a reader never sees half a model file."""
        write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> RankerModel:
        """A model from a JSON file (default: the shipped one)."""
        path = Path(path) if path is not None else SHIPPED_MODEL
        doc = read_model_json(path, f"ranker model {path}", RankerError, _MAX_MODEL_DEPTH)
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
        tools, x, _ = self.features_and_scores(session_id, queries)
        return tools, x

    def features_and_scores(
        self, session_id: str, queries: Sequence[str]
    ) -> tuple[list[Tool], np.ndarray, Any]:
        """:meth:`features`, and the hybrid's score matrix they came from (for its abstention evidence)."""
        queries = [q or "" for q in queries]
        with self._lock:
            m = self.hybrid.score_matrix(session_id, queries)
            terms = list(self._terms.get(session_id, []))
        tools: list[Tool] = m.tools
        if not tools or len(terms) != len(tools):
            return [], np.zeros((len(queries), 0, len(FEATURES))), m
        return tools, feature_matrix(m, queries, terms), m


# ------------------------------------------------------------------------------------------- the index


class LearnedToolIndex(BaseToolIndex):
    """Tools ranked by a learned model over the hybrid's signals (see the module docstring).

    ``model``: a :class:`RankerModel`, a path to a model JSON file, or None for the shipped model.
    ``hybrid``: the :class:`HybridToolIndex` that computes the signals (default: one with its defaults
    over ``embedder``, the cached MiniLM unless given). Results: the top ``max_results`` (default 10) by
    score, optionally only those scoring at least ``min_score_threshold`` (a probability, 0-1). The hybrid's
    abstention applies (``abstain``, ``min_confidence`` and ``near_miss`` go to the default hybrid): no
    tools when it judges that none fits, and every response carries the confidence.
    """

    search_type = "LearnedToolIndex"
    min_score_threshold: float | None = None

    def __init__(
        self,
        model: RankerModel | str | os.PathLike[str] | None = None,
        *,
        embedder: Any = None,
        hybrid: HybridToolIndex | None = None,
        min_score_threshold: float | None = None,
        default_max_results: int = 10,
        abstain: bool = True,
        min_confidence: float | None = None,
        near_miss: bool = True,
    ) -> None:
        super().__init__(default_max_results)
        self.model = model if isinstance(model, RankerModel) else RankerModel.load(model)
        if hybrid is None:
            hybrid = HybridToolIndex(
                embedder=embedder, abstain=abstain, min_confidence=min_confidence, near_miss=near_miss
            )
        self.signals = RankingSignals(hybrid)
        self.min_score_threshold = None if min_score_threshold is None else float(min_score_threshold)

    @property
    def can_abstain(self) -> bool:
        """Whether a search may return no tools because the hybrid judged that none fits."""
        return self.signals.hybrid.can_abstain

    @property
    def abstention_setting(self) -> str:
        """When a search returns no tools because none fits, in words: the hybrid's setting."""
        return self.signals.hybrid.abstention_setting

    @property
    def min_confidence(self) -> float | None:
        """The hybrid's confidence threshold: no tools below it (None: the index never abstains)."""
        return self.signals.hybrid.min_confidence

    def __repr__(self) -> str:
        trained = self.model.info.get("trained_on", "?")
        return f"LearnedToolIndex(model trained on {trained}, features={len(self.model.features)})"

    def _index(self, session_id: str, tools: list[Tool]) -> None:
        if tools:
            self.signals.index_tools(session_id, tools)

    def _clear(self, session_id: str) -> None:
        self.signals.clear(session_id)

    def features(self, session_id: str, queries: Sequence[str]) -> tuple[list[Tool], np.ndarray]:
        """The session's tools and the feature rows of every query x tool, ``[n_queries, n_tools, F]``."""
        return self.signals.features(session_id, queries)

    def _search_many(self, requests: list[KeyedRequest], limits: list[int]) -> list[SearchResponse]:
        """Many searches; those of one session are scored in one batch."""
        hybrid = self.signals.hybrid

        def answer(session_id: str, members: list[int]) -> list[SearchResponse] | None:
            queries = [requests[i].query or "" for i in members]
            tools, x, m = self.signals.features_and_scores(session_id, queries)
            if not tools:
                return None
            scores = self.model.scores(x)
            out = []
            for row, (i, query) in enumerate(zip(members, queries, strict=True)):
                allowed = self.category_mask(tools, requests[i].category_filter)
                ranked = self.ranked(
                    requests[i],
                    tools,
                    scores[row],
                    limits[i],
                    min_score_threshold=self.min_score_threshold,
                    allowed=allowed,
                    confidence=hybrid.confidence_at(session_id, query, m, row, allowed),
                )
                out.append(ranked.response)
            return out

        return self.answer_by_session(requests, answer, empty_response)

    def _explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Why ``tool_name`` scored what it did: each feature's share of the logit (weight x standardised
        value), the intercept, and the logistic squash that turns the logit into the score."""
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
        rank = self.rank_of(j, scores, min_score_threshold=self.min_score_threshold)
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
