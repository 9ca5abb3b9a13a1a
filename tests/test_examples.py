"""Example requests written into tool descriptions (catalog.examples): the shipped files, the format every
reader shares, refusing bad input, and what they change for a user - a step found, a bill that grows."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.catalog.examples import load_example_requests, shipped_example_sets, with_examples
from toolsearch_lab.cli.main import main
from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.eval.scenarios import (
    load_scenario,
    run_scenario,
    scenario_matrix,
    summarise_matrix,
    with_scenario_examples,
)
from toolsearch_lab.model import Tool
from toolsearch_lab.models.fit import semantic_fit, tool_fit
from toolsearch_lab.text.identifiers import spaced_identifiers
from toolsearch_lab.text.tool_text import EXAMPLES_HEADING, example_requests, with_example_requests
from toolsearch_lab.tokens import TokenCounter

TOOL_SETS = {
    "github-mcp": lambda: list(load_catalog("github-mcp").tools),
    "livemcpbench": lambda: list(load_catalog("livemcpbench").tools),
    "spring-demo": lambda: load_scenario("spring-demo").tools,
}


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path / "cache"))


# ------------------------------------------------------------------------------ the format in the description
def test_examples_written_into_a_description_read_back_exactly():
    text = with_example_requests("Get details of an issue.", ["pull up  #42\n", "what's ticket 7 about?"])
    assert text == f"Get details of an issue.\n\n{EXAMPLES_HEADING}\n- pull up #42\n- what's ticket 7 about?"
    assert example_requests(text) == ("Get details of an issue.", ["pull up #42", "what's ticket 7 about?"])


def test_a_description_without_examples_reads_as_itself():
    plain = "Lists issues.\n\nExample requests: see the docs"  # the heading inside prose is not a list
    assert example_requests(plain) == (plain, [])
    assert example_requests("Lists issues.") == ("Lists issues.", [])
    assert with_example_requests("Lists issues.", []) == "Lists issues."


@pytest.mark.parametrize("examples", [[""], ["fine", "   "]])
def test_a_blank_example_is_refused(examples):
    with pytest.raises(ValueError, match="non-blank"):
        with_example_requests("Lists issues.", examples)


def test_one_string_is_not_read_as_a_list_of_letters():
    with pytest.raises(ValueError, match="a list of strings, got one string 'show open bugs'"):
        with_examples([Tool("list_issues", "Lists issues.")], {"list_issues": "show open bugs"})


def test_examples_are_not_written_twice():
    once = with_example_requests("Lists issues.", ["show open bugs"])
    with pytest.raises(ValueError, match="already lists example requests"):
        with_example_requests(once, ["show open bugs"])


# ------------------------------------------------------------------------------------------ the shipped files
def test_every_scenario_tool_set_ships_examples():
    assert shipped_example_sets() == sorted(TOOL_SETS)


@pytest.mark.parametrize("tool_set", sorted(TOOL_SETS))
def test_a_shipped_set_gives_five_requests_to_every_tool_without_naming_it(tool_set):
    tools = TOOL_SETS[tool_set]()
    examples = load_example_requests(tool_set)
    assert list(examples) == [t.name for t in tools]  # every tool, in catalog order
    for tool in tools:
        requests = examples[tool.name]
        assert len(requests) == 5 and len(set(requests)) == 5, tool.name
        spellings = {tool.name.lower()}
        if " " in spaced_identifiers(tool.name):  # a one-word name ("weather") may be an everyday word
            spellings.add(spaced_identifiers(tool.name).lower())
        for spelling in spellings:
            pattern = re.compile(rf"\b{re.escape(spelling)}\b")
            assert not any(pattern.search(r.lower()) for r in requests), (tool.name, requests)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not valid UTF-8 JSON"),
        ('["a", "b"]', r"expected an object \{tool name: \[requests\]\}, got list"),
        ('{"list_issues": []}', "tool 'list_issues' must map to a non-empty list"),
        ('{"list_issues": ["ok", 3]}', "tool 'list_issues' must map to a non-empty list"),
        ('{"list_issues": "show bugs"}', "tool 'list_issues' must map to a non-empty list"),
    ],
)
def test_a_malformed_examples_file_is_refused_naming_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "examples.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        load_example_requests(path)
    assert str(path) in str(info.value)


def test_an_unknown_set_names_the_shipped_ones():
    with pytest.raises(ValueError, match=r"no example requests for 'nope'.*github-mcp"):
        load_example_requests("nope")


# ----------------------------------------------------------------------------------------- applying them
def test_with_examples_refuses_a_name_that_is_not_a_tool():
    tools = [Tool("list_issues", "Lists issues.")]
    with pytest.raises(ValueError, match=r"1 name\(s\) are not tools of this set: \['list_isues'\]"):
        with_examples(tools, {"list_isues": ["open bugs?"]})


def test_with_examples_changes_only_descriptions_and_keeps_the_implementation():
    tools = [Tool("list_issues", "Lists issues.", function=lambda: "ran"), Tool("get_me", "Who am I.")]
    out = with_examples(tools, {"list_issues": ["what bugs are open?"]})
    assert example_requests(out[0].description) == ("Lists issues.", ["what bugs are open?"])
    assert out[0].function() == "ran" and out[0].parameters == tools[0].parameters
    assert out[1] == tools[1]


def test_a_scenario_with_examples_keeps_its_steps_and_canned_results():
    plain = load_scenario("spring-demo-shop-user")
    described = load_scenario("spring-demo-shop-user", examples=True)
    assert (plain.tool_set, plain.examples, described.examples) == ("spring-demo", False, True)
    assert described.steps == plain.steps
    shipped = load_example_requests("spring-demo")
    for before, after in zip(plain.tools, described.tools, strict=True):
        assert example_requests(after.description) == (before.description, list(shipped[before.name]))
        assert after.function() == before.function()
    with pytest.raises(ValueError, match="already list example requests"):
        with_scenario_examples(described)


def test_the_semantic_fit_reads_each_example_on_its_own():
    embedder = default_embedder()
    tool = Tool("saveShoes", "Save a new shoe to the inventory.")
    described = with_examples([tool], {"saveShoes": ["Check in the new sneakers that arrived", "Delete x"]})[
        0
    ]
    need = "log the trainers we just got in"
    best_example = float(np.dot(*embedder.embed([need, "Check in the new sneakers that arrived"])))
    plain, with_them = (semantic_fit(need, t.definition(), embedder) for t in (tool, described))
    assert with_them > plain
    overlap = tool_fit(need, described.definition(), examples=True)
    assert with_them == pytest.approx(best_example + 0.25 * min(overlap, 1.0))


def test_the_literal_fit_reads_the_description_not_its_examples():
    # The literal rule (and the semantic agent's pick before searching) is "the words say so plainly": an
    # example mentioning "merged" must not make a listing tool look like the merge tool.
    tool = Tool("list_pull_requests", "List pull requests in a repository.")
    described = with_examples([tool], {"list_pull_requests": ["which PRs got merged this week?"]})[0]
    need = "merged pull requests"
    assert tool_fit(need, described.definition()) == tool_fit(need, tool.definition())
    assert tool_fit(need, described.definition(), examples=True) > tool_fit(need, tool.definition())


# ----------------------------------------------------------------------------------- what a user notices
def test_examples_let_the_semantic_agent_find_a_tool_it_misses_without_them():
    # "log the Nike Pegasus we just got in": without examples the agent picks getAllShoesVariations; the
    # demo catalog's examples for saveShoes say how a shop owner asks to record new stock.
    step = 4
    plain = run_scenario("spring-demo-shop-user", index="hybrid", accumulation=False)
    described = run_scenario(
        load_scenario("spring-demo-shop-user", examples=True), index="hybrid", accumulation=False
    )
    assert not plain.steps[step].success and plain.steps[step].called != ["saveShoes"]
    assert described.steps[step].success and described.steps[step].called == ["saveShoes"]
    assert described.grade.steps_succeeded > plain.grade.steps_succeeded


def test_examples_make_sending_every_tool_cost_more():
    counter = TokenCounter()
    tools = list(load_catalog("github-mcp").tools)
    _, before = counter.catalog_tokens(tools)
    _, after = counter.catalog_tokens(with_examples(tools, load_example_requests("github-mcp")))
    assert after > before * 1.2


def test_the_matrix_reports_both_descriptions_separately():
    rows = scenario_matrix(["spring-demo-shop-user"], ["hybrid"], ["semantic"], examples=(False, True))
    assert [(r["examples"], r["steps_succeeded"]) for r in rows] == [(False, 4), (True, 5)]
    summary = summarise_matrix(rows)
    assert [(s["examples"], s["steps_succeeded"], s["steps"]) for s in summary] == [
        (False, 4, 5),
        (True, 5, 5),
    ]


# ------------------------------------------------------------------------------------------------ the CLI
def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_demo_examples_flag(capsys):
    code, out, _ = run_cli(
        capsys, "demo", "--scenario", "spring-demo-shop-user", "--index", "hybrid", "--examples", "--json"
    )
    summary = json.loads(out)
    assert code == 0 and summary["examples"] is True
    assert summary["grade"]["steps_succeeded"] == 5
    code, out, _ = run_cli(capsys, "demo", "--scenario", "spring-demo-shop-user", "--index", "hybrid")
    assert code == 0 and "descriptions with example requests" not in out
    code, out, _ = run_cli(capsys, "demo", "--scenario", "spring-demo-shop-user", "--examples")
    assert "26 tools (descriptions with example requests)" in out


def test_tokens_and_search_take_examples(capsys):
    code, out, _ = run_cli(capsys, "tokens", "--catalog", "github-mcp", "--json")
    plain = json.loads(out)["total"]
    code, out, _ = run_cli(capsys, "tokens", "--catalog", "github-mcp", "--examples", "github-mcp", "--json")
    assert code == 0 and json.loads(out)["total"] > plain and json.loads(out)["examples"] == "github-mcp"
    code, out, _ = run_cli(
        capsys, "search", "--catalog", "github-mcp", "--examples", "github-mcp", "--json", "bump PR 9 to main"
    )
    result = json.loads(out)
    assert code == 0 and result["examples"] == "github-mcp"
    assert all(EXAMPLES_HEADING in ref["summary"] for ref in result["toolReferences"])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("nope", "no example requests for 'nope'"),
        ("livemcpbench", "--examples livemcpbench: .* name\\(s\\) are not tools of this set"),
    ],
)
def test_examples_that_do_not_fit_the_catalog_exit_2(capsys, source, message):
    code, _, err = run_cli(capsys, "tokens", "--catalog", "github-mcp", "--examples", source)
    assert code == 2 and re.search(message, err), err
