"""What every embedder shares: the :class:`Embedder` protocol, input checks and L2 normalisation.

The implementations live next door: :mod:`.minilm` (all-MiniLM-L6-v2 on onnxruntime, the default),
:mod:`.openai` (any OpenAI-compatible ``/embeddings`` endpoint) and :mod:`.tfidf` (scikit-learn TF-IDF).
``name`` identifies the exact function text -> vector, so the on-disk cache (:mod:`.cache`) and the shipped
vectors (:mod:`.shipped`) can key vectors by it: two embedders with the same ``name`` must produce the same
vectors.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


class EmbeddingError(RuntimeError):
    """An embedder could not produce vectors (missing model, bad configuration, endpoint failure)."""


@runtime_checkable
class Embedder(Protocol):
    """``embed(texts)`` returns a float32 array of shape ``[len(texts), dim]`` whose rows have unit L2 norm
    (so a dot product is the cosine similarity)."""

    # Read-only members, so that a wrapper may derive them (CachedEmbedder's name is its embedder's).
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32. All-zero rows stay zero (cosine 0 with everything) instead of
    becoming NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_texts(texts: Sequence[str], who: str) -> list[str]:
    """``texts`` as a list of str, or a TypeError naming ``who`` and the bad item. Lone surrogates become
    U+FFFD."""
    if isinstance(texts, str):
        # A bare string is a sequence of characters: embedding each letter is never what the caller meant.
        raise TypeError(f"{who}.embed expects a list of strings, got a single str; wrap it: [text]")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"{who}.embed: item {i} is {type(text).__name__}, expected str")
        if _SURROGATE.search(text):
            # A lone surrogate (valid in JSON as "\ud800", e.g. from a model) cannot be encoded as UTF-8, so
            # tokenizers, HTTP bodies and the cache key would all fail on it; U+FFFD keeps the rest usable.
            out[i] = _SURROGATE.sub("\ufffd", text)
    return out


def text_key(text: str) -> str:
    """The key a text's vector is stored under (in the cache and in the shipped vectors): its sha256 hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def storage_name(embedder_name: str) -> str:
    """A file-system-safe name for an embedder's vectors: a readable slug plus a hash of the full name, so
    two names never collide after slugging (names can hold URLs of OpenAI-compatible endpoints)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder_name)[:80]
    return f"{slug}-{hashlib.sha256(embedder_name.encode('utf-8')).hexdigest()[:10]}"
