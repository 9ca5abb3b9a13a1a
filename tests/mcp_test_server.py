"""A small real MCP server (official SDK, stdio) for the integration tests of ``toolsearch_lab.catalog.mcp``.

Run: ``python tests/mcp_test_server.py``. Tools: ``add``, ``get_weather`` (structured output), ``fail``
(raises, so the result has is_error), ``slow`` (sleeps) and ``crash`` (the process exits at once, to simulate
a server that dies mid-session)."""

from __future__ import annotations

import os
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


if __name__ == "__main__":
    server.run()
