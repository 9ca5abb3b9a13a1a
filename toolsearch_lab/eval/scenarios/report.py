"""Reports of a scenario matrix (:func:`~.running.scenario_matrix`): totals per wording x descriptions x
index x agent, and text tables of them and of the steps that failed.
"""

from __future__ import annotations

from collections.abc import Sequence


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
