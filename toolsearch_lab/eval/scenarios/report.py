"""Reports of a scenario matrix (:func:`~.running.scenario_matrix`): totals per wording x descriptions x
index x agent, and text and Markdown tables of them and of the steps that failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolsearch_lab.eval.scenarios.format import HELD_OUT_SCENARIOS


def summarise_matrix(rows: Sequence[dict]) -> list[dict]:
    """Per wording x descriptions (as shipped, or with example requests) x index x agent: tasks succeeded
    and steps succeeded over all scenarios (pooled)."""
    groups: dict[tuple[str, bool, str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["wording"], row["examples"], row["index"], row["agent"]), []).append(row)
    return [
        {
            "wording": wording,
            "examples": examples,
            "index": index,
            "agent": agent,
            "tasks": len(group),
            "tasks_succeeded": sum(r["task_success"] for r in group),
            "steps": sum(r["steps"] for r in group),
            "steps_succeeded": sum(r["steps_succeeded"] for r in group),
            "step_success_rate": sum(r["steps_succeeded"] for r in group) / sum(r["steps"] for r in group),
            "failed_not_searched": sum(f["surfaced"] is None for r in group for f in r["failed_steps"]),
            "failed_not_surfaced": sum(f["surfaced"] is False for r in group for f in r["failed_steps"]),
            "failed_surfaced": sum(f["surfaced"] is True for r in group for f in r["failed_steps"]),
        }
        for (wording, examples, index, agent), group in sorted(groups.items())
    ]


_WHY = {True: "returned, not chosen", False: "never returned", None: "not searched"}


def summary_text(summary: Sequence[dict]) -> str:
    """:func:`summarise_matrix` as a text table, with why steps failed."""
    lines = [
        f"{'wording':<7} {'descriptions':<12} {'index':<7} {'agent':<20} {'tasks':>7} {'steps':>9} "
        f"{'step rate':>9}   failed steps: not searched / tool never returned / returned but not chosen"
    ]
    for s in summary:
        lines.append(
            f"{s['wording']:<7} {descriptions_label(s['examples']):<12} {s['index']:<7} {s['agent']:<20} "
            f"{s['tasks_succeeded']:>3}/{s['tasks']:<3} "
            f"{s['steps_succeeded']:>4}/{s['steps']:<4} {100 * s['step_success_rate']:>8.0f}%   "
            f"{s['failed_not_searched']:>3} / {s['failed_not_surfaced']:>3} / {s['failed_surfaced']}"
        )
    return "\n".join(lines)


def descriptions_label(examples: bool) -> str:
    return "+ examples" if examples else "as shipped"


def failed_steps_text(
    rows: Sequence[dict], agent: str = "semantic", wording: str = "user", index: str | None = None
) -> str:
    """One line per failed step of ``agent`` on ``wording`` scenarios (one index, or all): what was expected,
    what ran, and whether a search had returned the expected tool."""
    lines = []
    for r in rows:
        if r["agent"] == agent and r["wording"] == wording and index in (None, r["index"]):
            for f in r["failed_steps"]:
                lines.append(
                    f"  {r['index']:<7} {descriptions_label(r['examples']):<10} {r['scenario']:<26} "
                    f"{f['need']!r}: expected {f['expected']}, "
                    f"ran {f['called']} ({_WHY[f['surfaced']]})"
                )
    return "\n".join(lines)


def _cell(run: dict) -> str:
    return f"{'✓' if run['task_success'] else '✗'} {run['steps_succeeded']}/{run['steps']}"


def markdown_tables(rows: Sequence[dict], indexes: Sequence[str]) -> dict[str, list[str]]:
    """The Markdown tables of docs/wording-table.md and docs/eval.md, by name: ``"every run"`` (a row per
    scenario, wording, descriptions and agent, a column per index), ``"totals"`` (the same summed over the
    scenarios) and ``"user-worded, hybrid"`` (a row per user-worded scenario, the hybrid index's runs by
    agent and descriptions; the scenarios written blind marked held out)."""
    keyed = {(r["scenario"], r["examples"], r["agent"], r["index"]): r for r in rows}
    order = list(dict.fromkeys((r["scenario"], r["wording"], r["examples"], r["agent"]) for r in rows))
    order.sort(key=lambda k: (k[0], k[2]))
    head = " | ".join(indexes)
    every = [f"| scenario | wording | descriptions | agent | {head} |", "|---" * (4 + len(indexes)) + "|"]
    for scenario, wording, examples, agent in order:
        cells = " | ".join(_cell(keyed[scenario, examples, agent, index]) for index in indexes)
        every.append(f"| {scenario} | {wording} | {descriptions_label(examples)} | {agent} | {cells} |")
    totals = {(s["wording"], s["examples"], s["agent"], s["index"]): s for s in summarise_matrix(rows)}
    summed = [f"| wording | descriptions | agent | {head} |", "|---" * (3 + len(indexes)) + "|"]
    groups = dict.fromkeys((w, e, a) for _, w, e, a in sorted(order, key=lambda k: (k[1], k[2])))
    for wording, examples, agent in groups:
        cells = " | ".join(
            f"{t['tasks_succeeded']}/{t['tasks']} tasks, {t['steps_succeeded']}/{t['steps']} steps "
            f"({100 * t['step_success_rate']:.0f} %)"
            for t in (totals[wording, examples, agent, index] for index in indexes)
        )
        summed.append(f"| {wording} | {descriptions_label(examples)} | {agent} | {cells} |")
    columns = [(a, e) for a in ("semantic-no-glossary", "semantic") for e in (False, True)]
    user = ["| user-worded scenario (hybrid index) | no glossary | no glossary + examples | semantic | "
            "semantic + examples |", "|---|---|---|---|---|"]  # fmt: skip
    for scenario in dict.fromkeys(k[0] for k in order if k[1] == "user"):
        label = scenario + (" (held out)" if scenario in HELD_OUT_SCENARIOS else "")
        cells = " | ".join(_cell(keyed[scenario, e, a, "hybrid"]) for a, e in columns)
        user.append(f"| {label} | {cells} |")
    return {"every run": every, "totals": summed, "user-worded, hybrid": user}
