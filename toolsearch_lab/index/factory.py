"""``make_index(kind, **options)``: build any of the four index kinds by name (CLI, notebooks, benchmarks)."""

from __future__ import annotations

from typing import Any

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.index.learned import LearnedToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.index.vector import VectorToolIndex
from toolsearch_lab.model import BaseToolIndex

INDEX_CLASSES: dict[str, type[BaseToolIndex]] = {
    "regex": RegexToolIndex,  # Spring's keyword-pattern index
    "lucene": BM25ToolIndex,  # Spring's LuceneToolIndex, Lucene-exact BM25
    "vector": VectorToolIndex,  # embedder defaults to the cached MiniLM
    "hybrid": HybridToolIndex,  # BM25 + character n-grams + MiniLM views, fused (see index.hybrid)
    "learned": LearnedToolIndex,  # the hybrid's signals fused by a fitted model (see index.learned)
}
INDEX_KINDS = tuple(INDEX_CLASSES)

# The constructor argument that holds each kind's score threshold; regex and learned have none to move.
THRESHOLD_OPTIONS = {"lucene": "min_score", "vector": "similarity_threshold", "hybrid": "min_score"}


def threshold_options(kind: str, threshold: float | None) -> dict[str, float]:
    """Constructor options that set ``kind``'s score threshold (none when ``threshold`` is None)."""
    if threshold is None:
        return {}
    if kind not in THRESHOLD_OPTIONS:
        raise ValueError(
            f"the {kind!r} index has no score threshold; "
            f"a threshold applies to {', '.join(THRESHOLD_OPTIONS)}"
        )
    return {THRESHOLD_OPTIONS[kind]: threshold}


def make_index(kind: str, **options: Any) -> Any:
    """A fresh index of ``kind`` (one of :data:`INDEX_KINDS`); ``options`` go to its constructor."""
    if not isinstance(kind, str) or kind.lower() not in INDEX_CLASSES:
        raise ValueError(f"unknown index kind {kind!r}; expected one of: {', '.join(INDEX_KINDS)}")
    return INDEX_CLASSES[kind.lower()](**options)
