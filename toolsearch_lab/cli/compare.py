"""``toolsearch-lab compare``: every way of loading tools on one scenario, side by side, with the bill.

One row per strategy (x index): model requests, prompt tokens and how many of them a prompt cache serves,
the cost under a price table, the tools sent per request, the task grade, and the first request whose step
needed a tool the strategy had not exposed. A conversation scenario adds the chat memory and where found
tools live as dimensions (``--memory``, ``--accumulation-source``, several values each); the ``pinned`` row
pins ``--pin`` tools, or those measured usage recommends (``recommend_pins`` on the other shipped scenarios
over the same catalog).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack

from toolsearch_lab.cli.chat import add_chat_options
from toolsearch_lab.cli.live_servers import add_live_options, live_catalog
from toolsearch_lab.cli.live_tools import add_destructive_option
from toolsearch_lab.cli.options import (
    EXIT_OK,
    abstention_options,
    add_abstention_options,
    add_command,
    add_json_flag,
    names_help,
    positive_int,
)
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.loop.strategies import COMPARED_BY_DEFAULT, STRATEGY_NAMES

NAME = "compare"
SUMMARY = "run every tool-loading strategy on a scenario and compare requests, cached tokens, cost, success"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.eval.scenarios import list_scenarios

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Run a scenario once per strategy (all tools, search-only with and without accumulation, listed\n"
        "names + search, inline references, pre-retrieval, retrieve-then-bind, Anthropic's native regex and\n"
        "BM25 search, which run once on their own index) and print one row each:\n"
        "model requests, prompt tokens (cached / uncached under the price's provider caching rule), cost,\n"
        "tools sent per request, success, and the first request that needed a tool not exposed.",
    )
    parser.add_argument(
        "--scenario",
        default="livemcpbench",
        help=names_help("shipped scenario", list_scenarios(), "a scenario JSON file"),
    )
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=list(COMPARED_BY_DEFAULT),
        choices=STRATEGY_NAMES,
        metavar="STRATEGY",
        help=f"strategies to run, any of: {', '.join(STRATEGY_NAMES)} (default: all but pinned, which "
        "first runs the other shipped scenarios over the same catalog to measure usage)",
    )
    parser.add_argument("--index", nargs="+", default=["lucene"], choices=INDEX_KINDS, help="index kind(s)")
    parser.add_argument(
        "--max-results",
        type=positive_int,
        default=None,
        help="maxResults: the advisor's default and what a simulated agent asks for (it asks for 5 if unset)",
    )
    parser.add_argument(
        "--idle-turns",
        type=positive_int,
        default=None,
        help="unload tools unused for this many model turns (search strategies that can find them again)",
    )
    parser.add_argument(
        "--max-loaded", type=positive_int, default=None, help="keep at most this many loaded tools (same)"
    )
    add_chat_options(parser, several=True)
    parser.add_argument(
        "--pin",
        nargs="+",
        default=None,
        metavar="TOOL",
        help="the pinned row's tools (default: what recommend_pins measures on the other shipped scenarios "
        "over the same catalog)",
    )
    parser.add_argument("--prices", default=None, help="a price table JSON file (default: the shipped one)")
    parser.add_argument("--price-model", default=None, help="the model to price as (default: the table's)")
    add_json_flag(parser, "the rows")
    add_abstention_options(parser)
    add_live_options(parser, takes_file=False)
    add_destructive_option(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.eval.compare import compare, comparison_rows
    from toolsearch_lab.eval.cost import load_prices
    from toolsearch_lab.eval.scenarios import load_scenario

    prices = load_prices(args.prices)
    price = prices.price(args.price_model)
    with ExitStack() as stack:
        # With live servers every strategy's run calls their tools for real.
        index_options = _index_options(args)
        live = live_catalog(args, stack, command=NAME, once=True)
        scenario = load_scenario(args.scenario, live_tools=live.tools if live else None)
        runs = compare(
            scenario,
            args.strategies,
            args.index,
            max_results=args.max_results,
            prices=prices,
            price_model=price.model,
            idle_turns=args.idle_turns,
            max_loaded=args.max_loaded,
            memories=args.memory,
            sources=args.accumulation_source,
            placements=args.memory_advisor,
            pinned=args.pin,
            index_options=index_options,
        )
    rows = comparison_rows(runs)
    if args.json:
        json.dump(rows, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print(format_rows(rows, f"{price.model} ({price.provider} caching), prices taken {prices.taken}"))
        if price.provider != "anthropic" and any(r["strategy"].startswith("anthropic-") for r in rows):
            print(
                "note: the anthropic-* rows are Anthropic's own search; --price-model claude-sonnet-4.5 "
                "bills every row under Anthropic's caching rule"
            )
    return EXIT_OK


def _index_options(args: argparse.Namespace) -> dict:
    """The abstention flags' options, the same for every ``--index`` (each must be one that abstains)."""
    options = [abstention_options(args, kind) for kind in args.index]
    return options[0] if options else {}


COLUMNS = (
    ("strategy", "strategy", "{}"),
    ("index", "index", "{}"),
    ("memory", "memory", "{}"),
    ("memory_advisor", "memory at", "{}"),
    ("accumulation_source", "tools in", "{}"),
    ("requests", "req", "{}"),
    ("prompt_tokens", "prompt", "{:,}"),
    ("cached_tokens", "cached", "{:,}"),
    ("cache_write_tokens", "written", "{:,}"),
    ("uncached_tokens", "uncached", "{:,}"),
    ("cost_usd", "cost $", "{:.4f}"),
    ("mean_tools_per_request", "tools/req", "{:.1f}"),
    ("success", "success", "{}"),
    ("first_unexposed_request", "1st miss", "{}"),
)


def format_rows(rows: list[dict], priced: str) -> str:
    """A plain table: one line per row, columns padded to their widest cell (memory and where found tools
    live only for a conversation)."""
    conversation = any(row.get("memory") for row in rows)
    chat = ("memory", "memory_advisor", "accumulation_source")
    columns = [c for c in COLUMNS if conversation or c[0] not in chat]
    cells = [[label for _, label, _ in columns]]
    for row in rows:
        line = []
        for key, _, fmt in columns:
            value = row.get(key)
            if key == "success":
                value = f"{'yes' if value else 'no'} {row['steps_succeeded']}/{row['steps']}"
            line.append("-" if value is None else fmt.format(value))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    left = 5 if conversation else 2
    text = [
        "  ".join(
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]
    scenario = rows[0]["scenario"] if rows else "?"
    pins = next((row["options"]["pinned"] for row in rows if "pinned" in row.get("options", {})), None)
    notes = [f"pinned row: {', '.join(pins)} always loaded"] if pins else []
    settings = {row["index"]: row["abstention"] for row in rows if row.get("abstention")}
    notes += [f"the {kind} index says no tool matches: {setting}" for kind, setting in settings.items()]
    return "\n".join([f"scenario {scenario} · priced as {priced}", *text, *notes])
