"""``toolsearch-lab replay FILE``: a real run (an Anthropic Messages, OpenAI Responses or Chat Completions
transcript, logged or recorded with ``toolsearch_lab.models.recorder``, or a Claude Code session file) request
by request: the tools in context and deferred, each search (its query as written) and what it loaded, each
call (a failed one with what it answered), the API's usage beside this project's own count, and what each
request cost at the run's model's price.

Everything printed from the file is untrusted text: control and formatting characters (escape sequences,
bidirectional overrides) are shown escaped, never sent to the terminal as they are, and a key inside it
(a tool result, the user's text) is shown as ``***`` (:func:`~toolsearch_lab.trace.shown_trace`), with the
``secret-hidden`` flag on the call and a note saying how many texts held one.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, get_args

from toolsearch_lab.cli.options import EXIT_OK, add_command, add_json_flag
from toolsearch_lab.cli.replay_compare import add_compare_options, run_compare
from toolsearch_lab.cli.terminal import safe
from toolsearch_lab.trace import (
    Iteration,
    ReplaySettings,
    RunTrace,
    SearchRecord,
    TranscriptFormat,
    shown_trace,
)

if TYPE_CHECKING:
    from toolsearch_lab.eval.cost import Price

NAME = "replay"
SUMMARY = "replay a logged run (Anthropic, OpenAI Responses or Chat, Claude Code) request by request"
FORMAT_CHOICES = ("auto", *get_args(TranscriptFormat))


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Read a logged run and show, per model request: the tools in the model's context (+ new ones), the\n"
        "tools sent deferred, each search's query and the tools it loaded, each call (failed ones with what\n"
        "they answered), the API's usage beside this project's o200k count, and its cost. FILE is a JSON\n"
        "list (or JSONL) of {request, response} exchanges (bare bodies or HTTP-wrapped, streamed answers\n"
        "as their events; headers are dropped unread), a Claude Code session JSONL (sub-agent files in\n"
        "<session>/subagents/ followed), or the name of a shipped transcript: anthropic-messages,\n"
        "openai-responses, claude-code-session.",
    )
    parser.add_argument("file", metavar="FILE", help="the transcript file (or a shipped transcript's name)")
    parser.add_argument("--format", default="auto", choices=FORMAT_CHOICES, help="insist on one format")
    parser.add_argument(
        "--catalog",
        default=None,
        help="tool definitions for a Claude Code session (a catalog name or file) for our count to include",
    )
    add_json_flag(
        parser, "the RunTrace (the same JSON RunTrace.from_json reads); with --compare, the comparison"
    )
    add_compare_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.replay.load import load_transcript

    if args.compare:
        return run_compare(args)

    trace = load_transcript(
        args.file, format=None if args.format == "auto" else args.format, catalog=args.catalog
    )
    trace = shown_trace(trace)  # what is printed: keys hidden, the counts still those of the real text
    if args.json:
        print(trace.to_json(indent=2))  # main()'s guard writes controls as JSON escapes
    else:
        print(format_trace(trace, run_price(trace, args.prices, args.price_model)))
    return EXIT_OK


class RunPrice:
    """How a replayed run is priced: the price (None: the table has none for the run's model) and, in
    words, which price and table it is."""

    def __init__(self, price: Price | None, said: str) -> None:
        self.price, self.said = price, said


def run_price(trace: RunTrace, prices: str | None = None, price_model: str | None = None) -> RunPrice:
    """The run's own model's price in the table (``prices``, default the shipped one), or the named one."""
    from toolsearch_lab.eval.cost import load_prices

    table = load_prices(prices)
    price = table.price(price_model) if price_model else table.for_model(trace.model)
    where = prices or "the shipped price table"
    if price is None:
        return RunPrice(
            None, f"no price for model {safe(trace.model, 80)} in {where}; name one with --price-model"
        )
    chosen = "as named" if price_model else "the run's model"
    return RunPrice(price, f"{price.model} prices ({chosen}) of {table.taken}, from {where}")


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
    "cost",
    "called",
)


def format_trace(trace: RunTrace, priced: RunPrice | None = None) -> str:
    replay = trace.replay
    if replay is None:
        raise ValueError(f"format_trace shows a replayed run; this trace's source is {trace.source!r}")
    priced = priced or RunPrice(None, "not priced")
    lines = [
        f"replay of {safe(replay.file or '?')} ({replay.format}, model {safe(trace.model, 80)})",
        f"request: {safe(trace.user_request, 300)}",
    ]
    if replay.provenance:
        lines.append(f"provenance: {safe(replay.provenance, 400)}")
    rows = [list(COLUMNS)]
    below: dict[int, list[str]] = {}
    for it in trace.iterations:
        usage = it.tokens.api_usage or {}
        called = [c.name for c in it.tool_calls if c.kind == "tool"]
        agent = replay.agent_of(it.number)
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
                _dollars(request_cost(it, priced.price)),
                safe(", ".join(called), 60) or "-",
            ]
        )
        by = [f"↳ sub-agent {safe(agent, 60)}'s request"] if agent is not None else []
        below[it.number] = by + [_search_line(it, s) for s in it.searches] + _error_lines(it)
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines.append("")
    for row in rows:
        cells = [
            c.rjust(w) if 0 < i < len(COLUMNS) - 1 else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        number = int(row[0]) if row[0].isdigit() else None
        lines += [f"     {line}" for line in below.get(number, [])] if number else []
    lines += ["", _footer(trace, replay), _cost_line(trace, priced), *_sub_agent_lines(replay)]
    for note in trace.errors:
        lines.append(f"note: {safe(note, 300)}")
    return "\n".join(lines)


def request_cost(it: Iteration, price: Price | None) -> float | None:
    """USD of one replayed request from the API's usage, or None (no price, or no usage)."""
    from toolsearch_lab.eval.cost import billed_costs

    usage = it.tokens.api_usage
    return billed_costs([usage], price)[0].cost_usd if price is not None and usage else None


def _dollars(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def _cost_line(trace: RunTrace, priced: RunPrice) -> str:
    costs = [request_cost(it, priced.price) for it in trace.iterations]
    known = [c for c in costs if c is not None]
    if not known:
        return f"cost: - ({priced.said})"
    unpriced = len(costs) - len(known)
    gap = f"; {unpriced} request(s) without usage left out" if unpriced else ""
    total = _dollars(sum(known))
    return f"cost: {total} over {len(known)} requests, from the API's usage at {priced.said}{gap}"


def _sub_agent_lines(replay: ReplaySettings) -> list[str]:
    return [
        f"sub-agent {safe(a.label, 60)} ({safe(a.file, 120)}): requests {', '.join(map(str, a.requests))}"
        for a in replay.sub_agents
    ]


def _error_lines(it: Iteration) -> list[str]:
    """A line per call that failed: the tool and what it answered (or why it failed)."""
    return [
        f"✗ {safe(c.name, 60)} failed: {safe(c.result or c.error, 200)}"
        for c in it.tool_calls
        if c.error is not None and c.kind != "search"
    ]


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def _search_line(it: Iteration, search: SearchRecord) -> str:
    """The search as a person reads it: the tool, its query as written, what it found."""
    tool = next((c.name for c in it.tool_calls if c.call_id == search.call_id), "search")
    found = ", ".join(search.names) if search.names else "nothing"
    outcome = f"✗ failed: {search.error}" if search.error else f"→ {found}"
    query = safe(search.query, 200) if search.query is not None else "(no query)"
    return f"search {safe(tool, 40)}: {query} {safe(outcome, 400)}"


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
