"""A small real MCP server (official SDK, stdio) for the integration tests of ``toolsearch_lab.catalog.mcp``.

Run: ``python tests/mcp_test_server.py``. Tools: ``add``, ``get_weather`` (structured output), ``fail``
(raises, so the result has is_error), ``slow`` (sleeps) and ``crash`` (the process exits at once, to simulate
a server that dies mid-session); with ``TOOLSEARCH_LAB_TEST_ECHO_ENV`` set, also ``echo_env``;
with ``TOOLSEARCH_LAB_TEST_ANNOTATED`` set, also ``drop_table`` (MCP title, annotations, output schema).
``--http PORT`` or ``--sse PORT`` serves on 127.0.0.1 instead of stdio."""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("toolsearch-lab-test-server")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


@server.tool()
def get_weather(city: str, unit: str = "celsius") -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temperature": 21, "unit": unit}


@server.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


@server.tool()
def slow(seconds: float) -> str:
    """Sleep for a while, then answer."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def crash() -> str:
    """Kill the server process immediately (simulates a server dying mid-session)."""
    os._exit(1)


if os.environ.get("TOOLSEARCH_LAB_TEST_ECHO_ENV"):

    @server.tool()
    def echo_env(name: str) -> str:
        """The value of an environment variable of the server process (tests of what reaches a server)."""
        return os.environ.get(name, "<unset>")


if os.environ.get("TOOLSEARCH_LAB_TEST_ANNOTATED"):
    from typing import TypedDict

    from mcp.types import ToolAnnotations

    class Dropped(TypedDict):
        dropped: str

    @server.tool(
        title="Drop a table",
        annotations=ToolAnnotations(title="Drop table", destructive_hint=True, read_only_hint=False),
    )
    def drop_table(table: str) -> Dropped:
        """Drop a table from the database (MCP title, annotations and output schema, for the import tests)."""
        return {"dropped": table}


if __name__ == "__main__":
    # `--http PORT` / `--sse PORT` serve on 127.0.0.1 instead of stdio (the HTTP transport tests).
    if len(sys.argv) == 3 and sys.argv[1] in ("--http", "--sse"):
        kind = "streamable-http" if sys.argv[1] == "--http" else "sse"
        server.run(kind, host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
