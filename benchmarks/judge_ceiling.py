"""Where each scenario step's tool stands before any search: the agent's judgement over the whole catalog,
and the index's ranking of the need (``toolsearch_lab.eval.ceiling``).

    python benchmarks/judge_ceiling.py                   # shares at rank 1/3/5, per wording and descriptions
    python benchmarks/judge_ceiling.py --steps           # also every step's ranks
    python benchmarks/judge_ceiling.py --embedder openai:text-embedding-3-small   # judge with another model
    python benchmarks/judge_ceiling.py --examples on --per-tool 2   # only the first 2 example requests

judge@1 is the share of steps the simulated agent can get right once search returns the tool, whatever
else comes back; any other step it completes only when search also leaves out every neighbour it prefers,
that is, when the index does its judging for it. ``--embedder openai:MODEL`` judges with an
OpenAI-compatible embeddings endpoint (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``), to see what a stronger
embedder would change; the indexes keep the default MiniLM.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from toolsearch_lab.catalog.examples import load_example_requests
from toolsearch_lab.embed.base import Embedder, EmbeddingError
from toolsearch_lab.embed.openai import OpenAIEmbedder
from toolsearch_lab.eval.ceiling import share_within, step_ranks
from toolsearch_lab.eval.scenarios import (
    EXAMPLES_CHOICES,
    WORDINGS,
    Scenario,
    descriptions_label,
    list_scenarios,
    load_scenario,
    with_scenario_examples,
)
from toolsearch_lab.index.factory import INDEX_KINDS


def embedder_from(spec: str) -> Embedder | None:
    if spec == "minilm":
        return None
    if spec.startswith("openai:") and spec[len("openai:") :]:
        return OpenAIEmbedder(model=spec[len("openai:") :])
    raise SystemExit(f"--embedder: unknown {spec!r}; expected 'minilm' or 'openai:MODEL'")


def scenario(name: str, examples: bool, per_tool: int | None) -> Scenario:
    """The scenario, with the first ``per_tool`` of its tools' shipped example requests (all if None)."""
    if not examples or per_tool is None:
        return load_scenario(name, examples=examples)
    plain = load_scenario(name)
    shipped = load_example_requests(plain.tool_set)
    return with_scenario_examples(plain, {tool: asks[:per_tool] for tool, asks in shipped.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wording", choices=[*WORDINGS, "both"], default="both")
    parser.add_argument("--examples", choices=list(EXAMPLES_CHOICES), default="both")
    parser.add_argument("--index", choices=INDEX_KINDS, default="hybrid")
    parser.add_argument("--agent", choices=["semantic", "semantic-no-glossary"], default="semantic")
    parser.add_argument("--embedder", default="minilm", help="'minilm' (default) or 'openai:MODEL'")
    parser.add_argument(
        "--per-tool", type=int, metavar="K", help="with examples: only the first K of each tool's (1-5)"
    )
    parser.add_argument("--steps", action="store_true", help="list every step's ranks")
    parser.add_argument("--json", action="store_true", help="print every step's ranks as JSON")
    args = parser.parse_args()
    if args.per_tool is not None and not 1 <= args.per_tool <= 5:
        parser.error(f"--per-tool: expected 1 to 5 (the shipped sets have five a tool), got {args.per_tool}")
    embedder = embedder_from(args.embedder)
    names = list_scenarios(None if args.wording == "both" else args.wording)
    try:
        ranks = [
            r
            for examples in EXAMPLES_CHOICES[args.examples]
            for name in names
            for r in step_ranks(scenario(name, examples, args.per_tool), args.index, args.agent, embedder)
        ]
    except EmbeddingError as exc:  # e.g. --embedder openai:MODEL with no endpoint configured
        raise SystemExit(f"--embedder {args.embedder}: {exc}") from None
    if args.json:
        print(json.dumps([dataclasses.asdict(r) for r in ranks], indent=1))
        return
    print(f"agent {args.agent} judging with {args.embedder}; index {args.index} ranking the need as written")
    if args.per_tool is not None:
        print(f"'+ examples': the first {args.per_tool} of each tool's five example requests")
    print(f"{'wording':<8} {'descriptions':<13} {'steps':>5}   judge@1 judge@3 judge@5   index@1 index@5")
    for wording in dict.fromkeys(r.wording for r in ranks):
        for examples in EXAMPLES_CHOICES[args.examples]:
            group = [r for r in ranks if r.wording == wording and r.examples == examples]
            judge, index = [r.judge_rank for r in group], [r.index_rank for r in group]
            print(
                f"{wording:<8} {descriptions_label(examples):<13} {len(group):>5}   "
                + " ".join(f"{share_within(judge, k):>7.0%}" for k in (1, 3, 5))
                + "   "
                + " ".join(f"{share_within(index, k):>7.0%}" for k in (1, 5))
            )
    if args.steps:
        print()
        for r in ranks:
            print(
                f"{r.scenario:<30} {descriptions_label(r.examples):<13} step {r.step:<2} "
                f"judge {r.judge_rank:>3} index {r.index_rank:>3}  {r.need[:60]!r}"
                f" -> judged first: {r.judge_first}"
            )


if __name__ == "__main__":
    main()
