"""``toolsearch-lab replay FILE``: a real run (an Anthropic Messages or OpenAI Responses transcript, or a
Claude Code session file) request by request: the tools in context and deferred, each search and what it
loaded, each call, and the API's usage beside this project's own count.

Everything printed from the file is untrusted text: control and formatting characters (escape sequences,
bidirectional overrides) are shown escaped, never sent to the terminal as they are, and a key inside it
(a tool result, the user's text) is shown as ``***`` (:func:`~toolsearch_lab.trace.shown_trace`), with the
``secret-hidden`` flag on the call and a note saying how many texts held one.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from toolsearch_lab.cli.options import EXIT_OK, add_command, add_json_flag
from toolsearch_lab.cli.terminal import terminal_safe
from toolsearch_lab.trace import ReplaySettings, RunTrace, shown_trace

NAME = "replay"
SUMMARY = "replay a transcript (Anthropic Messages, OpenAI Responses, Claude Code session) request by request"
FORMAT_CHOICES = ("auto", "anthropic-messages", "openai-responses", "claude-code-session")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Read a logged run and show, per model request: the tools in the model's context (+ new ones), the\n"
        "tools sent deferred, each search's query and the tools it loaded, each call, and the API's usage\n"
        "beside this project's o200k count. FILE is a JSON list of {request, response} exchanges (bare\n"
        "bodies or HTTP-wrapped; headers are dropped unread), a Claude Code session JSONL, or the name of a\n"
        "shipped transcript: anthropic-messages, openai-responses, claude-code-session.",
    )
    parser.add_argument("file", metavar="FILE", help="the transcript file (or a shipped transcript's name)")
    parser.add_argument("--format", default="auto", choices=FORMAT_CHOICES, help="insist on one format")
    parser.add_argument(
        "--catalog",
        default=None,
        help="tool definitions for a Claude Code session (a catalog name or file) for our count to include",
    )
    add_json_flag(parser, "the RunTrace (the same JSON RunTrace.from_json reads)")
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.replay.load import load_transcript

    trace = load_transcript(
        args.file, format=None if args.format == "auto" else args.format, catalog=args.catalog
    )
    trace = shown_trace(trace)  # what is printed: keys hidden, the counts still those of the real text
    if args.json:
        print(trace.to_json(indent=2))  # main()'s guard writes controls as JSON escapes
    else:
        print(format_trace(trace))
    return EXIT_OK


# ---- one table cell per value ---------------------------------------------------------------------------
def safe(text: Any, limit: int | None = None) -> str:
    """``text`` as one table cell: line breaks as spaces, cut to ``limit``, controls neutralised (by the
    CLI's one terminal guard, :func:`~toolsearch_lab.cli.terminal.terminal_safe`)."""
    text = " ".join(("" if text is None else str(text)).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return terminal_safe(text)


# ---- the table ---------------------------------------------------------------------------------------------
COLUMNS = (
    "req",
    "in context",
    "new",
    "deferred",
    "ours",
    "API prompt",
    "cached",
    "written",
    "output",
    "called",
)


def format_trace(trace: RunTrace) -> str:
    replay = trace.replay
    if replay is None:
        raise ValueError(f"format_trace shows a replayed run; this trace's source is {trace.source!r}")
    lines = [
        f"replay of {safe(replay.file or '?')} ({replay.format}, model {safe(trace.model, 80)})",
        f"request: {safe(trace.user_request, 300)}",
    ]
    if replay.provenance:
        lines.append(f"provenance: {safe(replay.provenance, 400)}")
    rows = [list(COLUMNS)]
    searches: dict[int, list[str]] = {}
    for it in trace.iterations:
        usage = it.tokens.api_usage or {}
        called = [c.name for c in it.tool_calls if c.kind == "tool"]
        rows.append(
            [
                str(it.number),
                str(len(it.exposed_tools)),
                str(len(it.newly_exposed)),
                str(len(it.deferred)),
                f"{it.tokens.tool_search.total:,}",
                _count(usage.get("prompt_tokens")),
                _count(usage.get("cached_tokens")),
                _count(usage.get("cache_write_tokens")),
                _count(usage.get("completion_tokens")),
                safe(", ".join(called), 60) or "-",
            ]
        )
        searches[it.number] = [_search_line(it, s) for s in it.searches]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines.append("")
    for row in rows:
        cells = [
            c.rjust(w) if 0 < i < len(COLUMNS) - 1 else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        number = int(row[0]) if row[0].isdigit() else None
        lines += [f"     {line}" for line in searches.get(number, [])] if number else []
    lines += ["", _footer(trace, replay)]
    for note in trace.errors:
        lines.append(f"note: {safe(note, 300)}")
    return "\n".join(lines)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def _search_line(it: Any, search: Any) -> str:
    tool = next((c.name for c in it.tool_calls if c.call_id == search.call_id), "search")
    found = ", ".join(search.names) if search.names else "nothing"
    outcome = f"error {search.error}" if search.error else f"→ {found}"
    query = json.dumps(safe(search.query, 200), ensure_ascii=False)
    return f"search {safe(tool, 40)} {query} {safe(outcome, 400)}"


def _footer(trace: RunTrace, replay: ReplaySettings) -> str:
    discovered = [n for it in trace.iterations for n in it.discovered]
    ours = trace.tokens_total()["prompt_tool_search"]
    theirs = sum((it.tokens.api_usage or {}).get("prompt_tokens") or 0 for it in trace.iterations)
    counted = replay.our_count
    return "\n".join(
        [
            f"stop: {safe(trace.stop_reason)} · {len(trace.iterations)} requests · "
            f"{len(trace.searches())} searches"
            f" · discovered {len(discovered)}: {safe(', '.join(discovered), 400) or '-'}",
            f"prompt tokens: ours {ours:,} · API {theirs:,}",
            f"ours = this project's o200k count of {counted} (the provider's tokenizer and framing differ); "
            "API = the usage the transcript recorded (Anthropic: prompt = input + cache writes + cache "
            "reads)",
        ]
    )
