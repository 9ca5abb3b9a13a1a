"""The shipped wording tables (data/course/wording_matrix.json) are current: computed from the shipped data,
code and resources (the digest), equal to the same runs done now (a sample here, every run in the slow tier),
and the tables of docs/eval.md and docs/wording-table.md are the shipped ones, cell by cell."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from toolsearch_lab.eval.ceiling import step_ranks
from toolsearch_lab.eval.scenarios import load_scenario, markdown_tables, scenario_matrix
from toolsearch_lab.eval.wording_matrix import (
    EXAMPLES_AGENT,
    EXAMPLES_INDEX,
    build_wording_matrix,
    inputs_digest,
    load_wording_matrix,
    shipped_path,
    write_wording_matrix,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"

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
    assert {r["scenario"] for r in tables["matrix_examples"]} == names
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


def test_the_documented_tables_are_the_shipped_ones(tables):
    """docs/wording-table.md's table and docs/eval.md's two tables, rendered from the shipped runs."""
    rendered = markdown_tables(tables["matrix"] + tables["matrix_examples"], tables["indexes"])
    every = (DOCS / "wording-table.md").read_text(encoding="utf-8")
    evaluation = (DOCS / "eval.md").read_text(encoding="utf-8")
    assert "\n".join(rendered["every run"]) in every, (
        "rebuild: python benchmarks/scenario_matrix.py --markdown"
    )
    assert "\n".join(rendered["totals"]) in evaluation
    assert "\n".join(rendered["user-worded, hybrid"]) in evaluation


def test_the_digest_covers_the_code_that_produces_the_figures(monkeypatch, tmp_path):
    import toolsearch_lab.eval.wording_matrix as module

    before = inputs_digest()
    package = tmp_path / "toolsearch_lab"
    for part in ("index", "cli"):
        (package / part).mkdir(parents=True)
    (package / "resources").mkdir()
    monkeypatch.setattr(module, "_PACKAGE", package)
    empty = inputs_digest()
    (package / "cli" / "main.py").write_text("# a front end cannot move a figure\n")
    assert inputs_digest() == empty
    (package / "index" / "hybrid.py").write_text("VECTOR_WEIGHT = 0.7\n")
    changed = inputs_digest()
    assert changed != empty
    (package / "resources" / "model.json").write_text("{}\n")
    assert inputs_digest() not in (changed, empty, before)


@pytest.mark.slow
def test_every_shipped_run_is_the_one_done_now(tables):
    """The whole file, recomputed (minutes): every run, every step rank."""
    assert json.loads(json.dumps(build_wording_matrix())) == tables


def test_the_prose_beside_the_tables_states_the_shipped_figures(tables):
    """The figures docs/eval.md's "What it shows" quotes, from the same shipped runs."""
    from toolsearch_lab.eval.scenarios import HELD_OUT_SCENARIOS, summarise_matrix

    runs = tables["matrix"] + tables["matrix_examples"]
    total = {
        (s["examples"], s["agent"], s["index"]): s for s in summarise_matrix(runs) if s["wording"] == "user"
    }

    def steps(examples, agent, index):
        return total[examples, agent, index]["steps_succeeded"]

    def held_out(examples, held):
        chosen = [
            r
            for r in runs
            if r["wording"] == "user" and r["index"] == "hybrid" and r["agent"] == "semantic"
            and r["examples"] == examples and (r["scenario"] in HELD_OUT_SCENARIOS) == held
        ]  # fmt: skip
        return f"{sum(r['steps_succeeded'] for r in chosen)}/{sum(r['steps'] for r in chosen)}"

    rates = [
        round(100 * total[False, "semantic-no-glossary", i]["step_success_rate"]) for i in tables["indexes"]
    ]
    best = total[True, "semantic", "hybrid"]
    text = " ".join((DOCS / "eval.md").read_text(encoding="utf-8").split())
    sem, nog = "semantic", "semantic-no-glossary"
    expected = [
        f"semantic without glossary: {min(rates)}-{max(rates)} % of the 59 user-worded steps",
        f"(**{round(100 * total[False, sem, 'hybrid']['step_success_rate'])} %** with the hybrid index, "
        f"{steps(False, sem, 'hybrid')}/59; learned {steps(False, sem, 'learned')})",
        f"(BM25 {steps(False, nog, 'lucene')} → {steps(False, sem, 'lucene')} steps)",
        f"**{steps(True, sem, 'hybrid')}/59 ({round(100 * best['step_success_rate'])} %) with the hybrid "
        f"index** (learned {steps(True, sem, 'learned')}, BM25 {steps(True, sem, 'lucene')}, "
        f"vector {steps(True, sem, 'vector')})",
        f"({steps(False, nog, 'hybrid')} → {steps(True, nog, 'hybrid')} with hybrid)",
        f"{held_out(True, False)} and **{held_out(True, True)} on the held-out three** (as shipped: "
        f"{held_out(False, False)} and {held_out(False, True)})",
        f"Of the {59 - best['steps_succeeded']} steps hybrid + semantic + examples still fail, "
        f"{best['failed_surfaced']} are judgement misses",
        f"and {best['failed_not_surfaced']} are search misses",
    ]
    for phrase in expected:
        assert phrase in text, phrase
