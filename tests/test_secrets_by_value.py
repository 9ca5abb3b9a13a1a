"""Secrets hidden by value, by every path (issue 30, finding 2), and text from servers shown, never obeyed,
on a terminal (finding 4a/4b). A secret is planted where a user's config puts one (a query parameter of any
name, an env value, a header, userinfo) and searched for everywhere the package writes text."""

from __future__ import annotations

import json
import logging

import pytest
from hostile_support import HOSTILE, PY, cli, hostile_http, stdio, write_config

from toolsearch_lab.catalog.live import connect_mcp_stdio
from toolsearch_lab.catalog.mcp import McpConnection, McpToolError
from toolsearch_lab.cli.terminal import terminal_safe
from toolsearch_lab.embed.cache import EmbeddingCache
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.secrets import BaseUrl, Secret, redact_url, scrub

SECRET = "s3cr3t-VALUE-7f9a2c"
PART = "VALUE-7f9a2c"


def _clean(text: str, where: str) -> None:
    assert SECRET not in text and PART not in text, f"secret leaked in {where}: {text[:300]!r}"


@pytest.mark.parametrize(
    "parameter", ["x-api-key", "subscription-key", "access-token", "code", "sessionid", "X-Amz-Signature"]
)
def test_every_query_value_of_a_configured_url_is_hidden_whatever_its_name(parameter, tmp_path):
    url = f"https://llm.example.com/v1?region=eu&{parameter}={SECRET}"
    base = BaseUrl.parse(url)
    for text, where in (
        (base.shown, "BaseUrl.shown"),
        (redact_url(url) or "", "redact_url"),
        (str(EmbeddingCache(f"openai:{base.shown}", cache_dir=tmp_path).directory), "cache folder"),
    ):
        _clean(text, where)
    assert base.shown == f"https://llm.example.com/v1?region=***&{parameter}=***"
    assert base.default_query() == {"region": "eu", parameter: SECRET}  # what is sent stays whole
    # and a server echoing it in an error is scrubbed by value
    _clean(scrub(f"rejected key {SECRET} for tenant"), "scrub")


@pytest.mark.parametrize("user", ["u", "bob", "admin1"])
def test_a_short_user_name_is_never_scrubbed_as_a_substring_of_other_words(user):
    base = BaseUrl.parse(f"http://{user}:KEY-0123456789@127.0.0.1:9/v1")
    assert base.shown == "http://127.0.0.1:9/v1"  # userinfo travels as Basic auth, never in the URL shown
    text = "[Errno 111] Connection refused by the admin1x server (bob's box)"
    assert scrub(text, base.secrets) == text


def test_values_are_scrubbed_whole_on_token_boundaries_and_long_ones_anywhere():
    Secret("shortish-1")  # 10 characters: whole tokens only
    Secret(SECRET)  # 19 characters: anywhere
    assert scrub("a shortish-1 b shortish-12 c xshortish-1") == "a *** b shortish-12 c xshortish-1"
    assert scrub(f"glued{SECRET}glued and %20{SECRET}") == "glued***glued and %20***"


@pytest.mark.slow
def test_the_start_up_timeout_message_and_every_stderr_tail_are_scrubbed():
    env = {"MY_API_TOKEN": SECRET}
    with pytest.raises(McpToolError) as hang:
        McpConnection(PY, [HOSTILE, f"hang-start,stderr-secret={SECRET}"], env=env, startup_timeout=3)
    assert "did not start within 3 s" in str(hang.value) and "starting with token ***" in str(hang.value)
    _clean(str(hang.value), "start-up timeout")
    with pytest.raises(McpToolError) as crash:
        McpConnection(PY, ["-c", f"import sys; print('key {SECRET}', file=sys.stderr); sys.exit(3)"], env=env)
    _clean(str(crash.value), "crash at start-up")


def test_http_and_mcp_log_lines_hold_no_query_secret(caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpx2", "mcp", "mcp.client.streamable_http"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    with hostile_http("ok") as url, McpConnection(url=f"{url}?token={SECRET}&t2=abc", timeout=10) as c:
        c.tool_records()
        assert c.call_tool("ping") == "pong"
    lines = [r.getMessage() for r in caplog.records]
    assert any("127.0.0.1" in line for line in lines), "no HTTP log line was captured"
    _clean("\n".join(lines) + caplog.text, "log lines")
    assert "t2=abc" not in caplog.text  # a short value too: every query value of our endpoint is hidden


def test_a_tool_echoing_an_env_value_or_a_header_sends_no_secret_to_the_model_or_the_trace():
    with connect_mcp_stdio(PY, [HOSTILE, "ok"], {"MY_API_TOKEN": SECRET}, name="raw") as servers:
        turns = [
            AssistantTurn(None, [ToolCall("s", "toolSearchTool", '{"query": "environment variable"}')]),
            AssistantTurn(None, [ToolCall("c", "echo_env", '{"name": "MY_API_TOKEN"}')]),
            AssistantTurn("done"),
        ]
        result = ToolSearchAdvisor(RegexToolIndex()).run(
            ScriptedModel(turns), [{"role": "user", "content": "x"}], list(servers.catalog), session_id="s"
        )
        _clean(result.trace.to_json(), "trace")
        _clean(json.dumps(result.messages), "messages to the model")
        call = result.trace.iterations[1].tool_calls[0]
        assert call.result == "***"  # the server had it, and echoed it: the model read *** instead
        assert call.flags == ["secret-hidden"]  # and the record says so (an MCP result, issue 48)
        _clean(repr(vars(servers.connections["raw"])), "vars(McpConnection)")
    with (
        hostile_http("ok,echo-header", token_env="RAW_TOKEN", env={"RAW_TOKEN": SECRET}) as url,
        McpConnection(url=url, headers={"Authorization": f"Bearer {SECRET}"}, timeout=10) as connection,
    ):
        echoed = connection.call_tool("echo_auth")
        assert echoed == f"authorization=Bearer {SECRET} query="  # data: as the server sent it
        assert scrub(echoed) == "authorization=*** query="  # shown: the header's value is a registered secret
        _clean(repr(vars(connection)), "vars(McpConnection)")


@pytest.mark.slow
def test_the_cli_shows_no_config_secret_and_neutralises_what_servers_supply(tmp_path, monkeypatch):
    evil = "\x1b]0;PWNED\x07\x1b[2Jevil"
    config = write_config(
        tmp_path / "mcp.json",
        {
            "docs": stdio("ansi,echo-arg", env={"DOCS_TOKEN": "${DOCS_TOKEN}"}),
            evil: {"command": str(tmp_path / "no-such-server")},
        },
    )
    code, out, err = cli(
        "search", "read a file", "--mcp-config", str(config), "--index", "lucene", env={"DOCS_TOKEN": SECRET}
    )
    assert code == 0, err
    assert "Reads a file." in out
    for text in (out, err):
        assert "\x1b" not in text and "\x07" not in text
        _clean(text, "CLI output")
    assert "x1b]0;PWNED" in err  # the failed server's name, shown (escaped), not obeyed


@pytest.mark.parametrize(
    "text",
    ["\x1b[31mred", "a\u202eevil", "x\x9b2J", "title\x1b]0;t\x07", "bell\x07", "nul\x00", "cr\roverwrite"],
)
def test_terminal_safe_leaves_no_control_and_keeps_json_valid(text):
    shown = terminal_safe(text)
    assert all(c in "\n\t" or (c.isprintable() and c not in "\u202e") for c in shown), repr(shown)
    as_json = json.dumps({"d": text}, ensure_ascii=False)
    assert json.loads(terminal_safe(as_json)) == {"d": text}  # the same value, still valid JSON


@pytest.mark.slow
def test_a_snapshot_keeps_what_the_server_sent_and_hides_the_secret_in_its_command_line(tmp_path):
    # The server is handed the token (as an argument) and writes it into a tool's description. A snapshot is
    # data (issue 48): it holds the description as sent. The command line it records is the lab's own text,
    # and hides the token, as does everything the command prints.
    config = write_config(tmp_path / "mcp.json", {"leaky": stdio("desc=key:${DOCS_TOKEN}")})
    out = tmp_path / "snap.json"
    code, printed, err = cli(
        "snapshot", "--mcp-config", str(config), "-o", str(out), env={"DOCS_TOKEN": SECRET}
    )
    assert code == 0, err
    document = json.loads(out.read_text(encoding="utf-8"))
    assert any(f"key:{SECRET}" in t["description"] for t in document["tools"])
    assert "desc=key:***" in document["servers"]["leaky"]["command"]
    _clean(json.dumps(document["servers"]) + printed + err, "the snapshot's command line and the CLI output")
