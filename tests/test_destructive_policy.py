"""The destructive-tool policy (toolsearch_lab.loop.policy) end to end through ToolSearchAdvisor, with a
scripted model: what each search returns, what the model may then call, and what the trace says."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.config import ToolSearchConfig
from toolsearch_lab.loop.policy import asks_for_destructive, hidden_tools
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.loop.settings import AdvisorSettings
from toolsearch_lab.loop.strategies import PreRetrieval
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.session.fingerprint import fingerprint

TABLE = {"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"]}
READ_ONLY = {"readOnlyHint": True}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}
DROPPED: list[str] = []


def drop(table: str) -> str:
    DROPPED.append(table)
    return f"dropped {table}"


def catalog() -> list[Tool]:
    return [
        Tool(
            "drop_table",
            "Drop a database table and all its rows",
            TABLE,
            annotations=DESTRUCTIVE,
            function=drop,
        ),
        Tool("list_tables", "List the database tables", annotations=READ_ONLY, function=lambda: "users"),
        Tool("describe_table", "Describe the columns of a database table", TABLE, annotations=READ_ONLY),
        # No annotations: MCP's default (not read-only, destructiveHint true) makes it possibly destructive.
        Tool("rename_table", "Rename a database table", TABLE),
        # Not read-only, but it says its updates are only additive (destructiveHint false): not held back.
        Tool("create_table", "Create a database table", TABLE, annotations={"destructiveHint": False}),
        Tool("nuke_db", "Start over with an empty database", annotations=DESTRUCTIVE),
    ]


def search(query: str, call_id: str = "s1", **extra) -> AssistantTurn:
    return AssistantTurn(None, [ToolCall(call_id, "toolSearchTool", json.dumps({"query": query, **extra}))])


def run(destructive: str, *turns: AssistantTurn, strategy=None):
    advisor = ToolSearchAdvisor(BM25ToolIndex(), destructive=destructive, strategy=strategy)
    model = ScriptedModel([*turns, AssistantTurn("done")])
    result = advisor.run(model, [{"role": "user", "content": "tidy the database"}], catalog(), session_id="s")
    return result.trace


def found(trace, iteration: int = 0) -> list[str]:
    return [name for s in trace.iterations[iteration].searches for name in s.names]


def test_include_is_springs_behaviour_and_the_default():
    assert ToolSearchAdvisor(BM25ToolIndex()).settings.destructive == "include"
    trace = run("include", search("database table"))
    assert "drop_table" in found(trace)
    assert "destructive" not in trace.config


def test_exclude_never_returns_them_even_when_asked_and_they_cannot_be_called():
    DROPPED.clear()
    call = AssistantTurn(None, [ToolCall("c1", "drop_table", json.dumps({"table": "users"}))])
    trace = run("exclude", search("drop the users table"), call)
    assert not {"drop_table", "nuke_db", "rename_table"} & set(found(trace))
    assert found(trace)  # the other table tools still come back
    rejected = trace.iterations[1].tool_calls[0]
    assert rejected.kind == "rejected" and "not available" in (rejected.error or "")
    assert DROPPED == [] and trace.config["destructive"] == "exclude"


def test_exclude_still_fills_max_results_with_the_tools_that_may_be_shown():
    # drop_table is the best match; hiding it must not cost a result.
    included = run("include", search("drop a database table", maxResults=2))
    assert found(included)[0] == "drop_table" and len(found(included)) == 2
    trace = run("exclude", search("drop a database table", maxResults=2))
    assert len(found(trace)) == 2 and not {"drop_table", "rename_table"} & set(found(trace))
    assert trace.iterations[0].searches[0].max_results == 2


def test_ask_shows_them_only_when_the_query_asks_then_they_run():
    DROPPED.clear()
    call = AssistantTurn(None, [ToolCall("c1", "drop_table", json.dumps({"table": "users"}))])
    trace = run("ask", search("database table"), search("drop the users table", "s2"), call)
    assert "drop_table" not in found(trace, 0) and found(trace, 0)
    assert found(trace, 1)[0] == "drop_table"
    assert trace.iterations[2].tool_calls[0].kind == "tool" and DROPPED == ["users"]


def test_ask_shows_a_tool_named_exactly_in_the_query():
    assert "nuke_db" not in found(run("ask", search("nuke database")))
    assert "nuke_db" in found(run("ask", search("nuke_db")))


def test_pre_retrieval_goes_through_the_policy_too():
    request = [{"role": "user", "content": "drop a database table"}]
    sent = {}
    for policy in ("include", "exclude"):
        advisor = ToolSearchAdvisor(BM25ToolIndex(), destructive=policy, strategy=PreRetrieval(max_results=2))
        model = ScriptedModel([AssistantTurn("done")])
        assert advisor.run(model, request, catalog(), session_id="s").stop_reason == "answered"
        sent[policy] = model.calls[0]["tools"]
    assert sent == {"include": ["drop_table", "rename_table"], "exclude": ["create_table", "describe_table"]}


def test_config_passes_it_on_and_bad_values_are_named():
    assert ToolSearchConfig(destructive="ask").build_advisor().search_tool.settings.destructive == "ask"
    with pytest.raises(ValueError, match=r"ToolSearchConfig.destructive must be one of 'include', 'exclude'"):
        ToolSearchConfig(destructive="hide")
    with pytest.raises(ValueError, match=r"AdvisorSettings.destructive must be one of"):
        ToolSearchAdvisor(BM25ToolIndex(), destructive=True)  # type: ignore[arg-type]


def test_the_meta_tool_schema_stays_springs_and_a_search_without_the_tools_is_an_error():
    plain = ToolSearchTool(BM25ToolIndex())
    ask = ToolSearchTool(BM25ToolIndex(), AdvisorSettings(destructive="ask"))
    assert ask.definition() == plain.definition()
    outcome = ask.call({"query": "table"}, "s")
    assert outcome.is_error and "needs the registered tools" in outcome.result


def test_the_rule_for_asking():
    assert asks_for_destructive("Delete a file") and asks_for_destructive("git_reset to HEAD~1")
    assert asks_for_destructive("WRITE a query") and asks_for_destructive("removing old branches")
    assert not asks_for_destructive("open the dropdown") and not asks_for_destructive(None)
    assert hidden_tools(catalog(), "ask", "list tables") == {"drop_table", "nuke_db", "rename_table"}
    assert hidden_tools(catalog(), "ask", "truncate it") == set()
    assert hidden_tools(catalog(), "include", "anything") == set()


def test_mcp_fields_do_not_change_the_fingerprint():
    # Spring's fingerprint hashes names and descriptions only; annotations must not force a re-index.
    bare = [Tool(t.name, t.description, t.parameters) for t in catalog()]
    assert fingerprint(catalog()) == fingerprint(bare)
    titled = [Tool("a", "A", title="An A", output_schema={"type": "object"})]
    assert fingerprint(titled) == fingerprint([Tool("a", "A")])
