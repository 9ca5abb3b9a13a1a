"""``toolsearch-lab tokens``: what each tool of a catalog costs in prompt tokens, most expensive first."""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, ToolCatalog
from toolsearch_lab.cli.live_servers import add_live_options, open_catalog
from toolsearch_lab.cli.options import (
    EXIT_OK,
    add_command,
    add_examples_option,
    add_json_flag,
    catalog_tools,
    names_help,
)

NAME = "tokens"
SUMMARY = "tokens of a catalog's tool definitions, per tool and in total"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.tokens import DEFAULT_ENCODING, ENCODINGS

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Estimated prompt tokens of each tool definition (OpenAI's cookbook recipe, local $refs resolved),\n"
        "most expensive first, beside the exact tokens of its compact JSON as sent ($defs included); the\n"
        "totals for sending them all. docs/tokens.md says which is which.",
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
    costs = {t.name: counter.definition_cost(t) for t in tools}
    sent = counter.count_json(tools)
    if args.json:
        payload = {
            "catalog": str(label),
            **({"examples": args.examples} if args.examples is not None else {}),
            "encoding": counter.encoding_name,
            "total": total,
            "json_total": sent,
            "tools": [
                {"name": name, **_server(catalog, name), "tokens": cost, **_exact(costs[name])}
                for name, cost in rows
            ],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return EXIT_OK
    width = max([len(name) for name, _ in rows] + [4])
    described = f", example requests from {args.examples}" if args.examples else ""
    print(f"catalog {label}: {len(rows)} tools{described}, encoding {counter.encoding_name}")
    print(f"{'tool':<{width}}  {'tokens':>7}  {'json':>7}")
    for name, cost in rows:
        refs = costs[name]
        note = f"  ({refs.refs} $ref resolved)" if refs.refs else ""
        note += f"  (recursive: {', '.join(refs.recursive)}, counted once)" if refs.recursive else ""
        print(f"{name:<{width}}  {cost:>7,}  {refs.json:>7,}{note}")
    print(
        f"{'total':<{width}}  {total:>7,}  {sent:>7,}  (tokens: estimated prompt tokens of the definitions, "
        f"incl. {counter.tool_format.func_end} once per request; json: exact tokens of the compact JSON sent)"
    )
    return EXIT_OK


def _exact(cost) -> dict:
    """A tool's exact JSON size and what resolving its $refs found, for the JSON output."""
    out: dict = {"json": cost.json}
    if cost.refs:
        out["refs_resolved"] = cost.refs
    if cost.recursive:
        out["recursive_refs"] = list(cost.recursive)
    if cost.unresolved:
        out["unresolved_refs"] = list(cost.unresolved)
    return out


def _server(catalog: ToolCatalog, name: str) -> dict:
    """``{"server", "serverTool"}`` of a tool from a live setup or a snapshot (``serverTool`` only when the
    catalog renamed it), else nothing."""
    if name not in catalog.origins:
        return {}
    server, original = catalog.origins[name]
    return {"server": server, **({"serverTool": original} if original != name else {})}
