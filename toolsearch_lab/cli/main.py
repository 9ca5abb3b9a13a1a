"""``toolsearch-lab`` command line: builds the parser from the command registry and runs one command.

Each command is a module of this package with ``add_parser(subparsers) -> ArgumentParser`` (its sub-parser,
made with ``options.add_command``) and ``run(args) -> int`` (the exit code). Adding a command means importing
its module and listing it in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from toolsearch_lab import __version__
from toolsearch_lab.cli import compare, demo, doctor, search, tokens, train_ranker
from toolsearch_lab.cli import eval as eval_command
from toolsearch_lab.cli.options import EXIT_CODES_HELP, EXIT_USAGE, HelpFormatter

COMMANDS: tuple[ModuleType, ...] = (demo, search, eval_command, tokens, doctor, compare, train_ranker)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolsearch-lab",
        description="Explore the tool search tool pattern (RAG over tools).",
        formatter_class=HelpFormatter,
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers).set_defaults(run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (ValueError, OSError, KeyError) as exc:
        # Bad input (unknown name, malformed file, missing file): say what and exit 2, no traceback.
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"toolsearch-lab {args.command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
