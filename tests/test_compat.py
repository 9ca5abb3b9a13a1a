"""The places toolsearch_lab.compat changes or calls other libraries' internals, one test each, against the
versions installed: each fails when the library changes the shape the patch relies on."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from hostile_support import HOSTILE, PY

from toolsearch_lab.compat import (
    bpe_of_bytes,
    mcp_request_sender,
    patch_mcp_stdio_parser,
    resync_figure_widget,
    set_mcp_output_schemas,
    stamp_mcp_request,
)

NOTIFICATION = {
    "jsonrpc": "2.0",
    "method": "notifications/message",
    "params": {"level": "info", "data": "hi"},
}
# A stdio "server" that prints a line of noise and one JSON-RPC notification, then waits for stdin to close.
NOISY_SERVER = (
    f"import sys; print('Loading configuration'); print({json.dumps(NOTIFICATION)!r}, flush=True); "
    "sys.stdin.read()"
)


def test_the_mcp_sdks_stdio_reader_passes_on_whatever_the_patched_parser_returns(monkeypatch):
    from mcp.client import stdio
    from mcp.shared.message import SessionMessage

    sdk_parser = inspect.unwrap(stdio._parse_line)  # the catalog's own hook may be installed already
    assert list(inspect.signature(sdk_parser).parameters) == ["line"]
    # What the wrapped parser returns, the route must return too: a message, or an exception as a value.
    assert isinstance(sdk_parser(json.dumps(NOTIFICATION)), SessionMessage)
    assert isinstance(sdk_parser("Loading configuration"), Exception)

    monkeypatch.setattr(stdio, "_parse_line", sdk_parser)  # put back after the test
    seen: list[str] = []

    def route(line, original):
        seen.append(line)
        return original(line) if line.startswith("{") else ValueError(f"noise: {line}")

    assert patch_mcp_stdio_parser(route)
    assert inspect.unwrap(stdio._parse_line) is sdk_parser

    async def read_two():
        server = stdio.StdioServerParameters(command=sys.executable, args=["-c", NOISY_SERVER])
        with anyio.fail_after(60):
            async with stdio.stdio_client(server) as (read_stream, _):
                return [await read_stream.receive(), await read_stream.receive()]

    noise, message = anyio.run(read_two)
    assert seen == ["Loading configuration", json.dumps(NOTIFICATION)]
    assert str(noise) == "noise: Loading configuration"
    assert message.message.model_dump(exclude_none=True) == NOTIFICATION


TEST_SERVER = str(Path(__file__).resolve().parent / "mcp_test_server.py")


def _with_session(args: list[str], body, env: dict | None = None):
    """``await body(session, sent)`` on an initialized MCP ``ClientSession`` of the stdio server ``PY args``;
    ``sent`` lists each ``(method, params, options)`` the session hands its dispatcher from then on."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run():
        with anyio.fail_after(60):
            async with (
                stdio_client(StdioServerParameters(command=PY, args=args, env=env)) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                sent: list[tuple] = []
                dispatcher = session._dispatcher
                original = dispatcher.send_raw_request

                async def recording(method, params, opts, **kw):
                    sent.append((method, params, dict(opts)))
                    return await original(method, params, opts, **kw)

                dispatcher.send_raw_request = recording
                return await body(session, sent)

    return anyio.run(run)


def test_the_mcp_sessions_dispatcher_hands_back_a_listing_the_sdk_would_refuse_whole():
    async def body(session, sent):
        with pytest.raises(ValueError):  # the SDK's own listing: one malformed record fails them all
            await session.list_tools()
        send = mcp_request_sender(session)
        assert send is not None
        params, options = stamp_mcp_request(session, "tools/list", None)
        return await send("tools/list", params, options)

    raw = _with_session([HOSTILE, "ok,bad-record"], body)
    names = [t.get("name") for t in raw["tools"]]
    assert names[:2] == ["echo_env", "ping"] and "broken_schema" in names  # every record, as sent
    assert any(not isinstance(n, str) for n in names)  # the record the SDK's validation refuses


@pytest.mark.slow  # an SDK-built server: the SDK's import alone takes seconds under load
def test_the_mcp_sessions_stamp_gives_what_send_request_hands_its_dispatcher():
    async def body(session, sent):
        await session.list_tools()
        first = sent[-1]
        return first, stamp_mcp_request(session, "tools/list", None), session._negotiated_version

    (method, sdk_params, sdk_options), (params, options), version = _with_session([TEST_SERVER], body)
    assert method == "tools/list" and params == sdk_params
    assert options and options.items() <= sdk_options.items()  # send_request adds only empty headers after
    assert version in json.dumps(options)  # the stamp names the negotiated protocol version
    given = {"cursor": "c"}
    params, _ = stamp_mcp_request(None, "tools/list", given)  # a session without a stamp: as given
    assert params is given


@pytest.mark.slow  # an SDK-built server: the SDK's import alone takes seconds under load
def test_the_mcp_sessions_output_schemas_decide_how_it_checks_a_result_without_listing_again():
    as_sent = {"type": "object", "properties": {"dropped": {"type": "string"}}, "required": ["dropped"]}
    needs_more = {"type": "object", "required": ["dropped", "rows"]}

    async def body(session, sent):
        assert set_mcp_output_schemas(session, {"drop_table": as_sent})
        first = await session.call_tool("drop_table", {"table": "t"})
        assert set_mcp_output_schemas(session, {"drop_table": needs_more})  # a schema that changed
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await session.call_tool("drop_table", {"table": "t"})
        return first, [method for method, _, _ in sent]

    first, methods = _with_session([TEST_SERVER], body, env={"TOOLSEARCH_LAB_TEST_ANNOTATED": "1"})
    assert first.structured_content == {"dropped": "t"}
    assert methods == ["tools/call", "tools/call"]  # the session trusted the table: no tools/list
    assert not set_mcp_output_schemas(object(), {"t": None})


def test_plotly_figure_widgets_late_views_read_the_fields_the_resync_writes():
    go = pytest.importorskip("plotly.graph_objects")
    fig = go.FigureWidget(data=[go.Bar(y=[1, 2])], layout={"title": {"text": "before"}})
    assert fig.trait_metadata("_widget_data", "sync") and fig.trait_metadata("_widget_layout", "sync")
    with fig.batch_update():
        fig.data[0].y = [3, 4]
        fig.layout.title.text = "after"
    stale = fig.get_state()  # what a view attaching now would draw
    assert stale["_widget_data"][0]["y"] == [1, 2], "plotly keeps the fields current now: the resync can go"
    resync_figure_widget(fig)
    state = fig.get_state()
    assert state["_widget_data"][0]["y"] == [3, 4]
    assert state["_widget_layout"]["title"]["text"] == "after"
    assert state["_widget_data"][0]["uid"] == stale["_widget_data"][0]["uid"]  # the same trace, updated


CHECKS = ["http://example.com/ä", "not an iri", "urn:isbn:0451450523", "http://[::1", ""]
IRI_PROBE = f"""
import json, sys
{{setup}}
import jsonschema
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
before = "rfc3987_syntax.syntax_helpers" in sys.modules
answers = [checker.conforms(value, "iri") for value in {CHECKS!r}]
import rfc3987_syntax
first = rfc3987_syntax
answers += [checker.conforms(value, "iri-reference") for value in {CHECKS!r}]
print(json.dumps({{"compiled_at_import": before, "answers": answers, "one_module": first is rfc3987_syntax,
                   "parse": bool(rfc3987_syntax.parse("iri", "http://x.org/"))}}))
"""


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    return done.stdout


@pytest.mark.slow  # starts fresh interpreters that import the UI
def test_the_iri_stand_in_waits_for_the_first_check_and_answers_as_the_real_package():
    pytest.importorskip("rfc3987_syntax")
    real = json.loads(_run(IRI_PROBE.replace("{setup}", "")))
    deferred = json.loads(
        _run(
            IRI_PROBE.replace(
                "{setup}", "from toolsearch_lab.compat import defer_iri_grammar; defer_iri_grammar()"
            )
        )
    )
    assert real["compiled_at_import"] is True  # what the stand-in saves
    assert deferred["compiled_at_import"] is False
    assert deferred["answers"] == real["answers"] and deferred["parse"] is True
    assert deferred["one_module"] is True  # once loaded, later checks use that one real module


@pytest.mark.slow  # starts fresh interpreters that import the UI
def test_the_ui_front_door_puts_the_stand_in_before_plotly_loads():
    pytest.importorskip("rfc3987_syntax")
    out = _run(
        "import sys, toolsearch_lab.ui as ui; ui.IterationStepper; import plotly.graph_objects as go; "
        "go.FigureWidget(); print('rfc3987_syntax.syntax_helpers' in sys.modules)"
    )
    assert out.strip() == "False"


# Each printer the CLI relies on, inside wrapped_std_streams with wrappers that mark what they pass on;
# then the streams must be the ones from before, also after the block raised.
STREAMS_PROBE = """
import argparse, logging, sys, warnings
from toolsearch_lab.compat import wrapped_std_streams

class Marked:
    def __init__(self, stream, mark):
        self.stream, self.mark = stream, mark
    def write(self, text):
        return self.stream.write(text.replace("secret", self.mark))
    def __getattr__(self, name):
        return getattr(self.stream, name)

before = sys.stdout, sys.stderr
try:
    with wrapped_std_streams(lambda s: Marked(s, "[out]"), lambda s: Marked(s, "[err]")):
        print("print secret")
        warnings.warn("warnings secret")
        logging.getLogger("nobody").error("logging secret")
        try:
            argparse.ArgumentParser(prog="argparse").parse_args(["secret"])
        except SystemExit:
            pass
        raise RuntimeError("leaves the block")
except RuntimeError:
    pass
print("restored" if (sys.stdout, sys.stderr) == before else "NOT restored")
print("after secret")
"""


def test_the_std_streams_reach_every_printer_while_wrapped_and_are_restored():
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", STREAMS_PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines() == ["print [out]", "restored", "after secret"]
    err = done.stderr
    assert "warnings [err]" in err and "logging [err]" in err and "unrecognized arguments: [err]" in err
    assert "secret" not in err


def test_tiktokens_single_piece_encoding_is_byte_pair_merging_without_a_regex_split():
    from toolsearch_lab.tokens import get_encoding

    encoding = get_encoding("o200k_base")
    # Encoded as a text, "1000000" is the pieces "100", "000", "0"; as one piece its bytes merge across them.
    assert encoding.encode_ordinary("1000000") == [1353, 1302, 15]
    assert bpe_of_bytes(encoding, b"1000000") == [1353, 504, 504]
    # Bytes that are not UTF-8 on their own (half of "é") still encode.
    assert encoding.decode_bytes(bpe_of_bytes(encoding, "é".encode()[:1])) == b"\xc3"
    assert bpe_of_bytes(encoding, b"a" * 64) == [encoding.encode_single_token(b"a" * 8)] * 8
