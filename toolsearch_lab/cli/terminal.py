"""What reaches the terminal: text a server, a catalog, a transcript or a tool supplied is shown, never
obeyed.

A tool description holding ``ESC ]0;…`` sets the window title, ``ESC [2J`` clears the screen, a
right-to-left override reorders what follows, and ``ESC ]8;;`` makes a hyperlink that hides its target.
:func:`terminal_safe` replaces every such character by its visible ``\\uXXXX`` escape (the same escape JSON
uses, so JSON output stays valid JSON with the same values). :func:`guarded_output` puts it, and
:func:`~toolsearch_lab.secrets.hide_keys` (every registered secret and key-shaped string), in front of
``sys.stdout`` and
``sys.stderr`` for the whole of a command: the one helper every printer of the CLI goes through, whichever
printer it is.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any, TextIO, cast

from toolsearch_lab.compat import wrapped_std_streams
from toolsearch_lab.secrets import hide_keys

__all__ = ["guarded_output", "safe", "terminal_safe"]

# C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text: bidi embeddings,
# overrides and isolates, the line/paragraph separators, the Arabic letter mark.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_WITH_CR = re.compile(_UNSAFE.pattern.replace(r"\x0b-\x1f", r"\x0b\x0c\x0e-\x1f"))


def terminal_safe(text: str, *, keep_carriage_return: bool = False) -> str:
    """``text`` with every control and text-reordering character as a visible ``\\uXXXX`` escape; only
    newline and tab stay (and carriage return with ``keep_carriage_return``, for progress bars)."""
    pattern = _UNSAFE_WITH_CR if keep_carriage_return else _UNSAFE
    return pattern.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def safe(text: Any, limit: int | None = None) -> str:
    """``text`` as one table cell: line breaks as spaces, cut to ``limit``, controls neutralised
    (:func:`terminal_safe`)."""
    text = " ".join(("" if text is None else str(text)).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return terminal_safe(text)


class _Guarded:
    """A text stream that neutralises and scrubs what is written, then passes it on."""

    def __init__(self, stream: TextIO, *, keep_carriage_return: bool) -> None:
        self._stream = stream
        self._keep_cr = keep_carriage_return

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(hide_keys(text), keep_carriage_return=self._keep_cr))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno...
        return getattr(self._stream, name)


def _guard(*, keep_carriage_return: bool) -> Callable[[TextIO], TextIO]:
    # _Guarded is a TextIO by duck typing: write is its own, every other attribute is the stream's.
    return lambda stream: cast(TextIO, _Guarded(stream, keep_carriage_return=keep_carriage_return))


def guarded_output() -> contextlib.AbstractContextManager[None]:
    """Guard ``sys.stdout`` (controls neutralised) and ``sys.stderr`` (the same, carriage returns kept for
    progress bars) while the block runs; both are restored afterwards
    (:func:`~toolsearch_lab.compat.wrapped_std_streams`)."""
    return wrapped_std_streams(_guard(keep_carriage_return=False), _guard(keep_carriage_return=True))
