"""The closing quiz (docs/quiz.md) answers what the code does today: each answer's claims are run here.

A claim is a phrase of the answer (checked to be in the quiz, word for word) and the code that shows it. An
answer rewritten without its claim fails here, so does code that no longer behaves as the answer says.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from toolsearch_lab import (
    AlwaysEvict,
    AssistantTurn,
    BM25ToolIndex,
    LruEviction,
    RegexToolIndex,
    ScriptedModel,
    SearchRequest,
    TokenCounter,
    Tool,
    ToolCall,
    ToolNotFoundError,
    ToolSearchAdvisor,
    TtlEviction,
    analyze,
    fingerprint,
    headline,
    load_scenario,
    make_index,
    run_scenario,
)
from toolsearch_lab.ui.stepper_demos import rejected_calls, remembering_runs

QUIZ = Path(__file__).resolve().parent.parent / "docs" / "quiz.md"


def answer(number: int) -> str:
    """Question ``number`` and its answer, on one line."""
    text = QUIZ.read_text(encoding="utf-8")
    match = re.search(rf"^\*\*{number}\. (.*?)(?=^\*\*{number + 1}\. |\Z)", text, flags=re.S | re.M)
    assert match, f"docs/quiz.md has no question {number}"
    return re.sub(r"\s+", " ", match.group(1))


def claims(number: int, *phrases: str) -> None:
    missing = [p for p in phrases if p not in answer(number)]
    assert not missing, f"quiz question {number} no longer says {missing}"


def test_the_quiz_has_ten_questions():
    assert [n for n in range(1, 12) if f"**{n}. " in QUIZ.read_text(encoding="utf-8")] == list(range(1, 11))


def demo():
    scenario = load_scenario("spring-demo")
    return scenario, scenario.tools, scenario.messages()


def test_1_the_first_request_exposes_only_the_meta_tool():
    claims(1, "Only `toolSearchTool`", "are indexed, not sent", "every turn starts with it alone")
    run = run_scenario("spring-demo", index="lucene")
    assert run.trace.iterations[0].exposed_tools == ["toolSearchTool"]
    chat = run_scenario("spring-7034", memory_advisor="outside", accumulation_source="history")
    assert [t.first_request_tools for t in chat.trace.turns] == [["toolSearchTool"]] * 2
    assert all(chat.trace.turn_trace(t.number).searches() for t in chat.trace.turns)


def test_2_the_search_result_is_a_json_array_of_names():
    claims(
        2, "A JSON array of tool names in the index's rank order", '`["weather", "clothing"]`', "No scores"
    )
    scenario, tools, messages = demo()
    turns = [
        AssistantTurn(
            tool_calls=[ToolCall("s", "toolSearchTool", json.dumps({"query": "weather clothing"}))]
        ),
        AssistantTurn(content="done"),
    ]
    run = ToolSearchAdvisor(make_index("lucene")).run(ScriptedModel(turns), messages, tools, session_id="q2")
    result = run.trace.iterations[0].tool_calls[0].result
    names = json.loads(result)
    assert (
        isinstance(names, list)
        and all(isinstance(n, str) for n in names)
        and names[:2] == ["weather", "clothing"]
    )
    assert result.startswith('["weather", "clothing"')  # the form the quiz shows


def test_3_an_undiscovered_call_fails_in_spring_and_gets_an_error_result_here():
    claims(3, '"No ToolCallback found for tool name"', "`strict=True` restores Spring's failure")
    scenario, tools, messages = demo()
    turns = [
        AssistantTurn(tool_calls=[ToolCall("c", "weather", json.dumps({"location": "x", "atTime": "now"}))]),
        AssistantTurn(content="done"),
    ]
    run = ToolSearchAdvisor(make_index("lucene")).run(ScriptedModel(turns), messages, tools, session_id="q3")
    call = run.trace.iterations[0].tool_calls[0]
    assert call.kind == "rejected" and "toolSearchTool first" in call.result
    strict = ToolSearchAdvisor(make_index("lucene"), strict=True)
    with pytest.raises(ToolNotFoundError, match="No ToolCallback found for tool name: weather"):
        strict.run(ScriptedModel(turns), messages, tools, session_id="q3s")


def test_4_on_springs_demo_tool_search_costs_more_and_the_threshold_is_the_spec_s():
    claims(
        4, "from 10 tools or 10K tokens of tool definitions", "26 tools but only 1,126 tokens of definitions"
    )
    scenario, tools, _ = demo()
    assert len(tools) == 26 and TokenCounter("o200k_base").tools_tokens(tools) == 1126
    head = headline("spring-demo")
    assert len(head.tool_search.costs) > len(head.all_tools.costs)  # more model requests
    assert head.cost_pct_of_all_tools > 100  # billed with caching, it costs more


def test_5_the_regex_index_is_a_keyword_index():
    claims(5, "stop words and one-letter words dropped", "a hit counts double", "not a regular expression")
    regex = RegexToolIndex()
    assert regex.convert_query_to_regex_pattern("get.*") == "(?i)(get)"  # the `*` is a one-letter word
    assert regex.convert_query_to_regex_pattern("the weather") == "(?i)(weather)"  # a stop word
    regex.index_tools("q5", [Tool("weather", "other text"), Tool("other", "weather report")])
    hits = regex.search(SearchRequest("q5", "weather", 2)).tool_references
    assert [h.tool_name for h in hits] == ["weather", "other"] and hits[0].relevance_score > hits[
        1
    ].relevance_score


def test_6_a_snake_case_name_is_one_lucene_token():
    claims(6, "keeps `get_weather` as one token", "only the description's `weather` matches")
    assert analyze("get_weather") == ["get_weather"]
    index = BM25ToolIndex(min_score_threshold=0.0)
    index.index_tools("q6", [Tool("get_weather", "Get the weather for a location")])
    parts = index.explain("q6", "weather", "get_weather").parts
    assert parts and all(p.detail.startswith("toolDescription:weather") for p in parts), [
        p.detail for p in parts
    ]


def test_7_accumulation_off_exposes_only_the_latest_searches():
    claims(
        7,
        "only the results of the last turn that searched are exposed",
        "a tool found two searches ago disappears",
    )
    runs = remembering_runs()
    assert rejected_calls(runs["accumulation on"]) == []
    assert rejected_calls(runs["accumulation off"]) == ["clothing", "weather"]


def test_8_a_schema_only_change_keeps_the_fingerprint():
    claims(8, "No.", "names and descriptions only (SHA-256 over the sorted tools)")
    _, tools, _ = demo()
    schema_only = [replace(t, parameters={"type": "object", "properties": {}}) for t in tools]
    assert fingerprint(schema_only) == fingerprint(list(reversed(tools))) == fingerprint(tools)
    assert fingerprint([replace(tools[0], description="new"), *tools[1:]]) != fingerprint(tools)


def test_9_ttl_lru_and_always_evict():
    claims(9, "idle for at least the TTL", "it never drops the current one", "drops the *current* session")
    now = [0.0]
    ttl = TtlEviction(timedelta(seconds=5), clock=lambda: now[0])
    ttl.on_access("a")
    now[0] = 5.0
    assert ttl.on_access("b") == {"a"}  # idle exactly the TTL: dropped
    now[0] = 50.0
    assert ttl.on_access("b") == set()  # the current session, idle 45 s, is never dropped
    lru = LruEviction(max_sessions=1)
    assert lru.on_access("a") == set() and lru.on_access("b") == {"a"}
    assert AlwaysEvict().on_access("a") == {"a"}


def test_10_the_per_request_counterfactual_flatters():
    claims(10, "A real all-tools agent never searches", "it needs fewer requests")
    head = headline("github")
    assert len(head.all_tools.costs) < len(head.tool_search.costs)
    assert head.saved_pct < head.counterfactual_saved_pct
