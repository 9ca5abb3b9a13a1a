"""The one identifier splitter: camelCase, snake_case, kebab-case, dotted and namespaced names into words.

Tool names are identifiers (``getStockPrice``, ``get_weather``, ``github.list-issues``, ``mcp:search``)
while requests are prose, so every index that wants a name's words to meet a query's words splits them the
same way, here. The boundaries:

* a run of separator characters (by default ``_ - . / :``) is one boundary;
* lower case or digit followed by upper case is a boundary (``getWeather`` -> ``get``, ``Weather``;
  ``v2Api`` -> ``v2``, ``Api``);
* with ``acronyms=True`` (the default) an upper-case run followed by a capitalised word splits before the
  word's capital (``HTTPServer`` -> ``HTTP``, ``Server``);
* letters and digits are *not* split from each other (``utf8``, ``v2``, ``ipv6`` stay whole), since version
  and encoding names read as one word.

Case is kept: callers lower-case with their own analyzer's rules (Lucene's per-code-point lowering, or
``str.lower`` for embedding text).

Options, and who uses which (each keeps its callers' behaviour exactly):

* ``separators`` - the characters that separate words. The embedders and the vector index use the default
  ``_-./:``; the Lucene analyzer's optional splitting uses ``_.:`` (its tokenizer already breaks at ``-``
  and ``/``); the keyword tokenizer passes ``""`` (its token pattern already excludes separators).
* ``unicode`` - camelCase boundaries on any script's upper/lower case letters (``\\p{Lu}``/``\\p{Ll}``)
  rather than ASCII only; the Lucene analyzer sets it.
* ``acronyms`` - whether the ``HTTPServer`` rule applies; the simulated agent's word matcher leaves it off.

:func:`split_identifiers` returns the parts; :func:`spaced_identifiers` returns the text with every
boundary replaced by one space and everything else untouched, for text that is read as prose afterwards.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import regex

__all__ = ["DEFAULT_SEPARATORS", "split_identifiers", "spaced_identifiers"]

DEFAULT_SEPARATORS = "_-./:"

_CAMEL_ASCII = r"(?<=[a-z0-9])(?=[A-Z])"
_ACRONYM_ASCII = r"(?<=[A-Z])(?=[A-Z][a-z])"
_CAMEL_UNICODE = r"(?<=[\p{Ll}\p{Nd}])(?=\p{Lu})"
_ACRONYM_UNICODE = r"(?<=\p{Lu})(?=\p{Lu}\p{Ll})"

Splitter = Callable[[str], list[str]]


@functools.lru_cache(maxsize=16)
def _splitters(separators: str, unicode: bool, acronyms: bool) -> tuple[Splitter | None, Splitter]:
    separator = re.compile(f"[{re.escape(separators)}]+").split if separators else None
    if unicode:
        rule = _CAMEL_UNICODE + (f"|{_ACRONYM_UNICODE}" if acronyms else "")
        return separator, regex.compile(rule, regex.V1).split
    rule = _CAMEL_ASCII + (f"|{_ACRONYM_ASCII}" if acronyms else "")
    return separator, re.compile(rule).split


def split_identifiers(
    text: str,
    *,
    separators: str = DEFAULT_SEPARATORS,
    unicode: bool = False,
    acronyms: bool = True,
    keep_empty: bool = False,
) -> list[str]:
    """The words of ``text`` split at separators and camelCase boundaries, case kept.

    ``split_identifiers("getStockPrice")`` -> ``['get', 'Stock', 'Price']``;
    ``split_identifiers("github.list-issues")`` -> ``['github', 'list', 'issues']``. Text other than
    separators (spaces, commas) stays inside the parts. ``keep_empty=True`` keeps the empty parts a leading
    or trailing separator leaves, so ``" ".join`` of the result equals :func:`spaced_identifiers`.
    """
    if not isinstance(text, str):
        raise TypeError(f"text to split must be a str, got {type(text).__name__}")
    split_separators, split_camel = _splitters(separators, unicode, acronyms)
    chunks = split_separators(text) if split_separators is not None else [text]
    parts = [part for chunk in chunks for part in split_camel(chunk)]
    return parts if keep_empty else [p for p in parts if p]


def spaced_identifiers(
    text: str, *, separators: str = DEFAULT_SEPARATORS, unicode: bool = False, acronyms: bool = True
) -> str:
    """``text`` with each identifier boundary replaced by one space: ``get_weather`` -> ``get weather``,
    ``HTTPServer`` -> ``HTTP Server``; the rest (case, punctuation, spacing) is left as it was."""
    return " ".join(
        split_identifiers(text, separators=separators, unicode=unicode, acronyms=acronyms, keep_empty=True)
    )
