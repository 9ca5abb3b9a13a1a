"""Embeddings from OpenAI's ``/v1/embeddings`` or any server speaking the same protocol (vLLM, Ollama,
LM Studio, LiteLLM, ...), through the ``openai`` client."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolsearch_lab.embed.base import EmbeddingError, check_texts, l2_normalise
from toolsearch_lab.secrets import (
    BaseUrl,
    Secret,
    hide_keys,
    install_log_redaction,
)
from toolsearch_lab.trace import RetryRecord, note_retry

# The answers the SDK retries (its _should_retry): timeouts, conflicts, rate limits and server errors.
_RETRIED_STATUSES = frozenset({408, 409, 429})

_KNOWN_OPENAI_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """Embeddings from OpenAI's ``/v1/embeddings`` or any server speaking the same protocol (vLLM, Ollama,
    LM Studio, LiteLLM, ...).

    * ``api_key``/``base_url`` default to ``OPENAI_API_KEY``/``OPENAI_BASE_URL``. With a custom endpoint but
      no key a placeholder key is sent, because most local servers do not check it.
    * The client is built on first use (openai 3.x raises at construction without a key) and the failure is
      turned into an :class:`EmbeddingError` that says what to set.
    * Requests carry at most ``batch_size`` texts. 429 and 5xx answers are retried by the SDK
      (``max_retries``, exponential backoff, honouring ``retry-after-ms``/``retry-after``). Each retry is
      counted (``retried``) and noted as a :class:`~toolsearch_lab.trace.RetryRecord` for the trace: a
      search that embeds its query gets its embedder's retries in ``SearchRecord.retries``. ``wait_s`` is
      measured, from the failed answer to the next attempt (for a timeout or a dropped connection, which
      has no answer, from the start of the failed attempt).
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
        url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        # Credentials, query and fragment leave the URL the SDK gets (see toolsearch_lab.secrets.BaseUrl):
        # name, repr and logs show the redacted URL.
        self._url = BaseUrl.parse(url) if url is not None else None
        url = self._url.shown if self._url is not None else None
        self.base_url = url
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        self._api_key = Secret(key) if key else None
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
        self.retried = 0  # attempts the SDK retried, in every thread
        self._attempts = threading.local()  # the current request's attempts, in this thread

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

    @property
    def _where(self) -> str:
        return self.base_url or "api.openai.com"

    def _redact(self, message: str) -> str:
        return hide_keys(message, (self._api_key, *(self._url.secrets if self._url is not None else ())))

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                if self._api_key is None and self.base_url is None:
                    raise EmbeddingError(
                        "OpenAIEmbedder: no API key configured; set OPENAI_API_KEY (and OPENAI_BASE_URL for "
                        "an OpenAI-compatible server) or pass api_key=/base_url="
                    )
                import openai  # the SDK takes about half a second to import: only when a request is made

                key = self._api_key.reveal() if self._api_key is not None else "no-key-needed"
                install_log_redaction()
                options: dict[str, Any] = {
                    "event_hooks": {"request": [self._on_request], "response": [self._on_response]}
                }
                auth = self._url.auth() if self._url is not None else None
                if auth is not None:
                    options["auth"] = auth
                http_client = openai.DefaultHttpxClient(**options)
                problem = None
                try:
                    self._client = openai.OpenAI(
                        api_key=key,
                        base_url=self._url.wire if self._url is not None else None,
                        default_query=self._url.default_query() if self._url is not None else None,
                        max_retries=self.max_retries,
                        timeout=self.timeout,
                        http_client=http_client,
                    )
                except openai.OpenAIError as exc:
                    problem = self._redact(str(exc))
                if problem is not None:
                    # Raised outside the except block: no SDK exception in __context__ (see embed()).
                    raise EmbeddingError(f"OpenAIEmbedder: cannot create the client: {problem}")
            return self._client

    # ---- retries: the SDK retries inside one create() call; its HTTP client's hooks see every attempt.
    def _on_request(self, request: Any) -> None:
        state = self._attempts
        state.count = getattr(state, "count", 0) + 1
        if state.count == 1:
            return
        failed = getattr(state, "failed", None)
        status, since, detail = failed or (None, state.started, "no answer (timeout or dropped connection)")
        error = f"HTTP {status}" if status is not None else "no answer"
        record = RetryRecord(state.count - 1, status, error, round(time.monotonic() - since, 3), detail)
        self.retried += 1
        note_retry(record)
        state.failed = None
        state.started = time.monotonic()

    def _on_response(self, response: Any) -> None:
        status = response.status_code
        if status in _RETRIED_STATUSES or status >= 500:
            wait = response.headers.get("retry-after-ms") or response.headers.get("retry-after")
            detail = f"embeddings at {self._where} answered HTTP {status}"
            detail += f" (retry-after {wait:.20})" if wait else ""
            self._attempts.failed = (status, time.monotonic(), detail)
        else:
            self._attempts.failed = None

    def _read_vectors(self, response: Any, expected: int) -> tuple[Any, str | None]:
        """(float32 [expected, dim], None) from an embeddings response, or (None, problem) when the body
        does not have the protocol's shape (compatible servers vary; a bad proxy answers anything)."""
        try:
            data = sorted(response.data, key=lambda d: d.index)
            vectors = np.asarray([d.embedding for d in data], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            problem = f"{self._where} answered with an unexpected body ({type(exc).__name__}: {exc})"
            return None, f"OpenAIEmbedder: {problem}"[:400]
        if len(data) != expected or vectors.ndim != 2:
            return None, f"OpenAIEmbedder: asked {self._where} for {expected} embeddings, got {len(data)}"
        return vectors, None

    def _request(self, client: Any, chunk: list[str]) -> tuple[Any, str | None]:
        """(vectors, None) for one request, or (None, problem): never an SDK exception, whose message may
        quote the server's echo of the key."""
        import openai  # already imported by _get_client; here for its exception types

        kwargs: dict[str, Any] = {"model": self.model, "input": chunk}
        if self.dimensions is not None:
            kwargs["dimensions"] = self.dimensions
        self._attempts.count, self._attempts.failed = 0, None
        self._attempts.started = time.monotonic()
        try:
            response = client.embeddings.create(**kwargs)
        except openai.APIStatusError as exc:
            hint = " (check OPENAI_API_KEY)" if exc.status_code in (401, 403) else ""
            return None, (
                f"OpenAIEmbedder: {self._where} answered HTTP {exc.status_code} for "
                f"model {self.model!r}{hint}: {self._redact(str(exc.message))[:300]}"
            )
        except openai.APIConnectionError as exc:
            return None, f"OpenAIEmbedder: cannot reach {self._where}: {self._redact(str(exc))[:300]}"
        # A 200 whose body is not JSON, or JSON of the wrong shape (the SDK trips over it while parsing).
        except (openai.OpenAIError, ValueError, AttributeError, TypeError, KeyError) as exc:
            return None, (
                f"OpenAIEmbedder: unreadable answer from {self._where}: "
                f"{type(exc).__name__}: {self._redact(str(exc))[:200]}"
            )
        return self._read_vectors(response, len(chunk))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = check_texts(texts, "OpenAIEmbedder")
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        client = self._get_client()
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            # The API rejects empty strings; a single space embeds as "nothing" and keeps positions aligned.
            chunk = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            vectors, problem = self._request(client, chunk)
            if problem is not None:
                # Raised here, outside any except block, so neither __cause__ nor __context__ holds the SDK
                # exception.
                raise EmbeddingError(problem)
            self.requests += 1
            rows.append(vectors)
        matrix = np.concatenate(rows, axis=0)
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        # OpenAI's vectors are already unit length; other servers' may not be.
        return l2_normalise(matrix)
