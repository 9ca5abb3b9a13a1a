"""One bad server or record costs only itself (issue 30, findings 3, 4d, 7d-7g), over the hostile server of
tests/hostile_mcp_server.py: malformed records, Infinity and NaN, schemas nested too deep, cursors that
loop, stdout noise, keys named twice, names providers refuse, colliding names and refusing HTTP servers.
Each case from the research that found the defect is here, with cases of our own beside it."""

from __future__ import annotations

import json

import pytest
from hostile_support import HOSTILE, PY, cli, hostile_http, stdio, write_config

from toolsearch_lab.catalog.container import CatalogError
from toolsearch_lab.catalog.errors import ServerFailure
from toolsearch_lab.catalog.export import to_mcp_tools
from toolsearch_lab.catalog.live import connect_mcp_config, connect_mcp_stdio
from toolsearch_lab.catalog.mcp import MAX_LIST_PAGES, McpConnection, McpToolError
from toolsearch_lab.catalog.mcp_wire import MAX_WIRE_DEPTH, SDK_JSON_DEPTH
from toolsearch_lab.eval.doctor import diagnose
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.jsonlimits import text_depth
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import PROVIDER_NAME_PATTERN
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall


def _live(modes: str, **kw):
    return connect_mcp_stdio(PY, [HOSTILE, modes], name="raw", timeout=10, strict=False, **kw)


def _problems(catalog) -> str:
    return "\n".join(str(p) for p in catalog.report.problems)


# ---- a malformed record costs that record ----------------------------------------------------------------
def test_a_malformed_record_costs_only_itself_and_is_named():
    with _live("ok,bad-record") as servers:
        catalog = servers.catalog
        assert catalog.names == ["echo_env", "ping", "good_before", "good_after"]
        text = _problems(catalog)
        # named by name where it has one, by its place in the listing where not
        assert "'broken_schema' (#3)" in text and '"type": "object"' in text
        assert "#4: 'name' must be a string, got int" in text
        assert catalog.get("ping").function() == "pong"  # the server answers calls as usual
    with pytest.raises(CatalogError, match="broken_schema"):
        connect_mcp_stdio(PY, [HOSTILE, "ok,bad-record"], name="raw", timeout=10, strict=True)


def test_two_records_with_one_name_keep_the_first_and_name_the_second():
    with _live("dup-name") as servers:
        assert servers.catalog.names == ["twin"]
        assert servers.catalog.get("twin").description == "The first twin"
        assert "'twin' (#1): duplicate name (first defined at #0)" in _problems(servers.catalog)


@pytest.mark.parametrize(
    "mode, tool, why",
    [
        ("infinity", "limits", "maximum is inf, which is not a JSON number"),
        ("nan", "nan_tool", "default is nan, which is not a JSON number"),
        ("deep=150", "deep_tool", "nested more than 100 levels deep"),
    ],
)
def test_infinity_nan_and_deep_schemas_cost_their_tool_named_as_what_they_are(mode, tool, why):
    with _live(f"ok,{mode}") as servers:
        assert servers.catalog.names == ["echo_env", "ping"]  # the rest of the page loads
        text = _problems(servers.catalog)
        assert f"'{tool}'" in text and why in text


def test_an_answer_deeper_than_any_parser_here_fails_its_server_at_once_naming_the_depth():
    # the page cannot be parsed at all: the listing fails with the reason, not after a timeout
    with pytest.raises(McpToolError, match=rf"nested \d+ levels deep, more than the {MAX_WIRE_DEPTH}"):
        McpConnection(PY, [HOSTILE, "ok,deep=400"], timeout=30).tool_records()


@pytest.mark.parametrize("opener, leaf, closer", [('{"x":', "1", "}"), ("[", "", "]")])
def test_the_sdks_json_parser_takes_sdk_json_depth_levels_and_refuses_deeper(opener, leaf, closer):
    # An answer the SDK refuses is parsed here when it is deeper than SDK_JSON_DEPTH: the SDK's error names
    # no cause by type, so the measured depth decides, and it must match what the SDK's parser takes.
    from mcp.types import jsonrpc_message_adapter

    def answer(depth: int) -> str:
        inner = depth - 2  # the message's object and its result's
        return '{"jsonrpc": "2.0", "id": 1, "result": {"a": ' + opener * inner + leaf + closer * inner + "}}"

    assert text_depth(answer(SDK_JSON_DEPTH)) == SDK_JSON_DEPTH
    jsonrpc_message_adapter.validate_json(answer(SDK_JSON_DEPTH), by_name=False)
    with pytest.raises(ValueError):
        jsonrpc_message_adapter.validate_json(answer(SDK_JSON_DEPTH + 2), by_name=False)


def test_a_bad_server_in_a_config_costs_only_that_server(tmp_path):
    config = write_config(
        tmp_path / "mcp.json",
        {"good": stdio("ok"), "records": stdio("ok,bad-record"), "unlistable": stdio("ok,deep=400")},
    )
    with connect_mcp_config(config, timeout=10) as servers:
        names = servers.catalog.names
        assert {"good__echo_env", "records__echo_env", "good_before", "good_after"} <= set(names)
        assert list(servers.failures) == ["unlistable"]
        assert "started, but listing its tools failed" in servers.failures["unlistable"]
        assert "nested" in servers.failures["unlistable"]
        failed = [p for p in servers.catalog.report.problems if p.failure is not None]
        assert [(p.tool, p.failure) for p in failed] == [("server 'unlistable'", ServerFailure.LISTING)]
        assert failed[0].message.startswith("started, but listing its tools failed")  # the words unchanged
        # The doctor names the server from the kind; no tool of it is a tool's load error.
        findings = diagnose(servers.catalog, indexes=["lucene"]).findings
        assert [f.problem for f in findings if f.kind == "server-failed"] == [
            f"server 'unlistable' {failed[0].message}"
        ]
    with pytest.raises(CatalogError):
        connect_mcp_config(config, timeout=10, strict=True)


# ---- pagination is bounded --------------------------------------------------------------------------------
def test_a_cursor_the_server_repeats_ends_the_listing_with_a_problem_line():
    with _live("cursor-loop") as servers:
        assert len(servers.catalog) == 200  # the first page; its repeat is not read again
        assert "with the same cursor again; listing stopped after 1 page(s)" in _problems(servers.catalog)


def test_a_server_that_pages_forever_with_fresh_cursors_is_stopped_at_the_page_bound():
    with _live("cursor-endless") as servers:
        assert len(servers.catalog) == MAX_LIST_PAGES
        assert f"listing stopped after {MAX_LIST_PAGES} pages" in _problems(servers.catalog)


# ---- stdout noise ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode, lines", [("stdout-noise", 1), ("noise-each", 2)])
@pytest.mark.slow
def test_stdout_noise_is_counted_and_named_never_a_traceback(mode, lines):
    code, out, err = cli("search", "environment variable", "--mcp", f"{PY} {HOSTILE} ok,{mode}")
    assert code == 0, err
    assert "echo_env" in out
    assert "Traceback" not in err and "ValidationError" not in err
    assert f"printed {lines} line(s) on stdout that are not JSON-RPC" in err


# ---- keys named twice -----------------------------------------------------------------------------------
def test_a_record_naming_a_key_twice_is_refused_by_name_over_stdio_and_http():
    with _live("ok,dup-keys") as servers:
        assert servers.catalog.names == ["ping"]
        assert "'echo_env' (#0): the server's record names 'description' twice" in _problems(servers.catalog)
    with hostile_http("ok,dup-keys") as url, McpConnection(url=url, timeout=10) as connection:
        assert connection.listing().duplicates == {0: "description"}


# ---- names -------------------------------------------------------------------------------------------------
def test_names_providers_refuse_and_the_meta_tools_own_name_are_qualified_and_still_callable():
    long_name = "x" * 100
    odd = "evil name\x1b[2J"
    with _live(f"ok,meta-name,dots,names={long_name};{odd}") as servers:
        catalog = servers.catalog
        assert "toolSearchTool" not in catalog.names
        assert all(PROVIDER_NAME_PATTERN.match(n) for n in catalog.names), catalog.names
        renamed = {original: name for name, (_, original) in catalog.origins.items()}
        assert set(renamed) == {"toolSearchTool", "files.read", long_name, odd}
        assert renamed["toolSearchTool"] == "raw__toolSearchTool"
        notes = "\n".join(str(n) for n in catalog.report.notes)
        assert "meta-tool's own name" in notes and "holds '.'" in notes and "100 characters" in notes
        # the run works (toolSearchTool in the catalog would make every run raise) and calls reach the server
        turns = [
            AssistantTurn(None, [ToolCall("s", "toolSearchTool", '{"query": "read a file dotted name"}')]),
            AssistantTurn(None, [ToolCall("c", renamed["files.read"], '{"path": "x"}')]),
            AssistantTurn("done"),
        ]
        result = ToolSearchAdvisor(RegexToolIndex()).run(
            ScriptedModel(turns), [{"role": "user", "content": "x"}], list(catalog), session_id="s"
        )
        assert result.trace.stop_reason == "answered"
        call = result.trace.iterations[1].tool_calls[0]
        assert call.kind == "tool" and "unknown tool files.read" in call.result  # reached, by its own name


@pytest.mark.parametrize(
    "servers, expected",
    [
        ({"a": "names=t;a__t", "b": "names=t"}, {"a__t", "b__t"}),  # the research's case
        (
            {
                "git alpha": "names=git_status",
                "git_alpha": "names=git_status",
                "git/alpha": "names=git_status",
            },
            None,
        ),
    ],
)
def test_names_that_collide_after_qualification_are_qualified_again_never_an_abort(
    tmp_path, servers, expected
):
    config = write_config(tmp_path / "c.json", {name: stdio(modes) for name, modes in servers.items()})
    with connect_mcp_config(config, timeout=10) as live:
        names = live.catalog.names
        total = sum(len(m.split("=", 1)[1].split(";")) for m in servers.values())
        assert len(names) == len(set(names)) == total
        assert all(PROVIDER_NAME_PATTERN.match(n) for n in names)
        if expected:
            assert expected <= set(names)
        # each name still calls its own server's tool
        assert {origin for origin in live.catalog.origins.values()} == {
            (server, tool) for server, modes in servers.items() for tool in modes.split("=", 1)[1].split(";")
        }
        notes = str(live.catalog.report)
        assert "was taken" in notes or "reduces to" in notes


# ---- HTTP refusals named by status -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "status, words",
    [
        (401, "HTTP 401 Unauthorized"),
        (403, "HTTP 403 Forbidden"),
        (404, "HTTP 404 Not Found"),
        (405, "HTTP 405 Method Not Allowed"),
    ],
)
def test_an_http_server_that_refuses_is_named_by_its_status(status, words):
    with hostile_http(f"status={status}") as url, pytest.raises(McpToolError, match=words):
        McpConnection(url=url, timeout=10, startup_timeout=20)


def test_a_wrong_bearer_token_says_401_with_the_servers_challenge():
    with hostile_http("ok", token_env="RAW_TOKEN", env={"RAW_TOKEN": "right-token-0123456789"}) as url:
        with pytest.raises(McpToolError, match=r"HTTP 401 Unauthorized.*WWW-Authenticate: Bearer") as info:
            McpConnection(url=url, headers={"Authorization": "Bearer wrong-token-987654321"}, timeout=10)
        assert "wrong-token-987654321" not in str(info.value)


# ---- _meta ----------------------------------------------------------------------------------------------
def test_meta_is_kept_as_sent_and_exported_only_to_mcp():
    with _live("ok,meta") as servers:
        catalog = servers.catalog
        assert catalog.get("with_meta").meta == {"io.example/owner": "team-a"}
        assert catalog.get("ping").meta == {"vendor/tags": ["alpha"], "vendor/ui": {"icon": "x"}}
        exported = to_mcp_tools(catalog)["tools"]
        assert [t.get("_meta") for t in exported] == [t.meta for t in catalog]
        assert "vendor/tags" not in json.dumps(catalog.definitions())  # OpenAI's shape has no such field


# ---- every command that loads servers names what it left out ----------------------------------------------
@pytest.mark.parametrize("command", ["search", "tokens", "snapshot"])
@pytest.mark.slow
def test_every_command_that_loads_servers_names_the_tools_it_left_out(command, tmp_path):
    extra = {"search": ["number limits"], "tokens": [], "snapshot": ["-o", str(tmp_path / "s.json")]}[command]
    code, out, err = cli(command, *extra, "--mcp", f"{PY} {HOSTILE} ok,infinity,bad-record")
    assert code == 0, err
    assert "problem(s); the tools named are left out" in err
    for named in ("'limits'", "'broken_schema'", "#4"):
        assert named in err
