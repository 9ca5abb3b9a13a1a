"""MCP config files (Claude Desktop, VS Code, Cursor), several servers merged with namespacing, the
environment a server gets, and the streamable-HTTP and SSE transports, against real servers on this machine
(tests/mcp_test_server.py over stdio, and the same server over HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolsearch_lab.catalog.container import CatalogError, ToolCatalog
from toolsearch_lab.catalog.errors import ServerFailure
from toolsearch_lab.catalog.live import connect_mcp_config
from toolsearch_lab.catalog.mcp_config import load_mcp_config
from toolsearch_lab.catalog.merge import PROVIDER_NAME_PATTERN, merge_catalogs, qualified_name
from toolsearch_lab.model import Tool
from toolsearch_lab.secrets import scrub

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
TOKEN = "tok-" + "0123456789abcdef-secret"


def _stdio(**extra):
    return {"command": sys.executable, "args": [SERVER], **extra}


# ---------------------------------------------------------------------------------------- the formats


def test_the_three_formats_give_the_same_servers(tmp_path):
    claude = {"mcpServers": {"git": _stdio(env={"A": "1"}), "web": {"url": "http://127.0.0.1:1/mcp"}}}
    vscode = {
        "servers": {
            "git": {"type": "stdio", **_stdio(env={"A": "1"})},
            "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
        }
    }
    (tmp_path / ".cursor").mkdir()
    cursor_path = tmp_path / ".cursor" / "mcp.json"
    cursor_path.write_text(json.dumps(claude))
    for document in (claude, vscode, cursor_path):
        config = load_mcp_config(document)
        assert [(s.name, s.transport) for s in config.servers] == [("git", "stdio"), ("web", "http")]
        git = config.servers[0]
        assert git.command == sys.executable and git.args == (SERVER,) and git.env["A"].reveal() == "1"


def test_variables_come_from_the_environment_and_never_show(tmp_path):
    (tmp_path / ".vscode").mkdir()
    path = tmp_path / ".vscode" / "mcp.json"
    document = {
        "servers": {
            "api": {
                "type": "sse",
                "url": "http://127.0.0.1:9/sse?token=${env:MY_TOKEN}",
                "headers": {"Authorization": "Bearer ${MY_TOKEN}"},
            },
            "local": {"command": "run", "args": ["--root", "${workspaceFolder}", "--key=${MY_TOKEN}"]},
            "off": {"command": "x", "disabled": True},
        }
    }
    path.write_text(json.dumps(document))
    config = load_mcp_config(path, environ={"MY_TOKEN": TOKEN})
    api, local = config.servers
    assert config.skipped == ("off",)
    assert api.headers["Authorization"].reveal() == f"Bearer {TOKEN}" and TOKEN in api.url.reveal()
    assert local.args == ("--root", str(tmp_path.resolve()), f"--key={TOKEN}")
    for shown in (repr(config), repr(api), repr(local), api.shown_url, local.shown_command):
        assert TOKEN not in shown, shown


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "env": {"K": "${NOPE}"}}, r"server 'a'.*'env.K'.*'NOPE' is not set"),
        ({"command": "${input:key}"}, r"VS Code prompt"),
        ({"type": "websocket", "url": "ws://x"}, r"'type' must be stdio, http or sse"),
        ({"args": ["x"]}, r"server 'a'.*needs 'command'"),
        ({"type": "http"}, r"server 'a'.*needs 'url'"),
        ({"command": "x", "args": "x y"}, r"'args' must be a list"),
        ("npx server", r"server 'a' must be an object, got str"),
    ],
)
def test_a_bad_entry_is_named_with_its_field_and_costs_only_itself(entry, message):
    config = load_mcp_config({"servers": {"a": entry, "ok": {"command": "run"}}}, environ={})
    assert [s.name for s in config.servers] == ["ok"]
    assert list(config.invalid) == ["a"] and re.search(message, config.invalid["a"])


def test_a_config_without_servers_is_refused_whole():
    with pytest.raises(CatalogError, match=r"no 'mcpServers' .* or 'servers'"):
        load_mcp_config({"tools": []}, environ={})


def test_a_missing_or_broken_file_is_named(tmp_path):
    with pytest.raises(CatalogError, match="no such MCP config file"):
        load_mcp_config(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(CatalogError, match=r"bad.json: not a JSON MCP config"):
        load_mcp_config(tmp_path / "bad.json")


# ---------------------------------------------------------------------------------------- namespacing


def test_qualified_names_fit_the_providers_rule_and_stay_unique():
    assert qualified_name("git alpha", "git_status") == "git_alpha__git_status"
    long = [qualified_name("a-very-long-server-name-" * 3, f"tool_{i}_" + "x" * 60) for i in range(3)]
    assert all(PROVIDER_NAME_PATTERN.match(n) for n in long) and len(set(long)) == 3
    assert PROVIDER_NAME_PATTERN.match(qualified_name("s", "weird.name:v1"))


def test_merge_qualifies_only_collisions_and_reports_each_rename():
    def catalog(*names):
        return ToolCatalog([Tool(n, f"does {n}") for n in names])

    merged = merge_catalogs({"alpha": catalog("status", "log"), "beta": catalog("status", "diff")})
    assert merged.names == ["alpha__status", "log", "beta__status", "diff"]
    assert merged.origins["beta__status"] == ("beta", "status")
    assert len(merged.report.notes) == 2 and "also defined by 'alpha'" in str(merged.report)
    assert merge_catalogs({"a": catalog("x")}, namespace="always").names == ["a__x"]
    with pytest.raises(CatalogError, match=r"'status' is defined by servers 'alpha', 'beta'"):
        merge_catalogs({"alpha": catalog("status"), "beta": catalog("status")}, namespace="never")


# ---------------------------------------------------------------------------------------- live servers


@pytest.mark.slow
def test_two_servers_with_the_same_tools_load_side_by_side_and_calls_reach_each(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    echo = {"TOOLSEARCH_LAB_TEST_ECHO_ENV": "1"}
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        json.dumps({"mcpServers": {"alpha": _stdio(env=echo), "beta": _stdio(env={**echo, "WHO": "beta"})}})
    )
    with connect_mcp_config(path, pass_env=["MY_TOKEN"]) as servers:
        catalog = servers.catalog
        assert {"alpha__add", "beta__add", "alpha__echo_env", "beta__echo_env"} <= set(catalog.names)
        assert len(catalog) == 12 and not servers.failures and list(servers.connections) == ["alpha", "beta"]
        assert catalog.get("alpha__add").function(a=2, b=3) == "5"
        assert catalog.get("beta__echo_env").function(name="WHO") == "beta"
        assert catalog.get("alpha__echo_env").function(name="WHO") == "<unset>"
        # passed on request (the server has it, and echoes it back as data), and registered by its name:
        # hidden wherever it is shown or sent to a model
        echoed = catalog.get("alpha__echo_env").function(name="MY_TOKEN")
        assert echoed == TOKEN and scrub(echoed) == "***"
        assert TOKEN not in repr(servers.connections) and TOKEN not in str(catalog.source)
        assert TOKEN not in repr(servers)


@pytest.mark.slow
def test_a_server_that_cannot_start_is_named_and_the_others_still_load(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps({"servers": {"good": _stdio(), "broken": {"command": str(tmp_path / "no-such-binary")}}})
    )
    with connect_mcp_config(path) as servers:
        catalog = servers.catalog
        assert catalog.names == ["add", "get_weather", "fail", "slow", "crash"]
        assert list(servers.failures) == ["broken"] and "no-such-binary" in servers.failures["broken"]
        assert catalog.report.failed_servers == servers.failures  # the catalog keeps them as data
        assert "failed to start" in str(catalog.report) and "broken" in str(catalog.report)
        assert [p.failure for p in catalog.report.problems] == [ServerFailure.START]
        assert "1 connected: good, 1 failed: broken; 5 tools" in repr(servers)
    with pytest.raises(CatalogError, match=r"1 of 2 server\(s\) failed to start: 'broken': .*no-such-binary"):
        connect_mcp_config(path, strict=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=["--http", "--sse"])
def http_server(request):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, request.param, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"the test MCP server exited with {proc.returncode}")
            time.sleep(0.1)
    path = "/mcp" if request.param == "--http" else "/sse"
    yield request.param.strip("-"), f"http://127.0.0.1:{port}{path}"
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.slow
def test_an_http_server_from_a_config_lists_and_calls_tools(http_server, tmp_path):
    kind, url = http_server
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps({"servers": {"remote": {"type": kind, "url": url, "headers": {"X-Token": TOKEN}}}})
    )
    with connect_mcp_config(path) as servers:
        assert servers.catalog.names == ["add", "get_weather", "fail", "slow", "crash"]
        assert servers.catalog.get("add").function(a=40, b=2) == "42"
        assert TOKEN not in repr(servers.connections["remote"])
