"""Turn whatever the user has into one list of tools for the doctor, keeping track of which server each
tool came from and turning load-time problems (and cross-server name collisions) into findings."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.catalog.container import CatalogProblem, ToolCatalog, load_catalog, tools_from_json
from toolsearch_lab.eval.doctor.report import Finding
from toolsearch_lab.model import Tool

CatalogLike = Any  # ToolCatalog | str | PathLike | Iterable[Tool | Callable] | Mapping[str, CatalogLike]

# The loaders say "also on server 'X'; kept the first occurrence" when one name exists on several servers.
_ALSO_ON_SERVER = re.compile(r"^also on server (?P<server>'.*?'|\".*?\")")
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


def resolve(catalog: CatalogLike) -> Resolved:
    """A shipped catalog name, a JSON file or directory, parsed tool JSON, a :class:`ToolCatalog` (from JSON,
    functions or a live MCP server), a list of ``Tool`` objects or Python functions, or a mapping
    ``{server name: any of those}`` to check several servers merged into one catalog (a mapping with a
    "tools" or "name" key is read as tool JSON instead)."""
    if isinstance(catalog, Mapping) and not _JSON_KEYS.intersection(catalog):
        if not catalog:
            raise ValueError("diagnose: the mapping of servers is empty; expected {server name: catalog}")
        parts = [(str(server), _single(part)) for server, part in catalog.items()]
        return _merge(parts, source=" + ".join(server for server, _ in parts))
    if isinstance(catalog, list) and catalog and all(isinstance(c, ToolCatalog) for c in catalog):
        parts = [(c.source or f"catalog {i + 1}", _single(c)) for i, c in enumerate(catalog)]
        return _merge(parts, source=" + ".join(server for server, _ in parts))
    resolved = _single(catalog)
    if not resolved.tools:
        left_out = [f.problem for f in resolved.findings if f.severity == "error"]
        raise ValueError(
            f"diagnose: {resolved.source}: no tools to diagnose"
            + (
                f"; the loader reported {len(left_out)} problem(s), the first: {left_out[0]}"
                if left_out
                else ""
            )
        )
    return resolved


def _single(catalog: CatalogLike) -> Resolved:
    if isinstance(catalog, ToolCatalog):
        return Resolved(catalog.tools, catalog.source or "catalog", findings=_loader_findings(catalog))
    if isinstance(catalog, (str, os.PathLike)):
        return _single(load_catalog(catalog, strict=False))
    if isinstance(catalog, Mapping) or (
        isinstance(catalog, list) and any(isinstance(c, dict) for c in catalog)
    ):
        # Parsed tool JSON (OpenAI, Anthropic, MCP or dataset records, or a document holding them).
        return _single(tools_from_json(catalog, strict=False, source="json"))
    if isinstance(catalog, Tool) or callable(catalog):
        catalog = [catalog]
    if isinstance(catalog, Iterable) and not isinstance(catalog, bytes):
        items = list(catalog)
        if not items:
            raise ValueError("diagnose: the catalog is empty; expected at least one tool")
        tools = [_as_tool(item, i) for i, item in enumerate(items)]
        return _merge([("", Resolved(tools, "tools"))], source="tools")
    raise TypeError(
        "diagnose: expected a ToolCatalog, a shipped catalog name or JSON path, a list of Tool objects or "
        f"functions, or a mapping {{server: catalog}}; got {type(catalog).__name__}"
    )


def _as_tool(item: Any, index: int) -> Tool:
    if isinstance(item, Tool):
        return item
    if callable(item):
        return ToolCatalog.from_functions(item).tools[0]
    raise TypeError(
        f"diagnose: catalog item #{index} is a {type(item).__name__}, expected a Tool or a function"
    )


def _merge(parts: list[tuple[str, Resolved]], source: str) -> Resolved:
    """One catalog from several servers: the first definition of a name wins, every later one is an error
    finding (a provider rejects duplicate names, and a client that dedupes silently hides a tool)."""
    tools: list[Tool] = []
    servers: dict[str, str] = {}
    findings: list[Finding] = []
    seen: dict[str, tuple[str, Tool]] = {}
    for server, part in parts:
        findings.extend(part.findings)
        for t in part.tools:
            if t.name in seen:
                findings.append(_collision(t, server, *seen[t.name]))
                continue
            seen[t.name] = (server, t)
            tools.append(t)
            if server:
                servers[t.name] = part.servers.get(t.name, server)
    if not tools:
        raise ValueError(f"diagnose: {source}: no tools to diagnose (the catalog is empty)")
    return Resolved(tools, source, servers if len(parts) > 1 else {}, findings)


def _collision(later: Tool, server: str, first_server: str, first: Tool) -> Finding:
    same = later == first
    where = f"servers {first_server!r} and {server!r}" if server != first_server else "the catalog twice"
    return Finding(
        "error",
        "name-collision",
        later.name,
        f"the name {later.name!r} is defined by {where}"
        + (" (identical definitions)" if same else " with different definitions")
        + "; merged, one hides the other and providers reject duplicate names",
        f"prefix each server's tool names (e.g. '{_slug(first_server) or 'a'}_{later.name}') or rename one",
        1.0,
        [later.name],
        {"servers": [first_server, server], "identical": same},
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()[:20]


def _loader_findings(catalog: ToolCatalog) -> list[Finding]:
    """Problems (tools the loader left out) are errors; a note about a name on several servers is a
    collision; other notes are information."""
    out = [_from_problem(p, "error", "load-error") for p in catalog.report.problems]
    for note in catalog.report.notes:
        match = _ALSO_ON_SERVER.match(note.message)
        if match:
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
        else:
            out.append(_from_problem(note, "info", "load-note"))
    return out


def _from_problem(problem: CatalogProblem, severity: str, kind: str) -> Finding:
    name = _tool_name(problem)
    fix = (
        "fix the definition so the loader accepts it; until then the tool is not in the catalog"
        if severity == "error"
        else "nothing to do unless the normalisation is wrong"
    )
    return Finding(
        severity,
        kind,
        name,
        problem.message,
        fix,
        1.0 if severity == "error" else 0.0,
        [name] if name else [],
        {"where": problem.tool},
    )


def _tool_name(problem: CatalogProblem) -> str:
    match = _QUOTED_NAME.match(problem.tool)
    return match.group("name") if match else ""


__all__ = ["CatalogLike", "Resolved", "resolve"]
