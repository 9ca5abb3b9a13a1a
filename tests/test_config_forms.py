"""Config forms real clients accept (issue 30, finding 7) and tools that write (finding 8):
``${VAR:-default}``, VS Code's ``envFile``, FastMCP's ``"transport"``, keys named twice, and
``--destructive`` on the commands that call live tools, with ``compare`` running each call once across its
rows."""

from __future__ import annotations

import json
import re

import pytest
from hostile_support import HOSTILE, PY, cli, stdio, write_config

from toolsearch_lab.catalog.container import CatalogError, load_catalog
from toolsearch_lab.catalog.live import connect_mcp_config
from toolsearch_lab.catalog.mcp_config import load_mcp_config
from toolsearch_lab.secrets import scrub

SECRET = "envfile-SECRET-4b8d1e"


@pytest.mark.parametrize(
    "written, environ, expected",
    [
        ("${MODE:-ok}", {}, "ok"),
        ("${MODE:-ok}", {"MODE": ""}, "ok"),  # empty counts as unset, as in a shell
        ("${MODE:-ok}", {"MODE": "dots"}, "dots"),
        ("${env:MODE:-ok,meta}", {}, "ok,meta"),
        ("pre-${A:-x}-${B:-y}", {"B": "b"}, "pre-x-b"),
    ],
)
def test_a_variable_with_a_default_takes_the_default_when_unset_or_empty(
    tmp_path, written, environ, expected
):
    config = write_config(tmp_path / "c.json", {"s": {"command": PY, "args": [HOSTILE, written]}})
    assert load_mcp_config(config, environ=environ).servers[0].args == (HOSTILE, expected)


def test_a_variable_without_a_default_must_be_set(tmp_path):
    config = write_config(tmp_path / "c.json", {"s": {"command": PY, "args": ["${MODE}"]}})
    assert "environment variable 'MODE' is not set" in load_mcp_config(config, environ={}).invalid["s"]


def test_vs_codes_env_file_reaches_the_server_and_its_secrets_stay_hidden(tmp_path):
    (tmp_path / ".env").write_text(
        f'# a comment\nexport API_TOKEN={SECRET}\nQUOTED="a b c"\nBOTH=file\nTZ=Europe/Amsterdam\n',
        encoding="utf-8",
    )
    config = write_config(
        tmp_path / "mcp.json",
        {"s": {"type": "stdio", **stdio("ok"), "envFile": "${workspaceFolder}/.env", "env": {"BOTH": "env"}}},
        key="servers",
    )
    parsed = load_mcp_config(config).servers[0]
    assert sorted(parsed.env) == ["API_TOKEN", "BOTH", "QUOTED", "TZ"] and SECRET not in repr(parsed)
    with connect_mcp_config(config, timeout=10) as servers:
        echo = servers.catalog.get("echo_env").function
        assert echo(name="QUOTED") == "a b c" and echo(name="BOTH") == "env"  # env wins over the file
        # it reached the server, comes back as data, and is a secret by its name wherever it is shown
        assert echo(name="API_TOKEN") == SECRET and scrub(f"token {SECRET}") == "token ***"
        assert scrub("local timezone Europe/Amsterdam") == "local timezone Europe/Amsterdam"  # no secret
    broken = write_config(tmp_path / "b.json", {"s": {**stdio("ok"), "envFile": "missing.env"}})
    assert re.search(r"'envFile' .*missing.env.* cannot be read", load_mcp_config(broken).invalid["s"])


@pytest.mark.parametrize(
    "entry, transport",
    [
        ({"url": "http://127.0.0.1:9/sse", "transport": "sse"}, "sse"),
        ({"url": "http://127.0.0.1:9/mcp", "transport": "streamable-http"}, "http"),
        ({"url": "http://127.0.0.1:9/mcp", "type": "http", "transport": "http"}, "http"),
        ({"command": "x", "transport": "stdio"}, "stdio"),
    ],
)
def test_fastmcps_transport_key_is_read_like_type(tmp_path, entry, transport):
    config = write_config(tmp_path / "c.json", {"s": entry})
    assert load_mcp_config(config).servers[0].transport == transport


def test_type_and_transport_disagreeing_is_an_error_naming_both(tmp_path):
    config = write_config(
        tmp_path / "c.json", {"s": {"url": "http://h/x", "type": "http", "transport": "sse"}}
    )
    assert "'type' says http but 'transport' says sse" in load_mcp_config(config).invalid["s"]


@pytest.mark.parametrize(
    "text, path",
    [
        ('{"mcpServers": {"git": {"command": "a"}, "git": {"command": "b"}}}', "mcpServers.git"),
        ('{"mcpServers": {"s": {"command": "a", "env": {"K": "1", "K": "2"}}}}', "mcpServers.s.env.K"),
        ('{"servers": {}, "servers": {"s": {"command": "a"}}}', "servers"),
    ],
)
def test_a_config_naming_a_key_twice_is_refused_by_its_path(tmp_path, text, path):
    (tmp_path / "dup.json").write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError, match=rf"names '{path.rsplit('.', 1)[-1]}' twice \(at {path}\)"):
        load_mcp_config(tmp_path / "dup.json")


def test_a_catalog_file_naming_a_key_twice_is_refused_by_its_path(tmp_path):
    (tmp_path / "c.json").write_text(
        '[{"name": "a", "description": "first", "description": "second", "parameters": {"type": "object"}}]',
        encoding="utf-8",
    )
    with pytest.raises(CatalogError, match=r"names 'description' twice \(at \[0\]\.description\)"):
        load_catalog(tmp_path / "c.json")


def test_keys_this_loader_does_not_use_are_noted_not_silently_dropped(tmp_path):
    config = write_config(tmp_path / "c.json", {"s": {**stdio("ok"), "cwdd": "/typo", "alwaysAllow": []}})
    assert load_mcp_config(config).ignored == ("s: cwdd",)
    with connect_mcp_config(config, timeout=10) as servers:
        assert "config key 'cwdd' is ignored: not used by this loader" in str(servers.catalog.report)


# ---- tools that write -------------------------------------------------------------------------------------
SCENARIO = {
    "name": "note-taking",
    "title": "save a note",
    "system": "You are a helpful assistant.",
    "user_request": "Please save a note saying the build is green.",
    "steps": [
        {
            "need": "save a note to the notes file",
            "data": {"text": "the build is green"},
            "expected_tools": ["save_note"],
        }
    ],
}


@pytest.mark.parametrize("command", ["demo", "compare"])
@pytest.mark.parametrize("policy, writes", [(None, 0), ("exclude", 0), ("include", 1), ("ask", 0)])
@pytest.mark.slow
def test_commands_that_call_live_tools_never_write_without_saying_so_first(tmp_path, command, policy, writes):
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO), encoding="utf-8")
    notes = tmp_path / "notes.txt"
    chosen = ["--destructive", policy] if policy else []
    code, out, err = cli(
        command, "--scenario", str(scenario), "--mcp", f"{PY} {HOSTILE} ok,writes={notes}", *chosen
    )
    written = notes.read_text().count("\n") if notes.exists() else 0
    # compare runs the scenario once per strategy row; the write still happens once (each call runs once)
    assert written == writes, (out, err)
    # save_note declares it; echo_env and ping say nothing, which MCP reads as possibly destructive
    assert "3 tool(s) that may be destructive" in err and "1 declared destructive: save_note" in err
    unmarked = "2 unmarked (not read-only, no destructiveHint: MCP's default is destructive): echo_env, ping"
    assert unmarked in err
    said = {
        None: "held back",
        "exclude": "held back",
        "include": "will run for real",
        "ask": "after you say yes",
    }
    assert said[policy] in err
    if command == "compare":
        assert "each live tool call runs once" in err


def test_ask_runs_a_destructive_tool_only_after_a_yes_on_a_terminal(tmp_path):
    from toolsearch_lab.catalog.container import ToolCatalog
    from toolsearch_lab.cli.live_tools import guard_destructive
    from toolsearch_lab.model import Tool

    ran = []
    tool = Tool(
        "save_note",
        "writes",
        annotations={"destructiveHint": True},
        function=lambda **kw: ran.append(kw) or "ok",
    )
    guarded = guard_destructive(ToolCatalog([tool]), "ask", "demo")
    with pytest.raises(PermissionError, match="no terminal to ask"):
        guarded.get("save_note").function(text="x")  # pytest's stdin is not a terminal
    assert ran == []
