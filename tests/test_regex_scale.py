"""RegexToolIndex's fast paths give exactly the scores of the tool-by-tool scan they replace.

Keyword mode answers from a vocabulary of delimiter-free chunks, the blank query from line terminators, and
pattern mode matches only the texts that contain a pattern's required literal text; each is compared here,
bit for bit, with Spring's linear scan (``keyword_parts`` / ``pattern_parts`` over every tool) on random
catalogs full of the awkward cases: delimiters, line terminators, astral and non-ASCII characters, case
pairs that only Unicode folding joins, empty descriptions and duplicate tools. Speed itself is measured by
``benchmarks/search_speed.py``, never asserted here.
"""

from __future__ import annotations

import string
import threading

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings, strategies as st

from toolsearch_lab.index.regex import PatternTimeoutError, RegexToolIndex
from toolsearch_lab.index.regex.corpus import UNICODE_FOLD, java_match_all_hits
from toolsearch_lab.index.regex.keywords import linear_keyword_scores
from toolsearch_lab.index.regex.pattern import (
    PatternMatcher,
    compile_user_pattern,
    lookup_clauses,
    pattern_parts,
    required_literals,
)
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.text.java import compile_java, java_find_all

TEXT_CHARS = (
    "abcdeEFGHiIkKsS_-*+.0123456789"  # ASCII letters, digits and metacharacters
    " ,;:.!?()[]{}\"'\t"  # Spring's delimiters
    "\n\r\x85\u2028\u2029"  # Java's line terminators
    "éÉİıſK\u00a0😀\U0001f680"  # non-ASCII letters, folding oddities, NBSP, astral characters
)
WORDS = ["weather", "Weather", "ss", "KiT", "\u212ait", "\u017fs", "\u017fk", "a", "ab", "abab", "aba"]
WORDS += ["get_*", "x+y", "😀k", "İs", "é", "the"]

texts = st.text(alphabet=st.sampled_from(TEXT_CHARS), max_size=40) | st.lists(
    st.sampled_from(WORDS + [" ", "\n", ".", "😀", "_"]), max_size=12
).map("".join)
names = st.text(alphabet=string.ascii_letters + string.digits + "_.:-", min_size=1, max_size=12)
queries = st.lists(st.sampled_from(WORDS + ["AB", "bA", "😀", "k", "i", "of", "eE", "k_"]), max_size=5).map(
    " ".join
) | st.text(alphabet=st.sampled_from(TEXT_CHARS), max_size=12)
tools = st.lists(st.tuples(names, texts), min_size=1, max_size=12)

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def indexed(mode: str, pairs: list[tuple[str, str]], parameters: list[dict] | None = None) -> RegexToolIndex:
    index = RegexToolIndex(mode=mode)
    params = parameters or [{"type": "object", "properties": {}}] * len(pairs)
    index.index_tools("s", [Tool(n, d, p) for (n, d), p in zip(pairs, params, strict=True)])
    return index


def ranked_linear(scores: np.ndarray, pairs: list[tuple[str, str]]) -> list[tuple[str, float]]:
    order = sorted((i for i in range(len(pairs)) if scores[i] > 0), key=lambda i: -scores[i])
    return [(pairs[i][0], float(scores[i])) for i in order]


@PROPERTY
@given(tools, queries)
def test_keyword_scores_equal_the_linear_scan(pairs, query):
    index = indexed("keywords", pairs)
    session = index._sessions["s"]
    rx = compile_java(index.convert_query_to_regex_pattern(query))
    expected = linear_keyword_scores(session.entries, rx)
    assert np.array_equal(index._scores(session, query), expected)
    got = index.search(SearchRequest("s", query, max_results=100)).tool_references
    assert [(r.tool_name, r.relevance_score) for r in got] == ranked_linear(expected, pairs)


@PROPERTY
@given(st.lists(texts, max_size=20))
def test_blank_query_hit_counts_are_javas_find_loop(samples):
    java_dot_star = compile_java(".*")
    assert java_match_all_hits(samples).tolist() == [len(java_find_all(java_dot_star, t)) for t in samples]


PATTERNS = [
    "email",
    "get_.*issue",
    "send|post",
    r"^ab\w*",
    "(?:ab)+a",
    "k(it|s)",
    "KIT|é",
    "kit",
    "ss",
    "sk|ks",
    "ss?",
    r"a\.b|ab",
    "(?-i:Ab)",
    "ab(?=a)",
    "(?<!b)ab",
    "i\u0307s|İs",
    "s{2}",
    "[ab]ba",
    "we.ther",
    r"\bab\b",
    "x+y",
    "k_|_k",
    "😀k",
    "(ab|)ab",
    "abab$",
]


@PROPERTY
@given(tools, st.sampled_from(PATTERNS), st.lists(st.tuples(names, texts), max_size=3))
def test_pattern_mode_prefilter_never_changes_a_score(pairs, pattern, params):
    schema = {"type": "object", "properties": {n: {"type": "string", "description": d} for n, d in params}}
    index = indexed("pattern", pairs, [schema] * len(pairs))
    session = index._sessions["s"]
    rx, _ = compile_user_pattern(pattern)
    matcher = PatternMatcher(pattern, rx, index, (len(pairs), 0, 0, False))
    expected = [
        sum(part for part, _ in pattern_parts(e, {i: matcher.find(t) for i, t in enumerate(e.texts())}))
        for e in session.entries
    ]
    assert index._scores(session, pattern).tolist() == expected


def test_unicode_fold_covers_every_letter_regex_matches_with_ascii():
    everything = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF)
    ascii_letters = regex.compile("|".join(string.ascii_lowercase), regex.IGNORECASE | regex.V0)
    folded_by_table = {chr(c) for c in UNICODE_FOLD if c >= 0x80}
    assert set(ascii_letters.findall(everything)) == folded_by_table
    # Simple case folding only (V0 without FULLCASE): one character never matches two.
    assert regex.search("ss", "ß", regex.IGNORECASE | regex.V0) is None


@pytest.mark.parametrize(
    "pattern, clauses",
    [
        ("email", [["email"]]),
        ("get_.*issue", [["issue"], ["get_"]]),
        ("send|post", [["post", "send"]]),
        ("create.*(issue|pull)", [["create"], ["issue", "pull"]]),
        (r"^\w+$", []),
        ("we.ther", [["ther"], ["we"]]),  # both sides of "." are required; the longer is looked up first
        ("x|ab", []),  # one alternative has no literal of two characters
        ("get user", [["user"]]),  # a space is a delimiter: the longest piece is looked up
        ("(?:abc)?def", [["def"]]),  # an optional group requires nothing
    ],
)
def test_required_literals(pattern, clauses):
    _, tree = compile_user_pattern(pattern)
    assert lookup_clauses(required_literals(tree)) == clauses


def test_searches_after_more_tools_are_indexed_see_them():
    for mode, query in (("keywords", "weather"), ("pattern", "weather")):
        index = RegexToolIndex(mode=mode)
        index.index_tools("s", [Tool("weatherTool", "weather")])
        assert index.search(SearchRequest("s", query)).tool_names == ["weatherTool"]
        index.index_tool("s", Tool("weatherMap", "weather map"))
        assert index.search(SearchRequest("s", query)).tool_names == ["weatherTool", "weatherMap"]


def test_concurrent_first_searches_build_one_corpus_and_agree():
    index = RegexToolIndex()
    index.index_tools("s", [Tool(f"tool{i}", f"sends email number {i}") for i in range(3000)])
    answers: list[list[str]] = []

    def search() -> None:
        answers.append(index.search(SearchRequest("s", "email 42")).tool_names)

    threads = [threading.Thread(target=search) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == 6 and all(a == answers[0] for a in answers)
    assert answers[0][0] == "tool42"


def test_over_budget_blames_the_catalog_when_the_pattern_has_no_literal_text():
    index = RegexToolIndex(mode="pattern", pattern_budget_s=0.001)
    index.index_tools("s", [Tool(f"t{i}", "some text " * 50) for i in range(3000)])
    with pytest.raises(PatternTimeoutError, match="total budget of 1 ms") as info:
        index.search(SearchRequest("s", r"^\w+z$"))
    message = str(info.value)
    assert "catalog's size is the cost" in message and "no literal text" in message
    assert "of the 3,001 distinct texts it had to match" in message and "3,000 tools" in message


def test_over_budget_blames_the_catalog_when_too_many_texts_hold_the_literal():
    index = RegexToolIndex(mode="pattern", pattern_budget_s=0.001)
    index.index_tools("s", [Tool(f"t{i}", f"some text {i} " * 50) for i in range(3000)])
    with pytest.raises(PatternTimeoutError, match="total budget of 1 ms") as info:
        index.search(SearchRequest("s", "text"))
    assert "3,000 of its 6,000 distinct texts (3,000 tools) contain the pattern's literal text" in str(
        info.value
    )


def test_over_budget_blames_a_pattern_that_costs_much_cpu_per_character():
    index = RegexToolIndex(mode="pattern")
    rx, _ = compile_user_pattern("a")
    matcher = PatternMatcher("a", rx, index, (10, 20, 20, True))
    matcher.texts_done, matcher.cpu_started = 20, matcher.cpu_started - 0.4  # 20 ms of CPU a text
    message = str(matcher.over_budget())
    assert "the pattern is the cost" in message and "simplify it" in message


def test_an_overridden_converter_with_real_regex_syntax_is_scanned_tool_by_tool():
    class Prefix(RegexToolIndex):
        def convert_query_to_regex_pattern(self, query):
            return "(?i)^" + query + r"_\w+"

    index = Prefix()
    pairs = [("get_user", "Get one user"), ("user_get", "get_all users"), ("set_user", "")]
    index.index_tools("s", [Tool(n, d) for n, d in pairs])
    session = index._sessions["s"]
    expected = linear_keyword_scores(session.entries, compile_java(r"(?i)^get_\w+"))
    assert index._scores(session, "get").tolist() == expected.tolist()
    # "get_user" matches in its name (2*1 + 1/1) and "user_get" only in its description (1*1 + 0.5/1)
    assert index.search(SearchRequest("s", "get")).tool_names == ["get_user", "user_get"]
    assert [r.relevance_score for r in index.search(SearchRequest("s", "get")).tool_references] == [3.0, 1.5]
