"""Keeping credentials out of reprs, names, log lines and error messages.

A key can reach us in three ways: as ``api_key``, inside a base URL (``http://user:KEY@host/v1``) or in a
query string (``?api-key=KEY``, Azure style). :class:`Secret` holds one so that ``repr``/``vars()`` dumps
and tracebacks show ``'***'``; :func:`split_url_credentials` takes the userinfo out of a URL so the URL can
be shown and logged; :func:`redact_url` and :func:`scrub` clean text that may still hold one; and
:class:`RedactingFilter` cleans log records of the HTTP stack, whose INFO line prints every request URL.

This module is the bottom layer: it imports nothing from the package.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "REDACTED",
    "BaseUrl",
    "RedactingFilter",
    "Secret",
    "install_log_redaction",
    "query_credentials",
    "redact_url",
    "scrub",
    "split_url_credentials",
    "split_url_query",
]

REDACTED = "***"
# Query parameters that carry credentials in the APIs we talk to (Azure's api-key, signed URLs, tokens).
SENSITIVE_QUERY_KEYS = frozenset(
    {"api-key", "api_key", "apikey", "key", "token", "access_token", "auth", "password", "secret", "sig"}
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]*@")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
_QUERY_SECRET = re.compile(
    r"(?i)([?&#;](?:" + "|".join(re.escape(k) for k in sorted(SENSITIVE_QUERY_KEYS)) + r")=)[^&#\s\"']*"
)
# The loggers that print request URLs: httpx's INFO "HTTP Request: POST <url>", the openai SDK's DEBUG
# request options and retry lines, and httpcore's connection traces.
HTTP_LOGGERS = (
    "httpx",
    "httpcore",
    "httpx2",  # the openai SDK 3.x is built on the httpx2 fork
    "httpcore2",
    "openai",
    "openai._base_client",
    "openai._client",
)


class Secret:
    """A credential that shows as ``'***'`` in ``repr``/``str``, so ``vars(obj)`` and tracebacks hold no key.
    ``reveal()`` is the one way to read it, at the point where it is sent."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"Secret holds a string, got {type(value).__name__}")
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return f"'{REDACTED}'"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def split_url_credentials(url: str) -> tuple[str, str | None, Secret | None]:
    """``(url without userinfo, username, password)``: ``http://user:KEY@host/v1`` gives
    ``("http://host/v1", "user", Secret("KEY"))``. A URL without userinfo comes back unchanged with
    ``(None, None)``. Percent-escapes in the userinfo are decoded, as HTTP clients do."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, has_password, password = userinfo.partition(":")
    clean = urllib.parse.urlunsplit(parts._replace(netloc=hostport))
    secret = Secret(urllib.parse.unquote(password)) if has_password else None
    return clean, urllib.parse.unquote(user), secret


def query_credentials(url: str) -> list[Secret]:
    """The values of credential query (or fragment) parameters in ``url``: ``…/v1?api-key=KEY`` gives
    ``[Secret("KEY")]``, both as written and percent-decoded, so either spelling can be scrubbed."""
    found: list[Secret] = []
    for match in _QUERY_SECRET.finditer(url):
        value = url[match.end(1) : match.end()]
        for spelling in dict.fromkeys((value, urllib.parse.unquote_plus(value))):
            if spelling:
                found.append(Secret(spelling))
    return found


def split_url_query(url: str) -> tuple[str, dict[str, str]]:
    """``(url without query string, its parameters)``. HTTP SDKs append paths to a base URL as text, so a
    base URL's query (``…/v1?api-key=KEY``) has to travel as default query parameters instead."""
    parts = urllib.parse.urlsplit(url)
    if not parts.query:
        return url, {}
    params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit(parts._replace(query="")), params


def redact_url(url: str | None) -> str | None:
    """``url`` safe to show: userinfo becomes ``***@`` and credential query parameters ``=***``."""
    if url is None:
        return None
    return _QUERY_SECRET.sub(r"\1" + REDACTED, _URL_USERINFO.sub(r"\1" + REDACTED + "@", url))


def scrub(text: str, secrets: Iterable[str | Secret | None] = ()) -> str:
    """``text`` with every given secret, every URL userinfo, credential query parameter and
    ``Bearer``/``Basic`` token replaced by ``***``. For messages that came from a server or an SDK."""
    for secret in secrets:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if value:
            text = text.replace(value, REDACTED)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return redact_url(text) or ""


class RedactingFilter(logging.Filter):
    """Rewrites a record's message through :func:`scrub` (URL userinfo, credential query parameters,
    bearer tokens). It never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record is the logger's problem, not ours to hide
            return True
        cleaned = scrub(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_FILTER = RedactingFilter()


def install_log_redaction(logger_names: Iterable[str] = HTTP_LOGGERS) -> None:
    """Attach the redacting filter to the HTTP stack's loggers (idempotent). A filter on a logger sees the
    records created on that logger, so each one that prints URLs gets it."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


@dataclass(frozen=True)
class BaseUrl:
    """An OpenAI-compatible base URL taken apart once, for every client that sends to one.

    ``wire`` is what the SDK gets as ``base_url``: no userinfo (it goes as Basic auth, :meth:`auth`), no
    query (the SDK appends paths as text, which would land inside the query; it goes as
    :meth:`default_query`) and no fragment (never sent over HTTP). ``shown`` is the URL for reprs, names and
    messages, every credential as ``***``; ``secrets`` is everything to :func:`scrub` from text a server
    or the SDK sends back."""

    shown: str
    wire: str
    user: Secret | None = None
    password: Secret | None = None
    query: Mapping[str, Secret] = field(default_factory=dict)
    secrets: tuple[Secret, ...] = ()

    @classmethod
    def parse(cls, url: str) -> BaseUrl:
        bare, user, password = split_url_credentials(url)
        secrets = query_credentials(bare)
        bare, fragment = urllib.parse.urldefrag(bare)
        if fragment:
            secrets.append(Secret(fragment))
        wire, query = split_url_query(bare)
        shown = (redact_url(bare) or "") + (f"#{REDACTED}" if fragment else "")
        named = Secret(user) if user is not None else None
        secrets += [s for s in (named, password) if s]
        return cls(shown, wire, named, password, {k: Secret(v) for k, v in query.items()}, tuple(secrets))

    def auth(self) -> tuple[str, str] | None:
        """``(user, password)`` for Basic auth when the URL carried userinfo."""
        if self.user is None:
            return None
        return self.user.reveal(), self.password.reveal() if self.password is not None else ""

    def default_query(self) -> dict[str, str] | None:
        return {name: value.reveal() for name, value in self.query.items()} or None
