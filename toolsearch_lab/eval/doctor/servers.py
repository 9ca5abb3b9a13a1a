"""Duplicate servers: two servers of one configuration that expose the same tools.

A common set-up runs one server per repository, database or folder (two ``mcp-server-git`` servers, one per
repository). A client then sees every tool twice: the request carries both copies, a search returns both,
and the model has to guess which copy works on which repository. When the tools take that choice as an
argument (``repo_path``), one server already reaches both, and the other can go. The finding names which
server to drop (the later one in the configuration) and why one is enough.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from toolsearch_lab.eval.doctor.report import Finding, plural
from toolsearch_lab.model import Tool

__all__ = ["duplicate_servers", "duplicate_server_findings"]

# A required parameter whose name says it picks the data the tool works on (a path, a repository, a URL).
_LOCATION = re.compile(r"path|repo|dir|folder|root|url|uri|database|db|project|workspace", re.IGNORECASE)


def _signature(tools: Sequence[Tool], originals: Mapping[str, str]) -> tuple[str, ...]:
    """What a server offers, independent of the names the merge gave its tools."""
    return tuple(
        sorted(
            json.dumps([originals.get(t.name, t.name), t.description, t.parameters], sort_keys=True)
            for t in tools
        )
    )


def duplicate_servers(
    tools: Sequence[Tool], servers: Mapping[str, str], originals: Mapping[str, str]
) -> dict[str, str]:
    """{server to drop: the server it duplicates}: servers whose tools (names on the server, descriptions,
    parameters) are exactly another server's; the first server of a group is kept."""
    by_server: dict[str, list[Tool]] = {}
    for tool in tools:
        if tool.name in servers:
            by_server.setdefault(servers[tool.name], []).append(tool)
    kept: dict[tuple[str, ...], str] = {}
    out: dict[str, str] = {}
    for server, own in by_server.items():
        signature = _signature(own, originals)
        if signature in kept:
            out[server] = kept[signature]
        else:
            kept[signature] = server
    return out


def location_parameters(tools: Sequence[Tool]) -> list[str]:
    """The required parameters, common to the tools, that choose what they work on (``repo_path``)."""
    counts: dict[str, int] = {}
    for tool in tools:
        required = tool.parameters.get("required")
        for name in required if isinstance(required, list) else ():
            if isinstance(name, str) and _LOCATION.search(name):
                counts[name] = counts.get(name, 0) + 1
    return sorted((n for n, c in counts.items() if c * 2 >= len(tools)), key=lambda n: -counts[n])


def duplicate_server_findings(
    tools: Sequence[Tool], servers: Mapping[str, str], duplicates: Mapping[str, str]
) -> list[Finding]:
    """One warning per duplicate server: which to drop, which covers it, and why one is enough."""
    out = []
    for dropped, kept in duplicates.items():
        own = [t for t in tools if servers.get(t.name) == dropped]
        where = location_parameters(own)
        why = (
            f"their tools take {where[0]} on every call, so one server reaches what both reach once it is "
            f"not pinned to one location (start {kept!r} without such an argument, e.g. mcp-server-git's "
            "--repository)"
            if where
            else "one copy serves every request unless the two servers see different data the tools "
            "cannot choose between (then keep both and rename one server's tools)"
        )
        out.append(
            Finding(
                "warning",
                "duplicate-server",
                "",
                f"servers {kept!r} and {dropped!r} expose the same {plural(len(own), 'tool')} (names on the "
                "server, descriptions and parameters): every request carries both copies, a search returns "
                "both, and the model has to guess which copy to call",
                f"drop {dropped!r} and keep {kept!r}: {why}",
                0.8,
                [t.name for t in own],
                {"drop": dropped, "keep": kept, "location_parameters": where},
            )
        )
    return out
