"""Choosing "no tool matches" by whole runs, not by searches: each candidate abstention setting of the hybrid
index is run over user-worded scenarios with a simulated agent, and judged by what the run achieved and
what it cost.

A refused search is not the end of a run: the agent searches once more in other words, as the meta-tool's
description invites, and then does without a tool (:mod:`toolsearch_lab.models.simulated`, rule 5). A
servable request refused twice is a task lost; an unservable request given tools may end in a wrong call
(the agent judges them), and costs their definitions in every later request of the run.

* :data:`CANDIDATES` - the settings compared; :func:`scenario_groups` - the scenarios of the choice data
  or of the held-out data (which is which was written down before measuring: data/bfcl-live/PROVENANCE.md).
* :func:`run_outcomes` - one :class:`RunOutcome` per scenario and setting; :func:`candidate_outcomes` - the
  same for named candidates, running a rule by catalog size only where it differs from :data:`BASE`.
* :func:`summarise` - per setting and catalog size: task success, servable steps done, unservable steps
  done right (no tool ran), prompt tokens per run, searches refused; :func:`markdown_table` shows it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolsearch_lab.eval.bfcl_live import live_scenario, load_bfcl_live
from toolsearch_lab.eval.datasets import load_dataset
from toolsearch_lab.eval.scenarios.format import HELD_OUT_SCENARIOS, Scenario, ScenarioStep, load_scenario
from toolsearch_lab.eval.scenarios.running import run_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import TokenCounter

__all__ = [
    "BASE",
    "CANDIDATES",
    "CHOICE_SCENARIOS",
    "SIZE_GROUPS",
    "RunOutcome",
    "candidate_outcomes",
    "markdown_table",
    "run_outcomes",
    "scenario_groups",
    "size_group",
    "summarise",
]

# Catalog sizes reported apart: the rule by catalog size is judged on the first two.
SIZE_GROUPS = ("1 tool", "2-3 tools", "4-12 tools", "over 12 tools")
# The user-worded scenarios but the blind ones (HELD_OUT_SCENARIOS), and the one with unservable steps.
CHOICE_SCENARIOS = (
    "github-user",
    "github-bugfix-week-user",
    "github-release-day-user",
    "livemcpbench-user",
    "livemcpbench-day-out-user",
    "spring-demo-user",
    "spring-demo-shop-user",
    "github-off-catalog",
)
# The candidates, as the hybrid index's options. "everywhere": one threshold for every catalog (0.229 is
# the shipped model's own, the default before issue 49); "at most N tools: T": over at most N tools refused
# only below T ("near-miss only": never on the confidence alone), over more the model's threshold.
CANDIDATES: dict[str, dict[str, Any]] = {
    "off": {"abstain": False},
    "0.229 everywhere": {"small_catalog": 0},
    "0.10 everywhere": {"min_confidence": 0.10, "small_catalog": 0},
    "at most 1 tool: 0.02": {"small_catalog": 1, "small_catalog_confidence": 0.02},
    "at most 3 tools: 0.05": {"small_catalog": 3, "small_catalog_confidence": 0.05},
    "at most 3 tools: 0.02": {"small_catalog": 3, "small_catalog_confidence": 0.02},
    "at most 2 tools: near-miss only": {"small_catalog": 2, "small_catalog_confidence": 0.0},
    "at most 3 tools: near-miss only": {"small_catalog": 3, "small_catalog_confidence": 0.0},
    "at most 5 tools: near-miss only": {"small_catalog": 5, "small_catalog_confidence": 0.0},
    "at most 12 tools: near-miss only": {"small_catalog": 12, "small_catalog_confidence": 0.0},
    "default": {},  # what ships
}
BASE = "0.229 everywhere"  # what a rule by catalog size does over catalogs larger than its size


def size_group(tools: int) -> str:
    """The :data:`SIZE_GROUPS` entry of a catalog of ``tools`` tools."""
    return SIZE_GROUPS[0 if tools <= 1 else 1 if tools <= 3 else 2 if tools <= 12 else 3]


@dataclass(frozen=True)
class RunOutcome:
    """One scenario run with one setting: its steps by kind, what was done, and what it cost."""

    scenario: str
    setting: str
    tools: int  # the catalog's size
    servable: int  # steps a tool serves
    servable_done: int
    unservable: int  # steps no tool serves
    unservable_done: int  # of those, the ones for which no tool ran
    success: bool  # every step done and the run answered
    prompt_tokens: int  # summed over the run's model requests
    searches: int
    refused: int  # searches answered "no tool matches" by the index's judgement


def _catalog_key(tools: Sequence[Tool]) -> str:
    """One session per distinct catalog (names, descriptions and parameters), so that scenarios over the
    same tools share its indexing."""
    text = json.dumps([[t.name, t.description, t.parameters] for t in tools], sort_keys=True)
    return "catalog-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_outcomes(
    scenarios: Sequence[Scenario],
    settings: Mapping[str, Mapping[str, Any]],
    agent: str = "semantic",
    progress: Callable[[int, int], None] | None = None,
) -> list[RunOutcome]:
    """Every scenario run once per setting (``settings``: name -> the hybrid index's options) with the
    simulated ``agent``, accumulation off as in the demos; ``progress(done, total)`` after each run. Each
    setting's advisor is shared by its runs, one session per distinct catalog: with accumulation off a run
    carries nothing to the next but the index of its catalog, built once."""
    out = []
    total = len(scenarios) * len(settings)
    for name, options in settings.items():
        advisor = ToolSearchAdvisor(
            make_index("hybrid", **options),
            reference_tool_name_accumulation=False,
            token_counter=TokenCounter(),
            index_name="hybrid",
        )
        for scenario in scenarios:
            run = run_scenario(
                scenario, model=agent, advisor=advisor, session_id=_catalog_key(scenario.tools)
            )
            steps = list(zip(scenario.steps, run.steps, strict=True))
            searches = run.trace.searches()
            out.append(
                RunOutcome(
                    scenario.name,
                    name,
                    len(scenario.tools),
                    sum(s.servable for s, _ in steps),
                    sum(s.servable and o.success for s, o in steps),
                    sum(not s.servable for s, _ in steps),
                    sum(not s.servable and o.success for s, o in steps),
                    run.grade.success,
                    int(run.trace.tokens_total()["prompt_tool_search"]),
                    len(searches),
                    sum(bool(s.abstained) for s in searches),
                )
            )
            if progress is not None:
                progress(len(out), total)
    return out


def candidate_outcomes(scenarios: Sequence[Scenario], names: Sequence[str]) -> list[RunOutcome]:
    """:func:`run_outcomes` of the :data:`CANDIDATES` ``names``. A rule by catalog size runs only the
    scenarios over catalogs it covers: over larger ones it is :data:`BASE` exactly (the same threshold and
    the same tool description), so those runs are :data:`BASE`'s, renamed."""
    chosen = {name: CANDIDATES[name] for name in names}
    plain = {name: o for name, o in chosen.items() if not o.get("small_catalog")} | {BASE: CANDIDATES[BASE]}
    out = run_outcomes(scenarios, plain)
    for name, options in chosen.items():
        if name in plain:
            continue
        small = [s for s in scenarios if len(s.tools) <= options["small_catalog"]]
        out += run_outcomes(small, {name: options})
        covered = {s.name for s in small}
        out += [replace(o, setting=name) for o in out if o.setting == BASE and o.scenario not in covered]
    return [o for o in out if o.setting in chosen]


def paraphrase_scenarios() -> list[Scenario]:
    """The GitHub paraphrases, each a one-step scenario over the GitHub catalog (its first relevant tool
    expected, the others accepted)."""
    base = load_scenario("github-user")
    return [
        Scenario(
            name=f"github-paraphrase-{q.id}",
            title=q.query,
            system=base.system,
            user_request=q.query,
            tools=base.tools,
            steps=[ScenarioStep(q.query, {}, q.relevant_tools[:1], q.relevant_tools[1:])],
            wording="user",
            family="github-paraphrases",
            tool_set="github-mcp",
        )
        for q in load_dataset("github-paraphrases").queries
    ]


def scenario_groups(split: str) -> dict[str, list[Scenario]]:
    """The scenarios of the choice data (``"choice"``: BFCL live's choice half, :data:`CHOICE_SCENARIOS`) or
    of the held-out data (``"held-out"``: BFCL live's held-out half, the blind user-worded scenarios, the
    GitHub paraphrases), by group."""
    live = [live_scenario(r) for r in load_bfcl_live(split)]
    if split == "choice":
        return {
            "BFCL live (choice)": live,
            "user-worded scenarios": [load_scenario(n) for n in CHOICE_SCENARIOS],
        }
    return {
        "BFCL live (held out)": live,
        "blind user-worded scenarios": [load_scenario(n) for n in HELD_OUT_SCENARIOS],
        "GitHub paraphrases": paraphrase_scenarios(),
    }


def summarise(outcomes: Sequence[RunOutcome], by_size: bool = True) -> list[dict[str, Any]]:
    """One row per setting (and, with ``by_size``, per :data:`SIZE_GROUPS` group that has runs, then
    "all"): runs, task success, servable steps done, unservable steps done right, prompt tokens per run,
    and the share of searches refused."""
    rows = []
    settings = list(dict.fromkeys(o.setting for o in outcomes))
    groups = [*SIZE_GROUPS, "all"] if by_size else ["all"]
    for setting in settings:
        for group in groups:
            runs = [
                o
                for o in outcomes
                if o.setting == setting and (group == "all" or size_group(o.tools) == group)
            ]
            if not runs:
                continue
            servable = sum(o.servable for o in runs)
            unservable = sum(o.unservable for o in runs)
            searches = sum(o.searches for o in runs)
            rows.append(
                {
                    "setting": setting,
                    "catalog": group,
                    "runs": len(runs),
                    "task success": sum(o.success for o in runs) / len(runs),
                    "servable steps done": sum(o.servable_done for o in runs) / servable
                    if servable
                    else None,
                    "unservable steps done": (
                        sum(o.unservable_done for o in runs) / unservable if unservable else None
                    ),
                    "prompt tokens per run": sum(o.prompt_tokens for o in runs) / len(runs),
                    "searches refused": sum(o.refused for o in runs) / searches if searches else 0.0,
                }
            )
    return rows


def markdown_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    """:func:`summarise`'s rows as a Markdown table (docs/index.md shows them)."""
    head = ["setting", "catalog", "runs", "task success", "servable steps done", "unservable steps done",
            "prompt tokens / run", "searches refused"]  # fmt: skip

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["setting"], r["catalog"], str(r["runs"]), share(r["task success"]),
                 share(r["servable steps done"]), share(r["unservable steps done"]),
                 f"{r['prompt tokens per run']:,.0f}", share(r["searches refused"])]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return lines
