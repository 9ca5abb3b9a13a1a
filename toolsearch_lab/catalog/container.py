"""Tool catalogs: load the tools you bring (OpenAI, Anthropic, MCP or our dataset JSON), validate them, and
hand them to the indexes as :class:`~toolsearch_lab.model.Tool` objects.

Validation is strict by default because a broken definition only shows up much later, as a 400 from a
provider or as a tool the search can never find. ``strict=False`` keeps every valid tool and lists every
problem in ``catalog.report`` instead; nothing is dropped without a line in that report.

Shipped catalogs (``load_catalog(name)``):

* ``"github-mcp"``: the 117 GitHub MCP server tool snapshots (``toolsnaps/*.snap``), sorted by file name;
  ``parameters`` is each tool's ``inputSchema``.
* ``"livemcpbench"``: the 510 distinct tool names of LiveMCPBench's raw ``tools.json`` (70 servers, 527 tools).
  13 names appear on more than one server: the **first occurrence wins** (file order), so the catalog matches
  the dataset's ``normalized.json``; every skipped occurrence is a note in ``catalog.report``. ``category`` is
  the server's category. 15 raw tools have ``"description": null``; they get ``""`` (also a note).
* ``"metatool"``: the 199 MetaTool tools of ``data/metatool/normalized.json``. One raw name, ``PDF&URLTool``, is
  not a valid tool name for any provider; it is renamed ``PDF_URLTool`` (a note, and
  ``catalog.renames == {"PDF&URLTool": "PDF_URLTool"}`` so a dataset loader can map its labels).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from toolsearch_lab.catalog.functions import SchemaFromFunctionError, tool, tool_from_function
from toolsearch_lab.catalog.shipped import data_path
from toolsearch_lab.model import TOOL_NAME_PATTERN, Tool

__all__ = [
    "FORMATS",
    "SHIPPED_CATALOGS",
    "CatalogError",
    "CatalogProblem",
    "CatalogReport",
    "SchemaFromFunctionError",
    "ToolCatalog",
    "detect_format",
    "load_catalog",
    "read_json_file",
    "tool",
    "tool_from_function",
    "tool_from_record",
    "tools_from_json",
    "validate_schema_refs",
]

FORMATS = ("openai", "anthropic", "mcp", "dataset")
SHIPPED_CATALOGS = {
    "github-mcp": "117 GitHub MCP server tools (toolsnaps), sorted by file name",
    "livemcpbench": "510 distinct tools of 70 LiveMCPBench MCP servers (first occurrence of a name wins)",
    "metatool": "199 MetaTool tools",
}
EMPTY_PARAMETERS = {"type": "object", "properties": {}}
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.:-]")

# Keys whose values are data, not sub-schemas: a "$ref" inside them is a literal, not a reference.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})


class CatalogError(ValueError):
    """A tool definition (or a whole catalog file) is unusable. The message names the tool and the problem;
    ``tool`` and ``problem`` hold the two parts separately when the error is about one tool."""

    def __init__(self, message: str, *, tool: str | None = None, problem: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.problem = problem if problem is not None else message


@dataclass(frozen=True)
class CatalogProblem:
    """One line of a :class:`CatalogReport`. ``tool`` is ``"'name' (#index)"`` or ``"#index"`` when the
    record has no usable name, or ``""`` for problems about the whole document."""

    tool: str
    message: str
    level: str = "error"  # "error": the tool was left out; "note": kept, but something was normalised

    def __str__(self) -> str:
        where = f"tool {self.tool}: " if self.tool else ""
        return f"{self.level}: {where}{self.message}"


@dataclass
class CatalogReport:
    """What ``strict=False`` found: ``problems`` (tools left out) and ``notes`` (tools kept, normalised)."""

    problems: list[CatalogProblem] = field(default_factory=list)
    notes: list[CatalogProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add_problem(self, tool: str, message: str) -> None:
        self.problems.append(CatalogProblem(tool, message, "error"))

    def add_note(self, tool: str, message: str) -> None:
        self.notes.append(CatalogProblem(tool, message, "note"))

    def __str__(self) -> str:
        lines = [f"{len(self.problems)} problem(s), {len(self.notes)} note(s)"]
        lines += [f"  {p}" for p in self.problems + self.notes]
        return "\n".join(lines)


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
                raise CatalogError(f"catalog item #{i}: expected a Tool, got {type(t).__name__}: {t!r:.80}")
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
        import difflib

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
        timeout: float = 30.0,
        **kwargs: Any,
    ) -> ToolCatalog:
        """Start an MCP server over stdio, list its tools and return them as a catalog whose tools call the
        server. The connection is ``catalog.connection`` (close it, or use ``with catalog.connection:``).
        See :func:`toolsearch_lab.catalog.mcp.catalog_from_mcp_stdio` for the options."""
        from toolsearch_lab.catalog.mcp import catalog_from_mcp_stdio

        return catalog_from_mcp_stdio(command, args, env=env, timeout=timeout, **kwargs)

    @classmethod
    def from_json(
        cls, obj: Any, format: str | None = None, strict: bool = True, source: str | None = None
    ) -> ToolCatalog:
        return tools_from_json(obj, format=format, strict=strict, source=source)

    def close(self) -> None:
        """Close the MCP connection behind this catalog, if any (its tools can no longer be called)."""
        if self.connection is not None:
            self.connection.close()

    def __enter__(self) -> ToolCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def definitions(self) -> list[dict]:
        """OpenAI chat-completions ``tools`` array of every tool (see :mod:`toolsearch_lab.catalog.export` for more)."""
        return [t.definition() for t in self._tools]


# ---------------------------------------------------------------------------------------------------------
# Text and JSON checks


def read_json_file(path: str | os.PathLike) -> Any:
    """Parse a JSON file, decoding its bytes as strict UTF-8 so a bad byte is reported with its offset
    instead of turning into U+FFFD inside a tool description. A UTF-8 byte-order mark is tolerated."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise CatalogError(f"{p}: file not found") from None
    except IsADirectoryError:
        raise CatalogError(f"{p}: is a directory, expected a JSON file") from None
    try:
        text = raw.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start : exc.end].hex(" ")
        raise CatalogError(
            f"{p}: not valid UTF-8 at byte offset {exc.start} (line {line}): bytes {bad} ({exc.reason}); "
            "re-save the file as UTF-8"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def _lone_surrogate(value: Any, path: str) -> str | None:
    """Where a lone surrogate hides in ``value`` (JSON allows ``"\\ud800"`` escapes; no provider accepts the
    result because it cannot be encoded as UTF-8), or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{path}: lone surrogate U+{ord(value[exc.start]):04X} at character {exc.start} (not valid UTF-8)"
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = _lone_surrogate(k, f"{path} key") or _lone_surrogate(v, f"{path}.{k}")
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _lone_surrogate(v, f"{path}[{i}]")
            if found:
                return found
    return None


def _resolve_pointer(root: Any, ref: str) -> str | None:
    """None if the local ``$ref`` resolves inside ``root``, else why not."""
    fragment = urllib.parse.unquote(ref[1:])
    if fragment == "":
        return None
    if not fragment.startswith("/"):
        # A plain-name fragment ("#foo") points at an "$anchor" (or draft-07 "$id": "#foo") in the schema.
        return None if _has_anchor(root, fragment) else f'no "$anchor": {fragment!r} in the schema'
    node = root
    walked = "#"
    for raw_token in fragment[1:].split("/"):
        token = raw_token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return f"{walked} has no {token!r}"
        walked += "/" + raw_token
    return None


def _has_anchor(node: Any, name: str) -> bool:
    if isinstance(node, dict):
        if node.get("$anchor") == name or node.get("$id") == "#" + name:
            return True
        return any(_has_anchor(v, name) for k, v in node.items() if k not in _DATA_KEYWORDS)
    if isinstance(node, list):
        return any(_has_anchor(v, name) for v in node)
    return False


def validate_schema_refs(schema: dict, where: str = "parameters") -> list[str]:
    """Every ``$ref`` in ``schema`` that does not resolve, as messages. Local refs (``#/...``, including
    ``$defs``/``definitions``) are resolved against the tool's own schema. Remote refs are reported too:
    providers do not fetch them, so the model would see a dangling name."""
    problems: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref.startswith("#"):
                    why = _resolve_pointer(schema, ref)
                    if why:
                        problems.append(f"{path}: $ref {ref!r} does not resolve ({why})")
                else:
                    problems.append(
                        f"{path}: $ref {ref!r} is not local; only '#/...' refs into the tool's own "
                        "schema can be resolved (inline it or move it under $defs)"
                    )
            for k, v in node.items():
                if k not in _DATA_KEYWORDS:
                    walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(schema, where)
    return problems


# ---------------------------------------------------------------------------------------------------------
# Records → Tool


def _label(record: Any, index: int | None) -> str:
    name = None
    if isinstance(record, dict):
        name = record.get("name")
        fn = record.get("function")
        if name is None and isinstance(fn, dict):
            name = fn.get("name")
    at = f" (#{index})" if index is not None else ""
    if isinstance(name, str) and name:
        return f"{name[:80]!r}{at}" if at else repr(name[:80])
    return f"#{index}" if index is not None else "<unnamed>"


def _fields(record: dict, fmt: str) -> tuple[Any, Any, Any, str, Any]:
    """(name, description, schema, schema field name, category) of a record in format ``fmt``."""
    if fmt == "openai":
        if record.get("type") not in (None, "function"):
            raise CatalogError(
                f"type {record.get('type')!r} is not a function tool; only function tools "
                "have a definition to search"
            )
        if "function" in record:  # chat completions: {"type":"function","function":{...}}
            fn = record["function"]
            if not isinstance(fn, dict):
                raise CatalogError(f"'function' must be an object, got {type(fn).__name__}")
            return (
                fn.get("name"),
                fn.get("description", _ABSENT),
                fn.get("parameters", _ABSENT),
                "function.parameters",
                None,
            )
        # Responses API: the function fields sit next to "type".
        return (
            record.get("name"),
            record.get("description", _ABSENT),
            record.get("parameters", _ABSENT),
            "parameters",
            None,
        )
    if fmt == "anthropic":
        kind = record.get("type")
        if kind not in (None, "custom"):
            raise CatalogError(
                f"type {kind!r} is an Anthropic server tool, not a client tool with a definition"
            )
        return (
            record.get("name"),
            record.get("description", _ABSENT),
            record.get("input_schema", _ABSENT),
            "input_schema",
            None,
        )
    if fmt == "mcp":
        schema = record.get("inputSchema", record.get("input_schema", _ABSENT))
        return record.get("name"), record.get("description", _ABSENT), schema, "inputSchema", None
    if fmt == "dataset":
        return (
            record.get("name"),
            record.get("description", _ABSENT),
            record.get("parameters", _ABSENT),
            "parameters",
            record.get("category"),
        )
    raise CatalogError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


_ABSENT: Any = object()


def tool_from_record(
    record: Any, fmt: str, *, index: int | None = None, function: Callable[..., Any] | None = None
) -> Tool:
    """One tool definition in format ``fmt`` ("openai", "anthropic", "mcp" or "dataset") → :class:`Tool`.

    Raises :class:`CatalogError` naming the tool (by name, else by ``index``) and the problem: not an object,
    bad or missing name, missing or non-string description, a schema that is not ``{"type": "object"}``,
    a ``$ref`` that does not resolve, or a lone surrogate in any string. A missing schema (or ``null``)
    means "no arguments" and becomes ``{"type": "object", "properties": {}}``."""
    label = _label(record, index)
    try:
        if not isinstance(record, dict):
            raise CatalogError(f"expected a JSON object, got {type(record).__name__}: {record!r:.80}")
        name, description, schema, schema_field, category = _fields(record, fmt)
        bad_text = (
            _lone_surrogate(name, "name")
            or _lone_surrogate(description, "description")
            or _lone_surrogate(schema, schema_field)
            or _lone_surrogate(category, "category")
        )
        if bad_text:
            raise CatalogError(bad_text)
        if name is None:
            raise CatalogError("missing 'name'")
        if not isinstance(name, str):
            raise CatalogError(f"'name' must be a string, got {type(name).__name__}")
        if description is _ABSENT:
            raise CatalogError(
                "missing 'description' (the search indexes it; use \"\" if there really is none)"
            )
        if not isinstance(description, str):
            raise CatalogError(f"'description' must be a string, got {type(description).__name__}")
        if schema is _ABSENT or schema is None:
            schema = dict(EMPTY_PARAMETERS)
        if not isinstance(schema, dict):
            raise CatalogError(f"'{schema_field}' must be a JSON Schema object, got {type(schema).__name__}")
        if schema.get("type") != "object":
            raise CatalogError(
                f'\'{schema_field}\' must have "type": "object" (tool arguments are always an '
                f"object), got {schema.get('type')!r}"
            )
        ref_problems = validate_schema_refs(schema, schema_field)
        if ref_problems:
            raise CatalogError(
                ref_problems[0] + (f" (+{len(ref_problems) - 1} more)" if len(ref_problems) > 1 else "")
            )
        if category is not None and not isinstance(category, str):
            raise CatalogError(f"'category' must be a string, got {type(category).__name__}")
        try:
            return Tool(name, description, schema, category, function)
        except ValueError as exc:
            # Tool's own message already starts with "tool 'x': "; keep only the problem.
            msg = str(exc)
            raise CatalogError(msg.split(": ", 1)[1] if msg.startswith("tool ") else msg) from None
    except CatalogError as exc:
        raise CatalogError(f"tool {label}: {exc}", tool=label, problem=str(exc)) from None


# ---------------------------------------------------------------------------------------------------------
# Documents → ToolCatalog


def _record_format(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("function"), dict) or record.get("type") == "function":
        return "openai"
    if "input_schema" in record:
        return "anthropic"
    if "inputSchema" in record:
        return "mcp"
    if "parameters" in record or "category" in record:
        return "dataset"
    return None


def _tool_list(obj: Any) -> tuple[list, bool]:
    """(records, document_is_dataset) of a JSON document: a list of tools, ``{"tools": [...]}`` (an MCP
    ``tools/list`` result, a request body or our dataset), a JSON-RPC response wrapping it, or one tool."""
    if isinstance(obj, dict) and isinstance(obj.get("result"), dict) and "jsonrpc" in obj:
        obj = obj["result"]
    if isinstance(obj, list):
        return obj, False
    if isinstance(obj, dict):
        if "tools" in obj:
            if not isinstance(obj["tools"], list):
                raise CatalogError(f"'tools' must be a list, got {type(obj['tools']).__name__}")
            return obj["tools"], "queries" in obj
        if _record_format(obj) or "name" in obj:
            return [obj], False
    raise CatalogError(
        'cannot find tools in this JSON: expected a list of tools, {"tools": [...]}, or a single tool '
        f"object; got {type(obj).__name__}"
        + (f" with keys {sorted(obj)[:8]}" if isinstance(obj, dict) else "")
    )


def detect_format(obj: Any) -> str:
    """Which of :data:`FORMATS` a JSON document uses, judged from every tool record in it. Mixed formats are
    an error (pass ``format=`` to force one)."""
    records, is_dataset = _tool_list(obj)
    if is_dataset:
        return "dataset"
    seen: dict[str, int] = {}
    for i, r in enumerate(records):
        fmt = _record_format(r)
        if fmt is not None:
            seen.setdefault(fmt, i)
    if len(seen) > 1:
        parts = ", ".join(f"{fmt} (first at #{i})" for fmt, i in seen.items())
        raise CatalogError(f"tool records mix formats: {parts}; split the file or pass format=")
    # Records with only name/description have no schema to tell formats apart; every reader treats them alike.
    return next(iter(seen), "dataset")


def tools_from_json(
    obj: Any, format: str | None = None, strict: bool = True, source: str | None = None
) -> ToolCatalog:
    """A catalog from parsed JSON in any supported shape (see :func:`detect_format`; ``format=`` forces one of
    "openai", "anthropic", "mcp", "dataset"). ``strict=True`` raises :class:`CatalogError` on the first
    problem; ``strict=False`` keeps the valid tools and lists each problem in ``catalog.report``. For
    duplicate names the first wins; in strict mode a duplicate is an error."""
    if format is not None and format not in FORMATS:
        raise CatalogError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    records, _ = _tool_list(obj)
    fmt = format or detect_format(obj)
    report = CatalogReport()
    tools: list[Tool] = []
    first_index: dict[str, int] = {}
    for i, record in enumerate(records):
        try:
            t = tool_from_record(record, fmt, index=i)
            if t.name in first_index:
                label, problem = (
                    f"{t.name!r} (#{i})",
                    f"duplicate name (first defined at #{first_index[t.name]})",
                )
                raise CatalogError(f"tool {label}: {problem}", tool=label, problem=problem)
        except CatalogError as exc:
            if strict:
                raise CatalogError(
                    f"{source}: {exc}" if source else str(exc), tool=exc.tool, problem=exc.problem
                ) from None
            report.add_problem(exc.tool or f"#{i}", exc.problem)
            continue
        first_index[t.name] = i
        tools.append(t)
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
        recs, _ = _tool_list(read_json_file(p))
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
        if isinstance(name, str) and not TOOL_NAME_PATTERN.match(name):
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
    """Fix (issue 6): a catalog file with no tool records loaded silently as 0 tools, so a wrong file showed up
    only later as "the search finds nothing". Strict mode now raises; strict=False lists it as a problem."""
    if len(catalog) == 0 and not catalog.report.problems:
        message = "no tools found: the catalog is empty"
        if strict:
            raise CatalogError(f"{catalog.source}: {message}")
        catalog.report.add_problem("", message)
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
    if isinstance(name_or_path, str) and name_or_path in _SHIPPED_LOADERS:
        if format is not None:
            raise CatalogError(f"format= does not apply to the shipped catalog {name_or_path!r}")
        return _SHIPPED_LOADERS[name_or_path](strict)
    path = Path(name_or_path)
    if path.is_dir():
        return _not_empty(_load_directory(path, format, strict, source=str(path)), strict)
    if path.is_file():
        return _not_empty(
            tools_from_json(read_json_file(path), format=format, strict=strict, source=str(path)), strict
        )
    shipped = "; ".join(f"{k!r}: {v}" for k, v in SHIPPED_CATALOGS.items())
    raise CatalogError(
        f"unknown catalog {str(name_or_path)!r}: not a shipped catalog and no such file or "
        f"directory. Shipped catalogs: {shipped}"
    )
