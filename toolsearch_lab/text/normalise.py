"""Light English text normalisation for the hybrid index's keyword side: word tokens with identifiers
split, and two small stemmers (no dependencies).

Why stem at all? Tool descriptions and requests are written by different people: the description says
"Search papers by keyword", the request "I'm searching for a paper". Lucene's StandardAnalyzer (and so
Spring's keyword index) matches only identical tokens, so "searching" misses "search" and "papers" misses
"paper". Conflating inflections is the textbook fix; it costs nothing at query time.

* :func:`s_stem` - Harman's "S" stemmer (1991) plus possessive removal: plurals only (``papers`` ->
  ``paper``, ``queries`` -> ``query``, ``user's`` -> ``user``). Very conservative, like Lucene's
  ``EnglishMinimalStemmer``.
* :func:`porter_stem` - Porter's 1980 algorithm (the original rules, plus the widely used ``bli``/``logi``
  revisions): also conflates ``searching``/``searched``/``search``, ``generation``/``generate``,
  ``connection``/``connect`` (not every derivation: ``conversion`` -> ``convers``, ``convert`` ->
  ``convert``). More aggressive, and the standard choice for keyword retrieval in English.

:func:`keyword_tokens` is the tokenizer both feed: lower-cased runs of letters/digits, with camelCase,
snake_case, kebab-case and dotted identifiers split into their words (``getStockPrice`` -> ``get stock
price``), possessive ``'s`` dropped, and (optionally) English stop words removed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Literal

from toolsearch_lab.text.identifiers import split_identifiers

__all__ = ["STEMMERS", "keyword_tokens", "porter_stem", "s_stem", "stem_tokens"]

# --------------------------------------------------------------------------------------------- tokenizer
# A word: letters (any script) and digits. Apostrophes inside words are kept for the possessive check.
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def keyword_tokens(text: str, stop_words: frozenset[str] | None = None) -> list[str]:
    """Lower-cased word tokens of ``text``; identifiers split at ``_ - . : /`` and camelCase boundaries.

    ``keyword_tokens("getStockPrice for the user's_portfolio")`` -> ``['get', 'stock', 'price', 'for',
    'the', 'user', 'portfolio']``. Tokens in ``stop_words`` (compared lower-cased) are dropped.
    """
    if not text:
        return []
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        for part in split_identifiers(match.group(0), separators=""):
            word = part.lower()
            if word.endswith(("'s", "’s")):
                word = word[:-2]
            word = word.replace("'", "")
            if word and (stop_words is None or word not in stop_words):
                out.append(word)
    return out


# ------------------------------------------------------------------------------------------- S stemmer


def s_stem(word: str) -> str:
    """Harman's S stemmer with possessive removal (plural forms only). The rules, first match wins:

    * ``'s`` at the end is removed;
    * ``-ies`` -> ``-y`` unless preceded by ``e`` or ``a``;
    * ``-es`` -> ``-e`` unless preceded by ``a``, ``e`` or ``o``;
    * ``-s`` -> ``""`` unless preceded by ``u`` or ``s``;

    words of 3 letters or fewer are left alone. ``queries`` -> ``query``, ``papers`` -> ``paper``,
    ``files`` -> ``file``, ``status`` and ``address`` unchanged.
    """
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


# ------------------------------------------------------------------------------------------ Porter 1980


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in "aeiou":
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``[C](VC)^m[V]``."""
    m, prev_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """*o: the word ends consonant-vowel-consonant, the last not w, x or y (``hop``, not ``snow``)."""
    return (
        len(word) >= 3
        and _is_consonant(word, len(word) - 3)
        and not _is_consonant(word, len(word) - 2)
        and _is_consonant(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
    ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
    "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _longest(word: str, suffixes) -> str | None:
    best = None
    for s in suffixes:
        suffix = s if isinstance(s, str) else s[0]
        if word.endswith(suffix) and (best is None or len(suffix) > len(best)):
            best = suffix
    return best


def _porter_step1(word: str) -> str:
    """Porter's step 1: plurals (1a), -eed / -ed / -ing with the tidying after them (1b), y -> i (1c)."""
    # Step 1a: plurals.
    if word.endswith(("sses", "ies")):  # -sses -> -ss, -ies -> -i
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    # Step 1b: -eed, -ed, -ing.
    tidy = False
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    elif word.endswith("ed") and _has_vowel(word[:-2]):
        word, tidy = word[:-2], True
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        word, tidy = word[:-3], True
    if tidy:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _double_consonant(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    # Step 1c: y -> i after a vowel-containing stem.
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


@functools.lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    """Porter's stemmer (M.F. Porter, "An algorithm for suffix stripping", 1980) for one lower-case word:
    ``searching`` -> ``search``, ``papers`` -> ``paper``, ``generation`` -> ``gener``, ``generate`` ->
    ``gener``. Words of two letters or fewer, and words with non-ASCII letters, are returned unchanged."""
    if len(word) <= 2 or not word.isascii() or not word.isalpha():
        return word
    word = _porter_step1(word)
    # Steps 2 and 3: double and single suffixes, when the stem has m > 0.
    for table in (_STEP2, _STEP3):
        suffix = _longest(word, table)
        if suffix is not None:
            stem = word[: -len(suffix)]
            if _measure(stem) > 0:
                word = stem + dict(table)[suffix]
    # Step 4: drop a suffix when m > 1 (-ion only after s or t).
    suffix = _longest(word, _STEP4)
    if suffix is not None:
        stem = word[: -len(suffix)]
        if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
            word = stem
    # Step 5: final -e, and -ll -> -l.
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


Stemmer = Literal["none", "s", "porter"]
STEMMERS: dict[Stemmer, Callable[[str], str]] = {
    "none": lambda w: w,
    "s": s_stem,
    "porter": porter_stem,
}


def stem_tokens(tokens: list[str], stemmer: Stemmer = "porter") -> list[str]:
    """``tokens`` with ``stemmer`` (a key of :data:`STEMMERS`) applied to each."""
    try:
        fn = STEMMERS[stemmer]
    except KeyError:
        raise ValueError(f"stemmer must be one of {list(STEMMERS)}, got {stemmer!r}") from None
    return [fn(t) for t in tokens]
