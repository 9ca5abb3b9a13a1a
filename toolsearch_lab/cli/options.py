"""What every ``toolsearch-lab`` command shares: exit codes, the help formatter and common option types
(the live MCP servers' options are :mod:`.live_servers`)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from typing import Any

from toolsearch_lab.catalog.container import ToolCatalog, load_catalog
from toolsearch_lab.catalog.examples import load_example_requests, shipped_example_sets, with_examples
from toolsearch_lab.model import Tool

EXIT_OK = 0
EXIT_RUN_FAILED = 1  # the command ran, but what it ran did not finish (e.g. a demo run stopped with an error)
EXIT_USAGE = 2  # bad input or configuration: nothing was run (argparse uses 2 for its own errors too)

EXIT_CODES_HELP = """exit codes:
  0  success
  1  the run did not finish (demo: it stopped without an answer)
  2  bad input or configuration: nothing was run"""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows every option's default (or that it is required), and keeps descriptions' line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is argparse.SUPPRESS or "(default" in text or "(required" in text:
            return text
        if action.required:
            return f"{text} (required)"
        if not action.option_strings:  # a sub-command's entry in the parent's list: nothing to default
            return text
        if isinstance(action.default, bool):
            return f"{text} (default: {'on' if action.default else 'off'})"
        return f"{text} (default: %(default)s)"


def add_command(
    subparsers: argparse._SubParsersAction, name: str, summary: str, description: str = ""
) -> argparse.ArgumentParser:
    """A sub-command parser with the shared formatter and the exit codes in its epilog."""
    return subparsers.add_parser(
        name,
        help=summary,
        description=description or summary,
        formatter_class=HelpFormatter,
        epilog=EXIT_CODES_HELP,
    )


def add_json_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of a table")


def add_examples_option(parser: argparse.ArgumentParser) -> None:
    """``--examples SOURCE``; :func:`catalog_tools` applies it."""
    sets = shipped_example_sets()
    parser.add_argument(
        "--examples",
        metavar="SOURCE",
        default=None,
        help="write example requests into the tools' descriptions first (the 'better descriptions' fix for "
        f"users' wording; they cost prompt tokens): a shipped set ({', '.join(sets)}) or a JSON file "
        "{tool name: [requests]} (default: none)",
    )


def catalog_tools(catalog: str | ToolCatalog, examples: str | None) -> list[Tool]:
    """The tools of ``catalog`` (a loaded catalog, a shipped name or a file), with the example requests of
    ``--examples`` written into their descriptions when it is given."""
    tools = list(catalog.tools if isinstance(catalog, ToolCatalog) else load_catalog(catalog).tools)
    if examples is None:
        return tools
    return with_examples(tools, load_example_requests(examples), where=f"--examples {examples}")


# ---------------------------------------------------------------------------------------------------------
# Saying "no tool matches": the options of the indexes that can

ABSTAINING = ("hybrid", "learned")  # the kinds that can return no tools because none fits


def add_abstention_options(parser: argparse.ArgumentParser) -> None:
    """``--min-confidence``, ``--no-near-miss``, ``--no-abstain``; :func:`abstention_options` reads them."""
    group = parser.add_argument_group(
        "saying 'no tool matches' (hybrid and learned)",
        "These indexes return no tools when none fits the request: when their calibrated confidence that\n"
        "some tool fits is below a threshold, or when the request is a near-miss (it asks for an operation\n"
        "no tool of its object offers). Spring's indexes do not judge this: their score thresholds only cut\n"
        "weak matches.",
    )
    group.add_argument(
        "--min-confidence",
        type=probability,
        default=None,
        metavar="P",
        help="return no tools below this confidence; 0 turns no request away on its confidence (near-misses "
        "still are) (default: the shipped calibrated threshold)",
    )
    group.add_argument("--no-near-miss", action="store_true", help="return the ranking for a near-miss too")
    group.add_argument(
        "--no-abstain",
        action="store_true",
        help="never judge that no tool fits: no confidence and no near-miss check",
    )


def abstention_options(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    """The index constructor options that :func:`add_abstention_options`' flags ask for ``kind``."""
    given = [
        flag
        for flag, on in (
            ("--min-confidence", args.min_confidence is not None),
            ("--no-near-miss", args.no_near_miss),
            ("--no-abstain", args.no_abstain),
        )
        if on
    ]
    if not given:
        return {}
    if kind not in ABSTAINING:
        raise ValueError(
            f"{given[0]} applies to an index that judges whether any tool fits ({' or '.join(ABSTAINING)}), "
            f"not to the {kind} index"
        )
    if args.no_abstain:
        if len(given) > 1:
            raise ValueError(f"--no-abstain turns abstention off; {given[0]} would change nothing")
        return {"abstain": False}
    options: dict[str, Any] = {}
    if args.min_confidence is not None:
        options["min_confidence"] = args.min_confidence
    if args.no_near_miss:
        options["near_miss"] = False
    return options


def names_help(what: str, names: Iterable[str], path_kind: str) -> str:
    """``"shipped catalog: a, b, c; or a path to a JSON file"``, from the names the package really ships."""
    return f"{what}: {', '.join(names)}; or a path to {path_kind}"


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def probability(text: str) -> float:
    value = finite_float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability from 0 to 1, got {text!r}")
    return value


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value
