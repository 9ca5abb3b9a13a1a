"""Anthropic's native tool search as a strategy: the search reproduced as Anthropic documents it (regex
patterns of at most 200 characters, case-sensitive unless (?i), at most 5 results, references expanded in
place), run through the advisor, in compare with its billed cost."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from toolsearch_lab.eval.compare import compare, run_strategy
from toolsearch_lab.eval.cost import load_prices
from toolsearch_lab.index.anthropic import AnthropicRegexIndex
from toolsearch_lab.index.regex import PatternProblem
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.anthropic_native import MAX_RESULTS, AnthropicNative, RegexQueries
from toolsearch_lab.loop.strategies import STRATEGY_NAMES, Unload, make_strategy
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.models.simulated import SimulatedAgent

ISSUES = Tool(
    "list_issues",
    "List issues in a GitHub repository.",
    {"type": "object", "properties": {"labels": {"type": "array", "description": "Filter by labels"}}},
)
PULLS = Tool(
    "list_pull_requests", "List pull requests in a GitHub repository.", {"type": "object", "properties": {}}
)
MANY = [
    Tool(f"weather_{i}", f"Weather report number {i}", {"type": "object", "properties": {}})
    for i in range(12)
]


def searched(index, query, limit=10):
    index.index_tools("s", [ISSUES, PULLS, *MANY])
    return [r.tool_name for r in index.search(SearchRequest("s", query, limit)).tool_references]


def test_the_regex_search_is_case_sensitive_unless_the_pattern_says_otherwise():
    assert (
        searched(AnthropicRegexIndex(MAX_RESULTS), "list pull") == []
    )  # "List pull requests" / "list_pull_requests"
    assert searched(AnthropicRegexIndex(MAX_RESULTS), "List pull") == ["list_pull_requests"]
    assert searched(AnthropicRegexIndex(MAX_RESULTS), "(?i)LIST.*PULL") == ["list_pull_requests"]


def test_it_matches_argument_names_and_descriptions_and_returns_at_most_five():
    assert searched(AnthropicRegexIndex(MAX_RESULTS), "Filter by labels") == ["list_issues"]
    assert len(searched(AnthropicRegexIndex(MAX_RESULTS), "Weather", limit=10)) == MAX_RESULTS


def test_a_pattern_over_200_characters_or_invalid_is_an_error_with_anthropics_code():
    too_long = r"invalid_tool_input \(pattern_too_long\).*201 characters long"
    with pytest.raises(ValueError, match=too_long) as info:
        searched(AnthropicRegexIndex(MAX_RESULTS), "a" * 201)
    assert info.value.kind is PatternProblem.TOO_LONG  # the code is chosen by kind, not by the words
    with pytest.raises(ValueError, match=r"invalid_tool_input \(invalid_pattern\)") as info:
        searched(AnthropicRegexIndex(MAX_RESULTS), "(unclosed")
    assert info.value.kind is PatternProblem.INVALID
    assert searched(AnthropicRegexIndex(MAX_RESULTS), "Weather|" + "x" * 192)  # exactly 200 is allowed


def test_the_strategy_keeps_the_tools_array_and_expands_what_it_found_in_place():
    strategy = AnthropicNative("regex")
    turns = [
        AssistantTurn(
            None, [ToolCall("c1", "toolSearchTool", json.dumps({"query": "List issues", "maxResults": 9}))]
        ),
        AssistantTurn(
            None, [ToolCall("c2", "toolSearchTool", json.dumps({"query": "nothing matches this"}))]
        ),
        AssistantTurn(None, [ToolCall("c3", "list_issues", "{}")]),
        AssistantTurn("done"),
    ]
    model = ScriptedModel(turns)
    tools = [replace(ISSUES, function=lambda **_: "[]"), PULLS, *MANY]
    advisor = ToolSearchAdvisor(strategy.make_index(), strategy=strategy)
    result = advisor.run(model, [{"role": "user", "content": "issues?"}], tools, session_id="s")
    assert [call["tools"] for call in model.calls] == [["toolSearchTool"]] * 4  # the prefix never changes
    first, second = result.trace.iterations[0].tool_calls[0], result.trace.iterations[1].tool_calls[0]
    assert json.loads(first.result) == [ISSUES.definition()]  # the definition, expanded in place
    assert result.trace.iterations[0].searches[0].max_results == MAX_RESULTS  # the model cannot ask for 9
    assert second.result == "[]" and second.error is None  # no match: an empty list, not an error
    assert result.trace.iterations[2].tool_calls[0].kind == "tool"  # callable from the expansion
    system = model.calls[0]["messages"][0]["content"]
    assert "regular expression" in system and "case-sensitively unless it starts with (?i)" in system


def test_it_is_registered_by_name_and_its_references_are_not_unloaded():
    assert {"anthropic-regex", "anthropic-bm25"} <= set(STRATEGY_NAMES)
    strategy = make_strategy("anthropic-bm25", idle_turns=2)
    assert isinstance(strategy, AnthropicNative) and not isinstance(strategy, Unload)
    assert strategy.describe() == {"name": "anthropic-bm25", "variant": "bm25", "max_results": 5}
    with pytest.raises(ValueError, match="variant must be one of"):
        AnthropicNative("embeddings")


def test_simulated_agents_write_regex_queries_and_read_their_words_back():
    agent = SimulatedAgent([{"need": "list open pull requests"}])
    model = RegexQueries(agent)
    tools = [
        {"type": "function", "function": {"name": "toolSearchTool", "description": "", "parameters": {}}}
    ]
    messages = [{"role": "user", "content": "list open pull requests"}]
    turn = model.complete(messages, tools)
    query = json.loads(turn.tool_calls[0].arguments)["query"]
    assert query.startswith("(?i)(") and "pull" in query
    messages += [turn.to_message(), {"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": "[]"}]
    again = json.loads(model.complete(messages, tools).tool_calls[0].arguments)["query"]
    assert again != query  # the agent saw its own first query as words, and reformulated


def test_compare_runs_the_native_rows_once_on_their_own_index_and_bills_them():
    runs = compare(
        "github", ["search-only", "anthropic-bm25"], ["lucene", "regex"], price_model="claude-sonnet-4.5"
    )
    rows = [(r.strategy.name, r.index) for r in runs]
    assert rows == [("search-only", "lucene"), ("anthropic-bm25", "anthropic-bm25"), ("search-only", "regex")]
    native = runs[1].row()
    assert native["provider"] == "anthropic" and native["cost_usd"] > 0
    assert native["cached_tokens"] > 0  # the unchanging tools + system prefix is read from the cache
    assert native["mean_tools_per_request"] == 1.0
    assert native["success"]


def test_measured_on_the_shipped_scenarios_bm25_succeeds_where_five_results_are_enough():
    """What docs/compare.md reports: at most 5 results is enough on three scenarios, not on bugfix-week."""
    prices = load_prices()
    outcome = {
        scenario: run_strategy(
            scenario, "anthropic-bm25", prices=prices, price_model="claude-sonnet-4.5"
        ).row()
        for scenario in ("spring-demo", "github", "livemcpbench", "github-bugfix-week")
    }
    assert [row["success"] for row in outcome.values()] == [True, True, True, False]
    assert outcome["github-bugfix-week"]["steps_succeeded"] == outcome["github-bugfix-week"]["steps"] - 1
