"""``toolsearch-lab models``: which configured or local chat model endpoint answers, and whether it can call
tools (the recipes for Ollama and llama.cpp's own server are in docs/models.md)."""

from __future__ import annotations

import argparse
import json

from toolsearch_lab.cli.options import EXIT_OK, EXIT_RUN_FAILED, add_command, add_json_flag, positive_float
from toolsearch_lab.cli.terminal import safe

NAME = "models"
SUMMARY = "check which chat model endpoints answer and whether they return tool calls"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Probe OPENAI_BASE_URL (or OpenAI when OPENAI_API_KEY is set; else Ollama's and llama.cpp server's\n"
        "local defaults, 127.0.0.1:11434 and :8080) and Anthropic when ANTHROPIC_API_KEY or\n"
        "ANTHROPIC_BASE_URL is set: list the models, send one request with one tool, send the answer back\n"
        "as a run's second request does. Exit 0 when an endpoint returns tool calls and takes them back,\n"
        "else 1.",
    )
    parser.add_argument(
        "--url", action="append", default=[], help="another OpenAI-compatible base URL (…/v1)"
    )
    parser.add_argument(
        "--model", default=None, help="the model to probe (default: OPENAI_MODEL, else the first listed)"
    )
    parser.add_argument(
        "--timeout", type=positive_float, default=120.0, help="seconds per chat request (a CPU model is slow)"
    )
    add_json_flag(parser, "one object per endpoint")
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.models.probe import check_models

    checks = check_models(args.url, args.model, args.timeout)
    if args.json:
        print(json.dumps([c.to_dict() for c in checks], indent=2, ensure_ascii=True))
    else:
        print(format_checks(checks))
    return EXIT_OK if any(c.supports_tools for c in checks) else EXIT_RUN_FAILED


HEADERS = ("endpoint", "from", "answers", "model", "tool calls", "round trip")


def format_checks(checks: list) -> str:
    rows = [list(HEADERS)]
    for c in checks:
        rows.append(
            [
                safe(c.endpoint, 60),
                c.source,
                "yes" if c.answers else "no",
                safe(c.model or "-", 40),
                c.tools or "-",
                safe(c.round_trip or "-", 80),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    for c in checks:
        if c.problem:
            lines.append(f"{safe(c.endpoint, 60)}: {safe(c.problem, 300)}")
    if not any(c.supports_tools for c in checks):
        lines.append(
            "No endpoint returned tool calls and took them back. Recipes for Ollama and llama.cpp: "
            "docs/models.md."
        )
    return "\n".join(lines)
