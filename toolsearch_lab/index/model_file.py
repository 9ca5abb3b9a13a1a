"""The linear models an index ships as plain JSON (the learned ranker, the abstention model): checking
their fields, writing and reading them. One place turns every way a file or a model built in code can be
wrong into the model's own error, naming the file and the field.

Both are ``sigmoid(intercept + sum coef_i * (x_i - mean_i) / scale_i)`` over named features, so both
files hold ``format``, ``features``, ``mean``, ``scale``, ``coef``, ``intercept`` and ``info``; a model
adds its own fields after these.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Protocol

from toolsearch_lab.jsonlimits import JsonLimitError, loads_checked

__all__ = [
    "LINEAR_FIELDS",
    "MAX_MAGNITUDE",
    "MIN_SCALE",
    "check_linear_fields",
    "check_number",
    "linear_dict",
    "linear_fields_from",
    "read_model_json",
]

# Bounds on a model's numbers. Features are bounded (cosines, shares, ranks, z-scores within one
# session, log word counts), so with these no logit can overflow to inf or turn into inf - inf = NaN; a
# fitted model is orders of magnitude inside them, a tampered one with 1e308 coefficients is not.
MAX_MAGNITUDE = 1e6
MIN_SCALE = 1e-12
LINEAR_FIELDS = ("features", "mean", "scale", "coef", "intercept")


class LinearModel(Protocol):
    @property
    def features(self) -> tuple[str, ...]: ...
    @property
    def mean(self) -> tuple[float, ...]: ...
    @property
    def scale(self) -> tuple[float, ...]: ...
    @property
    def coef(self) -> tuple[float, ...]: ...
    @property
    def intercept(self) -> float: ...


def check_number(value: Any, what: str, where: str, error: type[ValueError]) -> float:
    """``value`` as a float, or ``error`` naming ``what``: not a number, not finite, or out of bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{where}: {what} must be a number, got {value!r:.60}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise error(f"{where}: {what} must be finite, got {value!r:.60}")
    if abs(number) > MAX_MAGNITUDE:
        bound = f"a model's numbers must lie within +-{MAX_MAGNITUDE:g}"
        raise error(f"{where}: {what} is {value!r:.60}; {bound}")
    return number


def check_linear_fields(
    fields: Mapping[str, Any], known: Collection[str], where: str, error: type[ValueError]
) -> None:
    """The one check of a linear model's fields (:data:`LINEAR_FIELDS` and ``info``), for models built in
    code and models read from a file: features among ``known``, one number per feature, scales > 0."""
    features = fields["features"]
    if not isinstance(features, (list, tuple)) or not all(isinstance(f, str) for f in features):
        raise error(f"{where}: 'features' must be a list of feature names, got {features!r:.60}")
    if not features:
        raise error(f"{where}: 'features' is empty; a model needs at least one of {list(known)}")
    unknown = [f for f in features if f not in known]
    if unknown:
        raise error(f"{where}: unknown features {unknown}; known: {list(known)}")
    repeated = sorted({f for f in features if features.count(f) > 1})
    if repeated:
        raise error(f"{where}: features {repeated} appear more than once")
    n = len(features)
    for key in ("mean", "scale", "coef"):
        values = fields[key]
        if not isinstance(values, (list, tuple)):
            raise error(f"{where}: {key!r} must be a list of numbers, got {values!r:.60}")
        if len(values) != n:
            raise error(f"{where}: {key} has {len(values)} values, expected {n} (one per feature)")
        numbers = [check_number(v, f"{key}[{i}]", where, error) for i, v in enumerate(values)]
        if key == "scale" and any(v < MIN_SCALE for v in numbers):
            raise error(f"{where}: every scale must be >= {MIN_SCALE:g}, got {min(numbers)!r}")
    check_number(fields["intercept"], "intercept", where, error)
    info = fields.get("info", {})
    if not isinstance(info, dict):
        raise error(f"{where}: 'info' must be an object, got {type(info).__name__}")


def linear_fields_from(
    doc: Any,
    model_format: str,
    known: Collection[str],
    where: str,
    error: type[ValueError],
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A model file's object, checked (its ``format``, no field of :data:`LINEAR_FIELDS` or ``extra``
    missing, the fields as :func:`check_linear_fields`), as keyword arguments for the model's class: the
    linear fields as tuples of floats and ``info`` (``{}`` when absent); ``extra`` fields are left to the
    caller."""
    if not isinstance(doc, dict):
        raise error(f"{where}: expected a JSON object, got {type(doc).__name__}")
    if doc.get("format") != model_format:
        raise error(f"{where}: format is {doc.get('format')!r:.60}, expected {model_format!r}")
    missing = [k for k in (*LINEAR_FIELDS, *extra) if k not in doc]
    if missing:
        raise error(f"{where}: missing field {missing[0]!r}")
    info = doc.get("info")
    fields = {**{k: doc[k] for k in LINEAR_FIELDS}, "info": {} if info is None else info}
    check_linear_fields(fields, known, where, error)
    return {
        "features": tuple(fields["features"]),
        **{k: tuple(float(v) for v in fields[k]) for k in ("mean", "scale", "coef")},
        "intercept": float(fields["intercept"]),
        "info": dict(fields["info"]),
    }


def linear_dict(model: LinearModel, model_format: str) -> dict[str, Any]:
    """The JSON object of a linear model's shared fields, ``format`` first (a model appends its own)."""
    return {
        "format": model_format,
        "features": list(model.features),
        "mean": list(model.mean),
        "scale": list(model.scale),
        "coef": list(model.coef),
        "intercept": model.intercept,
    }


def read_model_json(path: Path, where: str, error: type[ValueError], max_depth: int) -> Any:
    """The parsed JSON of ``path``, or ``error`` starting with ``where``: missing, not UTF-8, unreadable,
    not JSON, or nested deeper than ``max_depth``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (at byte offset {exc.start})") from None
    except OSError as exc:
        raise error(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        return loads_checked(text, where, max_depth)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON: {exc}") from None
    except JsonLimitError as exc:
        raise error(str(exc)) from None
