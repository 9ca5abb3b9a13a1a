"""On-disk embedding cache: vectors keyed by (embedder name, sha256 of the text).

Layout: ``<cache root>/embeddings/<embedder dir>/<shard>.npz``. Each shard holds ``keys`` (sha256 hex of each
text), ``vectors`` (float32) and ``digest`` (sha256 of both, written with them): a shard whose content does
not match its digest (edited, truncated to zeros, overwritten) is ignored with a warning and its texts are
embedded again, as is one whose vectors have absurd lengths (a norm of 0 everywhere, or above 1e6).

Writers never modify a file: they write a new shard to a temporary name and
``os.replace`` it into place, which is atomic on POSIX and Windows, so concurrent processes never see a torn
file and never lose each other's work. Readers load every shard they have not seen yet. When a directory
holds many shards, a writer merges them into one (also via a temporary file) and deletes the originals;
a reader that races with that simply skips the vanished file and finds the same vectors in the merged one.

The root is, in order: the ``cache_dir`` argument, ``$TOOLSEARCH_LAB_CACHE/embeddings``, or
``~/.cache/toolsearch-lab/embeddings``.

:class:`CachedEmbedder` looks in the vectors shipped with the package (:mod:`.shipped`) before the cache, so
the shipped catalogs, datasets and scenarios are never embedded at all.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import threading
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from toolsearch_lab.atomic import TEMP_PREFIX, atomic_file
from toolsearch_lab.embed.base import Embedder, check_texts, storage_name, text_key
from toolsearch_lab.embed.shipped import ShippedVectors, shipped_vectors
from toolsearch_lab.secrets import scrub

log = logging.getLogger(__name__)

CACHE_ENV = "TOOLSEARCH_LAB_CACHE"
_MAX_SHARDS = 32  # merge beyond this many shard files, so start-up stays a handful of reads
_PROGRESS_THRESHOLD = 256  # show a tqdm bar when at least this many texts need the model
_CHUNK = 1024  # texts embedded (and persisted) per step: an interrupted run keeps its finished chunks
_FLUSH_AT = 256  # small misses (single queries) are buffered in memory and written in groups of this size


def _shards(directory: Path) -> list[Path]:
    """The finished shards: a writer's temporary file (``.tmp-*.npz``, still being written) is not one."""
    return sorted(p for p in directory.glob("*.npz") if not p.name.startswith(TEMP_PREFIX))


# Vectors longer than this (or all of length 0) are not embeddings: every embedder here gives lengths near 1.
_MAX_NORM = 1e6


def _digest(keys: np.ndarray, vectors: np.ndarray) -> str:
    """sha256 of a shard's keys and float32 vectors, in a fixed byte order."""
    h = hashlib.sha256()
    h.update("\n".join(str(k) for k in keys.tolist()).encode("utf-8"))
    h.update(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
    return h.hexdigest()


def _tampered(keys: np.ndarray, vectors: np.ndarray, stored: str | None) -> str | None:
    """Why a shard's content cannot be trusted, or None: its digest does not match (a shard written
    before digests existed has none, and gets only the length check), or its vectors' lengths are absurd."""
    if stored is not None and stored != _digest(keys, vectors.astype(np.float32, copy=False)):
        return "its content does not match the digest written with it"
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1) if len(vectors) else np.ones(1)
    if not norms.any():
        return "every vector has length 0"
    if norms.max() > _MAX_NORM:
        return f"a vector has length {norms.max():.3g} (embeddings have lengths near 1)"
    return None


def default_cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser() / "embeddings"
    return Path.home() / ".cache" / "toolsearch-lab" / "embeddings"


class EmbeddingCache:
    """Vectors of one embedder on disk. Thread-safe; safe with concurrent writer processes."""

    def __init__(
        self, embedder_name: str, dim: int | None = None, cache_dir: str | os.PathLike | None = None
    ):
        self.embedder_name = embedder_name
        self.dim = dim
        root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        # A name may hold an endpoint URL: the folder is named after it with every secret hidden.
        self.directory = root / storage_name(scrub(embedder_name, hide_queries=True))
        self._vectors: dict[str, np.ndarray] = {}
        self._seen_shards: set[str] = set()
        self._pending: dict[str, np.ndarray] = {}
        self._lock = threading.RLock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._vectors)

    # ------------------------------------------------------------------ reading
    def refresh(self) -> None:
        """Load shards written since the last refresh (by this or another process)."""
        with self._lock:
            if not self.directory.is_dir():
                return
            for path in _shards(self.directory):
                if path.name in self._seen_shards:
                    continue
                self._seen_shards.add(path.name)
                try:
                    with np.load(path, allow_pickle=False) as data:
                        keys, vectors = data["keys"], data["vectors"]
                        stored = str(data["digest"]) if "digest" in data.files else None
                except FileNotFoundError:
                    continue  # merged away by another writer between glob and open
                except Exception as exc:  # noqa: BLE001 - a corrupt shard must not break embedding
                    log.warning("embedding cache: ignoring unreadable shard %s (%s)", path, exc)
                    continue
                if vectors.ndim != 2 or len(keys) != len(vectors):
                    log.warning("embedding cache: ignoring malformed shard %s", path)
                    continue
                if self.dim is not None and vectors.shape[1] != self.dim:
                    log.warning(
                        "embedding cache: ignoring shard %s with dim %d (expected %d)",
                        path,
                        vectors.shape[1],
                        self.dim,
                    )
                    continue
                if vectors.dtype.kind != "f" or not np.isfinite(vectors).all():
                    log.warning(
                        "embedding cache: ignoring shard %s with non-finite or non-float vectors", path
                    )
                    continue
                problem = _tampered(keys, vectors, stored)
                if problem:
                    log.warning(
                        "embedding cache: ignoring shard %s: %s; its texts are embedded again", path, problem
                    )
                    continue
                for key, vec in zip(keys.tolist(), vectors.astype(np.float32, copy=False), strict=False):
                    self._vectors[key] = vec

    def get_many(self, keys: Sequence[str]) -> list[np.ndarray | None]:
        with self._lock:
            if any(k not in self._vectors for k in keys):
                self.refresh()
            return [self._vectors.get(k) for k in keys]

    # ------------------------------------------------------------------ writing
    def put_many(self, keys: Sequence[str], vectors: np.ndarray, *, buffer: bool = False) -> None:
        """Remember vectors in memory and persist them. ``buffer=True`` delays the write until enough small
        additions accumulate (or :meth:`flush`/interpreter exit), so interactive single queries do not each
        create a file."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise ValueError(f"embedding cache: {len(keys)} keys but vectors of shape {vectors.shape}")
        with self._lock:
            if self.dim is None:
                self.dim = int(vectors.shape[1])  # later shards of another size are ignored on load
            for key, vec in zip(keys, vectors, strict=False):
                self._vectors[key] = vec
            if buffer:
                for key, vec in zip(keys, vectors, strict=False):
                    self._pending[key] = vec
                if len(self._pending) >= _FLUSH_AT:
                    self.flush()
                return
        self._write_shard(list(keys), vectors)

    def flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            keys = list(self._pending)
            vectors = np.stack([self._pending[k] for k in keys])
            self._pending.clear()
        self._write_shard(keys, vectors)

    def __del__(self) -> None:
        # The exit hook holds only a weak reference, so a cache dropped before exit (its embedder made in a
        # function) writes what it buffered here, or the texts would run the model again next time.
        with contextlib.suppress(Exception):
            self.flush()

    def _write_shard(self, keys: list[str], vectors: np.ndarray) -> None:
        if not keys:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            name = f"{uuid.uuid4().hex}.npz"
            self._atomic_save(self.directory / name, np.asarray(keys), vectors)
            with self._lock:
                self._seen_shards.add(name)
            self._maybe_compact()
        except OSError as exc:
            # A read-only or full disk degrades to an in-memory cache; embedding itself must still work.
            log.warning(
                "embedding cache: cannot write to %s (%s); continuing without persistence",
                self.directory,
                exc,
            )

    def _atomic_save(self, target: Path, keys: np.ndarray, vectors: np.ndarray) -> None:
        vectors = vectors.astype(np.float32, copy=False)
        with atomic_file(target, "wb") as fh:
            np.savez(fh, keys=keys, vectors=vectors, digest=np.asarray(_digest(keys, vectors)))

    def _maybe_compact(self) -> None:
        shards = _shards(self.directory)
        if len(shards) <= _MAX_SHARDS:
            return
        with self._lock:
            self.refresh()
            keys = list(self._vectors)
            vectors = np.stack([self._vectors[k] for k in keys])
            name = f"{uuid.uuid4().hex}.npz"
            self._atomic_save(self.directory / name, np.asarray(keys), vectors)
            self._seen_shards.add(name)
        # Only delete shards we had loaded before merging: anything newer may hold vectors we have not seen.
        for path in shards:
            if path.name in self._seen_shards and path.name != name:
                with contextlib.suppress(OSError):
                    path.unlink()

    def clear(self) -> None:
        """Delete this embedder's cached vectors (memory and disk)."""
        with self._lock:
            self._vectors.clear()
            self._pending.clear()
            self._seen_shards.clear()
            if self.directory.is_dir():
                for path in _shards(self.directory):
                    with contextlib.suppress(OSError):
                        path.unlink()


def _flush_at_exit(ref: weakref.ReferenceType[EmbeddingCache]) -> None:
    cache = ref()
    if cache is not None:
        cache.flush()


class CachedEmbedder:
    """Wraps an :class:`Embedder` so each distinct text is embedded once, ever (per embedder name).

    Texts are looked up in the vectors shipped with the package (``shipped=True``, when it ships some for
    this embedder's name), then in the on-disk cache; only the rest runs the model. Duplicate texts inside
    one call are embedded once. Misses are embedded in chunks with a tqdm bar when there are many, and each
    chunk is persisted as soon as it is done.
    """

    def __init__(
        self,
        embedder: Embedder,
        cache_dir: str | os.PathLike | None = None,
        *,
        progress: bool = True,
        shipped: bool = True,
    ):
        self.embedder = embedder
        self.cache_dir = cache_dir
        self.progress = progress
        self.shipped = shipped
        self._cache: EmbeddingCache | None = None
        self._lock = threading.Lock()
        self.hits = 0  # texts answered without the model (shipped or cached)
        self.shipped_hits = 0  # of which from the shipped vectors
        self.misses = 0  # distinct texts that ran the model

    @property
    def name(self) -> str:
        # Read through: a TfidfEmbedder only gets its final name when fitted.
        return self.embedder.name

    @property
    def dim(self) -> int:
        return self.embedder.dim

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.embedder!r})"

    @property
    def cache(self) -> EmbeddingCache:
        with self._lock:
            if self._cache is None or self._cache.embedder_name != self.embedder.name:
                self._cache = EmbeddingCache(self.embedder.name, cache_dir=self.cache_dir)
                atexit.register(_flush_at_exit, weakref.ref(self._cache))
            return self._cache

    @property
    def shipped_store(self) -> ShippedVectors | None:
        """The package's vectors for this embedder's name, if it ships any (and ``shipped`` is on)."""
        return shipped_vectors(self.embedder.name) if self.shipped else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts, "CachedEmbedder")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        store = self.shipped_store
        found: list[np.ndarray | None] = store.get_many(keys) if store is not None else [None] * len(keys)
        self.shipped_hits += sum(1 for v in found if v is not None)
        cache = self.cache
        todo = [i for i, v in enumerate(found) if v is None]
        for i, vec in zip(todo, cache.get_many([keys[i] for i in todo]), strict=True):
            found[i] = vec
        missing: dict[str, str] = {}
        for key, text, vec in zip(keys, texts, found, strict=True):
            if vec is None:
                missing.setdefault(key, text)
        self.hits += sum(1 for v in found if v is not None)
        self.misses += len(missing)
        if missing:
            computed = dict(zip(missing, self._compute(cache, list(missing.items())), strict=True))
            found = [computed[k] if v is None else v for k, v in zip(keys, found, strict=True)]
        return np.stack(found).astype(np.float32, copy=False)  # type: ignore[arg-type]

    def _compute(self, cache: EmbeddingCache, items: list[tuple[str, str]]) -> list[np.ndarray]:
        small = len(items) < _PROGRESS_THRESHOLD
        bar = None
        if self.progress and not small:
            bar = tqdm(total=len(items), desc=f"embedding ({self.embedder.name[:30]})", unit="text")
        out: list[np.ndarray] = []
        try:
            for start in range(0, len(items), _CHUNK):
                chunk = items[start : start + _CHUNK]
                vectors = np.asarray(self.embedder.embed([t for _, t in chunk]), dtype=np.float32)
                if vectors.ndim != 2 or vectors.shape[0] != len(chunk):
                    raise RuntimeError(
                        f"{self.embedder.name}: embed() gave {len(vectors)} vectors for {len(chunk)} texts"
                    )
                cache.put_many([k for k, _ in chunk], vectors, buffer=small)
                out.extend(vectors)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
        return out

    def flush(self) -> None:
        if self._cache is not None:
            self._cache.flush()
