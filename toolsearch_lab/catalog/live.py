"""Live MCP servers and the catalog of their tools, kept apart.

A :class:`~toolsearch_lab.catalog.container.ToolCatalog` is a value: tools and what describes them, which
can be copied, compared and exported with no process behind it. The server processes (or HTTP sessions)
are owned by :class:`McpServers`, which :func:`connect_mcp_stdio` and :func:`connect_mcp_config` return
with the catalog beside them; leaving its ``with`` block (or :meth:`McpServers.close`) stops them::

    with connect_mcp_config("claude_desktop_config.json") as servers:
        catalog = servers.catalog  # the tools, named by server where two servers share a name
        servers.failures  # {server: why it did not start}

Each ``Tool.function`` of such a catalog calls its server for as long as the servers run. It is a plain
function, which ``copy.copy`` and ``copy.deepcopy`` hand back unchanged, so a copy of the catalog calls the
same live server and copying never touches a process.
"""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.catalog.errors import CatalogError, CatalogReport, NoteKind, ServerFailure
from toolsearch_lab.catalog.formats import read_tools
from toolsearch_lab.catalog.mcp_config import McpConfig, McpServerConfig, ignored_key_note, load_mcp_config
from toolsearch_lab.catalog.merge import Namespace, merge_catalogs
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool, provider_name_problem

if TYPE_CHECKING:
    from toolsearch_lab.catalog.mcp import McpConnection
    from toolsearch_lab.catalog.mcp_wire import ToolListing

__all__ = [
    "DestructiveToolsWarning",
    "McpServers",
    "catalog_from_connection",
    "connect_mcp_config",
    "connect_mcp_stdio",
    "destructive_text",
    "listed",
    "say_destructive",
]


class McpServers:
    """Running MCP servers and the :class:`ToolCatalog` of their tools (see the module docstring).

    ``catalog``: the tools, a value; ``connections``: ``{server: McpConnection}``, in config order;
    ``failures``: ``{server: why it did not start}`` (the catalog's ``report.failed_servers``, each also a
    problem line of the report). Close it, or use it as a context manager; closing twice is fine."""

    def __init__(self, catalog: ToolCatalog, connections: Mapping[str, McpConnection]) -> None:
        self.catalog = catalog
        self.connections: Mapping[str, McpConnection] = MappingProxyType(dict(connections))

    @property
    def failures(self) -> Mapping[str, str]:
        return MappingProxyType(self.catalog.report.failed_servers)

    def close(self) -> None:
        """Stop every server (the catalog's tools can no longer be called; the catalog itself stays)."""
        for connection in self.connections.values():
            connection.close()

    def __enter__(self) -> McpServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        failed = f", {len(self.failures)} failed: {', '.join(self.failures)}" if self.failures else ""
        return (
            f"McpServers({len(self.connections)} connected: {', '.join(self.connections) or 'none'}{failed}; "
            f"{len(self.catalog)} tools)"
        )


def catalog_from_connection(
    connection: McpConnection,
    *,
    strict: bool = True,
    category: str | None = None,
    server: str | None = None,
    listing: ToolListing | None = None,
) -> ToolCatalog:
    """The tools of a live ``McpConnection`` as a catalog whose ``Tool.function`` calls the server; the
    caller keeps the connection and closes it. ``listing``: its ``tools/list`` taken already (default:
    listed now).

    Each record is checked on its own: a malformed one (or one naming a key twice) is left out with a
    problem line naming it, and the others load (``strict=True`` refuses the server instead). A name
    providers would refuse (``files.read``, over 64 characters, control characters) or the meta-tool's
    own ``toolSearchTool`` is qualified by ``server`` (``<server>__<tool>``, see
    :func:`~toolsearch_lab.catalog.merge.qualified_name`) with a note, and ``catalog.origins`` keeps the
    name the server knows, which ``Tool.function`` calls. A tool with no description (optional in MCP) gets
    ``""`` and a note; so does a description holding control characters, which terminals would obey."""
    listing = connection.listing() if listing is None else listing
    source = f"mcp:{connection.label}"
    server = server or connection.name or "server"
    report = CatalogReport()
    records, origins = _renamed(listing.records, server, report)
    for index, key in sorted(listing.duplicates.items()):
        records[index] = None  # refused below, by name
        problem = (
            f"the server's record names {key!r} twice; JSON keeps only the last value silently, "
            "so the tool is left out"
        )
        label = _label(listing.records[index], index)
        if strict:
            raise CatalogError(f"{source}: tool {label}: {problem}", tool=label, problem=problem)
        report.add_problem(label, problem)
    kept = [(i, r) for i, r in enumerate(records) if r is not None]
    tools, found = read_tools([r for _, r in kept], format="mcp", strict=strict, source=source)
    for line in found.problems:  # the listing's own index, not the position among the records kept
        report.add_problem(_reindexed(line.tool, kept), line.message)
    report.notes.extend(found.notes)
    for why in listing.problems:
        if strict:
            raise CatalogError(f"{source}: {why}")
        report.add_problem("", why)
    for note in listing.notes:
        report.add_note("", note, NoteKind.SERVER)
    for name in listing.undescribed:
        report.add_note(repr(name), 'the server gives no description; using ""', NoteKind.NORMALISED)
    for t in tools:
        if any(_is_control(c) for c in t.description):
            why = "the description holds control characters (shown neutralised)"
            report.add_note(repr(t.name), why, NoteKind.NORMALISED)
    live = [
        dataclasses.replace(
            t, category=category, function=connection.tool_function(origins.get(t.name, t.name))
        )
        for t in tools
    ]
    names = {t.name for t in live}
    renamed = {name: (server, original) for name, original in origins.items() if name in names}
    return ToolCatalog(live, source=source, report=report, origins=renamed)


def _renamed(records: list[Any], server: str, report: CatalogReport) -> tuple[list[Any], dict[str, str]]:
    """The records with every name providers would refuse (or ``toolSearchTool``) qualified by server, and
    ``{new name: name on the server}``."""
    from toolsearch_lab.catalog.merge import qualified_name

    out: list[Any] = []
    origins: dict[str, str] = {}
    for record in records:
        name = record.get("name") if isinstance(record, dict) else None
        why = None
        if isinstance(name, str) and name and isinstance(record, dict):
            why = (
                f"{TOOL_SEARCH_TOOL_NAME!r} is the meta-tool's own name"
                if name == TOOL_SEARCH_TOOL_NAME
                else provider_name_problem(name)
            )
        if why is None or not isinstance(name, str) or not isinstance(record, dict):
            out.append(record)
            continue
        new = qualified_name(server, name)
        origins[new] = name
        report.add_note(repr(new), f"renamed from {name!r} (server {server!r}): {why}", NoteKind.RENAMED)
        out.append({**record, "name": new})
    return out, origins


def _label(record: Any, index: int) -> str:
    name = record.get("name") if isinstance(record, dict) else None
    return f"{name[:80]!r} (#{index})" if isinstance(name, str) and name else f"#{index}"


def _reindexed(label: str, kept: list[tuple[int, Any]]) -> str:
    """A problem label ``'x' (#3)`` / ``#3`` of the records passed on, with the listing's own index."""
    head, hash_, tail = label.rpartition("#")
    digits = tail.rstrip(")")
    if not hash_ or not digits.isdigit() or int(digits) >= len(kept):
        return label
    return f"{head}#{kept[int(digits)][0]}{tail[len(digits) :]}"


def _is_control(char: str) -> bool:
    return (ord(char) < 32 and char not in "\n\t") or 0x7F <= ord(char) <= 0x9F


def connect_mcp_stdio(
    command: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    name: str | None = None,
    cwd: str | None = None,
    timeout: float = 30.0,
    startup_timeout: float | None = None,
    strict: bool = True,
    category: str | None = None,
) -> McpServers:
    """Start ``command args`` as an MCP stdio server and list its tools: ``servers.catalog`` holds them,
    ``servers.connections`` the one connection, under ``name`` (default: the command line). ``timeout``
    bounds each request; ``startup_timeout`` (default ``DEFAULT_STARTUP_TIMEOUT_S``, 30 s) the spawn,
    handshake and listing. ``with connect_mcp_stdio(...) as servers:`` stops the server."""
    # Imported here: the MCP SDK (with pydantic and jsonschema) costs about a second to import, and
    # most catalogs are files.
    from toolsearch_lab.catalog import mcp

    startup = mcp.DEFAULT_STARTUP_TIMEOUT_S if startup_timeout is None else startup_timeout
    began = time.monotonic()
    connection = mcp.McpConnection(
        command, args, env, cwd=cwd, name=name, timeout=timeout, startup_timeout=startup
    )
    try:
        server = name or _command_name(command, args)
        listing = listed(connection, began, startup)
        catalog = catalog_from_connection(
            connection, strict=strict, category=category, server=server, listing=listing
        )
    except BaseException:
        connection.close()
        raise
    say_destructive(catalog)
    return McpServers(catalog, {name or connection.label: connection})


def _command_name(command: str, args: Sequence[str]) -> str:
    """A server's name from its command line: the first script's stem, else the program's name."""
    script = next((a for a in args if a.endswith((".py", ".js", ".mjs", ".ts"))), None)
    return os.path.splitext(os.path.basename(script or command))[0] or "server"


def connect_mcp_config(
    config: str | os.PathLike[str] | Mapping[str, Any] | McpConfig,
    *,
    servers: Sequence[str] | None = None,
    namespace: Namespace = "auto",
    strict: bool = False,
    timeout: float = 30.0,
    startup_timeout: float | None = None,
    pass_env: Sequence[str] = (),
) -> McpServers:
    """Start every server of an MCP config file (Claude Desktop, VS Code, Cursor; see
    :mod:`toolsearch_lab.catalog.mcp_config`), or only those named in ``servers`` (the others are never
    resolved), concurrently, and merge their tools with names qualified by server where they collide
    (:mod:`toolsearch_lab.catalog.merge`). An entry that cannot be used, a server that fails to start, or
    one whose tools cannot be listed within ``startup_timeout`` (start and listing together) is named in
    ``failures`` (and in the catalog's report, with how it failed) and the others still load; a malformed
    tool costs only itself (a problem line); names that still collide are qualified again, with a note;
    each key the config ignores is a note saying what the lab does instead. ``strict=True`` refuses
    instead, as does a config none of whose servers start.
    ``with connect_mcp_config(path) as servers:`` stops the servers."""
    if isinstance(config, McpConfig):
        loaded = config.select(servers)
    else:
        loaded = load_mcp_config(config, servers=servers)
    if not loaded.servers and not loaded.invalid:
        raise CatalogError(f"{loaded.source}: the config names no enabled server")
    failures = {name: (ServerFailure.CONFIG, why) for name, why in loaded.invalid.items()}
    started = _start_all(loaded, timeout, startup_timeout, pass_env)
    connections: dict[str, McpConnection] = {}
    try:
        parts = []
        for name, connection, listing, failed_how in started:
            if connection is None or listing is None:
                failures[name] = failed_how
                continue
            connections[name] = connection
            try:
                part = catalog_from_connection(connection, strict=strict, server=name, listing=listing)
            except CatalogError as exc:
                if strict:
                    raise
                connection.close()  # its tools cannot be listed: it costs only itself
                del connections[name]
                failures[name] = (ServerFailure.LISTING, f"started, but listing its tools failed: {exc}")
                continue
            parts.append((name, part))
        if failures and (strict or not connections):
            total = len(loaded.servers) + len(loaded.invalid)
            listed = "; ".join(f"{name!r}: {why}" for name, (_, why) in failures.items())
            raise CatalogError(
                f"{loaded.source}: {len(failures)} of {total} server(s) failed to start: {listed}"
            )
        merged = merge_catalogs(parts, namespace=namespace, source=f"mcp-config:{loaded.source}")
    except BaseException:
        for _, connection, _, _ in started:
            if connection is not None:
                connection.close()
        raise
    failed = {name: why for name, (_, why) in failures.items()}
    report = CatalogReport(list(merged.report.problems), list(merged.report.notes), failed)
    for item in loaded.ignored:
        server, _, key = item.partition(": ")
        report.add_note(f"server {server!r}", ignored_key_note(key), NoteKind.SERVER)
    for name, (failure, why) in failures.items():
        said = {ServerFailure.CONFIG: "not started: ", ServerFailure.START: "failed to start: "}
        report.add_problem(f"server {name!r}", said.get(failure, "") + why, failure)
    catalog = ToolCatalog(merged, source=merged.source, report=report, origins=merged.origins)
    say_destructive(catalog)
    return McpServers(catalog, connections)


# (name, the connection, its listing, or how it failed and why): one server of _start_all.
_Started = tuple[str, "McpConnection | None", "ToolListing | None", tuple[ServerFailure, str]]


def _start_all(
    config: McpConfig, timeout: float, startup_timeout: float | None, pass_env: Sequence[str]
) -> list[_Started]:
    """Start every server of ``config`` at once and list its tools, each server within its own start-up
    deadline (spawn, handshake and every page of ``tools/list``), in config order."""
    from concurrent.futures import ThreadPoolExecutor

    from toolsearch_lab.catalog import mcp

    startup = mcp.DEFAULT_STARTUP_TIMEOUT_S if startup_timeout is None else startup_timeout

    def start(server: McpServerConfig) -> _Started:
        began = time.monotonic()
        try:
            connection = server.connect(timeout=timeout, startup_timeout=startup, pass_env=pass_env)
        except (mcp.McpToolError, OSError, ValueError) as exc:
            return server.name, None, None, (ServerFailure.START, str(exc))
        try:
            return server.name, connection, listed(connection, began, startup), (ServerFailure.START, "")
        except mcp.McpToolError as exc:
            connection.close()
            return (
                server.name,
                None,
                None,
                (ServerFailure.LISTING, f"started, but listing its tools failed: {exc}"),
            )

    if not config.servers:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(config.servers))) as pool:
        return list(pool.map(start, config.servers))


def listed(connection: McpConnection, began: float, startup: float) -> ToolListing:
    """The connection's ``tools/list``, all pages, within what is left of its start-up deadline
    (``startup`` seconds from ``began``, a ``time.monotonic()``): a server that starts quickly but lists
    slowly is bounded by the same deadline as one that starts slowly."""
    from toolsearch_lab.catalog.mcp import McpToolError

    left = startup - (time.monotonic() - began)
    if left <= 0:
        raise McpToolError(
            f"MCP server {connection.label!r} used its {startup:g} s start-up timeout starting"
        )
    return connection.listing(left, f"start-up timeout ({startup:g} s to start and list its tools)")


class DestructiveToolsWarning(UserWarning):
    """Tools of live MCP servers may change things, and a :class:`ToolSearchAdvisor` with its default
    ``destructive="include"`` runs them when the model calls them (:func:`say_destructive`)."""


def say_destructive(catalog: ToolCatalog) -> None:
    """Say once, as a :class:`DestructiveToolsWarning`, which tools of live servers may change things
    (:func:`destructive_text`). The CLI says it its own way, with ``--destructive``."""
    possibly = [t for t in catalog if t.may_be_destructive]
    if possibly:
        warnings.warn(
            f"{len(possibly)} of {len(catalog)} live MCP tools may be destructive "
            f"({destructive_text(possibly)}). A ToolSearchAdvisor runs them when the model calls them "
            "(destructive='include', its default); destructive='exclude' holds them back, 'ask' unless "
            "the query asks for them",
            DestructiveToolsWarning,
            stacklevel=3,
        )


def destructive_text(tools: Iterable[Tool], shown: int = 8) -> str:
    """The tools that may be destructive (:attr:`~toolsearch_lab.model.Tool.may_be_destructive`), in two
    groups: those that declare it, and the unmarked ones, which MCP counts as possibly destructive (not
    read-only, no ``destructiveHint``); at most ``shown`` names each."""
    possibly = [t for t in tools if t.may_be_destructive]
    declared = [t.name for t in possibly if t.destructive]
    unmarked = [t.name for t in possibly if not t.destructive]
    groups = [
        (declared, "declared destructive"),
        (unmarked, "unmarked (not read-only, no destructiveHint: MCP's default is destructive)"),
    ]
    return "; ".join(f"{len(names)} {what}: {_names(names, shown)}" for names, what in groups if names)


def _names(names: Sequence[str], shown: int) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more
