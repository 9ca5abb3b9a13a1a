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
from toolsearch_lab.catalog.errors import CatalogError, CatalogReport
from toolsearch_lab.catalog.formats import read_tools
from toolsearch_lab.catalog.mcp_config import McpConfig, connect_servers, load_mcp_config
from toolsearch_lab.catalog.merge import Namespace, merge_catalogs

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
    connection: McpConnection, *, strict: bool = True, category: str | None = None
) -> ToolCatalog:
    """The tools of a live ``McpConnection`` as a catalog whose ``Tool.function`` calls the server; the
    caller keeps the connection and closes it. A tool with no description (optional in MCP) gets ``""``
    and a note in ``catalog.report``."""
    records, undescribed = connection.tool_records()
    source = f"mcp:{connection.label}"
    tools, report = read_tools(records, format="mcp", strict=strict, source=source)
    for name in undescribed:
        report.add_note(repr(name), 'the server gives no description; using ""')
    live = [
        dataclasses.replace(t, category=category, function=connection.tool_function(t.name)) for t in tools
    ]
    return ToolCatalog(live, source=source, report=report)


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
        catalog = catalog_from_connection(connection, strict=strict, category=category)
    except BaseException:
        connection.close()
        raise
    return McpServers(catalog, {name or connection.label: connection})


def connect_mcp_config(
    config: str | os.PathLike | Mapping[str, Any] | McpConfig,
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
    A server that fails to start is named in ``failures`` (and in the catalog's report) with its error, and
    the others still load; ``strict=True`` refuses instead, as does a config none of whose servers start.
    ``with connect_mcp_config(path) as servers:`` stops the servers."""
    loaded = config if isinstance(config, McpConfig) else load_mcp_config(config)
    loaded = loaded.select(list(servers) if servers else None)
    if not loaded.servers:
        raise CatalogError(f"{loaded.source}: the config names no enabled server")
    connections, failures = connect_servers(
        loaded, timeout=timeout, startup_timeout=startup_timeout, pass_env=pass_env
    )
    try:
        if failures and (strict or not connections):
            listed = "; ".join(f"{name}: {why}" for name, why in failures.items())
            raise CatalogError(
                f"{loaded.source}: {len(failures)} of {len(loaded.servers)} server(s) "
                f"failed to start: {listed}"
            )
        parts = [(name, catalog_from_connection(c, strict=strict)) for name, c in connections.items()]
        merged = merge_catalogs(parts, namespace=namespace, source=f"mcp-config:{loaded.source}")
    except BaseException:
        for c in connections.values():
            c.close()
        raise
    report = CatalogReport(list(merged.report.problems), list(merged.report.notes), dict(failures))
    for name, why in failures.items():
        report.add_problem(f"server {name!r}", f"failed to start: {why}")
    catalog = ToolCatalog(merged, source=merged.source, report=report, origins=merged.origins)
    return McpServers(catalog, connections)
