"""Turn whatever the user has into one list of tools for the doctor, keeping track of which server each
tool came from and turning load-time problems (and cross-server name collisions) into findings."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolsearch_lab.catalog.container import CatalogProblem, ToolCatalog, load_catalog, tools_from_json
from toolsearch_lab.catalog.errors import NoteKind, ServerFailure
from toolsearch_lab.catalog.live import DestructiveToolsWarning, McpServers, connect_mcp_config
from toolsearch_lab.catalog.mcp_config import McpConfig
from toolsearch_lab.catalog.merge import merge_catalogs
from toolsearch_lab.eval.doctor.report import Finding, plural
from toolsearch_lab.model import Tool

# ToolCatalog | McpServers | McpConfig | str | PathLike | Iterable[Tool | Callable] | Mapping[str, ...]
CatalogLike = Any

_QUOTED_NAME = re.compile(r"^'(?P<name>.*)'")
# Keys that make a mapping a tool JSON document rather than {server name: catalog}.
_JSON_KEYS = frozenset({"tools", "name", "function", "jsonrpc", "input_schema", "inputSchema"})


@dataclass
class Resolved:
    """The tools to diagnose (unique names, first definition wins), where each came from, and the
    findings the merge and the loaders produced."""

    tools: list[Tool]
    source: str
    servers: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # server -> why it did not start
    originals: dict[str, str] = field(default_factory=dict)  # tool -> its name on its server, when renamed


def resolve(catalog: CatalogLike) -> Resolved:
    """A shipped catalog name, a JSON file or directory, parsed tool JSON, a :class:`ToolCatalog` (from JSON,
    functions, live MCP servers or an MCP config), running :class:`~toolsearch_lab.catalog.live.McpServers`
    (their catalog), an :class:`~toolsearch_lab.catalog.mcp_config.McpConfig` (its servers started
    concurrently, and stopped once their tools are read), a list of ``Tool`` objects
    or Python functions, or a mapping ``{server name: any of those}`` to check several servers merged into
    one catalog as :func:`~toolsearch_lab.catalog.merge.merge_catalogs` merges them (a mapping with a
    "tools" or "name" key is read as tool JSON instead)."""
    if isinstance(catalog, Mapping) and not _JSON_KEYS.intersection(catalog):
        if not catalog:
            raise ValueError("diagnose: the mapping of servers is empty; expected {server name: catalog}")
        return _merged([(str(server), _as_catalog(part)) for server, part in catalog.items()])
    if isinstance(catalog, list) and catalog and all(isinstance(c, ToolCatalog) for c in catalog):
        return _merged([(c.source or f"catalog {i + 1}", c) for i, c in enumerate(catalog)])
    resolved = _single(_as_catalog(catalog))
    if not resolved.tools:
        left_out = [f.problem for f in resolved.findings if f.severity == "error"]
        raise ValueError(
            f"diagnose: {resolved.source}: no tools to diagnose"
            + (
                f"; the loader reported {plural(len(left_out), 'problem')}, the first: {left_out[0]}"
                if left_out
                else ""
            )
        )
    return resolved


def _merged(parts: list[tuple[str, ToolCatalog]]) -> Resolved:
    merged = merge_catalogs(parts, namespace="auto", source=" + ".join(server for server, _ in parts))
    if not len(merged):
        raise ValueError(f"diagnose: {merged.source}: no tools to diagnose (the catalog is empty)")
    return _single(merged)


def _as_catalog(catalog: CatalogLike) -> ToolCatalog:
    if isinstance(catalog, ToolCatalog):
        return catalog
    if isinstance(catalog, McpServers):
        return catalog.catalog
    if isinstance(catalog, McpConfig):
        with warnings.catch_warnings():  # the doctor reads the tools and stops the servers: nothing runs
            warnings.simplefilter("ignore", DestructiveToolsWarning)
            live = connect_mcp_config(catalog)
        with live:
            return live.catalog
    if isinstance(catalog, (str, os.PathLike)):
        return load_catalog(catalog, strict=False)
    if isinstance(catalog, Mapping) or (
        isinstance(catalog, list) and any(isinstance(c, dict) for c in catalog)
    ):
        # Parsed tool JSON (OpenAI, Anthropic, MCP or dataset records, or a document holding them).
        return tools_from_json(catalog, strict=False, source="json")
    if isinstance(catalog, Tool) or callable(catalog):
        catalog = [catalog]
    if isinstance(catalog, Iterable) and not isinstance(catalog, bytes):
        items = list(catalog)
        if not items:
            raise ValueError("diagnose: the catalog is empty; expected at least one tool")
        return ToolCatalog([_as_tool(item, i) for i, item in enumerate(items)], source="tools")
    raise TypeError(
        "diagnose: expected a ToolCatalog, a shipped catalog name or JSON path, a list of Tool objects or "
        f"functions, McpServers, an McpConfig, or a mapping {{server: catalog}}; got {type(catalog).__name__}"
    )


def _single(catalog: ToolCatalog) -> Resolved:
    # A catalog of live servers or merged catalogs knows each tool's server (catalog.origins).
    servers = {name: server for name, (server, _) in catalog.origins.items()}
    return Resolved(
        catalog.tools,
        catalog.source or "catalog",
        servers,
        _collision_findings(catalog) + _loader_findings(catalog),
        dict(catalog.report.failed_servers),
        {name: original for name, (_, original) in catalog.origins.items() if name != original},
    )


def _as_tool(item: Any, index: int) -> Tool:
    if isinstance(item, Tool):
        return item
    if callable(item):
        return ToolCatalog.from_functions(item).tools[0]
    raise TypeError(
        f"diagnose: catalog item #{index} is a {type(item).__name__}, expected a Tool or a function"
    )


def _collision_findings(catalog: ToolCatalog) -> list[Finding]:
    """One finding per name several servers define, from what the merge did (``catalog.origins``): the
    qualified names it gave them, and whether the definitions are the same tool twice."""
    by_original: dict[str, list[tuple[str, str]]] = {}
    for name, (server, original) in catalog.origins.items():
        if name != original:
            by_original.setdefault(original, []).append((server, name))
    out = []
    for original, where in by_original.items():
        if len(where) < 2:
            continue  # namespace="always" qualified a name no other server has
        servers = [server for server, _ in where]
        names = [name for _, name in where]
        bodies = [replace(catalog.get(name), name=original) for name in names]
        same = all(body == bodies[0] for body in bodies)
        out.append(
            Finding(
                "warning",
                "name-collision",
                names[0],
                f"the name {original!r} is defined by servers {', '.join(map(repr, servers))}"
                + (" (identical definitions)" if same else " with different definitions")
                + f"; merged, they are qualified as {', '.join(names)}. A client that does not qualify "
                "names hides all but one of them, and providers reject duplicate names",
                "keep the qualified names (merge_catalogs / --namespace auto does this), or rename the tool "
                "on one server so each name says which server it works on",
                0.6,
                names,
                {"name": original, "servers": servers, "names": names, "identical": same},
            )
        )
    return out


def _loader_findings(catalog: ToolCatalog) -> list[Finding]:
    """Problems (tools the loader left out) are errors; a note about a name on several servers is a
    collision; other notes are information, except the merge's qualified names, which
    :func:`_collision_findings` reports."""
    out = [_from_problem(p, "error", "load-error") for p in catalog.report.problems]
    for note in catalog.report.notes:
        if note.kind is NoteKind.KEPT_FIRST:
            name = _tool_name(note)
            out.append(
                Finding(
                    "error",
                    "name-collision",
                    name,
                    f"the name {name!r} is {note.message}; the other server's tool cannot be found or called",
                    "prefix each server's tool names with the server, or rename one of them",
                    1.0,
                    [name] if name else [],
                    {"loader_note": note.message},
                )
            )
        elif note.kind not in (NoteKind.SHARED, NoteKind.QUALIFIED):
            out.append(_from_problem(note, "info", "load-note"))
    return out


def _from_problem(problem: CatalogProblem, severity: str, kind: str) -> Finding:
    name = _tool_name(problem)
    fix = (
        "fix the definition so the loader accepts it; until then the tool is not in the catalog"
        if severity == "error"
        else "nothing to do unless the normalisation is wrong"
    )
    message = problem.message
    if problem.failure is not None:
        # connect_mcp_config: a server of the config did not start, so none of its tools is here.
        kind, name, message = "server-failed", "", f"{problem.tool} {message}"
        fix = (
            "fix its entry in the config (the field named); its tools are missing"
            if problem.failure == ServerFailure.CONFIG
            else "run the server's command by hand to see why (command, args, env); its tools are missing"
        )
    return Finding(
        severity,
        kind,
        name,
        message,
        fix,
        1.0 if severity == "error" else 0.0,
        [name] if name else [],
        {"where": problem.tool},
    )


def _tool_name(problem: CatalogProblem) -> str:
    match = _QUOTED_NAME.match(problem.tool)
    return match.group("name") if match else ""


__all__ = ["CatalogLike", "Resolved", "resolve"]
