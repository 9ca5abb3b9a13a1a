"""One catalog from several servers' catalogs, with tool names qualified by their server when they collide.

The scheme: ``<server>__<tool>``, where ``<server>`` is the server's name from the config reduced to
``[A-Za-z0-9_-]`` (``git alpha`` becomes ``git_alpha``). Providers accept tool names matching
``^[a-zA-Z0-9_-]{1,64}$``, so a qualified name longer than 64 characters keeps its tool part whole where it
can, shortens the server part and adds 6 hex characters of a hash of the full name, which keeps it unique.
A tool's ``function`` still calls the original name on its own server: only the name the model sees changes.

``namespace``: ``"auto"`` (default) qualifies only the names that more than one server defines, ``"always"``
qualifies every tool, ``"never"`` refuses a collision with an error naming both servers. Every rename and
collision is a note in ``catalog.report`` (which also keeps each part's problems, notes and failed servers);
``catalog.origins`` maps each catalog name to ``(server, name on the server)``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.catalog.errors import CatalogError, CatalogReport
from toolsearch_lab.model import Tool

__all__ = [
    "NAMESPACES",
    "Namespace",
    "PROVIDER_NAME_PATTERN",
    "SEPARATOR",
    "merge_catalogs",
    "qualified_name",
]

Namespace = Literal["auto", "always", "never"]
NAMESPACES: tuple[Namespace, ...] = get_args(Namespace)
SEPARATOR = "__"
PROVIDER_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_MAX = 64
_HASH = 6


def _slug(server: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", server).strip("_")
    return slug or "server"


def qualified_name(server: str, tool: str) -> str:
    """``server__tool`` within the providers' name rule (see the module docstring)."""
    safe_tool = re.sub(r"[^A-Za-z0-9_-]+", "_", tool)
    name = f"{_slug(server)}{SEPARATOR}{safe_tool}"
    if len(name) <= _MAX and safe_tool == tool:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH]
    room = _MAX - len(SEPARATOR) - _HASH - 1  # server part + tool part
    tool_part = safe_tool[: max(room - 8, room // 2)]
    server_part = _slug(server)[: room - len(tool_part)]
    return f"{server_part}{SEPARATOR}{tool_part}_{digest}"


def merge_catalogs(
    parts: Mapping[str, ToolCatalog] | Sequence[tuple[str, ToolCatalog]],
    *,
    namespace: Namespace = "auto",
    source: str | None = None,
) -> ToolCatalog:
    """Merge ``{server name: catalog}`` into one catalog (see the module docstring)."""
    if namespace not in NAMESPACES:
        raise ValueError(f"namespace must be one of {', '.join(NAMESPACES)}, got {namespace!r}")
    items = list(parts.items()) if isinstance(parts, Mapping) else list(parts)
    servers = [server for server, _ in items]
    repeated = [s for s, n in Counter(servers).items() if n > 1]
    if repeated:
        raise CatalogError(f"server name {repeated[0]!r} is given twice; each server needs its own name")
    owners: dict[str, list[str]] = {}
    for server, catalog in items:
        for t in catalog:
            owners.setdefault(t.name, []).append(server)
    clashes = {name: where for name, where in owners.items() if len(where) > 1}
    if clashes and namespace == "never":
        name, where = next(iter(clashes.items()))
        raise CatalogError(
            f"tool {name!r} is defined by servers {', '.join(map(repr, where))}; "
            f"pass namespace='auto' to qualify it as {qualified_name(where[0], name)!r} and so on"
        )
    report = CatalogReport()
    tools: list[Tool] = []
    origins: dict[str, tuple[str, str]] = {}
    for server, catalog in items:
        report.problems.extend(catalog.report.problems)
        report.notes.extend(catalog.report.notes)
        report.failed_servers.update(catalog.report.failed_servers)
        for t in catalog:
            name = t.name
            if namespace == "always" or t.name in clashes:
                name = qualified_name(server, t.name)
                why = (
                    "every tool is qualified"
                    if namespace == "always"
                    else (f"also defined by {', '.join(repr(s) for s in clashes[t.name] if s != server)}")
                )
                report.add_note(repr(t.name), f"on server {server!r} renamed {name!r} ({why})")
            if name in origins:
                other = origins[name][0]
                raise CatalogError(
                    f"tool {name!r} from server {server!r} clashes with a tool of server {other!r} "
                    "even after qualification; rename one of the servers"
                )
            origins[name] = (server, t.name)
            tools.append(t if name == t.name else dataclasses.replace(t, name=name))
    return ToolCatalog(tools, source=source or "+".join(servers), report=report, origins=origins)
