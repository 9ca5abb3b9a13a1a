"""``toolsearch-lab doctor CATALOG...``: will tool search work on these tools, and what to fix first?"""

from __future__ import annotations

import argparse
import textwrap
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS
from toolsearch_lab.cli.live_servers import add_live_options, open_catalog
from toolsearch_lab.cli.options import (
    EXIT_OK,
    add_command,
    add_json_flag,
    names_help,
    non_negative_int,
    positive_int,
)
from toolsearch_lab.index.factory import INDEX_KINDS

if TYPE_CHECKING:
    from toolsearch_lab.eval.doctor import DoctorReport

NAME = "doctor"
SUMMARY = "check a catalog: cost, findability, confusable tools, description quality, payoff"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.eval.doctor import DEFAULT_INDEXES
    from toolsearch_lab.tokens import ENCODINGS

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Searches every tool with queries made from its own text, with each index, and reports the tools\n"
        "that cannot be found, the pairs that get mixed up, descriptions and names to fix, what the catalog\n"
        "costs per request and whether tool search pays off. Several catalogs (or the servers of\n"
        "--mcp-config and --mcp) are checked merged into one, as a client would see them. Findings are\n"
        "ranked: errors first, then by impact.",
    )
    parser.add_argument(
        "catalogs",
        nargs="*",
        metavar="CATALOG",
        help=names_help("shipped catalog", SHIPPED_CATALOGS, "a tools JSON file or directory")
        + "; several are checked merged (default: none, if --mcp-config or --mcp is given)",
    )
    parser.add_argument(
        "--index",
        action="append",
        choices=INDEX_KINDS,
        help=f"index kind to probe with, repeatable (default: every kind, {', '.join(DEFAULT_INDEXES)})",
    )
    parser.add_argument(
        "--k", type=positive_int, default=5, help="a probe succeeds when its tool is in the top k"
    )
    parser.add_argument(
        "--encoding",
        action="append",
        choices=ENCODINGS,
        help="tiktoken encoding(s) to count with (default: both)",
    )
    parser.add_argument(
        "--calls-per-task",
        type=positive_int,
        default=4,
        help="model calls a typical task makes (for the payoff)",
    )
    parser.add_argument(
        "--result-tokens",
        type=non_negative_int,
        default=100,
        help="tokens of a typical tool result, which later requests carry again (payoff; default 100)",
    )
    parser.add_argument("--top", type=positive_int, default=15, help="how many findings to print")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_json_flag(parser, "the whole report")
    add_live_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.eval.doctor import DEFAULT_INDEXES, diagnose
    from toolsearch_lab.eval.doctor.deferral import sent_document

    if not args.catalogs and not args.mcp and not args.mcp_config:
        raise ValueError(
            "give at least one CATALOG (shipped name or JSON path), --mcp-config FILE or --mcp COMMAND"
        )
    started = time.perf_counter()
    with ExitStack() as stack:
        # Files load leniently: the doctor reports the tools a loader leaves out instead of stopping.
        catalog = open_catalog(args, stack, args.catalogs, command=NAME, strict_files=False)
        report = diagnose(
            catalog,
            indexes=args.index or DEFAULT_INDEXES,
            k=args.k,
            encodings=args.encoding or ("o200k_base", "cl100k_base"),
            calls_per_task=args.calls_per_task,
            result_tokens=args.result_tokens,
            progress=not args.no_progress,
            sent=[d for f in args.catalogs if (d := sent_document(f)) is not None],
        )
    if args.json:
        print(report.to_json(indent=2))
    else:
        print(render_text(report, args.top, time.perf_counter() - started))
    return EXIT_OK


def render_text(report: DoctorReport, top: int = 15, seconds: float | None = None) -> str:
    """The report as a terminal page: summary lines, the top findings, the closest pairs."""
    lines = _summary_lines(report, seconds)
    counts = {s: len(report.by_severity(s)) for s in ("error", "warning", "info")}
    lines.append("")
    lines.append(
        f"findings: {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info"
        + (f" (top {top})" if len(report.findings) > top else "")
    )
    for i, f in enumerate(report.findings[:top], 1):
        where = f" {f.tool}" if f.tool else ""
        lines.append(f"{i:3d}. {f.severity.upper():<7} {f.kind}{where}")
        lines += textwrap.wrap(f.problem, 104, initial_indent="       ", subsequent_indent="       ")
        lines += textwrap.wrap(
            "fix: " + f.fix, 104, initial_indent="       ", subsequent_indent="            "
        )
    if report.confusable:
        lines.append("")
        lines.append(
            "closest pairs (times a search for one ranked the other ahead of it, each way; description "
            "cosine; the words that differ):"
        )
        for p in report.confusable[:5]:
            cos = f"{p.similarity:.2f}" if p.similarity is not None else "-"
            lines.append(
                f"  {p.a} / {p.b}: {p.a_swapped_to_b}+{p.b_swapped_to_a}, cos {cos}: "
                f"'{' '.join(p.only_a[:6]) or '-'}' vs '{' '.join(p.only_b[:6]) or '-'}'"
            )
    return "\n".join(lines)


def _summary_lines(report: DoctorReport, seconds: float | None) -> list[str]:
    cost, pay, rec = report.cost, report.payoff, report.recommendation
    low, high = report.findable_range
    took = f"; {seconds:.1f} s" if seconds is not None else ""
    servers = _servers_text(report)
    totals = ", ".join(f"{cost.total[e]:,} ({e})" for e in cost.encodings)
    scores = ", ".join(
        f"{s.index} {s.found_at_k:.0%} (MRR {s.mrr:.2f}, "
        f"{plural(s.tools_never_found, 'tool')} never in the top {report.k})"
        for s in report.scores
    )
    return [
        f"doctor {report.source}: {plural(report.tools, 'tool')}{servers}; "
        f"indexes {', '.join(report.indexes)}"
        + "".join(f" ({kind} {why})" for kind, why in report.skipped_indexes.items())
        + f"; k={report.k}{took}",
        f"cost      {totals} prompt tokens per request with every tool (estimated; the JSON sent is "
        f"{cost.json_total[cost.encodings[0]]:,} exact); median tool {cost.median_tool:,}",
        f"findable  {low:.0%}-{high:.0%} of plain requests expected in the top {report.k} with {rec.index} "
        f"(from the weakest index's probes to its best); own-words probes: {scores}",
        f"payoff    a {pay.calls_per_task}-call task ({pay.result_tokens:,}-token results): "
        f"{pay.tokens_per_task_all:,} tokens sending every tool "
        f"vs {pay.tokens_per_task_search:,} with tool search ({pay.encoding}): "
        + (
            f"{pay.saved_per_task:,} ({pay.saved_share:.0%}) saved"
            if pay.saved_per_task >= 0
            else f"{-pay.saved_per_task:,} ({-pay.saved_share:.0%}) more with search"
        ),
        f"advice    tool search {rec.verdict}",
        f"          index {rec.index}: {rec.reasons['index']}",
        f"          maxResults {rec.max_results}: {rec.reasons['max_results']}",
        f"          accumulation {'on' if rec.accumulation else 'off'}: {rec.reasons['accumulation']}",
        *([f"          no tool matches: {rec.reasons['abstention']}"] if "abstention" in rec.reasons else []),
        *[
            f"          drop server {drop!r}: it duplicates {keep!r}"
            for drop, keep in report.duplicate_servers.items()
        ],
    ]


def plural(n: int, word: str) -> str:
    """``"1 tool"``, ``"2 tools"``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _servers_text(report: DoctorReport) -> str:
    """``" from 3 servers (1 failed to start: time)"``: every server given, those without tools included."""
    given = list(dict.fromkeys([*report.servers.values(), *report.failed_servers]))
    if not given:
        return ""
    failed = report.failed_servers
    if not failed:
        return f" from {plural(len(given), 'server')}"
    return f" from {plural(len(given), 'server')} ({len(failed)} failed to start: {', '.join(failed)})"
