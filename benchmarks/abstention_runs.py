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
from dataclasses import asdict, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolsearch_lab.atomic import write_text
from toolsearch_lab.eval.abstention_runs import run_outcomes, summarise
from toolsearch_lab.eval.bfcl_live import live_scenario, load_bfcl_live
from toolsearch_lab.eval.datasets import load_dataset
from toolsearch_lab.eval.scenarios import HELD_OUT_SCENARIOS, Scenario, ScenarioStep, load_scenario
from toolsearch_lab.index.hybrid_settings import SMALL_CATALOG, SMALL_CATALOG_CONFIDENCE

# The user-worded scenarios but the blind ones (HELD_OUT_SCENARIOS), and the one with unservable steps.
CHOICE_SCENARIOS = (
    "github-user",
    "github-bugfix-week-user",
    "github-release-day-user",
    "livemcpbench-user",
    "livemcpbench-day-out-user",
    "spring-demo-user",
    "spring-demo-shop-user",
    "github-off-catalog",
)
# The candidates: the hybrid index's options. "everywhere": one threshold for every catalog (0.229 is the
# shipped model's own, the default before issue 49); "at most N tools: T": the rule by catalog size (over at
# most N tools, refused only below T; over more, the model's threshold).
CANDIDATES: dict[str, dict] = {
    "off": {"abstain": False},
    "0.229 everywhere": {"small_catalog": 0},
    "0.10 everywhere": {"min_confidence": 0.10, "small_catalog": 0},
    "at most 1 tool: 0.02": {"small_catalog": 1, "small_catalog_confidence": 0.02},
    "at most 3 tools: 0.05": {"small_catalog": 3, "small_catalog_confidence": 0.05},
    "at most 3 tools: 0.02": {"small_catalog": 3, "small_catalog_confidence": 0.02},
    "at most 2 tools: near-miss only": {"small_catalog": 2, "small_catalog_confidence": 0.0},
    "at most 3 tools: near-miss only": {"small_catalog": 3, "small_catalog_confidence": 0.0},
    "at most 5 tools: near-miss only": {"small_catalog": 5, "small_catalog_confidence": 0.0},
    "at most 12 tools: near-miss only": {"small_catalog": 12, "small_catalog_confidence": 0.0},
    "default": {},  # the shipped setting (SMALL_CATALOG, SMALL_CATALOG_CONFIDENCE, the model's threshold)
}
BASE = "0.229 everywhere"  # what a rule by catalog size does over catalogs larger than its size


def outcomes_of(found: list[Scenario], settings: dict[str, dict]) -> list:
    """Every setting's runs. A rule by catalog size runs only the scenarios over small enough catalogs: over
    larger ones it is :data:`BASE` exactly (same threshold, same tool description), so those runs are
    taken from it."""
    plain = {name: options for name, options in settings.items() if not options.get("small_catalog")}
    if BASE not in plain:
        plain[BASE] = CANDIDATES[BASE]
    out = run_outcomes(found, plain)
    for name, options in settings.items():
        if name in plain:
            continue
        small = [s for s in found if len(s.tools) <= options["small_catalog"]]
        out += run_outcomes(small, {name: options})
        names = {s.name for s in small}
        out += [replace(o, setting=name) for o in out if o.setting == BASE and o.scenario not in names]
    return [o for o in out if o.setting in settings]


def paraphrase_scenarios() -> list[Scenario]:
    """The GitHub paraphrases, each a one-step scenario over the GitHub catalog (its first relevant tool
    expected, the others accepted)."""
    data = load_dataset("github-paraphrases")
    base = load_scenario("github-user")
    return [
        Scenario(
            name=f"github-paraphrase-{q.id}",
            title=q.query,
            system=base.system,
            user_request=q.query,
            tools=base.tools,
            steps=[ScenarioStep(q.query, {}, q.relevant_tools[:1], q.relevant_tools[1:])],
            wording="user",
            family="github-paraphrases",
            tool_set="github-mcp",
        )
        for q in data.queries
    ]


def scenarios(split: str) -> dict[str, list[Scenario]]:
    """The scenario groups of ``split``."""
    live = [live_scenario(r) for r in load_bfcl_live(split)]
    if split == "choice":
        return {
            "BFCL live (choice)": live,
            "user-worded scenarios": [load_scenario(n) for n in CHOICE_SCENARIOS],
        }
    return {
        "BFCL live (held out)": live,
        "blind user-worded scenarios": [load_scenario(n) for n in HELD_OUT_SCENARIOS],
        "GitHub paraphrases": paraphrase_scenarios(),
    }


def render(rows: list[dict], markdown: bool) -> list[str]:
    head = ["setting", "catalog", "runs", "task success", "servable steps done", "unservable steps done",
            "prompt tokens / run", "searches refused"]  # fmt: skip
    cells = [
        [
            r["setting"],
            r["catalog"],
            str(r["runs"]),
            f"{r['task success']:.3f}",
            "-" if r["servable steps done"] is None else f"{r['servable steps done']:.3f}",
            "-" if r["unservable steps done"] is None else f"{r['unservable steps done']:.3f}",
            f"{r['prompt tokens per run']:,.0f}",
            f"{r['searches refused']:.3f}",
        ]
        for r in rows
    ]
    if markdown:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + [
            "| " + " | ".join(c) + " |" for c in cells
        ]
    width = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, width, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)) for row in cells]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("choice", "held-out"), default="choice")
    parser.add_argument("--settings", nargs="+", choices=list(CANDIDATES), default=list(CANDIDATES))
    parser.add_argument("--limit", type=int, default=None, help="only the first N scenarios of each group")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write every run's outcome to PATH")
    args = parser.parse_args(argv)
    print(f"shipped: at most {SMALL_CATALOG} tools refused only below {SMALL_CATALOG_CONFIDENCE}")
    settings = {name: CANDIDATES[name] for name in args.settings}
    everything = {}
    for group, found in scenarios(args.split).items():
        found = found[: args.limit] if args.limit else found
        started = time.perf_counter()
        outcomes = outcomes_of(found, settings)
        seconds = time.perf_counter() - started
        print(f"\n{group}: {len(found)} scenarios x {len(settings)} settings in {seconds:.0f} s")
        print("\n".join(render(summarise(outcomes), args.markdown)), flush=True)
        everything[group] = [asdict(o) for o in outcomes]
    if args.json:
        write_text(args.json, json.dumps(everything, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
