"""Credentials in the URLs and headers we are configured with, and how those URLs are shown.

A configured URL can carry a credential in its userinfo (``http://user:KEY@host/v1``), in a query or
fragment parameter (``?api-key=KEY``) or as a bare fragment. Its userinfo and bare fragment are always
registered; a query value is registered by the rule of :mod:`~toolsearch_lab.secrets.keys` (its name says
so, or it is key-shaped), so ``?api-version=2024-06-01`` never hides a date in other text. Showing the URL
itself (:func:`redact_url`) hides every query value whatever its name: that is a display of the endpoint,
not of data.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field

from toolsearch_lab.secrets.keys import setting_secret
from toolsearch_lab.secrets.registry import REDACTED, Secret, register_secret

__all__ = [
    "PLAIN_HEADERS",
    "BaseUrl",
    "header_secret",
    "query_credentials",
    "redact_url",
    "split_url_credentials",
    "split_url_query",
    "url_secret",
]

# Headers whose values are protocol settings, never credentials: not registered (their values, such as
# "application/json", would otherwise be hidden from every text). Every other header value is registered.
PLAIN_HEADERS = frozenset({"accept", "accept-language", "content-type", "user-agent", "mcp-protocol-version"})
_ANY_PARAMETER = re.compile(r"([?&;]|^)([^=&#;]*)=([^&#;]*)")
# The userinfo of a URL in text, after its scheme's "://" (searched from the "://": a fast literal).
URL_USERINFO = re.compile(r"(?<=[A-Za-z0-9+.-])://[^/\s@?#]*@")
HIDDEN_USERINFO = "://" + REDACTED + "@"


def header_secret(name: str, value: str) -> Secret:
    """A header value as a :class:`Secret`, registered unless the header is one of :data:`PLAIN_HEADERS`."""
    return Secret(value, register=name.strip().lower() not in PLAIN_HEADERS)


def url_secret(url: str) -> Secret:
    """A URL we were configured with as a :class:`Secret` (so no repr shows it), with the parts that can
    hold a credential registered: the userinfo, the query and fragment values that are secrets
    (:func:`query_credentials`) and a bare fragment. The URL as a whole is not registered: its host and
    path are what messages name."""
    _, user, _ = split_url_credentials(url)
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
    """Every query (and fragment) parameter value of ``url`` as a :class:`Secret`, both as written and
    percent-decoded, registered when it is a secret by its name or shape
    (:func:`~toolsearch_lab.secrets.keys.setting_secret`: ``?x-api-key=``, ``?sig=``, ``?code=``, a
    key-shaped value under any name)."""
    parts = urllib.parse.urlsplit(url)
    found: list[Secret] = []
    for text in (parts.query, parts.fragment):
        for match in _ANY_PARAMETER.finditer(text):
            name, value = urllib.parse.unquote_plus(match.group(2)), match.group(3)
            for spelling in dict.fromkeys((value, urllib.parse.unquote_plus(value))):
                if spelling:
                    found.append(setting_secret(name, spelling))
    return found


def split_url_query(url: str) -> tuple[str, dict[str, str]]:
    """``(url without query string, its parameters)``. HTTP SDKs append paths to a base URL as text, so a
    base URL's query (``…/v1?api-key=KEY``) has to travel as default query parameters instead."""
    parts = urllib.parse.urlsplit(url)
    if not parts.query:
        return url, {}
    params = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit(parts._replace(query="")), params


def hide_parameters(text: str) -> str:
    """``name=value`` pairs of a query or fragment with every value ``***`` (names kept)."""

    def hide(match: re.Match[str]) -> str:
        return f"{match.group(1)}{match.group(2)}={REDACTED}" if match.group(3) else match.group(0)

    return _ANY_PARAMETER.sub(hide, text)


def redact_url(url: str | None) -> str | None:
    """A URL we were configured with, safe to show: userinfo becomes ``***@`` and **every** query and
    fragment parameter value ``***`` (``?region=eu&key=K`` → ``?region=***&key=***``); a fragment that is
    not ``name=value`` becomes ``#***``. Names stay, so the URL still says what it holds."""
    if url is None:
        return None
    text = URL_USERINFO.sub(HIDDEN_USERINFO, url)
    base, has_query, rest = text.partition("?")
    query, has_fragment, fragment = (rest if has_query else base).partition("#")
    if not has_query:
        base, query = query, ""
    if has_fragment and fragment:
        fragment = hide_parameters(fragment) if "=" in fragment else REDACTED
    shown = base + (("?" + hide_parameters(query)) if has_query else "")
    return shown + (("#" + fragment) if has_fragment else "")


@dataclass(frozen=True)
class BaseUrl:
    """An OpenAI-compatible base URL taken apart once, for every client that sends to one.

    ``wire`` is what the SDK gets as ``base_url``: no userinfo (it goes as Basic auth, :meth:`auth`), no
    query (the SDK appends paths as text, which would land inside the query; it goes as
    :meth:`default_query`) and no fragment (never sent over HTTP). ``shown`` is the URL for reprs, names and
    messages, userinfo and every query value as ``***``; ``secrets`` is everything to
    :func:`~toolsearch_lab.secrets.scrub` from text a server or the SDK sends back (all registered)."""

    shown: str
    wire: str
    user: Secret | None = None
    password: Secret | None = None
    query: Mapping[str, Secret] = field(default_factory=dict)
    secrets: tuple[Secret, ...] = ()

    @classmethod
    def parse(cls, url: str) -> BaseUrl:
        bare, user, password = split_url_credentials(url)
        secrets = [s for s in query_credentials(bare) if s.registered]
        bare, fragment = urllib.parse.urldefrag(bare)
        if fragment and "=" not in fragment:
            secrets.append(Secret(fragment))
        wire, query = split_url_query(bare)
        shown = (redact_url(bare) or "") + (f"#{REDACTED}" if fragment else "")
        named = Secret(user) if user is not None else None
        secrets += [s for s in (named, password) if s]
        held = {k: setting_secret(k, v) for k, v in query.items()}
        return cls(shown, wire, named, password, held, tuple(secrets))

    def auth(self) -> tuple[str, str] | None:
        """``(user, password)`` for Basic auth when the URL carried userinfo."""
        if self.user is None:
            return None
        return self.user.reveal(), self.password.reveal() if self.password is not None else ""

    def default_query(self) -> dict[str, str] | None:
        return {name: value.reveal() for name, value in self.query.items()} or None
