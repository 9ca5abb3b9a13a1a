"""RegexToolIndex: Spring conformance (spec §15 items 1-24, §3 tables) and our pattern-mode extension.

Expected values marked "Java-verified" were produced by running the same algorithm on OpenJDK 17.
"""

from __future__ import annotations

import locale
import threading
import time
from types import SimpleNamespace

import pytest
import regex

from toolsearch_lab.index.base import BaseToolIndex
from toolsearch_lab.index.regex import (
    STOP_WORDS,
    MatchSpan,
    PatternError,
    PatternTimeoutError,
    RegexDetails,
    RegexToolIndex,
    java_root_lower,
    spring_escape,
)
from toolsearch_lab.index.regex.pattern import PatternMatcher
from toolsearch_lab.model import (
    Explanation,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolIndex,
    ToolReference,
    empty_response,
)


def tool(
    name: str, description: str = "", parameters: dict | None = None, category: str | None = None
) -> Tool:
    return Tool(name, description, parameters or {"type": "object", "properties": {}}, category)


def search(index, query, session="s", **kw) -> SearchResponse:
    return index.search(SearchRequest(session, query, **kw))


def pattern(query):
    return RegexToolIndex().convert_query_to_regex_pattern(query)


@pytest.fixture
def index() -> RegexToolIndex:
    return RegexToolIndex()


# --------------------------------------------------------------------------- data types & index contract


def test_item01_tool_reference_fields_and_serialisation():
    ref = ToolReference("weatherTool", 4.19, "Returns weather")
    assert ref.to_dict() == {"toolName": "weatherTool", "relevanceScore": 4.19, "summary": "Returns weather"}
    assert ToolReference("t", None, "d").to_dict() == {"toolName": "t", "summary": "d"}  # null left out
    with pytest.raises(ValueError, match="tool_name"):
        ToolReference(None, 1.0, "d")
    with pytest.raises(ValueError, match="summary"):
        ToolReference("t", 1.0, None)


def test_item02_request_and_response_shapes(index):
    req = SearchRequest("s", "q")
    assert (req.max_results, req.category_filter) == (None, None)
    assert SearchResponse().tool_references == [] and SearchResponse().to_dict() == {"toolReferences": []}
    index.index_tool("s", tool("weatherTool", "Returns weather"))
    resp = search(index, "weather")
    assert isinstance(resp.metadata, SearchMetadata)
    assert set(resp.to_dict()) == {"toolReferences", "totalMatches", "searchMetadata"}
    assert set(resp.to_dict()["searchMetadata"]) == {"searchType", "query", "searchTimeMs"}
    assert isinstance(index, ToolIndex)


def test_item03_base_index_tools_delegates_to_index_tool_in_order():
    class Recording(BaseToolIndex):
        def __init__(self):
            self.calls = []

        def _index_tool(self, session_id, tool):
            self.calls.append((session_id, tool.name))

        def _search(self, request, limit):
            raise AssertionError("not searched")

    rec = Recording()
    rec.index_tools("s", [tool("t1"), tool("t2"), tool("t3")])
    assert rec.calls == [("s", "t1"), ("s", "t2"), ("s", "t3")]


def test_item03_regex_batch_indexing_keeps_order_and_duplicates(index):
    index.index_tools("s", [tool("aTool", "x"), tool("bTool", "x"), tool("aTool", "x")])
    assert index.size("s") == 3  # the same tool twice is stored twice
    assert search(index, "tool").tool_names == ["aTool", "bTool", "aTool"]


def test_item04_session_isolation(index):
    index.index_tool("A", tool("weatherTool", "weather in A"))
    index.index_tool("B", tool("stockTool", "stock prices"))
    assert search(index, "weather", "B").tool_names == []
    assert search(index, "stock", "A").tool_names == []
    assert search(index, "weather", "A").tool_names == ["weatherTool"]


def test_item05_clear_index(index):
    index.index_tools("A", [tool("t1", "weather"), tool("t2", "weather")])
    index.index_tool("B", tool("t3", "weather"))
    index.clear_index("A")
    assert index.size("A") == 0 and search(index, "weather", "A") == empty_response()
    assert search(index, "weather", "B").tool_names == ["t3"]
    index.clear_index("never-seen")  # no-op
    assert index.total_size() == 1


@pytest.mark.parametrize("session", [None, "", "   "])
def test_item06_blank_session_returns_empty_response(index, session):
    index.index_tool("s", tool("weatherTool", "weather"))
    resp = search(index, "weather", session)
    assert resp == empty_response()
    assert (resp.tool_references, resp.total_matches, resp.metadata) == ([], None, None)


def test_item06_unknown_session_returns_empty_response(index):
    index.index_tool("s", tool("weatherTool", "weather"))
    assert search(index, "weather", "other") == empty_response()


# --------------------------------------------------------------------------- query -> pattern (§3.1 table)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("weather tools", "(?i)(weather|tools)"),
        ("get user data", "(?i)(get|user|data)"),
        ("", ".*"),
        ("GET INVENTORY", "(?i)(get|inventory)"),
        ("what is the weather in Paris?", "(?i)(weather|paris)"),
        ("a to i", "(?i)(a|to|i)"),
        ("get.*", "(?i)(get)"),
        (".*_api", "(?i)(\\*_api)"),
        ("(?i)weather", "(?i)(weather)"),
        ("notification.*", "(?i)(notification)"),
        ("get_*_data", "(?i)(get_\\*_data)"),
        ("send-notification", "(?i)(send-notification)"),
        ("???", ".*"),
    ],
)
def test_section3_1_pattern_table(query, expected):
    assert pattern(query) == expected


def test_item07_weather_tools_pattern():
    assert pattern("weather tools") == "(?i)(weather|tools)"
    assert pattern("get user data") == "(?i)(get|user|data)"


@pytest.mark.parametrize("query", [None, "", " ", "\t\n ", "\u2003", "???", "... !!"])
def test_item08_blank_or_empty_query_is_match_all(query):
    assert pattern(query) == ".*"


def test_item09_lowercasing_is_locale_independent():
    previous = locale.setlocale(locale.LC_ALL)
    try:
        for name in ("tr_TR.UTF-8", "tr_TR.utf8", "tr_TR"):
            try:
                locale.setlocale(locale.LC_ALL, name)
                break
            except locale.Error:
                continue
        assert pattern("GET INVENTORY") == "(?i)(get|inventory)"  # never the dotless "ı"
    finally:
        locale.setlocale(locale.LC_ALL, previous)
    # Java Locale.ROOT: capital dotted I becomes i + U+0307 (Java-verified)
    assert java_root_lower("İstanbul") == "i\u0307stanbul"
    assert pattern("İstanbul") == "(?i)(i\u0307stanbul)"


def test_item09_final_sigma_follows_java():
    # Java-verified: Java's word boundaries keep the hyphenated sigma medial; Python's str.lower does not.
    assert java_root_lower("ΟΔΟΣ-Α") == "οδοσ-α" != "ΟΔΟΣ-Α".lower()
    assert java_root_lower("ΟΔΟΣ test") == "οδος test"
    assert pattern("ΟΔΟΣ-Α test") == "(?i)(οδοσ-α|test)"


def test_item10_stop_words_and_short_tokens_removed():
    assert pattern("what is the weather in Paris?") == "(?i)(weather|paris)"
    assert pattern("x weather y") == "(?i)(weather)"


def test_section3_2_stop_word_list_is_exact():
    # The spec's prose says 81, but its list (and Spring's Set.of(...) in RegexToolIndex.java) has 95 words.
    assert len(STOP_WORDS) == 95
    assert {"dare", "ought", "used", "although", "whose", "very", "too", "so", "i"} <= STOP_WORDS
    assert "get" not in STOP_WORDS and "not" in STOP_WORDS


def test_item11_fallback_without_filters():
    assert pattern("a to i") == "(?i)(a|to|i)"
    assert pattern("the the a") == "(?i)(the|a)"


def test_item12_duplicates_removed_keeping_first_order():
    assert pattern("weather Weather WEATHER tools weather") == "(?i)(weather|tools)"
    assert pattern("zeta alpha zeta beta alpha") == "(?i)(zeta|alpha|beta)"


def test_item13_spring_escaping_only():
    assert pattern(".*_api") == "(?i)(\\*_api)"
    assert pattern("get.*") == "(?i)(get)"
    assert pattern("send-notification") == "(?i)(send-notification)"
    assert spring_escape("\\.*+?^${}[]|()") == "\\\\\\.\\*\\+\\?\\^\\$\\{\\}\\[\\]\\|\\(\\)"
    assert spring_escape("a-b#c&d~e/f@g") == "a-b#c&d~e/f@g"  # re.escape would escape these
    assert pattern("x+y $5 a|b c^d") == "(?i)(x\\+y|\\$5|a\\|b|c\\^d)"


def test_item14_pattern_capped_at_200_chars():
    tokens = [f"token{i:02d}" for i in range(40)]
    result = pattern(" ".join(tokens))
    assert result == "(?i)(" + "|".join(tokens[:24]) + ")"
    assert len(result) == 197
    long_token = "x" * 300
    assert pattern(long_token + " other") == f"(?i)({long_token})"  # a single over-long token is kept
    assert len(pattern(long_token)) == 306


def test_item14_cap_counts_utf16_units():
    # "😀😀07" is 4 code points but 6 UTF-16 units (Java's String.length()): 6 + 6n + (n - 1) <= 200 keeps 27
    tokens = [f"😀😀{i:02d}" for i in range(40)]
    result = pattern(" ".join(tokens))
    assert result == "(?i)(" + "|".join(tokens[:27]) + ")"
    assert len(result.encode("utf-16-le")) // 2 == 194


def test_item14_trim_and_length_are_java_style():
    assert pattern("\x01abc\x02 de") == "(?i)(abc|de)"  # String.trim strips control characters
    assert pattern("😀 x") == "(?i)(😀)"  # an emoji has String.length() == 2, so it survives the filter
    assert pattern("\u00a0") == "(?i)(\u00a0)"  # NBSP is neither blank nor a delimiter in Java


# --------------------------------------------------------------------------- scoring and ranking (§3.3)


@pytest.mark.parametrize(
    "name, description, query, expected",
    [
        ("weatherTool", "Returns current weather conditions", "weather", 4.1923),
        ("weatherTool", "General purpose tool", "weather", 3.0),
        ("genericTool", "Provides weather forecasts", "weather", 1.2632),
        ("toolA", "Fetches stock price data", "stock price", 2.2778),
        (
            "currentTime",
            "Provides the current date and time (as date-time string) for a given location",
            "current time",
            8.2174,
        ),
    ],
)
def test_section3_3_reference_scores(name, description, query, expected):
    index = RegexToolIndex()
    index.index_tool("s", tool(name, description))
    (ref,) = search(index, query).tool_references
    assert ref.relevance_score == pytest.approx(expected, abs=1e-4)
    assert (ref.tool_name, ref.summary) == (name, description)


def test_item15_score_formula(index):
    index.index_tool("s", tool("weatherTool", "Returns current weather conditions"))
    (ref,) = search(index, "weather").tool_references
    assert ref.relevance_score == pytest.approx(2.0 + 1.0 + 1.0 + 0.5 / (1 + 0.1 * 16))
    assert ref.relevance_score == pytest.approx(4.1923, abs=1e-4)


def test_item15_positions_are_utf16_offsets(index):
    index.index_tool("s", tool("x", "😀 weather x weather"))
    (ref,) = search(index, "weather").tool_references
    assert ref.relevance_score == pytest.approx(2.3846153846153846)  # Java-verified: first hit at UTF-16 3


def test_item16_name_match_outranks_description_match(index):
    index.index_tools(
        "s", [tool("genericTool", "Provides weather forecasts"), tool("weatherTool", "General purpose tool")]
    )
    resp = search(index, "weather")
    assert resp.tool_names == ["weatherTool", "genericTool"]
    assert [r.relevance_score for r in resp.tool_references] == pytest.approx([3.0, 1.2632], abs=1e-4)


def test_item17_zero_scores_excluded(index):
    index.index_tools("s", [tool("weatherTool", "Weather data"), tool("calculatorTool", "Adds numbers")])
    assert search(index, "weather").tool_names == ["weatherTool"]


def test_item18_ties_keep_insertion_order(index):
    names = [f"tool{c}" for c in "QWERTYU"]
    index.index_tools("s", [tool(n, "sends an email") for n in names])
    assert search(index, "email").tool_names == names


def test_item19_default_limit_and_max_results_not_clamped(index):
    index.index_tools("s", [tool(f"dataTool{i}", "data") for i in range(20)])
    assert len(search(index, "data").tool_references) == 10
    assert search(index, "data", max_results=3).tool_names == ["dataTool0", "dataTool1", "dataTool2"]
    assert len(search(index, "data", max_results=15).tool_references) == 15


@pytest.mark.parametrize("bad", [0, -1, "3", 2.5, True])
def test_item19_deviation_invalid_max_results_raise(index, bad):
    index.index_tool("s", tool("dataTool", "data"))
    with pytest.raises(ValueError, match="max_results"):
        search(index, "data", max_results=bad)


def test_item20_total_matches_and_metadata(index):
    index.index_tools("s", [tool(f"dataTool{i}", "data") for i in range(10)])
    resp = search(index, "data", max_results=3)
    assert resp.total_matches == 3  # the number returned, not the number matched
    assert resp.metadata.search_type == "RegexToolIndex"
    assert resp.metadata.query == "data"
    assert isinstance(resp.metadata.search_time_ms, float) and resp.metadata.search_time_ms >= 0


def test_item20_subclass_reports_its_own_name():
    class MyRegexIndex(RegexToolIndex):
        pass

    index = MyRegexIndex()
    index.index_tool("s", tool("dataTool", "data"))
    assert search(index, "data").metadata.search_type == "MyRegexIndex"


def test_item20_overridden_pattern_that_does_not_compile_gives_no_results():
    class Broken(RegexToolIndex):
        def convert_query_to_regex_pattern(self, query):
            return "[broken"

    index = Broken()
    index.index_tool("s", tool("dataTool", "data"))
    resp = search(index, "data")
    assert (resp.tool_references, resp.total_matches) == ([], None)
    assert resp.metadata.search_type == "Broken" and resp.metadata.query == "data"


def test_item21_blank_query_scores_7_5_and_returns_first_10(index):
    names = [f"tool{i:02d}" for i in range(12)]
    index.index_tools("s", [tool(n, f"description {n}") for n in names])
    for query in ("", "   ", None):
        resp = search(index, query)
        assert resp.tool_names == names[:10]
        assert {r.relevance_score for r in resp.tool_references} == {7.5}


def test_item21_match_all_hit_counts_are_javas(index):
    index.index_tools("s", [tool("emptyDesc", ""), tool("crlf", "ab\r\ncd")])
    scores = {r.tool_name: r.relevance_score for r in search(index, "").tool_references}
    assert scores["emptyDesc"] == 6.5  # "" has one hit of .*
    assert scores["crlf"] == 10.5  # Java-verified: Java's "." stops at \r as well as \n: 5 hits


def test_item22_ascii_case_insensitive_only(index):
    index.index_tools(
        "s", [tool("weatherTool", "x"), tool("ecoleUpper", "ÉCOLE"), tool("ecoleLower", "une école")]
    )
    assert search(index, "WEATHER").tool_names == ["weatherTool"]
    assert search(index, "école").tool_names == ["ecoleLower"]  # é does not match É (Java-verified)
    assert search(index, "école").tool_references[0].relevance_score == pytest.approx(1.3571428571428572)


def test_item23_category_filter_has_no_effect_without_categories(index):
    index.index_tools("s", [tool("weatherTool", "weather"), tool("weatherMap", "weather map")])
    plain = search(index, "weather")
    filtered = search(index, "weather", category_filter="finance")
    assert filtered.tool_names == plain.tool_names == ["weatherTool", "weatherMap"]


def test_item23_deviation_category_filter_honoured_for_categorised_tools(index):
    index.index_tools(
        "s",
        [
            tool("weatherTool", "weather", category="Weather"),
            tool("weatherStocks", "weather futures", category="finance"),
            tool("weatherAny", "weather"),
        ],
    )
    assert search(index, "weather", category_filter="weather").tool_names == ["weatherTool", "weatherAny"]
    assert search(index, "weather").tool_names == ["weatherTool", "weatherStocks", "weatherAny"]


@pytest.mark.parametrize(
    "candidate, valid",
    [
        ("(?i)(weather|tools)", True),
        ("get.*", True),
        ("[invalid", False),
        (None, False),
        ("", False),
        ("   ", False),
        ("x" * 201, False),
        ("x" * 200, True),
        (42, False),
    ],
)
def test_item24_is_valid_pattern(candidate, valid):
    assert RegexToolIndex.is_valid_pattern(candidate) is valid


# --------------------------------------------------------------------------- other public methods


def test_size_total_size_close(index):
    assert index.size("nobody") == 0 and index.size(None) == 0
    index.index_tools("a", [tool("t1"), tool("t2")])
    index.index_tool("b", tool("t3"))
    assert (index.size("a"), index.size("b"), index.total_size()) == (2, 1, 3)
    index.close()
    assert index.total_size() == 0


def test_index_rejects_bad_arguments(index):
    with pytest.raises(ValueError, match="session_id"):
        index.index_tool("  ", tool("t1"))
    with pytest.raises(TypeError, match="expected a Tool"):
        index.index_tools("s", [tool("t1"), {"name": "t2"}])
    assert index.size("s") == 0  # a failed batch adds nothing


def test_unknown_mode_rejected():
    with pytest.raises(ValueError, match="unknown mode 'fuzzy'"):
        RegexToolIndex(mode="fuzzy")
    with pytest.raises(ValueError, match="pattern_budget_s"):
        RegexToolIndex(mode="pattern", pattern_budget_s=0)


def test_explain_keyword_spans_and_score_parts(index):
    index.index_tool("s", tool("weatherTool", "Returns current weather conditions"))
    explanation = index.explain("s", "weather", "weatherTool")
    assert isinstance(explanation, Explanation) and isinstance(explanation.details, RegexDetails)
    exp = explanation.details
    assert exp.pattern == "(?i)(weather)"
    assert exp.spans == [MatchSpan("name", 0, 7, "weather"), MatchSpan("description", 16, 23, "weather")]
    assert (exp.name_score, exp.parameter_score) == (3.0, 0.0)
    assert exp.description_score == pytest.approx(1.1923, abs=1e-4)
    assert explanation.score == exp.score == search(index, "weather").tool_references[0].relevance_score
    assert [(p.label, p.value) for p in explanation.parts] == [
        ("name", exp.name_score),
        ("description", exp.description_score),
    ]
    assert (explanation.rank, explanation.returned) == (1, True)
    assert exp.fields["description"][16:23] == "weather"
    with pytest.raises(ValueError, match="no tool named 'missing'"):
        index.explain("s", "weather", "missing")


# --------------------------------------------------------------------------- robustness


def test_concurrent_index_and_search_never_cross_sessions():
    index = RegexToolIndex()
    errors: list[str] = []

    def worker(w: int) -> None:
        try:
            for k in range(25):
                session = f"w{w}-s{k}"
                own = [f"t_{w}_{k}_{j}" for j in range(5)]
                index.index_tools(session, [tool(n, "shared weather text") for n in own[:4]])
                index.index_tool(session, tool(own[4], "shared weather"))
                names = search(index, "weather", session).tool_names
                if sorted(names) != own:
                    errors.append(f"{session}: {names}")
                if k % 5 == 0:
                    index.clear_index(session)
        except Exception as exc:  # noqa: BLE001 - a thread must report, not die silently
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert index.total_size() == 8 * 20 * 5


def test_one_megabyte_description(index):
    big = ("lorem ipsum dolor " * 60_000)[:1_000_000] + " weather"
    index.index_tools("s", [tool("bigTool", big), tool("weatherTool", "weather")])
    resp = search(index, "weather")
    assert resp.tool_names == ["weatherTool", "bigTool"]
    pattern_index = RegexToolIndex(mode="pattern")
    pattern_index.index_tool("s", tool("bigTool", big))
    assert search(pattern_index, "weath(er)?$").tool_names == ["bigTool"]


def test_lone_surrogates_and_undecodable_text(index):
    undecodable = b"caf\xe9 weather \xff\xfe".decode("utf-8", errors="surrogateescape")
    index.index_tools("s", [tool("lone", "\ud800 weather \udfff"), tool("bytesTool", undecodable)])
    scores = {r.tool_name: r.relevance_score for r in search(index, "weather").tool_references}
    assert scores["lone"] == pytest.approx(1.4166666666666667)  # Java-verified
    assert "bytesTool" in scores
    assert pattern("\ud800abc weather") == "(?i)(\ud800abc|weather)"
    pattern_index = RegexToolIndex(mode="pattern")
    pattern_index.index_tools("s", [tool("lone", "\ud800 weather \udfff"), tool("bytesTool", undecodable)])
    assert search(pattern_index, "weather").tool_names == ["lone", "bytesTool"]


# --------------------------------------------------------------------------- pattern mode (our extension)

WEATHER = tool(
    "get_weather",
    "Returns current weather conditions",
    {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City name"},
            "options": {
                "type": "object",
                "properties": {"units": {"type": "string", "description": "celsius or fahrenheit"}},
            },
            "days": {
                "type": "array",
                "items": {"type": "object", "properties": {"zipcode": {"type": "string"}}},
            },
        },
    },
)
EMAIL = tool(
    "send_email", "Send an email to a recipient", {"type": "object", "properties": {"to": {"type": "string"}}}
)


@pytest.fixture
def pindex() -> RegexToolIndex:
    index = RegexToolIndex(mode="pattern")
    index.index_tools("s", [WEATHER, EMAIL])
    return index


def test_pattern_mode_query_is_a_regex(pindex):
    assert search(pindex, r"^get_\w+").tool_names == ["get_weather"]
    assert sorted(search(pindex, "WEATHER|e-?mail").tool_names) == [
        "get_weather",
        "send_email",
    ]  # ignores case
    assert search(pindex, "no such thing").tool_names == []
    assert search(pindex, "weather").metadata.search_type == "RegexToolIndex"


def test_pattern_mode_searches_parameter_names_and_descriptions(pindex):
    assert search(pindex, "fahrenheit").tool_names == ["get_weather"]  # nested object description
    assert search(pindex, "zipcode").tool_names == ["get_weather"]  # array-of-objects item name
    assert search(pindex, "^location$").tool_names == ["get_weather"]
    keyword = RegexToolIndex()
    keyword.index_tools("s", [WEATHER, EMAIL])
    assert search(keyword, "fahrenheit").tool_names == []  # Spring never looks at parameters
    assert [p.label for p in keyword.explain("s", "fahrenheit", "get_weather").parts] == [
        "name",
        "description",
    ]


def test_pattern_mode_parameter_scoring_and_explain(pindex):
    explanation = pindex.explain("s", "fahren|zip", "get_weather")
    assert [p.label for p in explanation.parts] == ["name", "description", "parameters"]
    assert sum(p.value for p in explanation.parts) == explanation.score
    exp = explanation.details
    assert exp.spans == [
        MatchSpan("parameter:options.units:description", 11, 17, "fahren"),
        MatchSpan("parameter:days[].zipcode", 0, 3, "zip"),
    ]
    assert exp.parameter_score == pytest.approx(2.0 + 0.5 / (1 + 0.1 * 0))  # two hits, earliest at 0
    assert (exp.name_score, exp.description_score) == (0.0, 0.0)
    assert search(pindex, "fahren|zip").tool_references[0].relevance_score == pytest.approx(exp.score)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("[invalid", "unterminated character set"),
        ("(unclosed", "missing \\), unterminated subpattern"),
        ("a{2,1}", "min repeat greater"),
        ("", "empty"),
        ("   ", "empty"),
        (None, "empty"),
        ("x" * 201, "201 characters long; the limit is 200"),
        ("(((a{999}){999}){999})", "too complex"),
    ],
)
def test_pattern_mode_bad_patterns_raise_pattern_error(pindex, bad, message):
    with pytest.raises(PatternError, match=message) as info:
        search(pindex, bad)
    assert isinstance(info.value, ValueError)
    assert info.value.pattern == bad


def test_pattern_mode_200_chars_allowed(pindex):
    exactly_200 = "weather|" + "x" * 192
    assert len(exactly_200) == 200
    assert search(pindex, exactly_200).tool_names == ["get_weather"]


@pytest.mark.parametrize(
    "evil, text", [("(a|aa)+$", "a" * 40 + "b"), ("(a+)+$", "a" * 5000 + "b"), ("(x+x+)+y", "x" * 5000)]
)
def test_pattern_mode_catastrophic_backtracking_cannot_hang(evil, text):
    index = RegexToolIndex(mode="pattern")
    index.index_tools("s", [tool("victim", text), tool("other", "harmless")])
    started = time.perf_counter()
    try:
        search(index, evil)
    except PatternTimeoutError as exc:
        assert "catastrophic backtracking" in str(exc)
    # Proves no hang (the search's budget, plus a busy machine's slack); not a performance assertion.
    assert time.perf_counter() - started < index.pattern_budget_s + 10


def test_pattern_mode_total_budget_is_enforced():
    index = RegexToolIndex(mode="pattern", pattern_budget_s=0.001)
    index.index_tools("s", [tool(f"t{i}", "some text " * 50) for i in range(3000)])
    with pytest.raises(PatternTimeoutError, match="total budget of 1 ms"):
        search(index, "t.*x")


def test_pattern_mode_keeps_index_contract(pindex):
    assert search(pindex, "weather", "unknown") == empty_response()
    pindex.clear_index("s")
    assert pindex.size("s") == 0
    with pytest.raises(ValueError, match="max_results"):
        search(pindex, "weather", max_results=0)


# ------------------------------------------------------------------- bad input and the index's own default


@pytest.mark.parametrize("mode", ["keywords", "pattern"])
@pytest.mark.parametrize("bad", [42, b"weather", ["weather"], 2.5])
def test_non_string_query_is_refused_with_a_message_naming_query(mode, bad):
    index = RegexToolIndex(mode=mode)
    index.index_tool("s", tool("weatherTool", "weather"))
    with pytest.raises(TypeError, match="query must be a str") as info:
        search(index, bad)
    assert type(bad).__name__ in str(info.value)
    assert "empty" not in str(info.value)


def test_default_max_results_is_the_index_own():
    index = RegexToolIndex(default_max_results=3)
    index.index_tools("s", [tool(f"dataTool{i}", "data") for i in range(20)])
    assert search(index, "data").tool_names == ["dataTool0", "dataTool1", "dataTool2"]
    assert len(search(index, "data", max_results=12).tool_references) == 12
    assert index.explain("s", "data", "dataTool3").returned is False  # rank 4 of a default 3
    with pytest.raises(ValueError, match="default_max_results"):
        RegexToolIndex(default_max_results=0)


def test_explain_rank_and_score_match_search_for_every_tool(index):
    index.index_tools(
        "s",
        [
            tool("weatherTool", "weather"),
            tool("stockTool", "stock prices\n\nand weather"),
            tool("mapTool", "maps"),
        ],
    )
    for query in ("weather", "", "stock weather"):
        refs = search(index, query).tool_references
        for rank, ref in enumerate(refs, 1):
            exp = index.explain("s", query, ref.tool_name)
            assert (exp.score, exp.rank, exp.returned) == (ref.relevance_score, rank, True)
            assert sum(p.value for p in exp.parts) == exp.score
    missing = index.explain("s", "weather", "mapTool")
    assert (missing.score, missing.rank, missing.returned, missing.matched) == (0.0, None, False, False)


def test_blank_query_ranks_multi_line_descriptions_first(index):
    # Java's "." stops at line terminators, so ".*" hits every line of a description: a one-line description
    # scores 7.5 and each extra line adds hits (this is why a blank query on the GitHub catalog shows 21.5).
    index.index_tools(
        "s", [tool("oneLine", "Lists issues."), tool("threeLines", "Lists issues.\n\nPaginated.")]
    )
    scores = {r.tool_name: r.relevance_score for r in search(index, "").tool_references}
    assert scores == {"threeLines": 5.0 + 5 + 0.5, "oneLine": 7.5}
    assert search(index, "").tool_names == ["threeLines", "oneLine"]


# ------------------------------------------------------------------- a stalled try is not backtracking


class _StallingMatcher(PatternMatcher):
    """Its first ``stalls`` tries time out after burning their whole timeout in CPU: what a thread whose vCPU
    the host preempted can look like, and what backtracking looks like every time."""

    def __init__(self, stalls: int):
        # a budget that is never what stops it, even on a loaded machine
        limits = SimpleNamespace(pattern_call_timeout_s=0.01, pattern_budget_s=30.0)
        super().__init__("file", regex.compile("file"), limits, (1, 1, 1, False))
        self.stalls, self.timeouts = stalls, []

    def _match(self, text, timeout):
        if len(self.timeouts) < self.stalls:
            self.timeouts.append(timeout)
            started = time.thread_time()
            while time.thread_time() - started < timeout:
                pass
            raise TimeoutError
        return super()._match(text, timeout)


@pytest.mark.parametrize("stalls", [1, 2])
def test_a_busy_looking_timeout_is_tried_again_before_the_pattern_is_blamed(stalls):
    matcher = _StallingMatcher(stalls)
    assert matcher.find("read a file") == [(7, 11)]
    assert matcher.timeouts == pytest.approx([0.01, 0.02][:stalls])


def test_a_pattern_that_times_out_on_every_try_is_refused_naming_the_tries():
    matcher = _StallingMatcher(stalls=3)
    refused = r"timed out on each of 3 tries \(10, 20, 40 ms; catastrophic backtracking"
    with pytest.raises(PatternTimeoutError, match=refused):
        matcher.find("read a file")
    assert matcher.timeouts == pytest.approx([0.01, 0.02, 0.04])
