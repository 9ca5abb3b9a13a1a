"""Keeping credentials out of reprs, names, log lines, error messages, tool results and terminal output.

A credential can reach us as ``api_key``, inside a URL (``http://user:KEY@host/v1``, ``?token=KEY``), as a
config ``${VAR}``, or as an ``env``/``headers`` value of an MCP server. :class:`Secret` holds one so that
``repr``/``vars()`` dumps and tracebacks show ``'***'``, and creating one **registers its value** in one
process-wide registry. :func:`scrub` then hides every registered value from any text by whole value: a value
is replaced only where it stands as a whole token (not inside a longer word), and values shorter than
:data:`MIN_SCRUB_CHARS` are never scrubbed from free text, since they would match inside ordinary words (a
user name ``u`` turned "Connection refused" into "Connection ref***sed"). Their URLs still hide them,
because :func:`redact_url` hides *every* query value and the userinfo of a configured URL, whatever the
parameter is called.

:class:`RedactingFilter` applies :func:`scrub` to log records (message, arguments and traceback text) of the
HTTP stack and the MCP SDK, whose lines print request URLs; :func:`install_log_redaction` attaches it to
every logger of those families that exists, children included.

This module is the bottom layer: it imports nothing from the package.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

__all__ = [
    "MIN_SCRUB_CHARS",
    "REDACTED",
    "BaseUrl",
    "RedactingFilter",
    "Secret",
    "install_log_redaction",
    "isolated_registry",
    "query_credentials",
    "redact_url",
    "register_secret",
    "registered_secret_count",
    "scrub",
    "split_url_credentials",
    "split_url_query",
    "header_secret",
    "url_secret",
]

REDACTED = "***"
# A registered value shorter than this is not scrubbed from free text: short values match inside ordinary
# words. Such a value is still a Secret (its repr is '***') and its URL still hides it (redact_url).
MIN_SCRUB_CHARS = 8
# A registered value this long is hidden wherever it appears, even inside a longer token.
LONG_SECRET_CHARS = 16
# Query parameters whose value is hidden in *any* URL of free text (a server's error message quoting some
# other URL). The URLs we are configured with hide every query value (redact_url), whatever its name.
SENSITIVE_QUERY_KEYS = frozenset(
    {
        "access_token",
        "access-token",
        "api-key",
        "api_key",
        "apikey",
        "auth",
        "code",
        "key",
        "password",
        "secret",
        "sig",
        "signature",
        "subscription-key",
        "token",
        "x-api-key",
    }
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]*@")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
_SENSITIVE_PARAMETER = re.compile(
    r"(?i)([?&#;](?:" + "|".join(re.escape(k) for k in sorted(SENSITIVE_QUERY_KEYS)) + r")=)[^&#\s\"']*"
)
# Any URL in text, up to whitespace or a quote; its query and fragment are what redact_url rewrites.
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+")
_ANY_PARAMETER = re.compile(r"([?&;]|^)([^=&#;]*)=([^&#;]*)")
# The loggers that print request URLs: httpx's INFO "HTTP Request: POST <url>", the openai SDK's DEBUG
# request options and retry lines, httpcore's connection traces and the MCP SDK's "Connecting to <url>".
# Each name covers its children (install_log_redaction walks them).
HTTP_LOGGERS = ("httpx", "httpcore", "httpx2", "httpcore2", "openai", "mcp")


# ---------------------------------------------------------------------------------------------------------
# The registry: every value a Secret was made of, scrubbed by whole value


class _Registry:
    """Registered secret values (every spelling a text may hold) and one compiled pattern for them."""

    def __init__(self) -> None:
        self.values: dict[str, None] = {}  # an ordered set
        self.lock = threading.Lock()
        self._pattern: re.Pattern[str] | None = None

    def add(self, value: str) -> None:
        spellings = _spellings(value)
        with self.lock:
            fresh = [s for s in spellings if s not in self.values]
            for spelling in fresh:
                self.values[spelling] = None
            if fresh:
                self._pattern = None

    def pattern(self) -> re.Pattern[str] | None:
        with self.lock:
            if self._pattern is None and self.values:
                self._pattern = _whole_values(self.values)
            return self._pattern


def _spellings(value: str) -> list[str]:
    """The forms a value takes in text we emit: as is, percent-encoded or decoded (URLs, log lines) and
    JSON-escaped (a trace, a tool result holding it inside a JSON string). Only those long enough."""
    forms = {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value, safe=""),
        urllib.parse.unquote(value),
        urllib.parse.unquote_plus(value),
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
    }
    return sorted((f for f in forms if len(f) >= MIN_SCRUB_CHARS), key=lambda f: (-len(f), f))


def _whole_values(values: Iterable[str]) -> re.Pattern[str]:
    """One pattern matching any of ``values`` as a whole token: where a value begins (ends) with a letter
    or digit, the character before (after) it must not be one (a percent-escape such as ``%20`` before
    it counts as a boundary), so ``abcdefgh1`` never matches inside ``xabcdefgh12``. A value of
    :data:`LONG_SECRET_CHARS` or more matches anywhere: that long, it is that secret even glued to other
    text. Longest first, so a value never leaves a tail of a longer one behind."""
    alternatives = []
    for value in sorted(values, key=lambda v: (-len(v), v)):
        long = len(value) >= LONG_SECRET_CHARS
        before = _START if value[0].isalnum() and not long else ""
        after = r"(?![A-Za-z0-9])" if value[-1].isalnum() and not long else ""
        alternatives.append(before + re.escape(value) + after)
    return re.compile("|".join(alternatives))


_START = r"(?:(?<![A-Za-z0-9])|(?<=%[0-9A-Fa-f]{2}))"


_REGISTRY = _Registry()


def register_secret(value: str | Secret | None) -> None:
    """Add ``value`` to the registry :func:`scrub` hides (a :class:`Secret` registers itself). A value
    shorter than :data:`MIN_SCRUB_CHARS` is kept out of free-text scrubbing (see the module docstring)."""
    raw = value.reveal() if isinstance(value, Secret) else value
    if isinstance(raw, str) and raw:
        _REGISTRY.add(raw)
        for word in _credential_words(raw):
            _REGISTRY.add(word)


def _credential_words(value: str) -> list[str]:
    """The token inside an ``Authorization`` value (``Bearer TOKEN``), which a server may echo alone."""
    match = re.fullmatch(r"(?i)\s*(?:bearer|basic|token)\s+(\S+)\s*", value)
    return [match.group(1)] if match else []


def registered_secret_count() -> int:
    """How many spellings of secret values the registry holds (for tests and diagnostics)."""
    with _REGISTRY.lock:
        return len(_REGISTRY.values)


@contextlib.contextmanager
def isolated_registry() -> Iterator[None]:
    """Run a block with the registry as it is now and put it back afterwards (values registered inside are
    forgotten). For tests: one test's values must not hide another test's text."""
    with _REGISTRY.lock:
        saved = dict(_REGISTRY.values)
    try:
        yield
    finally:
        with _REGISTRY.lock:
            _REGISTRY.values = saved
            _REGISTRY._pattern = None


class Secret:
    """A credential that shows as ``'***'`` in ``repr``/``str``, so ``vars(obj)`` and tracebacks hold no key.
    ``reveal()`` is the one way to read it, at the point where it is sent. Creating one registers the value
    for :func:`scrub`; ``register=False`` is for a value that only *holds* secrets (a whole URL, whose
    userinfo and query values are registered on their own, see :func:`url_secret`)."""

    __slots__ = ("_value",)

    def __init__(self, value: str, *, register: bool = True) -> None:
        if not isinstance(value, str):
            raise TypeError(f"Secret holds a string, got {type(value).__name__}")
        self._value = value
        if register:
            register_secret(value)

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


# ---------------------------------------------------------------------------------------------------------
# URLs


# Headers whose values are protocol settings, never credentials: not registered (their values, such as
# "application/json", would otherwise be hidden from every text). Every other header value is registered.
PLAIN_HEADERS = frozenset({"accept", "accept-language", "content-type", "user-agent", "mcp-protocol-version"})


def header_secret(name: str, value: str) -> Secret:
    """A header value as a :class:`Secret`, registered unless the header is one of :data:`PLAIN_HEADERS`."""
    return Secret(value, register=name.strip().lower() not in PLAIN_HEADERS)


def url_secret(url: str) -> Secret:
    """A URL we were configured with as a :class:`Secret` (so no repr shows it), with the parts that can
    hold a credential registered: the userinfo and every query and fragment value. The URL as a whole is
    not registered: its host and path are what messages name."""
    _, user, password = split_url_credentials(url)
    if user:
        register_secret(user)
    query_credentials(url)
    fragment = urllib.parse.urlsplit(url).fragment
    if fragment and "=" not in fragment:
        register_secret(fragment)
    return Secret(url, register=False)


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
    """Every query (and fragment) parameter value of ``url``, as :class:`Secret` s (so registered), both as
    written and percent-decoded: the URLs we are configured with may carry a credential under any name
    (``?x-api-key=``, ``?subscription-key=``, ``?code=``), so none is assumed harmless."""
    parts = urllib.parse.urlsplit(url)
    found: list[Secret] = []
    for text in (parts.query, parts.fragment):
        for match in _ANY_PARAMETER.finditer(text):
            value = match.group(3)
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


def _hide_parameters(text: str) -> str:
    def hide(match: re.Match[str]) -> str:
        return f"{match.group(1)}{match.group(2)}={REDACTED}" if match.group(3) else match.group(0)

    return _ANY_PARAMETER.sub(hide, text)


def redact_url(url: str | None) -> str | None:
    """A URL we were configured with, safe to show: userinfo becomes ``***@`` and **every** query and
    fragment parameter value ``***`` (``?region=eu&key=K`` → ``?region=***&key=***``); a fragment that is
    not ``name=value`` becomes ``#***``. Names stay, so the URL still says what it holds."""
    if url is None:
        return None
    text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", url)
    base, has_query, rest = text.partition("?")
    query, has_fragment, fragment = (rest if has_query else base).partition("#")
    if not has_query:
        base, query = query, ""
    if has_fragment and fragment:
        fragment = _hide_parameters(fragment) if "=" in fragment else REDACTED
    shown = base + (("?" + _hide_parameters(query)) if has_query else "")
    return shown + (("#" + fragment) if has_fragment else "")


def scrub(text: str, secrets: Iterable[str | Secret | None] = (), *, hide_queries: bool = False) -> str:
    """``text`` with every registered secret value (and every one in ``secrets``, registered too) hidden by
    whole value, every URL userinfo, ``Bearer``/``Basic`` token and credential query parameter replaced
    by ``***``. ``hide_queries=True`` hides every query value of every URL in the text (log lines and
    errors about an endpoint we were configured with). For any text we emit that a server, an SDK or a
    tool produced."""
    for secret in secrets:
        register_secret(secret)
    if not isinstance(text, str) or not text:
        return text if isinstance(text, str) else ""
    pattern = _REGISTRY.pattern()
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)
    if hide_queries:
        return _URL.sub(lambda m: redact_url(m.group(0)) or "", text)
    return _SENSITIVE_PARAMETER.sub(r"\1" + REDACTED, text)


# ---------------------------------------------------------------------------------------------------------
# Logs


class RedactingFilter(logging.Filter):
    """Rewrites a record's message (with its arguments) and its traceback text through :func:`scrub`, every
    query value of a URL included. It never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record is the logger's problem, not ours to hide
            return True
        cleaned = scrub(message, hide_queries=True)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text, hide_queries=True)
        return True


_FILTER = RedactingFilter()


def install_log_redaction(logger_names: Iterable[str] = HTTP_LOGGERS) -> None:
    """Attach the redacting filter to the named loggers and to every child of theirs that exists now
    (idempotent). A filter on a logger sees only records created on that logger, not its children's, so
    each one is covered by name; call it after importing the libraries whose loggers it should cover."""
    families = tuple(logger_names)
    existing = [
        name
        for name in list(logging.root.manager.loggerDict)
        if any(name == f or name.startswith(f + ".") for f in families)
    ]
    for name in dict.fromkeys([*families, *existing]):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


@dataclass(frozen=True)
class BaseUrl:
    """An OpenAI-compatible base URL taken apart once, for every client that sends to one.

    ``wire`` is what the SDK gets as ``base_url``: no userinfo (it goes as Basic auth, :meth:`auth`), no
    query (the SDK appends paths as text, which would land inside the query; it goes as
    :meth:`default_query`) and no fragment (never sent over HTTP). ``shown`` is the URL for reprs, names and
    messages, userinfo and every query value as ``***``; ``secrets`` is everything to :func:`scrub` from
    text a server or the SDK sends back (all registered)."""

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
        if fragment and "=" not in fragment:
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
