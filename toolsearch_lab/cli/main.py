"""``toolsearch-lab`` command line: builds the parser from the command registry and runs one command.

Each command is a module of this package with ``NAME``, ``SUMMARY``, ``add_parser(subparsers) ->
ArgumentParser`` (its sub-parser, made with ``options.add_command``) and ``run(args) -> int`` (the exit code).
Adding a command means importing its module and listing it in ``COMMANDS``.

Start-up stays short (``benchmarks/cli_startup.py``): the command modules import only light modules at the
top, and only the command being run gets its full sub-parser, since some option lists (scenarios, features,
price tables) load heavier parts of the package. The others are listed with their summaries.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType

from toolsearch_lab.cli import (
    compare,
    demo,
    doctor,
    eval as eval_command,
    models,
    preflight,
    replay,
    search,
    snapshot,
    tokens,
    train_ranker,
)
from toolsearch_lab.cli.options import EXIT_CODES_HELP, EXIT_USAGE, HelpFormatter, add_command
from toolsearch_lab.cli.terminal import guarded_output
from toolsearch_lab.version import __version__

COMMANDS: tuple[ModuleType, ...] = (
    demo,
    search,
    eval_command,
    tokens,
    doctor,
    compare,
    replay,
    models,
    snapshot,
    train_ranker,
    preflight,
)


def build_parser(full: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``full``: the commands that get their options (default: every command), the
    others are only listed."""
    wanted = None if full is None else set(full)
    parser = argparse.ArgumentParser(
        prog="toolsearch-lab",
        description="Explore the tool search tool pattern (RAG over tools).",
        formatter_class=HelpFormatter,
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        if wanted is None or command.NAME in wanted:
            command.add_parser(subparsers).set_defaults(run=command.run)
        else:
            add_command(subparsers, command.NAME, command.SUMMARY)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option (the top-level options take no
    value), or None (``--version``, ``--help``, nothing)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    command = command_named(words)
    args = build_parser(() if command is None else (command,)).parse_args(words)
    # Everything printed while the command runs is shown, never obeyed, and holds no secret (cli.terminal).
    with guarded_output():
        try:
            return int(args.run(args))
        except (ValueError, OSError, KeyError) as exc:
            # Bad input (unknown name, malformed file, missing file): say what and exit 2, no traceback.
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            print(f"toolsearch-lab {args.command}: error: {message}", file=sys.stderr)
            return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
