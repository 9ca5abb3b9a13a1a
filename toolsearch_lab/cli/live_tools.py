"""Live tools that change things: the ``--destructive`` policy of the commands that call live MCP tools
(``demo``, ``compare``), and ``compare``'s rule that a tool call runs once however many rows replay it."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.model import Tool

__all__ = ["DESTRUCTIVE_HELP", "add_destructive_option", "guard_destructive", "once_per_call"]


DESTRUCTIVE_HELP = (
    "tools whose MCP annotations declare them destructive (destructiveHint, not read-only): include runs "
    "them when the model calls them, exclude holds them back (the model never sees them), ask asks you on "
    "the terminal before each call (without a terminal: not run); a line names them before anything runs"
)


def add_destructive_option(parser: argparse.ArgumentParser) -> None:
    """``--destructive include|exclude|ask`` for a command that calls live tools; :func:`live_catalog`
    applies it."""
    from toolsearch_lab.loop.policy import DESTRUCTIVE_POLICIES

    parser.add_argument(
        "--destructive",
        choices=DESTRUCTIVE_POLICIES,
        default=None,
        help=DESTRUCTIVE_HELP + " (default: ask/exclude)",
    )


def guard_destructive(catalog: ToolCatalog, policy: str | None, command: str) -> ToolCatalog:
    """``catalog`` under the ``--destructive`` policy (see :data:`DESTRUCTIVE_HELP`), after a line on stderr
    naming the destructive tools and what will happen to them."""
    destructive = [t.name for t in catalog if t.destructive]
    if not destructive:
        return catalog
    chosen = policy or ("ask" if sys.stdin.isatty() else "exclude")
    names = ", ".join(destructive[:8]) + (f" and {len(destructive) - 8} more" if len(destructive) > 8 else "")
    said = {
        "include": "will run for real when the model calls them",
        "exclude": "are held back: the model cannot find or call them (--destructive include runs them)",
        "ask": "run only after you say yes on the terminal (--destructive exclude holds them back)",
    }[chosen]
    print(
        f"toolsearch-lab {command}: {len(destructive)} tool(s) declared destructive {said}: {names}",
        file=sys.stderr,
    )
    if chosen == "include":
        return catalog
    if chosen == "exclude":
        kept = [t for t in catalog if not t.destructive]
        origins = {n: o for n, o in catalog.origins.items() if n not in set(destructive)}
        return ToolCatalog(kept, source=catalog.source, report=catalog.report, origins=origins)
    asked = [dataclasses.replace(t, function=_asking(t, command)) if t.destructive else t for t in catalog]
    return ToolCatalog(asked, source=catalog.source, report=catalog.report, origins=catalog.origins)


def _asking(tool: Tool, command: str):
    function = tool.function

    def ask(**arguments):
        if not sys.stdin.isatty():
            raise PermissionError(f"{tool.name} is destructive and there is no terminal to ask; not run")
        shown = ", ".join(f"{k}={v!r:.60}" for k, v in arguments.items())
        print(
            f"toolsearch-lab {command}: the model calls {tool.name}({shown}), declared destructive.",
            file=sys.stderr,
        )
        if input("Run it? [y/N] ").strip().lower() not in ("y", "yes"):
            raise PermissionError(f"the user declined to run {tool.name}")
        return function(**arguments) if function is not None else None

    return ask


def once_per_call(catalog: ToolCatalog, command: str) -> ToolCatalog:
    """Each live tool runs once per distinct (tool, arguments): a repeat gets the first call's result (or
    error) again, so a command that replays one scenario many times makes each side effect once."""

    def remembered(tool: Tool):
        seen: dict[str, tuple[bool, object]] = {}
        function = tool.function

        def call(**arguments):
            key = json.dumps(arguments, sort_keys=True, default=str)
            if key not in seen:
                try:
                    seen[key] = (True, function(**arguments) if function is not None else None)
                except Exception as exc:  # noqa: BLE001  (replayed to later rows as the same failure)
                    seen[key] = (False, exc)
            ok, value = seen[key]
            if not ok:
                raise value  # type: ignore[misc]
            return value

        return call

    print(
        f"toolsearch-lab {command}: each live tool call runs once; a later row making the same call gets "
        "the first call's result",
        file=sys.stderr,
    )
    tools = [dataclasses.replace(t, function=remembered(t)) if t.function is not None else t for t in catalog]
    return ToolCatalog(tools, source=catalog.source, report=catalog.report, origins=catalog.origins)
