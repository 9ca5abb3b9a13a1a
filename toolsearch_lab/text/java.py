"""How Java handles text, for the parts of Spring AI that this project reproduces bit for bit.

* UTF-16: Java strings count UTF-16 code units, so an astral character (an emoji) is two of them. That
  changes ``String.length()``, ``Matcher.start()`` and ``String.compareTo`` order (:func:`utf16_len`,
  :func:`utf16_offset`, :func:`java_order_key`).
* Blanks and trimming: ``String.isBlank`` uses ``Character.isWhitespace`` (:func:`java_is_blank`);
  ``String.trim`` strips every code point <= U+0020 (:data:`JAVA_TRIM`).
* Lower-casing: ``String.toLowerCase(Locale.ROOT)`` (:func:`java_root_lower`), including its final-sigma rule.
* Regular expressions: Java's ``(?i)`` is ASCII-only without UNICODE_CASE (:data:`ASCII_FOLD`), its ``.``
  excludes every line terminator (:data:`JAVA_LINE_TERMINATOR`), and its ``while (m.find())`` loop resumes
  one character after an empty match (:func:`compile_java`, :func:`java_find_all`).
* Spring's own regex escaping, which is not ``re.escape`` (:func:`spring_escape`).
"""

from __future__ import annotations

import re
import string
import unicodedata

__all__ = [
    "ASCII_FOLD",
    "JAVA_LINE_TERMINATOR",
    "JAVA_TRIM",
    "SPRING_REGEX_META",
    "compile_java",
    "has_astral",
    "java_find_all",
    "java_is_blank",
    "java_order_key",
    "java_root_lower",
    "spring_escape",
    "utf16_len",
    "utf16_offset",
]

JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim() strips every code point <= U+0020
# Java's "." excludes every line terminator, not just "\n".
JAVA_LINE_TERMINATOR = re.compile("[\n\r\x85\u2028\u2029]")
_JAVA_DOT = "[^\n\r\x85\u2028\u2029]"
# Java's (?i) without UNICODE_CASE folds ASCII letters only, so ASCII lower-casing keeps every hit in place.
ASCII_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# The characters Spring's RegexToolSearcher escapes with a backslash.
SPRING_REGEX_META = frozenset("\\.*+?^${}[]|()")

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# Character.isWhitespace: Zs/Zl/Zp except no-break spaces, plus these controls.
_JAVA_WS_CONTROLS = frozenset("\t\n\x0b\f\r\x1c\x1d\x1e\x1f")
_NO_BREAK_SPACES = frozenset("\u00a0\u2007\u202f")
# ConditionalSpecialCasing.isCased: Lu/Ll/Lt plus this fixed list of Other_Lowercase/Other_Uppercase ranges.
_JAVA_OTHER_CASED = (
    (0x02B0, 0x02B8),
    (0x02C0, 0x02C1),
    (0x02E0, 0x02E4),
    (0x0345, 0x0345),
    (0x037A, 0x037A),
    (0x1D2C, 0x1D61),
    (0x2160, 0x217F),
    (0x24B6, 0x24E9),
)


# ------------------------------------------------------------------------------------------------ UTF-16


def utf16_len(s: str) -> int:
    """Java's ``String.length()``: UTF-16 units, two for each astral character."""
    return len(s) + len(_ASTRAL.findall(s))


def utf16_offset(s: str, index: int) -> int:
    """The UTF-16 offset of the Python index ``index`` in ``s``, as Java's ``Matcher.start()`` counts it."""
    return index if s.isascii() else index + len(_ASTRAL.findall(s, 0, index))


def has_astral(s: str) -> bool:
    """Whether any character of ``s`` takes two UTF-16 units (so Python and Java offsets differ)."""
    return not s.isascii() and _ASTRAL.search(s) is not None


def java_order_key(s: str) -> bytes:
    """A sort key in Java's ``String.compareTo`` order, which compares UTF-16 code units: astral characters
    (surrogates, 0xD800-0xDFFF) sort before U+E000-U+FFFF, unlike Python's code-point order."""
    return s.encode("utf-16-be", "surrogatepass")


# ------------------------------------------------------------------------------------ blanks and case


def java_is_blank(s: str) -> bool:
    """Java's ``String.isBlank``: empty or only ``Character.isWhitespace`` characters."""
    return all(
        c in _JAVA_WS_CONTROLS
        or (unicodedata.category(c) in ("Zs", "Zl", "Zp") and c not in _NO_BREAK_SPACES)
        for c in s
    )


def java_root_lower(s: str) -> str:
    """``String.toLowerCase(Locale.ROOT)``. Python's ``str.lower`` never looks at the process locale and
    applies the same unconditional Unicode mappings as Java's ROOT locale (``"I"`` -> ``"i"``, ``"İ"`` ->
    ``"i̇"``, i.e. i + U+0307, two characters, never the Turkish dotless ``ı``). The one context-dependent
    rule, final sigma, uses word boundaries in Java, so capital sigma is handled here the Java way."""
    if "Σ" not in s:
        return s.lower()
    return "".join(
        ("ς" if _java_final_sigma(s, i) else "σ") if c == "Σ" else c.lower() for i, c in enumerate(s)
    )


def _java_cased(c: str) -> bool:
    if unicodedata.category(c) in ("Lu", "Ll", "Lt"):
        return True
    return any(lo <= ord(c) <= hi for lo, hi in _JAVA_OTHER_CASED)


def _letter(c: str) -> bool:
    return unicodedata.category(c)[0] == "L" or unicodedata.category(c) == "Mc"


def _wordish(c: str) -> bool:
    return _letter(c) or unicodedata.category(c)[0] == "N"


def _ignorable(c: str) -> bool:  # combining marks and format characters; the JDK treats U+00AD as mid-word
    return unicodedata.category(c) in ("Mn", "Me", "Cf") and c != "\u00ad"


def _base_before(s: str, j: int) -> str:
    """The nearest character at or before ``j`` that is not a combining mark ("" if there is none)."""
    while j >= 0 and _ignorable(s[j]):
        j -= 1
    return s[j] if j >= 0 else ""


def _in_word(s: str, j: int) -> bool:
    """Whether ``s[j]`` belongs to a word, by the JDK word BreakIterator rules (approximated): letters and
    digits run together; ``- _ ' " .`` U+00AD U+2027 join two letters, ``' " . ,`` join two digits;
    combining marks attach to a preceding letter or digit."""
    c, before = s[j], _base_before(s, j - 1)
    after = s[j + 1] if j + 1 < len(s) else ""
    if _wordish(c):
        return True
    if _ignorable(c):
        return bool(before) and _wordish(before)
    if not before or not after:
        return False
    mid_word = c in "'\".\u00ad\u2027" or unicodedata.category(c) in ("Pd", "Pc")
    if mid_word and _letter(before) and _letter(after):
        return True
    return (
        c in "'\".," and _wordish(before) and not _letter(before) and _wordish(after) and not _letter(after)
    )


def _java_final_sigma(s: str, i: int) -> bool:
    """Java's Final_Cased test for the capital sigma at ``s[i]``: a cased character before it and none after
    it *within the same word* (see :func:`_in_word`). Python's own rule only skips case-ignorable
    characters, so ``"ΑΣ-Β".lower()`` gives ``"ας-β"`` where Java gives ``"ασ-β"``."""
    j = i - 1
    while j >= 0 and _in_word(s, j) and not _java_cased(s[j]):
        j -= 1
    if j < 0 or not _in_word(s, j):
        return False  # no cased character before the sigma in its word
    j = i + 1
    while j < len(s) and _in_word(s, j):
        if _java_cased(s[j]):
            return False
        j += 1
    return True


# ------------------------------------------------------------------------------------ regular expressions


def spring_escape(token: str) -> str:
    """Backslash before each of ``\\ . * + ? ^ $ { } [ ] | ( )`` and nothing else (not ``re.escape``)."""
    return "".join("\\" + c if c in SPRING_REGEX_META else c for c in token)


def _java_to_python(pattern: str) -> str:
    """Rewrite Java's ``.`` outside character classes; everything Spring's converter emits is otherwise
    identical in both dialects (escaped literals, ``|``, groups, inline ``(?i)``)."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":  # leading "]" is literal
                out.append(pattern[i : i + (2 if pattern[i + 1] == "]" else 3)])
                i += len(out[-1])
                continue
        elif c == ".":
            c = _JAVA_DOT
        out.append(c)
        i += 1
    return "".join(out)


def compile_java(pattern: str) -> re.Pattern:
    """Compile a Java regex as Python ``re`` with Java's meaning of ``.`` and of ``(?i)``. Only ``.`` is
    translated; Java-only syntax (``\\Q..\\E``, Unicode-aware ``\\b``) is not."""
    # re.ASCII makes the inline (?i) ASCII-only, like Java without UNICODE_CASE: "é" does not match "É".
    return re.compile(_java_to_python(pattern), re.ASCII)


def java_find_all(rx: re.Pattern, text: str) -> list[tuple[int, int]]:
    """Every hit of Java's ``while (m.find())`` loop. While hits are non-empty, finditer is identical; after
    an empty hit Java resumes one character later, so we continue the Java way from there."""
    spans: list[tuple[int, int]] = []
    for m in rx.finditer(text):
        spans.append(m.span())
        if m.start() == m.end():
            break
    else:
        return spans
    pos = spans[-1][1] + 1
    while pos <= len(text):
        found = rx.search(text, pos)
        if found is None:
            break
        spans.append(found.span())
        pos = found.end() + 1 if found.start() == found.end() else found.end()
    return spans
