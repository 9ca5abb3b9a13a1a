"""How far a scenario run can get: where each step's tool stands before any search happens.

A step fails either because search never returned its tool or because the agent, shown it, judged a
neighbour better. Both limits can be measured without running the loop:

* **judge rank** - the simulated agent judges *every* tool of the scenario's set for the step (its fit,
  :meth:`~toolsearch_lab.models.simulated.SimulatedAgent.fit`, as if search had returned them all): the
  rank of the best expected (or accepted) tool. Rank 1 means the agent's judgement would pick it from the
  whole catalog; a run can still pick it at a worse rank when search leaves the better-judged neighbours
  out, and can miss it at rank 1 when search never returns it.
* **index rank** - the index ranks every tool for the need as written: the rank of the best expected tool
  (one past the catalog size when the index does not return it at all).

``benchmarks/judge_ceiling.py`` prints the shares at rank 1, 3 and 5 per wording, with and without example
requests in the descriptions, and with any embedder behind the agent's judgement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolsearch_lab.embed.base import Embedder
from toolsearch_lab.eval.scenarios import Scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.models.simulated import simulated_agent


@dataclass(frozen=True)
class StepRanks:
    scenario: str
    wording: str
    examples: bool
    step: int  # 1-based
    need: str
    expected: tuple[str, ...]  # the expected and also-accepted tools
    judge_rank: int
    judge_first: str  # the tool the agent's judgement ranks first
    index_rank: int


def _rank(order: Sequence[str], wanted: set[str], size: int) -> int:
    """The best 1-based rank of a ``wanted`` name in ``order``; ``size`` + 1 when none is there."""
    return min((i + 1 for i, name in enumerate(order) if name in wanted), default=size + 1)


def step_ranks(
    scenario: Scenario, index: str = "hybrid", agent: str = "semantic", embedder: Embedder | None = None
) -> list[StepRanks]:
    """The judge rank and the index rank of each step of ``scenario`` (see the module docstring). Ties in
    the judgement go to the tool listed first in the scenario, as in a run. A step no tool serves has no
    rank and is left out."""
    if agent == "literal":
        raise ValueError(
            "step_ranks: agent 'literal' has no judgement to rank by (it calls a tool only when its words "
            "match); expected 'semantic' or 'semantic-no-glossary'"
        )
    options = {} if embedder is None else {"embedder": embedder}
    judge = simulated_agent(agent, scenario.agent_steps(), **options)
    definitions = [tool.definition() for tool in scenario.tools]
    names = [tool.name for tool in scenario.tools]
    session = f"ceiling:{scenario.name}"
    searcher = make_index(index)
    searcher.index_tools(session, scenario.tools)
    out = []
    for number, (step, agent_step) in enumerate(zip(scenario.steps, judge.steps, strict=True), start=1):
        if not step.servable:
            continue
        wanted = set(step.expected_tools) | set(step.also_accepted)
        fits = [judge.fit(agent_step, definition) for definition in definitions]
        judged = [names[i] for i in sorted(range(len(names)), key=lambda i: -fits[i])]
        found = searcher.search(SearchRequest(session, step.need, max_results=len(names)))
        out.append(
            StepRanks(
                scenario=scenario.name,
                wording=scenario.wording,
                examples=scenario.examples,
                step=number,
                need=step.need,
                expected=tuple(sorted(wanted)),
                judge_rank=_rank(judged, wanted, len(names)),
                judge_first=judged[0],
                index_rank=_rank([r.tool_name for r in found.tool_references], wanted, len(names)),
            )
        )
    return out


def share_within(ranks: Sequence[int], k: int) -> float:
    """The share of ``ranks`` at ``k`` or better (0.0 for none)."""
    return sum(1 for r in ranks if r <= k) / len(ranks) if ranks else 0.0
