"""Live MCP servers, one way for every command that takes a catalog: the options that name them
(:func:`add_live_options`), the catalog of files and servers together (:func:`open_catalog`), and what is
said on stderr about a server that failed or a tool left out."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import sys
import warnings
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from toolsearch_lab.catalog.container import CatalogError, CatalogReport, ToolCatalog, load_catalog
from toolsearch_lab.catalog.errors import NoteKind, ServerFailure
from toolsearch_lab.catalog.merge import NameCollisionError
from toolsearch_lab.cli.options import positive_float
from toolsearch_lab.model import Tool

if TYPE_CHECKING:
    from toolsearch_lab.catalog.live import McpServers
    from toolsearch_lab.catalog.mcp_config import McpConfig

LIVE_OPTIONS_HELP = """live MCP servers:
  --mcp-config reads a Claude Desktop (mcpServers), VS Code (servers) or Cursor config file; --mcp starts
  one stdio server from a command line. Servers start concurrently and are stopped when the command ends.
  A tool name that two servers share is qualified as <server>__<tool> (--namespace). A server that cannot
  start is named on stderr and the others load; if none starts (or with --strict) the command exits 2."""


def add_live_options(parser: argparse.ArgumentParser, *, takes_file: bool = True) -> None:
    """``--mcp-config``, ``--mcp``, ``--server``, ``--namespace``, ``--env``, ``--strict`` and
    ``--startup-timeout``; :func:`open_catalog` applies them. ``takes_file``: the command also reads a
    catalog file, which the live servers join."""
    from toolsearch_lab.catalog.merge import NAMESPACES

    joined = " (merged with any catalog given)" if takes_file else ""
    group = parser.add_argument_group("live MCP servers", LIVE_OPTIONS_HELP.split("\n", 1)[1])
    group.add_argument(
        "--mcp-config",
        metavar="FILE",
        default=None,
        help=f"the servers of an MCP config file{joined} (default: none)",
    )
    group.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="COMMAND",
        help="also start a stdio MCP server from a command line, e.g. --mcp 'python server.py'; it is "
        "named after its script or program (repeatable; default: none)",
    )
    group.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="NAME",
        help="only this server of --mcp-config (repeatable; default: every enabled server)",
    )
    group.add_argument(
        "--namespace",
        choices=NAMESPACES,
        default="auto",
        help="qualify tool names as <server>__<tool>: auto only where names collide, always, or never "
        "(a collision is then an error)",
    )
    group.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="hand a variable to the stdio servers on top of the config's env: NAME passes this shell's "
        "value, NAME=VALUE sets one (repeatable; default: only the config's env and the SDK's few defaults)",
    )
    group.add_argument(
        "--strict",
        action="store_true",
        help="refuse (exit 2) when any server fails to start, or any of its tools is invalid",
    )
    group.add_argument(
        "--startup-timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="how long each server may take to start and list its tools, every page (default: 30)",
    )


def live_config(args: argparse.Namespace) -> McpConfig | None:
    """The servers ``--mcp-config``/``--server``/``--mcp``/``--env`` name, or None when there are none."""
    from toolsearch_lab.catalog.mcp_config import McpConfig, McpServerConfig, load_mcp_config

    if args.server and not args.mcp_config:
        raise ValueError("--server picks servers of --mcp-config FILE; give --mcp-config too")
    servers: list[McpServerConfig] = []
    source: list[str] = []
    config = McpConfig((), "")
    if args.mcp_config:  # only the entries --server names are read: the others are never resolved
        config = load_mcp_config(args.mcp_config, servers=args.server)
        servers.extend(config.servers)
        source.append(config.source)
    taken = {s.name for s in servers}
    for command in args.mcp:
        words = shlex.split(command)
        if not words:
            raise ValueError("--mcp needs a command, e.g. --mcp 'python server.py'")
        name = _unique(command_server_name(words), taken)
        taken.add(name)
        servers.append(McpServerConfig(name, "stdio", words[0], tuple(words[1:])))
        source.append(name)
    if not servers and not config.invalid:
        if args.mcp_config:
            raise CatalogError(f"{args.mcp_config}: the config names no enabled server")
        if args.env:
            raise ValueError("--env applies to live servers; give --mcp-config FILE or --mcp COMMAND")
        return None
    values = _env_values(args.env)
    if values:
        servers = [
            dataclasses.replace(s, env={**s.env, **values}) if s.transport == "stdio" else s for s in servers
        ]
    # A one-server config keeps its file as the source; otherwise the files and commands, joined.
    joined = " + ".join(source) if len(source) > 1 else source[0]
    return McpConfig(tuple(servers), joined, config.skipped, config.ignored, config.invalid)


def pass_env(args: argparse.Namespace) -> list[str]:
    """The ``--env NAME`` variables (without a value): taken from this environment, which must have them."""
    names = [entry for entry in args.env if "=" not in entry]
    missing = [n for n in names if n not in os.environ]
    if missing:
        raise ValueError(
            f"--env {missing[0]}: no such variable in this environment; export it or write --env "
            f"{missing[0]}=VALUE"
        )
    return names


def _env_values(entries: Sequence[str]) -> dict:
    from toolsearch_lab.secrets import setting_secret

    values = {}
    for entry in entries:
        if "=" not in entry:
            continue
        name, value = entry.split("=", 1)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"--env {name}=...: {name!r} is not a variable name (letters, digits, _)")
        values[name] = setting_secret(name, value)  # registered when its name or shape says it is one
    return values


_SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts")


def command_server_name(words: Sequence[str]) -> str:
    """What ``--mcp COMMAND`` calls its server: the stem of the first script in it (``python
    tools/server.py`` is ``server``), else the program's (``mcp-server-git --repository x`` is
    ``mcp-server-git``)."""
    script = next((w for w in words if w.endswith(_SCRIPT_SUFFIXES)), None)
    chosen = Path(script or words[0])
    return (chosen.stem if script else chosen.name) or "server"


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    return f"{name}-{n}"


def open_catalog(
    args: argparse.Namespace,
    stack: ExitStack,
    files: Sequence[str] = (),
    *,
    command: str = "",
    strict_files: bool = True,
) -> ToolCatalog:
    """One catalog of the ``files`` (shipped names or JSON files) and the live servers of
    :func:`add_live_options`, the servers stopped when ``stack`` is closed. Several sources are merged with
    :func:`~toolsearch_lab.catalog.merge.merge_catalogs`: names qualified by server where they collide, each
    tool's server in ``catalog.origins``. A failed server is named on stderr (the others load); when none
    starts, or with ``--strict``, a :class:`CatalogError` naming each server and its error.
    ``strict_files=False`` keeps a file's valid tools and lists the rest in ``catalog.report`` (the
    doctor reports them)."""
    from toolsearch_lab.catalog.merge import merge_catalogs

    config = live_config(args)
    if config is None and not files:
        raise ValueError("give a catalog (shipped name or JSON file), --mcp-config FILE or --mcp COMMAND")
    parts = [(str(f), load_catalog(f, strict=strict_files or args.strict)) for f in files]
    if config is None and len(parts) == 1:
        return parts[0][1]
    live = open_servers(config, args, stack, command=command) if config is not None else None
    if live is not None and not parts:
        return live.catalog
    try:
        merged = merge_catalogs(
            [*parts, *(per_server(live.catalog) if live is not None else [])],
            namespace=args.namespace,
            source=" + ".join([*files, live.catalog.source or ""]) if live is not None else None,
        )
    except NameCollisionError as exc:
        raise CatalogError(cli_words(exc)) from None
    if live is None:
        return merged
    # The servers that did not start stay on record (the doctor names them); the merge of files and
    # per-server parts starts a report of its own.
    report = CatalogReport(merged.report.problems, merged.report.notes, dict(live.failures))
    return ToolCatalog(merged, source=merged.source, report=report, origins=merged.origins)


def live_catalog(
    args: argparse.Namespace, stack: ExitStack, *, command: str = "", once: bool = False
) -> ToolCatalog | None:
    """The live servers' catalog (:func:`open_catalog` without files), or None when no server is named,
    with ``--destructive`` applied (:func:`guard_destructive`). ``once=True`` (``compare``, which runs a
    scenario once per row) runs each distinct call of a live tool once and hands later identical calls the
    first one's result (:func:`once_per_call`), so rows never multiply a tool's side effects."""
    if not (args.mcp_config or args.mcp):
        live_config(args)  # refuses --server or --env without servers
        return None
    from toolsearch_lab.cli.live_tools import guard_destructive, once_per_call

    catalog = open_catalog(args, stack, command=command)
    catalog = guard_destructive(catalog, getattr(args, "destructive", None), command)
    return once_per_call(catalog, command) if once else catalog


def open_servers(
    config: McpConfig, args: argparse.Namespace, stack: ExitStack, *, command: str = ""
) -> McpServers:
    """Start the servers of ``config`` with the options of :func:`add_live_options`, stopped when ``stack``
    is closed; each server that failed to start is named on stderr."""
    from toolsearch_lab.catalog.live import DestructiveToolsWarning, connect_mcp_config
    from toolsearch_lab.catalog.mcp import McpToolError

    try:
        with warnings.catch_warnings():  # the commands name these tools their own way (--destructive)
            warnings.simplefilter("ignore", DestructiveToolsWarning)
            live = connect_mcp_config(
                config,
                namespace=args.namespace,
                strict=args.strict,
                startup_timeout=args.startup_timeout,
                pass_env=pass_env(args),
            )
    except (CatalogError, McpToolError) as exc:  # McpToolError: a server started, then its tools/list failed
        raise CatalogError(one_line(cli_words(exc))) from None
    stack.enter_context(live)
    started = len(live.connections)
    kinds = {p.tool: p.failure for p in live.catalog.report.problems if p.failure is not None}
    for server, why in live.failures.items():
        unusable = kinds.get(f"server {server!r}") == ServerFailure.CONFIG  # its config entry
        what = "not started" if unusable else "failed to start"
        print(
            f"toolsearch-lab {command}: server {server!r} {what}: {one_line(why)}\n"
            f"  (continuing with the {started} server{'s' if started != 1 else ''} that started; "
            "--strict refuses instead)",
            file=sys.stderr,
        )
    report_dropped(live.catalog.report, command)
    return live


def cli_words(exc: Exception) -> str:
    """An error's message with the settings it names spelled as the CLI's options."""
    if isinstance(exc, NameCollisionError):
        return exc.said_with("--namespace never", "--namespace auto")
    return str(exc)


_NOTES_SHOWN = 10
# The notes named on stderr one by one: what changed a name a model sees, and what a server itself did.
_NOTES_NAMED = frozenset({NoteKind.RENAMED, NoteKind.QUALIFIED, NoteKind.SERVER})


def report_dropped(report: CatalogReport, command: str) -> None:
    """On stderr: every tool left out (each with why) and the notes on what was renamed or tolerated, so
    no tool a server listed disappears without a line."""
    problems = [p for p in report.problems if p.failure is None]  # failed servers are named on their own
    if problems:
        print(
            f"toolsearch-lab {command}: {len(problems)} problem(s); the tools named are left out "
            "(--strict refuses instead):",
            file=sys.stderr,
        )
        for problem in problems:
            print(f"  {one_line(str(problem))}", file=sys.stderr)
    shared = [n for n in report.notes if n.kind is NoteKind.SHARED]
    if shared:  # the ordinary case of several servers: one line, the doctor lists each
        print(
            f"toolsearch-lab {command}: {len(shared)} tool name(s) several servers share are qualified as "
            "<server>__<tool> (--namespace)",
            file=sys.stderr,
        )
    notes = [n for n in report.notes if n.kind in _NOTES_NAMED]
    for note in notes[:_NOTES_SHOWN]:
        print(f"toolsearch-lab {command}: {one_line(str(note))}", file=sys.stderr)
    if len(notes) > _NOTES_SHOWN:
        print(
            f"toolsearch-lab {command}: ... and {len(notes) - _NOTES_SHOWN} more note(s) "
            "(toolsearch-lab doctor lists them all)",
            file=sys.stderr,
        )


_STDERR_TAIL = re.compile(r"\nserver stderr \(last lines\):\n((?:  .*(?:\n|$))+)")


def one_line(message: str) -> str:
    """A server's error on one line: the tail of its stderr (often a Python traceback of its own) is cut
    to its last line, the error itself."""

    def last(match: re.Match) -> str:
        lines = [line.strip() for line in match.group(1).splitlines() if line.strip()]
        return f" (the server's stderr ends: {lines[-1]})" if lines else ""

    return _STDERR_TAIL.sub(last, message).replace("\n", " ")


def per_server(catalog: ToolCatalog) -> list[tuple[str, ToolCatalog]]:
    """A merged catalog split back into ``(server, its tools under their own names)``, in catalog order."""
    groups: dict[str, list[Tool]] = {}
    for t in catalog:
        server, original = catalog.origins.get(t.name, (catalog.source or "catalog", t.name))
        groups.setdefault(server, []).append(
            t if original == t.name else dataclasses.replace(t, name=original)
        )
    return [(server, ToolCatalog(tools, source=server)) for server, tools in groups.items()]
