"""The process-wide registry of secret values, and :class:`Secret`, the holder that registers its value.

Every spelling of every registered value is matched by **one** compiled pattern, a trie of the values
(rebuilt only when the registry changes): at each position of a text the regex engine follows one path down
the trie, so a scrub costs about the same for 5 values as for 5,000 (``benchmarks/secrets_scrub.py``). A
value is matched as a whole token: where it begins (ends) with a letter or digit, the character before
(after) it must not be one, a percent-escape such as ``%20`` before it counting as a boundary, so
``abcdefgh1`` never matches inside ``xabcdefgh12``. A value of :data:`LONG_SECRET_CHARS` or more matches
anywhere: that long, it is that secret even glued to other text. Of the values a text position could start,
the longest that keeps its boundaries wins, so a value never leaves a tail of a longer one behind.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator

__all__ = [
    "LONG_SECRET_CHARS",
    "MIN_SCRUB_CHARS",
    "REDACTED",
    "Secret",
    "isolated_registry",
    "register_secret",
    "registered_pattern",
    "registered_secret_count",
    "spellings",
]

REDACTED = "***"
# A registered value shorter than this is not scrubbed from free text: short values match inside ordinary
# words (a user name ``u`` turned "Connection refused" into "Connection ref***sed"). Such a value is still
# a Secret (its repr is '***') and its URL still hides it (redact_url).
MIN_SCRUB_CHARS = 8
# A registered value this long is hidden wherever it appears, even inside a longer token.
LONG_SECRET_CHARS = 16

_NOT_AFTER = r"(?![A-Za-z0-9])"


class _Registry:
    """Registered secret values (every spelling a text may hold) and the one pattern matching them."""

    def __init__(self) -> None:
        self.values: dict[str, None] = {}  # an ordered set
        self.lock = threading.Lock()
        self._pattern: re.Pattern[str] | None = None

    def add(self, value: str) -> None:
        forms = spellings(value)
        with self.lock:
            fresh = [s for s in forms if s not in self.values]
            for spelling in fresh:
                self.values[spelling] = None
            if fresh:
                self._pattern = None

    def pattern(self) -> re.Pattern[str] | None:
        with self.lock:
            if self._pattern is None and self.values:
                self._pattern = re.compile(_trie_pattern(self.values))
            return self._pattern


def spellings(value: str) -> list[str]:
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
    return sorted(f for f in forms if len(f) >= MIN_SCRUB_CHARS)


def _boundaries(value: str) -> str:
    """What must hold around ``value`` where it ends in the text (see the module docstring). The check
    before it is a look-behind over the whole value, so it can sit at the value's end in the trie, beside
    the check after it: one trie then holds values with and without boundaries."""
    if len(value) >= LONG_SECRET_CHARS:
        return ""
    before = ""
    if value[0].isalnum():
        n = len(value)
        before = rf"(?:(?<![A-Za-z0-9][\s\S]{{{n}}})|(?<=%[0-9A-Fa-f]{{2}}[\s\S]{{{n}}}))"
    return before + (_NOT_AFTER if value[-1].isalnum() else "")


def _trie_pattern(values: dict[str, None]) -> str:
    """One regular expression for every value: a trie whose branches are tried longest first, each value's
    boundaries checked where it ends."""
    root: dict[str, dict] = {}
    ends: dict[int, str] = {}  # id(node) -> the boundary checks of the value ending there
    for value in values:
        node = root
        for char in value:
            node = node.setdefault(char, {})
        ends[id(node)] = _boundaries(value)
    return _node_pattern(root, ends)


def _node_pattern(node: dict[str, dict], ends: dict[int, str]) -> str:
    branches = []
    for char in sorted(node):
        text, child = [re.escape(char)], node[char]
        while len(child) == 1 and id(child) not in ends:  # a run of single children: one literal
            ((char, child),) = child.items()
            text.append(re.escape(char))
        branches.append("".join(text) + (_node_pattern(child, ends) if child or id(child) in ends else ""))
    if id(node) in ends:
        branches.append(ends[id(node)])  # after every longer branch: the longest value wins
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


_REGISTRY = _Registry()


def registered_pattern() -> re.Pattern[str] | None:
    """The one pattern matching every registered value (None while the registry is empty)."""
    return _REGISTRY.pattern()


def register_secret(value: str | Secret | None) -> None:
    """Add ``value`` to the registry that :func:`~toolsearch_lab.secrets.scrub` hides (a :class:`Secret`
    registers itself unless made with ``register=False``). A value shorter than :data:`MIN_SCRUB_CHARS`
    is kept out of free-text scrubbing (see :data:`MIN_SCRUB_CHARS`)."""
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
    """A value that shows as ``'***'`` in ``repr``/``str``, so ``vars(obj)`` and tracebacks hold no key.
    ``reveal()`` is the one way to read it, at the point where it is sent. Creating one registers the value
    for :func:`~toolsearch_lab.secrets.scrub`; ``register=False`` is for a value that is kept out of
    reprs without being hidden from text: a setting that is no secret (an ``env`` timezone), or a whole URL
    whose userinfo and query values are registered on their own. ``registered`` says which it is."""

    __slots__ = ("_value", "registered")

    def __init__(self, value: str, *, register: bool = True) -> None:
        if not isinstance(value, str):
            raise TypeError(f"Secret holds a string, got {type(value).__name__}")
        self._value = value
        self.registered = register
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
