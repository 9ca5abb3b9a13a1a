"""Reliability V (issue 48), tried as an MCP user and as an adversary would: MCP's hint defaults honoured,
refused calls graded honestly, one bad config entry costing only itself, and the bounds (an envFile that
never ends, a listing slower than the start-up timeout, a JSON-RPC error answer to ``tools/list``, a server
dying under concurrent calls, ``--namespace never``). The servers are tests/hostile_mcp_server.py; the tests
that run the CLI in a subprocess, or wait out a deadline, are in the slow tier."""

from __future__ import annotations

import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from hostile_support import HOSTILE, PY, cli, stdio, write_config

import toolsearch_lab
from toolsearch_lab.catalog.container import CatalogError, ToolCatalog
from toolsearch_lab.catalog.errors import ServerFailure
from toolsearch_lab.catalog.live import DestructiveToolsWarning, connect_mcp_config, connect_mcp_stdio
from toolsearch_lab.catalog.mcp import McpConnection, McpToolError
from toolsearch_lab.catalog.mcp_config import (
    MAX_ENV_FILE_BYTES,
    SET_THE_HEADER,
    ignored_key_note,
    load_mcp_config,
)
from toolsearch_lab.cli.live_tools import guard_destructive
from toolsearch_lab.eval.scenarios.format import scenario_from_dict
from toolsearch_lab.eval.scenarios.grading import grade
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.trace import FailureKind

SCENARIO = {
    "name": "archive-run",
    "title": "archive the build log",
    "system": "You are a helpful assistant.",
    "user_request": "Archive the build log of run 41.",
    "steps": [{"need": "archive a build log", "data": {"run": "41"}, "expected_tools": ["archive_log"]}],
}


# ---- MCP's hint defaults ----------------------------------------------------------------------------------
def _shelf(ran: list[str]) -> ToolCatalog:
    def archive(run: str) -> str:
        ran.append(run)
        return f"archived {run}"

    return ToolCatalog(
        [
            Tool("archive_log", "Archive a build log", function=archive),  # says nothing: may be destructive
            Tool("read_log", "Read a build log", annotations={"readOnlyHint": True}),
            Tool("tag_log", "Tag a build log", annotations={"destructiveHint": False}),  # additive only
            Tool("purge_logs", "Purge all build logs", annotations={"destructiveHint": True}),
        ]
    )


def test_exclude_holds_back_every_tool_not_marked_read_only_and_names_the_unmarked(capsys):
    kept = guard_destructive(_shelf([]), "exclude", "demo")
    assert kept.names == ["read_log", "tag_log"]
    line = capsys.readouterr().err
    assert "2 tool(s) that may be destructive are held back" in line
    assert "1 declared destructive: purge_logs" in line
    assert "1 unmarked (not read-only, no destructiveHint: MCP's default is destructive): archive_log" in line


def test_the_python_api_says_once_which_live_tools_may_be_destructive():
    said_so = pytest.warns(DestructiveToolsWarning, match=r"2 of 2 live MCP tools may be destructive")
    with said_so as said, connect_mcp_stdio(PY, [HOSTILE, "echo-arg,names=peek"], timeout=10):
        pass
    assert len(said) == 1 and "destructive='include', its default" in str(said[0].message)
    assert ToolSearchAdvisor(BM25ToolIndex()).settings.destructive == "include"


# ---- honest grades ----------------------------------------------------------------------------------------
def _run_asked(answer: str | None, monkeypatch):
    """The scenario's run with archive_log under ``--destructive ask``: ``answer`` typed at the prompt, or
    no terminal (None)."""
    ran: list[str] = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: answer is not None)
    monkeypatch.setattr("builtins.input", lambda prompt="": answer)
    catalog = guard_destructive(_shelf(ran), "ask", "demo")
    search = ToolCall("s1", "toolSearchTool", json.dumps({"query": "archive a build log"}))
    call = ToolCall("c1", "archive_log", json.dumps({"run": "41"}))
    model = ScriptedModel([AssistantTurn(None, [search]), AssistantTurn(None, [call]), AssistantTurn("Done")])
    request = [{"role": "user", "content": "Archive run 41"}]
    advisor = ToolSearchAdvisor(BM25ToolIndex(), tool_timeout=None)
    trace = advisor.run(model, request, list(catalog), session_id="a").trace
    return trace, grade(scenario_from_dict(SCENARIO, live_tools=list(catalog)), trace), ran


@pytest.mark.parametrize("answer, failure", [("n", FailureKind.DECLINED), (None, FailureKind.REFUSED)])
def test_a_declined_or_refused_call_is_not_run_not_graded_and_stops_the_run(monkeypatch, answer, failure):
    trace, graded, ran = _run_asked(answer, monkeypatch)
    call = trace.iterations[1].tool_calls[0]
    assert ran == [] and call.kind == "rejected" and call.failure == failure
    assert trace.stop_reason == "refused" and trace.final_answer is None  # the model never got to claim it
    assert not graded.success and not graded.steps[0].success and graded.called == []
    assert toolsearch_lab.RunTrace.from_json(trace.to_json()).iterations[1].tool_calls[0].failure == failure


def test_a_yes_runs_it_and_grades_it_done(monkeypatch):
    trace, graded, ran = _run_asked("y", monkeypatch)
    assert ran == ["41"] and trace.stop_reason == "answered" and graded.success


def test_a_yes_given_after_the_loop_stopped_waiting_does_not_run_the_tool(monkeypatch):
    ran: list[str] = []
    clock = iter([0.0, 61.0])  # the prompt, then the answer a minute later (tool_timeout is 60 s)
    monkeypatch.setattr("toolsearch_lab.cli.live_tools.time.monotonic", lambda: next(clock))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": "y")
    archive = guard_destructive(_shelf(ran), "ask", "demo").get("archive_log").function
    with pytest.raises(toolsearch_lab.ToolCallRefused, match="after the run stopped waiting") as refused:
        archive(run="41")
    assert ran == [] and refused.value.failure == FailureKind.REFUSED


@pytest.mark.slow  # the CLI in a subprocess: 2 s or more
def test_the_cli_without_a_terminal_says_refused_and_grades_the_step_failed(tmp_path):
    scenario = tmp_path / "s.json"
    notes = tmp_path / "notes.txt"
    step = {"need": "save a note to the notes file", "data": {"text": "ok"}, "expected_tools": ["save_note"]}
    scenario.write_text(json.dumps({**SCENARIO, "steps": [step]}), encoding="utf-8")
    mcp = f"{PY} {HOSTILE} ok,writes={notes}"
    code, out, err = cli("demo", "--scenario", str(scenario), "--mcp", mcp, "--destructive", "ask", "--json")
    payload = json.loads(out)
    assert code == 1 and not notes.exists()
    assert payload["stop_reason"] == "refused" and payload["finished"] is False
    assert payload["grade"]["success"] is False
    assert "stopped without an answer (refused)" in err and "DestructiveToolsWarning" not in err


# ---- one bad entry costs itself ---------------------------------------------------------------------------
@pytest.fixture
def crowded(tmp_path):
    """A config whose good servers sit beside entries that are malformed or cannot be resolved."""
    fifo = tmp_path / "secrets.pipe"
    os.mkfifo(fifo)
    return write_config(
        tmp_path / "mcp.json",
        {
            "calendar": stdio("names=list_events"),
            "argv-as-text": {"command": PY, "args": f"{HOSTILE} ok"},
            "needs-region": {**stdio("ok"), "env": {"DEPLOY_REGION": "${P48_NO_SUCH_REGION}"}},
            "half-off": {**stdio("ok"), "disabled": "yes"},
            "piped-env": {**stdio("ok"), "envFile": str(fifo)},
            "notes": {**stdio("names=add_note"), "headersHelper": "./print-headers.sh", "auth": "oauth"},
        },
    )


UNUSABLE = {
    "argv-as-text": "'args' must be a list of strings, got str",
    "needs-region": "environment variable 'P48_NO_SUCH_REGION' is not set",
    "half-off": "'disabled' must be true or false, got 'yes'",
    "piped-env": "not a regular file but a FIFO",
}


def test_each_bad_entry_is_named_and_skipped_and_the_others_load(crowded):
    config = load_mcp_config(crowded, environ={})
    assert [s.name for s in config.servers] == ["calendar", "notes"]
    assert {name: why for name, why in config.invalid.items() if UNUSABLE[name] in why} == config.invalid
    assert list(config.invalid) == list(UNUSABLE)
    with pytest.warns(DestructiveToolsWarning):
        servers = connect_mcp_config(crowded, timeout=10)
    with servers:
        assert servers.catalog.names == ["list_events", "add_note"]
        kinds = {p.tool: p.failure for p in servers.catalog.report.problems}
        assert kinds == {f"server {name!r}": ServerFailure.CONFIG for name in UNUSABLE}
    with pytest.raises(CatalogError, match=r"4 of 6 server\(s\) failed to start: 'argv-as-text'"):
        connect_mcp_config(crowded, timeout=10, strict=True)


@pytest.mark.slow  # the CLI in a subprocess: 2 s or more
def test_the_cli_names_each_skipped_entry_once_and_says_what_it_does_instead_of_an_auth_key(crowded):
    code, out, err = cli("search", "add_note", "--mcp-config", str(crowded))
    assert code == 0 and "add_note" in out
    for name, why in UNUSABLE.items():
        assert f"server {name!r} not started: " in err and why in err
    advice = "config key 'headersHelper' is ignored: no OAuth or header helper: set the header yourself"
    assert err.count(advice) == 1 and err.count("config key 'auth' is ignored: no OAuth") == 1


@pytest.mark.parametrize("key", ["authProviderType", "bearer_token", "x-api-key", "Credentials", "oauth"])
def test_a_key_about_credentials_however_spelled_gets_the_header_advice(key):
    config = load_mcp_config({"mcpServers": {"s": {**stdio("ok"), key: {"clientId": "lab"}, "trust": True}}})
    assert config.ignored == (f"s: {key}", "s: trust") and not config.invalid
    assert ignored_key_note(key) == f"config key {key!r} is ignored: {SET_THE_HEADER}"
    assert ignored_key_note("trust") == "config key 'trust' is ignored: not used by this loader"


@pytest.mark.slow  # the CLI in a subprocess: 2 s or more
def test_an_entry_the_server_option_does_not_pick_is_never_resolved(crowded):
    assert load_mcp_config(crowded, environ={}, servers=["calendar"]).invalid == {}
    code, out, err = cli("search", "list_events", "--mcp-config", str(crowded), "--server", "calendar")
    assert code == 0 and "list_events" in out and "not started" not in err and "ignored" not in err
    code, out, err = cli("search", "x", "--mcp-config", str(crowded), "--server", "half-off")
    assert code == 2 and "'disabled' must be true or false, got 'yes'" in err


# ---- bounds -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "device", "too-big"])
def test_an_env_file_must_be_a_regular_file_under_the_cap_and_is_never_read_forever(tmp_path, kind):
    path = tmp_path / "env"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: reading it would block for ever
    elif kind == "device":
        path.symlink_to("/dev/zero")  # endless: reading it would fill memory
    else:
        path.write_text("A=" + "x" * MAX_ENV_FILE_BYTES + "\n", encoding="utf-8")
    config = {"servers": {"s": {**stdio("ok"), "envFile": str(path)}}}
    with ThreadPoolExecutor(1) as pool:  # a regression hangs in the worker, not in the test
        invalid = pool.submit(load_mcp_config, config).result(timeout=60).invalid
    expected = {
        "fifo": "not a regular file but a FIFO",
        "device": "not a regular file but a character device",
        "too-big": f"larger than {MAX_ENV_FILE_BYTES:,} bytes",
    }[kind]
    assert expected in invalid["s"] and "'envFile'" in invalid["s"]
    assert MAX_ENV_FILE_BYTES == 1_000_000  # docs/mcp.md and docs/reliability.md: 1 MB


@pytest.mark.slow
def test_the_start_up_timeout_covers_every_page_of_the_listing():
    # Two pages of 10 s each: the old deadline covered only the start, and the listing then took 20 s.
    with pytest.raises(McpToolError, match=r"tools/list failed: no answer within .* start-up timeout \(8 s"):
        connect_mcp_stdio(PY, [HOSTILE, "ok,slow-list=10"], startup_timeout=8, timeout=60)
    config = {"mcpServers": {"slow": stdio("ok,slow-list=10"), "quick": stdio("names=quick_one")}}
    with pytest.warns(DestructiveToolsWarning), connect_mcp_config(config, startup_timeout=8) as servers:
        assert servers.catalog.names == ["quick_one"] and "start-up timeout" in servers.failures["slow"]


@pytest.mark.parametrize("code", [-32000, -32001, -32602])
def test_a_json_rpc_error_answer_to_the_listing_is_named_by_its_code_and_message(code):
    config = {"mcpServers": {"broken": stdio(f"ok,list-error={code}"), "fine": stdio("names=fine_one")}}
    with pytest.warns(DestructiveToolsWarning), connect_mcp_config(config, timeout=10) as servers:
        why = servers.failures["broken"]
    assert f"the server answered with JSON-RPC error {code}: 'listing is broken here'" in why
    assert "closed the connection" not in why and "restarted" not in why and "timeout" not in why


def test_the_restart_count_stays_exact_when_calls_fail_together():
    connection = McpConnection(PY, [HOSTILE, "ok,exit-on-call"], timeout=10, max_restarts=1)
    start = threading.Barrier(6)
    said: list[str] = []

    def call(_: int) -> None:
        start.wait()
        try:
            connection.call_tool("ping")
        except McpToolError as exc:
            said.append(str(exc))

    try:
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(call, range(6)))
    finally:
        connection.close()
    assert len(said) == 6 and len(connection.restarts) == 1
    counts = [int(n) for m in said for n in re.findall(r"restarted[^(]*\((\d+) of 1\)", m)]
    assert counts and set(counts) == {1}, said  # never "(2 of 1)" or "(3 of 1)"
    assert sum("the server was restarted (1 of 1)" in m for m in said) <= 1


@pytest.mark.slow  # the CLI in a subprocess: 2 s or more
def test_namespace_never_names_the_cli_spelling(tmp_path):
    config = write_config(tmp_path / "c.json", {"one": stdio("names=status"), "two": stdio("names=status")})
    code, out, err = cli("search", "status", "--mcp-config", str(config), "--namespace", "never")
    assert code == 2 and "(--namespace never); --namespace auto to qualify it as 'one__status'" in err
    assert "namespace='" not in err


def test_load_mcp_config_is_at_the_front_door():
    assert toolsearch_lab.load_mcp_config is load_mcp_config
    assert {"load_mcp_config", "McpConfig", "ToolCallRefused", "DestructiveToolsWarning"} <= set(
        toolsearch_lab.__all__
    )
