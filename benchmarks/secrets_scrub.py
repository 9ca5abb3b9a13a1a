"""Scrubbing cost against the registry's size (issue 48): the one trie pattern of ``toolsearch_lab.secrets``
against the alternation it replaced (one alternative per value, each with its own boundaries, which the
regex engine tries one after another at every position of the text), in the same process, on the same
texts. Run: ``.venv/bin/python benchmarks/secrets_scrub.py`` (about a minute, most of it the reference).

Prints, per registry size and text size: the time to build the pattern (once per change of the registry),
the time of one scrub, the reference's scrub and the ratio, all in CPU seconds of this process; both must
hide the same spans (checked). Then the display edge's cost (:func:`~toolsearch_lab.secrets.hide_keys`: the
key detector on top of the scrub).
"""

from __future__ import annotations

import random
import re
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolsearch_lab.secrets import REDACTED, hide_keys, isolated_registry, register_secret  # noqa: E402
from toolsearch_lab.secrets.registry import LONG_SECRET_CHARS, registered_pattern, spellings  # noqa: E402

VALUES = 5_000
TEXT_SIZES = (108_000, 200_000)
_START = r"(?:(?<![A-Za-z0-9])|(?<=%[0-9A-Fa-f]{2}))"


def reference_pattern(values: list[str]) -> re.Pattern[str]:
    """The scrub before issue 48: one alternative per value, longest first, each with its boundaries."""
    alternatives = []
    for value in sorted(values, key=lambda v: (-len(v), v)):
        long = len(value) >= LONG_SECRET_CHARS
        before = _START if value[0].isalnum() and not long else ""
        after = r"(?![A-Za-z0-9])" if value[-1].isalnum() and not long else ""
        alternatives.append(before + re.escape(value) + after)
    return re.compile("|".join(alternatives))


def _secrets(rng: random.Random) -> list[str]:
    alphabet = string.ascii_letters + string.digits + "-_+/="  # base64 and URL-safe tokens
    return ["".join(rng.choices(alphabet, k=rng.randint(8, 48))) for _ in range(VALUES)]


def _text(rng: random.Random, size: int, secrets: list[str]) -> str:
    """Words, numbers and a URL or two, with a registered value about once per 2 KB."""
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10))) for _ in range(3_000)]
    out: list[str] = []
    length = 0
    while length < size:
        roll = rng.random()
        word = rng.choice(secrets) if roll < 0.003 else str(rng.randint(0, 99_999)) if roll < 0.05 else None
        word = word or rng.choice(words)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


def _timed(run, repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.process_time()  # CPU time: the machine is shared, wall time is not ours alone
        result = run()
        best = min(best, time.process_time() - started)
    return best, result


def main() -> None:
    rng = random.Random(48)
    secrets = _secrets(rng)
    print(f"{VALUES:,} registered values (every spelling: as written, percent- and JSON-escaped)")
    with isolated_registry():
        for value in secrets:
            register_secret(value)
        forms = list(dict.fromkeys(form for value in secrets for form in spellings(value)))
        built, pattern = _timed(registered_pattern, repeat=1)
        reference_built, reference = _timed(lambda: reference_pattern(forms), repeat=1)
        assert isinstance(pattern, re.Pattern) and isinstance(reference, re.Pattern)
        print(f"{len(forms):,} spellings; pattern built in {built:.2f} s (reference {reference_built:.2f} s)")
        print("| text | scrub | reference | ratio | hide_keys (scrub + key detector) |")
        print("|---|---|---|---|---|")
        for size in TEXT_SIZES:
            text = _text(rng, size, secrets)
            ours, hidden = _timed(lambda text=text: pattern.sub(REDACTED, text))
            theirs, expected = _timed(lambda text=text: reference.sub(REDACTED, text), repeat=1)
            assert hidden == expected, "the trie and the reference hid different spans"
            shown, _ = _timed(lambda text=text: hide_keys(text))
            print(
                f"| {size / 1000:.0f} KB | {ours * 1000:.0f} ms | {theirs:.1f} s | {theirs / ours:,.0f}x "
                f"| {shown * 1000:.0f} ms |"
            )


if __name__ == "__main__":
    main()
