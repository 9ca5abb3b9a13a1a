"""``make_index(kind, **options)``: build any of the four index kinds by name (CLI, notebooks, benchmarks)."""

from __future__ import annotations

from typing import Any

INDEX_KINDS = ("regex", "lucene", "vector", "hybrid")


def make_index(kind: str, **options: Any) -> Any:
    """A fresh index of ``kind``; ``options`` go to its constructor.

    * ``regex``  -> ``RegexToolIndex(**options)`` (Spring's keyword-pattern index)
    * ``lucene`` -> ``BM25ToolIndex(**options)`` (Spring's LuceneToolIndex, Lucene-exact BM25)
    * ``vector`` -> ``VectorToolIndex(**options)``; embedder defaults to the cached MiniLM
    * ``hybrid`` -> ``HybridToolIndex(**options)``; BM25 + MiniLM views, fused (see hybrid_index)
    """
    if not isinstance(kind, str) or kind.lower() not in INDEX_KINDS:
        raise ValueError(f"unknown index kind {kind!r}; expected one of: {', '.join(INDEX_KINDS)}")
    kind = kind.lower()
    if kind == "regex":
        from toolsearch_lab.index.regex import RegexToolIndex

        return RegexToolIndex(**options)
    if kind == "lucene":
        from toolsearch_lab.index.bm25.index import BM25ToolIndex

        return BM25ToolIndex(**options)
    if kind == "vector":
        from toolsearch_lab.index.vector import VectorToolIndex

        return VectorToolIndex(**options)
    from toolsearch_lab.index.hybrid import HybridToolIndex

    return HybridToolIndex(**options)
