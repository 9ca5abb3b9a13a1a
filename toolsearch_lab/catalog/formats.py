"""The tool definition formats a catalog can be read from, and reading them: OpenAI (chat completions and
Responses), Anthropic (client tools), MCP (``tools/list`` and tool snapshots) and our dataset JSON.

:func:`read_json_file` parses a file strictly (UTF-8, bounded nesting), :func:`detect_format` tells the
formats apart, :func:`tool_from_record` turns one record into a checked :class:`~toolsearch_lab.model.Tool`
and :func:`read_tools` a whole document into tools plus a :class:`CatalogReport`. Building the
:class:`~toolsearch_lab.catalog.container.ToolCatalog` from them is the container's job.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolsearch_lab.catalog.errors import CatalogError, CatalogReport
from toolsearch_lab.jsonlimits import (
    JsonLimitError,
    duplicate_key_path,
    find_non_finite,
    shown,
    text_depth,
    value_depth,
)
from toolsearch_lab.model import Tool, ToolDefinitionError, annotations_problem
from toolsearch_lab.schema import MAX_CATALOG_DEPTH, schema_problems, validate_schema_refs

__all__ = [
    "EMPTY_PARAMETERS",
    "FORMATS",
    "detect_format",
    "read_json_file",
    "read_tools",
    "tool_from_record",
    "tool_records",
]

FORMATS = ("openai", "anthropic", "mcp", "dataset")
EMPTY_PARAMETERS = {"type": "object", "properties": {}}
_ABSENT: Any = object()


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file, decoding its bytes as strict UTF-8 so a bad byte is reported with its offset
    instead of turning into U+FFFD inside a tool description. A UTF-8 byte-order mark is tolerated. An
    object that names one key twice is refused with the key's path (JSON would keep the last silently)."""
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
    depth = text_depth(text)
    if depth > MAX_CATALOG_DEPTH:
        raise CatalogError(
            f"{p}: JSON nested {depth} levels deep; the limit is {MAX_CATALOG_DEPTH} (MAX_CATALOG_DEPTH)"
        )
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{p}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    duplicate = duplicate_key_path(text)
    if duplicate is not None:
        key = duplicate.rsplit(".", 1)[-1]
        raise CatalogError(
            f"{p}: names {key!r} twice (at {duplicate}); JSON keeps only the last one silently, so remove "
            "the one you do not mean"
        )
    return document


def _lone_surrogate(value: Any, path: str) -> str | None:
    """Where a lone surrogate hides in ``value`` (JSON allows ``"\\ud800"`` escapes; no provider accepts the
    result because it cannot be encoded as UTF-8), or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(value[exc.start])
            return f"{path}: lone surrogate U+{code:04X} at character {exc.start} (not valid UTF-8)"
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


def _fields(record: dict[str, Any], fmt: str) -> tuple[Any, Any, Any, str, Any]:
    """(name, description, schema, schema field name, category) of a record in format ``fmt``."""
    if fmt == "openai":
        return _openai_fields(record)
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


def _openai_fields(record: dict[str, Any]) -> tuple[Any, Any, Any, str, Any]:
    """:func:`_fields` of an OpenAI record: chat completions nest the function, the Responses API does not."""
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


def tool_from_record(
    record: Any, fmt: str, *, index: int | None = None, function: Callable[..., Any] | None = None
) -> Tool:
    """One tool definition in format ``fmt`` ("openai", "anthropic", "mcp" or "dataset") → :class:`Tool`.

    Raises :class:`CatalogError` naming the tool (by name, else by ``index``) and the problem: not an object,
    bad or missing name, missing or non-string description, a schema that is not ``{"type": "object"}``,
    a ``$ref`` that does not resolve, or a lone surrogate in any string. A missing schema (or ``null``)
    means "no arguments" and becomes ``{"type": "object", "properties": {}}``. An MCP record also keeps
    its ``title``, ``annotations`` and ``outputSchema`` (see :func:`_mcp_fields`)."""
    label = _label(record, index)
    try:
        name, description, schema, category = _checked_parts(record, fmt)
        extra = _mcp_fields(record) if fmt == "mcp" else {}
        try:
            return Tool(name, description, schema, category, function, **extra)
        except ValueError as exc:  # Tool's message names the tool; the label below does that here
            raise CatalogError(exc.problem if isinstance(exc, ToolDefinitionError) else str(exc)) from None
    except CatalogError as exc:
        raise CatalogError(f"tool {label}: {exc}", tool=label, problem=str(exc)) from None


def _checked_parts(record: Any, fmt: str) -> tuple[str, str, dict[str, Any], str | None]:
    """(name, description, schema, category) of one record, or a :class:`CatalogError` saying what is
    wrong (without the tool's label, which the caller adds)."""
    if not isinstance(record, dict):
        raise CatalogError(f"expected a JSON object, got {type(record).__name__}: {shown(record)}")
    try:
        value_depth(record, MAX_CATALOG_DEPTH)
    except JsonLimitError as exc:
        raise CatalogError(
            f"the record is unusable: {exc} (MAX_CATALOG_DEPTH = {MAX_CATALOG_DEPTH})"
        ) from None
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
        raise CatalogError("missing 'description' (the search indexes it; use \"\" if there really is none)")
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
    problems = schema_problems(schema, schema_field) or validate_schema_refs(schema, schema_field)
    if problems:
        raise CatalogError(problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
    if category is not None and not isinstance(category, str):
        raise CatalogError(f"'category' must be a string, got {type(category).__name__}")
    return name, description, schema, category


def _mcp_fields(record: dict[str, Any]) -> dict[str, Any]:
    """The ``Tool`` keywords for an MCP record's own fields (``title``, ``annotations``, ``outputSchema``,
    ``_meta``; ``null`` is the same as absent), or a :class:`CatalogError` saying what is wrong with one.
    The output schema gets the same checks as the input schema: the MCP export sends it on unchanged."""
    out: dict[str, Any] = {}
    for key, keyword in (
        ("title", "title"),
        ("annotations", "annotations"),
        ("outputSchema", "output_schema"),
        ("_meta", "meta"),
    ):
        value = record.get(key)
        if value is None:
            continue
        bad = _lone_surrogate(value, key) or (
            find_non_finite(value, key, MAX_CATALOG_DEPTH) if key in ("annotations", "_meta") else None
        )
        if bad:
            raise CatalogError(bad)
        out[keyword] = value
    if not isinstance(out.get("meta", {}), dict):
        raise CatalogError(f"'_meta' must be a JSON object, got {type(out['meta']).__name__}")
    title = out.get("title")
    if title is not None and not isinstance(title, str):
        raise CatalogError(f"'title' must be a string, got {type(title).__name__}")
    problem = annotations_problem(out.get("annotations"))
    if problem:
        raise CatalogError(f"'annotations': {problem}")
    schema = out.get("output_schema")
    if schema is not None:
        if not isinstance(schema, dict) or schema.get("type") != "object":
            got = f"{schema.get('type')!r}" if isinstance(schema, dict) else type(schema).__name__
            raise CatalogError(
                f'\'outputSchema\' must be a JSON Schema object with "type": "object" (MCP), got {got}'
            )
        problems = schema_problems(schema, "outputSchema") or validate_schema_refs(schema, "outputSchema")
        if problems:
            raise CatalogError(problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
    return out


# ---------------------------------------------------------------------------------------------------------
# Documents → tools


def _record_format(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("function"), dict) or record.get("type") in ("function", "tool_search"):
        return "openai"
    if "input_schema" in record:
        return "anthropic"
    if "inputSchema" in record:
        return "mcp"
    if "parameters" in record or "category" in record:
        return "dataset"
    if "outputSchema" in record or "annotations" in record or "_meta" in record:
        return "mcp"
    return None


def tool_records(obj: Any) -> tuple[list[Any], bool]:
    """(records, document_is_dataset) of a JSON document: a list of tools, ``{"tools": [...]}`` (an MCP
    ``tools/list`` result, a request body or our dataset), a JSON-RPC response wrapping it, or one tool."""
    if isinstance(obj, dict) and isinstance(obj.get("result"), dict) and "jsonrpc" in obj:
        obj = obj["result"]
    if isinstance(obj, list):
        return _without_namespaces(obj), False
    if isinstance(obj, dict):
        if "tools" in obj:
            if not isinstance(obj["tools"], list):
                raise CatalogError(f"'tools' must be a list, got {type(obj['tools']).__name__}")
            return _without_namespaces(obj["tools"]), "queries" in obj
        if _record_format(obj) or "name" in obj:
            return [obj], False
    raise CatalogError(
        'cannot find tools in this JSON: expected a list of tools, {"tools": [...]}, or a single tool '
        f"object; got {type(obj).__name__}"
        + (f" with keys {sorted(obj)[:8]}" if isinstance(obj, dict) else "")
    )


def _without_namespaces(records: list[Any]) -> list[Any]:
    """The records with each OpenAI Responses namespace (``{"type": "namespace", "tools": [...]}``) replaced
    by its functions, each under its own name."""
    out: list[Any] = []
    for record in records:
        members = (
            record.get("tools") if isinstance(record, dict) and record.get("type") == "namespace" else None
        )
        out += members if isinstance(members, list) else [record]
    return out


def detect_format(obj: Any) -> str:
    """Which of :data:`FORMATS` a JSON document uses, judged from every tool record in it. Mixed formats are
    an error (pass ``format=`` to force one)."""
    records, is_dataset = tool_records(obj)
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


def read_tools(
    obj: Any, format: str | None = None, strict: bool = True, source: str | None = None
) -> tuple[list[Tool], CatalogReport]:
    """(the tools, the report) of parsed JSON in any supported shape (see :func:`detect_format`;
    ``format=`` forces one of :data:`FORMATS`). ``strict=True`` raises :class:`CatalogError` on the first
    problem (prefixed with ``source``); ``strict=False`` keeps the valid tools and lists each problem in
    the report. For duplicate names the first wins; in strict mode a duplicate is an error."""
    if format is not None and format not in FORMATS:
        raise CatalogError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    records, _ = tool_records(obj)
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
    return tools, report
