"""Vectors shipped with the package, so the shipped catalogs, datasets and scenarios need no embedding.

``toolsearch_lab/resources/vectors/<embedder>.npz`` (written by ``tools/build_vectors.py``) holds, for one
embedder name: ``keys`` (the first 16 bytes of each text's sha256, :func:`~.base.text_key`), ``vectors``
(int8, each row scaled so its largest component is +-127) and ``scales`` (float32, the factor back). A
text is served from here only when the embedder's ``name`` and the text's hash both match, so a changed
text or a different embedder (other weights, other truncation length) is embedded afresh, never given a
stale vector. int8 rows agree with the float32 model output to a cosine above 0.9999 (checked by the
generator and the tests) at a quarter of the size.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from toolsearch_lab.atomic import atomic_file
from toolsearch_lab.embed.base import l2_normalise, storage_name

log = logging.getLogger(__name__)

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "resources" / "vectors"
FORMAT = "toolsearch-lab-vectors-1"
_KEY_BYTES = 16


def shipped_path(embedder_name: str, directory: str | os.PathLike | None = None) -> Path:
    return Path(directory or SHIPPED_DIR) / f"{storage_name(embedder_name)}.npz"


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 rows, float32 scales) with ``rows * scales[:, None]`` close to ``vectors``."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if vectors.size else np.zeros(len(vectors), dtype=np.float32)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    rows = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return rows, scales


def dequantise(rows: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Unit-length float32 rows back from :func:`quantise` (renormalised, so a dot product is a cosine)."""
    return l2_normalise(rows.astype(np.float32) * np.asarray(scales, dtype=np.float32)[:, None])


def _key_bytes(key: str) -> bytes:
    return bytes.fromhex(key[: 2 * _KEY_BYTES])


def write_shipped_vectors(
    path: str | os.PathLike, embedder_name: str, keys: Sequence[str], vectors: np.ndarray
) -> None:
    """Write a shipped-vectors file: ``keys`` are :func:`~.base.text_key` hex digests, ``vectors`` float32."""
    if len(keys) != len(vectors):
        raise ValueError(f"write_shipped_vectors: {len(keys)} keys but {len(vectors)} vectors")
    rows, scales = quantise(vectors)
    raw = np.frombuffer(b"".join(_key_bytes(k) for k in keys), dtype=np.uint8).reshape(len(keys), _KEY_BYTES)
    with atomic_file(path, "wb") as handle:
        np.savez_compressed(
            handle,
            format=np.array(FORMAT),
            embedder=np.array(embedder_name),
            keys=raw,
            vectors=rows,
            scales=scales,
        )


def _layout_problem(keys: np.ndarray, vectors: np.ndarray, scales: np.ndarray) -> str | None:
    """What is wrong with a shipped file's arrays (see the module docstring for the layout), or None."""
    if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != _KEY_BYTES:
        return f"keys are {keys.dtype} {keys.shape}, expected uint8 (n, {_KEY_BYTES})"
    n = len(keys)
    if vectors.dtype != np.int8 or vectors.ndim != 2 or len(vectors) != n or (n and vectors.shape[1] == 0):
        return f"vectors are {vectors.dtype} {vectors.shape}, expected int8 ({n}, dim)"
    if scales.dtype.kind != "f" or scales.shape != (n,):
        return f"scales are {scales.dtype} {scales.shape}, expected float ({n},)"
    if not np.isfinite(scales).all() or (scales <= 0).any():
        return "scales hold non-finite or non-positive values"
    return None


class ShippedVectors:
    """Read-only vectors of one embedder, loaded from a shipped file on first lookup."""

    def __init__(self, path: str | os.PathLike, embedder_name: str) -> None:
        self.path = Path(path)
        self.embedder_name = embedder_name
        self._rows: dict[bytes, int] | None = None
        self._vectors = np.zeros((0, 0), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index())

    def __repr__(self) -> str:
        return f"ShippedVectors({self.embedder_name!r}, path={str(self.path)!r})"

    def _index(self) -> dict[bytes, int]:
        with self._lock:
            if self._rows is None:
                self._rows = self._load()
            return self._rows

    def _load(self) -> dict[bytes, int]:
        """The key -> row map; a file that is unreadable, for another embedder or malformed is not used
        (with a warning naming it), so its texts are embedded afresh instead of getting wrong vectors."""
        try:
            with np.load(self.path, allow_pickle=False) as data:
                fmt, name = str(data["format"]), str(data["embedder"])
                keys, vectors, scales = data["keys"], data["vectors"], data["scales"]
        except FileNotFoundError:
            log.warning("shipped vectors %s: no such file; not using them", self.path)
            return {}
        except Exception as exc:  # noqa: BLE001 - zip, npy and key errors alike: an unusable file
            log.warning(
                "shipped vectors %s: unreadable (%s: %s); not using them", self.path, type(exc).__name__, exc
            )
            return {}
        if fmt != FORMAT or name != self.embedder_name:
            log.warning(
                "shipped vectors %s are %r for %r, expected %r for %r; not using them",
                self.path,
                fmt,
                name,
                FORMAT,
                self.embedder_name,
            )
            return {}
        problem = _layout_problem(keys, vectors, scales)
        if problem is not None:
            log.warning("shipped vectors %s: %s; not using them", self.path, problem)
            return {}
        self._vectors, self._scales = vectors, scales
        return {keys[i].tobytes(): i for i in range(len(keys))}

    def get_many(self, keys: Sequence[str]) -> list[np.ndarray | None]:
        """The vector of each key (a :func:`~.base.text_key`), or None for texts not shipped."""
        index = self._index()
        rows = [index.get(_key_bytes(k)) for k in keys]
        found = [r for r in rows if r is not None]
        if not found:
            return [None] * len(keys)
        matrix = dequantise(self._vectors[found], self._scales[found])
        it = iter(matrix)
        return [None if r is None else next(it) for r in rows]


_STORES: dict[str, ShippedVectors | None] = {}
_STORES_LOCK = threading.Lock()


def shipped_vectors(embedder_name: str) -> ShippedVectors | None:
    """The shipped vectors of ``embedder_name``, or None when the package ships none for it."""
    with _STORES_LOCK:
        if embedder_name not in _STORES:
            path = shipped_path(embedder_name)
            _STORES[embedder_name] = ShippedVectors(path, embedder_name) if path.is_file() else None
        return _STORES[embedder_name]
