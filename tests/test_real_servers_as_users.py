"""Real PyPI MCP servers, used as their users use them (issue 30): excel-mcp-server over streamable HTTP on
127.0.0.1 behind a bearer token, from a VS Code config whose token comes from the environment; and
office-word-mcp-server over stdio, which prints lines on stdout before it speaks JSON-RPC.

Issue 48 adds the four real servers (git, time, Word, Excel over HTTP) from one env-heavy config beside
entries that cannot be used, and ``--destructive exclude`` on Word, which must hold back every tool not
marked read-only.

``.ci/run`` installs each pinned, in a virtual environment of its own under ``$TOOLSEARCH_LAB_MCP_SERVERS``
(``<that folder>/<package>/bin/<program>``). Without them the tests skip with the reason, except under
``CI=true``, where a missing server is a failure. Real servers are the slow tier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_support import cli, free_port, http_server, installed, write_config
from test_mcp_real_servers import GIT_TOOLS, _repository, _server

pytestmark = pytest.mark.slow  # real servers, installed by .ci/run: the slow tier

SECRET = "excel-bearer-9d2f7c41aa"


def _program(package: str, program: str) -> str:
    return installed("TOOLSEARCH_LAB_MCP_SERVERS", package, "bin", program)


def _one_step(path: Path, request: str, step: dict, tool: str) -> Path:
    """A scenario file of one step done by ``tool``."""
    scenario = {
        "name": path.stem,
        "title": request,
        "system": "You are a helpful assistant.",
        "user_request": request,
        "steps": [{**step, "expected_tools": [tool]}],
    }
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def excel(tmp_path_factory):
    """excel-mcp-server on 127.0.0.1 with a bearer token; yields (VS Code config, workbook folder)."""
    program = _program("excel-mcp-server", "excel-mcp-server")
    base = tmp_path_factory.mktemp("excel")
    books = base / "books"
    books.mkdir()
    port = free_port()
    argv = [program, "streamable-http", "--host", "127.0.0.1", "--port", str(port), "--allow-dir", str(books)]
    config = write_config(
        base / "mcp.json",
        {
            "excel": {
                "type": "http",
                "url": f"http://127.0.0.1:{port}/mcp",
                "headers": {"Authorization": "Bearer ${env:EXCEL_TOKEN}"},
            }
        },
        key="servers",
    )
    with http_server(argv, port, env={"EXCEL_MCP_AUTH_TOKEN": SECRET}, timeout=120):
        yield config, books


def test_excel_over_http_with_a_bearer_token_counts_its_defs_and_shows_no_token(excel):
    config, _ = excel
    code, out, err = cli("tokens", "--mcp-config", str(config), "--json", env={"EXCEL_TOKEN": SECRET})
    assert code == 0, err
    payload = json.loads(out)
    assert len(payload["tools"]) == 46
    chart = next(t for t in payload["tools"] if t["name"] == "create_chart")
    assert chart["refs_resolved"] == 11 and chart["tokens"] > 1_500  # its $defs counted where used
    assert payload["json_total"] > payload["total"] > 10_000
    assert SECRET not in out + err


def test_a_wrong_token_is_named_as_a_401_and_nothing_runs(excel):
    config, _ = excel
    code, out, err = cli(
        "search", "create a chart", "--mcp-config", str(config), env={"EXCEL_TOKEN": "wrong-one-1234"}
    )
    assert code == 2 and out == ""
    assert "HTTP 401 Unauthorized" in err and "wrong-one-1234" not in err


def test_the_demo_never_writes_a_workbook_without_saying_so_first(excel, tmp_path):
    config, books = excel
    scenario = _one_step(
        tmp_path / "excel.json",
        "Start a new budget workbook for me.",
        {"need": "create a new Excel workbook file", "data": {"path": "budget.xlsx"}},
        "create_workbook",
    )
    env = {"EXCEL_TOKEN": SECRET}
    code, out, err = cli("demo", "--scenario", str(scenario), "--mcp-config", str(config), env=env)
    assert "that may be destructive are held back" in err and "create_workbook" in err
    assert list(books.iterdir()) == []  # by default nothing that writes ran
    code, out, err = cli(
        "demo", "--scenario", str(scenario), "--mcp-config", str(config), "--destructive", "include", env=env
    )
    assert "that may be destructive will run for real" in err
    assert [p.name for p in books.iterdir()] == ["budget.xlsx"], out + err
    assert SECRET not in out + err


def test_word_over_stdio_prints_on_stdout_and_still_loads_whole_with_its_meta(tmp_path):
    program = _program("office-word-mcp-server", "word_mcp_server")
    snapshot = tmp_path / "word.json"
    code, out, err = cli("snapshot", "--mcp", program, "-o", str(snapshot), env={"MCP_TRANSPORT": "stdio"})
    assert code == 0, err
    # Its "Loading configuration..." lines are block-buffered, so they reach the pipe when it flushes (often
    # as it exits, after the listing): counted and dropped either way, never a traceback per line.
    assert "Traceback" not in err and "ValidationError" not in err
    tools = json.loads(snapshot.read_text(encoding="utf-8"))["tools"]
    assert len(tools) == 54 and all("_meta" in t for t in tools)
    code, out, err = cli("search", "add a paragraph to a document", "--catalog", str(snapshot))
    assert code == 0 and "add_paragraph" in out


def _word() -> str:
    return _program("office-word-mcp-server", "word_mcp_server")


def test_destructive_exclude_on_word_holds_back_every_tool_not_marked_read_only(tmp_path, capsys):
    import warnings

    from toolsearch_lab.catalog.live import connect_mcp_stdio
    from toolsearch_lab.cli.live_tools import guard_destructive

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = {"MCP_TRANSPORT": "stdio"}
        servers = connect_mcp_stdio(_word(), env=env, startup_timeout=120, strict=False)
    with servers:
        catalog = servers.catalog
        kept = guard_destructive(catalog, "exclude", "demo")
    read_only = [t.name for t in catalog if t.read_only]
    assert kept.names == read_only and len(read_only) == 11
    line = capsys.readouterr().err
    # docs/mcp.md: "43 of its 54 tools"
    assert len(catalog) == 54 and "43 tool(s) that may be destructive are held back" in line
    assert "7 declared destructive: " in line and "36 unmarked (not read-only, no destructiveHint" in line
    scenario = _one_step(
        tmp_path / "word.json",
        "What does report.docx say?",
        {"need": "get the text of a Word document", "data": {"filename": "report.docx"}},
        "get_document_text",
    )
    env = {"MCP_TRANSPORT": "stdio"}
    args = ["demo", "--scenario", str(scenario), "--mcp", _word(), "--destructive", "exclude", "--json"]
    code, out, err = cli(*args, "--startup-timeout", "120", env=env)
    assert "43 tool(s) that may be destructive are held back" in err, err
    found = {name for search in json.loads(out)["searches"] for name in search["found"]}
    assert found and found <= set(read_only)  # the model never saw a tool that may write


def test_four_real_servers_from_an_env_heavy_config_each_bad_entry_costing_only_itself(excel, tmp_path):
    config, _ = excel
    url = json.loads(config.read_text(encoding="utf-8"))["servers"]["excel"]["url"]
    _repository(tmp_path / "repo", "readme.txt")
    (tmp_path / "git.env").write_text("GIT_AUTHOR_NAME=Lab User\nexport GIT_PAGER=cat\n", encoding="utf-8")
    git, time_server = _server("mcp-server-git"), _server("mcp-server-time")
    servers = {
        "git": {
            "command": git,
            "args": ["--repository", "${workspaceFolder}/repo"],
            "envFile": "${workspaceFolder}/git.env",
            "env": {"GIT_CONFIG_NOSYSTEM": "1", "LANG": "${P48_LANG:-C.UTF-8}", "HOME": "${userHome}"},
        },
        "time": {
            "command": time_server,
            "args": ["--local-timezone", "${env:P48_TIMEZONE:-Europe/Amsterdam}"],
            "env": {"TZ": "Europe/Amsterdam", "LC_ALL": "C.UTF-8"},
        },
        "word": {"command": _word(), "env": {"MCP_TRANSPORT": "stdio", "LOG_LEVEL": "WARNING"}},
        "excel": {
            "type": "http",
            "url": url,
            "headers": {"Authorization": "Bearer ${env:EXCEL_TOKEN}", "X-Client": "toolsearch-lab"},
            "headersHelper": "./refresh-token.sh",
        },
        "reports": {"command": git, "env": {"REPORTS_API_TOKEN": "${P48_REPORTS_TOKEN}"}},
        "archive": {"command": time_server, "disabled": "false"},
    }
    path = write_config(tmp_path / "mcp.json", servers, key="servers")
    env = {"EXCEL_TOKEN": SECRET}
    code, out, err = cli("tokens", "--mcp-config", str(path), "--json", "--startup-timeout", "120", env=env)
    assert code == 0, err
    assert len(json.loads(out)["tools"]) == GIT_TOOLS + 2 + 54 + 46
    assert "server 'reports' not started: " in err and "'P48_REPORTS_TOKEN' is not set" in err
    assert "server 'archive' not started: " in err and "'disabled' must be true or false, got 'false'" in err
    assert err.count("config key 'headersHelper' is ignored: no OAuth or header helper") == 1
    assert "failed to start" not in err and SECRET not in out + err
    code, out, err = cli("tokens", "--mcp-config", str(path), "--server", "time", "--json", env=env)
    assert code == 0 and len(json.loads(out)["tools"]) == 2 and "not started" not in err
