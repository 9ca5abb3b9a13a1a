"""``toolsearch-lab tokens``: what each tool of a catalog costs in prompt tokens, most expensive first."""

from __future__ import annotations

import argparse
import json

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS
from toolsearch_lab.cli.options import (
    EXIT_OK,
    add_command,
    add_examples_option,
    add_json_flag,
    catalog_tools,
    names_help,
)
from toolsearch_lab.tokens import DEFAULT_ENCODING, ENCODINGS, TokenCounter


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "tokens",
        "tokens of a catalog's tool definitions, per tool and in total",
        "Estimated prompt tokens of each tool definition (OpenAI's cookbook recipe), most expensive first,\n"
        "the total for sending them all, and the exact tokens of the compact JSON tools array.",
    )
    parser.add_argument(
        "--catalog",
        required=True,
        help=names_help("shipped catalog", SHIPPED_CATALOGS, "a tools JSON file (OpenAI, Anthropic or MCP)"),
    )
    add_examples_option(parser)
    parser.add_argument(
        "--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS, help="tiktoken encoding to count with"
    )
    add_json_flag(parser, "the per-tool costs and the total")
    return parser


def run(args: argparse.Namespace) -> int:
    tools = catalog_tools(args.catalog, args.examples)
    counter = TokenCounter(args.encoding)
    rows, total = counter.catalog_tokens(tools)
    if args.json:
        payload = {
            "catalog": str(args.catalog),
            **({"examples": args.examples} if args.examples is not None else {}),
            "encoding": counter.encoding_name,
            "total": total,
            "tools": [{"name": name, "tokens": cost} for name, cost in rows],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    width = max([len(name) for name, _ in rows] + [4])
    described = f", example requests from {args.examples}" if args.examples else ""
    print(f"catalog {args.catalog}: {len(rows)} tools{described}, encoding {counter.encoding_name}")
    print(f"{'tool':<{width}}  {'tokens':>7}")
    for name, cost in rows:
        print(f"{name:<{width}}  {cost:>7,}")
    print(
        f"{'total':<{width}}  {total:>7,}  (estimated prompt tokens of the tool definitions, "
        f"incl. {counter.tool_format.func_end} once per request)"
    )
    print(
        f"{'json':<{width}}  {counter.count_json(tools):>7,}  (exact tokens of the compact JSON tools array)"
    )
    return EXIT_OK
