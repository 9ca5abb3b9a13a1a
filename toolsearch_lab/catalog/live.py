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
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.catalog.errors import CatalogError, CatalogReport, NoteKind, ServerFailure
from toolsearch_lab.catalog.formats import read_tools
from toolsearch_lab.catalog.mcp_config import McpConfig, connect_servers, load_mcp_config
from toolsearch_lab.catalog.merge import Namespace, merge_catalogs
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, provider_name_problem

if TYPE_CHECKING:
    from toolsearch_lab.catalog.mcp import McpConnection

__all__ = ["McpServers", "catalog_from_connection", "connect_mcp_config", "connect_mcp_stdio"]


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
) -> ToolCatalog:
    """The tools of a live ``McpConnection`` as a catalog whose ``Tool.function`` calls the server; the
    caller keeps the connection and closes it.

    Each record is checked on its own: a malformed one (or one naming a key twice) is left out with a
    problem line naming it, and the others load (``strict=True`` refuses the server instead). A name
    providers would refuse (``files.read``, over 64 characters, control characters) or the meta-tool's
    own ``toolSearchTool`` is qualified by ``server`` (``<server>__<tool>``, see
    :func:`~toolsearch_lab.catalog.merge.qualified_name`) with a note, and ``catalog.origins`` keeps the
    name the server knows, which ``Tool.function`` calls. A tool with no description (optional in MCP) gets
    ``""`` and a note; so does a description holding control characters, which terminals would obey."""
    listing = connection.listing()
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
    bounds each request; ``startup_timeout`` (default ``DEFAULT_STARTUP_TIMEOUT_S``, 30 s) the spawn and
    handshake. ``with connect_mcp_stdio(...) as servers:`` stops the server."""
    # Imported here: the MCP SDK (with pydantic and jsonschema) costs about a second to import, and
    # most catalogs are files.
    from toolsearch_lab.catalog import mcp

    startup = mcp.DEFAULT_STARTUP_TIMEOUT_S if startup_timeout is None else startup_timeout
    connection = mcp.McpConnection(
        command, args, env, cwd=cwd, name=name, timeout=timeout, startup_timeout=startup
    )
    try:
        catalog = catalog_from_connection(
            connection, strict=strict, category=category, server=name or _command_name(command, args)
        )
    except BaseException:
        connection.close()
        raise
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
    :mod:`toolsearch_lab.catalog.mcp_config`), or only those named in ``servers``, concurrently, and merge
    their tools with names qualified by server where they collide (:mod:`toolsearch_lab.catalog.merge`).
    A server that fails to start, or whose tools cannot be listed, is named in ``failures`` (and in the
    catalog's report) with its error, and the others still load; a malformed tool costs only itself (a
    problem line); names that still collide are qualified again, with a note. ``strict=True`` refuses
    instead, as does a config none of whose servers start.
    ``with connect_mcp_config(path) as servers:`` stops the servers."""
    loaded = config if isinstance(config, McpConfig) else load_mcp_config(config)
    loaded = loaded.select(list(servers) if servers else None)
    if not loaded.servers:
        raise CatalogError(f"{loaded.source}: the config names no enabled server")
    connections, failures = connect_servers(
        loaded, timeout=timeout, startup_timeout=startup_timeout, pass_env=pass_env
    )
    from toolsearch_lab.catalog.mcp import McpToolError

    unlisted: set[str] = set()  # servers that started but could not list their tools
    try:
        parts = []
        for name, connection in list(connections.items()):
            try:
                parts.append((name, catalog_from_connection(connection, strict=strict, server=name)))
            except (McpToolError, CatalogError) as exc:
                if strict:
                    raise
                connection.close()  # its tools cannot be listed: it costs only itself
                del connections[name]
                failures[name] = f"started, but listing its tools failed: {exc}"
                unlisted.add(name)
        if failures and (strict or not connections):
            listed = "; ".join(f"{name!r}: {why}" for name, why in failures.items())
            raise CatalogError(
                f"{loaded.source}: {len(failures)} of {len(loaded.servers)} server(s) "
                f"failed to start: {listed}"
            )
        merged = merge_catalogs(parts, namespace=namespace, source=f"mcp-config:{loaded.source}")
    except BaseException:
        for c in connections.values():
            c.close()
        raise
    report = CatalogReport(list(merged.report.problems), list(merged.report.notes), dict(failures))
    for item in loaded.ignored:
        server, _, key = item.partition(": ")
        why = f"config key {key!r} is not used by this loader (ignored)"
        report.add_note(f"server {server!r}", why, NoteKind.SERVER)
    for name, why in failures.items():
        if name in unlisted:
            report.add_problem(f"server {name!r}", why, ServerFailure.LISTING)
        else:
            report.add_problem(f"server {name!r}", f"failed to start: {why}", ServerFailure.START)
    catalog = ToolCatalog(merged, source=merged.source, report=report, origins=merged.origins)
    return McpServers(catalog, connections)
