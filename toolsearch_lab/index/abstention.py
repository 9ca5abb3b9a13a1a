"""Saying "no tool matches": a calibrated confidence that some tool of the session serves a request.

Every index ranks; a ranking always has a first tool, however poor. The hybrid index's fused score cannot
say whether that tool is any good either: it is normalised per request, so the best tool scores near 1
for "book a table for two" over the GitHub catalog as much as for "merge PR 12". The raw embedding
similarities behind it do carry an absolute fit: the best similarity between the request and a tool's
description (and its full text, name, description and parameters) is low when nothing in the catalog is
about the request.

:class:`AbstentionModel` turns those raw similarities into a probability, ``sigmoid(intercept + sum
coef_i * (x_i - mean_i) / scale_i)``, fitted by logistic regression on calibration data: requests no tool
of a catalog serves (hand-written, plus requests other catalogs serve that this one cannot) against
requests it does serve, over five catalogs, each (catalog, kind) group weighing the same
(:mod:`toolsearch_lab.eval.abstention` fits it; ``benchmarks/abstention.py`` prints the curve and writes
the shipped model). An index abstains when the probability is below ``min_confidence``; the shipped
default keeps 95 % of the calibration catalogs' servable requests.

The similarities depend on the embedder, so the model records the one it was fitted with and applies
only to an index that embeds with it (:meth:`AbstentionModel.applies_to`). Like the ranker, it ships as
plain JSON (``resources/abstention/hybrid.json``), never pickle.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolsearch_lab.atomic import write_text
from toolsearch_lab.index.model_file import (
    check_linear_fields,
    check_number,
    linear_dict,
    linear_fields_from,
    read_model_json,
)

__all__ = ["EVIDENCE", "MODEL_FORMAT", "SHIPPED_MODEL", "Abstention", "AbstentionError", "AbstentionModel"]

MODEL_FORMAT = "toolsearch-lab-abstention-1"
SHIPPED_MODEL = Path(__file__).resolve().parent.parent / "resources" / "abstention" / "hybrid.json"
# Evidence name -> the embedding view whose best similarity it is (the hybrid's views, clause trick
# included: a multi-sentence request also counts its best sentence, see VectorToolIndex).
EVIDENCE = {
    "best description similarity": "description",
    "best full-text similarity": "full",
    "best name similarity": "name",
}
_MAX_DEPTH = 16


class AbstentionError(ValueError):
    """An abstention model file or its fields are malformed (the message names the field at fault)."""


@dataclass(frozen=True)
class AbstentionModel:
    """A logistic model of "some tool fits" over :data:`EVIDENCE`, with its default threshold."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    min_confidence: float  # the default threshold: abstain below it
    embedder: str  # the embedder the evidence was computed with
    info: dict[str, Any] = field(
        default_factory=dict
    )  # what it was fitted on and how the threshold was chosen

    def __post_init__(self) -> None:
        where = "abstention model"
        check_linear_fields(vars(self), EVIDENCE, where, AbstentionError)
        if not 0.0 <= check_number(self.min_confidence, "min_confidence", where, AbstentionError) <= 1.0:
            raise AbstentionError(
                f"{where}: min_confidence must be a probability in [0, 1], got {self.min_confidence}"
            )
        if not isinstance(self.embedder, str) or not self.embedder:
            raise AbstentionError(f"{where}: embedder must name the embedder it was fitted with")

    @property
    def views(self) -> tuple[str, ...]:
        """The embedding views the evidence needs."""
        return tuple(EVIDENCE[f] for f in self.features)

    def applies_to(self, embedder_name: str, views: tuple[str, ...]) -> str | None:
        """None when the model applies to an index embedding with ``embedder_name`` over ``views``; else
        why not (the reason the index then gives for not abstaining)."""
        if not embedder_name.startswith(self.embedder):
            return f"calibrated for the embedder {self.embedder}, this index embeds with {embedder_name}"
        missing = [v for v in self.views if v not in views]
        if missing:
            return f"needs the {', '.join(missing)} view(s), this index has {', '.join(views)}"
        return None

    def evidence(self, best: Mapping[str, np.ndarray]) -> np.ndarray:
        """``[n_queries, n_features]`` from each view's best similarity per query."""
        return np.stack([np.asarray(best[EVIDENCE[f]], dtype=np.float64) for f in self.features], axis=1)

    def confidence(self, x: np.ndarray) -> np.ndarray:
        """P(some tool fits) for evidence rows ``[n, n_features]``."""
        z = (np.asarray(x, dtype=np.float64) - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.coef) + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logit, -500.0, 500.0))))

    def reason(self, row: np.ndarray) -> str:
        """The evidence of one request in words: "best description similarity 0.17, best full-text ..."."""
        return ", ".join(f"{f} {v:.3f}" for f, v in zip(self.features, row, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            **linear_dict(self, MODEL_FORMAT),
            "min_confidence": self.min_confidence,
            "embedder": self.embedder,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, doc: Any, where: str = "abstention model") -> AbstentionModel:
        extra = ("min_confidence", "embedder")
        fields = linear_fields_from(doc, MODEL_FORMAT, EVIDENCE, where, AbstentionError, extra)
        try:
            return cls(**fields, min_confidence=doc["min_confidence"], embedder=doc["embedder"])
        except AbstentionError as exc:
            raise AbstentionError(str(exc).replace("abstention model", where, 1)) from None

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model as JSON, atomically."""
        write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> AbstentionModel:
        """A model from a JSON file (default: the shipped one)."""
        path = Path(path) if path is not None else SHIPPED_MODEL
        where = f"abstention model {path}"
        doc = read_model_json(path, where, AbstentionError, _MAX_DEPTH)
        return cls.from_dict(doc, where=where)


@functools.lru_cache(maxsize=1)
def _shipped() -> AbstentionModel:
    return AbstentionModel.load()


@dataclass(frozen=True)
class Abstention:
    """The abstention an index applies: the model (None: the index never abstains), why not, the confidence
    below which a search returns no tools, and the rule by catalog size: over at most ``small_catalog``
    tools (0: no such rule) the threshold is ``small_catalog_confidence`` when that is lower (0: a small
    catalog is never refused on the confidence alone)."""

    model: AbstentionModel | None
    note: str | None
    min_confidence: float | None
    small_catalog: int = 0
    small_catalog_confidence: float = 0.0

    @classmethod
    def settle(
        cls,
        source: AbstentionModel | str | os.PathLike[str] | None,
        embedder_name: str,
        views: tuple[str, ...],
        min_confidence: float | None,
        small: tuple[int, float] = (0, 0.0),
    ) -> Abstention:
        """The abstention of an index embedding with ``embedder_name`` over ``views``: ``source`` (a model,
        the path of one, or None for the shipped one) if it applies (:meth:`AbstentionModel.applies_to`),
        with ``min_confidence`` or, when None, the model's own threshold, and ``small`` = (small_catalog,
        small_catalog_confidence)."""
        if isinstance(source, AbstentionModel):
            model = source
        else:
            model = AbstentionModel.load(source) if source is not None else _shipped()
        note = model.applies_to(embedder_name, views)
        if note is not None:
            return cls(None, note, None)
        return cls(model, None, model.min_confidence if min_confidence is None else min_confidence, *small)

    @property
    def small_rule(self) -> bool:
        """Whether a small catalog gets a lower threshold than the others."""
        base = self.min_confidence
        return bool(self.small_catalog) and base is not None and self.small_catalog_confidence < base

    def threshold_for(self, tools: int) -> tuple[float | None, str]:
        """The confidence below which a search over ``tools`` tools returns none (None: it never does), and
        the catalog it applies to, in words (the trace's reason quotes it)."""
        catalog = f"a catalog of {tools} tool{'' if tools == 1 else 's'}"
        if self.min_confidence is None:
            return None, catalog
        if not self.small_rule:
            return self.min_confidence, catalog
        if 0 < tools <= self.small_catalog:
            alone = " (never refused on the confidence alone)" if self.small_catalog_confidence == 0 else ""
            return self.small_catalog_confidence, f"{catalog}, at most {self.small_catalog}{alone}"
        return self.min_confidence, f"{catalog}, over {self.small_catalog}"

    def setting(self, near_miss: bool) -> str:
        """When a search returns no tools because none fits, in words (a run's config records it)."""
        if self.min_confidence is None:
            return "off"
        small = ""
        if self.small_rule:
            floor = self.small_catalog_confidence
            below = "never on confidence alone" if floor == 0 else f"below {floor:.3f}"
            small = f" (over at most {self.small_catalog} tools: {below})"
        check = "on" if near_miss else "off"
        return f"below confidence {self.min_confidence:.3f}{small}; near-miss check {check}"
