"""BM25ToolIndex / LuceneToolIndex: spec §15 items 1-6 and 25-34, the §4 reference scores (Lucene 8.7
ground truth), the StandardAnalyzer port, the length norm, explanations, options and robustness."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from bm25_reference import naive_scores

import toolsearch_lab.index.bm25.index as li
from toolsearch_lab.index.bm25 import scoring as bm25_scoring
from toolsearch_lab.index.bm25.index import (
    LENGTH_TABLE,
    BM25ToolIndex,
    LuceneToolIndex,
    byte4_to_int,
    encode_lengths,
    int_to_byte4,
)
from toolsearch_lab.index.bm25.scoring import exact_all
from toolsearch_lab.model import SearchRequest, Tool, ToolIndex, ToolReference
from toolsearch_lab.text.lucene import analyze, analyze_split, split_identifier

# Spring's demo tools ([COM] examples/tool-search-tool-demo, Application.MyTools): these exact descriptions
# reproduce the §4 demo reference scores.
DEMO_TOOLS = [
    ("weather", "Get the weather for a given location and at a given time"),
    ("clothing", "Get of clothing shops names for a given location and at a given time"),
    ("currentTime", "Provides the current date and time (as date-time string) for a given location"),
]


def make_index(tools, min_score_threshold=0.0, session="s", **kw) -> BM25ToolIndex:
    index = BM25ToolIndex(min_score_threshold, **kw)
    index.index_tools(session, [t if isinstance(t, Tool) else Tool(*t) for t in tools])
    return index


def hits(index, query, session="s", **kw) -> list[tuple[str, float]]:
    resp = index.search(SearchRequest(session, query, **kw))
    return [(r.tool_name, r.relevance_score) for r in resp.tool_references]


# --- §4 reference scores ------------------------------------------------------------------------------

REFERENCE_CASES = [
    (
        [
            ("weatherTool", "Returns current weather conditions"),
            ("calculatorTool", "Performs arithmetic calculations"),
        ],
        "weather conditions",
        [("weatherTool", 1.19068)],
    ),
    (
        [("getWeather", "Retrieves meteorological data"), ("calculateTax", "Computes sales tax")],
        "getWeather",
        [("getWeather", 1.89040)],
    ),
    (
        [
            ("weather", "Current conditions provider"),
            ("forecast", "Provides detailed weather predictions daily"),
        ],
        "weather",
        [("weather", 1.89040), ("forecast", 0.57167)],
    ),
    (
        [(f"tool{i}", f"Processes data stream number {i}") for i in range(10)],
        "data",
        [(f"tool{i}", 0.042291) for i in range(10)],
    ),
    (
        [(f"dataTool{i}", f"Retrieves data from source {i}") for i in range(8)],
        "data",
        [(f"dataTool{i}", 0.051962) for i in range(8)],
    ),
    (
        [("stockTool", "Fetches live stock prices"), ("newsTool", "Fetches latest news headlines")],
        "stock prices",
        [("stockTool", 1.26027)],
    ),
    ([("weatherTool", "Weather data source")], "weather", [("weatherTool", 0.26153)]),
    (
        [("get_weather", "Get the weather for a location"), ("get-time", "Get the current time")],
        "get weather",
        [("get-time", 0.64478), ("get_weather", 0.36784)],
    ),
    (DEMO_TOOLS, "current time", [("currentTime", 0.51919), ("weather", 0.06329), ("clothing", 0.05948)]),
    (DEMO_TOOLS, "weather", [("weather", 3.60468)]),
    (DEMO_TOOLS, "clothing shops", [("clothing", 2.63924)]),
]


@pytest.mark.parametrize(
    "tools,query,expected", REFERENCE_CASES, ids=[c[1] + f"/{len(c[0])}" for c in REFERENCE_CASES]
)
def test_reference_scores_match_lucene(tools, query, expected):
    got = hits(make_index(tools), query, max_results=20)
    assert [n for n, _ in got] == [n for n, _ in expected]
    for (_, score), (_, want) in zip(got, expected, strict=False):
        assert score == pytest.approx(want, abs=1e-4)


@pytest.mark.parametrize("tools,query,expected", REFERENCE_CASES[:3] + REFERENCE_CASES[-3:])
def test_naive_reference_agrees(tools, query, expected):
    scores = naive_scores(tools, query)
    for name, want in expected:
        assert scores[[n for n, _ in tools].index(name)] == pytest.approx(want, abs=1e-4)


def test_scores_are_float32_values():
    ((_, score),) = hits(make_index(REFERENCE_CASES[0][0]), "weather conditions")
    assert float(np.float32(score)) == score


# --- §15 items 1-6 ------------------------------------------------------------------------------------


def test_item1_tool_reference_fields_and_serialisation():
    index = make_index(DEMO_TOOLS)
    ref = index.search(SearchRequest("s", "weather")).tool_references[0]
    assert isinstance(ref, ToolReference)
    assert ref.tool_name == "weather" and ref.summary == DEMO_TOOLS[0][1]
    assert ref.to_dict() == {
        "toolName": "weather",
        "relevanceScore": ref.relevance_score,
        "summary": DEMO_TOOLS[0][1],
    }


def test_item2_response_shape_and_metadata():
    index = make_index(DEMO_TOOLS, min_score_threshold=0.25)
    resp = index.search(SearchRequest("s", "weather", max_results=None, category_filter=None))
    assert isinstance(resp.tool_references, list)
    assert resp.total_matches == len(resp.tool_references) == 1
    assert resp.metadata.search_type == "LuceneToolIndex"
    assert resp.metadata.query == "weather"
    assert resp.metadata.search_time_ms is not None and resp.metadata.search_time_ms >= 0
    assert isinstance(index, ToolIndex)
    assert LuceneToolIndex is BM25ToolIndex


def test_item3_batch_indexing_equals_one_by_one_in_order():
    tools = [Tool(f"dataTool{i}", f"Retrieves data from source {i}") for i in range(8)]
    batch, single = BM25ToolIndex(0.0), BM25ToolIndex(0.0)
    batch.index_tools("s", tools)
    for t in tools:
        single.index_tool("s", t)
    assert hits(batch, "data source 3") == hits(single, "data source 3")
    assert [n for n, _ in hits(batch, "data")] == [t.name for t in tools]  # ties keep insertion order
    assert batch.size("s") == 8


def test_item4_session_isolation():
    index = BM25ToolIndex(0.0)
    index.index_tool("A", Tool("weatherTool", "Returns current weather conditions"))
    index.index_tool("B", Tool("stockTool", "Fetches live stock prices"))
    assert [n for n, _ in hits(index, "weather", "A")] == ["weatherTool"]
    assert hits(index, "weather", "B") == []
    assert [n for n, _ in hits(index, "stock", "B")] == ["stockTool"]


def test_item5_clear_index():
    index = BM25ToolIndex(0.0)
    index.index_tools("A", [Tool("weatherTool", "weather"), Tool("w2", "weather again")])
    index.index_tool("B", Tool("weatherTool", "weather"))
    index.clear_index("A")
    assert index.size("A") == 0 and hits(index, "weather", "A") == []
    assert hits(index, "weather", "B")
    index.clear_index("nope")  # unknown session: no-op
    assert index.total_size() == 1


@pytest.mark.parametrize("session", [None, "", "   ", "unknown"])
def test_item6_blank_or_unknown_session_gives_empty_response(session):
    index = make_index(DEMO_TOOLS)
    resp = index.search(SearchRequest(session, "weather"))
    assert resp.tool_references == [] and resp.total_matches is None and resp.metadata is None


# --- §15 items 25-34 ----------------------------------------------------------------------------------


def test_item25_default_min_score_threshold_and_override():
    assert BM25ToolIndex().min_score_threshold == 0.25
    assert BM25ToolIndex(0.0).min_score_threshold == 0.0
    assert BM25ToolIndex(0.5).min_score_threshold == 0.5
    for bad in (-0.1, float("nan"), "0.2", True):
        with pytest.raises(ValueError, match="min_score_threshold"):
            BM25ToolIndex(bad)


def test_item26_weather_conditions_only_weather_tool():
    index = make_index(REFERENCE_CASES[0][0], min_score_threshold=0.25)
    got = hits(index, "weather conditions")
    assert [n for n, _ in got] == ["weatherTool"]
    assert got[0][1] == pytest.approx(1.1907, abs=1e-4)


def test_item27_camel_case_name_found_through_lowercased_name_field():
    index = make_index(
        [("getWeather", "Retrieves meteorological data"), ("calculateTax", "Computes sales tax")], 0.25
    )
    assert hits(index, "getWeather")[0] == ("getWeather", pytest.approx(1.8904, abs=1e-4))
    assert hits(index, "GETWEATHER")[0][0] == "getWeather"


def test_item28_name_match_outranks_description_match():
    index = make_index(REFERENCE_CASES[2][0], 0.25)
    (first, s1), (second, s2) = hits(index, "weather")
    assert (first, second) == ("weather", "forecast") and s1 == pytest.approx(1.8904, abs=1e-4)
    assert s2 == pytest.approx(0.5717, abs=1e-4)
    # one token: Lucene merges the identical clauses, name 4+2 = 6, description 1+1 = 2
    assert [t.boost for c in index.explain("s", "weather", "weather").details.clauses for t in c.terms] == [
        6.0
    ]
    assert [t.boost for c in index.explain("s", "weather", "forecast").details.clauses for t in c.terms] == [
        2.0
    ]


def test_item29_threshold_on_raw_score():
    tools = [(f"tool{i}", f"Processes data stream number {i}") for i in range(10)]
    assert hits(make_index(tools, 0.25), "data") == []
    assert len(hits(make_index(tools, 0.0), "data")) == 10


def test_item30_top_n_cut_happens_before_threshold_and_never_back_fills():
    tools = [(f"dataTool{i}", f"Retrieves data from source {i}") for i in range(8)]
    assert hits(make_index(tools, 0.25), "data", max_results=3) == []
    assert len(hits(make_index(tools, 0.0), "data", max_results=3)) == 3
    # Threshold between rank 1 and rank 2: max_results=1 keeps one, max_results=5 keeps only what passes.
    index = make_index(REFERENCE_CASES[2][0], 1.0)
    assert [n for n, _ in hits(index, "weather", max_results=1)] == ["weather"]
    assert [n for n, _ in hits(index, "weather", max_results=5)] == ["weather"]


def test_item30_score_equal_to_threshold_is_kept():
    tools = [("weatherTool", "Weather data source")]
    ((_, score),) = hits(make_index(tools), "weather")
    assert hits(make_index(tools, score), "weather") == [("weatherTool", score)]
    assert hits(make_index(tools, float(np.nextafter(np.float32(score), np.float32(1)))), "weather") == []


@pytest.mark.parametrize("query", ["???", "", "   ", "-- ... !!", None, "°"])
def test_item31_query_without_tokens_gives_empty_response(query):
    resp = make_index(DEMO_TOOLS).search(SearchRequest("s", query))
    assert resp.tool_references == [] and resp.total_matches is None and resp.metadata is None


def test_item32_tokenisation_and_no_stemming():
    assert analyze("get_weather getWeather weather.get") == ["get_weather", "getweather", "weather.get"]
    assert analyze("get-weather") == ["get", "weather"]
    index = make_index([("forecaster", "Predicts rains"), ("get_weather", "Returns the forecast")])
    assert hits(index, "rain") == []  # no stemming: rains != rain
    assert hits(index, "get") == []  # snake_case name is one token
    assert hits(index, "weather") == []


def test_item33_tools_visible_immediately_including_after_a_search():
    index = BM25ToolIndex(0.0)
    index.index_tool("s", Tool("stockTool", "Fetches live stock prices"))
    index.index_tool("s", Tool("newsTool", "Fetches latest news headlines"))
    assert hits(index, "stock prices")[0][0] == "stockTool"
    index.index_tool("s", Tool("priceTool", "Stock prices and stock quotes"))  # after the first search
    assert "priceTool" in [n for n, _ in hits(index, "stock prices")]
    assert index.size("s") == 3


def test_item34_concurrent_searches_on_one_session():
    index = make_index(DEMO_TOOLS + REFERENCE_CASES[2][0])
    results, errors = [], []

    def worker():
        try:
            for _ in range(50):
                results.append(hits(index, "weather"))
        except Exception as exc:  # noqa: BLE001 - any failure in a thread is reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 400 and all(r == results[0] and r for r in results)


def test_concurrent_indexing_and_searching_200_sessions_no_cross_talk():
    index = BM25ToolIndex(0.0)
    errors = []

    def worker(w):
        try:
            for j in range(25):
                sid = f"w{w}-s{j}"
                index.index_tool(sid, Tool(f"tool_{w}_{j}", "Shared words about weather and data"))
                index.index_tool(sid, Tool(f"other_{w}_{j}", "Weather data provider"))
                got = [n for n, _ in hits(index, "weather data", sid)]
                assert sorted(got) == sorted([f"tool_{w}_{j}", f"other_{w}_{j}"]), got
        except Exception as exc:  # noqa: BLE001 - any failure in a thread is reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert index.total_size() == 400


# --- analyzer ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,tokens",
    [
        ("get_weather", ["get_weather"]),
        ("getWeather", ["getweather"]),
        ("get-weather", ["get", "weather"]),
        ("weather.get", ["weather.get"]),
        ("foo.bar.baz", ["foo.bar.baz"]),
        ("mcp:search", ["mcp:search"]),
        ("v2Api", ["v2api"]),
        ("a1-b2", ["a1", "b2"]),
        ("it's 30°C", ["it's", "30", "c"]),
        ("…conditions, e.g. rain!", ["conditions", "e.g", "rain"]),
        ("1,000 3.14 10:30", ["1,000", "3.14", "10", "30"]),
        ("a..b __init__ ___ x_", ["a", "b", "__init__", "x_"]),
        ("搜索关键词", ["搜", "索", "关", "键", "词"]),
        ("カタカナabc", ["カタカナ", "abc"]),
        ("Café ΣΟΦΙΑ İzmir", ["café", "σοφια", "izmir"]),  # Java per-code-point lower case
        ("ΟΔΟΣ", ["οδοσ"]),  # no final-sigma rule in Java's Character.toLowerCase
    ],
)
def test_standard_analyzer_cases(text, tokens):
    assert analyze(text) == tokens


def test_max_token_length_255_chops():
    assert analyze("x" * 600) == ["x" * 255, "x" * 255, "x" * 90]


def test_split_identifier_helper():
    assert split_identifier("getHTTPResponse") == ["get", "http", "response"]
    assert split_identifier("mcp:search_tools") == ["mcp", "search", "tools"]
    assert split_identifier("it's") == ["it's"]
    assert analyze_split("get_weather now") == (["get", "weather", "now"], ["get_weather"])


# --- length norm (SmallFloat) ----------------------------------------------------------------------


def test_small_float_norm_encoding():
    assert [byte4_to_int(int_to_byte4(i)) for i in range(25)] == list(range(25))
    assert byte4_to_int(int_to_byte4(100)) == 96 and byte4_to_int(int_to_byte4(1000)) == 984
    assert int_to_byte4(2**31 - 1) == 255 and LENGTH_TABLE[255] == byte4_to_int(255)
    lengths = np.array(list(range(5000)) + [2**20 + 7, 2**31 - 1])
    assert encode_lengths(lengths).tolist() == [int_to_byte4(int(i)) for i in lengths]
    decoded = [byte4_to_int(int_to_byte4(i)) for i in range(3000)]
    assert all(d <= i for i, d in enumerate(decoded)) and decoded == sorted(decoded)


# --- explanation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query,tool",
    [
        ("current time", "currentTime"),
        ("weather", "weather"),
        ("given location time", "clothing"),
        ("a given time", "weather"),
    ],
)
def test_explain_sums_to_the_score(query, tool):
    index = make_index(DEMO_TOOLS)
    score = dict(hits(index, query))[tool]
    e = index.explain("s", query, tool)
    assert e.score == score and e.matched
    clause_sum = np.float32(sum(p.value for p in e.parts))
    assert float(clause_sum) == pytest.approx(score, rel=1e-6)
    assert [p.value for p in e.parts] == [c.score for c in e.details.clauses]
    for c in e.details.clauses:
        assert float(np.float32(sum(t.contribution for t in c.terms))) == pytest.approx(c.score, rel=1e-6)
    assert (
        "score" in e.to_text()
        and e.details.rows()
        and e.rank == 1 + [n for n, _ in hits(index, query)].index(tool)
    )


def test_explain_phrase_and_missing_tool():
    index = make_index(DEMO_TOOLS)
    e = index.explain("s", "given location", "weather")
    phrases = [t for c in e.details.clauses for t in c.terms if t.kind == "phrase"]
    assert phrases and phrases[0].term == "given location" and phrases[0].tf == 1
    assert index.explain("s", "stock", "weather").score == 0.0
    with pytest.raises(KeyError):
        index.explain("s", "weather", "nope")
    with pytest.raises(KeyError):
        index.explain("other", "weather", "weather")


# --- options ----------------------------------------------------------------------------------------


def test_split_identifiers_finds_snake_and_camel_case():
    tools = [
        ("get_weather", "Returns the forecast"),
        ("getStockPrice", "Quotes"),
        ("calculator", "Adds numbers"),
    ]
    assert hits(make_index(tools), "weather") == []
    split = make_index(tools, split_identifiers=True)
    assert [n for n, _ in hits(split, "weather")] == ["get_weather"]
    assert [n for n, _ in hits(split, "stock price")] == ["getStockPrice"]
    assert hits(split, "get_weather")[0][0] == "get_weather"  # the whole token still matches
    e = split.explain("s", "stock price", "getStockPrice")
    assert any(t.kind == "phrase" and t.term == "stock price" for c in e.details.clauses for t in c.terms)


def test_include_parameters_indexes_parameter_names_and_descriptions():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "Postal code or town"}},
    }
    tools = [Tool("lookup", "Looks things up", schema), Tool("other", "Does other things")]
    assert hits(make_index(tools), "city") == []
    with_params = make_index(tools, include_parameters=True)
    assert [n for n, _ in hits(with_params, "city")] == ["lookup"]
    assert [n for n, _ in hits(with_params, "postal")] == ["lookup"]
    with pytest.raises(ValueError, match="parameter_boost"):
        BM25ToolIndex(include_parameters=True, parameter_boost=0)


def test_category_filter_is_honoured_for_categorised_tools():
    tools = [
        Tool("w1", "weather report", category="Weather"),
        Tool("w2", "weather shop", category="shopping"),
        Tool("w3", "weather log"),
    ]
    index = make_index(tools)
    assert sorted(n for n, _ in hits(index, "weather", category_filter="weather")) == ["w1", "w3"]
    assert sorted(n for n, _ in hits(index, "weather", category_filter="unknown")) == ["w3"]
    assert len(hits(index, "weather")) == 3
    plain = make_index(DEMO_TOOLS)  # no categories: filter has no effect, as in Spring
    assert hits(plain, "weather", category_filter="x") == hits(plain, "weather")


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", True])
def test_max_results_must_be_positive_int(bad):
    with pytest.raises(ValueError, match="max_results"):
        make_index(DEMO_TOOLS).search(SearchRequest("s", "weather", max_results=bad))


def test_default_max_results_is_10():
    tools = [(f"t{i}", "weather") for i in range(15)]
    assert len(hits(make_index(tools), "weather")) == 10
    assert len(hits(make_index(tools), "weather", max_results=12)) == 12


# --- robustness ---------------------------------------------------------------------------------------


def test_one_megabyte_description_and_odd_text():
    big = ("weather data " * 80_000)[:1_000_000]
    tools = [("big", big), ("small", "weather"), ("bad", "caf\udce9 m\udcff\ud800 weather \x00")]
    index = make_index(tools)
    got = dict(hits(index, "weather"))
    assert set(got) == {"big", "small", "bad"}
    expected = naive_scores(tools, "weather")
    assert [got[n] for n, _ in tools] == pytest.approx(expected, rel=1e-5)
    e = index.explain("s", "weather", "big")
    leaf = e.details.clauses[0].terms[0]
    assert leaf.field == "toolDescription" and leaf.dl == len(analyze(big)) > leaf.dl_norm  # lossy norm


def test_non_ascii_catalog_cjk_per_character():
    index = make_index([("bing_search", "使用必应搜索指定的关键词"), ("weather_cn", "查询城市天气预报")])
    assert [n for n, _ in hits(index, "天气")] == ["weather_cn"]
    assert hits(index, "搜索")[0][0] == "bing_search"


def test_index_validates_inputs():
    index = BM25ToolIndex()
    with pytest.raises(ValueError, match="session_id"):
        index.index_tool("  ", Tool("a", "b"))
    with pytest.raises(TypeError):
        index.index_tool("s", {"name": "a"})
    index.close()
    assert index.total_size() == 0


# --- vectorised paths vs the loop-based reference ---------------------------------------------------------


def _synthetic(n, seed):
    rng = random.Random(seed)
    common = ["the", "a", "for", "and", "data", "get", "list", "of"]
    rare = [f"w{i}" for i in range(400)]
    tools = []
    for i in range(n):
        words = [rng.choice(common) for _ in range(rng.randint(2, 12))] + [
            rng.choice(rare) for _ in range(rng.randint(0, 4))
        ]
        rng.shuffle(words)
        tools.append((f"tool{i}_{rng.choice(rare)}", " ".join(words)))
    return tools


def test_scores_and_ranking_match_naive_reference():
    tools = _synthetic(300, 1)
    index = make_index(tools)
    rng = random.Random(2)
    for _ in range(40):
        q = " ".join(
            rng.choice(["the", "data", "get", "w1", "w7", "w30", "a", "list of", f"w{rng.randrange(400)}"])
            for _ in range(rng.randint(1, 4))
        )
        expected = naive_scores(tools, q)
        order = [i for i in sorted(range(len(tools)), key=lambda i: (-expected[i], i)) if expected[i] > 0][
            :10
        ]
        got = hits(index, q)
        assert [n for n, _ in got] == [tools[i][0] for i in order], q
        assert [s for _, s in got] == pytest.approx([expected[i] for i in order], rel=1e-5)


def test_pruned_top_k_equals_dense_scoring(monkeypatch):
    """The MaxScore-pruned top k (bounds, finalists, exact rescoring) equals scoring every matching doc."""
    tools = _synthetic(4000, 3)
    index = make_index(tools)
    rng = random.Random(4)
    queries = [
        " ".join(rng.choice(["the", "a", "for", "data", "of"]) for _ in range(4))
        + f" w{rng.randrange(400)} w{rng.randrange(400)}"
        for _ in range(40)
    ] + ["the", "a a a", "the of", "data data w3", "for the data of a", "w5 w5 w5 w5 w5"]
    cases = [(q, k) for q in queries for k in (1, 3, 10, 50)]
    monkeypatch.setattr(bm25_scoring, "_pruned_cost", lambda *a: 0)  # always prune
    fast = [hits(index, q, max_results=k) for q, k in cases]
    monkeypatch.setattr(li, "top_k", exact_all)
    dense = [hits(index, q, max_results=k) for q, k in cases]
    assert fast == dense


@pytest.mark.parametrize("options", [{}, {"split_identifiers": True, "include_parameters": True}])
def test_pruned_top_k_equals_dense_scoring_with_ties_filters_and_options(monkeypatch, options):
    rng = random.Random(9)
    vocab = ["the", "a", "get", "list", "data", "file", "user", "repo"] + [f"w{i}" for i in range(60)]
    tools = []
    for i in range(1500):
        # many identical descriptions: masses of exact ties that must be broken by insertion order
        desc = " ".join(rng.choice(vocab) for _ in range(rng.choice([3, 3, 3, 8, 30])))
        params = {
            "type": "object",
            "properties": {rng.choice(vocab): {"type": "string", "description": desc}},
        }
        cat = rng.choice([None, "fs", "web"])
        tools.append(Tool(f"{rng.choice(vocab)}_{rng.choice(vocab)}{i % 7}", desc, params, category=cat))
    index = BM25ToolIndex(0.0, **options)
    index.index_tools("s", tools)
    queries = [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 8))) for _ in range(60)]
    queries += ["get_list", "getList data", "the the the"]
    cases = [(q, k, c) for q in queries for k in (1, 10, 200) for c in (None, "fs")]

    def run():
        return [hits(index, q, max_results=k, category_filter=c) for q, k, c in cases]

    monkeypatch.setattr(bm25_scoring, "_pruned_cost", lambda *a: 0)  # always prune
    fast = run()
    monkeypatch.setattr(li, "top_k", exact_all)
    assert fast == run()


@pytest.mark.parametrize(
    "options", [{}, {"split_identifiers": True, "include_parameters": True, "parameter_boost": 1.5}]
)
def test_compiled_query_matches_the_plan(options):
    """The array form used for searching (``QueryShape.compile``) has exactly the leaves, boosts and clause
    order of ``QueryShape.plan`` (the form explanations use), for Spring's query and the opt-in options."""
    tools = [
        Tool(n, d, {"type": "object", "properties": {"city": {"type": "string", "description": d}}})
        for n, d in DEMO_TOOLS + [("get_weather", "Get weather data for a city"), ("getTime", "time now")]
    ]
    index = BM25ToolIndex(0.0, **options)
    index.index_tools("s", tools)
    for query in [
        "weather",
        "weather weather",
        "get the weather",
        "getWeather for a city",
        "time time now",
        "unknownword weather",
        "unknownword",
        "a a a b",
        "get_weather",
    ]:
        snap = index._snapshot_of("s")
        phrase, terms = index._query_tokens(query, snap)
        ids = {t: snap.vocab.get(t, -1) for t in terms}
        compiled = index._shape.compile(snap.postings, snap.fields, phrase, terms, ids)
        expected = []
        for g, group in enumerate(index._shape.plan(phrase, terms)):
            for item in group.items:
                if item.is_phrase:
                    continue
                key = index._field_pos[item.field] * snap.postings.n_terms + ids.get(item.terms[0], -1)
                if ids.get(item.terms[0], -1) >= 0 and snap.fields[item.field].doc_freq(ids[item.terms[0]]):
                    expected.append((key, np.float32(item.boost), g))
        got = [
            (int(k), np.float32(b), int(g))
            for k, b, g in zip(
                compiled.keys,
                compiled.mult
                * [
                    index._base_boost[index._field_names[int(k) // snap.postings.n_terms]]
                    for k in compiled.keys
                ],
                compiled.group,
                strict=False,
            )
        ]
        assert got == expected, query
        assert compiled.n_groups == len(index._shape.plan(phrase, terms)), query


def test_hot_path_tool_references_equal_constructed_ones():
    """search() builds ToolReference objects without the dataclass constructor: same value, hash, repr."""
    index = make_index(DEMO_TOOLS)
    refs = index.search(SearchRequest("s", "weather", max_results=10)).tool_references
    assert refs
    for r in refs:
        built = ToolReference(r.tool_name, r.relevance_score, r.summary)
        assert type(r) is ToolReference
        assert r == built and hash(r) == hash(built) and repr(r) == repr(built)
        assert r.to_dict() == built.to_dict()


@pytest.mark.parametrize("options", [{}, {"split_identifiers": True, "include_parameters": True}])
def test_exact_all_clause_rows_equal_sparse_clauses(monkeypatch, options):
    """exact_all's small-index variant (one row per clause, two clauses added in float) scores exactly like
    its sparse variant: phrases, repeated tokens (boosts x2, x3), category filters, 2-5 clauses."""
    rng = random.Random(21)
    vocab = ["the", "a", "get", "list", "data", "file", "user", "repo"] + [f"w{i}" for i in range(40)]
    tools = []
    for i in range(800):
        desc = " ".join(rng.choice(vocab) for _ in range(rng.choice([2, 5, 12, 40])))
        params = {
            "type": "object",
            "properties": {rng.choice(vocab): {"type": "string", "description": desc}},
        }
        name = f"{rng.choice(vocab)}_{rng.choice(vocab)}{i % 5}"
        tools.append(Tool(name, desc, params, category=rng.choice([None, "fs"])))
    index = BM25ToolIndex(0.0, **options)
    index.index_tools("s", tools)
    queries = [" ".join(rng.choice(vocab) for _ in range(rng.randint(1, 7))) for _ in range(80)]
    queries += ["get list", "get_list data", "the the the", "w1 w1 w2", "data file user repo get"]
    cases = [(q, k, c) for q in queries for k in (1, 10, 300) for c in (None, "fs")]

    def run():
        return [hits(index, q, max_results=k, category_filter=c) for q, k, c in cases]

    monkeypatch.setattr(li, "top_k", exact_all)
    rows = run()
    monkeypatch.setattr(bm25_scoring, "_DENSE_CLAUSES_MAX", -1)  # always the sparse variant
    assert rows == run()


def test_index_tools_builds_the_search_arrays_right_away():
    """A batch is searchable with no build left for the first search; single additions are batched into the
    next build instead of rebuilding once per tool."""
    index = BM25ToolIndex()
    index.index_tools("s", [Tool(n, d) for n, d in DEMO_TOOLS])
    built = index._sessions["s"].snapshot
    assert built is not None and len(built.tools) == 3
    index.index_tool("s", Tool("extra", "weather extra"))
    assert index._sessions["s"].snapshot is None  # dirty until the next search or batch
    assert "extra" in [r.tool_name for r in index.search(SearchRequest("s", "extra")).tool_references]
    assert len(index._sessions["s"].snapshot.tools) == 4
    index.search(SearchRequest("s", "weather"))
    assert index._sessions["s"].snapshot is index._snapshot_of("s")  # searches do not rebuild
