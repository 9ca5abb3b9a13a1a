"""Long texts are counted exactly as tiktoken counts them, in parts (toolsearch_lab.tokens.long_text): cut
where every pre-tokenizer piece ends, pieces encoded alone, one long piece a window at a time. The parts are
made tiny here so that every rule cuts often, on text built to be awkward (case changes, contractions,
combining marks, digits, line breaks, "/", CJK, a lone surrogate) and on long runs of one character."""

from __future__ import annotations

import random

import pytest

from toolsearch_lab.tokens import TokenCounter, get_encoding
from toolsearch_lab.tokens.encodings import pre_tokenizer
from toolsearch_lab.tokens.long_text import count_text

AWKWARD = list("sStTſaAbZéè\u0301'’ 1234567890\n\n\r\t/.,!?{}\":;-_日本語😀ǅ½ \u00a0\u2028\ud800")
ENCODINGS = ("o200k_base", "cl100k_base")


@pytest.mark.parametrize("name", ENCODINGS)
def test_a_text_counted_in_tiny_parts_counts_what_tiktoken_counts_whole(name):
    encoding, pattern = get_encoding(name), pre_tokenizer(name)
    rnd = random.Random(47)
    for trial in range(1_500):
        weights = [rnd.random() ** 3 for _ in AWKWARD]  # each text leans on a few characters
        text = "".join(rnd.choices(AWKWARD, weights, k=rnd.randint(1, 300)))
        if trial % 5 == 0:  # one long piece: a run of one character, or random lower-case letters
            text = (
                rnd.choice(AWKWARD) * rnd.randint(20, 1_500)
                if trial % 10
                else "".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randint(20, 1_500)))
            )
        parts = count_text(encoding, pattern, text, chunk=rnd.randint(1, 20), window=rnd.randint(2, 24))
        assert parts == len(encoding.encode_ordinary(text)), repr(text[:120])


def test_a_long_text_with_long_runs_counts_what_tiktoken_counts_whole():
    counter = TokenCounter()
    prose = "The tool result of a `Read` call: def main():\n    return {'key': 42}  # it's done\n" * 400
    text = prose + "a" * 30_000 + prose + " " * 30_000 + "\n" + "=" * 30_000 + prose + "日本語" * 9_000
    assert len(text) > 150_000
    assert counter.count(text) == len(counter.encoding.encode_ordinary(text))


@pytest.mark.slow
def test_megabytes_of_one_character_are_counted_where_tiktoken_alone_fails():
    counter = TokenCounter()
    spaces = " " * 3_200_000 + "x"  # tiktoken's regex engine overflows its stack on this (a panic)
    ours = counter.count(spaces)
    # The run is one piece (all spaces but the last, which goes with "x"); a shorter run tiktoken can count
    # says how a run of spaces encodes: the count grows by one token per 128 spaces past it.
    short = " " * 256_000 + "x"
    assert counter.count(short) == len(counter.encoding.encode_ordinary(short))
    assert ours == counter.count(short) + (3_200_000 - 256_000) // 128
    letters = "a" * 4_000_000  # tokens of eight letters
    assert counter.count(letters) == 500_000
