"""Live MCP servers in the command line: ``--mcp-config``/``--mcp`` on every command that takes a catalog,
``snapshot`` to a catalog file read offline, and a server that cannot start (exit 2, one message, no
traceback).

The fast tests use the project's own stdio server (``tests/mcp_test_server.py``); the last ones PyPI's
reference servers, two ``mcp-server-git`` on two repositories plus ``mcp-server-time``, as
``tests/test_mcp_real_servers.py`` finds them (skipped when missing, except under ``CI=true``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_mcp_config import http_server  # noqa: F401  (a fixture: the test server over HTTP and SSE)
from test_mcp_real_servers import GIT_TOOLS, _repository, _server

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.cli.main import main

# The slow tier (`make test-slow`): every test starts MCP servers (PyPI's real ones too) and CLI processes.
pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
REPO = Path(__file__).resolve().parents[1]
TEST_TOOLS = {"add", "get_weather", "fail", "slow", "crash"}


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TOOLSEARCH_LAB_TEST_ECHO_ENV", raising=False)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_config(path: Path, servers: dict, key: str = "mcpServers") -> Path:
    path.write_text(json.dumps({key: servers}), encoding="utf-8")
    return path


def stdio_server(**extra) -> dict:
    return {"command": sys.executable, "args": [SERVER], **extra}


@pytest.fixture
def two_servers(tmp_path) -> Path:
    """Two copies of the test server: every tool name collides."""
    return write_config(
        tmp_path / "claude_desktop_config.json", {"one": stdio_server(), "two": stdio_server()}
    )


# ------------------------------------------------------------------------------------ the project's server
def test_search_over_an_mcp_command(capsys):
    code, out, _ = run_cli(
        capsys,
        "search",
        "add two integers",
        "--mcp",
        f"{sys.executable} {SERVER}",
        "--index",
        "lucene",
        "--json",
    )
    assert code == 0
    result = json.loads(out)
    assert result["tools"] == len(TEST_TOOLS)
    assert result["toolReferences"][0]["toolName"] == "add"


def test_mcp_commands_are_named_after_their_script_and_kept_apart(capsys):
    command = f"{sys.executable} {SERVER}"
    code, out, err = run_cli(capsys, "tokens", "--mcp", command, "--mcp", command, "--json")
    assert code == 0, err
    servers = {row["server"] for row in json.loads(out)["tools"]}
    assert servers == {"mcp_test_server", "mcp_test_server-2"}
    assert "mcp_test_server-2__add" in {row["name"] for row in json.loads(out)["tools"]}


def test_tokens_json_names_every_tool_and_its_server_with_colliding_names_qualified(capsys, two_servers):
    code, out, err = run_cli(capsys, "tokens", "--mcp-config", str(two_servers), "--json")
    assert code == 0, err
    rows = json.loads(out)["tools"]
    names = {row["name"] for row in rows}
    assert names == {f"{server}__{tool}" for server in ("one", "two") for tool in TEST_TOOLS}
    by_name = {row["name"]: row for row in rows}
    assert by_name["two__add"]["server"] == "two" and by_name["two__add"]["serverTool"] == "add"
    assert all(isinstance(row["tokens"], int) and row["tokens"] > 0 for row in rows)


def test_server_picks_servers_and_namespace_never_refuses_a_collision(capsys, two_servers):
    code, out, _ = run_cli(capsys, "tokens", "--mcp-config", str(two_servers), "--server", "two", "--json")
    assert code == 0
    rows = json.loads(out)["tools"]
    assert {r["name"] for r in rows} == TEST_TOOLS and {r["server"] for r in rows} == {"two"}
    code, _, err = run_cli(capsys, "tokens", "--mcp-config", str(two_servers), "--namespace", "never")
    assert code == 2
    assert "defined by servers 'one', 'two'" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "tokens", "--mcp-config", str(two_servers), "--server", "three")
    assert code == 2 and "no server named 'three'" in err and "one, two" in err


def test_live_options_without_servers_are_refused(capsys):
    code, _, err = run_cli(capsys, "tokens", "--catalog", "github-mcp", "--server", "git")
    assert code == 2 and "--server picks servers of --mcp-config FILE" in err
    code, _, err = run_cli(capsys, "tokens", "--catalog", "github-mcp", "--env", "A=1")
    assert code == 2 and "--env applies to live servers" in err
    code, _, err = run_cli(capsys, "tokens")
    assert (
        code == 2 and "give a catalog (shipped name or JSON file), --mcp-config FILE or --mcp COMMAND" in err
    )
    code, _, err = run_cli(capsys, "snapshot", "-o", "x.json")
    assert code == 2 and "give --mcp-config FILE or --mcp COMMAND" in err


def test_env_hands_variables_to_the_servers(capsys, tmp_path, monkeypatch):
    config = write_config(tmp_path / "mcp.json", {"echo": stdio_server()})

    def names(*extra: str) -> set[str]:
        code, out, err = run_cli(capsys, "tokens", "--mcp-config", str(config), "--json", *extra)
        assert code == 0, err
        return {row["name"] for row in json.loads(out)["tools"]}

    # The test server has an echo_env tool only when this variable reaches it.
    assert "echo_env" in names("--env", "TOOLSEARCH_LAB_TEST_ECHO_ENV=1")
    monkeypatch.setenv("TOOLSEARCH_LAB_TEST_ECHO_ENV", "yes")
    assert "echo_env" not in names()  # an exported variable does not reach a server by itself
    assert "echo_env" in names("--env", "TOOLSEARCH_LAB_TEST_ECHO_ENV")
    code, _, err = run_cli(capsys, "tokens", "--mcp-config", str(config), "--env", "NO_SUCH_VARIABLE_42")
    assert code == 2 and "--env NO_SUCH_VARIABLE_42: no such variable" in err


def test_a_failed_server_is_named_and_the_others_load_unless_strict(capsys, tmp_path):
    config = write_config(
        tmp_path / "mcp.json",
        {"good": stdio_server(), "broken": {"command": str(tmp_path / "no-such-server")}},
    )
    code, out, err = run_cli(capsys, "tokens", "--mcp-config", str(config), "--json")
    assert code == 0
    assert {row["name"] for row in json.loads(out)["tools"]} == TEST_TOOLS
    assert "server 'broken' failed to start" in err and "no-such-server" in err
    code, out, err = run_cli(capsys, "tokens", "--mcp-config", str(config), "--strict")
    assert code == 2 and out == ""
    assert "broken" in err and "failed to start" in err


def _subprocess(*argv: str) -> tuple[int, str, str]:
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    done = subprocess.run(
        [sys.executable, "-m", "toolsearch_lab.cli", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=180,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", ["search", "tokens", "doctor"])
def test_a_server_that_cannot_start_exits_2_with_one_message_and_no_traceback(tmp_path, command):
    crash = tmp_path / "crashes_on_import.py"
    crash.write_text("import no_such_module_for_toolsearch_lab\n", encoding="utf-8")
    missing = write_config(tmp_path / "missing.json", {"my-server": {"command": str(tmp_path / "nope")}})
    crashing = write_config(tmp_path / "crashing.json", {"crashy": stdio_server(args=[str(crash)])})
    query = ["some query"] if command == "search" else []
    for config, name, error in (
        (missing, "my-server", "No such file or directory"),
        (crashing, "crashy", "No module named 'no_such_module_for_toolsearch_lab'"),
    ):
        code, out, err = _subprocess(command, *query, "--mcp-config", str(config))
        assert code == 2, err
        assert out == ""
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert f"failed to start: {name!r}: MCP server '{name} (" in lines[0] and error in lines[0]


def test_doctor_header_counts_the_servers_given_and_names_the_failed_one(capsys, tmp_path):
    config = write_config(
        tmp_path / "mcp.json",
        {"calc": stdio_server(), "gone": {"command": str(tmp_path / "gone-server")}},
    )
    code, out, err = run_cli(
        capsys, "doctor", "--mcp-config", str(config), "--index", "lucene", "--no-progress"
    )
    assert code == 0, err
    header = out.splitlines()[0]
    assert f"{len(TEST_TOOLS)} tools from 2 servers (1 failed to start: gone)" in header
    assert "ERROR   server-failed" in out and "server 'gone' failed to start" in out
    assert "only 5 tools:" in out  # the payoff's small-catalog reason, plural right
    code, out, _ = run_cli(
        capsys, "doctor", "--mcp-config", str(config), "--index", "lucene", "--no-progress", "--json"
    )
    report = json.loads(out)
    assert set(report["servers"].values()) == {"calc"} and list(report["failed_servers"]) == ["gone"]


def test_snapshot_is_read_offline_with_the_same_results(capsys, two_servers, tmp_path):
    snapshot = tmp_path / "catalog.json"
    code, out, err = run_cli(capsys, "snapshot", "--mcp-config", str(two_servers), "-o", str(snapshot))
    assert code == 0, err
    assert f"{2 * len(TEST_TOOLS)} tools from 2 servers (one, two)" in out
    document = json.loads(snapshot.read_text(encoding="utf-8"))
    assert set(document["servers"]) == {"one", "two"}
    assert document["servers"]["one"]["tools"] == len(TEST_TOOLS)
    record = next(r for r in document["tools"] if r["name"] == "one__get_weather")
    assert record["server"] == "one" and record["serverTool"] == "get_weather"
    assert record["inputSchema"]["properties"]["city"]["type"] == "string"
    catalog = load_catalog(snapshot)
    assert len(catalog) == 2 * len(TEST_TOOLS)
    assert catalog.origins["two__add"] == ("two", "add")
    assert not list(tmp_path.glob(".tmp-*"))  # written atomically, nothing left beside it
    query = ["search", "weather in a city", "--index", "lucene", "--json"]
    _, live, _ = run_cli(capsys, *query, "--mcp-config", str(two_servers))
    _, offline, _ = run_cli(capsys, *query, "--catalog", str(snapshot))
    assert json.loads(live)["toolReferences"] == json.loads(offline)["toolReferences"]
    assert json.loads(offline)["toolReferences"][0]["toolName"].endswith("__get_weather")


def test_snapshot_of_an_http_server_keeps_its_url_and_no_secret(capsys, tmp_path, monkeypatch, http_server):  # noqa: F811
    kind, url = http_server
    secret = "tok-cli-snapshot-DO-NOT-WRITE-7f3a"
    monkeypatch.setenv("REMOTE_TOKEN", secret)
    config = write_config(
        tmp_path / "mcp.json",
        {"remote": {"type": kind, "url": url, "headers": {"Authorization": "Bearer ${env:REMOTE_TOKEN}"}}},
        key="servers",
    )
    snapshot = tmp_path / "remote.json"
    code, out, err = run_cli(capsys, "snapshot", "--mcp-config", str(config), "-o", str(snapshot))
    assert code == 0, err
    text = snapshot.read_text(encoding="utf-8")
    assert secret not in text and secret not in out + err
    described = json.loads(text)["servers"]["remote"]
    assert (
        described["transport"] == kind and described["url"] == url and described["tools"] == len(TEST_TOOLS)
    )
    assert set(load_catalog(snapshot).names) == TEST_TOOLS


def test_eval_scores_queries_over_a_live_catalog(capsys, tmp_path):
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps(
            {
                "queries": [
                    {"id": "q1", "query": "add two integers", "relevant_tools": ["add"]},
                    {"id": "q2", "query": "current weather for a city", "relevant_tools": ["get_weather"]},
                ]
            }
        ),
        encoding="utf-8",
    )
    argv = ["eval", "--dataset", str(queries), "--index", "lucene", "--k", "1", "--json"]
    code, out, err = run_cli(capsys, *argv, "--mcp", f"{sys.executable} {SERVER}")
    assert code == 0, err
    assert json.loads(out)["metrics"]["hit@1"] == 1.0
    code, _, err = run_cli(capsys, "eval", "--dataset", "metatool", "--mcp", f"{sys.executable} {SERVER}")
    assert code == 2 and "a shipped dataset's queries name its own tools" in err


def test_demo_runs_a_scenario_whose_steps_call_the_live_tools(capsys, tmp_path):
    scenario = tmp_path / "live.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "live-add",
                "user_request": "Add 2 and 3.",
                "steps": [{"need": "add two integers", "data": {"a": 2, "b": 3}, "expected_tools": ["add"]}],
            }
        ),
        encoding="utf-8",
    )
    # The test server's tools carry no annotations, so MCP's default counts them as possibly destructive
    # and the default policy without a terminal holds them back: this run lets them run.
    live = ["--mcp", f"{sys.executable} {SERVER}", "--destructive", "include"]
    code, out, err = run_cli(capsys, "demo", "--scenario", str(scenario), *live, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["grade"]["success"] is True
    assert summary["called_tools"] == ["add"]
    assert "add: 5" in summary["final_answer"]  # the server's answer, not a canned one
    code, out, err = run_cli(
        capsys,
        "compare",
        "--scenario",
        str(scenario),
        *live,
        "--strategies",
        "all-tools",
        "search-only",
        "--json",
    )
    assert code == 0, err
    rows = json.loads(out)
    assert [r["strategy"] for r in rows] == ["all-tools", "search-only"] and all(r["success"] for r in rows)
    assert rows[0]["tools_per_request"][0] == len(TEST_TOOLS)  # the live server's tools, every one


# ------------------------------------------------------------------------------ PyPI's reference servers
@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("cli-real-mcp")
    git, time_server = _server("mcp-server-git"), _server("mcp-server-time")
    alpha = _repository(base / "alpha", "alpha.txt")
    beta = _repository(base / "beta", "beta.txt")
    servers = {
        "git alpha": {"command": git, "args": ["--repository", str(alpha)]},
        "git-beta": {"command": git, "args": ["--repository", str(beta)]},
        "time": {"command": time_server, "args": ["--local-timezone", "Europe/Amsterdam"]},
    }
    (base / ".vscode").mkdir()
    vscode = {k: {"type": "stdio", **v} for k, v in servers.items()}
    return {
        "claude": write_config(base / "claude_desktop_config.json", servers),
        "vscode": write_config(base / ".vscode" / "mcp.json", vscode, key="servers"),
        "base": base,
    }


@pytest.mark.parametrize("kind", ["claude", "vscode"])
def test_real_servers_in_tokens_and_search(capsys, real, kind):
    code, out, err = run_cli(
        capsys, "tokens", "--mcp-config", str(real[kind]), "--json", "--startup-timeout", "90"
    )
    assert code == 0, err
    rows = json.loads(out)["tools"]
    names = [row["name"] for row in rows]
    assert len(names) == len(set(names)) == 2 * GIT_TOOLS + 2  # none lost, all distinct
    assert {row["server"] for row in rows} == {"git alpha", "git-beta", "time"}
    assert {"git_alpha__git_status", "git-beta__git_status", "get_current_time"} <= set(names)
    code, out, err = run_cli(
        capsys, "search", "working tree status", "--mcp-config", str(real[kind]), "--index", "lucene",
        "--json", "--startup-timeout", "90",
    )  # fmt: skip
    assert code == 0, err
    found = [r["toolName"] for r in json.loads(out)["toolReferences"]]
    assert {"git_alpha__git_status", "git-beta__git_status"} <= set(found[:2])


def test_real_servers_in_doctor_and_snapshot_then_offline(capsys, real):
    config = str(real["claude"])
    code, out, err = run_cli(
        capsys,
        "doctor",
        "--mcp-config",
        config,
        "--index",
        "lucene",
        "--no-progress",
        "--startup-timeout",
        "90",
    )
    assert code == 0, err
    assert f"{2 * GIT_TOOLS + 2} tools from 3 servers;" in out.splitlines()[0]
    snapshot = real["base"] / "catalog.json"
    code, out, err = run_cli(
        capsys, "snapshot", "--mcp-config", config, "-o", str(snapshot), "--startup-timeout", "90"
    )
    assert code == 0, err
    assert f"{2 * GIT_TOOLS + 2} tools from 3 servers (git alpha, git-beta, time)" in out
    catalog = load_catalog(snapshot)
    assert catalog.origins["git-beta__git_log"] == ("git-beta", "git_log")
    assert catalog.origins["convert_time"] == ("time", "convert_time")
    query = ["search", "show the commit log", "--index", "lucene", "--json"]
    _, live, _ = run_cli(capsys, *query, "--mcp-config", config, "--startup-timeout", "90")
    _, offline, _ = run_cli(capsys, *query, "--catalog", str(snapshot))
    assert json.loads(live)["toolReferences"] == json.loads(offline)["toolReferences"]
    code, out, _ = run_cli(capsys, "tokens", "--catalog", str(snapshot), "--json")
    assert {row["server"] for row in json.loads(out)["tools"]} == {"git alpha", "git-beta", "time"}
