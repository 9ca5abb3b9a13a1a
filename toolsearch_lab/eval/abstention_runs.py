"""Choosing "no tool matches" by whole runs, not by searches: each candidate abstention setting of the hybrid
index is run over user-worded scenarios with a simulated agent, and judged by what the run achieved and
what it cost.

A refused search is not the end of a run: the agent searches once more in other words, as the meta-tool's
description invites, and then does without a tool (:mod:`toolsearch_lab.models.simulated`, rule 5). A
servable request refused twice is a task lost; an unservable request given tools may end in a wrong call
(the agent judges them), and costs their definitions in every later request of the run.

* :func:`run_outcomes` - one :class:`RunOutcome` per scenario and setting.
* :func:`summarise` - per setting and catalog size: task success, servable steps done, unservable steps
  done right (no tool ran), prompt tokens per run, searches refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolsearch_lab.eval.scenarios.format import Scenario
from toolsearch_lab.eval.scenarios.running import run_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import TokenCounter

__all__ = ["SIZE_GROUPS", "RunOutcome", "run_outcomes", "size_group", "summarise"]

# Catalog sizes reported apart: the rule by catalog size is judged on the first two.
SIZE_GROUPS = ("1 tool", "2-3 tools", "4-12 tools", "over 12 tools")


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
