"""Choose "no tool matches" by whole runs: every candidate abstention setting of the hybrid index, run over
user-worded scenarios with the semantic simulated agent, judged by task success and prompt tokens. A
report: it prints numbers; nothing fails.

    python benchmarks/abstention_runs.py                     # the choice data (~25 min the first time)
    python benchmarks/abstention_runs.py --split held-out    # the held-out data, judged once, never chosen on
    python benchmarks/abstention_runs.py --markdown          # the tables as docs/index.md shows them

Choice data (the default is chosen on these): BFCL live's ``choice`` half (one-step scenarios over each
request's own catalog of 1 to 12 functions, real users' words; ``toolsearch_lab.eval.bfcl_live``), the
development user-worded scenarios and ``github-off-catalog``. Held out (never chosen on): BFCL live's
``held-out`` half, the three user-worded scenarios written blind, and the GitHub paraphrases as one-step
scenarios over the GitHub catalog.

The agent (``models/simulated.py``, rule 5) searches once more in other words after "no tool matches" and
then does without a tool, as the meta-tool's description invites.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolsearch_lab.atomic import write_text
from toolsearch_lab.eval.abstention_runs import (
    CANDIDATES,
    candidate_outcomes,
    markdown_table,
    scenario_groups,
    summarise,
)
from toolsearch_lab.index.hybrid_settings import SMALL_CATALOG, SMALL_CATALOG_CONFIDENCE


def render(rows: list[dict]) -> list[str]:
    """:func:`summarise`'s rows as plain text columns (the Markdown table's cells)."""
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in markdown_table(rows)]
    del cells[1]  # the Markdown separator
    width = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)) for row in cells]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("choice", "held-out"), default="choice")
    parser.add_argument("--settings", nargs="+", choices=list(CANDIDATES), default=list(CANDIDATES))
    parser.add_argument("--limit", type=int, default=None, help="only the first N scenarios of each group")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write every run's outcome to PATH")
    args = parser.parse_args(argv)
    print(f"shipped: over at most {SMALL_CATALOG} tools refused below {SMALL_CATALOG_CONFIDENCE} only")
    everything = {}
    for group, found in scenario_groups(args.split).items():
        found = found[: args.limit] if args.limit else found
        started = time.perf_counter()
        outcomes = candidate_outcomes(found, args.settings)
        seconds = time.perf_counter() - started
        print(f"\n{group}: {len(found)} scenarios x {len(args.settings)} settings in {seconds:.0f} s")
        rows = summarise(outcomes)
        print("\n".join(markdown_table(rows) if args.markdown else render(rows)), flush=True)
        everything[group] = [asdict(o) for o in outcomes]
    if args.json:
        write_text(args.json, json.dumps(everything, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
