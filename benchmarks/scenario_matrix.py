"""Success per scenario x wording x index x simulated agent: the table of issue 16, from one command.

    python benchmarks/scenario_matrix.py            # the full table, then the totals per wording/index/agent
    python benchmarks/scenario_matrix.py --json     # the rows as JSON
    python benchmarks/scenario_matrix.py --failures # also list every failed step of the semantic agent

Every shipped scenario (plain and user wording), every index kind of ``index.factory.INDEX_KINDS`` and both
simulated agents ("literal": word overlap; "semantic": meaning + word overlap), with the demo's defaults
(accumulation off, the agent asking for 5 results). Task = all steps done; steps = share of steps done.
"""

from __future__ import annotations

import argparse
import json
import sys

from toolsearch_lab.eval.scenarios import (
    buildable_indexes,
    failed_steps_text,
    scenario_matrix,
    summarise_matrix,
    summary_text,
)
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.models.simulated import AGENT_MODES


def format_rows(rows: list[dict]) -> list[str]:
    lines = [f"{'scenario':<28} {'wording':<7} {'index':<7} " + "  ".join(f"{a:>16}" for a in AGENT_MODES)]
    keyed = {(r["scenario"], r["index"], r["agent"]): r for r in rows}
    seen: list[tuple[str, str, str]] = []
    for r in rows:
        key = (r["scenario"], r["wording"], r["index"])
        if key not in seen:
            seen.append(key)
    for scenario, wording, index in seen:
        cells = []
        for agent in AGENT_MODES:
            run = keyed.get((scenario, index, agent))
            if run is None:
                cells.append("-")
                continue
            task = "task ok" if run["task_success"] else "task --"
            cells.append(f"{task} {run['steps_succeeded']}/{run['steps']:<3}")
        lines.append(f"{scenario:<28} {wording:<7} {index:<7} " + "  ".join(f"{c:>16}" for c in cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the rows and totals as JSON")
    parser.add_argument("--failures", action="store_true", help="list the semantic agent's failed steps")
    parser.add_argument("--accumulation", action="store_true", help="keep earlier search results exposed")
    parser.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--index", action="append", choices=INDEX_KINDS, help="only this index (repeatable)")
    args = parser.parse_args(argv)
    indexes, problems = buildable_indexes(args.index or INDEX_KINDS)
    for kind, why in problems.items():
        print(f"index {kind!r} left out of the table: {why}", file=sys.stderr)
    rows = scenario_matrix(args.scenario, indexes, AGENT_MODES, args.accumulation)
    summary = summarise_matrix(rows)
    if args.json:
        json.dump({"rows": rows, "summary": summary}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print("\n".join(format_rows(rows)))
    print()
    print(summary_text(summary))
    if args.failures:
        print("\nFailed steps of the semantic agent (user wording):")
        print(failed_steps_text(rows, agent="semantic", wording="user"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
