"""The hybrid index's settings, one frozen value checked once (:class:`HybridSettings`), and the per-query
score normalisations its fusion uses (:func:`normalise`). What each setting does is the hybrid's story
(:mod:`.hybrid`); every default was measured (``docs/hybrid-lab-log.md``)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from toolsearch_lab.index.diversity import DIVERSITY_BY, DiversityBy
from toolsearch_lab.index.links import PREREQUISITE_WEIGHT
from toolsearch_lab.index.operations import NEAR_MISS_GAIN
from toolsearch_lab.text.normalise import STEMMERS, Stemmer
from toolsearch_lab.text.tool_text import TEXT_MODES, TextMode

__all__ = [
    "DEFAULT_CHAR_SHARE",
    "DEFAULT_STEMMER",
    "DEFAULT_VECTOR_WEIGHT",
    "DEFAULT_VIEWS",
    "NORMALISATIONS",
    "SMALL_CATALOG",
    "SMALL_CATALOG_CONFIDENCE",
    "HybridSettings",
    "Normalisation",
    "normalise",
]

DEFAULT_VIEWS: tuple[TextMode, ...] = ("description", "full", "name")
DEFAULT_VECTOR_WEIGHT = 0.7
DEFAULT_CHAR_SHARE = 0.5
DEFAULT_STEMMER: Stemmer = "porter"
# The rule by catalog size (see HybridSettings): over at most 3 tools, never refused on the confidence alone.
# Chosen by whole runs on choice data (task success and tokens, benchmarks/abstention_runs.py): docs/index.md.
SMALL_CATALOG = 3
SMALL_CATALOG_CONFIDENCE = 0.0
Normalisation = Literal["minmax", "zscore", "rrf"]
NORMALISATIONS: tuple[Normalisation, ...] = get_args(Normalisation)


def normalise(scores: np.ndarray, method: Normalisation = "minmax") -> np.ndarray:
    """Row-wise score normalisation of a ``[n_queries, n_tools]`` matrix.

    ``minmax``: (s - min) / (max - min), a row with no spread becomes 1 where s > 0 else 0.
    ``zscore``: (s - mean) / std. ``rrf``: 1 / (60 + rank), rank 1-based (scores only order the tools).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    if method == "minmax":
        lo = scores.min(axis=1, keepdims=True)
        hi = scores.max(axis=1, keepdims=True)
        spread = hi - lo
        flat = spread <= 1e-12
        out = (scores - lo) / np.where(flat, 1.0, spread)
        return np.where(flat, (scores > 0).astype(np.float64), out)
    if method == "zscore":
        std = scores.std(axis=1, keepdims=True)
        return np.asarray((scores - scores.mean(axis=1, keepdims=True)) / np.where(std <= 1e-12, 1.0, std))
    if method == "rrf":
        ranks = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1) + 1
        return 1.0 / (60.0 + ranks)
    raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {method!r}")


@dataclass(frozen=True)
class HybridSettings:
    """How a :class:`~toolsearch_lab.index.hybrid.HybridToolIndex` fuses, cuts, abstains and re-ranks.

    Fusion: the vector side is the mean cosine over ``views`` (with ``query_clauses``, a multi-sentence
    request is also matched per sentence); the keyword side blends stemmed word BM25 (``stemmer``, stop
    words stripped with ``strip_stopwords``) and character n-grams by ``char_share``; each side is
    normalised per query (``normalisation``) and ``fused = vector_weight * vector + (1 - vector_weight) *
    keyword``. ``min_score_threshold`` keeps only fused scores at least that high (None: no cut, since fused
    scores are relative to the query). ``prerequisites`` raises the tools that look up what the best tool
    needs to ``prerequisite_weight`` of its score. ``abstain`` returns no tools below ``min_confidence``
    (None: the abstention model's default) and, with ``near_miss``, for a request whose operation no tool
    offers when swapping its verb gains more than ``near_miss_gain``; over a small catalog (at most
    ``small_catalog`` tools the request may get) the threshold is ``small_catalog_confidence`` instead, when
    that is lower: refused on strong evidence only. ``diversity`` (0: off) re-ranks by redundancy
    ``diversity_by`` category or description.
    """

    views: tuple[TextMode, ...] = DEFAULT_VIEWS
    vector_weight: float = DEFAULT_VECTOR_WEIGHT
    char_share: float = DEFAULT_CHAR_SHARE
    stemmer: Stemmer = DEFAULT_STEMMER
    normalisation: Normalisation = "minmax"
    strip_stopwords: bool = True
    query_clauses: bool = True
    min_score_threshold: float | None = None
    prerequisites: bool = True
    prerequisite_weight: float = PREREQUISITE_WEIGHT
    abstain: bool = True
    min_confidence: float | None = None
    near_miss: bool = True
    near_miss_gain: float = NEAR_MISS_GAIN
    small_catalog: int = SMALL_CATALOG
    small_catalog_confidence: float = SMALL_CATALOG_CONFIDENCE
    diversity: float = 0.0
    diversity_by: DiversityBy = "category"

    def __post_init__(self) -> None:
        views: Any = self.views
        if isinstance(views, str) or not views or any(v not in TEXT_MODES for v in views):
            raise ValueError(f"views must be a non-empty subset of {TEXT_MODES}, got {views!r}")
        object.__setattr__(self, "views", tuple(views))
        for name, low, high in (
            ("vector_weight", 0.0, 1.0),
            ("char_share", 0.0, 1.0),
            ("prerequisite_weight", 0.0, 1.0),
            ("near_miss_gain", 0.0, 2.0),
            ("diversity", 0.0, 1.0),
            ("small_catalog_confidence", 0.0, 1.0),
        ):
            _set_number(self, name, low, high)
        small: Any = self.small_catalog
        if isinstance(small, bool) or not isinstance(small, int) or small < 0:
            raise ValueError(
                f"small_catalog must be a whole number of tools >= 0 (0: no rule), got {small!r}"
            )
        if self.min_confidence is not None:
            _set_number(self, "min_confidence", 0.0, 1.0)
        if self.min_score_threshold is not None:
            _set_number(self, "min_score_threshold", -np.inf, np.inf)
        for name, allowed in (
            ("stemmer", tuple(STEMMERS)),
            ("normalisation", NORMALISATIONS),
            ("diversity_by", DIVERSITY_BY),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {list(allowed)}, got {getattr(self, name)!r}")

    @classmethod
    def of(cls, settings: HybridSettings | None, options: Mapping[str, Any]) -> HybridSettings:
        """``settings`` (default: the defaults) with ``options`` (field name -> value) replaced."""
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise TypeError(
                f"HybridToolIndex: unknown option(s) {', '.join(unknown)}; the options are the fields of "
                f"HybridSettings: {', '.join(f.name for f in dataclasses.fields(cls))}"
            )
        return dataclasses.replace(settings or cls(), **options)

    @property
    def prerequisite_lift(self) -> float:
        """The share of the best tool's score its prerequisites are raised to (0: prerequisites off)."""
        return self.prerequisite_weight if self.prerequisites else 0.0


def _set_number(settings: HybridSettings, name: str, low: float, high: float) -> None:
    """Check the number ``name`` (within [low, high], finite) and store it as a float."""
    value = getattr(settings, name)
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not real or not math.isfinite(value) or not low <= value <= high:
        bounds = "a finite number" if np.isinf(high) else f"within [{low:g}, {high:g}]"
        raise ValueError(f"{name} must be {bounds}, got {value!r}")
    object.__setattr__(settings, name, float(value))
