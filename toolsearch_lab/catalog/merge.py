"""One catalog from several servers' catalogs, with tool names qualified by their server when they collide.

The scheme: ``<server>__<tool>``, where ``<server>`` is the server's name from the config reduced to
``[A-Za-z0-9_-]`` (``git alpha`` becomes ``git_alpha``). Providers accept tool names matching
``^[a-zA-Z0-9_-]{1,64}$`` (:data:`~toolsearch_lab.model.PROVIDER_NAME_PATTERN`), so a qualified name longer
than 64 characters keeps its tool part whole where it can, shortens the server part and adds 6 hex
characters of a hash of the full name, which keeps it unique. A tool's ``function`` still calls the
original name on its own server: only the name the model sees changes.

Nothing here aborts a merge that can be made: two servers whose names reduce to one slug (``git alpha`` and
``git_alpha``) get distinct ones (``git_alpha``, ``git_alpha_2``), and a qualified name that is still taken
(server ``a`` has tools ``t`` and ``a__t``) gets the hash suffix; each with a note.

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
from toolsearch_lab.catalog.errors import CatalogError, CatalogReport, NoteKind
from toolsearch_lab.model import PROVIDER_NAME_PATTERN, Tool

__all__ = [
    "NAMESPACES",
    "NameCollisionError",
    "Namespace",
    "PROVIDER_NAME_PATTERN",
    "SEPARATOR",
    "merge_catalogs",
    "qualified_name",
]

Namespace = Literal["auto", "always", "never"]
NAMESPACES: tuple[Namespace, ...] = get_args(Namespace)
SEPARATOR = "__"
_MAX = 64
_HASH = 6


def _slug(server: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", server).strip("_")
    return slug or "server"


def qualified_name(server: str, tool: str, *, hashed: bool = False, slug: str | None = None) -> str:
    """``server__tool`` within the providers' name rule (see the module docstring). ``hashed=True`` always
    adds the hash suffix (for a qualified name that is already taken); ``slug`` replaces the server's own."""
    safe_tool = re.sub(r"[^A-Za-z0-9_-]+", "_", tool)
    server_slug = slug or _slug(server)
    name = f"{server_slug}{SEPARATOR}{safe_tool}"
    if len(name) <= _MAX and safe_tool == tool and not hashed:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH]
    room = _MAX - len(SEPARATOR) - _HASH - 1  # server part + tool part
    tool_part = safe_tool[: max(room - 8, room // 2)]
    server_part = server_slug[: room - len(tool_part)]
    return f"{server_part}{SEPARATOR}{tool_part}_{digest}"


def _unique_slugs(servers: list[str], report: CatalogReport) -> dict[str, str]:
    """Each server's slug, made unique (``git_alpha``, ``git_alpha_2``) when two reduce to one."""
    slugs: dict[str, str] = {}
    taken: set[str] = set()
    for server in servers:
        slug, n = _slug(server), 2
        while slug in taken:
            slug, n = f"{_slug(server)}_{n}", n + 1
        if slug != _slug(server):
            first = next(s for s in servers if _slug(s) == _slug(server))
            why = f"qualifies its tools as {slug!r}: {first!r} reduces to {_slug(server)!r}"
            report.add_note(f"server {server!r}", why, NoteKind.SERVER)
        taken.add(slug)
        slugs[server] = slug
    return slugs


class NameCollisionError(CatalogError):
    """``namespace="never"`` and two servers define the tool ``name``. The message names the setting as
    Python spells it; :meth:`said_with` names it another way (the CLI's ``--namespace``)."""

    def __init__(self, name: str, servers: Sequence[str]) -> None:
        self.name, self.servers = name, tuple(servers)
        super().__init__(self.said_with("namespace='never'", "pass namespace='auto'"), tool=name)

    def said_with(self, never: str, auto: str) -> str:
        return (
            f"tool {self.name!r} is defined by servers {', '.join(map(repr, self.servers))} ({never}); "
            f"{auto} to qualify it as {qualified_name(self.servers[0], self.name)!r} and so on"
        )


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
        raise NameCollisionError(name, where)
    report = CatalogReport()
    slugs = _unique_slugs(servers, report)
    tools: list[Tool] = []
    origins: dict[str, tuple[str, str]] = {}
    # Names kept as they are come first, so a qualified name never takes a name a tool already has.
    plain = set() if namespace == "always" else {t.name for _, c in items for t in c} - set(clashes)
    for server, catalog in items:
        report.problems.extend(catalog.report.problems)
        report.notes.extend(catalog.report.notes)
        report.failed_servers.update(catalog.report.failed_servers)
        for t in catalog:
            on_server = catalog.origins.get(t.name, (server, t.name))[1]
            name = t.name
            if namespace == "always" or t.name in clashes:
                name = qualified_name(server, t.name, slug=slugs[server])
                kind = NoteKind.QUALIFIED if namespace == "always" else NoteKind.SHARED
                why = (
                    "every tool is qualified"
                    if namespace == "always"
                    else (f"also defined by {', '.join(repr(s) for s in clashes[t.name] if s != server)}")
                )
                if name in origins or (name in plain and name != t.name):
                    name = qualified_name(server, t.name, hashed=True, slug=slugs[server])
                    why += f"; {qualified_name(server, t.name, slug=slugs[server])!r} was taken"
                    kind = NoteKind.QUALIFIED
                report.add_note(repr(t.name), f"on server {server!r} renamed {name!r} ({why})", kind)
            if name in origins:  # cannot happen after the hash suffix unless a server names its tool so
                raise CatalogError(
                    f"tool {name!r} from server {server!r} clashes with a tool of server "
                    f"{origins[name][0]!r} even after qualification; rename one of the servers"
                )
            origins[name] = (server, on_server)
            tools.append(t if name == t.name else dataclasses.replace(t, name=name))
    return ToolCatalog(tools, source=source or "+".join(servers), report=report, origins=origins)
