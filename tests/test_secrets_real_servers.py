"""Real servers with an env-heavy config (issue 48): git, time and Word over stdio, Excel over streamable HTTP
behind a bearer token, from one Claude Desktop config whose ``env`` and ``envFile`` hold what a user's do:
a timezone, a region, paths, ``NODE_ENV``, a log level, and keys. Zero ordinary values hidden, zero keys
shown, and the snapshot equals ``tools/list`` byte for byte (the time server's schema keeps the timezone its
``env`` gave it).

The servers are those ``.ci/run`` installs (``$TOOLSEARCH_LAB_MCP_BIN`` for git and time,
``$TOOLSEARCH_LAB_MCP_SERVERS`` for Word and Excel); without them the tests skip with the reason, except
under ``CI=true``, where a missing server is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from hostile_support import cli, free_port, http_server, installed, search_then_call
from key_samples import sample_keys

from toolsearch_lab.catalog.live import connect_mcp_config
from toolsearch_lab.catalog.mcp_config import load_mcp_config
from toolsearch_lab.secrets import scrub

pytestmark = pytest.mark.slow

KEYS = sample_keys(seed=4848)
EXCEL_TOKEN = "excel-bearer-" + KEYS["npm"][4:20]
# What a user's env holds beside its keys: never hidden, anywhere.
ORDINARY = {
    "TZ": "Europe/Amsterdam",
    "AWS_REGION": "eu-west-1",
    "NODE_ENV": "production",
    "LOG_LEVEL": "debug",
    "LANG": "en_US.UTF-8",
    "GIT_AUTHOR_NAME": "Release Automation",
    "REQUEST_TIMEOUT_SECONDS": "30",
    "FEATURE_FLAGS": "search,export,preview",
    "AUTH_MODE": "oauth-device-flow",
    "TOKEN_FILE": "/var/run/secrets/service-token",
}
SECRETS = {
    "OPENAI_API_KEY": KEYS["openai"],
    "GITHUB_PERSONAL_ACCESS_TOKEN": KEYS["github"],
    "SLACK_BOT_TOKEN": KEYS["slack"],
    "DB_PASSWORD": "correct-horse-battery-staple-9",
    "UPSTREAM": KEYS["anthropic"],  # a key under a name that says nothing: known by its shape
}
FROM_FILE = {"AWS_ACCESS_KEY_ID": KEYS["aws-access-key-id"], "HF_TOKEN": KEYS["huggingface"]}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The config, the environment the CLI runs in, and the Excel server running behind its token."""
    base = tmp_path_factory.mktemp("env-heavy")
    git = installed("TOOLSEARCH_LAB_MCP_BIN", "mcp-server-git")
    time_server = installed("TOOLSEARCH_LAB_MCP_BIN", "mcp-server-time")
    word = installed("TOOLSEARCH_LAB_MCP_SERVERS", "office-word-mcp-server", "bin", "word_mcp_server")
    excel = installed("TOOLSEARCH_LAB_MCP_SERVERS", "excel-mcp-server", "bin", "excel-mcp-server")
    repo = base / "repo"
    repo.mkdir()
    run = {"cwd": repo, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)
    (repo / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "add", "notes.txt"], **run)
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "notes"], **run
    )
    (base / "keys.env").write_text("".join(f"export {k}={v}\n" for k, v in FROM_FILE.items()))
    env = {**ORDINARY, "DATA_DIR": str(base / "data"), **SECRETS}
    books = base / "books"
    books.mkdir()
    port = free_port()
    servers = {
        "git": {
            "command": git,
            "args": ["--repository", str(repo)],
            "env": env,
            "envFile": str(base / "keys.env"),
        },
        "time": {"command": time_server, "env": env},
        "word": {"command": word, "env": {**env, "MCP_TRANSPORT": "stdio"}},
        "excel": {
            "type": "http",
            "url": f"http://127.0.0.1:{port}/mcp",
            "headers": {"Authorization": "Bearer ${EXCEL_TOKEN}"},
        },
    }
    config = base / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    argv = [excel, "streamable-http", "--host", "127.0.0.1", "--port", str(port), "--allow-dir", str(books)]
    with http_server(argv, port, env={"EXCEL_MCP_AUTH_TOKEN": EXCEL_TOKEN}, timeout=120):
        yield {"config": config, "base": base, "environ": {"EXCEL_TOKEN": EXCEL_TOKEN}}


def _keys() -> list[str]:
    return [*SECRETS.values(), *FROM_FILE.values(), EXCEL_TOKEN]


def test_every_key_is_registered_and_no_ordinary_value_is(setup, monkeypatch):
    monkeypatch.setenv("EXCEL_TOKEN", EXCEL_TOKEN)
    load_mcp_config(setup["config"])
    hidden = [v for v in ORDINARY.values() if scrub(f"value {v} here") != f"value {v} here"]
    shown = [k[:12] for k in _keys() if k in scrub(f"value {k} here")]
    assert hidden == [] and shown == []


def test_the_snapshot_is_tools_list_byte_for_byte_and_shows_no_key(setup):
    out = setup["base"] / "snapshot.json"
    code, printed, err = cli(
        "snapshot",
        "--mcp-config",
        str(setup["config"]),
        "-o",
        str(out),
        "--startup-timeout",
        "120",
        env=setup["environ"],
    )
    assert code == 0, err
    snapshot = json.loads(out.read_text(encoding="utf-8"))
    assert set(snapshot["servers"]) == {"git", "time", "word", "excel"} and "failed" not in snapshot
    with _live(setup) as live:
        listed = {
            (server, record["name"]): record
            for server, connection in live.connections.items()
            for record in connection.last_listing.records
        }
    for tool in snapshot["tools"]:
        record = {k: v for k, v in tool.items() if k not in ("server", "serverTool")}
        record["name"] = tool.get("serverTool", tool["name"])
        sent = listed[(tool["server"], record["name"])]
        assert json.dumps(record, sort_keys=True) == json.dumps(sent, sort_keys=True), record["name"]
    assert len(snapshot["tools"]) == len(listed)
    time_schema = json.dumps([t for t in snapshot["tools"] if t["server"] == "time"])
    assert "Use 'Europe/Amsterdam' as local timezone" in time_schema  # from TZ in env, kept (issue 48)
    whole = out.read_text(encoding="utf-8") + printed + err
    assert [k[:12] for k in _keys() if k in whole] == []
    assert "***" not in json.dumps(snapshot["tools"])  # nothing hidden in what the servers sent
    assert str(setup["base"] / "repo") in snapshot["servers"]["git"]["command"]  # a path is no secret


def _live(setup):
    environ = {**os.environ, **setup["environ"]}
    return connect_mcp_config(load_mcp_config(setup["config"], environ=environ), startup_timeout=120)


def test_a_tool_result_reaches_the_model_unaltered_when_it_holds_no_key(setup):
    with _live(setup) as live:
        result = search_then_call(
            list(live.catalog),
            "current time timezone",
            "get_current_time",
            '{"timezone": "Europe/Amsterdam"}',
        )
    call = result.trace.iterations[1].tool_calls[0]
    assert call.name == "get_current_time" and call.failure is None, call.result
    assert '"timezone": "Europe/Amsterdam"' in call.result and "***" not in call.result and call.flags == []
