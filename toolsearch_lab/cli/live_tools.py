"""Live tools that change things: the ``--destructive`` policy of the commands that call live MCP tools
(``demo``, ``compare``), and ``compare``'s rule that a tool call runs once however many rows replay it."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.loop.policy import ToolCallRefused
from toolsearch_lab.loop.settings import DEFAULT_TOOL_TIMEOUT_S
from toolsearch_lab.model import Tool

__all__ = ["DESTRUCTIVE_HELP", "add_destructive_option", "guard_destructive", "once_per_call"]


DESTRUCTIVE_HELP = (
    "tools that may be destructive, as MCP reads their annotations (destructiveHint, or not marked "
    "readOnlyHint: MCP's default for a tool that says nothing is destructive): include runs them when the "
    "model calls them, exclude holds them back (the model never sees them), ask asks you on the terminal "
    "before each call (without a terminal: not run, and the run stops); a line names them, declared and "
    "unmarked apart, before anything runs"
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
    naming the tools that may be destructive (those that declare it, and the unmarked ones apart) and
    what will happen to them."""
    from toolsearch_lab.catalog.live import destructive_text

    held = {t.name for t in catalog if t.may_be_destructive}
    if not held:
        return catalog
    chosen = policy or ("ask" if sys.stdin.isatty() else "exclude")
    said = {
        "include": "will run for real when the model calls them",
        "exclude": "are held back: the model cannot find or call them (--destructive include runs them)",
        "ask": "run only after you say yes on the terminal (--destructive exclude holds them back)",
    }[chosen]
    print(
        f"toolsearch-lab {command}: {len(held)} tool(s) that may be destructive {said}: "
        f"{destructive_text(catalog)}",
        file=sys.stderr,
    )
    if chosen == "include":
        return catalog
    if chosen == "exclude":
        kept = [t for t in catalog if t.name not in held]
        origins = {n: o for n, o in catalog.origins.items() if n not in held}
        return ToolCatalog(kept, source=catalog.source, report=catalog.report, origins=origins)
    asked = [dataclasses.replace(t, function=_asking(t, command)) if t.name in held else t for t in catalog]
    return ToolCatalog(asked, source=catalog.source, report=catalog.report, origins=catalog.origins)


def _asking(tool: Tool, command: str) -> Callable[..., Any]:
    function = tool.function

    def ask(**arguments: Any) -> Any:
        asked = time.monotonic()
        if not sys.stdin.isatty():
            raise ToolCallRefused(
                f"{tool.name} may be destructive and there is no terminal to ask", declined=False
            )
        shown = ", ".join(f"{k}={v!r:.60}" for k, v in arguments.items())
        print(
            f"toolsearch-lab {command}: the model calls {tool.name}({shown}), which may be destructive.",
            file=sys.stderr,
        )
        if input("Run it? [y/N] ").strip().lower() not in ("y", "yes"):
            raise ToolCallRefused(f"the user declined to run {tool.name}", declined=True)
        # The loop waits DEFAULT_TOOL_TIMEOUT_S for a call (the commands keep that default): a yes given
        # later would run the tool after the run went on without it.
        if time.monotonic() - asked > DEFAULT_TOOL_TIMEOUT_S:
            late = f"the yes came after the run stopped waiting ({DEFAULT_TOOL_TIMEOUT_S:g} s); not run"
            raise ToolCallRefused(late, declined=False)
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
