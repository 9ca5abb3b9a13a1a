"""Diverse re-ranking of the hybrid's final ranking (MMR-style, greedy).

A multi-step request ("pay the bill in the file, then tell my landlord") needs tools of two servers, and
a fused top 5 of near-duplicates from one server leaves the second step without its tool. The re-ranking
takes the best tool first, then repeatedly the candidate with the highest ``score - weight * redundancy``,
where redundancy is how much the candidate repeats what was already taken:

* ``by="category"``: 1 when a tool of the candidate's category (its server, where the catalog says) was
  already taken, else 0; tools without a category are never penalised, so a one-server catalog is
  unchanged;
* ``by="description"``: the highest cosine (clipped at 0) between the candidate's description vector and
  those of the tools already taken (pure MMR: needs no server information).

Tools in ``exempt`` (the hybrid's prerequisite lookups) are never penalised: they were raised precisely
because they belong next to the tool they serve, usually on its server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from toolsearch_lab.model import Tool

DiversityBy = Literal["category", "description"]
DIVERSITY_BY: tuple[DiversityBy, ...] = get_args(DiversityBy)

__all__ = ["DIVERSITY_BY", "DiversityBy", "category_codes", "diversify"]


def category_codes(tools: Sequence[Tool]) -> np.ndarray:
    """An integer per tool, equal for equal categories (case-folded); -1 for a tool without one."""
    codes: dict[str, int] = {}
    return np.array(
        [-1 if t.category is None else codes.setdefault(t.category.casefold(), len(codes)) for t in tools],
        dtype=np.int64,
    )


def diversify(
    score: np.ndarray,
    order: np.ndarray,
    weight: float,
    steps: int,
    *,
    groups: np.ndarray | None = None,
    vectors: np.ndarray | None = None,
    exempt: Sequence[int] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``steps`` tools of ``order`` (candidate columns, best first) re-ranked greedily, and the
    adjusted score each had when taken (non-increasing, since redundancy only grows). ``groups``
    (:func:`category_codes`) or ``vectors`` (unit rows, one per column of ``score``) define redundancy;
    ties go to the earlier candidate in ``order``, so weight 0 returns ``order`` itself."""
    if (groups is None) == (vectors is None):
        raise ValueError("diversify needs exactly one of groups or vectors")
    cand = np.asarray(order, dtype=np.int64)
    base = np.asarray(score, dtype=np.float64)[cand]
    redundancy = np.zeros(len(cand))
    free = np.isin(cand, np.asarray(list(exempt), dtype=np.int64))
    left = np.ones(len(cand), dtype=bool)
    picked: list[int] = []
    adjusted: list[float] = []
    for _ in range(min(steps, len(cand))):
        value = np.where(left, base - weight * np.where(free, 0.0, redundancy), -np.inf)
        k = int(np.argmax(value))
        picked.append(int(cand[k]))
        adjusted.append(float(value[k]))
        left[k] = False
        j = cand[k]
        if vectors is not None:
            sims = np.clip(vectors[cand] @ vectors[j], 0.0, 1.0).astype(np.float64)
            redundancy = np.maximum(redundancy, sims)
        elif groups is not None and groups[j] >= 0:
            redundancy = np.maximum(redundancy, (groups[cand] == groups[j]).astype(np.float64))
    return np.array(picked, dtype=np.int64), np.array(adjusted, dtype=np.float64)
