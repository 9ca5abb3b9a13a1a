"""The process-wide default embedder: MiniLM behind the shipped vectors and the on-disk cache."""

from __future__ import annotations

import threading

from toolsearch_lab.embed.cache import CachedEmbedder
from toolsearch_lab.embed.minilm import MiniLMEmbedder

_DEFAULT: CachedEmbedder | None = None
_DEFAULT_LOCK = threading.Lock()


def default_embedder() -> CachedEmbedder:
    """The cached MiniLM embedder every index uses unless given another one (one ONNX session per process)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = CachedEmbedder(MiniLMEmbedder())
        return _DEFAULT
