"""Spec §15 items 41-65: the toolSearchTool meta-tool and the advisor loop, plus our deliberate deviations.

Not applicable in Python, so not tested: item 46 (Spring passes through requests whose options are not
tool-calling options; a Python caller simply does not use the advisor) and item 63 (there is no separate
streaming path: ``run`` is the only loop).
"""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolNotFoundError, ToolSearchAdvisor
from toolsearch_lab.loop.search_tool import (
    FALLBACK_DEFAULT_MAX_RESULTS,
    MAX_ARGUMENT_CHARS,
    MAX_ARGUMENT_DEPTH,
    ToolSearchTool,
    parse_arguments,
)
from toolsearch_lab.loop.settings import DEFAULT_SYSTEM_MESSAGE_SUFFIX, AdvisorSettings
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall, Usage
from toolsearch_lab.session.eviction import AlwaysEvict, LruEviction
from toolsearch_lab.trace import TRACE_VERSION, FailureKind, RunTrace

CTX = {"chat_memory_conversation_id": "conv-1"}


class SpyIndex:
    """A real RegexToolIndex that records the calls the advisor makes."""

    def __init__(self) -> None:
        self.inner = RegexToolIndex()
        self.calls: list[tuple] = []
        self.default_max_results = self.inner.default_max_results

    def index_tool(self, session_id, tool):
        self.calls.append(("index_tool", session_id, tool.name))
        self.inner.index_tool(session_id, tool)

    def index_tools(self, session_id, tools):
        tools = list(tools)
        self.calls.append(("index_tools", session_id, [(t.name, t.description) for t in tools]))
        self.inner.index_tools(session_id, tools)

    def clear_index(self, session_id):
        self.calls.append(("clear_index", session_id))
        self.inner.clear_index(session_id)

    def search(self, request: SearchRequest):
        self.calls.append(("search", request.session_id, request.query, request.max_results))
        return self.inner.search(request)

    def count(self, kind: str) -> int:
        return sum(1 for c in self.calls if c[0] == kind)


def weather(location: str) -> str:
    return f"Sunny in {location}, 25°C"


def clothing(location: str) -> list:
    return ["Foo", "Bar", "Baz"]


def current_time(location: str) -> str:
    return "2026-11-30T15:00:00"


def tools():
    obj = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
    return [
        Tool("weatherTool", "Get the weather for a location", obj, function=weather),
        Tool("clothingTool", "Get clothing shops for a location", obj, function=clothing),
        Tool("currentTime", "Provides the current date and time for a location", obj, function=current_time),
        Tool("calculatorTool", "Performs arithmetic calculations", {"type": "object", "properties": {}}),
    ]


def search(query, call_id="s1", **extra):
    return ToolCall(call_id, "toolSearchTool", json.dumps({"query": query, **extra}))


def call(name, call_id="c1", **args):
    return ToolCall(call_id, name, json.dumps(args))


def answer(text="done"):
    return AssistantTurn(text)


def run(advisor, turns, messages=None, context=CTX, tool_list=None):
    model = ScriptedModel(turns)
    result = advisor.run(
        model, messages or [{"role": "user", "content": "hi"}], tool_list or tools(), context
    )
    return model, result


# ---- toolSearchTool ----------------------------------------------------------------------------------------
def test_item41_search_tool_name_and_schema():
    definition = ToolSearchTool(RegexToolIndex()).definition()["function"]
    assert definition["name"] == "toolSearchTool"
    schema = definition["parameters"]
    assert set(schema["properties"]) == {"query", "maxResults", "categoryFilter"}
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"]["type"] == "string"
    assert schema["properties"]["maxResults"]["type"] == "integer"
    assert schema["properties"]["categoryFilter"]["type"] == "string"
    assert schema["additionalProperties"] is False
    assert not any(k.startswith("arg") or "context" in k.lower() for k in schema["properties"])
    # our description states the real default (10), not Spring's claimed 5
    assert "at most 10" in definition["description"]


def test_item42_returns_json_array_of_names_in_rank_order():
    index = RegexToolIndex()
    index.index_tools("s", tools())
    outcome = ToolSearchTool(index).call(json.dumps({"query": "weather"}), "s")
    assert json.loads(outcome.result) == ["weatherTool"]
    outcome = ToolSearchTool(index).call(json.dumps({"query": "location"}), "s")
    assert json.loads(outcome.result) == ["weatherTool", "clothingTool", "currentTime"]
    assert [h.name for h in outcome.record.hits] == ["weatherTool", "clothingTool", "currentTime"]


def test_item43_search_uses_the_advisor_session():
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy)
    run(advisor, [AssistantTurn(None, [search("weather")]), answer()])
    assert ("search", "conv-1", "weather", 10) in spy.calls  # resolved by the meta-tool: the index default


@pytest.mark.parametrize(
    "advisor_max, model_args, expected",
    [(3, {"maxResults": 7}, 7), (3, {}, 3), (None, {}, 10)],
    ids=["model-wins", "advisor-default", "index-default"],
)
def test_item44_max_results_precedence(advisor_max, model_args, expected):
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy, max_results=advisor_max)
    _, result = run(advisor, [AssistantTurn(None, [search("weather", **model_args)]), answer()])
    assert [c for c in spy.calls if c[0] == "search"][0][3] == expected
    assert result.trace.searches()[0].max_results == expected


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ("{not json", "not valid JSON"),
        ('{"maxResults": 3}', "'query' is required"),
        ('{"query": 42}', "'query' is required"),
        ('{"query": "x", "maxResults": -1}', "0 or more"),
        ('{"query": "x", "maxResults": "3"}', "0 or more"),
        ('{"query": "x", "maxResults": 2.5}', "0 or more"),
        ('{"query": "x", "categoryFilter": 5}', "categoryFilter"),
        ('{"query": "x", "limit": 5}', "unknown argument"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_bad_search_arguments_become_error_results_for_the_model(arguments, fragment):
    advisor = ToolSearchAdvisor(RegexToolIndex())
    model, result = run(
        advisor, [AssistantTurn(None, [ToolCall("s1", "toolSearchTool", arguments)]), answer()]
    )
    tool_message = [m for m in result.messages if m["role"] == "tool"][0]
    assert fragment in json.loads(tool_message["content"])["error"]
    assert result.trace.iterations[0].errors and fragment in result.trace.iterations[0].errors[0]
    assert result.trace.stop_reason == "answered"
    assert len(model.calls) == 2  # the model saw the error and carried on


def test_max_results_is_not_clamped_by_default_like_spring():
    index = RegexToolIndex()
    index.index_tools("s", [Tool(f"dataTool{i}", "data") for i in range(25)])
    tool = ToolSearchTool(index)
    assert "minimum" not in tool.parameters()["properties"]["maxResults"]
    assert "maximum" not in tool.parameters()["properties"]["maxResults"]
    assert json.loads(tool.call({"query": "data", "maxResults": 0}, "s").result) == []
    assert len(json.loads(tool.call({"query": "data", "maxResults": 20}, "s").result)) == 20
    negative = tool.call({"query": "data", "maxResults": -1}, "s")
    assert negative.is_error and "0 or more" in json.loads(negative.result)["error"]


@pytest.mark.parametrize("value", [0, 11, -1, "3", 2.5])
def test_the_max_results_range_is_an_option(value):
    index = RegexToolIndex()
    index.index_tools("s", tools())
    tool = ToolSearchTool(index, AdvisorSettings(enforce_max_results_range=True))
    schema = tool.parameters()["properties"]["maxResults"]
    assert (schema["minimum"], schema["maximum"]) == (1, 10)
    outcome = tool.call({"query": "weather", "maxResults": value}, "s")
    assert outcome.is_error and "from 1 to 10" in json.loads(outcome.result)["error"]
    advisor = ToolSearchAdvisor(RegexToolIndex(), enforce_max_results_range=True)
    _, result = run(advisor, [AssistantTurn(None, [search("weather", maxResults=value)]), answer()])
    assert "from 1 to 10" in result.trace.searches()[0].error
    assert result.trace.config["enforce_max_results_range"] is True


# ---- advisor construction and sessions ---------------------------------------------------------------------
def test_item45_construction_requires_index_and_has_spring_defaults():
    with pytest.raises(ValueError, match="index is required"):
        ToolSearchAdvisor(None)
    advisor = ToolSearchAdvisor(RegexToolIndex())
    assert advisor.accumulation is True
    assert advisor.settings.max_results is None
    assert advisor.settings.session_id_key == "chat_memory_conversation_id"
    assert isinstance(advisor.eviction, LruEviction) and advisor.eviction.max_sessions == 1000
    assert (advisor.settings.max_calls_per_tool, advisor.settings.max_total_tool_calls) == (40, 150)
    for bad in ({"system_message_suffix": "  "}, {"session_id_key": ""}, {"max_calls_per_tool": 0}):
        with pytest.raises(ValueError):
            ToolSearchAdvisor(RegexToolIndex(), **bad)


def test_item47_missing_session_id_is_an_error():
    advisor = ToolSearchAdvisor(RegexToolIndex())
    for context in ({}, {"chat_memory_conversation_id": None}, {"chat_memory_conversation_id": " "}):
        with pytest.raises(ValueError, match="non-null value for 'chat_memory_conversation_id'"):
            advisor.run(ScriptedModel([answer()]), [{"role": "user", "content": "x"}], tools(), context)


def test_item48_first_request_clears_once_and_indexes_once_in_registration_order():
    spy = SpyIndex()
    run(ToolSearchAdvisor(spy), [answer()])
    assert spy.count("clear_index") == 1 and spy.count("index_tools") == 1 and spy.count("index_tool") == 0
    indexed = [c for c in spy.calls if c[0] == "index_tools"][0]
    assert indexed[1] == "conv-1"
    assert [name for name, _ in indexed[2]] == [
        "weatherTool",
        "clothingTool",
        "currentTime",
        "calculatorTool",
    ]


def test_item49_same_tools_again_do_not_reindex():
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy)
    _, first = run(advisor, [answer()])
    _, second = run(advisor, [answer()])
    assert spy.count("clear_index") == 1 and spy.count("index_tools") == 1
    assert [e.kind for e in first.trace.session_events] == ["indexed"]
    assert [e.kind for e in second.trace.session_events] == ["reused"]


def test_item50_changed_description_reindexes():
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy)
    run(advisor, [answer()])
    changed = tools()
    changed[0] = Tool("weatherTool", "Get the weather forecast for a location", changed[0].parameters)
    _, result = run(advisor, [answer()], tool_list=changed)
    assert spy.count("clear_index") == 2 and spy.count("index_tools") == 2
    assert result.trace.session_events[0].detail == "catalog changed"


def test_schema_only_change_does_not_reindex():
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy)
    run(advisor, [answer()])
    changed = tools()
    changed[0] = Tool("weatherTool", changed[0].description, {"type": "object", "properties": {}})
    run(advisor, [answer()], tool_list=changed)
    assert spy.count("index_tools") == 1


def test_item51_suffix_appended_to_first_system_message_or_inserted():
    advisor = ToolSearchAdvisor(RegexToolIndex())
    model, _ = run(
        advisor,
        [answer()],
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "system", "content": "Second."},
            {"role": "user", "content": "hi"},
        ],
    )
    sent = model.calls[0]["messages"]
    assert sent[0]["content"] == "Be brief." + DEFAULT_SYSTEM_MESSAGE_SUFFIX
    assert sent[1]["content"] == "Second."
    assert DEFAULT_SYSTEM_MESSAGE_SUFFIX.startswith("\n")
    model, _ = run(advisor, [answer()])
    assert model.calls[0]["messages"][0] == {"role": "system", "content": DEFAULT_SYSTEM_MESSAGE_SUFFIX}


def test_item52_first_call_exposes_only_the_search_tool():
    model, _ = run(ToolSearchAdvisor(RegexToolIndex()), [answer()])
    assert model.calls[0]["tools"] == ["toolSearchTool"]


def test_item53_search_result_exposes_the_found_tool_next():
    model, result = run(
        ToolSearchAdvisor(RegexToolIndex()), [AssistantTurn(None, [search("weather")]), answer()]
    )
    assert model.calls[1]["tools"] == ["toolSearchTool", "weatherTool"]
    assert result.trace.iterations[1].newly_exposed == ["weatherTool"]
    assert result.trace.iterations[0].discovered == ["weatherTool"]


def test_item54_unregistered_names_in_results_are_ignored():
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [search("x").to_dict()]},
        {
            "role": "tool",
            "tool_call_id": "s1",
            "name": "toolSearchTool",
            "content": '["ghostTool", "weatherTool"]',
        },
    ]
    model, _ = run(ToolSearchAdvisor(RegexToolIndex()), [answer()], messages=history)
    assert model.calls[0]["tools"] == ["toolSearchTool", "weatherTool"]


def test_item55_tool_context_carries_session_id_and_user_context():
    seen = {}

    def probe(tool_context):
        seen.update(tool_context)
        return "ok"

    probe_tool = Tool("probeTool", "probe the context", {"type": "object", "properties": {}}, function=probe)
    turns = [AssistantTurn(None, [search("probe")]), AssistantTurn(None, [call("probeTool")]), answer()]
    run(ToolSearchAdvisor(RegexToolIndex()), turns, context={**CTX, "tenant": "acme"}, tool_list=[probe_tool])
    assert seen == {
        "chat_memory_conversation_id": "conv-1",
        "tenant": "acme",
        "toolSearchToolSessionId": "conv-1",
    }


def _two_turn_searches():
    return [
        AssistantTurn(None, [search("weather", "s1")]),
        AssistantTurn(None, [search("clothing", "s2")]),
        answer(),
    ]


def test_item56_accumulation_keeps_all_earlier_discoveries():
    model, result = run(ToolSearchAdvisor(RegexToolIndex()), _two_turn_searches())
    assert model.calls[2]["tools"] == ["toolSearchTool", "weatherTool", "clothingTool"]
    assert result.trace.iterations[2].accumulated == ["weatherTool", "clothingTool"]


def test_item57_no_accumulation_keeps_last_group_with_all_its_parallel_searches():
    advisor = ToolSearchAdvisor(RegexToolIndex(), reference_tool_name_accumulation=False)
    model, _ = run(advisor, _two_turn_searches())
    assert model.calls[2]["tools"] == ["toolSearchTool", "clothingTool"]
    parallel = [
        AssistantTurn(None, [search("current", "a"), search("weather", "b"), search("clothing", "c")]),
        answer(),
    ]
    model, _ = run(ToolSearchAdvisor(RegexToolIndex(), reference_tool_name_accumulation=False), parallel)
    assert model.calls[1]["tools"] == ["toolSearchTool", "currentTime", "weatherTool", "clothingTool"]


def test_item58_search_responses_recognised_case_insensitively():
    history = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [ToolCall("s1", "TOOLSEARCHTOOL", "{}").to_dict()],
        },
        {"role": "tool", "tool_call_id": "s1", "name": "TOOLSEARCHTOOL", "content": '["clothingTool"]'},
    ]
    model, _ = run(ToolSearchAdvisor(RegexToolIndex()), [answer()], messages=history)
    assert model.calls[0]["tools"] == ["toolSearchTool", "clothingTool"]


def test_item59_discovered_tool_stays_exposed_after_it_runs():
    advisor = ToolSearchAdvisor(RegexToolIndex(), reference_tool_name_accumulation=False)
    turns = [
        AssistantTurn(None, [search("weather")]),
        AssistantTurn(None, [call("weatherTool", location="Paris")]),
        answer(),
    ]
    model, result = run(advisor, turns)
    assert model.calls[2]["tools"] == ["toolSearchTool", "weatherTool"]
    assert result.trace.called_tools() == ["weatherTool"]
    assert "Sunny in Paris" in [m for m in result.messages if m["role"] == "tool"][-1]["content"]


def test_item60_end_of_loop_does_not_clear_the_index():
    spy = SpyIndex()
    run(ToolSearchAdvisor(spy), [AssistantTurn(None, [search("weather")]), answer()])
    assert spy.count("clear_index") == 1  # only the initial clear before indexing
    assert spy.inner.size("conv-1") == 4


def test_item61_evict_session_clears_and_next_request_reindexes():
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy)
    run(advisor, [answer()])
    advisor.evict_session("conv-1")
    assert spy.count("clear_index") == 2 and advisor.fingerprint_of("conv-1") is None
    run(advisor, [answer()])
    assert spy.count("clear_index") == 3 and spy.count("index_tools") == 2


def test_item62_lru_of_one_evicts_previous_session():
    spy = SpyIndex()
    advisor = ToolSearchAdvisor(spy, eviction=LruEviction(1))
    run(advisor, [answer()], context={"chat_memory_conversation_id": "A"})
    _, result = run(advisor, [answer()], context={"chat_memory_conversation_id": "B"})
    clears = [c[1] for c in spy.calls if c[0] == "clear_index"]
    assert clears == ["A", "A", "B"]
    assert [(e.kind, e.session_id) for e in result.trace.session_events] == [
        ("evicted", "A"),
        ("indexed", "B"),
    ]


def test_item69_always_evict_clears_twice_and_indexes_once_per_request():
    spy = SpyIndex()
    run(ToolSearchAdvisor(spy, eviction=AlwaysEvict()), [answer()])
    assert spy.count("clear_index") == 2 and spy.count("index_tools") == 1


def test_item64_undiscovered_tool_call_strict_fails_like_spring():
    advisor = ToolSearchAdvisor(RegexToolIndex(), strict=True)
    with pytest.raises(ToolNotFoundError, match="No ToolCallback found for tool name: weatherTool"):
        run(advisor, [AssistantTurn(None, [call("weatherTool", location="x")]), answer()])


@pytest.mark.parametrize(
    "name, known", [("weatherTool", "not discovered yet"), ("ghostTool", "not a known tool")]
)
def test_undiscovered_or_hallucinated_tool_gets_an_error_result_by_default(name, known):
    model, result = run(ToolSearchAdvisor(RegexToolIndex()), [AssistantTurn(None, [call(name)]), answer()])
    error = json.loads(result.messages[-2]["content"])["error"]
    assert known in error and "toolSearchTool first" in error
    record = result.trace.iterations[0].tool_calls[0]
    assert record.kind == "rejected" and record.error == error and record.failure is FailureKind.NOT_EXPOSED
    assert len(model.calls) == 2


def test_item65_loop_ends_without_tool_calls_and_limits_stop_it():
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), [answer("all good")])
    assert result.answer == "all good" and result.trace.stop_reason == "answered"

    advisor = ToolSearchAdvisor(RegexToolIndex(), max_calls_per_tool=2, max_repeated_searches=100)
    turns = [AssistantTurn(None, [search(f"q{i}", f"s{i}")]) for i in range(3)] + [answer()]
    model, result = run(advisor, turns)
    assert result.trace.stop_reason == "max_calls_per_tool" and result.answer is None
    assert len(model.calls) == 3  # the breach is returned without calling the model again

    advisor = ToolSearchAdvisor(RegexToolIndex(), max_total_tool_calls=3, max_repeated_searches=100)
    turns = [
        AssistantTurn(None, [search("a", "1"), search("b", "2")]),
        AssistantTurn(None, [search("c", "3"), search("d", "4")]),
        answer(),
    ]
    model, result = run(advisor, turns)
    assert result.trace.stop_reason == "max_total_tool_calls" and len(model.calls) == 2
    assert "limit reached" in result.trace.errors[0]


def test_repeated_identical_search_is_refused_after_the_limit():
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_repeated_searches=2)
    turns = [AssistantTurn(None, [search(" Weather ", f"s{i}")]) for i in range(4)] + [answer()]
    _, result = run(advisor, turns)
    errors = [s.error for s in result.trace.searches()]
    assert errors[:2] == [None, None]
    assert "already searched" in errors[2] and "already searched" in errors[3]
    failures = [c.failure for it in result.trace.iterations for c in it.tool_calls]
    assert failures == [None, None, FailureKind.REPEATED_SEARCH, FailureKind.REPEATED_SEARCH]
    assert result.trace.stop_reason == "answered"


def test_tool_that_raises_or_returns_huge_output_is_reported_not_fatal():
    def broken(**_):
        raise RuntimeError("database is down")

    def huge(**_):
        return "x" * 1_000_000

    catalog = [
        Tool("brokenTool", "a broken tool", function=broken),
        Tool("hugeTool", "a huge tool", function=huge),
    ]
    turns = [
        AssistantTurn(None, [search("broken huge")]),
        AssistantTurn(None, [call("brokenTool", "c1"), call("hugeTool", "c2")]),
        answer(),
    ]
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_tool_result_chars=1000)
    _, result = run(advisor, turns, tool_list=catalog)
    broken_msg, huge_msg = [m for m in result.messages if m["role"] == "tool"][-2:]
    assert "database is down" in json.loads(broken_msg["content"])["error"]
    assert len(huge_msg["content"]) < 1100 and "999000 more characters cut" in huge_msg["content"]
    errors = result.trace.iterations[1].errors
    assert any("database is down" in e for e in errors) and any("cut" in e for e in errors)


def test_bad_tool_arguments_become_error_results():
    turns = [
        AssistantTurn(None, [search("weather")]),
        AssistantTurn(None, [ToolCall("c1", "weatherTool", '{"location": ')]),
        AssistantTurn(None, [ToolCall("c2", "weatherTool", '{"city": "Paris"}')]),
        answer(),
    ]
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), turns)
    first, second = [m for m in result.messages if m["role"] == "tool"][1:]
    assert "not valid JSON" in json.loads(first["content"])["error"]
    assert "unexpected keyword argument 'city'" in json.loads(second["content"])["error"]


def test_model_failure_ends_the_run_with_an_error_in_the_trace():
    class Failing:
        name = "failing"

        def complete(self, messages, tools):
            raise TimeoutError("model timed out")

    result = ToolSearchAdvisor(RegexToolIndex()).run(
        Failing(), [{"role": "user", "content": "x"}], tools(), CTX
    )
    assert result.trace.stop_reason == "error" and "model timed out" in result.trace.errors[0]


def test_registered_tool_named_like_the_meta_tool_is_rejected():
    with pytest.raises(ValueError, match="may not be named 'toolSearchTool'"):
        run(ToolSearchAdvisor(RegexToolIndex()), [answer()], tool_list=[Tool("toolSearchTool", "fake")])


def test_tokens_counted_per_iteration_against_the_all_tools_baseline():
    filler = [
        Tool(
            f"inventoryTool{i}",
            f"Manage inventory records of warehouse {i}: create, update and delete items",
            {"type": "object", "properties": {"item": {"type": "string", "description": "item identifier"}}},
        )
        for i in range(40)
    ]
    turns = [
        AssistantTurn(None, [search("weather")], Usage(120, 10, 130)),
        AssistantTurn(None, [call("weatherTool", location="Paris")]),
        answer(),
    ]
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), turns, tool_list=tools() + filler)
    its = result.trace.iterations
    assert its[0].tokens.api_usage == {"prompt_tokens": 120, "completion_tokens": 10, "total_tokens": 130}
    assert its[1].tokens.api_usage is None
    for it in its:
        assert it.tokens.tool_search.total < it.tokens.baseline.total
        parts = it.tokens.tool_search
        assert parts.total == parts.system + parts.messages + parts.tools + parts.framing
    # the second request carries one more tool definition than the first
    assert its[1].tokens.tool_search.tools > its[0].tokens.tool_search.tools
    # the baseline exposes every tool in every request, without the suffix
    assert its[0].tokens.baseline.tools == its[2].tokens.baseline.tools
    assert its[0].tokens.baseline.system == 0
    totals = result.trace.tokens_total()
    assert 50 < totals["prompt_saved_pct"] < 100


def test_with_a_handful_of_tools_tool_search_costs_more_than_sending_them_all():
    # The lesson of Spring's docs ("use it from about 10 tools"): the meta-tool and suffix are overhead.
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), [AssistantTurn(None, [search("weather")]), answer()])
    assert result.trace.tokens_total()["prompt_saved_pct"] < 0


def test_trace_json_round_trips_exactly():
    turns = [
        AssistantTurn(None, [search("weather")]),
        AssistantTurn(None, [call("weatherTool", location="Paris")]),
        answer(),
    ]
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), turns)
    text = result.trace.to_json()
    again = RunTrace.from_json(text)
    assert again == result.trace and again.to_json() == text
    with pytest.raises(ValueError, match="unknown field"):
        RunTrace.from_dict({**json.loads(text), "apiKey": "sk-x"})


def test_one_advisor_serves_many_sessions_on_many_threads():
    from concurrent.futures import ThreadPoolExecutor

    from toolsearch_lab.eval.scenarios import grade, load_scenario
    from toolsearch_lab.models.simulated import SimulatedAgent

    scenario = load_scenario("spring-demo")
    advisor = ToolSearchAdvisor(RegexToolIndex())

    def one(i):
        agent = SimulatedAgent(scenario.agent_steps())
        return advisor.run(
            agent, scenario.messages(), scenario.tools, {"chat_memory_conversation_id": f"s{i % 5}"}
        )

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(40)))
    for result in results:
        assert grade(scenario, result.trace).success
        assert [len(it.searches) for it in result.trace.iterations] == [1, 0, 0, 0, 0]
        assert result.trace.searches()[0].names[:3] == ["currentTime", "weather", "clothing"]


# ---- hardening II: nothing a model or a tool sends crashes the loop --------------------------------------
def _tool_error(result, n=0) -> str:
    return json.loads([m for m in result.messages if m["role"] == "tool"][n]["content"])["error"]


@pytest.mark.parametrize("depth", [65, 1_000, 5_000])
def test_deeply_nested_arguments_become_an_error_result_not_a_recursion_error(depth):
    deep = '{"location": ' + "[" * depth + "]" * depth + "}"
    turns = [
        AssistantTurn(None, [search("weather")]),
        AssistantTurn(None, [ToolCall("c1", "weatherTool", deep), ToolCall("s2", "toolSearchTool", deep)]),
        answer(),
    ]
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), turns)
    assert result.trace.stop_reason == "answered"
    for n in (0, 1):
        message = _tool_error(result, n + 1)
        assert f"nested {depth + 1} levels deep; the limit is {MAX_ARGUMENT_DEPTH}" in message
    assert MAX_ARGUMENT_DEPTH == 64 and "nested" in result.trace.iterations[1].errors[0]
    assert RunTrace.from_json(result.trace.to_json()) == result.trace


def test_arguments_at_the_depth_limit_still_parse():
    ok = '{"location": ' + "[" * (MAX_ARGUMENT_DEPTH - 1) + "]" * (MAX_ARGUMENT_DEPTH - 1) + "}"
    args, problem = parse_arguments(ok)
    assert problem is None and "location" in args
    args, problem = parse_arguments('{"q": "' + "[" * 5_000 + '"}')  # brackets inside a string do not count
    assert problem is None and args["q"].startswith("[[[")


def test_oversized_arguments_are_refused_unparsed():
    huge = json.dumps({"location": "x" * MAX_ARGUMENT_CHARS})
    _, result = run(
        ToolSearchAdvisor(RegexToolIndex()),
        [
            AssistantTurn(None, [search("weather")]),
            AssistantTurn(None, [ToolCall("c1", "weatherTool", huge)]),
            answer(),
        ],
    )
    assert f"the limit is {MAX_ARGUMENT_CHARS:,}" in _tool_error(result, 1)


def test_circular_and_non_json_tool_results_become_error_results_naming_the_tool():
    loop: dict = {"a": 1}
    loop["self"] = loop

    class Unprintable:
        def __str__(self):
            raise RuntimeError("no text for you")

    returns = {
        "circularTool": loop,
        "nanTool": {"temperature": float("nan")},
        "tupleKeyTool": {("a", "b"): 1},
        "unprintableTool": [Unprintable()],
        "deepTool": _nested_list(200),
    }
    catalog = [
        Tool(name, f"returns a hostile value {name}", function=(lambda v=v: v)) for name, v in returns.items()
    ]
    calls = [ToolCall(f"c{i}", name, "{}") for i, name in enumerate(returns)]
    turns = [AssistantTurn(None, [search("hostile", maxResults=10)]), AssistantTurn(None, calls), answer()]
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), turns, tool_list=catalog)
    assert result.trace.stop_reason == "answered"
    errors = {r.name: r.error for r in result.trace.iterations[1].tool_calls}
    assert "circularTool returned a dict the model cannot read" in errors["circularTool"]
    assert "circular reference" in errors["circularTool"]
    assert "nanTool returned a dict" in errors["nanTool"] and "Out of range float" in errors["nanTool"]
    assert "tupleKeyTool returned a dict" in errors["tupleKeyTool"]
    # an object that is not JSON data is refused by name, never turned into its str() or repr()
    assert (
        "unprintableTool returned a list (it holds a Unprintable), which is not JSON data"
        in errors["unprintableTool"]
    )
    assert "nested more than" in errors["deepTool"]
    assert RunTrace.from_json(result.trace.to_json()) == result.trace


def _nested_list(depth):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("bad", [1, 1.0, b"conv-1", object(), ["conv-1"], True])
def test_session_ids_must_be_strings_so_1_and_str_1_never_merge(bad):
    advisor = ToolSearchAdvisor(RegexToolIndex())
    with pytest.raises(
        ValueError, match=r"context\['chat_memory_conversation_id'\] must be a non-blank string"
    ):
        advisor.run(
            ScriptedModel([answer()]),
            [{"role": "user", "content": "x"}],
            tools(),
            {**CTX, "chat_memory_conversation_id": bad},
        )
    for method in (advisor.fingerprint_of, advisor.evict_session):
        with pytest.raises(ValueError, match="session_id must be a non-blank string"):
            method(bad)
    with pytest.raises(ValueError, match="session_id must be a non-blank string"):
        advisor.initialize_session(bad, tools())
    run(advisor, [answer()], context={"chat_memory_conversation_id": "1"})
    assert advisor.fingerprint_of("1") is not None


@pytest.mark.parametrize(
    "messages, fragment",
    [
        ("hello", "messages must be a list of message dicts"),
        ({"role": "user", "content": "x"}, "messages must be a list of message dicts"),
        ([{"role": "user", "content": "x"}, "hello"], r"messages\[1\] must be a dict like"),
        ([["role", "user"]], r"messages\[0\] must be a dict like .* got list"),
        ([{"content": "no role"}], r"messages\[0\] needs a string 'role'"),
        (
            [{"role": "user", "content": {"x": float("inf")}}],
            r"messages\[0\] \(user\) cannot be sent as JSON",
        ),
    ],
)
def test_messages_that_are_not_dicts_are_named_by_index(messages, fragment):
    with pytest.raises(ValueError, match=fragment):
        ToolSearchAdvisor(RegexToolIndex()).run(ScriptedModel([answer()]), messages, tools(), CTX)


def test_circular_message_is_a_clear_error():
    message: dict = {"role": "user", "content": "x"}
    message["again"] = message
    with pytest.raises(
        ValueError, match=r"messages\[0\] \(user\) cannot be sent as JSON: it contains itself"
    ):
        ToolSearchAdvisor(RegexToolIndex()).run(ScriptedModel([answer()]), [message], tools(), CTX)


def test_iterations_are_numbered_from_1_and_version_1_traces_still_load():
    turns = [
        AssistantTurn(None, [search("weather")]),
        AssistantTurn(None, [call("weatherTool", location="x")]),
        answer(),
    ]
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), turns)
    assert [it.number for it in result.trace.iterations] == [1, 2, 3]
    assert [it.index for it in result.trace.iterations] == [0, 1, 2]  # position in the list
    data = result.trace.to_dict()
    assert data["version"] == TRACE_VERSION and [it["number"] for it in data["iterations"]] == [1, 2, 3]
    assert all("index" not in it for it in data["iterations"])
    old = json.loads(result.trace.to_json())
    old["version"] = 1
    for i, it in enumerate(old["iterations"]):
        del it["number"], it["retries"]
        it["index"] = i
    again = RunTrace.from_dict(old)
    assert [it.number for it in again.iterations] == [1, 2, 3] and again.version == TRACE_VERSION
    assert again.to_json() == result.trace.to_json()


def test_index_default_max_results_is_what_the_model_reads_the_trace_says_and_the_search_returns():
    from toolsearch_lab.embed.tfidf import TfidfEmbedder
    from toolsearch_lab.index.vector import VectorToolIndex

    catalog = [Tool(f"weather_tool_{i}", f"Get the weather forecast variant {i}") for i in range(8)]
    embedder = TfidfEmbedder().fit([t.description for t in catalog] + ["weather forecast"])
    index = VectorToolIndex(embedder, min_score_threshold=0.0, default_max_results=3)
    model, result = run(
        ToolSearchAdvisor(index),
        [AssistantTurn(None, [search("weather forecast")]), answer()],
        tool_list=catalog,
    )
    assert "at most 3 names" in ToolSearchTool(index).definition()["function"]["description"]
    record = result.trace.searches()[0]
    assert record.max_results == 3 and len(record.names) == 3
    assert len(json.loads([m for m in result.messages if m["role"] == "tool"][0]["content"])) == 3


def test_an_index_without_default_max_results_gets_the_documented_fallback_in_the_request():
    spy = SpyIndex()
    del spy.default_max_results
    _, result = run(ToolSearchAdvisor(spy), [AssistantTurn(None, [search("location")]), answer()])
    assert [c for c in spy.calls if c[0] == "search"][0][3] == FALLBACK_DEFAULT_MAX_RESULTS == 10
    assert result.trace.searches()[0].max_results == 10
    assert "at most 10 names" in ToolSearchTool(spy).definition()["function"]["description"]


def test_search_arguments_are_parsed_once(monkeypatch):
    import toolsearch_lab.loop.calls as calls_module
    import toolsearch_lab.loop.search_tool as search_module

    calls = []
    real = search_module.parse_arguments

    def counting(arguments):
        calls.append(arguments)
        return real(arguments)

    monkeypatch.setattr(calls_module, "parse_arguments", counting)
    monkeypatch.setattr(search_module, "parse_arguments", counting)
    run(ToolSearchAdvisor(RegexToolIndex()), [AssistantTurn(None, [search("weather")]), answer()])
    assert len(calls) == 1


def test_a_failed_model_call_keeps_its_retries_in_the_trace():
    from toolsearch_lab.trace import RetryRecord

    class Flaky:
        name = "flaky"

        def complete(self, messages, tools):
            error = RuntimeError("HTTP 429 three times")
            error.retries = [
                RetryRecord(1, 429, "RateLimitError", 0.5),
                RetryRecord(2, 429, "RateLimitError", 1.0),
            ]
            raise error

    result = ToolSearchAdvisor(RegexToolIndex()).run(
        Flaky(), [{"role": "user", "content": "x"}], tools(), CTX
    )
    assert result.trace.stop_reason == "error"
    assert [(r.attempt, r.status, r.wait_s) for r in result.trace.iterations[0].retries] == [
        (1, 429, 0.5),
        (2, 429, 1.0),
    ]
    assert result.trace.summary()["retries"] == 2
    assert result.trace.summary()["errors"] == ["model call failed: RuntimeError: HTTP 429 three times"]
    assert RunTrace.from_json(result.trace.to_json()) == result.trace


def test_strict_mode_fails_like_spring_when_a_search_result_is_not_an_array():
    """Spring parses every toolSearchTool result as a JSON array on the next iteration; an error text (here:
    a search without its query) therefore fails the request. strict=True keeps that; the default skips it."""
    bad_search = AssistantTurn(None, [ToolCall("s1", "toolSearchTool", "{}")])
    with pytest.raises(ValueError, match="not a JSON array of names"):
        run(ToolSearchAdvisor(RegexToolIndex(), strict=True), [bad_search, answer()])
    _, result = run(ToolSearchAdvisor(RegexToolIndex()), [bad_search, answer()])
    assert result.stop_reason == "answered"
    assert result.trace.iterations[1].exposed_tools == ["toolSearchTool"]


def test_run_takes_the_session_id_directly_or_from_the_context_key():
    advisor = ToolSearchAdvisor(RegexToolIndex())
    messages = [{"role": "user", "content": "hi"}]

    class Sid(str):
        pass

    direct = advisor.run(ScriptedModel([answer()]), messages, tools(), session_id=Sid("direct-1"))
    assert direct.trace.session_id == "direct-1" and type(direct.trace.session_id) is str
    both = advisor.run(ScriptedModel([answer()]), messages, tools(), CTX, session_id="conv-1")
    assert both.trace.session_id == "conv-1"
    with pytest.raises(ValueError, match="disagree"):
        advisor.run(ScriptedModel([answer()]), messages, tools(), CTX, session_id="other")
    with pytest.raises(ValueError, match="session_id must be a non-blank string"):
        advisor.run(ScriptedModel([answer()]), messages, tools(), session_id="  ")


def test_every_advisor_setting_after_the_index_is_keyword_only():
    with pytest.raises(TypeError):
        ToolSearchAdvisor(RegexToolIndex(), 3)  # type: ignore[misc]
    with pytest.raises(ValueError, match="disagrees with strategy"):
        from toolsearch_lab.loop.strategies import SearchOnly

        ToolSearchAdvisor(RegexToolIndex(), strategy=SearchOnly(True), reference_tool_name_accumulation=False)
