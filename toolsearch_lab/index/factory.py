"""``make_index(kind, **options)``: build any of the four index kinds by name (CLI, notebooks, benchmarks)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the index modules (and numpy with them) load on first use, not with the kinds
    from toolsearch_lab.index.base import BaseToolIndex


class _IndexClasses(Mapping[str, "type[BaseToolIndex]"]):
    """kind -> index class, each imported on first use: listing the kinds (the CLI's parser, the front door)
    loads no index, and so neither scipy nor scikit-learn."""

    def __init__(self, paths: dict[str, str]):
        self._paths = paths

    def __getitem__(self, kind: str) -> type[BaseToolIndex]:
        module, _, name = self._paths[kind].rpartition(".")
        cls: type[BaseToolIndex] = getattr(importlib.import_module(module), name)
        return cls

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


INDEX_CLASSES: Mapping[str, type[BaseToolIndex]] = _IndexClasses(
    {
        "regex": "toolsearch_lab.index.regex.RegexToolIndex",  # Spring's keyword-pattern index
        # Spring's LuceneToolIndex, Lucene-exact BM25
        "lucene": "toolsearch_lab.index.bm25.index.BM25ToolIndex",
        "vector": "toolsearch_lab.index.vector.VectorToolIndex",  # embedder defaults to the cached MiniLM
        # BM25 + character n-grams + MiniLM views, fused (see index.hybrid)
        "hybrid": "toolsearch_lab.index.hybrid.HybridToolIndex",
        # the hybrid's signals fused by a fitted model (see index.learned)
        "learned": "toolsearch_lab.index.learned.LearnedToolIndex",
    }
)
INDEX_KINDS = tuple(INDEX_CLASSES)


def _has_score_floor(kind: str) -> bool:
    """Every index with a score floor takes it, and has it, as ``min_score_threshold`` (Spring's name)."""
    return hasattr(INDEX_CLASSES[kind], "min_score_threshold")


def make_index(kind: str, **options: Any) -> BaseToolIndex:
    """A fresh index of ``kind`` (one of :data:`INDEX_KINDS`); ``options`` go to its constructor."""
    if not isinstance(kind, str) or kind.lower() not in INDEX_CLASSES:
        raise ValueError(f"unknown index kind {kind!r}; expected one of: {', '.join(INDEX_KINDS)}")
    kind = kind.lower()
    if "min_score_threshold" in options and not _has_score_floor(kind):
        floored = ", ".join(k for k in INDEX_KINDS if _has_score_floor(k))
        raise ValueError(f"the {kind!r} index has no score threshold; a threshold applies to {floored}")
    return INDEX_CLASSES[kind](**options)
