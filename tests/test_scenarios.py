"""Shipped scenarios, the simulated agent's policy, grading, and the `demo` command."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.scenarios import (
    grade,
    list_scenarios,
    load_scenario,
    run_scenario,
    scenario_from_dict,
)
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn
from toolsearch_lab.models.simulated import SimulatedAgent, fill_arguments, tool_fit

# Prompt-token savings the shipped scenarios must keep (issue targets), with the demo's defaults:
# BM25 index, accumulation off as in Spring's demo app, the agent asking for 5 results.
SAVINGS_FLOOR = {"github": 90.0, "livemcpbench": 97.0}


def test_three_scenarios_ship_with_their_catalog_sizes():
    assert list_scenarios() == ["github", "livemcpbench", "spring-demo"]
    sizes = {name: len(load_scenario(name).tools) for name in list_scenarios()}
    assert sizes == {"github": 117, "livemcpbench": 510, "spring-demo": 26}


def test_agent_never_sees_expected_tools():
    for name in list_scenarios():
        scenario = load_scenario(name)
        steps = scenario.agent_steps()
        assert all(set(step) == {"need", "data"} for step in steps)
        agent = SimulatedAgent(steps)
        assert all(set(vars(step)) == {"need", "data"} for step in agent.steps)


@pytest.mark.parametrize("name", ["spring-demo", "github", "livemcpbench"])
@pytest.mark.parametrize("accumulation", [False, True])
def test_every_scenario_is_graded_successful_with_bm25(name, accumulation):
    run = run_scenario(name, index="lucene", accumulation=accumulation)
    assert run.grade.success, (run.grade, [(s.query, s.names) for s in run.trace.searches()])
    assert run.trace.stop_reason == "answered"
    assert run.trace.final_answer.startswith("Done.")
    if name in SAVINGS_FLOOR and not accumulation:
        assert run.trace.tokens_total()["prompt_saved_pct"] >= SAVINGS_FLOOR[name]


def test_accumulation_costs_tokens_the_trace_shows_it():
    on = run_scenario("github", accumulation=True).trace
    off = run_scenario("github", accumulation=False).trace
    assert len(on.iterations[-1].exposed_tools) > len(off.iterations[-1].exposed_tools)
    assert on.tokens_total()["prompt_tool_search"] > off.tokens_total()["prompt_tool_search"]


def test_runs_are_deterministic():
    a = run_scenario("spring-demo").trace
    b = run_scenario("spring-demo").trace
    strip = lambda t: [
        (it.exposed_tools, [c.name for c in it.tool_calls], it.tokens.tool_search.total)
        for it in t.iterations
    ]  # noqa: E731
    assert strip(a) == strip(b)


def test_grade_requires_expected_tools_in_order():
    scenario = load_scenario("spring-demo")
    run = run_scenario(scenario)
    assert grade(scenario, run.trace).success
    # an agent with the steps in the wrong order calls the tools in the wrong order: not successful
    reordered = SimulatedAgent(list(reversed(scenario.agent_steps())))
    advisor = ToolSearchAdvisor(BM25ToolIndex())
    result = advisor.run(reordered, scenario.messages(), scenario.tools, {advisor.session_id_key: "x"})
    verdict = grade(scenario, result.trace)
    assert not verdict.success and verdict.called[0] == "clothing" and verdict.missing


def test_agent_can_pick_wrong_and_the_trace_shows_it():
    tools = [
        Tool("send_sms", "Send a text message to a phone number"),
        Tool("send_email_v1", "Deprecated. Send a message to an address"),
    ]
    scenario = scenario_from_dict(
        {
            "name": "wrong-pick",
            "user_request": "Send a message to Ann.",
            "tools": [{"name": t.name, "description": t.description} for t in tools],
            "steps": [{"need": "send a message", "data": {}, "expected_tools": ["send_email_v1"]}],
        }
    )
    run = run_scenario(scenario, index="regex")
    assert run.grade.called == ["send_sms"] and not run.grade.success


def test_agent_gives_up_after_two_fruitless_searches():
    scenario = scenario_from_dict(
        {
            "name": "nothing-fits",
            "user_request": "Book a flight.",
            "tools": [{"name": "get_weather", "description": "Current weather for a city"}],
            "steps": [
                {"need": "book a flight ticket", "data": {"city": "Oslo"}, "expected_tools": ["get_weather"]}
            ],
        }
    )
    run = run_scenario(scenario, index="lucene")
    assert len(run.trace.searches()) == 2
    assert run.trace.final_answer.startswith("I could not find a tool for step 1")
    assert not run.grade.success


def test_second_search_drops_the_data_words():
    agent = SimulatedAgent([{"need": "weather forecast in Oslo", "data": {"city": "Oslo"}}], max_results=3)
    history = [{"role": "user", "content": "x"}]
    first = agent.complete(history, [])
    assert json.loads(first.tool_calls[0].arguments) == {"query": "weather forecast oslo", "maxResults": 3}
    history += [first.to_message(), {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "[]"}]
    second = agent.complete(history, [])
    assert json.loads(second.tool_calls[0].arguments)["query"] == "weather forecast"


def test_fit_prefers_the_plain_tool_over_a_narrower_one():
    plain = Tool("issue_read", "Get information about a specific issue").definition()
    narrow = Tool("issue_dependency_read", "Read issue dependencies").definition()
    need = "read information about a specific issue"
    assert tool_fit(need, plain) > tool_fit(need, narrow)


def test_fill_arguments_matches_parameter_names_loosely():
    schema = {"type": "object", "properties": {"issue_number": {}, "Owner": {}, "unused": {}}}
    assert fill_arguments(schema, {"issueNumber": 42, "owner": "octo", "other": 1}) == {
        "issue_number": 42,
        "Owner": "octo",
    }


def test_scenario_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="unknown scenario 'nope'"):
        load_scenario("nope")
    bad = {
        "name": "b",
        "user_request": "x",
        "tools": [{"name": "a", "description": "d"}],
        "steps": [{"need": "n", "expected_tools": ["zzz"]}],
    }
    with pytest.raises(ValueError, match=r"steps\[0\]: expected_tools \['zzz'\] are not in the catalog"):
        scenario_from_dict(bad)
    with pytest.raises(ValueError, match="missing field 'steps'"):
        scenario_from_dict({"name": "b", "user_request": "x", "tools": []})
    path = tmp_path / "broken.json"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match="not valid UTF-8 JSON"):
        load_scenario(path)


def test_unknown_model_is_rejected():
    with pytest.raises(ValueError, match="unknown model 'gpt'"):
        run_scenario("spring-demo", model="gpt")


def test_scripted_model_object_can_drive_a_scenario():
    from toolsearch_lab.models.base import ScriptedModel

    run = run_scenario("spring-demo", model=ScriptedModel([AssistantTurn("no tools needed")]))
    assert run.trace.final_answer == "no tools needed" and not run.grade.success


def test_demo_command_prints_a_table_and_totals(capsys):
    assert main(["demo", "--scenario", "spring-demo", "--index", "regex"]) == 0
    out = capsys.readouterr().out
    assert "search query" in out and "currentTime" in out
    assert "Prompt tokens" in out and "saved" in out
    assert "Graded          successful" in out


def test_demo_command_json_has_token_totals(capsys):
    assert main(["demo", "--scenario", "livemcpbench", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tokens"]["tool_search"] < summary["tokens"]["baseline"]
    assert summary["tokens"]["prompt_saved_pct"] >= 97.0
    assert summary["grade"]["success"] is True
    assert summary["called_tools"] == ["search_papers", "download_paper", "read_paper"]


def test_demo_command_reports_bad_scenario(capsys):
    assert main(["demo", "--scenario", "nope"]) == 2
    assert "unknown scenario" in capsys.readouterr().err


def test_regex_index_also_drives_the_demo_scenario():
    scenario = load_scenario("spring-demo")
    advisor = ToolSearchAdvisor(RegexToolIndex())
    result = advisor.run(
        SimulatedAgent(scenario.agent_steps()),
        scenario.messages(),
        scenario.tools,
        {advisor.session_id_key: "r"},
    )
    assert grade(scenario, result.trace).success


def test_min_score_reaches_the_index_that_has_one():
    strict = run_scenario("spring-demo", index="lucene", min_score=100.0)
    assert all(s.names == [] for s in strict.trace.searches()) and not strict.grade.success
    for kind in ("vector", "hybrid"):
        run = run_scenario("spring-demo", index=kind, min_score=1.01)  # no cosine/fused score reaches it
        assert all(s.names == [] for s in run.trace.searches()), kind
    with pytest.raises(ValueError, match="'regex' index has no score threshold"):
        run_scenario("spring-demo", index="regex", min_score=0.5)
