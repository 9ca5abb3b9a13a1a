"""Fitting and measuring abstention ("no tool matches").

* :func:`evidence` - each view's best raw similarity per request, exactly as the hybrid index computes it
  when it searches (its own ``score_matrix``, clause trick included).
* :func:`fit_abstention` - the :class:`~toolsearch_lab.index.abstention.AbstentionModel`: a logistic
  regression over that evidence on :func:`~toolsearch_lab.eval.offcatalog.calibration_sets` (each
  (catalog, label) group weighs the same, so no catalog's size decides), and its default threshold: the
  largest at which the calibration catalogs keep ``keep`` (0.95) of their servable requests on average.
* :func:`leave_one_catalog_out` - the same fit five times, each without one catalog, scored on it.
* :func:`abstention_curve` - over thresholds: the share of off-catalog requests abstained and the
  servable requests' hit@k / recall@k when an abstained search counts as finding nothing.
* :func:`measure_abstention` - any index: off-catalog share it returns nothing for, servable figures.
* :func:`held_out_refusals` - any index, over every held-out set the lab has: the share of servable
  requests it refused next to the share of unservable ones it turned away; :func:`refusals_table` shows it.
* :func:`user_worded_refusals` - the calibration's promise (keep 95 % of servable requests) checked on
  user-worded requests nothing was fitted on: refused by the model fitted without their catalog, and by
  the shipped one.
* :func:`near_miss_gains` / :func:`choose_near_miss_gain` - the near-miss check's evidence per request
  (:mod:`toolsearch_lab.index.operations`) and its margin, chosen on calibration data.

scikit-learn is imported only to fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolsearch_lab.eval.abstention_runs import SIZE_GROUPS, size_group
from toolsearch_lab.eval.bfcl_live import load_bfcl_live, search_each
from toolsearch_lab.eval.metrics import hit_at_k, rank_queries, recall_at_k
from toolsearch_lab.eval.offcatalog import LabelledSet, catalog_tools, held_out_sets, user_worded_sets
from toolsearch_lab.eval.scenarios.format import HELD_OUT_SCENARIOS
from toolsearch_lab.index.abstention import EVIDENCE, AbstentionModel
from toolsearch_lab.index.hybrid import HybridToolIndex

__all__ = [
    "DEFAULT_FEATURES",
    "DEFAULT_KEEP",
    "CurvePoint",
    "abstention_curve",
    "evidence",
    "fit_abstention",
    "held_out_refusals",
    "leave_one_catalog_out",
    "refusals_table",
    "user_worded_refusals",
    "measure_abstention",
    "near_miss_gains",
    "choose_near_miss_gain",
]

DEFAULT_FEATURES = ("best description similarity", "best full-text similarity")
DEFAULT_KEEP = 0.95
NEAR_MISS_BUDGET = 0.01  # the servable share the near-miss check may turn away, on average per catalog
NEAR_MISS_GRID = (0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12)
SESSION = "abstention"
_CHUNK = 1024


def evidence(
    sets: Sequence[LabelledSet], hybrid: HybridToolIndex | None = None
) -> dict[str, dict[str, np.ndarray]]:
    """{set name: {view: best similarity per request}} from one hybrid index (default settings) per
    catalog; each set is scored over its catalog's tools."""
    hybrid = hybrid if hybrid is not None else HybridToolIndex(abstain=False)
    out: dict[str, dict[str, np.ndarray]] = {}
    by_catalog: dict[str, list[LabelledSet]] = {}
    for s in sets:
        by_catalog.setdefault(s.catalog, []).append(s)
    for catalog, members in by_catalog.items():
        hybrid.clear_index(SESSION)
        hybrid.index_tools(SESSION, catalog_tools(catalog))
        try:
            for s in members:
                parts: dict[str, list[np.ndarray]] = {v: [] for v in hybrid.views}
                for start in range(0, len(s.queries), _CHUNK):
                    m = hybrid.score_matrix(SESSION, list(s.queries[start : start + _CHUNK]))
                    for view, sims in m.views.items():
                        parts[view].append(sims.max(axis=1).astype(np.float64))
                out[s.name] = {v: np.concatenate(p) for v, p in parts.items()}
        finally:
            hybrid.clear_index(SESSION)
    return out


def near_miss_gains(
    sets: Sequence[LabelledSet], hybrid: HybridToolIndex | None = None
) -> dict[str, np.ndarray]:
    """{set name: per request, how much closer a verb-swapped request comes to the catalog when no tool
    named after its object offers its operation (-inf when some does, or it has no known verb)}: the
    near-miss check flags a request when this exceeds the margin."""
    hybrid = hybrid if hybrid is not None else HybridToolIndex(abstain=False)
    out: dict[str, np.ndarray] = {}
    for s in sets:
        hybrid.clear_index(SESSION)
        hybrid.index_tools(SESSION, catalog_tools(s.catalog))
        try:
            gains = np.full(len(s.queries), -np.inf)
            for start in range(0, len(s.queries), _CHUNK):
                chunk = list(s.queries[start : start + _CHUNK])
                m = hybrid.score_matrix(SESSION, chunk)
                allowed = np.ones(len(m.tools), dtype=bool)
                for i, query in enumerate(chunk):
                    found = hybrid.operation_gain(SESSION, query, m, i, allowed)
                    if found is not None:
                        gains[start + i] = found[1]
            out[s.name] = gains
        finally:
            hybrid.clear_index(SESSION)
    return out


def choose_near_miss_gain(
    sets: Sequence[LabelledSet],
    gains: dict[str, np.ndarray],
    grid: Sequence[float] = NEAR_MISS_GRID,
    budget: float = NEAR_MISS_BUDGET,
) -> tuple[float, list[dict[str, Any]]]:
    """The margin of ``grid`` that flags the most off-catalog requests (mean over catalogs) while the
    servable ones flagged stay within ``budget`` on average per catalog; and a row per margin."""
    rows = []
    for g in grid:
        off = [float(np.mean(gains[s.name] > g)) for s in sets if s.label == 0]
        on = [float(np.mean(gains[s.name] > g)) for s in sets if s.label == 1]
        rows.append(
            {"gain": g, "off-catalog flagged": float(np.mean(off)), "servable flagged": float(np.mean(on))}
        )
    within = [r for r in rows if r["servable flagged"] <= budget]
    if not within:
        raise ValueError(
            f"choose_near_miss_gain: no margin of {tuple(grid)} keeps within the budget {budget}"
        )
    best = max(within, key=lambda r: (r["off-catalog flagged"], -r["gain"]))
    return float(best["gain"]), rows


def _rows(
    sets: Sequence[LabelledSet], ev: dict[str, dict[str, np.ndarray]], features: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evidence rows, labels and weights: each (catalog, label) group sums to 1, its sets share it."""
    groups: dict[tuple[str, int], list[LabelledSet]] = {}
    for s in sets:
        groups.setdefault((s.catalog, s.label), []).append(s)
    xs, ys, ws = [], [], []
    for members in groups.values():
        for s in members:
            x = np.stack([ev[s.name][EVIDENCE[f]] for f in features], axis=1)
            xs.append(x)
            ys.append(np.full(len(x), s.label))
            ws.append(np.full(len(x), 1.0 / len(x) / len(members)))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws)


def _threshold(model: AbstentionModel, sets: Sequence[LabelledSet], ev: dict, keep: float) -> float:
    """The largest threshold at which the servable sets keep ``keep`` of their requests on average."""
    servable = [model.confidence(model.evidence(ev[s.name])) for s in sets if s.label == 1]
    if not servable:
        raise ValueError("fit_abstention: no servable set to choose the threshold on")
    best = 0.0
    for t in np.unique(np.concatenate(servable)):
        if np.mean([np.mean(p >= t) for p in servable]) >= keep:
            best = float(t)
    return round(best, 4)


def fit_abstention(
    sets: Sequence[LabelledSet],
    ev: dict[str, dict[str, np.ndarray]],
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    keep: float = DEFAULT_KEEP,
    embedder: str,
    info: dict[str, Any] | None = None,
) -> AbstentionModel:
    """The model fitted on ``sets`` (with their :func:`evidence`), its threshold keeping ``keep``."""
    from sklearn.linear_model import LogisticRegression  # scikit-learn costs a second to import

    if not sets or {s.label for s in sets} != {0, 1}:
        raise ValueError("fit_abstention: needs off-catalog (label 0) and servable (label 1) sets")
    x, y, w = _rows(sets, ev, features)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    clf = LogisticRegression(C=1.0, max_iter=5000).fit(
        (x - mean) / scale, y, sample_weight=w * len(w) / w.sum()
    )
    draft = AbstentionModel(
        tuple(features),
        tuple(round(float(v), 6) for v in mean),
        tuple(round(float(v), 6) for v in scale),
        tuple(round(float(v), 6) for v in clf.coef_[0]),
        round(float(clf.intercept_[0]), 6),
        0.0,
        embedder,
    )
    counts = {s.name: len(s.queries) for s in sets}
    meta = {"keep": keep, "sets": counts, **(info or {})}
    threshold = _threshold(draft, sets, ev, keep)
    return AbstentionModel(
        draft.features, draft.mean, draft.scale, draft.coef, draft.intercept, threshold, embedder, meta
    )


def leave_one_catalog_out(
    sets: Sequence[LabelledSet],
    ev: dict,
    *,
    features: Sequence[str] = DEFAULT_FEATURES,
    keep: float = DEFAULT_KEEP,
    judged: Sequence[LabelledSet] = (),
) -> list[dict[str, Any]]:
    """Per catalog (source): the model fitted without it, scored on its calibration sets (AUC, share
    abstained, share kept) and on the sets of ``judged`` over it (``"refused"``: per set name, the share
    of its requests below the threshold; for user-worded servable requests, which nothing was fitted on)."""
    from sklearn.metrics import roc_auc_score

    rows = []
    for catalog in dict.fromkeys(s.catalog for s in sets):
        train = [s for s in sets if s.catalog != catalog]
        held = [s for s in sets if s.catalog == catalog]
        if {s.label for s in held} != {0, 1} or {s.label for s in train} != {0, 1}:
            continue
        model = fit_abstention(train, ev, features=features, keep=keep, embedder="-")
        off = np.concatenate([model.confidence(model.evidence(ev[s.name])) for s in held if s.label == 0])
        on = np.concatenate([model.confidence(model.evidence(ev[s.name])) for s in held if s.label == 1])
        auc = roc_auc_score(np.r_[np.zeros(len(off)), np.ones(len(on))], np.r_[off, on])
        t = model.min_confidence
        refused = {
            s.name: float(np.mean(model.confidence(model.evidence(ev[s.name])) < t))
            for s in judged
            if s.catalog == catalog
        }
        rows.append({"catalog": catalog, "auc": float(auc), "abstained": float(np.mean(off < t)),
                     "kept": float(np.mean(on >= t)), "threshold": t, "refused": refused})  # fmt: skip
    return rows


@dataclass(frozen=True)
class CurvePoint:
    """At ``threshold``: the share of each off-catalog set abstained, and each servable set's hit@k and
    recall@k when an abstained search finds nothing (``answered``: the share not abstained)."""

    threshold: float
    abstained: dict[str, float]
    hit: dict[str, float]
    recall: dict[str, float]
    answered: dict[str, float]


def abstention_curve(
    confidence: dict[str, np.ndarray],
    off: Sequence[str],
    servable: dict[str, tuple[list[list[str]], Sequence[Sequence[str]]]],
    thresholds: Sequence[float],
    k: int = 5,
    near_miss: dict[str, np.ndarray] | None = None,
) -> list[CurvePoint]:
    """``confidence``: per set name, the confidence of each request; ``servable``: per servable set, the
    index's rankings and the relevant tools; ``near_miss``: per set name, the requests the near-miss
    check flags (they abstain at any threshold)."""

    def flagged(name: str) -> np.ndarray:
        return near_miss[name] if near_miss is not None else np.zeros(len(confidence[name]), dtype=bool)

    points = []
    for t in thresholds:
        abstained = {name: float(np.mean((confidence[name] < t) | flagged(name))) for name in off}
        hit, recall, answered = {}, {}, {}
        for name, (rankings, relevant) in servable.items():
            kept = (confidence[name] >= t) & ~flagged(name)
            shown = [r if a else [] for r, a in zip(rankings, kept, strict=True)]  # abstained: nothing
            hit[name] = float(np.mean([hit_at_k(r, rel, k) for r, rel in zip(shown, relevant, strict=True)]))
            recall[name] = float(
                np.mean([recall_at_k(r, rel, k) for r, rel in zip(shown, relevant, strict=True)])
            )
            answered[name] = float(np.mean(kept))
        points.append(CurvePoint(float(t), abstained, hit, recall, answered))
    return points


def measure_abstention(index: Any, sets: Sequence[LabelledSet], k: int = 5) -> dict[str, dict[str, float]]:
    """Any index, as it searches (its own threshold, abstention and all): per off-catalog set the share of
    requests it returns no tools for, per servable set hit@k and recall@k and the share answered."""
    out: dict[str, dict[str, float]] = {}
    for s in sets:
        index.clear_index(SESSION)
        index.index_tools(SESSION, catalog_tools(s.catalog))
        try:
            ranked = [names for names, _ in rank_queries(index, SESSION, list(s.queries), max(k, 10))]
        finally:
            index.clear_index(SESSION)
        if s.label == 0:
            out[s.name] = {"abstained": float(np.mean([not r for r in ranked]))}
        else:
            pairs = list(zip(ranked, s.relevant, strict=True))
            out[s.name] = {
                f"hit@{k}": float(np.mean([hit_at_k(r, rel, k) for r, rel in pairs])),
                f"recall@{k}": float(np.mean([recall_at_k(r, rel, k) for r, rel in pairs])),
                "answered": float(np.mean([bool(r) for r, _ in pairs])),
            }
    return out


def held_out_refusals(index: Any) -> list[dict[str, Any]]:
    """``index`` as it searches, over every held-out set: per set (BFCL live's held-out half also by catalog
    size) its requests, the share of the servable ones it returned no tools for (``"refused"``) and the
    share of the unservable ones (``"turned away"``); None where a set has none of that kind."""
    rows = []
    sets = held_out_sets() + user_worded_sets(HELD_OUT_SCENARIOS, "blind user-worded")
    for s in sets:
        found = measure_abstention(index, [s])[s.name]
        rows.append({"set": s.name, "servable": len(s.queries) if s.label else 0,
                     "refused": 1.0 - found["answered"] if s.label else None,
                     "unservable": 0 if s.label else len(s.queries),
                     "turned away": None if s.label else found["abstained"]})  # fmt: skip
    live = load_bfcl_live("held-out")
    given = search_each(index, live)
    for group in (*SIZE_GROUPS[:3], "all"):
        pairs = [
            (r, g) for r, g in zip(live, given, strict=True) if group in ("all", size_group(len(r.tools)))
        ]
        on = [g.abstained for r, g in pairs if r.servable]
        off = [g.abstained for r, g in pairs if not r.servable]
        rows.append({"set": f"BFCL live held out, {group}", "servable": len(on),
                     "refused": float(np.mean(on)), "unservable": len(off),
                     "turned away": float(np.mean(off))})  # fmt: skip
    return rows


def refusals_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    """:func:`held_out_refusals`' rows as a Markdown table (docs/index.md shows it)."""

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = ["| held-out set | servable | refused | unservable | turned away |", "|---|---|---|---|---|"]
    for r in rows:
        cells = [
            r["set"],
            str(r["servable"]),
            share(r["refused"]),
            str(r["unservable"]),
            share(r["turned away"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def user_worded_refusals(
    calibration: Sequence[LabelledSet], ev: dict[str, dict[str, np.ndarray]], model: AbstentionModel
) -> list[dict[str, Any]]:
    """Per user-worded set over a calibration catalog (:func:`~.offcatalog.user_worded_sets`): its requests,
    the share the confidence alone refuses when the model is fitted without that catalog
    (:func:`leave_one_catalog_out`) and when it is ``model``. ``ev`` holds the calibration sets' evidence;
    the user-worded sets' is added to it."""
    user = user_worded_sets()
    ev.update(evidence(user))
    shipped = confidences(model, {s.name: ev[s.name] for s in user})
    sizes = {s.name: len(s.queries) for s in user}
    return [
        {
            "set": name,
            "requests": sizes[name],
            "left out": refused,
            "shipped": float(np.mean(shipped[name] < model.min_confidence)),
        }  # fmt: skip
        for row in leave_one_catalog_out(calibration, ev, judged=user)
        for name, refused in row["refused"].items()
    ]


def confidences(model: AbstentionModel, ev: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The model's confidence for every request of every set in ``ev``."""
    return {name: model.confidence(model.evidence(views)) for name, views in ev.items()}
