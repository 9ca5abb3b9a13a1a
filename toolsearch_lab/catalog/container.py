"""Tool catalogs: load the tools you bring (OpenAI, Anthropic, MCP or our dataset JSON), validate them, and
hand them to the indexes as :class:`~toolsearch_lab.model.Tool` objects.

Validation is strict by default because a broken definition only shows up much later, as a 400 from a
provider or as a tool the search can never find. ``strict=False`` keeps every valid tool and lists every
problem in ``catalog.report`` instead; nothing is dropped without a line in that report.

This module holds :class:`ToolCatalog` and the loaders; reading and detecting the formats is
:mod:`toolsearch_lab.catalog.formats`, the JSON Schema checks :mod:`toolsearch_lab.schema`, and the tools of
live MCP servers (with the servers themselves) :mod:`toolsearch_lab.catalog.live`.

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

import difflib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar, overload

from toolsearch_lab.catalog.errors import CatalogError, CatalogProblem, CatalogReport, NoteKind
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
_D = TypeVar("_D")  # what ToolCatalog.get returns for an unknown name when given a default


class ToolCatalog(Sequence[Tool]):
    """An ordered, name-unique sequence of :class:`Tool`, and what describes it: ``source`` (where it came
    from), ``report`` (the problems and notes found while loading it; empty for catalogs built in code),
    ``renames`` (original name -> catalog name, for a shipped catalog whose raw names had to be fixed) and
    ``origins`` (catalog name -> ``(server, name on the server)``, for a catalog of several servers).

    A catalog is a value: the constructor sets all of it and no attribute can be assigned afterwards, so it
    can be copied (``copy.copy``, ``copy.deepcopy``), compared and exported without any process behind it.
    Two catalogs are equal when they hold equal tools in the same order. Live MCP servers are held beside a
    catalog, by :class:`~toolsearch_lab.catalog.live.McpServers`."""

    __slots__ = ("_by_name", "_origins", "_renames", "_report", "_source", "_tools")

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        source: str | None = None,
        report: CatalogReport | None = None,
        *,
        renames: Mapping[str, str] | None = None,
        origins: Mapping[str, tuple[str, str]] | None = None,
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
        strangers = [name for name in origins or {} if name not in by_name]
        if strangers:
            raise CatalogError(f"origins name {strangers[0]!r}, which is not a tool of this catalog")
        self._tools = items
        self._by_name = by_name
        self._source = source
        self._report = report if report is not None else CatalogReport()
        self._renames = dict(renames or {})
        self._origins = {name: (server, original) for name, (server, original) in (origins or {}).items()}

    @property
    def source(self) -> str | None:
        return self._source

    @property
    def report(self) -> CatalogReport:
        return self._report

    @property
    def renames(self) -> Mapping[str, str]:
        """Original name -> catalog name (shipped catalogs: metatool's ``PDF&URLTool``)."""
        return MappingProxyType(self._renames)

    @property
    def origins(self) -> Mapping[str, tuple[str, str]]:
        """Catalog name -> ``(server, name on the server)`` for a catalog of live servers, a snapshot of them
        or merged catalogs; empty otherwise."""
        return MappingProxyType(self._origins)

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

    @overload
    def __getitem__(self, index: str) -> Tool: ...

    def __getitem__(self, index: int | slice | str) -> Tool | ToolCatalog:
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

    @overload
    def get(self, name: str) -> Tool: ...

    @overload
    def get(self, name: str, default: _D) -> Tool | _D: ...

    def get(self, name: str, default: object = _MISSING) -> object:
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
    def from_json(
        cls, obj: Any, format: str | None = None, strict: bool = True, source: str | None = None
    ) -> ToolCatalog:
        return tools_from_json(obj, format=format, strict=strict, source=source)

    def definitions(self) -> list[dict[str, Any]]:
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
    tools, report = _read_directory(folder, "mcp", strict, source="github-mcp")
    return ToolCatalog(tools, source="github-mcp", report=report)


def _read_directory(
    folder: Path, format: str | None, strict: bool, source: str
) -> tuple[list[Tool], CatalogReport]:
    """The tools of every ``*.snap`` / ``*.json`` file of ``folder`` (sorted by file name), each holding one
    tool or a list of tools, and what reading them found."""
    files = sorted(p for p in folder.iterdir() if p.suffix in (".snap", ".json") and p.is_file())
    if not files:
        raise CatalogError(f"{folder}: no *.json or *.snap files")
    records: list[Any] = []
    for p in files:
        recs, _ = tool_records(read_json_file(p))
        records.extend(recs)
    return read_tools(records, format=format, strict=strict, source=source)


def _load_livemcpbench(strict: bool) -> ToolCatalog:
    servers = read_json_file(data_path("livemcpbench", "tools.json"))
    report = CatalogReport()
    records: list[dict[str, Any]] = []
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
                        NoteKind.KEPT_FIRST,
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
                    report.add_note(
                        repr(name), 'description is null in the raw data; using ""', NoteKind.NORMALISED
                    )
                records.append(record)
    tools, found = read_tools(records, format="dataset", strict=strict, source="livemcpbench")
    report = CatalogReport(report.problems + found.problems, report.notes + found.notes)
    return ToolCatalog(tools, source="livemcpbench", report=report)


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
            why = f"renamed from {name!r}: the original name is not a valid tool name"
            report.add_note(repr(fixed), why, NoteKind.RENAMED)
            record = {**record, "name": fixed}
        records.append(record)
    tools, found = read_tools(records, format="dataset", strict=strict, source="metatool")
    report = CatalogReport(found.problems, report.notes + found.notes)
    return ToolCatalog(tools, source="metatool", report=report, renames=renames)


def _not_empty(tools: list[Tool], report: CatalogReport, strict: bool, source: str) -> CatalogReport:
    """A catalog file with no tool records is an error (strict) or a problem in the report: loaded silently
    as 0 tools, a wrong file would only show up later as "the search finds nothing"."""
    if not tools and not report.problems:
        message = "no tools found: the catalog is empty"
        if strict:
            raise CatalogError(f"{source}: {message}")
        report.add_problem("", message)
    return report


def _snapshot_origins(document: Any, tools: list[Tool]) -> dict[str, tuple[str, str]]:
    """A snapshot of live servers (``toolsearch-lab snapshot``: ``{"servers": {...}, "tools": [...]}`` with
    a ``server`` and, for a qualified name, a ``serverTool`` in each record) keeps each tool's server in
    ``catalog.origins``, as the live catalog had it."""
    if not (isinstance(document, dict) and isinstance(document.get("servers"), dict)):
        return {}
    names = {t.name for t in tools}
    origins: dict[str, tuple[str, str]] = {}
    for record in document.get("tools") or ():
        if not isinstance(record, dict) or not isinstance(record.get("server"), str):
            continue
        name, original = record.get("name"), record.get("serverTool")
        if isinstance(name, str) and name in names:
            origins[name] = (record["server"], original if isinstance(original, str) else name)
    return origins


_SHIPPED_LOADERS = {
    "github-mcp": _load_github_mcp,
    "livemcpbench": _load_livemcpbench,
    "metatool": _load_metatool,
}


def load_catalog(
    name_or_path: str | os.PathLike[str], format: str | None = None, strict: bool = True
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
    source = str(path)
    if is_dir:
        tools, report = _read_directory(path, format, strict, source)
        return ToolCatalog(tools, source=source, report=_not_empty(tools, report, strict, source))
    if is_file:
        document = read_json_file(path)
        tools, report = read_tools(document, format=format, strict=strict, source=source)
        return ToolCatalog(
            tools,
            source=source,
            report=_not_empty(tools, report, strict, source),
            origins=_snapshot_origins(document, tools),
        )
    shipped = "; ".join(f"{k!r}: {v}" for k, v in SHIPPED_CATALOGS.items())
    raise CatalogError(
        f"unknown catalog {str(name_or_path)!r}: not a shipped catalog and no such file or "
        f"directory. Shipped catalogs: {shipped}"
    )
