"""Fuzzing every index with generated queries and request arguments (issue 6).

Each search must answer with a ``SearchResponse`` or refuse with a ``ValueError`` (``PatternError`` is one)
whose message is not empty, within a generous hang guard. Inputs: unicode (including lone surrogates,
astral characters, combining marks), control characters, regex metacharacters, 10,000-character queries,
empty and whitespace-only queries, ``None``; ``max_results`` of every sign and size (huge ints, bools,
floats, NaN, strings, None); unknown, blank and ``None`` sessions; odd category filters. The same inputs are
sent the way a model sends them, as ``toolSearchTool`` call arguments (JSON text, malformed or not), which
must never raise at all.

Generated-case counts per index are collected in ``CASES`` and checked by the last test (>= 10,000 in total
when the whole file runs). Timings are collected in ``TIMINGS``; run with ``-s`` to see the summary.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import PatternError, PatternTimeoutError, RegexToolIndex
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchRequest, SearchResponse, Tool

# The slow tier (`make test-slow`): long generated runs, whose total the last test checks.
pytestmark = pytest.mark.slow

HANG_GUARD_S = 5.0  # generous: only catches hangs, not slowness
SESSION = "fuzz"
CASES: dict[str, int] = defaultdict(int)
TIMINGS: dict[str, list[float]] = defaultdict(list)
WORST: list[tuple[float, str]] = []


def fuzz_settings(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


TOOLS = [
    Tool(
        "get_weather",
        "Get the current weather for a city. Returns temperature and conditions.",
        {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}},
        },
    ),
    Tool("currentTime", "Provides the current date and time (as date-time string) for a given location"),
    Tool("send-notification", "Send a push notification to a user's device"),
    Tool(
        "github.create_pull_request",
        "Create a pull request on GitHub from a branch",
        {
            "type": "object",
            "properties": {
                "repo": {"type": "string"},
                "head": {"type": "string"},
                "opts": {"type": "object", "properties": {"draft": {"type": "boolean"}}},
            },
        },
    ),
    Tool("mcp:search", "Search the web (résumé café naïve ÄÖÜ ß İstanbul)"),
    Tool("calc", "Performs arithmetic calculations: +, -, *, /, ^, (a+b)*c, [x] {y} | z $ \\ ."),
    Tool("emoji_tool", "Emoji \U0001f600\U0001f680 and CJK 天气 预报 and Greek Σίσυφος"),
    Tool("empty_desc", ""),
    Tool("long_tool", "a" * 3000 + "b " + "weather " * 200),
    Tool("ctrl_tool", "tab\there\nnewline\r\x0b\x0c\x85\u2028\u2029 nul-free control text"),
    Tool("dup", "first duplicate"),
    Tool("dup", "second duplicate (Spring keeps duplicates)"),
]
KNOWN = {t.name for t in TOOLS}

# ---- strategies -----

META = list("\\.*+?^${}[]|()-,;:!\"'#&~/@")
ATOMS = [
    "weather",
    "time",
    "get",
    "a",
    "aa",
    "(a+)+",
    "(a|aa)+",
    "(.*)*",
    "\\d",
    "\\w+",
    "[a-z]",
    "[^",
    "(?i)",
    "(?P<n>x)",
    "(?=a)",
    "\\1",
    "{2,3}",
    "{999}",
    "\\Q",
    "\\E",
    "\\p{L}",
    "\\b",
    "İ",
    "ǅ",
    "\U0001f600",
    "\ud800",
    "\udfff",
    "\x00",
    "\x7f",
    "\u200b",
    "\ufeff",
]

unicode_text = st.text(max_size=80)
any_codepoints = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)  # incl. surrogates
controls = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x1F) | st.sampled_from("\x7f\x85\u2028\u2029"), max_size=40
)
metachars = st.lists(st.sampled_from(META + ATOMS), max_size=25).map("".join)
whitespace = st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2003\u3000\u200b"), max_size=30)
long_queries = st.builds(
    lambda unit, n: (unit * n)[:10_000] or "x" * 10_000,
    st.sampled_from(["a", "weather ", "(a+)+", "\U0001f600", "get_weather ", "\x00", " ", "ab|"]),
    st.integers(5_000, 10_000),
)
queries = st.one_of(
    st.none(),
    st.just(""),
    unicode_text,
    any_codepoints,
    controls,
    metachars,
    whitespace,
    long_queries,
    st.sampled_from(
        [
            "weather",
            "current time",
            "get.*",
            ".*_api",
            "(?i)weather",
            "???",
            "a to i",
            "github pull request",
            "send-notification",
            "tool",
        ]
    ),
)
max_results = st.one_of(
    st.none(),
    st.none(),
    st.integers(1, 20),
    st.integers(1, 20),
    st.integers(),
    st.integers(-(2**80), 2**80),
    st.sampled_from([0, 1, 10, 11, 2**31, 2**63, -1]),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 3.0, 2.5]),
    st.sampled_from(["3", b"3", [3]]),
)
sessions = st.one_of(
    st.just(SESSION),
    st.just(SESSION),
    st.just(SESSION),
    st.just(SESSION),
    st.none(),
    st.sampled_from(["", " ", "\t", "unknown", "FUZZ", "fuzz ", "\x00"]),
    st.text(max_size=10),
)
categories = st.one_of(
    st.none(), st.just(""), st.text(max_size=10), st.sampled_from(["weather", "WEATHER", "\x00"])
)

# ---- the check -----


def check_search(label: str, index, session, query, limit, category) -> SearchResponse | None:
    """One search: a well-formed response, or a ValueError with a message; never anything else."""
    started = time.perf_counter()
    try:
        response = index.search(SearchRequest(session, query, limit, category))
    except (ValueError, TypeError) as exc:  # PatternError / PatternTimeoutError are ValueErrors
        assert str(exc).strip(), f"{label}: empty error message"
        bad_query = query is not None and not isinstance(query, str)
        assert isinstance(exc, ValueError) or bad_query, f"{label}: TypeError for a str query: {exc}"
        response = None
    finally:
        elapsed = time.perf_counter() - started
        CASES[label] += 1
        TIMINGS[label].append(elapsed)
    assert elapsed < HANG_GUARD_S, f"{label}: {elapsed:.2f} s for query {query!r:.60} (hang?)"
    if response is None:
        # A refusal is only right for a bad max_results, or a bad pattern in pattern mode.
        bad_limit = limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1)
        bad_query = query is not None and not isinstance(query, str)
        assert bad_limit or bad_query or getattr(index, "mode", None) == "pattern", (
            f"{label}: refused a valid request"
        )
        return None
    assert isinstance(response, SearchResponse)
    names = response.tool_names
    assert set(names) <= KNOWN, f"{label}: returned tools that were never indexed: {set(names) - KNOWN}"
    if session != SESSION:
        assert names == [], f"{label}: session {session!r} sees tools of session {SESSION!r}"
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1:
        assert len(names) <= limit
    if response.total_matches is not None:
        assert response.total_matches == len(names)
    for ref in response.tool_references:
        assert ref.relevance_score is None or math.isfinite(ref.relevance_score)
    json.dumps(response.to_dict(), ensure_ascii=False)  # serialisable for traces and widgets
    return response


def check_meta_tool(label: str, index, arguments) -> None:
    """The same inputs as a model sends them: toolSearchTool.call never raises, errors are JSON objects."""
    tool = ToolSearchTool(index)
    started = time.perf_counter()
    outcome = tool.call(arguments, SESSION, "call_1")
    elapsed = time.perf_counter() - started
    CASES[label + " (meta-tool)"] += 1
    assert elapsed < HANG_GUARD_S
    value = json.loads(outcome.result)
    if outcome.is_error:
        assert isinstance(value, dict) and value["error"].startswith("toolSearchTool:")
        assert outcome.record.error == value["error"]
    else:
        assert isinstance(value, list) and set(value) <= KNOWN


def meta_arguments():
    obj = st.fixed_dictionaries(
        {},
        optional={
            "query": queries | st.integers() | st.lists(st.text(max_size=3), max_size=2),
            "maxResults": max_results.filter(lambda v: not isinstance(v, bytes)),
            "categoryFilter": categories | st.integers(),
            "extra": st.text(max_size=5),
        },
    )
    raw = st.one_of(
        obj.map(lambda d: json.dumps(d, ensure_ascii=False)),
        obj,
        st.text(max_size=60),
        st.sampled_from(["", "null", "[]", "{", '{"query": ', '"weather"', "1e999", "{}"]),
        st.none(),
    )
    return raw


# ---- indexes -----


def _indexed(index):
    index.index_tools(SESSION, TOOLS)
    return index


INDEXES = {
    "regex-keywords": lambda: _indexed(RegexToolIndex("keywords")),
    "regex-pattern": lambda: _indexed(RegexToolIndex("pattern")),
    "bm25": lambda: _indexed(BM25ToolIndex()),
    "bm25-split-params": lambda: _indexed(BM25ToolIndex(split_identifiers=True, include_parameters=True)),
}
BUILT = {name: factory() for name, factory in INDEXES.items()}
EXAMPLES = {"regex-keywords": 2200, "regex-pattern": 2200, "bm25": 2000, "bm25-split-params": 2000}
META_EXAMPLES = 400


def _fuzz_test(name: str):
    @fuzz_settings(EXAMPLES[name])
    @given(session=sessions, query=queries, limit=max_results, category=categories)
    def test(session, query, limit, category):
        check_search(name, BUILT[name], session, query, limit, category)

    test.__name__ = f"test_fuzz_search_{name.replace('-', '_')}"
    return test


def _meta_test(name: str):
    @fuzz_settings(META_EXAMPLES)
    @given(arguments=meta_arguments())
    def test(arguments):
        check_meta_tool(name, BUILT[name], arguments)

    test.__name__ = f"test_fuzz_meta_tool_{name.replace('-', '_')}"
    return test


for _name in INDEXES:
    globals()[f"test_fuzz_search_{_name.replace('-', '_')}"] = _fuzz_test(_name)
    globals()[f"test_fuzz_meta_tool_{_name.replace('-', '_')}"] = _meta_test(_name)


# ---- vector index with the real MiniLM model (fewer examples: each query runs the ONNX model) -------------


@pytest.fixture(scope="module")
def minilm():
    try:
        from toolsearch_lab.embed import MiniLMEmbedder

        embedder = MiniLMEmbedder()
        embedder.embed(["probe"])
    except Exception as exc:  # noqa: BLE001 - optional dependency / other engineer's module
        pytest.skip(f"MiniLM embedder not available: {type(exc).__name__}: {exc}")
    return embedder


@pytest.fixture(scope="module")
def vector_index(minilm):
    from toolsearch_lab.index.vector import VectorToolIndex

    return _indexed(VectorToolIndex(minilm))


@fuzz_settings(250)
@given(session=sessions, query=queries, limit=max_results, category=categories)
def test_fuzz_search_vector_minilm(vector_index, session, query, limit, category):
    check_search("vector-minilm", vector_index, session, query, limit, category)


def test_vector_lone_surrogate_query_is_answered_or_refused_clearly(vector_index):
    """A lone surrogate in the query (valid in JSON from a model) must not crash the tokenizer."""
    check_search("vector-minilm", vector_index, SESSION, "weather \ud800", 3, None)


# ---- catastrophic backtracking in pattern mode -----

EVIL_PATTERNS = [
    r"(a+)+$",
    r"(a|aa)+$",
    r"(a*)*$",
    r"(a|a?)+$",
    r"((a+)+)+$",
    r"(.*a){20}$",
    r"(x+x+)+y",
    r"(\w+\s?)+$",
    r"^(([a-z])+.)+[A-Z]([a-z])+$",
    r"(a+)+b",
    r"(.*)*c$",
    r"(a?){30}a{30}",
    r"(\d+)*x",
    r"(([ab])+)+\1$",
    r"(?:a|b|ab)*c",
    r"(weather|w.*)+!$",
]
EVIL_TEXTS = ["a" * 40 + "b", "a" * 5000, "a" * 5000 + "!", "ab" * 2000, "weather " * 600 + "x", "1" * 3000]


@pytest.fixture(scope="module")
def evil_index():
    index = RegexToolIndex("pattern")
    tools = [
        Tool(
            f"evil_{i}",
            text,
            {"type": "object", "properties": {f"p{i}": {"type": "string", "description": text}}},
        )
        for i, text in enumerate(EVIL_TEXTS)
    ]
    index.index_tools("evil", TOOLS + tools)
    return index


def test_catastrophic_backtracking_is_answered_or_refused_quickly(evil_index):
    times = {}
    outcomes = {}
    for pattern in EVIL_PATTERNS:
        started = time.perf_counter()
        try:
            evil_index.search(SearchRequest("evil", pattern, 10))
            outcomes[pattern] = "answered"
        except PatternTimeoutError as exc:
            outcomes[pattern] = "timeout"
            assert "catastrophic backtracking" in str(exc) or "budget" in str(exc)
        except PatternError:
            outcomes[pattern] = "refused"
        times[pattern] = time.perf_counter() - started
    TIMINGS["evil-patterns"].extend(times.values())
    worst = max(times, key=times.get)
    print(
        f"\ncatastrophic patterns: {outcomes}\nworst {worst!r}: {times[worst] * 1000:.1f} ms; "
        f"median {sorted(times.values())[len(times) // 2] * 1000:.1f} ms"
    )
    # Target is < 400 ms (three tries of one text: 50, 100 and 200 ms); on a loaded machine the tries look
    # stalled and get the rest of the search's budget, so what is asserted is that budget plus the hang guard.
    assert times[worst] < evil_index.pattern_budget_s + HANG_GUARD_S, f"{worst!r} took {times[worst]:.2f} s"
    assert "timeout" in outcomes.values()  # the guard really fired for at least one of them


@fuzz_settings(300)
@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                "a+",
                "a*",
                "(a+)+",
                "(a|aa)+",
                "(.*)",
                ".*",
                "(a?)",
                "+",
                "$",
                "b",
                "\\w+",
                "(",
                ")",
                "|",
                "{2,}",
                "{1000}",
            ]
        ),
        min_size=1,
        max_size=12,
    ).map("".join)
)
def test_generated_nested_quantifiers_never_hang(evil_index, pattern):
    started = time.perf_counter()
    try:
        evil_index.search(SearchRequest("evil", pattern, 5))
    except PatternError as exc:
        assert str(exc).startswith("search pattern ")
    elapsed = time.perf_counter() - started
    CASES["regex-pattern (nested quantifiers)"] += 1
    TIMINGS["regex-pattern-nested"].append(elapsed)
    WORST.append((elapsed, pattern))
    assert elapsed < HANG_GUARD_S


# ---- totals -----


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")


def test_zz_case_count_and_timing_summary():
    """Runs last in this file (name order): at least 10,000 generated cases when everything above ran."""
    lines = [f"{'label':42} {'cases':>6}"]
    lines += [f"{label:42} {count:6d}" for label, count in sorted(CASES.items())]
    lines += [f"{'timing (ms)':42} {'p50':>8} {'p99':>8} {'max':>8}"]
    lines += [
        f"{label:42} {_pct(v, 0.5):8.2f} {_pct(v, 0.99):8.2f} {_pct(v, 1.0):8.2f}"
        for label, v in sorted(TIMINGS.items())
    ]
    total = sum(CASES.values())
    if WORST:
        lines.append(f"slowest generated pattern: {max(WORST)[1]!r} ({max(WORST)[0] * 1000:.0f} ms)")
    print(f"\n{total} generated cases\n" + "\n".join(lines))
    full_run = all(label in CASES for label in INDEXES)
    if not full_run:
        pytest.skip("only part of the file ran; the total is checked on a full run")
    assert total >= 10_000
