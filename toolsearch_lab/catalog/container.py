"""Tool catalogs: load the tools you bring (OpenAI, Anthropic, MCP or our dataset JSON), validate them, and
hand them to the indexes as :class:`~toolsearch_lab.model.Tool` objects.

Validation is strict by default because a broken definition only shows up much later, as a 400 from a
provider or as a tool the search can never find. ``strict=False`` keeps every valid tool and lists every
problem in ``catalog.report`` instead; nothing is dropped without a line in that report.

This module holds :class:`ToolCatalog` and the loaders; reading and detecting the formats is
:mod:`toolsearch_lab.catalog.formats`, the JSON Schema checks :mod:`toolsearch_lab.schema`.

Shipped catalogs (``load_catalog(name)``):

* ``"github-mcp"``: the 117 GitHub MCP server tool snapshots (``toolsnaps/*.snap``), sorted by file name;
  ``parameters`` is each tool's ``inputSchema``.
* ``"livemcpbench"``: the 510 distinct tool names of LiveMCPBench's raw ``tools.json`` (70 servers, 527
  tools). 13 names appear on more than one server: the **first occurrence wins** (file order), so the catalog
  matches the dataset's ``normalized.json``; every skipped occurrence is a note in ``catalog.report``.
  ``category`` is the server's category. 15 raw tools have ``"description": null``; they get ``""`` (also a
  note).
* ``"metatool"``: the 199 MetaTool tools of ``data/metatool/normalized.json``. One raw name, ``PDF&URLTool``,
  is not a valid tool name for any provider; it is renamed ``PDF_URLTool`` (a note, and
  ``catalog.renames == {"PDF&URLTool": "PDF_URLTool"}`` so a dataset loader can map its labels).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from toolsearch_lab.catalog.errors import CatalogError, CatalogProblem, CatalogReport
from toolsearch_lab.catalog.formats import (
    EMPTY_PARAMETERS,
    FORMATS,
    detect_format,
    read_json_file,
    read_tools,
    tool_from_record,
    tool_records,
)
from toolsearch_lab.catalog.functions import SchemaFromFunctionError, tool, tool_from_function
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.jsonlimits import shown
from toolsearch_lab.model import TOOL_NAME_PATTERN, Tool
from toolsearch_lab.schema import MAX_CATALOG_DEPTH, schema_problems, validate_schema_refs

# The format, error and schema-check names are re-exported: ``catalog.container`` is where notebooks and
# the README import every catalog name from.
__all__ = [
    "EMPTY_PARAMETERS",
    "FORMATS",
    "MAX_CATALOG_DEPTH",
    "SHIPPED_CATALOGS",
    "CatalogError",
    "CatalogProblem",
    "CatalogReport",
    "SchemaFromFunctionError",
    "ToolCatalog",
    "detect_format",
    "load_catalog",
    "read_json_file",
    "schema_problems",
    "tool",
    "tool_from_function",
    "tool_from_record",
    "tools_from_json",
    "validate_schema_refs",
]

SHIPPED_CATALOGS = {
    "github-mcp": "117 GitHub MCP server tools (toolsnaps), sorted by file name",
    "livemcpbench": "510 distinct tools of 70 LiveMCPBench MCP servers (first occurrence of a name wins)",
    "metatool": "199 MetaTool tools",
}
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.:-]")


class ToolCatalog(Sequence):
    """An ordered, name-unique sequence of :class:`Tool`. ``source`` says where it came from; ``report`` holds
    the problems and notes found while loading it (empty for catalogs built in code)."""

    def __init__(
        self, tools: Iterable[Tool] = (), source: str | None = None, report: CatalogReport | None = None
    ) -> None:
        items = tuple(tools)
        by_name: dict[str, Tool] = {}
        for i, t in enumerate(items):
            if not isinstance(t, Tool):
                raise CatalogError(f"catalog item #{i}: expected a Tool, got {type(t).__name__}: {shown(t)}")
            if t.name in by_name:
                first = next(j for j, other in enumerate(items) if other.name == t.name)
                raise CatalogError(f"tool {t.name!r} (#{i}): duplicate name (first defined at #{first})")
            by_name[t.name] = t
        self._tools = items
        self._by_name = by_name
        self.source = source
        self.report = report if report is not None else CatalogReport()
        # Original name -> catalog name, for shipped catalogs whose raw names had to be fixed (metatool).
        self.renames: dict[str, str] = {}
        # The live McpConnection behind an MCP catalog (from_mcp_stdio), else None.
        self.connection: Any = None
        # A catalog of several servers (from_mcp_config): their connections, the servers that failed to
        # start with why, and each catalog name's (server, name on the server).
        self.connections: dict[str, Any] = {}
        self.failures: dict[str, str] = {}
        self.origins: dict[str, tuple[str, str]] = {}

    # -- sequence protocol --------------------------------------------------------------------------------
    @property
    def tools(self) -> list[Tool]:
        return list(self._tools)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self._tools]

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    @overload
    def __getitem__(self, index: int) -> Tool: ...

    @overload
    def __getitem__(self, index: slice) -> ToolCatalog: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ToolCatalog(self._tools[index], source=self.source)
        if isinstance(index, str):
            return self.get(index)
        return self._tools[index]

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._by_name
        return isinstance(item, Tool) and self._by_name.get(item.name) == item

    _MISSING: Any = object()

    def get(self, name: str, default: Any = _MISSING) -> Tool:
        """The tool called ``name``. Without ``default`` an unknown name raises ``KeyError`` with the closest
        names, so a typo in a notebook says what was meant."""
        found = self._by_name.get(name)
        if found is not None:
            return found
        if default is not ToolCatalog._MISSING:
            return default
        close = difflib.get_close_matches(str(name), self.names, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        where = f" in catalog {self.source!r}" if self.source else ""
        raise KeyError(f"no tool named {name!r}{where} ({len(self)} tools){hint}")

    def __repr__(self) -> str:
        extra = f", {len(self.report.problems)} problem(s)" if self.report.problems else ""
        return f"ToolCatalog(source={self.source!r}, {len(self)} tools{extra})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ToolCatalog):
            return self._tools == other._tools
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    # -- builders -------------------------------------------------------------------------------------------
    @classmethod
    def from_functions(cls, *funcs: Callable[..., Any], source: str | None = "functions") -> ToolCatalog:
        """A catalog of Python functions: schemas from type hints, descriptions from docstrings (see
        :mod:`toolsearch_lab.catalog.functions`). Functions already decorated with ``@tool`` keep their
        overrides; each ``Tool.function`` is the callable itself."""
        return cls([f if isinstance(f, Tool) else tool_from_function(f) for f in funcs], source=source)

    @classmethod
    def from_mcp_stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | None = None,
        timeout: float = 30.0,
        startup_timeout: float | None = None,
        strict: bool = True,
        category: str | None = None,
    ) -> ToolCatalog:
        """Start ``command args`` as an MCP stdio server, list its tools and return them as a catalog whose
        tools call the server. ``timeout`` bounds each request; ``startup_timeout`` (default
        ``DEFAULT_STARTUP_TIMEOUT_S``, 30 s) the spawn and handshake. The connection is
        ``catalog.connection``; ``with ToolCatalog.from_mcp_stdio(...) as catalog:`` closes it."""
        # Imported here: the MCP SDK (with pydantic and jsonschema) costs about a second to import, and
        # most catalogs are files.
        from toolsearch_lab.catalog import mcp

        startup = mcp.DEFAULT_STARTUP_TIMEOUT_S if startup_timeout is None else startup_timeout
        connection = mcp.McpConnection(command, args, env, cwd=cwd, timeout=timeout, startup_timeout=startup)
        try:
            return cls.from_mcp(connection, strict=strict, category=category)
        except BaseException:
            connection.close()
            raise

    @classmethod
    def from_mcp_config(
        cls,
        config: Any,
        *,
        servers: Sequence[str] | None = None,
        namespace: str = "auto",
        strict: bool = False,
        timeout: float = 30.0,
        startup_timeout: float | None = None,
        pass_env: Sequence[str] = (),
    ) -> ToolCatalog:
        """The tools of every server in an MCP config file (Claude Desktop, VS Code, Cursor; see
        :mod:`toolsearch_lab.catalog.mcp_config`), started concurrently and merged with names qualified by
        server where they collide (:mod:`toolsearch_lab.catalog.merge`). A server that fails to start is
        named in ``catalog.failures`` with its error and the others still load; ``strict=True`` refuses
        instead. ``with ToolCatalog.from_mcp_config(path) as catalog:`` stops the servers."""
        from toolsearch_lab.catalog.mcp_config import McpConfig, connect_servers, load_mcp_config
        from toolsearch_lab.catalog.merge import merge_catalogs

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
            parts = [(name, cls.from_mcp(c, strict=strict)) for name, c in connections.items()]
            merged = merge_catalogs(parts, namespace=namespace, source=f"mcp-config:{loaded.source}")
        except BaseException:
            for c in connections.values():
                c.close()
            raise
        merged.connections = connections
        merged.failures = failures
        for name, why in failures.items():
            merged.report.add_problem(f"server {name!r}", f"failed to start: {why}")
        return merged

    @classmethod
    def from_mcp(cls, connection: Any, *, strict: bool = True, category: str | None = None) -> ToolCatalog:
        """The tools of a live ``McpConnection`` as a catalog whose ``Tool.function`` calls the server. A tool
        with no description (optional in MCP) gets ``""`` and a note in ``catalog.report``."""
        records, undescribed = connection.tool_records()
        catalog = tools_from_json(records, format="mcp", strict=strict, source=f"mcp:{connection.label}")
        for name in undescribed:
            catalog.report.add_note(repr(name), 'the server gives no description; using ""')
        tools = [
            dataclasses.replace(t, category=category, function=connection.tool_function(t.name))
            for t in catalog
        ]
        out = cls(tools, source=catalog.source, report=catalog.report)
        out.connection = connection
        return out

    @classmethod
    def from_json(
        cls, obj: Any, format: str | None = None, strict: bool = True, source: str | None = None
    ) -> ToolCatalog:
        return tools_from_json(obj, format=format, strict=strict, source=source)

    def close(self) -> None:
        """Close the MCP connection(s) behind this catalog, if any (its tools can no longer be called)."""
        if self.connection is not None:
            self.connection.close()
        for connection in self.connections.values():
            connection.close()

    def __enter__(self) -> ToolCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def definitions(self) -> list[dict]:
        """OpenAI chat-completions ``tools`` array of every tool (other shapes: ``catalog.export``)."""
        return [t.definition() for t in self._tools]


def tools_from_json(
    obj: Any, format: str | None = None, strict: bool = True, source: str | None = None
) -> ToolCatalog:
    """A catalog from parsed JSON in any supported shape (see :func:`detect_format`; ``format=`` forces one of
    "openai", "anthropic", "mcp", "dataset"). ``strict=True`` raises :class:`CatalogError` on the first
    problem; ``strict=False`` keeps the valid tools and lists each problem in ``catalog.report``. For
    duplicate names the first wins; in strict mode a duplicate is an error."""
    tools, report = read_tools(obj, format=format, strict=strict, source=source)
    return ToolCatalog(tools, source=source, report=report)


# ---------------------------------------------------------------------------------------------------------
# Shipped catalogs and files


def _load_github_mcp(strict: bool) -> ToolCatalog:
    folder = data_path("mcp_catalogs", "github-mcp-server", "toolsnaps")
    return _load_directory(folder, "mcp", strict, source="github-mcp")


def _load_directory(folder: Path, format: str | None, strict: bool, source: str) -> ToolCatalog:
    """Every ``*.snap`` / ``*.json`` file of ``folder`` (sorted by file name), each holding one tool or a
    list of tools, as one catalog."""
    files = sorted(p for p in folder.iterdir() if p.suffix in (".snap", ".json") and p.is_file())
    if not files:
        raise CatalogError(f"{folder}: no *.json or *.snap files")
    records: list = []
    for p in files:
        recs, _ = tool_records(read_json_file(p))
        records.extend(recs)
    return tools_from_json(records, format=format, strict=strict, source=source)


def _load_livemcpbench(strict: bool) -> ToolCatalog:
    servers = read_json_file(data_path("livemcpbench", "tools.json"))
    report = CatalogReport()
    records: list[dict] = []
    first_server: dict[str, str] = {}
    for server in servers:
        for listing in server["tools"].values():  # {"<server key>": {"tools": [...], ...}}
            for raw in listing["tools"]:
                name = raw.get("name")
                if name in first_server:
                    report.add_note(
                        repr(name),
                        f"also on server {server['name']!r}; kept the first occurrence "
                        f"(server {first_server[name]!r})",
                    )
                    continue
                first_server[name] = server["name"]
                record = {
                    "name": name,
                    "description": raw.get("description"),
                    "parameters": raw.get("inputSchema"),
                    "category": server.get("category"),
                }
                if record["description"] is None:
                    record["description"] = ""
                    report.add_note(repr(name), 'description is null in the raw data; using ""')
                records.append(record)
    catalog = tools_from_json(records, format="dataset", strict=strict, source="livemcpbench")
    catalog.report.problems[:0] = report.problems
    catalog.report.notes[:0] = report.notes
    return catalog


def _load_metatool(strict: bool) -> ToolCatalog:
    doc = read_json_file(data_path("metatool", "normalized.json"))
    # MetaTool names one plugin "PDF&URLTool"; '&' is not allowed in a tool name by any provider, so the
    # shipped catalog renames it (a note, plus ``catalog.renames`` so datasets can map their labels).
    report = CatalogReport()
    renames: dict[str, str] = {}
    records = []
    for record in doc["tools"]:
        name = record.get("name")
        if isinstance(name, str) and not TOOL_NAME_PATTERN.fullmatch(name):
            fixed = _INVALID_NAME_CHARS.sub("_", name)[:128]
            renames[name] = fixed
            report.add_note(repr(fixed), f"renamed from {name!r}: the original name is not a valid tool name")
            record = {**record, "name": fixed}
        records.append(record)
    catalog = tools_from_json(records, format="dataset", strict=strict, source="metatool")
    catalog.report.notes[:0] = report.notes
    catalog.renames = renames
    return catalog


def _not_empty(catalog: ToolCatalog, strict: bool) -> ToolCatalog:
    """A catalog file with no tool records is an error (strict) or a problem in the report: loaded silently
    as 0 tools, a wrong file would only show up later as "the search finds nothing"."""
    if len(catalog) == 0 and not catalog.report.problems:
        message = "no tools found: the catalog is empty"
        if strict:
            raise CatalogError(f"{catalog.source}: {message}")
        catalog.report.add_problem("", message)
    return catalog


def _snapshot_origins(catalog: ToolCatalog, document: Any) -> ToolCatalog:
    """A snapshot of live servers (``toolsearch-lab snapshot``: ``{"servers": {...}, "tools": [...]}`` with
    a ``server`` and, for a qualified name, a ``serverTool`` in each record) keeps each tool's server in
    ``catalog.origins``, as the live catalog had it."""
    if not (isinstance(document, dict) and isinstance(document.get("servers"), dict)):
        return catalog
    for record in document.get("tools") or ():
        if not isinstance(record, dict) or not isinstance(record.get("server"), str):
            continue
        name, original = record.get("name"), record.get("serverTool")
        if isinstance(name, str) and name in catalog:
            catalog.origins[name] = (record["server"], original if isinstance(original, str) else name)
    return catalog


_SHIPPED_LOADERS = {
    "github-mcp": _load_github_mcp,
    "livemcpbench": _load_livemcpbench,
    "metatool": _load_metatool,
}


def load_catalog(
    name_or_path: str | os.PathLike, format: str | None = None, strict: bool = True
) -> ToolCatalog:
    """A shipped catalog by name (see :data:`SHIPPED_CATALOGS`), a JSON file in any supported format, or a
    directory of ``*.json``/``*.snap`` files with one tool (or a list) each."""
    if not isinstance(name_or_path, (str, os.PathLike)) or name_or_path == "":  # "" would mean "."
        raise CatalogError(
            f"load_catalog expects a shipped catalog name or a path, got {type(name_or_path).__name__}: "
            f"{shown(name_or_path, 60)}"
        )
    if isinstance(name_or_path, str) and name_or_path in _SHIPPED_LOADERS:
        if format is not None:
            raise CatalogError(f"format= does not apply to the shipped catalog {name_or_path!r}")
        return _SHIPPED_LOADERS[name_or_path](strict)
    path = Path(name_or_path)
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except (OSError, ValueError) as exc:  # a NUL byte, an unencodable character, a name too long
        raise CatalogError(f"{str(name_or_path)[:200]!r}: not a usable path ({exc})") from None
    if is_dir:
        return _not_empty(_load_directory(path, format, strict, source=str(path)), strict)
    if is_file:
        document = read_json_file(path)
        catalog = tools_from_json(document, format=format, strict=strict, source=str(path))
        return _not_empty(_snapshot_origins(catalog, document), strict)
    shipped = "; ".join(f"{k!r}: {v}" for k, v in SHIPPED_CATALOGS.items())
    raise CatalogError(
        f"unknown catalog {str(name_or_path)!r}: not a shipped catalog and no such file or "
        f"directory. Shipped catalogs: {shipped}"
    )
