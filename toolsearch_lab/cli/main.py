"""``toolsearch-lab`` command line. Each sub-command lives with the concept it shows; this module only parses
arguments and dispatches, importing lazily so ``--help`` stays fast."""

from __future__ import annotations

import argparse
import sys

INDEX_KINDS = ["regex", "lucene", "vector", "hybrid"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolsearch-lab", description="Explore the tool search tool pattern (RAG over tools)."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run a scenario through the advisor loop and print every iteration")
    demo.add_argument(
        "--scenario", default="spring-demo", help="scenario name or path (default: spring-demo)"
    )
    demo.add_argument("--index", default="lucene", choices=INDEX_KINDS, help="index kind (default: lucene)")
    demo.add_argument(
        "--accumulation",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="keep tools found by every earlier search exposed (default: off, as in Spring's demo app; "
        "the advisor's own default is on)",
    )
    demo.add_argument(
        "--model", default="simulated", help="'simulated' (offline) or 'openai' (uses OPENAI_*)"
    )
    demo.add_argument("--json", action="store_true", help="print the trace summary as JSON")

    search = sub.add_parser("search", help="search a catalog with one index")
    search.add_argument("query")
    search.add_argument("--catalog", required=True, help="shipped catalog name or a JSON file")
    search.add_argument("--index", default="lucene", choices=INDEX_KINDS)
    search.add_argument("--max-results", type=int, default=None)
    search.add_argument("--json", action="store_true")

    ev = sub.add_parser("eval", help="retrieval metrics of an index on a dataset")
    ev.add_argument("--dataset", required=True, help="shipped dataset name or a JSON file")
    ev.add_argument("--index", default="hybrid", choices=INDEX_KINDS)
    ev.add_argument("--k", type=int, default=5)
    ev.add_argument("--json", action="store_true")

    tok = sub.add_parser("tokens", help="tokens of a catalog's tool definitions, per tool and in total")
    tok.add_argument("--catalog", required=True, help="shipped catalog name or a JSON file")
    tok.add_argument("--encoding", default="o200k_base", choices=["o200k_base", "cl100k_base"])
    tok.add_argument("--json", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            from toolsearch_lab.cli.demo import demo_command

            return demo_command(args)
        if args.command == "search":
            from toolsearch_lab.cli.search import search_command

            return search_command(args)
        if args.command == "eval":
            from toolsearch_lab.eval.metrics import eval_command

            return eval_command(args)
        if args.command == "tokens":
            from toolsearch_lab.tokens import tokens_command

            return tokens_command(args)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"toolsearch-lab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
