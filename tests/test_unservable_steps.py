"""Requests no tool can serve, in scenarios and runs: how such a step is graded, how a run shows that the
index said "no tool matches", and the abstention flags of `demo` and `compare`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.compare import compare, comparison_rows, usage_pins
from toolsearch_lab.eval.requests import unexposed_requests
from toolsearch_lab.eval.scenarios import Scenario, grade, load_scenario, run_scenario, scenario_from_dict
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall

SCENARIO = "github-off-catalog"
UNSERVABLE = [1, 3, 4]  # 0-based: the sushi order, the read-only repository, the vacation days
SUSHI = 1

TOOLS = [
    {"name": "list_issues", "description": "List issues in a repository"},
    {"name": "create_branch", "description": "Create a branch in a repository"},
    {"name": "get_weather", "description": "Current weather for a city"},
]


def _scenario(steps: list[dict]) -> Scenario:
    return scenario_from_dict({"name": "t", "user_request": "r", "tools": TOOLS, "steps": steps})


def _run(steps: list[dict], calls: list[str], notes: dict[int, str] | None = None):
    """(scenario, trace) of a run that searches for and then calls each of ``calls``; ``notes[k]`` is the
    assistant's text beside the k-th call (0-based), or after all the calls when k is ``len(calls)``."""
    scenario = _scenario(steps)
    described = {t["name"]: t["description"] for t in TOOLS}
    notes = notes or {}
    turns = []
    for k, name in enumerate(calls):
        turns.append(
            AssistantTurn(
                None, [ToolCall(f"s{k}", TOOL_SEARCH_TOOL_NAME, json.dumps({"query": described[name]}))]
            )
        )
        turns.append(AssistantTurn(notes.get(k), [ToolCall(f"c{k}", name, "{}")]))
    turns.append(AssistantTurn(notes.get(len(calls), "Done.")))
    advisor = ToolSearchAdvisor(BM25ToolIndex())
    result = advisor.run(
        ScriptedModel(turns), scenario.messages(), scenario.tools, {advisor.settings.session_id_key: "s"}
    )
    assert result.trace.called_tools() == calls
    return scenario, result.trace


def _graded(steps: list[dict], calls: list[str], notes: dict[int, str] | None = None):
    return grade(*_run(steps, calls, notes))


LIST = {"need": "list the issues", "data": {}, "expected_tools": ["list_issues"]}
BRANCH = {"need": "create a branch", "data": {}, "expected_tools": ["create_branch"]}
NOWHERE = {"need": "order sushi for the team", "data": {}, "expected_tools": []}


def test_a_step_no_tool_serves_is_done_when_no_tool_ran_for_it():
    verdict = _graded([LIST, NOWHERE, BRANCH], ["list_issues", "create_branch"])
    assert [s.success for s in verdict.steps] == [True, True, True] and verdict.success
    assert verdict.steps[1].called == [] and verdict.steps[1].expected == []


def test_a_wrong_tool_run_for_a_step_no_tool_serves_fails_it():
    verdict = _graded([LIST, NOWHERE, BRANCH], ["list_issues", "get_weather", "create_branch"])
    assert [s.success for s in verdict.steps] == [True, False, True] and not verdict.success
    assert verdict.steps[1].called == ["get_weather"]
    assert verdict.missing == []  # nothing was expected of it: what failed it is what ran


def test_a_missed_servable_step_is_not_blamed_on_its_unservable_neighbour():
    # step 1 ran the wrong tool; the step after it, which no tool serves, ran nothing
    verdict = _graded([LIST, NOWHERE, BRANCH], ["get_weather", "create_branch"])
    assert [s.success for s in verdict.steps] == [False, True, True]
    assert verdict.steps[0].called == ["get_weather"] and verdict.missing == ["list_issues"]


def test_a_step_the_agent_said_it_skipped_is_not_blamed_for_a_neighbours_call():
    steps = [LIST, NOWHERE, {**NOWHERE, "need": "book a table"}, BRANCH]
    calls = ["list_issues", "get_weather", "create_branch"]
    blamed = _graded(steps, calls)
    assert [s.success for s in blamed.steps] == [True, False, False, True]  # the call sits between both
    skipped = _graded(steps, calls, notes={1: "Skipping step 3 ('book a table'): no tool fits."})
    assert [s.success for s in skipped.steps] == [True, False, True, True]


def test_also_accepted_without_expected_tools_is_refused_with_the_step_named():
    step = {**NOWHERE, "also_accepted": ["get_weather"]}
    with pytest.raises(
        ValueError, match=r"steps\[1\]: also_accepted \['get_weather'\] without expected_tools"
    ):
        _scenario([LIST, step])


def test_a_step_no_tool_serves_does_not_hold_up_the_count_of_requests_without_their_tools():
    scenario, trace = _run([LIST, NOWHERE, BRANCH], ["list_issues", "create_branch"])
    visible = [it.exposed_tools for it in trace.iterations]
    # Only the first request came before its tool was callable (that search also found create_branch). A
    # step no tool serves, waited on, would count every request after list_issues ran.
    assert unexposed_requests(scenario, trace, visible) == (1, 1)


def test_abstention_keeps_wrong_tools_out_of_a_real_run_and_costs_less():
    scenario = load_scenario(SCENARIO)
    assert [k for k, s in enumerate(scenario.steps) if not s.servable] == UNSERVABLE
    on = run_scenario(scenario, index="hybrid", accumulation=False)
    off = run_scenario(scenario, index="hybrid", accumulation=False, index_options={"abstain": False})
    abstained = [s for s in on.trace.searches() if s.abstained]
    assert abstained and all(not s.names and s.confidence_reason for s in abstained)
    assert not any(s.abstained for s in off.trace.searches())
    # with abstention the sushi order ran no tool; without it the agent took a tool the search offered
    assert on.steps[SUSHI].success and on.steps[SUSHI].called == []
    assert not off.steps[SUSHI].success and off.steps[SUSHI].called
    assert on.step_success_rate > off.step_success_rate
    assert on.trace.tokens_total()["prompt_tool_search"] < off.trace.tokens_total()["prompt_tool_search"]
    assert on.trace.config["abstention"].startswith("below confidence")
    assert off.trace.config["abstention"] == "off"


def test_demo_shows_the_abstention_and_grades_the_unservable_steps(capsys):
    assert main(["demo", "--scenario", SCENARIO, "--index", "hybrid"]) == 0  # the run answered
    out = capsys.readouterr().out
    assert "no tool matches: below confidence" in out.splitlines()[1]
    assert "no tool matches (the index abstained)" in out
    assert (
        "order sushi for twelve people for tonight's release party → no tool ran (no tool serves it)" in out
    )
    assert main(["demo", "--scenario", SCENARIO, "--index", "hybrid", "--no-abstain", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert not any(s["abstained"] for s in summary["searches"])
    assert summary["grade"]["steps_succeeded"] < len(summary["steps"])


@pytest.mark.parametrize("command", ["demo", "compare"])
def test_abstention_flags_are_refused_for_an_index_that_cannot_abstain(command, capsys):
    assert main([command, "--scenario", SCENARIO, "--index", "lucene", "--no-abstain"]) == 2
    err = capsys.readouterr().err
    assert "--no-abstain applies to an index that judges whether any tool fits" in err and "lucene" in err


@pytest.mark.slow
def test_compare_rows_carry_the_abstention_setting_and_the_cli_notes_it(capsys):
    rows = comparison_rows(compare(SCENARIO, ["search-only-no-accumulation"], ["lucene", "hybrid"]))
    assert rows[0]["abstention"] is None  # Spring's BM25 never judges that no tool fits
    assert rows[1]["abstention"].startswith("below confidence")
    assert main(["compare", "--scenario", SCENARIO, "--index", "hybrid", "--min-confidence", "0.5"]) == 0
    out = capsys.readouterr().out
    setting = "below confidence 0.500 (over at most 3 tools: never on confidence alone); near-miss check on"
    assert f"the hybrid index says no tool matches: {setting}" in out


@pytest.mark.slow
def test_pins_are_not_measured_on_a_scenario_with_requests_no_tool_serves():
    # github-off-catalog repeats three of github's steps: measuring github's pins on it would fit the
    # pinned row to github's own task
    measured = usage_pins(load_scenario("github")).measured_on
    assert "github-bugfix-week" in measured and SCENARIO not in measured


@pytest.mark.slow
def test_the_docs_table_is_what_the_runs_give():
    """docs/eval.md's table of github-off-catalog runs, row by row, against the same runs made now."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "eval.md").read_text(encoding="utf-8")
    table = text[text.index("| run (simulated agent, gpt-4.1 prices) |") :].split("\n\n")[0].splitlines()[2:]
    shown = {
        cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table)
    }
    runs = {
        "hybrid, abstention on": ("hybrid", "search-only-no-accumulation", None),
        "hybrid, `--no-abstain`": ("hybrid", "search-only-no-accumulation", {"abstain": False}),
        "lucene (Spring's BM25)": ("lucene", "search-only-no-accumulation", None),
        "all tools, no search": ("lucene", "all-tools", None),
    }
    assert set(shown) == set(runs)
    for label, (kind, strategy, options) in runs.items():
        row = comparison_rows(compare(SCENARIO, [strategy], [kind], index_options=options))[0]
        measured = [
            str(row["requests"]),
            f"{row['prompt_tokens']:,}",
            f"{row['cost_usd']:.4f}",
            f"{row['steps_succeeded']}/{row['steps']}",
        ]
        assert shown[label] == measured, label
