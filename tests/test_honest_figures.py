"""Figures that lead with the honest number and draw data where it is: the stepper's headline against a real
all-tools run (the per-request counterfactual second, labelled), a replayed run's own search settings, the
cost-vs-success plot's points at their exact figures, and recommend_pins weighing both sides alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolsearch_lab import headline, load_transcript
from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.eval.pins import recommend_pins
from toolsearch_lab.eval.scenarios import load_scenario, run_scenario
from toolsearch_lab.ui import IterationStepper
from toolsearch_lab.ui.strategy_lab import RATE_RANGE, pareto_spec


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_the_stepper_headline_is_the_saving_against_a_real_all_tools_run():
    app = IterationStepper("spring-demo", index="lucene")
    status = text(app.status.value)
    real = headline("spring-demo", accumulation=True)  # the stepper accumulates by default
    honest, flattering = f"{real.saved_pct:.1f}% saved", f"{real.counterfactual_saved_pct:.1f}% saved"
    assert real.saved_pct < real.counterfactual_saved_pct  # 51.6 against 61.8 on the Spring demo
    assert f"vs {real.all_tools_prompt:,} in a real run sending all 26 tools" in status
    assert f"({len(real.all_tools.costs)} requests)" in status
    assert status.index(honest) < status.index("per-request counterfactual") < status.index(flattering)
    subtitle = app.tokens_fig.layout.title.text
    assert "per-request counterfactual" in subtitle and "% saved" not in subtitle


def test_a_replayed_run_has_no_real_all_tools_run_and_shows_its_own_search_settings():
    app = IterationStepper(run=load_transcript("anthropic-messages"))
    status = text(app.status.value)
    assert "no real all-tools run: a replayed transcript" in status and "in a real run" not in status
    assert "per-request counterfactual" in status
    assert app.index_dropdown.value == "tool_search_tool_regex (regex, run by Anthropic)"
    assert app.index_dropdown.description == "Searched by" and app.index_dropdown.disabled
    assert app.max_results.layout.display == "none" and app.threshold.layout.display == "none"
    assert "none asked: the provider" in app.replay_limit.value  # the transcript's searches sent no limit
    openai = IterationStepper(run=load_transcript("openai-responses"))
    assert openai.index_dropdown.value == "tool_search (run by OpenAI)"


def test_a_run_of_another_model_is_not_run_again_with_every_tool():
    from toolsearch_lab.models.base import AssistantTurn, ScriptedModel

    run = run_scenario(load_scenario("spring-demo"), model=ScriptedModel([AssistantTurn(content="done")]))
    status = text(IterationStepper(run=run).status.value)
    assert "no real all-tools run: the model is no simulated agent" in status
    assert "per-request counterfactual" in status


def rows(*specs):
    return [
        {"scenario": "s", "strategy": name, "index": index, "cost_usd": cost, "steps_succeeded": done,
         "steps": 3, "requests": 4, "prompt_tokens": 100, "cached_tokens": 50, "mean_tools_per_request": 2.0}
        for name, index, cost, done in specs
    ]  # fmt: skip


def test_the_pareto_plot_draws_every_run_at_its_figures_and_rings_runs_that_coincide():
    data = rows(
        ("all-tools", "lucene", 0.23, 3),
        ("search-only", "lucene", 0.014, 3),
        ("retrieve-then-bind", "lucene", 0.014, 3),  # the same cost and success as search-only
        ("pre-retrieval", "lucene", 0.011, 1),
    )
    spec = pareto_spec(data, "gpt-4.1")
    drawn = {
        (trace["name"], x): (y, size)
        for trace in spec["data"]
        for x, y, size in zip(trace["x"], trace["y"], trace["marker"]["size"], strict=True)
    }
    for row in data:  # exactly where its figures put it: all-tools at 100 %, not nudged below
        y, _ = drawn[row["strategy"], row["cost_usd"]]
        assert y == row["steps_succeeded"] / row["steps"]
        assert RATE_RANGE[0] < y < RATE_RANGE[1]  # inside the axis: nothing clipped
    assert spec["layout"]["yaxis"]["range"] == list(RATE_RANGE)
    under, over = drawn["search-only", 0.014][1], drawn["retrieve-then-bind", 0.014][1]
    assert under > over  # the one drawn first rings the one drawn over it
    assert drawn["all-tools", 0.23][1] == drawn["pre-retrieval", 0.011][1] == over


@pytest.mark.slow
def test_recommend_pins_weighs_searches_and_pins_at_the_same_discount():
    sessions = ("github", "github-user", "github-bugfix-week")
    traces = [run_strategy(n, "search-only").trace for n in sessions]
    tools = load_scenario("github").tools
    full, cached = (recommend_pins(traces, tools, cached_ratio=r) for r in (1.0, 0.25))
    assert full.pinned == cached.pinned  # the discount scales both sides, so it cannot change the choice
    for a, b in zip(full.advice, cached.advice, strict=True):
        assert a.tool == b.tool
        assert b.search_tokens == pytest.approx(a.search_tokens * 0.25)
        assert b.pin_tokens == pytest.approx(a.pin_tokens * 0.25)


# ---- the pinning figures docs/compare.md gives -------------------------------------------------------------
COMPARE_MD = Path(__file__).resolve().parent.parent / "docs" / "compare.md"


def _pin_rows() -> dict[tuple[str, str], list[str]]:
    """The pinning table's rows: (memory, found tools in) → its cells after those two."""
    text = COMPARE_MD.read_text(encoding="utf-8")
    table = text[text.index("| memory | found tools in | search-only | pinned, measured") :].split("\n\n")[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    # The first row names the unit once: "16 req · ..."
    return {
        (memory, source): [c.replace(" req ·", " ·", 1) for c in cells] for memory, source, *cells in rows
    }


def _cell(row: dict, base: dict | None) -> str:
    steps = f"{row['steps_succeeded']}/{row['steps']}"
    steps = (
        f"**{steps}**"
        if base and base["steps_succeeded"] < base["steps"] == row["steps_succeeded"]
        else steps
    )
    cell = f"{row['requests']} · {row['prompt_tokens']:,} · ${row['cost_usd']:.4f} · {steps}"
    if base is None:
        return cell
    change = round(100 * (row["cost_usd"] / base["cost_usd"] - 1))
    return f"{cell} ({'+' if change > 0 else '−'}{abs(change)} %)"


@pytest.mark.slow
def test_the_pinning_figures_of_compare_md_are_what_compare_measures():
    from toolsearch_lab import compare, comparison_rows, load_prices, usage_pins

    scenario, prices = load_scenario("support-conversation"), load_prices()
    measured = usage_pins(scenario, price=prices.price())
    assert measured.pinned == ["create_branch", "merge_pull_request", "create_pull_request"]
    says = COMPARE_MD.read_text(encoding="utf-8")
    assert "it pins `create_branch`, `merge_pull_request` and `create_pull_request`" in " ".join(says.split())
    assert "pinned, measured (3 tools)" in says
    grid = {
        "memories": ["full", "window:6", "compact:6"],
        "sources": ["history", "session"],
        "prices": prices,
    }
    rows = comparison_rows(compare(scenario, ["search-only", "pinned"], **grid))
    rows += comparison_rows(compare(scenario, ["pinned"], pinned=["add_issue_comment"], **grid))
    by = {}
    for row in rows:
        pins = tuple(row["options"].get("pinned", ()))
        by[row["memory"], row["accumulation_source"], pins] = row
    table = _pin_rows()
    for (memory, source), cells in table.items():
        sources = ("history", "session") if source == "either" else (source,)
        for s in sources:
            base = by[memory, s, ()]
            want = [
                _cell(base, None),
                _cell(by[memory, s, tuple(measured.pinned)], base),
                _cell(by[memory, s, ("add_issue_comment",)], base),
            ]
            assert cells == want, (memory, s, cells, want)
    more = [
        round(100 * (by[m, s, tuple(measured.pinned)]["cost_usd"] / by[m, s, ()]["cost_usd"] - 1))
        for m, s, _ in {key for key in by if key[2] == ()}
    ]
    assert f"Pins measured on other tasks cost {min(more)}–{max(more)} % more and fix nothing here" in says


def test_the_other_run_views_label_the_per_request_figure_as_such():
    from toolsearch_lab.ui.tokens_render import run_spec
    from toolsearch_lab.ui.trace_viewer import summary_html

    trace = run_scenario(load_scenario("spring-demo")).trace
    pct = f"{trace.tokens_total()['prompt_saved_pct']:g}% saved"
    title = run_spec(trace, 0, 0, trace.catalog_size)["layout"]["title"]["text"]  # the sizes: no run only
    for shown in (text(title), text(summary_html(trace, "run"))):
        assert f"per-request counterfactual: {pct}" in shown  # never a bare "% saved"
        assert shown.count("% saved") == 1
