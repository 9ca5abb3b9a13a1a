"""``toolsearch-lab snapshot``: a live MCP setup's tool list saved as a catalog file, which every command
reads offline.

The file is the MCP ``tools/list`` shape, each record as its server sent it plus the server's name, inside
a wrapper that says where it came from::

    {"snapshot": "toolsearch-lab", "source": "<config file>", "taken": "<UTC time>",
     "servers": {"<server>": {"transport": "stdio", "command": "<command line>", "tools": 12,
                              "server_info": {"name": ..., "version": ...}}, ...},
     "failed": {"<server>": "<why it did not start>"},          # only when one failed
     "tools": [{"name": "<catalog name>", "description": ..., "inputSchema": {...},
                "server": "<server>", "serverTool": "<name on the server, when it was qualified>"}, ...]}

``load_catalog`` (``--catalog FILE`` of every command) reads it like any ``{"tools": [...]}`` document and
keeps each tool's server in ``catalog.origins``. Each record is the server's ``tools/list`` record byte for
byte (a snapshot is data: a timezone in a description stays, and so would a secret a server chose to write
there; every command shows it with registered secrets hidden). No ``env`` or ``headers`` value is written,
and command lines and URLs are written with their secrets hidden (the secret values in ``args``, userinfo,
query values).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from toolsearch_lab.cli.live_servers import add_live_options, live_config, open_servers
from toolsearch_lab.cli.options import EXIT_OK, add_command

if TYPE_CHECKING:
    from toolsearch_lab.catalog.live import McpServers

NAME = "snapshot"
SUMMARY = "save the tools of live MCP servers as a catalog file the other commands read offline"
MARKER = "toolsearch-lab"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Start the servers of an MCP config file (or --mcp commands), list their tools and write them to\n"
        "one catalog file, each tool with its server, names qualified where servers share one. Every\n"
        "command reads it with --catalog FILE, without starting anything.\n"
        "example: toolsearch-lab snapshot --mcp-config claude_desktop_config.json -o catalog.json",
    )
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="the catalog file to write")
    add_live_options(parser, takes_file=False)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.atomic import write_text

    config = live_config(args)
    if config is None:
        raise ValueError("give --mcp-config FILE or --mcp COMMAND: the servers to take the tools of")
    with ExitStack() as stack:
        servers = open_servers(config, args, stack, command=NAME)
        document = snapshot_document(servers, {s.name: s for s in config.servers}, config.source)
    write_text(args.output, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    servers = document["servers"]
    print(
        f"wrote {args.output}: {len(document['tools'])} tools from {len(servers)} "
        f"server{'s' if len(servers) != 1 else ''} ({', '.join(servers)})"
        + (f"; failed to start: {', '.join(document['failed'])}" if document.get("failed") else ""),
        file=sys.stdout,
    )
    return EXIT_OK


def snapshot_document(live: McpServers, servers: dict[str, Any], source: str) -> dict:
    """The snapshot of running servers (``connect_mcp_config``): see the module docstring."""
    catalog = live.catalog
    records: dict[tuple[str, str], dict] = {}
    for server, connection in live.connections.items():
        listing = connection.last_listing or connection.listing()  # the listing the catalog was made from
        for record in listing.records:
            if isinstance(record, dict) and isinstance(record.get("name"), str):
                records[(server, record["name"])] = record
    tools = []
    counts: dict[str, int] = dict.fromkeys(live.connections, 0)
    for t in catalog:
        server, original = catalog.origins[t.name]
        record = dict(records[(server, original)])
        record["name"] = t.name
        record["server"] = server
        if original != t.name:
            record["serverTool"] = original
        tools.append(record)
        counts[server] += 1
    described = {}
    for name, connection in live.connections.items():
        config = servers[name]
        where = {"url": config.shown_url} if config.url is not None else {"command": config.shown_command}
        info = connection.server_info
        described[name] = {
            "transport": config.transport,
            **where,
            "tools": counts[name],
            **({"server_info": {"name": info.name, "version": info.version}} if info is not None else {}),
        }
    document: dict[str, Any] = {
        "snapshot": MARKER,
        "source": source,
        "taken": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "servers": described,
    }
    if live.failures:
        document["failed"] = dict(live.failures)
    document["tools"] = tools
    return document
