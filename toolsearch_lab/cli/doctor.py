"""``toolsearch-lab doctor CATALOG...``: will tool search work on these tools, and what to fix first?"""

from __future__ import annotations

import argparse
import shlex
import textwrap
import time
from contextlib import ExitStack
from typing import Any

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, ToolCatalog
from toolsearch_lab.cli.options import EXIT_OK, add_command, add_json_flag, names_help, positive_int
from toolsearch_lab.eval.doctor import DEFAULT_INDEXES, DoctorReport, diagnose
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.tokens import ENCODINGS


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "doctor",
        "check a catalog: cost, findability, confusable tools, description quality, payoff",
        "Searches every tool with queries made from its own text, with each index, and reports the tools\n"
        "that cannot be found, the pairs that get mixed up, descriptions and names to fix, what the catalog\n"
        "costs per request and whether tool search pays off. Several catalogs (or --mcp servers) are\n"
        "checked merged into one, as a client would see them. Findings are ranked: errors first, then by\n"
        "impact.",
    )
    parser.add_argument(
        "catalogs",
        nargs="*",
        metavar="CATALOG",
        help=names_help("shipped catalog", SHIPPED_CATALOGS, "a tools JSON file or directory")
        + "; several are checked merged (default: none, if --mcp is given)",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="COMMAND",
        help="also check a live MCP server started over stdio, e.g. --mcp 'python server.py' "
        "(repeatable; default: none)",
    )
    parser.add_argument(
        "--index",
        action="append",
        choices=INDEX_KINDS,
        help=f"index kind to probe with, repeatable (default: {' and '.join(DEFAULT_INDEXES)})",
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
    parser.add_argument("--top", type=positive_int, default=15, help="how many findings to print")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_json_flag(parser, "the whole report")
    return parser


def run(args: argparse.Namespace) -> int:
    if not args.catalogs and not args.mcp:
        raise ValueError("give at least one CATALOG (shipped name or JSON path) or --mcp COMMAND")
    started = time.perf_counter()
    with ExitStack() as stack:
        parts: dict[str, Any] = {name: name for name in args.catalogs}
        for command in args.mcp:
            words = shlex.split(command)
            if not words:
                raise ValueError("--mcp needs a command, e.g. --mcp 'python server.py'")
            catalog = stack.enter_context(ToolCatalog.from_mcp_stdio(words[0], words[1:]))
            parts[catalog.source or command] = catalog
        report = diagnose(
            next(iter(parts.values())) if len(parts) == 1 else parts,
            indexes=args.index or DEFAULT_INDEXES,
            k=args.k,
            encodings=args.encoding or ("o200k_base", "cl100k_base"),
            calls_per_task=args.calls_per_task,
            progress=not args.no_progress,
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
        lines.append("closest pairs (probes lost to each other, description cosine, the words that differ):")
        for p in report.confusable[:5]:
            cos = f"{p.similarity:.2f}" if p.similarity is not None else "-"
            lines.append(
                f"  {p.a} / {p.b}: {p.a_lost_to_b}+{p.b_lost_to_a}, cos {cos}: "
                f"'{' '.join(p.only_a[:6]) or '-'}' vs '{' '.join(p.only_b[:6]) or '-'}'"
            )
    return "\n".join(lines)


def _summary_lines(report: DoctorReport, seconds: float | None) -> list[str]:
    cost, pay, rec = report.cost, report.payoff, report.recommendation
    took = f"; {seconds:.1f} s" if seconds is not None else ""
    servers = f" from {len(set(report.servers.values()))} servers" if report.servers else ""
    totals = ", ".join(f"{cost.total[e]:,} ({e})" for e in cost.encodings)
    scores = ", ".join(
        f"{s.index} {s.found_at_k:.0%} (MRR {s.mrr:.2f}, {s.tools_never_found} tools never in the top "
        f"{report.k})"
        for s in report.scores
    )
    return [
        f"doctor {report.source}: {report.tools} tools{servers}; indexes {', '.join(report.indexes)}; "
        f"k={report.k}{took}",
        f"cost      {totals} prompt tokens per request with every tool; median tool {cost.median_tool:,}",
        f"findable  {report.score:.0%} of the tools' own queries find their tool in the top {report.k}: "
        f"{scores}",
        f"payoff    a {pay.calls_per_task}-call task: {pay.tokens_per_task_all:,} tokens sending every tool "
        f"vs {pay.tokens_per_task_search:,} with tool search ({pay.encoding})",
        f"advice    tool search {'yes' if rec.use_tool_search else 'no'}: {rec.reasons['tool_search']}",
        f"          index {rec.index}: {rec.reasons['index']}",
        f"          maxResults {rec.max_results}: {rec.reasons['max_results']}",
        f"          accumulation {'on' if rec.accumulation else 'off'}: {rec.reasons['accumulation']}",
    ]
