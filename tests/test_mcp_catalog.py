"""MCP catalogs against a real stdio server subprocess (tests/mcp_test_server.py, official SDK)."""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from pathlib import Path

import pytest

from toolsearch_lab.catalog.container import ToolCatalog, tools_from_json
from toolsearch_lab.catalog.export import to_mcp_tools, to_openai_tools
from toolsearch_lab.catalog.live import McpServers, catalog_from_connection, connect_mcp_stdio
from toolsearch_lab.catalog.mcp import McpConnection, McpToolError
from toolsearch_lab.model import Tool

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


@pytest.fixture(scope="module")
def server():
    # timeout bounds each request (the 'slow' tool test relies on it); start-up has its own 30 s default.
    with connect_mcp_stdio(sys.executable, [SERVER], name="test", timeout=1.5) as servers:
        yield servers


@pytest.fixture
def catalog(server):
    return server.catalog


@pytest.fixture
def connection(server):
    return server.connections["test"]


def test_lists_tools_with_their_schemas(catalog, connection):
    assert catalog.names == ["add", "get_weather", "fail", "slow", "crash"]
    add = catalog.get("add")
    assert add.description.startswith("Add two integers.")
    assert add.parameters["type"] == "object"
    assert add.parameters["properties"]["a"]["type"] == "integer"
    assert add.parameters["required"] == ["a", "b"]
    weather = catalog.get("get_weather").parameters
    assert weather["required"] == ["city"] and weather["properties"]["unit"]["default"] == "celsius"
    assert catalog.source.startswith("mcp:") and catalog.report.ok
    assert connection.alive and connection.server_info.name == "toolsearch-lab-test-server"


def test_call_round_trip_returns_text(catalog):
    assert catalog.get("add").function(a=2, b=40) == "42"
    weather = catalog.get("get_weather").function(city="Paris")
    assert '"city": "Paris"' in weather and '"unit": "celsius"' in weather


def test_tool_errors_raise_with_the_servers_message(catalog, connection):
    with pytest.raises(McpToolError, match=r"MCP tool 'fail' reported an error: .*boom"):
        catalog.get("fail").function(message="boom")
    with pytest.raises(McpToolError, match=r"MCP tool 'add' reported an error: .*validation error"):
        catalog.get("add").function(a="not a number", b=1)
    with pytest.raises(McpToolError, match=r"MCP tool 'nope' reported an error: Unknown tool: nope"):
        connection.call_tool("nope", {})


def test_stuck_tool_times_out_and_the_session_stays_usable(catalog):
    started = time.monotonic()
    with pytest.raises(McpToolError, match=r"tool 'slow' failed: no answer within the 1.5 s timeout"):
        catalog.get("slow").function(seconds=30)
    assert time.monotonic() - started < 30  # cut by the timeout, not the tool's answer
    assert catalog.get("add").function(a=1, b=1) == "2"


def test_server_dying_mid_session_fails_fast_is_restarted_once_then_stays_down():
    connection = McpConnection(sys.executable, [SERVER], timeout=10)
    try:
        tools = catalog_from_connection(connection)
        assert tools.get("add").function(a=1, b=2) == "3"
        started = time.monotonic()
        with pytest.raises(
            McpToolError,
            match=r"tool 'crash' failed: the server closed the connection.*"
            r"the server was restarted \(1 of 1\): call again",
        ):
            tools.get("crash").function()
        assert tools.get("add").function(a=1, b=2) == "3" and connection.alive
        assert connection.restarts == ["tool 'crash': the server closed the connection (did it exit?)"]
        with pytest.raises(McpToolError, match=r"restarted 1 time\(s\) already, so it stays down"):
            tools.get("crash").function()
        with pytest.raises(McpToolError, match=r"tool 'add' failed: the server closed the connection"):
            tools.get("add").function(a=1, b=2)
        assert not connection.alive
        assert time.monotonic() - started < 15  # far below two 10 s request timeouts: no hang
    finally:
        connection.close()
    with pytest.raises(McpToolError, match="connection is closed"):
        connection.call_tool("add", {"a": 1, "b": 2})
    connection.close()  # idempotent


def test_server_that_cannot_start_is_reported_with_its_stderr():
    started = time.monotonic()
    with pytest.raises(McpToolError, match=r"(?s)failed to start.*server stderr.*no server here"):
        McpConnection(
            sys.executable,
            ["-c", "import sys; sys.stderr.write('no server here\\n'); sys.exit(3)"],
            timeout=2,
            startup_timeout=10,
        )
    assert time.monotonic() - started < 10
    with pytest.raises(McpToolError, match=r"failed to start: .*"):
        McpConnection("/nonexistent/mcp-server-binary", timeout=2, startup_timeout=5)


def test_bad_timeouts_are_rejected():
    with pytest.raises(ValueError, match="timeouts must be > 0"):
        McpConnection(sys.executable, [SERVER], timeout=0)


@pytest.mark.slow
def test_slow_starting_server_gets_the_startup_timeout_not_the_request_timeout():
    """A cold server on a busy machine needs seconds to start; the per-request timeout must not apply to
    the handshake (it did: timeout=0.5 failed every server that took longer than that to import its SDK)."""
    slow_start = (
        f"import runpy, sys, time; time.sleep(2); sys.argv = [{SERVER!r}]; "
        f"runpy.run_path({SERVER!r}, run_name='__main__')"
    )
    with connect_mcp_stdio(sys.executable, ["-c", slow_start], timeout=0.5) as servers:
        (connection,) = servers.connections.values()
        assert connection.startup_timeout == 30.0
        assert servers.catalog.get("add").function(a=2, b=3) == "5"


def test_server_that_exits_during_startup_fails_fast_despite_the_long_startup_timeout():
    started = time.monotonic()
    with pytest.raises(McpToolError, match=r"(?s)failed to start.*exit code 5 here"):
        connect_mcp_stdio(
            sys.executable, ["-c", "import sys; sys.stderr.write('exit code 5 here\\n'); sys.exit(5)"]
        )
    assert time.monotonic() - started < 15  # hang guard: the default startup_timeout is 30 s


def test_live_import_keeps_title_annotations_and_output_schema_and_exports_them_unchanged():
    env = {"TOOLSEARCH_LAB_TEST_ANNOTATED": "1"}
    with connect_mcp_stdio(sys.executable, [SERVER], env, timeout=10) as servers:
        cat = servers.catalog
        drop = cat.get("drop_table")
        assert drop.title == "Drop a table"
        assert drop.annotations == {"title": "Drop table", "readOnlyHint": False, "destructiveHint": True}
        assert (
            drop.output_schema is not None and drop.output_schema["properties"]["dropped"]["type"] == "string"
        )
        assert drop.destructive and not cat.get("add").destructive
        # The SDK gives every typed tool an output schema; the import keeps it too.
        assert cat.get("add").output_schema["properties"]["result"]["type"] == "integer"
        assert json.loads(drop.function(table="users")) == {"dropped": "users"}
        # What the server sent is what the MCP export writes: the round trip is lossless.
        (connection,) = servers.connections.values()
        sent, _ = connection.tool_records()
        assert to_mcp_tools(cat)["tools"] == sent


# ------------------------------------------------------------- the catalog is a value; the servers are not


def test_a_live_catalog_copies_compares_and_exports_without_its_server(tmp_path):
    """The catalog of a running server is a value: copies (shallow and deep) equal it, their tools still
    call the server while it runs, and after it is stopped copying, comparing and exporting still work."""
    with connect_mcp_stdio(sys.executable, [SERVER], timeout=10) as servers:
        catalog = servers.catalog
        shallow, deep = copy.copy(catalog), copy.deepcopy(catalog)
        assert shallow == catalog and deep == catalog and deep is not catalog
        assert (deep.source, deep.report, dict(deep.origins)) == (catalog.source, catalog.report, {})
        assert deep.get("add").function(a=20, b=22) == "42"  # the copy's tool calls the live server
        (connection,) = servers.connections.values()
    assert not connection.alive
    later = copy.deepcopy(catalog)  # no process left to touch
    assert later == catalog and to_mcp_tools(later) == to_mcp_tools(catalog)
    assert tools_from_json(to_mcp_tools(later), format="mcp") == catalog
    assert [t["function"]["name"] for t in to_openai_tools(later)] == catalog.names
    with pytest.raises(McpToolError, match="connection is closed"):
        later.get("add").function(a=1, b=2)


def test_a_catalog_holds_no_connection_and_takes_no_new_attributes():
    catalog = ToolCatalog([Tool("status", "Shows the status")], origins={"status": ("git", "git_status")})
    for removed in ("connection", "connections", "failures", "close", "from_mcp", "from_mcp_stdio"):
        assert not hasattr(catalog, removed), removed
    with pytest.raises(AttributeError):
        catalog.connection = object()  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        catalog.source = "elsewhere"  # type: ignore[misc]
    with pytest.raises(TypeError):
        catalog.origins["status"] = ("other", "status")  # type: ignore[index]
    assert catalog.origins == {"status": ("git", "git_status")}


def test_closing_the_servers_stops_the_server_process(tmp_path):
    pid_file = tmp_path / "pid"
    started = (
        f"import os, runpy, sys; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        f"sys.argv = [{SERVER!r}]; runpy.run_path({SERVER!r}, run_name='__main__')"
    )
    servers = connect_mcp_stdio(sys.executable, ["-c", started], name="pid", timeout=10)
    assert isinstance(servers, McpServers) and list(servers.connections) == ["pid"]
    assert "1 connected: pid" in repr(servers) and "5 tools" in repr(servers)
    pid = int(pid_file.read_text())
    os.kill(pid, 0)  # running
    servers.close()
    servers.close()  # closing twice is fine
    deadline = time.monotonic() + 30  # a bound for a busy machine, not a speed check
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid)
    assert not servers.connections["pid"].alive and len(servers.catalog) == 5


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
