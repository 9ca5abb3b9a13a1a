"""One contract, every index kind: the same suite runs over each kind ``index.factory`` can make.

The vector and hybrid indexes get a TF-IDF embedder fitted on the test catalog, so nothing is downloaded
and every score is deterministic."""

from __future__ import annotations

import inspect

import pytest

from toolsearch_lab.embed import TfidfEmbedder
from toolsearch_lab.index.base import BaseToolIndex
from toolsearch_lab.index.factory import INDEX_CLASSES, INDEX_KINDS, make_index
from toolsearch_lab.model import Explanation, SearchRequest, SearchResponse, Tool, ToolIndex, empty_response

WEATHER = [
    Tool("get_weather", "Current weather and forecast for a city"),
    Tool("weather_alerts", "Severe weather alerts for a region"),
    Tool("weather_history", "Past weather records for a city and a date"),
    Tool("weather_map", "Radar map of the weather around a location"),
    Tool("uv_index", "UV index and sun strength, from the weather service"),
    Tool("air_quality", "Air quality and pollen levels, with the weather"),
]
OTHER = [
    Tool("send_email", "Send an email message to a recipient"),
    Tool("create_event", "Create a calendar event with a title and a time"),
    Tool("stock_quote", "Latest stock price for a ticker symbol"),
]
UNICODE = [
    Tool("wetter_de", "Wetter für München und Köln ☀ Vorhersage"),
    Tool("tenki_jp", "東京の天気予報 weather in Tokyo"),
    Tool("emoji_tool", "🌧️ rain radar 🌈 für alle Städte"),
]
CATALOG = WEATHER + OTHER + UNICODE


def _embedder() -> TfidfEmbedder:
    return TfidfEmbedder().fit([f"{t.name} {t.description}" for t in CATALOG])


def build(kind: str, **options) -> ToolIndex:
    """A fresh index of ``kind``; kinds that embed get the deterministic TF-IDF embedder."""
    if "embedder" in inspect.signature(INDEX_CLASSES[kind]).parameters:
        options.setdefault("embedder", _embedder())
    return make_index(kind, **options)


@pytest.fixture(params=INDEX_KINDS)
def kind(request) -> str:
    return request.param


def filled(kind: str, **options) -> ToolIndex:
    index = build(kind, **options)
    index.index_tools("s", CATALOG)
    return index


def same_results(a: SearchResponse, b: SearchResponse) -> bool:
    """Equal answers (the timing in the metadata aside)."""
    return (
        [(r.tool_name, r.relevance_score, r.summary) for r in a.tool_references]
        == [(r.tool_name, r.relevance_score, r.summary) for r in b.tool_references]
        and a.total_matches == b.total_matches
        and (a.metadata is None) == (b.metadata is None)
    )


def test_is_a_tool_index_with_the_whole_contract(kind):
    index = build(kind)
    assert isinstance(index, ToolIndex)
    for method in ("index_tool", "index_tools", "search", "search_many", "explain", "clear_index"):
        assert callable(getattr(index, method)), method
    assert index.default_max_results == 10


def test_session_isolation(kind):
    index = build(kind)
    index.index_tools("a", WEATHER)
    index.index_tools("b", OTHER)
    assert set(index.search(SearchRequest("b", "weather forecast", 20)).tool_names) <= {t.name for t in OTHER}
    assert index.search(SearchRequest("a", "weather forecast", 20)).tool_names
    assert index.search(SearchRequest("never-indexed", "weather")) == empty_response()
    assert index.search(SearchRequest(None, "weather")) == empty_response()


class _Forged(str):
    """A session id that claims to equal, and hash like, every other session id."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return hash("victim")


def test_a_forged_str_subclass_session_id_reaches_only_its_own_session(kind):
    index = build(kind)
    index.index_tools("victim", WEATHER)
    index.index_tools(_Forged("attacker"), OTHER)
    assert set(index.search(SearchRequest("victim", "weather forecast", 20)).tool_names) <= {
        t.name for t in WEATHER
    }
    assert set(index.search(SearchRequest("attacker", "weather stock email", 20)).tool_names) <= {
        t.name for t in OTHER
    }
    index.clear_index(_Forged("attacker"))
    assert index.search(SearchRequest("victim", "weather forecast", 20)).tool_names
    assert index.search(SearchRequest("attacker", "stock")) == empty_response()


def test_clear_index(kind):
    index = filled(kind)
    index.index_tools("keep", WEATHER[:2] + OTHER)
    index.clear_index("s")
    index.clear_index("unknown-session")  # a no-op
    assert index.search(SearchRequest("s", "weather")) == empty_response()
    assert index.search(SearchRequest("keep", "weather")).tool_names
    index.index_tools("s", OTHER)
    assert set(index.search(SearchRequest("s", "weather stock email", 20)).tool_names) <= {
        t.name for t in OTHER
    }


def test_default_max_results_is_honoured_and_a_request_overrides_it(kind):
    index = filled(kind, default_max_results=2)
    assert index.default_max_results == 2
    assert len(index.search(SearchRequest("s", "weather")).tool_references) == 2
    assert len(index.search(SearchRequest("s", "weather", max_results=4)).tool_references) == 4
    assert len(index.search(SearchRequest("s", "weather", max_results=1)).tool_references) == 1


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "3", None])
def test_bad_default_max_results_names_the_setting(kind, bad):
    with pytest.raises(ValueError, match="default_max_results"):
        build(kind, default_max_results=bad)


@pytest.mark.parametrize("bad", [0, -3, False, 1.5, "2"])
def test_bad_request_max_results_is_refused_by_the_request(bad):
    with pytest.raises(ValueError, match="max_results"):
        SearchRequest("s", "weather", bad)


def test_search_many_equals_search(kind):
    index = filled(kind)
    index.index_tools("t", OTHER)
    requests = [
        SearchRequest("s", "weather forecast for a city"),
        SearchRequest("s", "send an email", 3),
        SearchRequest("t", "stock price", 2),
        SearchRequest("unknown", "weather"),
        SearchRequest("s", "weather", 4, category_filter="none-such"),
        SearchRequest("s", ""),
        SearchRequest(None, "weather"),
    ]
    batch = index.search_many(requests)
    assert len(batch) == len(requests)
    for request, response in zip(requests, batch, strict=True):
        assert same_results(response, index.search(request)), request
    assert index.search_many([]) == []


def test_explain_score_is_the_search_score_and_parts_sum_to_it(kind):
    index = filled(kind)
    for query in ["weather forecast for a city", "send an email message", "radar map"]:
        response = index.search(SearchRequest("s", query, 20))
        assert response.tool_references, query
        for rank, ref in enumerate(response.tool_references, 1):
            exp = index.explain("s", query, ref.tool_name)
            assert isinstance(exp, Explanation) and exp.tool_name == ref.tool_name and exp.query == query
            assert exp.score == ref.relevance_score, (query, ref.tool_name)
            assert sum(p.value for p in exp.parts) == pytest.approx(exp.score, rel=1e-5, abs=1e-9)
            assert exp.rank == rank and exp.returned == (rank <= index.default_max_results)
            assert exp.to_text() and exp.to_dict()["score"] == exp.score


def test_explain_of_a_tool_that_does_not_match(kind):
    index = filled(kind)
    exp = index.explain("s", "weather forecast", "stock_quote")
    assert (
        exp.tool_name == "stock_quote"
        and exp.score <= index.explain("s", "weather forecast", "get_weather").score
    )
    with pytest.raises(KeyError, match="nope"):
        index.explain("s", "weather", "nope")
    with pytest.raises(KeyError):
        index.explain("unknown-session", "weather", "get_weather")


def test_bad_inputs_raise_clear_errors(kind):
    index = filled(kind)
    with pytest.raises(TypeError, match="query"):
        index.search(SearchRequest("s", 42))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="query"):
        index.search_many([SearchRequest("s", ["weather"])])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="SearchRequest"):
        index.search_many(["weather"])  # type: ignore[list-item]
    for bad_session in ["", "  ", None, 42]:
        with pytest.raises(ValueError, match="session_id"):
            index.index_tools(bad_session, WEATHER[:1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Tool"):
        index.index_tools("s", [WEATHER[0], {"name": "not_a_tool"}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="query"):
        index.explain("s", 42, "get_weather")  # type: ignore[arg-type]
    # a refused batch leaves the session as it was
    assert (
        index.search(SearchRequest("s", "weather", 20)).tool_names
        == filled(kind).search(SearchRequest("s", "weather", 20)).tool_names
    )


def test_empty_catalog(kind):
    index = build(kind)
    index.index_tools("s", [])
    for response in [
        index.search(SearchRequest("s", "weather")),
        *index.search_many([SearchRequest("s", "x")]),
    ]:
        assert response.tool_references == [] and response.total_matches in (None, 0)
    with pytest.raises(KeyError):
        index.explain("s", "weather", "get_weather")


def test_unicode_text_and_queries(kind):
    index = filled(kind)
    for query in ["Wetter München", "天気予報", "🌧️ rain radar", "für", "Ünïcödé ☃ \u200d", "weather\x00city"]:
        response = index.search(SearchRequest("s", query))
        assert isinstance(response, SearchResponse)
        for ref in response.tool_references:
            assert index.explain("s", query, ref.tool_name).score == ref.relevance_score
    assert "wetter_de" in index.search(SearchRequest("s", "Wetter München Vorhersage", 20)).tool_names


def test_the_base_class_checks_and_keys_the_session_once_for_every_hook():
    """``BaseToolIndex`` is a template: the public methods check the arguments and key the session, the
    hooks get a plain ``str``. ``_index`` and ``_index_tool`` default to each other (Spring: one
    ``indexTool`` per tool, in order), as do ``_search`` and ``_search_many``."""

    class Recording(BaseToolIndex):
        def __init__(self):
            super().__init__(default_max_results=3)
            self.calls = []

        def _index_tool(self, session, tool):
            self.calls.append(("index_tool", type(session), session, tool.name))

        def _clear(self, session):
            self.calls.append(("clear", type(session), session))

        def _search(self, request, limit):
            self.calls.append(("search", type(request.session_id), request.session_id, limit))
            return SearchResponse([], 0, None)

    index = Recording()
    a, b = Tool("a", "first"), Tool("b", "second")
    index.index_tools(_Forged("s"), [a, b])
    index.clear_index(_Forged("s"))
    index.search(SearchRequest(_Forged("s"), "x"))
    index.search_many([SearchRequest("s", "x", 7), SearchRequest(" ", "x"), SearchRequest(None, "x")])
    assert index.calls == [
        ("index_tool", str, "s", "a"),
        ("index_tool", str, "s", "b"),
        ("clear", str, "s"),
        ("search", str, "s", 3),
        ("search", str, "s", 7),
    ]
    with pytest.raises(TypeError, match="expected a Tool, got dict"):
        index.index_tools("s", [a, {"name": "b"}])
    assert len(index.calls) == 5  # the bad entry was found before any tool reached the hook


def test_a_subclass_must_implement_a_hook_of_each_pair_and_may_not_bypass_the_checks():
    with pytest.raises(TypeError, match="Bare must implement _index or _index_tool"):

        class Bare(BaseToolIndex):
            pass

    with pytest.raises(TypeError, match="Sneaky overrides search, which checks and keys the session"):

        class Sneaky(BaseToolIndex):
            def _index(self, session, tools):
                pass

            def _search(self, request, limit):
                return empty_response()

            def search(self, request):
                return empty_response()


@pytest.mark.parametrize("bad", [None, "", "   ", 7, b"s"])
def test_a_session_id_that_breaks_the_rule_is_refused_by_every_write_and_finds_nothing(kind, bad):
    index = filled(kind)
    for write in (lambda: index.index_tools(bad, OTHER), lambda: index.clear_index(bad)):
        with pytest.raises(ValueError, match="session_id must be a non-blank string"):
            write()
    assert index.search(SearchRequest(bad, "weather")) == empty_response()
    assert index.search_many([SearchRequest(bad, "weather")]) == [empty_response()]
    assert index.search(SearchRequest("s", "weather")).tool_names  # the good session is untouched
