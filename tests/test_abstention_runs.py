"""Abstention judged by whole runs: what a refusal does to a run (the agent searches once more, then does
without a tool), the candidates compared, and the tables of docs/index.md, recomputed row by row."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsearch_lab.eval.abstention_runs import (
    CHOICE_SCENARIOS,
    candidate_outcomes,
    markdown_table,
    run_outcomes,
    size_group,
    summarise,
)
from toolsearch_lab.eval.bfcl_live import live_scenario, load_bfcl_live
from toolsearch_lab.eval.scenarios import load_scenario

INDEX_DOC = Path(__file__).resolve().parents[1] / "docs" / "index.md"


@pytest.fixture(scope="module")
def live():
    return {r.id: r for r in load_bfcl_live()}


def test_a_refused_search_gets_one_more_search_and_then_no_tool(live):
    servable = live_scenario(live["live_simple_22-5-0"])  # "I need Whopper also known old folks as ..."
    unservable = live_scenario(live["live_irrelevance_0-0-0"])  # an address, over requests.get
    settings = {"before": {"small_catalog": 0}, "default": {}, "off": {"abstain": False}}
    runs = {(o.setting, o.scenario): o for o in run_outcomes([servable, unservable], settings)}
    refused = runs["before", servable.name]
    assert refused.refused == refused.searches == 2 and not refused.success  # searched again, then gave up
    assert runs["default", servable.name].success and runs["default", servable.name].refused == 0
    assert runs["off", servable.name].success
    turned = runs["before", unservable.name]
    assert turned.success and turned.unservable_done == 1 and turned.refused == turned.searches == 2
    assert turned.prompt_tokens < runs["off", unservable.name].prompt_tokens  # no tool definitions loaded


def test_a_rule_by_catalog_size_is_run_only_where_it_differs(live):
    picked = [r for r in live.values() if r.split == "choice"]
    scenarios = [live_scenario(r) for r in picked if len(r.tools) in (1, 4)][:6]
    scenarios += [live_scenario(r) for r in picked if len(r.tools) == 4][:2]
    names = ["at most 3 tools: near-miss only", "0.229 everywhere"]
    shared = {(o.setting, o.scenario): o for o in candidate_outcomes(scenarios, names)}
    direct = run_outcomes(scenarios, {names[0]: {"small_catalog": 3, "small_catalog_confidence": 0.0}})
    assert all(shared[o.setting, o.scenario] == o for o in direct)
    rows = summarise(list(shared.values()))
    assert {r["catalog"] for r in rows} == {size_group(1), size_group(4), "all"}
    table = markdown_table(rows)
    assert table[0].startswith("| setting | catalog | runs | task success |") and len(table) == len(rows) + 2


def _documented(lines: list[str]) -> list[str]:
    text = INDEX_DOC.read_text(encoding="utf-8")
    return [line for line in lines[2:] if line in text]


@pytest.mark.slow
def test_the_documented_user_worded_runs_are_the_ones_done_now():
    """docs/index.md's rows for the development user-worded scenarios, recomputed (about a minute)."""
    scenarios = [load_scenario(name) for name in CHOICE_SCENARIOS]
    rows = summarise(candidate_outcomes(scenarios, ["off", "0.229 everywhere", "default"]), by_size=False)
    lines = markdown_table(rows)
    assert _documented(lines) == lines[2:], "rerun: python benchmarks/abstention_runs.py --markdown"


@pytest.mark.slow
def test_the_documented_single_tool_runs_are_the_ones_done_now(live):
    """docs/index.md's choice rows for catalogs of one tool, recomputed (a few minutes)."""
    one = [live_scenario(r) for r in live.values() if r.split == "choice" and len(r.tools) == 1]
    rows = summarise(candidate_outcomes(one, ["off", "0.229 everywhere", "default"]))
    lines = [line for line in markdown_table(rows) if "| 1 tool |" in line or line.startswith("| setting")]
    assert len(lines) == 4 and _documented(["", "", *lines[1:]]) == lines[1:]
