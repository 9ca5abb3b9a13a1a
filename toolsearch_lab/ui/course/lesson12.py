"""Notebook 12 (conversations): a function that picks as few tools to pin as possible so that Spring's way
(found tools read back from the messages the advisor holds) survives a 6-message window on the transcript the
application manages, run on the notebook's conversation and on one the notebook never shows."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.eval.scenarios import ScenarioRun
from toolsearch_lab.eval.scenarios.format import scenario_from_dict
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.course.functions import Case, FunctionCheck

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
        return (
            False,
            'pins_for should return a list of tool names, e.g. ["list_issues"], '
            f"not a {type(answer).__name__}",
        )
    if not all(isinstance(n, str) for n in answer):
        return False, "every entry of the list pins_for returns must be a tool's name (text)"
    if TOOL_SEARCH_TOOL_NAME in answer:
        return False, f"{TOOL_SEARCH_TOOL_NAME} is sent in every request already: pinning it changes nothing"
    unknown = [n for n in answer if n not in names]
    if unknown:
        return False, f"{unknown[:3]} are not tools of this catalog: use the exact names the steps expected"
    if len(set(answer)) != len(answer):
        return False, "a tool is pinned twice; each pin is one tool, sent once in every request"
    if len(answer) > MAX_PINS:
        return False, (
            "that many pins is loading the catalog, not choosing: every pinned definition rides in every "
            "request. Pin only what a failing step of the run needed"
        )
    failing = _failing(answer, history_run)
    if failing:
        what = "nothing pinned" if not answer else "these pins"
        return False, (
            f"with {what}, step(s) {failing} still fail: "
            + "; ".join(f"{k}. {history_run.steps[k - 1].need!r}" for k in failing)
            + ". Which tool did the failing step expect, and was it loaded when its turn began?"
        )
    if any(not _failing([p for p in answer if p != n], history_run) for n in answer):
        return False, (
            "every step succeeds, but not every pin is needed: with one of them left out every step still "
            "succeeds. Each pin is a definition in every request: for each, which failing step needed it?"
        )
    return True, (
        f"with {answer} always loaded, every step succeeds although memory dropped the search results: the "
        "pinned tool does not depend on the messages, so the window cannot take it away"
    )


# A conversation the notebook never shows, over the same catalog: two later turns ask for "the same" again
# after the window dropped the turn that found the tool, so other pins rescue it. (user, need, tool, data).
HELD_OUT_TURNS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("Which pull requests are open in octo-org/widgets?", "list the open pull requests of a repository",
     "list_pull_requests", {"state": "open"}),
    ("Ask mona and hubot to review #7.", "request reviewers for pull request 7",
     "request_pull_request_reviewers", {"pullNumber": 7, "reviewers": ["mona", "hubot"]}),
    ("Label issue #12 as a bug.", "update the labels of issue 12",
     "update_issue_labels", {"issue_number": 12, "labels": ["bug"]}),
    ("Ask the same two to review #9.", "ask the same two to review pull request 9",
     "request_pull_request_reviewers", {"pullNumber": 9, "reviewers": ["mona", "hubot"]}),
    ("Give issue #13 the same label.", "label issue 13 the same way",
     "update_issue_labels", {"issue_number": 13, "labels": ["bug"]}),
]  # fmt: skip


@cache
def _held_out_run() -> ScenarioRun:
    repo = {"owner": "octo-org", "repo": "widgets"}
    turns = [
        {"user": user, "steps": [{"need": need, "expected_tools": [tool], "data": {**repo, **data}}]}
        for user, need, tool, data in HELD_OUT_TURNS
    ]
    system = "You are a maintainer's assistant for octo-org/widgets on GitHub. Use tools to act."
    raw = {"name": "held-out-conversation", "catalog": "github-mcp", "system": system, "turns": turns}
    scenario = scenario_from_dict(raw, "the held-out conversation")
    return run_strategy(scenario, "search-only", memory="window:6", accumulation_source="history").run


def _cases(history_run: ScenarioRun) -> list[Case]:
    return [
        Case("the notebook's conversation", (history_run,), {"history_run": history_run}),
        Case(
            "a conversation about reviews and labels the check keeps to itself",
            (_held_out_run(),),
            {"history_run": _held_out_run()},
        ),
    ]


LOOK_AT = "on that conversation, which steps fail, and which tool did each of them expect?"


def solution() -> Any:
    def pins_for(run):
        failed = [step for step in run.steps if not step.success]
        return sorted({tool for step in failed for tool in step.expected})

    return pins_for


EXERCISES = (
    Exercise(
        key="12",
        notebook="12_conversations",
        answer_cell="c18",
        hint="run.steps says which step failed (step.success) and which tools it expected (step.expected).",
        solve=solution,
        wrong="def pins_for(run):\n"
        "    return sorted({tool for step in run.steps if not step.success for tool in step.called})",
        why="a pinned tool is sent in every request whatever memory keeps, so the step whose tool memory "
        "took away succeeds; pin exactly the tools the failing steps expected, since every pin costs its "
        "definition in every request.",
        judge=FunctionCheck(solution, "conversation", _cases, judge, LOOK_AT),
    ),
)
