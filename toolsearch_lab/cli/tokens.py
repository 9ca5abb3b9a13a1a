"""``toolsearch-lab tokens``: what each tool of a catalog costs in prompt tokens, most expensive first."""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, ToolCatalog
from toolsearch_lab.cli.options import (
    EXIT_OK,
    add_command,
    add_examples_option,
    add_json_flag,
    add_live_options,
    catalog_tools,
    names_help,
    open_catalog,
)

NAME = "tokens"
SUMMARY = "tokens of a catalog's tool definitions, per tool and in total"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.tokens import DEFAULT_ENCODING, ENCODINGS

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Estimated prompt tokens of each tool definition (OpenAI's cookbook recipe), most expensive first,\n"
        "the total for sending them all, and the exact tokens of the compact JSON tools array.",
    )
    parser.add_argument(
        "--catalog",
        default=None,
        help=names_help("shipped catalog", SHIPPED_CATALOGS, "a tools JSON file (OpenAI, Anthropic or MCP)")
        + " (default: none; give this, --mcp-config or --mcp)",
    )
    add_examples_option(parser)
    parser.add_argument(
        "--encoding", default=DEFAULT_ENCODING, choices=ENCODINGS, help="tiktoken encoding to count with"
    )
    add_json_flag(parser, "each tool's name, server (live or snapshot catalogs) and cost, and the total")
    add_live_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.tokens import TokenCounter

    with ExitStack() as stack:
        catalog = open_catalog(args, stack, [args.catalog] if args.catalog else [], command=NAME)
        tools = catalog_tools(catalog, args.examples)
    live = bool(args.mcp_config or args.mcp)
    label = args.catalog if args.catalog and not live else catalog.source or "catalog"
    counter = TokenCounter(args.encoding)
    rows, total = counter.catalog_tokens(tools)
    if args.json:
        payload = {
            "catalog": str(label),
            **({"examples": args.examples} if args.examples is not None else {}),
            "encoding": counter.encoding_name,
            "total": total,
            "tools": [{"name": name, **_server(catalog, name), "tokens": cost} for name, cost in rows],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    width = max([len(name) for name, _ in rows] + [4])
    described = f", example requests from {args.examples}" if args.examples else ""
    print(f"catalog {label}: {len(rows)} tools{described}, encoding {counter.encoding_name}")
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


def _server(catalog: ToolCatalog, name: str) -> dict:
    """``{"server", "serverTool"}`` of a tool from a live setup or a snapshot (``serverTool`` only when the
    catalog renamed it), else nothing."""
    if name not in catalog.origins:
        return {}
    server, original = catalog.origins[name]
    return {"server": server, **({"serverTool": original} if original != name else {})}
