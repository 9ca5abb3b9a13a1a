"""What the stepper's headline measures a run against: a real run of the alternative (every tool sent in every
request of the same task, by the same simulated agent, with the same memory), as notebook 01 and
``toolsearch-lab demo`` do. The per-request counterfactual (every tool put into each of this run's own
requests) flatters tool search, because that agent would not make those requests; the headline shows it
second, labelled. A real model's run and a replayed transcript get no real all-tools run (it would be paid
for, or there is nothing to re-run), and the headline says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.models.simulated import AGENT_NAMES
from toolsearch_lab.trace import RunTrace, saved_pct
from toolsearch_lab.ui import theme as t

__all__ = ["AllToolsBasis", "all_tools_basis", "savings_html"]

SIMULATED_PREFIX = "simulated-"  # a simulated agent's trace names it "simulated-<mode>"


@dataclass(frozen=True)
class AllToolsBasis:
    """The real all-tools run's prompt tokens and requests (None when none was made, and ``why`` says why)."""

    prompt: int | None
    requests: int | None
    why: str = ""


_RUNS: dict[tuple, AllToolsBasis] = {}  # per scenario, tools, agent and memory: the all-tools run is the same


def all_tools_basis(run, trace: RunTrace) -> AllToolsBasis:
    """A real all-tools run of ``run``'s task (a ScenarioRun of a simulated agent), made once per task."""
    if trace.source == "replay":
        return AllToolsBasis(None, None, "a replayed transcript: no all-tools run of it exists")
    scenario = getattr(run, "scenario", None)
    mode = trace.model.removeprefix(SIMULATED_PREFIX)
    if scenario is None:
        return AllToolsBasis(None, None, "no scenario to run again with every tool")
    if not trace.model.startswith(SIMULATED_PREFIX) or mode not in AGENT_NAMES:
        return AllToolsBasis(
            None,
            None,
            "the model is no simulated agent: an all-tools run would call it (and pay for it) again",
        )
    memory, placement = trace.config.get("memory"), trace.config.get("memory_advisor")
    key = (
        scenario.name,
        scenario.examples,
        tuple(tool.name for tool in scenario.tools),
        mode,
        memory,
        placement,
    )
    if key not in _RUNS:
        # The all-tools agent never searches, so the index does not change its run (nor the cache key).
        real = run_strategy(
            scenario, "all-tools", "lucene", mode, memory=memory, memory_advisor=placement
        ).trace
        _RUNS[key] = AllToolsBasis(real.tokens_total()["prompt_tool_search"], len(real.iterations))
    return _RUNS[key]


def savings_html(run, trace: RunTrace) -> str:
    """The headline: prompt tokens against a real all-tools run first, the per-request counterfactual after
    it, labelled as such (and alone, labelled, when no real run was made)."""
    total = trace.tokens_total()
    prompt, per_request = total["prompt_tool_search"], total["prompt_baseline"]
    basis = all_tools_basis(run, trace)
    counterfactual = (
        f"per-request counterfactual (all {trace.catalog_size} tools put into each of these requests): "
        f"{per_request:,}, {saved_pct(prompt, per_request):.1f}% saved"
    )
    head = f"prompt tokens <b style='color:{t.SEARCH}'>{prompt:,}</b> with tool search"
    if basis.prompt is None:
        return f"{head} · {counterfactual} " + t.muted(f"(no real all-tools run: {t.esc(basis.why)})")
    saved = saved_pct(prompt, basis.prompt)
    colour = t.GOOD if saved > 0 else t.BAD
    return (
        f"{head} vs <b>{basis.prompt:,}</b> in a real run sending all {trace.catalog_size} tools "
        f"({basis.requests} requests): <b style='color:{colour}'>{saved:.1f}% saved</b><br>"
        + t.muted(
            f"{counterfactual}: it flatters tool search, since that agent would not make these requests"
        )
    )
