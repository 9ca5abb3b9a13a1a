"""A Python take on Lucene's ``StandardAnalyzer`` (Lucene 9.x): StandardTokenizer word breaks (UAX #29),
then a per-code-point lower-case, and an empty stop set. Used by :mod:`toolsearch_lab.index.bm25.index`.

What the tokenizer does (the rule numbers are UAX #29's word-break rules, which Lucene's JFlex grammar
implements):

* letters and digits join (WB5, WB8-10); ``_`` and other connector punctuation join anything (WB13a/b),
  so ``get_weather`` stays whole;
* one ``:`` ``.`` ``'`` between two letters joins (WB6/7): ``mcp:search``, ``weather.get``, ``it's``;
* one ``,`` ``;`` ``.`` ``'`` between two digits joins (WB11/12): ``1,000``, ``3.14``;
* everything else breaks and is dropped: ``get-weather`` -> ``get``, ``weather``; ``30°C`` -> ``30``, ``c``;
* Han ideographs and Hiragana are one token per character, Katakana and Thai/Lao/Khmer/Myanmar runs are one
  token, emoji are tokens (Lucene's IDEOGRAPHIC, HIRAGANA, KATAKANA, SOUTHEAST_ASIAN and EMOJI types);
* combining marks, format characters and ZWJ stay attached to the character before them (WB4);
* tokens longer than 255 characters are chopped into 255-character pieces (Lucene >= 7 behaviour);
* no stemming and no stop words (Lucene >= 8 StandardAnalyzer default).

Character classes come from the Unicode Word_Break property as the ``regex`` module knows it, so the
Unicode version can differ slightly from the one Lucene 9.12 was generated from; tool text is not affected.

``split_identifier`` is *not* Lucene: it is the optional camelCase / snake_case / dotted splitting that
``BM25ToolIndex(split_identifiers=True)`` adds on top.
"""

from __future__ import annotations

import re

import regex

from toolsearch_lab.text.identifiers import split_identifiers

MAX_TOKEN_LENGTH = 255

# --- ASCII fast path (the common case for tool names and descriptions) -------------------------------
# A token is a run of [A-Za-z0-9_], where a single ':' '.' or "'" joins two letters and a single
# ',' ';' '.' or "'" joins two digits. Runs made only of '_' are not tokens (UAX #29 needs a letter or digit).
_ASCII_TOKEN = re.compile(r"(?:[A-Za-z0-9_]|(?<=[A-Za-z])[:.'](?=[A-Za-z])|(?<=[0-9])[,;.'](?=[0-9]))+")
# The same tokens, on text already lower-cased (ASCII lower-casing keeps every character's class), with the
# lookarounds only tried at punctuation: about twice as fast as matching character by character.
_ASCII_TOKEN_LOWER = re.compile(r"(?:[a-z0-9_]+(?:(?<=[a-z])[:.'](?=[a-z])|(?<=[0-9])[,;.'](?=[0-9]))?)+")

# --- General Unicode path ------------------------------------------------------------------------------
_EX = r"[\p{WB=Extend}\p{WB=Format}\p{WB=ZWJ}]*"  # WB4: these ride along with the previous character
_A = rf"[\p{{WB=ALetter}}\p{{WB=Hebrew_Letter}}]{_EX}"
_N = rf"\p{{WB=Numeric}}{_EX}"
_K = rf"\p{{WB=Katakana}}{_EX}"
_E = rf"\p{{WB=ExtendNumLet}}{_EX}"
_MID_LETTER = rf"[\p{{WB=MidLetter}}\p{{WB=MidNumLet}}\p{{WB=Single_Quote}}]{_EX}"
_MID_NUM = rf"[\p{{WB=MidNum}}\p{{WB=MidNumLet}}\p{{WB=Single_Quote}}]{_EX}"
# A maximal run of letters/digits with single mid characters between like classes.
_AN_RUN = rf"(?:{_A}(?:{_MID_LETTER}{_A})*|{_N}(?:{_MID_NUM}{_N})*)+"
_K_RUN = rf"(?:{_K})+"
_SEG = rf"(?:{_AN_RUN}|{_K_RUN})"
# Letters/digits and Katakana do not join directly (no UAX #29 rule), only through ExtendNumLet.
_WORD = rf"(?:{_E})*{_SEG}(?:(?:{_E})+{_SEG})*(?:{_E})*"
_HAN = rf"\p{{Script=Han}}{_EX}"
_HIRAGANA = rf"\p{{Script=Hiragana}}{_EX}"
_SOUTHEAST_ASIAN = rf"(?:\p{{Line_Break=Complex_Context}}{_EX})+"
_PICTO = rf"\p{{Extended_Pictographic}}{_EX}"
_EMOJI = rf"(?:\p{{Regional_Indicator}}{{2}}|{_PICTO}(?:\u200d{_PICTO})*)"
_UNICODE_TOKEN = regex.compile(
    rf"(?P<word>{_WORD})|(?P<single>{_HAN}|{_HIRAGANA})|(?P<run>{_SOUTHEAST_ASIAN})|(?P<emoji>{_EMOJI})",
    regex.V1,
)


def _lower(token: str) -> str:
    """Java's ``Character.toLowerCase`` per code point, as Lucene's LowerCaseFilter does.

    Python's ``str.lower`` applies full, context-dependent mappings (final sigma, 'İ' -> 'i̇'); Java's
    per-code-point mapping does not, so non-ASCII tokens are lowered one character at a time.
    """
    if token.isascii():
        return token.lower()
    out = []
    for ch in token:
        low = ch.lower()
        if len(low) != 1:  # only U+0130 'İ' has a multi-character lower case; Java maps it to 'i'
            low = "i" if ch == "\u0130" else ch
        out.append(low)
    return "".join(out)


def _chop(token: str) -> list[str]:
    if len(token) <= MAX_TOKEN_LENGTH:
        return [token]
    return [token[i : i + MAX_TOKEN_LENGTH] for i in range(0, len(token), MAX_TOKEN_LENGTH)]


def raw_tokens(text: str) -> list[str]:
    """The StandardTokenizer tokens of ``text`` in their original case (before the lower-case filter)."""
    if not isinstance(text, str):
        raise TypeError(f"text to analyse must be a str, got {type(text).__name__}")
    if text.isascii():
        tokens = [m for m in _ASCII_TOKEN.findall(text) if m.strip("_")]
    else:
        tokens = [m.group(0) for m in _UNICODE_TOKEN.finditer(text)]
    if any(len(t) > MAX_TOKEN_LENGTH for t in tokens):
        tokens = [piece for t in tokens for piece in _chop(t)]
    return tokens


def analyze(text: str) -> list[str]:
    """StandardAnalyzer: tokens, lower-cased, in order (one position each)."""
    if isinstance(text, str) and text.isascii():  # fast path: lower-case first, then tokenise
        tokens = _ASCII_TOKEN_LOWER.findall(text.lower())
        if "_" in text:
            tokens = [t for t in tokens if t.strip("_")]
        if len(text) > MAX_TOKEN_LENGTH and any(len(t) > MAX_TOKEN_LENGTH for t in tokens):
            tokens = [piece for t in tokens for piece in _chop(t)]
        return tokens
    return [_lower(t) for t in raw_tokens(text)]


# --- optional identifier splitting (not Lucene) --------------------------------------------------------
# The tokenizer already breaks at '-' and '/', so only the separators it keeps inside a token remain.
_TOKEN_SEPARATORS = "_.:"


def split_identifier(token: str) -> list[str]:
    """Split one raw (not yet lower-cased) token into its identifier parts, lower-cased.

    ``get_weather`` / ``getWeather`` / ``weather.get`` / ``mcp:search`` / ``HTTPServer`` become
    ``[get, weather]`` / ``[get, weather]`` / ``[weather, get]`` / ``[mcp, search]`` / ``[http, server]``.
    A token with a single part returns ``[token]`` lower-cased. Apostrophes are not separators
    (``it's`` stays whole). The boundaries are :func:`toolsearch_lab.text.identifiers.split_identifiers`'s.
    """
    parts = split_identifiers(token, separators=_TOKEN_SEPARATORS, unicode=True)
    if not parts:
        return [_lower(token)]
    return [_lower(p) for p in parts]


def analyze_split(text: str) -> tuple[list[str], list[str]]:
    """Analysis for ``split_identifiers=True``.

    Returns ``(positional, extra)``: ``positional`` is the token stream with every compound token replaced
    by its parts (one position each, so phrases like "get weather" match ``get_weather``); ``extra`` holds
    the whole compound tokens, indexed as additional terms without a position of their own (like
    Lucene's WordDelimiterGraphFilter with preserveOriginal, whose originals overlap their first part).
    """
    positional: list[str] = []
    extra: list[str] = []
    for raw in raw_tokens(text):
        parts = split_identifier(raw)
        positional.extend(parts)
        if len(parts) > 1:
            extra.append(_lower(raw))
    return positional, extra
