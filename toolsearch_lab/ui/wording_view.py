"""Notebook 05's tables and plots: the same tasks in plain and in users' words, the three simulated agents,
the glossary, example requests, and whether a step fails in the search or in the agent.

The figures over every scenario read the shipped tables of :mod:`toolsearch_lab.eval.wording_matrix`
(minutes to compute); the small runs (one task, three agents, one glossary entry) run live.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.eval.ceiling import share_within
from toolsearch_lab.eval.scenarios import (
    descriptions_label,
    list_scenarios,
    load_scenario,
    run_scenario,
    summarise_matrix,
)
from toolsearch_lab.models.glossary import Glossary, default_glossary
from toolsearch_lab.models.simulated import AGENT_NAMES, simulated_agent
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, html_sink
from toolsearch_lab.ui.display import Html, Table

TOP_K = 5  # "is the right tool in the top 5?": the index-only figure the lesson leads with


def _marks(steps) -> Html:
    html = " ".join(
        f"<b style='color:{t.GOOD if s.success else t.BAD}'>{'✓' if s.success else '✗'}</b>" for s in steps
    )
    return Html(html, " ".join("✓" if s.success else "✗" for s in steps))


def wording_table(name: str) -> Table:
    """The steps of scenario ``name`` as the catalog would word them and as a user does, with the tool each
    expects."""
    plain, user = load_scenario(name, wording="plain"), load_scenario(name, wording="user")
    rows = [
        [i, a.need, b.need, ", ".join(a.expected_tools)]
        for i, (a, b) in enumerate(zip(plain.steps, user.steps, strict=True), start=1)
    ]
    return Table(["step", "in the catalog's words", "in a user's words", "expected tool"], rows)


# ---- the index first, then the agent ---------------------------------------------------------------------
def ceiling_groups(tables: dict) -> dict[tuple[str, bool], list[dict]]:
    """The shipped step ranks by (wording, example requests)."""
    groups: dict[tuple[str, bool], list[dict]] = {}
    for r in tables["ceiling"]:
        groups.setdefault((r["wording"], r["examples"]), []).append(r)
    return dict(sorted(groups.items()))


def ceiling_shares(tables: dict) -> dict[tuple[str, bool], dict[str, float]]:
    """Per (wording, examples): the share of steps whose tool the index has in its top 5, ranks first, and
    the agent's own judgement ranks first among every tool of the catalog."""
    return {
        key: {
            "index_top5": share_within([r["index_rank"] for r in rows], TOP_K),
            "index_first": share_within([r["index_rank"] for r in rows], 1),
            "judge_first": share_within([r["judge_rank"] for r in rows], 1),
            "steps": len(rows),
        }
        for key, rows in ceiling_groups(tables).items()
    }


BAR_PX = 130  # a share of 100 % as a bar this wide (four bar columns fit the panel)


def _bar(share: float, colour: str, label: str = "") -> Html:
    """A horizontal bar for a share in [0, 1], with its figure beside it."""
    text = label or f"{100 * share:.0f} %"
    html = (
        f"<div style='display:flex;align-items:center;gap:8px'><div style='width:{BAR_PX}px;"
        f"background:{t.GRID}'><div style='width:{round(BAR_PX * share)}px;height:14px;background:{colour}'>"
        f"</div></div><span>{t.esc(text)}</span></div>"
    )
    return Html(html, text)


def ceiling_table(tables: dict) -> Table:
    """Per wording and descriptions: the index-only figures first, then the agent's judgement."""
    rows = [
        [
            f"{wording} words, {descriptions_label(examples)} ({s['steps']} steps)",
            _bar(s["index_top5"], t.NEW),
            _bar(s["index_first"], t.SEARCH),
            _bar(s["judge_first"], t.FOUND),
        ]
        for (wording, examples), s in ceiling_shares(tables).items()
    ]
    return Table(
        ["steps", f"index: right tool in its top {TOP_K}", "index: ranked first", "agent's judgement: first"],
        rows,
        caption="hybrid index over the whole catalog; the agent judges every tool of the catalog",
    )


# ---- the three agents --------------------------------------------------------------------------------------
def agents_table(name: str = "github-user", index: str = "lucene") -> Table:
    """Scenario ``name`` run by each simulated agent with ``index``: which steps each completed."""
    rows = []
    for agent in AGENT_NAMES:
        run = run_scenario(name, index=index, model=agent)
        done = "done" if run.grade.success else "not done"
        rows.append([agent, _marks(run.steps), f"{run.grade.steps_succeeded}/{len(run.steps)}", done])
    return Table(["agent", "steps", "completed", "task"], rows, caption=f"{name}, {index} index")


MATRIX_SERIES = {  # (wording, agent) -> colour, in the order the columns are shown
    ("user", "literal"): t.BASELINE,
    ("user", "semantic-no-glossary"): t.NEW,
    ("user", "semantic"): t.FOUND,
    ("plain", "semantic"): t.SEARCH,
}


def matrix_table(tables: dict) -> Table:
    """Steps completed, pooled over every shipped scenario, by index, wording and agent (shipped table)."""
    totals = {(s["wording"], s["agent"], s["index"]): s for s in summarise_matrix(tables["matrix"])}
    rows = []
    for index in tables["indexes"]:
        cells = [totals[wording, agent, index] for wording, agent in MATRIX_SERIES]
        rows.append(
            [index]
            + [
                _bar(c["step_success_rate"], colour, f"{c['steps_succeeded']}/{c['steps']}")
                for c, colour in zip(cells, MATRIX_SERIES.values(), strict=True)
            ]
        )
    columns = ["index", *(f"{wording} words · {agent}" for wording, agent in MATRIX_SERIES)]
    return Table(columns, rows, caption="steps completed over every shipped scenario")


def best_index(tables: dict, wording: str = "user", agent: str = "semantic") -> tuple[str, dict]:
    totals = [
        s for s in summarise_matrix(tables["matrix"]) if s["wording"] == wording and s["agent"] == agent
    ]
    best = max(totals, key=lambda s: s["step_success_rate"])
    return best["index"], best


# ---- the glossary and example requests ------------------------------------------------------------
def run_with_glossary(name: str, glossary: Glossary, index: str = "hybrid"):
    """Scenario ``name`` run by the semantic agent reading through ``glossary``."""
    task = load_scenario(name)
    return run_scenario(
        task, index=index, model=simulated_agent("semantic", task.agent_steps(), glossary=glossary)
    )


# Notebook 05 tells the learner to read this with `??`: keep it whole, short and plain.
def glossary_runs(
    name: str, entries: Iterable[tuple[Sequence[str], Sequence[str]]], index: str = "hybrid"
) -> dict[str, Any]:
    """Scenario ``name`` run twice by the semantic agent: with the shipped glossary, and with ``entries``
    (pairs of a user's words and what they mean in the catalog's words) added to it."""
    task = load_scenario(name)
    runs = {}
    for label, glossary in (("shipped glossary", default_glossary()),
                            ("+ your entry", default_glossary().extended(entries))):  # fmt: skip
        agent = simulated_agent("semantic", task.agent_steps(), glossary=glossary)
        runs[label] = run_scenario(task, index=index, model=agent)
    return runs


def glossary_table(runs: dict[str, Any]) -> Table:
    rows = [
        [label, _marks(run.steps), f"{run.grade.steps_succeeded}/{len(run.steps)}"]
        for label, run in runs.items()
    ]
    return Table(["glossary", "steps", "completed"], rows)


def examples_table(tables: dict) -> Table:
    """User-worded tasks with the tools' descriptions as shipped and with example requests (shipped table)."""
    rows = []
    for s in summarise_matrix(tables["examples"]):
        rows.append(
            [
                descriptions_label(s["examples"]),
                f"{s['steps_succeeded']}/{s['steps']}",
                f"{100 * s['step_success_rate']:.0f} %",
                s["failed_not_surfaced"],
                s["failed_surfaced"],
            ]
        )
    return Table(
        [
            "descriptions",
            "steps completed",
            "share",
            "failed: never returned",
            "failed: returned, not chosen",
        ],
        rows,
        caption="every user-worded task, hybrid index, semantic agent",
    )


class WordingBrowser(Displayable):
    """Pick a shipped task: its steps in the catalog's words and in a user's words, side by side."""

    def __init__(self, scenario: str = "github") -> None:
        names = list_scenarios("plain")  # the tasks written in both wordings
        if scenario not in names:
            raise ValueError(
                f"WordingBrowser: {scenario!r} is not a task with both wordings; expected one of {names}"
            )
        self.dropdown = widgets.Dropdown(
            options=names, value=scenario, description="Task", layout=widgets.Layout(width="360px")
        )
        self.table = html_sink()
        self.dropdown.observe(lambda _: self.show(), names="value")
        self.show()
        self.widget = widgets.VBox(
            [self.dropdown, self.table], layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px")
        )

    def show(self) -> None:
        self.table.value = wording_table(self.dropdown.value)._repr_html_()
