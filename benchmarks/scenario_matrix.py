"""Success per scenario x wording x index x simulated agent: the table of issue 16, from one command.

    python benchmarks/scenario_matrix.py            # the full table, then the totals per wording/index/agent
    python benchmarks/scenario_matrix.py --json     # the rows as JSON
    python benchmarks/scenario_matrix.py --failures # also list every failed step of the semantic agent

Every shipped scenario (plain and user wording), every index kind of ``index.factory.INDEX_KINDS`` and the
three simulated agents ("literal": word overlap; "semantic": glossary + meaning + word overlap;
"semantic-no-glossary": the same without the glossary), with the demo's defaults (accumulation off, the
agent asking for 5 results). Task = all steps done; steps = share of steps done.
"""

from __future__ import annotations

import argparse
import json
import sys

from toolsearch_lab.eval.scenarios import (
    EXAMPLES_CHOICES,
    buildable_indexes,
    descriptions_label,
    failed_steps_text,
    markdown_tables,
    scenario_matrix,
    summarise_matrix,
    summary_text,
)
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.models.openai import ModelNotConfigured
from toolsearch_lab.models.simulated import AGENT_NAMES


def format_rows(rows: list[dict]) -> list[str]:
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    width = {a: max(16, len(a)) for a in agents}
    lines = [
        f"{'scenario':<30} {'wording':<7} {'descriptions':<12} {'index':<7} "
        + "  ".join(f"{a:>{width[a]}}" for a in agents)
    ]
    keyed = {(r["scenario"], r["examples"], r["index"], r["agent"]): r for r in rows}
    seen = list(dict.fromkeys((r["scenario"], r["wording"], r["examples"], r["index"]) for r in rows))
    for scenario, wording, examples, index in seen:
        cells = []
        for agent in agents:
            run = keyed.get((scenario, examples, index, agent))
            if run is None:
                cells.append("-")
                continue
            task = "task ok" if run["task_success"] else "task --"
            cells.append(f"{task} {run['steps_succeeded']}/{run['steps']:<3}")
        cells = [f"{c:>{width[a]}}" for a, c in zip(agents, cells, strict=True)]
        lines.append(
            f"{scenario:<30} {wording:<7} {descriptions_label(examples):<12} {index:<7} " + "  ".join(cells)
        )
    return lines


def markdown(rows: list[dict], indexes: list[str]) -> list[str]:
    """The tables of docs/wording-table.md and docs/eval.md as Markdown (``markdown_tables``)."""
    tables = markdown_tables(rows, indexes)
    return [*tables["every run"], "", *tables["totals"], "", *tables["user-worded, hybrid"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the rows and totals as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument("--failures", action="store_true", help="list the semantic agent's failed steps")
    parser.add_argument("--accumulation", action="store_true", help="keep earlier search results exposed")
    parser.add_argument(
        "--examples",
        choices=list(EXAMPLES_CHOICES),
        default="off",
        help="tools as shipped (off), with example requests in their descriptions (on), or both",
    )
    parser.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--index", action="append", choices=INDEX_KINDS, help="only this index (repeatable)")
    parser.add_argument(
        "--agent",
        action="append",
        choices=(*AGENT_NAMES, "openai"),
        help="only this agent (repeatable); 'openai': a real model (OPENAI_API_KEY or OPENAI_BASE_URL)",
    )
    args = parser.parse_args(argv)
    indexes, problems = buildable_indexes(args.index or INDEX_KINDS)
    for kind, why in problems.items():
        print(f"index {kind!r} left out of the table: {why}", file=sys.stderr)
    try:
        examples = EXAMPLES_CHOICES[args.examples]
        rows = scenario_matrix(args.scenario, indexes, args.agent or AGENT_NAMES, args.accumulation, examples)
    except ModelNotConfigured as exc:
        print(f"scenario_matrix: error: {exc}", file=sys.stderr)
        return 2
    summary = summarise_matrix(rows)
    if args.json:
        json.dump({"rows": rows, "summary": summary}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if args.markdown:
        print("\n".join(markdown(rows, indexes)))
    else:
        print("\n".join(format_rows(rows)))
        print()
        print(summary_text(summary))
    if args.failures:
        print("\nFailed steps of the semantic agent (user wording):")
        print(failed_steps_text(rows, agent="semantic", wording="user"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
