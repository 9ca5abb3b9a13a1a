"""The shipped wording tables (data/course/wording_matrix.json) are current: computed from the shipped
scenarios, glossary and example requests, and equal to the same runs done now for a sample of scenarios."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from toolsearch_lab.eval.ceiling import step_ranks
from toolsearch_lab.eval.scenarios import load_scenario, scenario_matrix
from toolsearch_lab.eval.wording_matrix import (
    EXAMPLES_AGENT,
    EXAMPLES_INDEX,
    load_wording_matrix,
    shipped_path,
    write_wording_matrix,
)

SAMPLE = ("spring-demo-shop-user", "spring-demo")


@pytest.fixture(scope="module")
def tables():
    return load_wording_matrix()


def test_shipped_tables_cover_every_scenario(tables):
    from toolsearch_lab.eval.scenarios import list_scenarios

    # Every single-request scenario whose every step a tool serves: a conversation (several user turns) is
    # not part of the wording tables, nor is a scenario with requests no tool serves (it measures abstention).
    names = {
        n
        for n in list_scenarios()
        for scenario in [load_scenario(n)]
        if not scenario.turns and scenario.servable
    }
    assert "github-off-catalog" in set(list_scenarios()) - names
    assert names and names != set(list_scenarios())
    assert {r["scenario"] for r in tables["matrix"]} == names
    users = {n for n in names if load_scenario(n).wording == "user"}
    assert {r["scenario"] for r in tables["examples"]} == users
    assert {r["scenario"] for r in tables["ceiling"]} == names


@pytest.mark.parametrize("name", SAMPLE)
def test_shipped_runs_match_a_live_run(tables, name):
    """Catches a change to the agent, an index or the grading that the input digest cannot see."""
    live = scenario_matrix([name], indexes=["lucene", "hybrid"])
    shipped = [r for r in tables["matrix"] if r["scenario"] == name and r["index"] in ("lucene", "hybrid")]
    assert json.loads(json.dumps(live)) == shipped, "rebuild with `python tools/build_wording_matrix.py`"
    if load_scenario(name).wording == "user":
        live_ex = scenario_matrix([name], [EXAMPLES_INDEX], [EXAMPLES_AGENT], examples=(False,))
        shipped_ex = [r for r in tables["examples"] if r["scenario"] == name and not r["examples"]]
        assert json.loads(json.dumps(live_ex)) == shipped_ex
    ranks = [asdict(r) for r in step_ranks(load_scenario(name), index=EXAMPLES_INDEX)]
    shipped_ranks = [r for r in tables["ceiling"] if r["scenario"] == name and not r["examples"]]
    assert json.loads(json.dumps(ranks)) == shipped_ranks


def test_a_stale_or_missing_file_is_refused_with_the_fix(tmp_path, monkeypatch):
    import toolsearch_lab.eval.wording_matrix as module

    stale = json.loads(shipped_path().read_text(encoding="utf-8"))
    stale["inputs"] = "0" * 64
    target = write_wording_matrix(stale, tmp_path / "wording_matrix.json")
    monkeypatch.setattr(module, "shipped_path", lambda: target)
    with pytest.raises(ValueError, match="build_wording_matrix.py"):
        load_wording_matrix()
    target.unlink()
    with pytest.raises(FileNotFoundError, match="build_wording_matrix.py"):
        load_wording_matrix()
