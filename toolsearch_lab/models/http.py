"""What the HTTP chat models share: their errors, and one retry loop around an SDK call.

Both SDK clients (:mod:`.openai`, :mod:`.anthropic`) are generated from the same design: a timeout is
``APITimeoutError``, an unreachable server ``APIConnectionError``, an HTTP error ``APIStatusError`` (with the
status, the body and the response headers), an unreadable answer ``APIResponseValidationError``. So one
function maps a failed attempt to our error (:func:`attempt`) and one loop retries it (:func:`with_retries`).

Retries are ours, not the SDKs' (they get ``max_retries=0``): 408, 409, 429, 5xx (529 "overloaded" too),
timeouts and dropped connections are retried up to ``max_retries`` times, waiting what
``Retry-After``/``retry-after-ms`` says (capped at :data:`MAX_RETRY_AFTER_S`) or else an exponential backoff
(:data:`INITIAL_BACKOFF_S` doubling up to :data:`MAX_BACKOFF_S`). Every retry is a
:class:`~toolsearch_lab.trace.RetryRecord` on the returned turn or, when the call finally fails, on the error,
so the trace shows them. SDK exceptions carry the request, headers included: none is ever chained or quoted
unscrubbed.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

from toolsearch_lab.secrets import REDACTED, BaseUrl, Secret, hide_keys
from toolsearch_lab.trace import RetryRecord

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "HttpChatModel",
    "INITIAL_BACKOFF_S",
    "MAX_BACKOFF_S",
    "MAX_RETRY_AFTER_S",
    "RETRYABLE_STATUSES",
    "ModelConnectionError",
    "ModelError",
    "ModelNotConfigured",
    "ModelTimeout",
    "attempt",
    "backoff_seconds",
    "with_retries",
]

DEFAULT_MAX_RETRIES = 2
# Statuses worth another try (the SDKs' list): timeout, conflict/lock, rate limit, server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 429})
INITIAL_BACKOFF_S = 0.5  # first wait without Retry-After; doubles per retry
MAX_BACKOFF_S = 8.0
MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After is cut to this, so a run never sleeps for minutes


def env_value(name: str) -> str | None:
    """An environment variable's value, None when it is unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


class HttpChatModel:
    """What both SDK clients keep the same way: the key as a :class:`~toolsearch_lab.secrets.Secret` (never in
    a repr, ``vars()`` or an error), the base URL taken apart once (:class:`~toolsearch_lab.secrets.BaseUrl`:
    credentials out of it, ``***`` wherever it is shown), and ``from_env``. A client sets
    :attr:`DEFAULT_URL` and says which key to send (:meth:`_key`)."""

    DEFAULT_URL: ClassVar[str]
    URL_VAR: ClassVar[str]  # the environment variables it reads
    KEY_VAR: ClassVar[str]
    model: str
    _url: BaseUrl | None
    _api_key: Secret | None
    base_url: str | None

    def _configure(
        self, base_url: str | None, api_key: str | None, record_to: str | os.PathLike[str] | None = None
    ) -> None:
        url = (base_url or env_value(self.URL_VAR) or "").rstrip("/") or None
        self._url = BaseUrl.parse(url) if url is not None else None
        self.base_url = self._url.shown if self._url is not None else None  # credentials shown as ***
        key = api_key or env_value(self.KEY_VAR)
        self._api_key = Secret(key) if key else None
        self._client: Any = None  # the SDK client, built on the first request
        self._sleep: Callable[[float], None] = time.sleep  # tests replace it to skip the waits
        self.recorder: Any = None  # a Recorder (models.recorder) when every call is written to record_to
        if record_to is not None:
            # Imported here: the recorder needs the SDKs' HTTP library, which only a real call needs.
            from toolsearch_lab.models.recorder import Recorder

            self.recorder = Recorder(record_to)

    def _http_client(self, sdk: ModuleType) -> Any:
        """The HTTP client the SDK gets, when it needs one of ours: Basic auth from credentials in the base
        URL, a transport that records every call (``record_to``). None: the SDK's own."""
        auth = self._url.auth() if self._url is not None else None
        if auth is None and self.recorder is None:
            return None
        transport = self.recorder.transport() if self.recorder is not None else None
        # A (user, password) tuple is Basic auth in every httpx flavour the SDKs may be built on.
        return sdk.DefaultHttpxClient(auth=auth, transport=transport)

    @classmethod
    def is_configured(cls) -> bool:
        """True when the key or the base URL variable is set: notebooks use it to skip live cells."""
        return bool(env_value(cls.KEY_VAR) or env_value(cls.URL_VAR))

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.shown_url()!r}, api_key={key})"

    __str__ = __repr__

    @classmethod
    def from_env(cls, **overrides: Any) -> Any:
        """Like the constructor, but raises ``ModelNotConfigured`` right away instead of on the first call."""
        model = cls(**overrides)
        model._key()
        return model

    def _key(self) -> str:
        """The key to send, or a ``ModelNotConfigured`` that says what to set."""
        raise NotImplementedError

    def shown_url(self) -> str:
        """The base URL as people may see it: credentials that came inside it show as ``***``."""
        url = self.base_url or self.DEFAULT_URL
        if self._url is None or self._url.user is None:
            return url
        scheme, sep, rest = url.partition("://")
        return f"{scheme}{sep}{REDACTED}@{rest}"

    def _scrub(self, text: str) -> str:
        """Text from the server or the SDK without the key, URL credentials or any bearer token."""
        return hide_keys(text, (self._api_key, *(self._url.secrets if self._url is not None else ())))


class ModelError(RuntimeError):
    """A model call failed. ``status_code`` is the HTTP status when the server answered, else None;
    ``retries`` the failed attempts that were retried before this final failure."""

    def __init__(self, message: str, status_code: int | None = None, request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.request_id = request_id
        self.retries: list[RetryRecord] = []


class ModelTimeout(ModelError):
    """No (complete) answer within the configured timeout, retries included."""


class ModelConnectionError(ModelError):
    """The server could not be reached or dropped the connection (is the local server running?)."""


class ModelNotConfigured(ModelError):
    """Neither an API key nor a base URL was given, so there is nothing to call."""


@dataclass(frozen=True)
class Failure:
    """One failed attempt: the error to raise if it is the last, the SDK's error class, and the wait the
    server asked for (None: use the backoff) when the failure is worth retrying."""

    error: ModelError
    sdk_error: str
    retryable: bool
    retry_after: float | None = None


def retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return max(0.0, float(value) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None  # an unreadable header: fall back to the backoff


def backoff_seconds(attempt: int, retry_after: float | None) -> float:
    """How long to wait after failed ``attempt`` (1-based): the server's word, capped, else the backoff."""
    if retry_after is not None:
        return min(retry_after, MAX_RETRY_AFTER_S)
    return min(INITIAL_BACKOFF_S * 2 ** (attempt - 1), MAX_BACKOFF_S)


@dataclass(frozen=True)
class Endpoint:
    """How a client names itself in errors, scrubs server text, and what to advise per status."""

    where: str  # "openai:gpt-4o at http://host/v1"
    timeout: float
    scrub: Callable[[str], str]
    hints: Mapping[int, str]  # status -> advice ("Check OPENAI_API_KEY.")
    max_retries: int


def attempt(
    sdk: ModuleType, call: Callable[[], Any], endpoint: Endpoint, number: int
) -> tuple[Any, Failure | None]:
    """Run one SDK call; a failure comes back as a :class:`Failure` whose error holds no SDK object."""
    tries = f"{number} attempt(s)"
    try:
        return call(), None
    except sdk.APITimeoutError as exc:
        message = (
            f"{endpoint.where}: no answer within {endpoint.timeout:g} s ({tries}); "
            "raise timeout= or check the server"
        )
        return None, Failure(ModelTimeout(message), type(exc).__name__, True)
    except sdk.APIConnectionError as exc:
        message = (
            f"{endpoint.where}: connection failed after {tries}: {endpoint.scrub(str(exc.__cause__ or exc))}"
        )
        return None, Failure(ModelConnectionError(message), type(exc).__name__, True)
    except sdk.APIStatusError as exc:
        status = exc.status_code
        retryable = status in RETRYABLE_STATUSES or status >= 500
        final = not retryable or number > endpoint.max_retries
        error = status_error(exc, endpoint, number - 1, final)
        headers = exc.response.headers if exc.response is not None else None
        return None, Failure(error, type(exc).__name__, retryable, retry_after(headers))
    except (sdk.APIResponseValidationError, ValueError) as exc:  # ValueError: a body that is not JSON
        error = ModelError(f"{endpoint.where}: unreadable response: {endpoint.scrub(str(exc))}")
        return None, Failure(error, type(exc).__name__, False)


def status_error(exc: Any, endpoint: Endpoint, retried: int, final: bool = True) -> ModelError:
    """The error for one HTTP failure. Only the attempt given up on says "gave up after N retries": an
    attempt that will be retried (``final=False``) says so instead, and that text is what its
    ``RetryRecord.message`` keeps."""
    status = exc.status_code
    detail = exc.message
    if isinstance(exc.body, dict):  # the SDK may pass just the inner "error" object
        err = exc.body.get("error", exc.body)
        if isinstance(err, dict) and err.get("message"):
            detail = str(err["message"])
    hint = endpoint.hints.get(status, "")
    if status == 429:
        hint = f" Rate limited; gave up after {retried} retries." if final else " Rate limited; retrying."
    elif status >= 500:
        hint = f" Gave up after {retried} retries." if final else " Retrying."
    headers = exc.response.headers if exc.response is not None else {}
    request_id = headers.get("x-request-id") or headers.get("request-id")
    return ModelError(f"{endpoint.where}: HTTP {status}: {endpoint.scrub(detail)}.{hint}", status, request_id)


def with_retries(
    sdk: ModuleType, call: Callable[[], Any], endpoint: Endpoint, sleep: Callable[[float], None]
) -> tuple[Any, list[RetryRecord]]:
    """``call()``'s answer and the retries before it; the last failure is raised with its retries."""
    retries: list[RetryRecord] = []
    number = 1
    while True:
        answer, failure = attempt(sdk, call, endpoint, number)
        if failure is None:
            return answer, retries
        if not failure.retryable or number > endpoint.max_retries:
            failure.error.retries = retries
            raise failure.error
        wait = backoff_seconds(number, failure.retry_after)
        retries.append(
            RetryRecord(
                number, failure.error.status_code, failure.sdk_error, wait, failure.error.message[:300]
            )
        )
        sleep(wait)
        number += 1
