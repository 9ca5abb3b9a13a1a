"""Notebook 12 (conversations): pin as few tools as possible so that Spring's way (found tools read back from
the messages the advisor holds) survives a 6-message window on the transcript the application manages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.eval.scenarios import ScenarioRun
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.ui.course.base import Exercise, Judgement

MAX_PINS = 10  # more than this is not choosing, it is loading the catalog


def _failing(pins: Sequence[str], history_run: ScenarioRun) -> list[int]:
    """The steps (1-based) that fail when ``pins`` are pinned, with the history run's memory and index."""
    config = history_run.trace.config
    run = run_strategy(
        history_run.scenario,
        "pinned",
        index=str(config.get("index", "lucene")),
        memory=config.get("memory"),
        memory_advisor=config.get("memory_advisor", "none"),
        accumulation_source="history",
        pinned=list(pins),
    )
    return [k for k, step in enumerate(run.run.steps, 1) if not step.success]


def judge(answer: Any, *, history_run: ScenarioRun, **_: Any) -> Judgement:
    """Every step must succeed with ``answer`` pinned, and every pin must be needed for that."""
    names = {t.name for t in history_run.scenario.tools}
    if isinstance(answer, str) or not isinstance(answer, (list, tuple)):
        return False, f'my_pins must be a list of tool names, e.g. ["list_issues"], not {answer!r:.60}'
    if not all(isinstance(n, str) for n in answer):
        return False, "every entry of my_pins must be a tool's name (text)"
    if TOOL_SEARCH_TOOL_NAME in answer:
        return False, f"{TOOL_SEARCH_TOOL_NAME} is sent in every request already: pinning it changes nothing"
    unknown = [n for n in answer if n not in names]
    if unknown:
        return (
            False,
            f"{unknown[:3]} are not tools of this catalog ({len(names)} tools): use their exact names",
        )
    if len(set(answer)) != len(answer):
        return False, "a tool is pinned twice; each pin is one tool, sent once in every request"
    if len(answer) > MAX_PINS:
        return False, (
            f"{len(answer)} pins is loading the catalog, not choosing: every pinned definition rides in "
            "every request. Pin only what a failing step of the run above needed"
        )
    failing = _failing(answer, history_run)
    needs = {k: history_run.steps[k - 1].need for k in failing}
    if failing:
        what = "nothing pinned" if not answer else "these pins"
        return False, (
            f"with {what}, step(s) {failing} still fail: "
            + "; ".join(f"{k}. {n!r}" for k, n in needs.items())
            + ". Which tool did the failing step expect, and was it loaded when its turn began?"
        )
    spare = [n for n in answer if not _failing([p for p in answer if p != n], history_run)]
    if spare:
        return False, (
            f"every step succeeds, but {len(spare)} of your {len(answer)} pins could go and every step would "
            "still succeed: each pin is a definition in every request, so keep only the ones a step needs"
        )
    return True, (
        f"with {answer} always loaded, every step succeeds although memory dropped the search results: the "
        "pinned tool does not depend on the messages, so the window cannot take it away"
    )


def solution(history_run: ScenarioRun) -> list[str]:
    failed = [step for step in history_run.steps if not step.success]
    my_pins = sorted({tool for step in failed for tool in step.expected})
    return my_pins


EXERCISES = (
    Exercise(
        key="12",
        notebook="12_conversations",
        answer_cell="c18",
        hint="history_run.steps says which step failed and which tools it expected (StepOutcome.expected).",
        solve=solution,
        wrong='my_pins = ["add_issue_comment_reaction"]',
        why="a pinned tool is sent in every request whatever memory keeps, so the step whose tool memory "
        "took away succeeds; pin exactly the tools the failing steps expected, since every pin costs its "
        "definition in every request.",
        judge=judge,
    ),
)
