"""Hiding secrets where text leaves the package. :func:`scrub` hides the registered secrets: what the model
reads goes through it (a key-shaped token a tool returns may be what the model must pass on, so only what
is registered is hidden from it). :func:`hide_keys` hides every key-shaped string on top: what a person
sees (the terminal, widgets, error messages) and what is logged (:class:`RedactingFilter`) goes through it.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Iterable

from toolsearch_lab.secrets.keys import SENSITIVE_QUERY_KEYS, find_keys
from toolsearch_lab.secrets.registry import REDACTED, Secret, register_secret, registered_pattern
from toolsearch_lab.secrets.urls import HIDDEN_USERINFO, URL_USERINFO, hide_parameters

__all__ = [
    "HTTP_LOGGERS",
    "SECRET_HIDDEN",
    "RedactedError",
    "RedactingFilter",
    "hide_keys",
    "install_log_redaction",
    "scrub",
]

# The flag a record carries when something in it was shown as ***: on a tool result the model read with a
# registered secret hidden, or on a replayed record whose view had a key-shaped string hidden.
SECRET_HIDDEN = "secret-hidden"

_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]+)")
_SENSITIVE_PARAMETER = re.compile(
    r"(?i)([?&#;](?:" + "|".join(re.escape(k) for k in sorted(SENSITIVE_QUERY_KEYS)) + r")=)[^&#\s\"']*"
)
# Any URL in text, up to whitespace or a quote; its query (and name=value fragment) is what
# hide_queries rewrites.
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+")
# The loggers that print request URLs: httpx's INFO "HTTP Request: POST <url>", the openai SDK's DEBUG
# request options and retry lines, httpcore's connection traces and the MCP SDK's "Connecting to <url>".
# Each name covers its children (install_log_redaction walks them).
HTTP_LOGGERS = ("httpx", "httpcore", "httpx2", "httpcore2", "openai", "mcp")


def _credential(scheme: str, token: str) -> bool:
    """Whether the word after ``Bearer``/``Basic`` is a credential rather than prose ("basic arithmetic",
    "Bearer Token authentication"): a Basic value that decodes to ``user:password``, or a token of 8+
    characters with a digit, a symbol or a capital past its first letter."""
    if scheme.lower() == "basic":
        try:
            return ":" in base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            pass
    return len(token) >= 8 and (
        any(c.isdigit() or c in "._~+/=" for c in token) or any(c.isupper() for c in token[1:])
    )


def _hide_credential(match: re.Match[str]) -> str:
    scheme, space, token = match.groups()
    return f"{scheme}{space}{REDACTED}" if _credential(scheme, token) else match.group(0)


def _hide_query(match: re.Match[str]) -> str:
    """A URL of free text with its userinfo, every query value and every ``name=value`` fragment value
    hidden; a bare fragment (``#installation``) is an anchor and stays."""
    url = URL_USERINFO.sub(HIDDEN_USERINFO, match.group(0))
    rest, has_fragment, fragment = url.partition("#")
    base, has_query, query = rest.partition("?")
    shown = base + ("?" + hide_parameters(query) if has_query else "")
    if has_fragment:
        shown += "#" + (hide_parameters(fragment) if "=" in fragment else fragment)
    return shown


class RedactedError(RuntimeError):
    """An error whose message is shown (a terminal, a notebook, the model): its secrets are hidden when it
    is made (:func:`scrub`), and ``secret_hidden`` says whether one was, so that whoever passes it on (the
    loop, to the model) can flag it without reading its words."""

    def __init__(self, message: str = "") -> None:
        shown = hide_keys(message)
        super().__init__(shown)
        self.secret_hidden = shown != message


def scrub(text: str, secrets: Iterable[str | Secret | None] = (), *, hide_queries: bool = False) -> str:
    """``text`` with every registered secret value (and every one in ``secrets``, registered too; a
    :class:`Secret` made with ``register=False`` is no secret and stays) hidden by whole value, every URL
    userinfo, ``Bearer``/``Basic`` credential and credential query parameter replaced by ``***``.
    ``hide_queries=True`` hides every query value of every URL in the text (log lines about an endpoint
    we were configured with). For any text we show, log or send to a model that a server, an SDK or a tool
    produced."""
    for secret in secrets:
        if not isinstance(secret, Secret) or secret.registered:
            register_secret(secret)
    if not isinstance(text, str) or not text:
        return text if isinstance(text, str) else ""
    pattern = registered_pattern()
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    text = _AUTH_SCHEME.sub(_hide_credential, text)
    if hide_queries:
        return _URL.sub(_hide_query, text)
    text = URL_USERINFO.sub(HIDDEN_USERINFO, text)
    return _SENSITIVE_PARAMETER.sub(r"\1" + REDACTED, text)


def hide_keys(text: str, secrets: Iterable[str | Secret | None] = (), *, hide_queries: bool = False) -> str:
    """``text`` through :func:`scrub` (with ``secrets`` and ``hide_queries``), and every key-shaped string
    in it (:func:`~toolsearch_lab.secrets.keys.find_keys`) hidden too: for text shown to a person or
    logged, whose keys nobody may have registered (a replayed transcript, a server's error)."""
    text = scrub(text, secrets, hide_queries=hide_queries)
    if not text:
        return text
    keys = find_keys(text)
    if not keys:
        return text
    parts, last = [], 0
    for key in keys:
        parts += [text[last : key.start], REDACTED]
        last = key.end
    return "".join(parts) + text[last:]


# ---------------------------------------------------------------------------------------------------------
# Logs


class RedactingFilter(logging.Filter):
    """Rewrites a record's message (with its arguments) and its traceback text through :func:`hide_keys`,
    every query value of a URL included. It never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record is the logger's problem, not ours to hide
            return True
        cleaned = hide_keys(message, hide_queries=True)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = hide_keys(record.exc_text, hide_queries=True)
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
