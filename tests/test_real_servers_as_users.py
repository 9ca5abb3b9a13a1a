"""Real PyPI MCP servers, used as their users use them (issue 30): excel-mcp-server over streamable HTTP on
127.0.0.1 behind a bearer token, from a VS Code config whose token comes from the environment; and
office-word-mcp-server over stdio, which prints lines on stdout before it speaks JSON-RPC.

``.ci/run`` installs each pinned, in a virtual environment of its own under ``$TOOLSEARCH_LAB_MCP_SERVERS``
(``<that folder>/<package>/bin/<program>``). Without them the tests skip with the reason, except under
``CI=true``, where a missing server is a failure."""

from __future__ import annotations

import json

import pytest
from hostile_support import cli, free_port, http_server, installed, write_config

pytestmark = pytest.mark.slow  # real servers, installed by .ci/run: the slow tier

SECRET = "excel-bearer-9d2f7c41aa"


def _program(package: str, program: str) -> str:
    return installed("TOOLSEARCH_LAB_MCP_SERVERS", package, "bin", program)


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
    scenario = tmp_path / "excel.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "excel-new-book",
                "title": "start a budget workbook",
                "system": "You are a helpful assistant.",
                "user_request": "Start a new budget workbook for me.",
                "steps": [
                    {
                        "need": "create a new Excel workbook file",
                        "data": {"path": "budget.xlsx"},
                        "expected_tools": ["create_workbook"],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    env = {"EXCEL_TOKEN": SECRET}
    code, out, err = cli("demo", "--scenario", str(scenario), "--mcp-config", str(config), env=env)
    assert "declared destructive are held back" in err and "create_workbook" in err
    assert list(books.iterdir()) == []  # by default nothing that writes ran
    code, out, err = cli(
        "demo", "--scenario", str(scenario), "--mcp-config", str(config), "--destructive", "include", env=env
    )
    assert "declared destructive will run for real" in err
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
