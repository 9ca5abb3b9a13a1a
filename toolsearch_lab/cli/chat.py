"""The conversation options of ``demo`` and ``compare`` (chat memory, where Spring's memory advisor sits,
where found tools live), how they combine, and the lines ``demo`` prints at the start and end of each turn.

How the three combine (docs/cli.md says the same): ``--memory-advisor`` places Spring's memory advisor
(``none``: the application resends its transcript; ``outside``: Spring's default order, +200; ``inside``:
+1000, the loop's own history off). Given, found tools are read Spring's way (``--accumulation-source
history``) unless ``--accumulation-source session`` asks for this toolkit's record. Not given, a run is what
it always was: ``none`` with the ``session`` record, and ``--accumulation-source history`` alone is
``--memory-advisor none`` read Spring's way. ``--memory`` is the chat memory in any placement (default full);
compaction inside the tool loop is refused, and so is any of the three on a scenario of one user request.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from toolsearch_lab.loop.chain import MEMORY_PLACEMENTS, MemoryPlacement, chat_settings, why_lost
from toolsearch_lab.loop.memory import parse_memory
from toolsearch_lab.loop.settings import ACCUMULATION_SOURCES, AccumulationSource

if TYPE_CHECKING:
    from toolsearch_lab.eval.scenarios import Scenario
    from toolsearch_lab.trace import RunTrace

__all__ = [
    "add_chat_options",
    "chat_choice",
    "memory_spec",
    "plain",
    "short_names",
    "turn_footer",
    "turn_header",
]


def memory_spec(text: str) -> str:
    """``--memory``'s value, checked (argparse names the option when this raises)."""
    try:
        return parse_memory(text).describe()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_chat_options(parser: argparse.ArgumentParser, several: bool = False) -> None:
    """``--memory``, ``--memory-advisor`` and ``--accumulation-source``: one value each (``demo``), or several
    to compare (``several``: ``compare``)."""
    many: dict[str, Any] = {"nargs": "+"} if several else {}
    parser.add_argument(
        "--memory",
        type=memory_spec,
        default=None,
        metavar="SPEC",
        help="conversation scenarios: the chat memory, 'full', 'window:N' (Spring's MessageWindowChatMemory: "
        "the newest N messages from a user message on) or 'compact:N' (older turns summarised into one "
        "message) (default: full)",
        **many,
    )
    parser.add_argument(
        "--memory-advisor",
        choices=MEMORY_PLACEMENTS,
        default=None,
        help="conversation scenarios: where Spring's memory advisor sits, 'none' (the application resends "
        "its transcript), 'outside' (Spring's default order, +200: memory stores only user messages and "
        "answers) or 'inside' (+1000: memory stores everything, the loop's own history is off); given, "
        "found tools are read Spring's way unless --accumulation-source session "
        + (
            "(default: the three placements and the session record side by side)"
            if several
            else "(default: none)"
        ),
        **many,
    )
    parser.add_argument(
        "--accumulation-source",
        choices=ACCUMULATION_SOURCES,
        default=None,
        help="conversation scenarios: where tools found in earlier turns live, 'session' (kept by the "
        "advisor; survives any memory and placement) or 'history' (Spring: read back from the messages the "
        "advisor holds) (default: history with --memory-advisor, else session)",
        **many,
    )


def chat_choice(args: argparse.Namespace, scenario: Scenario) -> dict[str, Any]:
    """``demo``'s conversation settings as ``run_scenario`` takes them (all None for a single request),
    after refusing a combination that cannot run (see the module docstring)."""
    given = [
        flag
        for flag, value in (
            ("--memory", args.memory),
            ("--memory-advisor", args.memory_advisor),
            ("--accumulation-source", args.accumulation_source),
        )
        if value is not None
    ]
    if not scenario.turns:
        if given:
            raise ValueError(
                f"{' and '.join(given)} apply to conversation scenarios (several user turns, e.g. "
                f"support-conversation or spring-7034); {scenario.name!r} is one user request"
            )
        return {"memory": None, "memory_advisor": None, "accumulation_source": None}
    placement: MemoryPlacement = args.memory_advisor or "none"
    source: AccumulationSource = args.accumulation_source or ("history" if args.memory_advisor else "session")
    ((memory, placement, source),) = chat_settings([args.memory or "full"], [source], [placement])
    return {"memory": memory, "memory_advisor": placement, "accumulation_source": source}


def turn_header(trace: RunTrace, number: int) -> list[str]:
    """A turn's user message, what chat memory did during it, the tools its first request exposed, and
    the found tools it carried or lost."""
    record = trace.turns[number - 1]
    lines = ["", f"Turn {number}  {plain(record.user_message, 100)}"]
    memory = record.memory
    if memory is not None:
        gone = memory.dropped or memory.summarised
        verb = "dropped" if memory.dropped else "summarised"
        text = f"  memory {memory.memory}: given {memory.given} messages, kept {memory.kept}"
        if gone:
            text += f"; {verb} {len(gone)}: " + "; ".join(plain(g, 60) for g in gone[:4])
            text += f" +{len(gone) - 4} more" if len(gone) > 4 else ""
        lines.append(text)
    lines.append(f"  first request exposes {short_names(record.first_request_tools, 6)}")
    why = why_lost(trace.config)
    if number > 1:
        lines.append(f"  found in earlier turns, carried: {short_names(record.carried, 6)}")
    if record.lost:
        lines.append(f"  LOST by a request of this turn: {short_names(record.lost, 6)} ({why})")
    return lines


def short_names(names: list[str], limit: int = 4) -> str:
    """At most ``limit`` names, then how many more."""
    if not names:
        return "-"
    shown = ", ".join(names[:limit])
    return shown + (f" +{len(names) - limit}" if len(names) > limit else "")


def plain(text: str, limit: int) -> str:
    """Untrusted text for the terminal: non-printable characters escaped, cut to ``limit``."""
    safe = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"


def turn_footer(bill: dict | None) -> str:
    if bill is None:
        return ""
    return (
        f"  turn {bill['turn']}: {bill['requests']} requests, {bill['prompt_tokens']:,} prompt tokens "
        f"({bill['cached_tokens']:,} cached), billed ${bill['cost_usd']:.4f}; "
        f"steps {bill['steps_succeeded']}/{bill['steps']}"
    )
