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
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool
from toolsearch_lab.models.base import AssistantTurn
from toolsearch_lab.models.fit import fill_arguments, tool_fit
from toolsearch_lab.models.openai import ModelNotConfigured
from toolsearch_lab.models.simulated import SimulatedAgent

# Prompt-token savings the shipped scenarios must keep (issue targets), with the demo's defaults:
# BM25 index, accumulation off as in Spring's demo app, the agent asking for 5 results.
SAVINGS_FLOOR = {"github": 90.0, "livemcpbench": 97.0}


def test_shipped_scenarios_with_their_catalog_sizes():
    sizes = {name: len(load_scenario(name).tools) for name in list_scenarios()}
    assert {"github", "livemcpbench", "spring-demo"} <= set(list_scenarios("plain"))
    assert {k: v for k, v in sizes.items() if not k.startswith("github-bugfix")} == {
        "github": 117,
        "github-user": 117,
        "github-off-catalog": 117,
        "github-release-day-user": 117,
        "github-security-triage-user": 117,
        "livemcpbench": 510,
        "livemcpbench-user": 510,
        "livemcpbench-day-out-user": 510,
        "livemcpbench-money-check-user": 510,
        "spring-demo": 26,
        "spring-demo-user": 26,
        "spring-demo-shop-user": 26,
        "spring-demo-market-day-user": 26,
        "support-conversation": 117,
        "spring-7034": 16,
    }


def test_agent_never_sees_expected_tools():
    for name in list_scenarios():
        scenario = load_scenario(name)
        steps = scenario.agent_steps()
        assert all(set(step) == {"need", "data"} for step in steps)
        agent = SimulatedAgent(steps)
        assert all(set(vars(step)) == {"need", "data"} for step in agent.steps)


@pytest.mark.parametrize("name", ["spring-demo", "github", "livemcpbench"])
@pytest.mark.parametrize("accumulation", [False, True])
@pytest.mark.parametrize("agent", ["literal", "semantic"])
@pytest.mark.slow
def test_every_plain_scenario_is_graded_successful_with_bm25(name, accumulation, agent):
    run = run_scenario(name, index="lucene", accumulation=accumulation, model=agent)
    assert run.grade.success, (run.grade, [(s.query, s.names) for s in run.trace.searches()])
    assert run.step_success_rate == 1.0 and all(s.success for s in run.trace.steps)
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

    def strip(t):
        return [
            (it.exposed_tools, [c.name for c in it.tool_calls], it.tokens.tool_search.total)
            for it in t.iterations
        ]

    assert strip(a) == strip(b)


def test_grade_requires_expected_tools_in_order():
    scenario = load_scenario("spring-demo")
    run = run_scenario(scenario)
    assert grade(scenario, run.trace).success
    # an agent with the steps in the wrong order calls the tools in the wrong order: not successful
    reordered = SimulatedAgent(list(reversed(scenario.agent_steps())), mode="literal")
    advisor = ToolSearchAdvisor(BM25ToolIndex())
    context = {advisor.settings.session_id_key: "x"}
    result = advisor.run(reordered, scenario.messages(), scenario.tools, context)
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
    run = run_scenario(scenario, index="regex", model="literal")
    assert run.grade.called == ["send_sms"] and not run.grade.success
    assert run.grade.steps[0].called == ["send_sms"] and run.step_success_rate == 0.0


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
    run = run_scenario(scenario, index="lucene", model="literal")
    assert len(run.trace.searches()) == 2
    assert run.trace.final_answer.startswith("I could not find a tool for step 1")
    assert not run.grade.success


def test_second_search_drops_the_data_words():
    agent = SimulatedAgent(
        [{"need": "weather forecast in Oslo", "data": {"city": "Oslo"}}], max_results=3, mode="literal"
    )
    history = [{"role": "user", "content": "x"}]
    search = [Tool(TOOL_SEARCH_TOOL_NAME, "Search the tools.").definition()]  # it searches only when sent it
    first = agent.complete(history, search)
    assert json.loads(first.tool_calls[0].arguments) == {"query": "weather forecast oslo", "maxResults": 3}
    history += [first.to_message(), {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "[]"}]
    second = agent.complete(history, search)
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
        SimulatedAgent(scenario.agent_steps(), mode="literal"),
        scenario.messages(),
        scenario.tools,
        {advisor.settings.session_id_key: "r"},
    )
    assert grade(scenario, result.trace).success


def test_min_score_threshold_reaches_the_index_that_has_one():
    strict = run_scenario("spring-demo", index="lucene", min_score_threshold=100.0)
    assert all(s.names == [] for s in strict.trace.searches()) and not strict.grade.success
    for kind in ("vector", "hybrid"):
        # no cosine or fused score reaches 1.01
        run = run_scenario("spring-demo", index=kind, min_score_threshold=1.01)
        assert all(s.names == [] for s in run.trace.searches()), kind
    with pytest.raises(ValueError, match="'regex' index has no score threshold"):
        run_scenario("spring-demo", index="regex", min_score_threshold=0.5)


# ---- wordings, step grading ------------------------------------------------------------------------------
# A conversation's user messages are the user's own words already, and a scenario with requests no tool
# serves measures abstention, not wording: neither has a second wording.
@pytest.mark.parametrize(
    "plain",
    [
        n
        for n in list_scenarios("plain")
        for scenario in [load_scenario(n)]
        if not scenario.turns and scenario.servable
    ],
)
def test_every_plain_scenario_has_a_user_wording_of_the_same_task(plain):
    original = load_scenario(plain)
    user = load_scenario(plain, wording="user")
    assert (original.wording, user.wording) == ("plain", "user")
    assert user.name == f"{plain}-user" and user.family == original.family == plain
    assert [t.name for t in user.tools] == [t.name for t in original.tools]
    assert [(s.data, s.expected_tools) for s in user.steps] == [
        (s.data, s.expected_tools) for s in original.steps
    ]
    # written in other words: no need repeats the original, and none names a tool
    tool_names = {t.name.lower() for t in user.tools}
    for mine, theirs in zip(user.steps, original.steps, strict=True):
        assert mine.need != theirs.need
        assert not tool_names & set(mine.need.lower().replace(",", " ").split())
    assert load_scenario(user.name, wording="plain").name == plain


def test_every_catalog_has_a_new_multi_step_scenario_in_user_words():
    families = {load_scenario(n).family: load_scenario(n) for n in list_scenarios("user")}
    new = {f: sc for f, sc in families.items() if f not in list_scenarios("plain")}
    catalogs = {len(sc.tools) for sc in new.values()}
    assert catalogs == {26, 117, 510}
    assert all(len(sc.steps) >= 5 and sc.wording == "user" for sc in new.values())
    release = load_scenario("github-release-day-user")
    assert release.steps[2].need == "land PR 7 into the main line"
    assert release.steps[2].expected_tools == ("merge_pull_request",)


def test_list_scenarios_offers_both_wordings():
    names = list_scenarios()
    assert set(list_scenarios("plain")) | set(list_scenarios("user")) == set(names)
    assert all(n.endswith("-user") for n in list_scenarios("user"))
    with pytest.raises(ValueError, match="unknown wording 'posh'"):
        list_scenarios("posh")
    with pytest.raises(ValueError, match="'github-release-day-user' has no 'plain' wording"):
        load_scenario("github-release-day-user", wording="plain")


class _Ran:
    """Just what grade() reads of a trace."""

    def __init__(self, called, stop_reason="answered"):
        self._called = called
        self.stop_reason = stop_reason
        self.iterations = []  # no "Skipping step N" notes

    def called_tools(self):
        return list(self._called)


def _three_steps(also=None):
    tools = [{"name": n, "description": n} for n in ("a", "b", "c", "x", "b2")]
    steps = [
        {"need": "first", "expected_tools": ["a"]},
        {"need": "second", "expected_tools": ["b"], "also_accepted": also or []},
        {"need": "third", "expected_tools": ["c"]},
    ]
    return scenario_from_dict({"name": "t", "user_request": "r", "tools": tools, "steps": steps})


def test_step_grading_counts_each_step():
    scenario = _three_steps()
    verdict = grade(scenario, _Ran(["a", "x", "c"]))
    assert [s.success for s in verdict.steps] == [True, False, True]
    assert verdict.steps_succeeded == 2 and verdict.step_success_rate == pytest.approx(2 / 3)
    assert not verdict.success and verdict.missing == ["b"]
    # the failed step shows what ran instead, between its neighbours
    assert verdict.steps[1].called == ["x"] and verdict.steps[0].called == ["a"]
    assert grade(scenario, _Ran(["a", "b", "c"])).step_success_rate == 1.0
    # every step done but the run did not end with an answer: steps count, the task does not
    cut = grade(scenario, _Ran(["a", "b", "c"], stop_reason="max_iterations"))
    assert cut.step_success_rate == 1.0 and not cut.success
    # out of order: once "c" is matched, an "a" after it does not count
    assert [s.success for s in grade(scenario, _Ran(["c", "a"])).steps] == [True, False, False]


def test_a_wrong_call_accepted_by_an_earlier_step_does_not_undo_the_steps_between():
    # Release day: step 1 accepts list_releases; the agent called the wrong tool for step 1, did steps 2 and
    # 3, then called list_releases for step 4. Matching step 1 to that late call would fail steps 2 and 3.
    tools = [{"name": n, "description": n} for n in ("latest", "releases", "notes", "read", "merge", "edit")]
    steps = [
        {"need": "what we shipped", "expected_tools": ["latest"], "also_accepted": ["releases"]},
        {"need": "look at PR 7", "expected_tools": ["read"]},
        {"need": "land it", "expected_tools": ["merge"]},
        {"need": "bump the version", "expected_tools": ["edit"]},
    ]
    scenario = scenario_from_dict({"name": "t", "user_request": "r", "tools": tools, "steps": steps})
    verdict = grade(scenario, _Ran(["notes", "read", "merge", "releases"]))
    assert [s.success for s in verdict.steps] == [False, True, True, False]
    assert verdict.steps[0].called == ["notes"] and verdict.steps[3].called == ["releases"]


def test_also_accepted_tools_do_the_step():
    scenario = _three_steps(also=["b2"])
    verdict = grade(scenario, _Ran(["a", "b2", "c"]))
    assert verdict.success and verdict.steps[1].called == ["b2"]
    with pytest.raises(ValueError, match=r"also_accepted \['zz'\] are not in the catalog"):
        _three_steps(also=["zz"])


def test_run_scenario_puts_step_outcomes_in_the_trace_and_they_round_trip():
    from toolsearch_lab.trace import RunTrace

    run = run_scenario("spring-demo", index="regex", model="literal")
    assert [s.expected for s in run.trace.steps] == [["currentTime"], ["weather"], ["clothing"]]
    assert run.trace.step_success_rate() == 1.0 == run.step_success_rate
    again = RunTrace.from_json(run.trace.to_json())
    assert again.steps == run.trace.steps


def test_reworded_file_must_match_the_original_steps():
    base = {"name": "x-user", "wording_of": "spring-demo", "wording": "user", "user_request": "r"}
    with pytest.raises(ValueError, match="must reword each of the 3 steps of 'spring-demo', got 1"):
        scenario_from_dict({**base, "needs": [{"rewords": "a", "need": "b"}]})
    original = [s.need for s in load_scenario("spring-demo").steps]
    needs = [{"rewords": n, "need": f"in other words {i}"} for i, n in enumerate(original)]
    assert scenario_from_dict({**base, "needs": needs}).steps[2].need == "in other words 2"
    # the original changed (or the pairs were shuffled): a clear error, not a silent mismatch
    swapped = [needs[1], needs[0], needs[2]]
    with pytest.raises(ValueError, match=r"needs\[0\] rewords .* but step 1 of 'spring-demo' is"):
        scenario_from_dict({**base, "needs": swapped})


def test_matrix_rows_say_which_steps_failed_and_why():
    from toolsearch_lab.eval.scenarios import buildable_indexes, scenario_matrix, summarise_matrix

    rows = scenario_matrix(["spring-demo-user"], ["regex"], ["literal", "semantic"])
    by_agent = {r["agent"]: r for r in rows}
    literal, semantic = by_agent["literal"], by_agent["semantic"]
    assert literal["wording"] == "user" and literal["family"] == "spring-demo"
    # the literal agent stops at step 1: the later steps were never searched for
    assert literal["steps_succeeded"] == 0 and [f["surfaced"] for f in literal["failed_steps"]][1:] == [
        None,
        None,
    ]
    assert semantic["steps_succeeded"] == 3 - len(semantic["failed_steps"])
    totals = summarise_matrix(rows)
    assert [(t["agent"], t["steps"], t["steps_succeeded"]) for t in totals] == [
        ("literal", 3, 0),
        ("semantic", 3, semantic["steps_succeeded"]),
    ]
    usable, problems = buildable_indexes(["regex", "nope"])
    assert usable == ["regex"] and "unknown index kind 'nope'" in problems["nope"]


def test_an_unconfigured_real_model_is_refused_before_the_run(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelNotConfigured, match="OPENAI_API_KEY"):
        run_scenario("spring-demo", model="openai")
