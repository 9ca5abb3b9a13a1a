"""TF-IDF vectors fitted on the catalog texts, optionally compressed with TruncatedSVD (LSA)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolsearch_lab.embed.base import EmbeddingError, check_texts, l2_normalise
from toolsearch_lab.text.identifiers import spaced_identifiers


def _preprocess(text: str) -> str:
    return spaced_identifiers(text).lower()


class TfidfEmbedder:
    """TF-IDF vectors fitted on the catalog texts (``fit``), optionally compressed with TruncatedSVD (LSA).

    No model file needed; good on lexical overlap, blind to synonyms unless SVD finds them. Identifiers are
    split (``getWeather``/``get_weather`` -> ``get weather``) so names match natural-language queries.
    """

    def __init__(
        self, *, svd_components: int | None = None, sublinear_tf: bool = True, random_state: int = 0
    ) -> None:
        self.svd_components = svd_components
        self.sublinear_tf = sublinear_tf
        self.random_state = random_state
        self._vectorizer: Any = None
        self._svd: Any = None
        self._dim: int | None = None
        self.name = "tfidf-unfitted"

    def __repr__(self) -> str:
        return f"TfidfEmbedder(name={self.name!r}, svd_components={self.svd_components})"

    def fit(self, texts: Sequence[str]) -> TfidfEmbedder:
        # scikit-learn costs about a second to import; the other embedders do not need it.
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = check_texts(texts, "TfidfEmbedder")
        if not texts:
            raise ValueError("TfidfEmbedder.fit: needs at least one text")
        vectorizer = TfidfVectorizer(preprocessor=_preprocess, sublinear_tf=self.sublinear_tf)
        matrix = vectorizer.fit_transform(texts)
        self._vectorizer = vectorizer
        self._svd = None
        self._dim = matrix.shape[1]
        if self.svd_components is not None:
            n = min(self.svd_components, matrix.shape[1] - 1, matrix.shape[0] - 1)
            if n >= 1:
                self._svd = TruncatedSVD(n_components=n, random_state=self.random_state).fit(matrix)
                self._dim = n
        # Vectors depend on the fitted corpus, so the corpus is part of the cache identity.
        digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:12]
        self.name = f"tfidf-{digest}" + (f"-svd{self._dim}" if self._svd is not None else "")
        return self

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise EmbeddingError("TfidfEmbedder: call fit(texts) with the catalog texts before embedding")
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts, "TfidfEmbedder")
        if self._vectorizer is None:
            raise EmbeddingError("TfidfEmbedder: call fit(texts) with the catalog texts before embedding")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = self._vectorizer.transform(texts)
        dense = self._svd.transform(matrix) if self._svd is not None else matrix.toarray()
        return l2_normalise(dense)
