"""Running scenarios: one through a ToolSearchAdvisor with a model, graded; or all of them as a matrix of
indexes x simulated agents. A conversation scenario runs through a ``Conversation``, one turn per
user message, with the chat memory and the accumulation source asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch_lab.eval.scenarios.format import Scenario, list_scenarios, load_scenario
from toolsearch_lab.eval.scenarios.grading import Grade, failed_steps, grade
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.chain import MemoryPlacement
from toolsearch_lab.loop.conversation import Conversation
from toolsearch_lab.loop.memory import ChatMemory
from toolsearch_lab.loop.settings import AccumulationSource
from toolsearch_lab.models.base import ChatModel
from toolsearch_lab.models.factory import make_model
from toolsearch_lab.models.simulated import AGENT_NAMES
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import RunTrace, StepOutcome

# What the benchmarks' ``--examples`` choices run: the tools as shipped, with example requests, or both.
EXAMPLES_CHOICES = {"off": (False,), "on": (True,), "both": (False, True)}


@dataclass
class ScenarioRun:
    scenario: Scenario
    trace: RunTrace
    grade: Grade
    messages: list[dict]

    @property
    def step_success_rate(self) -> float:
        return self.grade.step_success_rate

    @property
    def steps(self) -> list[StepOutcome]:
        return self.grade.steps


def run_scenario(
    scenario: Scenario | str | Path,
    index: str = "lucene",
    accumulation: bool = True,
    model: str | ChatModel = "simulated",
    max_results: int | None = None,
    min_score_threshold: float | None = None,
    encoding: str = "o200k_base",
    session_id: str | None = None,
    advisor: ToolSearchAdvisor | None = None,
    wording: str | None = None,
    memory: ChatMemory | str | None = None,
    accumulation_source: AccumulationSource | None = None,
    index_options: Mapping[str, Any] | None = None,
    memory_advisor: MemoryPlacement | None = None,
) -> ScenarioRun:
    """Run a scenario through a fresh ToolSearchAdvisor (or the one given), grade it step by step and put
    the step outcomes in the trace. ``model``: a ChatModel, or a name for
    :func:`~toolsearch_lab.models.factory.make_model` (a simulated agent gets the scenario's steps).
    A conversation runs with ``memory`` (default ``full``), its ``memory_advisor`` placement (default
    ``"none"``: the application resends the transcript; :mod:`toolsearch_lab.loop.chain`) and
    ``accumulation_source`` (default the advisor's, ``session``); a single request takes none of them.
    ``index_options`` go to the index's constructor (e.g. ``{"abstain": False}`` for the hybrid), not to an
    ``advisor`` given."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, wording)
    chat = {"memory": memory, "accumulation_source": accumulation_source, "memory_advisor": memory_advisor}
    if not sc.turns and any(v is not None for v in chat.values()):
        given = ", ".join(k for k, v in chat.items() if v is not None)
        raise ValueError(
            f"scenario {sc.name!r} is one user request: {given} apply to conversation scenarios (several "
            "user turns)"
        )
    if advisor is None:
        floor = {} if min_score_threshold is None else {"min_score_threshold": min_score_threshold}
        advisor = ToolSearchAdvisor(
            make_index(index, **floor, **(index_options or {})),
            max_results=max_results,
            reference_tool_name_accumulation=accumulation,
            token_counter=TokenCounter(encoding),
            index_name=index,
            accumulation_source=accumulation_source or "session",
        )
    elif index_options:
        raise ValueError(
            "index_options configure the index run_scenario makes; the advisor given has its own"
        )
    elif accumulation_source is not None and accumulation_source != advisor.settings.accumulation_source:
        raise ValueError(
            f"accumulation_source={accumulation_source!r} disagrees with the advisor's "
            f"{advisor.settings.accumulation_source!r}; set it on the advisor"
        )
    context = {advisor.settings.session_id_key: session_id or f"scenario-{sc.name}"}
    chat_model = scenario_model(model, sc, max_results)
    if sc.turns:
        conversation = Conversation(
            advisor,
            chat_model,
            sc.tools,
            context=context,
            memory=memory,
            system=sc.system,
            memory_advisor=memory_advisor or "none",
        )
        result = conversation.send_all(sc.user_messages())
    else:
        result = advisor.run(chat_model, sc.messages(), sc.tools, context)
    verdict = grade(sc, result.trace)
    result.trace.steps = verdict.steps
    return ScenarioRun(sc, result.trace, verdict, result.messages)


def scenario_model(model: str | ChatModel, scenario: Scenario, max_results: int | None = None) -> ChatModel:
    """The chat model for a scenario run: a simulated agent by name gets the scenario's steps (a
    conversation's, turn by turn) and, when the run sets ``max_results``, asks for that many tools (it
    always sends maxResults, so the advisor's default alone would not reach it); a ChatModel or a real model
    by name is used as it is."""
    if not (isinstance(model, str) and model in ("simulated", *AGENT_NAMES)):
        return make_model(model)
    options: dict[str, Any] = {} if max_results is None else {"max_results": max_results}
    if scenario.turns:
        return make_model(model, turns=scenario.agent_turns(), **options)
    return make_model(model, scenario.agent_steps(), **options)


def buildable_indexes(kinds: Sequence[str] = INDEX_KINDS) -> tuple[list[str], dict[str, str]]:
    """(the index kinds that can be built here, {kind: why not} for the others), e.g. a learned ranker
    whose model file has not been built."""
    usable, problems = [], {}
    for kind in kinds:
        try:
            make_index(kind)
        except Exception as exc:  # noqa: BLE001 - any failure to build means: leave it out and say why
            problems[kind] = f"{type(exc).__name__}: {exc}"
        else:
            usable.append(kind)
    return usable, problems


def scenario_matrix(
    names: Sequence[str] | None = None,
    indexes: Sequence[str] = INDEX_KINDS,
    agents: Sequence[str] = AGENT_NAMES,
    accumulation: bool = False,
    examples: Sequence[bool] = (False,),
) -> list[dict]:
    """Run every scenario (default: all shipped, both wordings) with every index and simulated agent, with
    the tools as shipped and/or with example requests in their descriptions (``examples``); one row per run
    with the task grade, the step success rate and the steps that failed."""
    rows = []
    for name in names if names is not None else list_scenarios():
        for with_examples_ in examples:
            scenario = load_scenario(name, examples=with_examples_)
            for index in indexes:
                for agent in agents:
                    rows.append(_matrix_row(scenario, index, agent, accumulation))
    return rows


def _matrix_row(scenario: Scenario, index: str, agent: str, accumulation: bool) -> dict:
    run = run_scenario(scenario, index=index, accumulation=accumulation, model=agent)
    return {
        "scenario": scenario.name,
        "family": scenario.family,
        "wording": scenario.wording,
        "examples": scenario.examples,
        "index": index,
        "agent": agent,
        "task_success": run.grade.success,
        "steps": len(run.steps),
        "steps_succeeded": run.grade.steps_succeeded,
        "step_success_rate": run.step_success_rate,
        "failed_steps": failed_steps(run.grade, run.trace),
        "searches": [s.query for s in run.trace.searches()],
    }
