"""Exact token counts of texts of any length, in time linear in their length.

tiktoken counts a short text at once; a long one it counts in time that grows faster than its length when
the text holds one long pre-tokenizer piece (a few MB of one letter, of one punctuation mark), and its
regex engine overflows its stack on a few MB of spaces. So a long text is counted in parts whose counts add
up to exactly what tiktoken says of the whole:

1. **Cut where every piece must end.** tiktoken splits a text into pieces with the encoding's own regex
   and encodes each piece alone. At a position just after a letter or digit and before a character that is
   none of letter, digit, combining mark or apostrophe, between a letter and a digit, just after a line
   feed followed by neither whitespace nor ``/``, or between a character that is not whitespace and
   whitespace other than a line break, no piece of the encoding's pattern (o200k's and
   cl100k's) spans the position, and the pieces on each side are the same whether the text goes on or
   stops there (:data:`CUT`). Parts of about :data:`CHUNK` characters are cut there and counted by tiktoken.
2. **Pieces, where nothing can be cut.** A stretch of :data:`CHUNK` characters with no such position is
   split into pieces with the encoding's own pattern (the ``regex`` module, as tiktoken's own educational
   port does), and each piece is encoded alone, as tiktoken does.
3. **Windows of one long piece.** A piece longer than :data:`WINDOW` bytes is encoded a window at a time.
   Each window is joined to what came before when the last token so far and the window's first token are
   *compatible* (encoding their bytes together gives those two tokens back): then the two encodings
   together are the piece's own encoding (github/rust-gems, crates/bpe/README.md, "Properties of BPE",
   corollaries II and IIIa). When they are not, the last tokens so far are taken back one at a time (a
   prefix of an encoding is an encoding, corollary II) and the window re-encoded from there.

tests/test_tokens.py checks the parts against tiktoken's whole count on ordinary and on adversarial text;
benchmarks/token_count.py measures the time per MB at growing sizes.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache

import regex
import tiktoken

from toolsearch_lab.compat import bpe_of_bytes

__all__ = ["CHUNK", "CUT", "WINDOW", "count_text"]

CHUNK = 16_384  # characters per part cut at a position every piece ends at
WINDOW = 1_024  # bytes of one long piece encoded at a time
MAX_TAKEN_BACK = 64  # tokens taken back before a long piece is encoded whole (never needed in the tests)
CUT = regex.compile(
    r"(?<=[\p{L}\p{N}])(?=[^\p{L}\p{N}\p{M}']|'(?!(?i:s|t|re|ve|m|ll|d)))|(?<=\p{N})(?=')"
    r"|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})"
    r"|(?<=\n)(?=[^\s/])"
    r"|(?<=\S)(?=[^\S\r\n])"
)


def count_text(
    encoding: tiktoken.Encoding, pattern: str, text: str, chunk: int = CHUNK, window: int = WINDOW
) -> int:
    """The number of tokens tiktoken gives ``text`` (``encoding.encode_ordinary``), computed in time linear
    in its length. ``pattern`` is the encoding's pre-tokenizer regex; ``chunk`` and ``window`` are the
    sizes described in the module docstring (tests make them small to cut often)."""
    if len(text) <= 2 * chunk:
        return len(encoding.encode_ordinary(text))
    text = _without_lone_surrogates(text)
    total, start, end = 0, 0, len(text)
    while end - start > 2 * chunk:
        cut = CUT.search(text, start + chunk, start + 2 * chunk)
        if cut is not None:
            total += len(encoding.encode_ordinary(text[start : cut.start()]))
            start = cut.start()
        else:
            counted, start = _count_pieces(encoding, pattern, text, start, chunk, window)
            total += counted
    return total + len(encoding.encode_ordinary(text[start:]))


def _without_lone_surrogates(text: str) -> str:
    """The text tiktoken encodes: a lone surrogate (valid in a Python string, not in UTF-8) becomes U+FFFD,
    as ``Encoding.encode_ordinary`` does before it encodes; character by character, so cutting commutes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@lru_cache(maxsize=4)
def _pieces(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _count_pieces(
    encoding: tiktoken.Encoding, pattern: str, text: str, start: int, span: int, window: int
) -> tuple[int, int]:
    """Tokens of the pieces from ``start`` (a piece boundary) on, each encoded alone (repeats counted once),
    up to the first cut position ``span`` or more characters on: (tokens, that position or the text's
    end). The next cut is looked for once per ``span`` characters, so a stretch with none costs one scan."""
    seen: dict[str, int] = {}
    total, cut, look_at = 0, -1, start + span
    for match in _pieces(pattern).finditer(text, start):
        piece = match.group()
        count = seen.get(piece)
        if count is None:
            data = piece.encode("utf-8")
            if len(data) > window:
                count = _count_long_piece(encoding, data, window)
            else:
                count = seen[piece] = len(bpe_of_bytes(encoding, data))
        total += count
        end = match.end()
        if cut < end and end >= look_at:
            found = CUT.search(text, end, end + span)
            cut, look_at = (found.start(), end) if found is not None else (-1, end + span)
        if end == cut:
            return total, end
    return total, len(text)


def _count_long_piece(encoding: tiktoken.Encoding, data: bytes, window: int) -> int:
    """Tokens of one piece longer than ``window`` bytes, a window at a time (module docstring, step 3)."""
    count = 0
    tail: deque[int] = deque(maxlen=MAX_TAKEN_BACK + 1)  # the last tokens so far
    position = 0
    while position < len(data):
        end = min(len(data), position + window)
        start = position
        tokens = bpe_of_bytes(encoding, data[start:end])
        while tail and not _compatible(encoding, tail[-1], tokens[0]):
            start -= len(encoding.decode_single_token_bytes(tail.pop()))
            count -= 1
            if not tail and start > 0:  # taken back as far as remembered: encode the piece whole
                return len(bpe_of_bytes(encoding, data))
            tokens = bpe_of_bytes(encoding, data[start:end])
        count += len(tokens)
        tail.extend(tokens[-(MAX_TAKEN_BACK + 1) :])
        position = end
    return count


def _compatible(encoding: tiktoken.Encoding, left: int, right: int) -> bool:
    """Whether ``left`` then ``right`` is how the encoding encodes their bytes together."""
    pair = encoding.decode_single_token_bytes(left) + encoding.decode_single_token_bytes(right)
    return bpe_of_bytes(encoding, pair) == [left, right]
