"""An API key given to a model or an embedder never shows up in a trace, a log line, an exception message, a
repr, or a notebook output (issue 6). The fake server plays the worst case: its error messages echo the
Authorization header back in full."""

from __future__ import annotations

import json
import logging
import os
import traceback
from pathlib import Path

import pytest
from openai_fake_server import FakeOpenAIServer, chat_response, error_response, tool_call

from toolsearch_lab.embed import EmbeddingError, OpenAIEmbedder
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.models.openai import ModelError, OpenAIChatModel

KEY = "sk-live-SECRET-5f2c9a7e1b3d8c4a6e0f"
KEY_PART = "SECRET-5f2c9a7e1b3d"  # a partial leak counts too
REPO = Path(__file__).resolve().parent.parent
HTTP_LOGGERS = (
    "openai",
    "openai._base_client",
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "urllib3",
    "mcp",
    "toolsearch_lab",
)


def _no_key(text: str, where: str) -> None:
    assert KEY not in text and KEY_PART not in text, (
        f"API key leaked in {where}: ...{text[max(0, text.find(KEY_PART) - 80) :][:200]!r}"
    )


def echo_server_responder(request):
    """Answers like a careless server: failures quote the Authorization header."""
    auth = request.headers.get("authorization", "")
    body = request.json or {}
    if request.path.endswith("/embeddings"):
        if any("fail" in t for t in body.get("input", [])):
            return error_response(401, f"Incorrect API key provided: {auth} (key {auth.split()[-1]})")
        return {
            "object": "list",
            "model": "emb",
            "data": [
                {"object": "embedding", "index": i, "embedding": [1.0, 0.5]}
                for i, _ in enumerate(body.get("input", []))
            ],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
    text = json.dumps(body.get("messages", []))
    if "please fail" in text:
        return error_response(401, f"Incorrect API key provided: {auth}. You passed {auth.split()[-1]}.")
    if "toolSearchTool" in json.dumps(body.get("tools", [])) and '"role": "tool"' not in text:
        return chat_response(tool_calls=[tool_call("toolSearchTool", {"query": "weather"})])
    return chat_response("Sunny.")


@pytest.fixture()
def server():
    with FakeOpenAIServer(default=echo_server_responder) as srv:
        yield srv


@pytest.fixture()
def debug_logs(caplog):
    """Every log record at DEBUG from our code, the openai SDK and the HTTP stack, formatted with its args."""
    saved = {name: logging.getLogger(name).level for name in HTTP_LOGGERS}
    for name in HTTP_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    yield caplog
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def _exception_texts(exc: BaseException) -> str:
    """Message, repr, args and the full formatted traceback (chained causes/contexts included)."""
    return "\n".join(
        [str(exc), repr(exc), repr(exc.args), *traceback.format_exception(type(exc), exc, exc.__traceback__)]
    )


def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


# ---------------------------------------------------------------------------------------------- chat model


def test_chat_model_repr_str_and_recording_hold_no_key(server, tmp_path):
    model = OpenAIChatModel(model="m", base_url=server.base_url, api_key=KEY, max_retries=0, record=True)
    _no_key(repr(model), "repr(model)")
    _no_key(str(model), "str(model)")
    _no_key(model.name, "model.name")
    model.complete([{"role": "user", "content": "hi"}], [])
    _no_key(repr(model.request_body([{"role": "user", "content": "hi"}], [])), "request_body")
    _no_key(model.save_recording(tmp_path / "rec.json").read_text(encoding="utf-8"), "saved recording")
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was really used


def test_chat_model_errors_hold_no_key_even_when_the_server_echoes_it(server, debug_logs):
    model = OpenAIChatModel(model="m", base_url=server.base_url, api_key=KEY, max_retries=1)
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "please fail"}], [])
    exc = info.value
    assert exc.status_code == 401 and "Incorrect API key provided" in str(exc)
    for e in _chain(exc):
        _no_key(_exception_texts(e), f"exception {type(e).__name__}")
    assert (
        exc.__cause__ is None and exc.__context__ is None
    )  # the SDK error (request + headers) is not chained
    _no_key("\n".join(r.getMessage() for r in debug_logs.records), "log records")
    _no_key(debug_logs.text, "formatted log output")
    assert debug_logs.records, "DEBUG logging was not captured at all"


def test_chat_model_connection_error_holds_no_key(debug_logs):
    model = OpenAIChatModel(
        model="m", base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0, timeout=2
    )
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "hi"}], [])
    for e in _chain(info.value):
        _no_key(_exception_texts(e), "connection error")
    _no_key(debug_logs.text, "logs")


def test_advisor_trace_and_logs_hold_no_key(server, debug_logs):
    model = OpenAIChatModel(model="m", base_url=server.base_url, api_key=KEY, max_retries=0)
    tools = [Tool("get_weather", "Get the weather", function=lambda **kw: "sunny")]
    ok = ToolSearchAdvisor(RegexToolIndex()).run(
        model, [{"role": "user", "content": "weather?"}], tools, {"chat_memory_conversation_id": "s"}
    )
    failed = ToolSearchAdvisor(RegexToolIndex()).run(
        model, [{"role": "user", "content": "please fail"}], tools, {"chat_memory_conversation_id": "s"}
    )
    assert ok.trace.stop_reason == "answered" and failed.trace.stop_reason == "error"
    assert "Incorrect API key provided" in failed.trace.errors[0]
    for result in (ok, failed):
        _no_key(result.trace.to_json(indent=2), "trace JSON")
        _no_key(json.dumps(result.trace.summary()), "trace summary")
        _no_key(repr(result.trace), "repr(trace)")
        _no_key(json.dumps(result.messages), "conversation")
    _no_key(debug_logs.text, "logs")


# ---------------------------------------------------------------------------------------------- embedder


def test_embedder_repr_and_logs_hold_no_key(server, debug_logs):
    embedder = OpenAIEmbedder(model="emb", base_url=server.base_url, api_key=KEY, max_retries=0)
    _no_key(repr(embedder), "repr(embedder)")
    _no_key(str(embedder), "str(embedder)")
    _no_key(embedder.name, "embedder.name")
    _no_key(repr(vars(embedder)), "vars(embedder)")  # the key sits in a Secret whose repr is '***'
    assert embedder.embed(["weather"]).shape == (1, 2)
    _no_key(debug_logs.text, "logs")


def test_embedder_error_message_holds_no_key(server, debug_logs):
    embedder = OpenAIEmbedder(model="emb", base_url=server.base_url, api_key=KEY, max_retries=0)
    with pytest.raises(EmbeddingError) as info:
        embedder.embed(["please fail"])
    exc = info.value
    assert "HTTP 401" in str(exc)
    _no_key(_exception_texts(exc), "embedding error (message, repr, printed traceback)")
    _no_key(debug_logs.text, "logs")


def test_embedder_error_chain_holds_no_key(server):
    """Found by this suite (the SDK error with the echoed key hung on __context__); fixed in embedders.py."""
    embedder = OpenAIEmbedder(model="emb", base_url=server.base_url, api_key=KEY, max_retries=0)
    with pytest.raises(EmbeddingError) as info:
        embedder.embed(["please fail"])
    for e in _chain(info.value):
        _no_key(_exception_texts(e), f"chained {type(e).__name__}")


def test_vector_index_repr_holds_no_key(server):
    from toolsearch_lab.index.vector import VectorToolIndex

    index = VectorToolIndex(OpenAIEmbedder(model="emb", base_url=server.base_url, api_key=KEY, max_retries=0))
    index.index_tools("s", [Tool("get_weather", "Get the weather")])
    _no_key(repr(index), "repr(VectorToolIndex)")
    advisor = ToolSearchAdvisor(index)
    _no_key(json.dumps(advisor.config_summary()), "advisor config")


# ---------------------------------------------------------------------------------------------- notebook

NOTEBOOK_CELLS = [
    """import logging, sys
sys.path.insert(0, {repo!r})
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, force=True)
for name in {loggers!r}:
    logging.getLogger(name).setLevel(logging.DEBUG)
from toolsearch_lab.models.openai import OpenAIChatModel
from toolsearch_lab.embed import OpenAIEmbedder
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.model import Tool
KEY = {key!r}""",
    """model = OpenAIChatModel(model="m", base_url={url!r}, api_key=KEY, max_retries=0)
embedder = OpenAIEmbedder(model="emb", base_url={url!r}, api_key=KEY, max_retries=0)
print(model); print(repr(embedder)); print(str(embedder))
model""",
    "embedder",
    "display(model, embedder); print(model.__dict__.keys())",
    """turn = model.complete([{{"role": "user", "content": "hi"}}], [])
print(turn)
print(embedder.embed(["weather"]))""",
    """try:
    model.complete([{{"role": "user", "content": "please fail"}}], [])
except Exception as exc:
    print(exc); print(repr(exc))
try:
    embedder.embed(["please fail"])
except Exception as exc:
    print(exc); print(repr(exc))""",
    """result = ToolSearchAdvisor(RegexToolIndex()).run(
    model, [{{"role": "user", "content": "weather?"}}],
    [Tool("get_weather", "Get the weather", function=lambda **k: "sunny")],
    {{"chat_memory_conversation_id": "nb"}})
print(result.trace.to_json(indent=1)); result.trace.summary()""",
    # uncaught errors: the notebook shows their tracebacks
    """model.complete([{{"role": "user", "content": "please fail"}}], [])""",
    """embedder.embed(["please fail"])""",
]


def _outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(json.dumps(out, ensure_ascii=False))
    return "\n".join(parts)


@pytest.mark.slow
def test_notebook_outputs_hold_no_key(server):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    values = {"repo": str(REPO), "loggers": list(HTTP_LOGGERS), "key": KEY, "url": server.base_url}
    cells = [nbformat.v4.new_code_cell(src.format(**values)) for src in NOTEBOOK_CELLS]
    nb = nbformat.v4.new_notebook(cells=cells)
    env_before = {k: os.environ.pop(k, None) for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    try:
        nbclient.NotebookClient(
            nb,
            timeout=600,  # hang guards only: a loaded 2-core machine starts and runs a kernel slowly
            startup_timeout=600,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(REPO)}},
        ).execute()
    finally:
        for k, v in env_before.items():
            if v is not None:
                os.environ[k] = v
    text = _outputs_text(nb)
    # the notebook really ran and really failed where it should
    assert "OpenAIChatModel(model='m'" in text and "api_key=***" in text
    assert "Incorrect API key provided" in text and "ModelError" in text and "EmbeddingError" in text
    assert "Sunny." in text and "DEBUG" in text
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert len(errors) == 2, [o.get("ename") for o in errors]
    _no_key(text, "notebook outputs")


# ------------------------------------------------------------------------------------------ URL credentials


def test_key_inside_the_base_url_reaches_the_server_but_no_repr_name_vars_log_or_error(server, debug_logs):
    import base64

    url = server.base_url.replace("http://", f"http://proxyuser:{KEY}@")
    model = OpenAIChatModel(model="m", base_url=url, max_retries=0)
    for text, where in (
        (repr(model), "repr(model)"),
        (str(model), "str(model)"),
        (model.name, "model.name"),
        (repr(vars(model)), "vars(model)"),
    ):
        _no_key(text, where)
    assert "***@127.0.0.1" in repr(model)  # the reader still sees that credentials are configured
    assert model.complete([{"role": "user", "content": "hi"}], []).content == "Sunny."
    sent = server.requests[0].headers["authorization"]
    assert (
        sent == "Basic " + base64.b64encode(f"proxyuser:{KEY}".encode()).decode()
    )  # as httpx sent it before
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "please fail"}], [])
    for e in _chain(info.value):
        _no_key(_exception_texts(e), "error with URL credentials")
    _no_key(repr(vars(model)), "vars(model) after use")
    http_lines = [r.getMessage() for r in debug_logs.records if r.name.startswith("httpx")]
    assert any("HTTP Request: POST http://127.0.0.1" in line for line in http_lines), http_lines
    _no_key(debug_logs.text, "logs")


def test_redaction_helpers():
    from toolsearch_lab.secrets import Secret, redact_url, scrub, split_url_credentials

    assert redact_url(f"http://user:{KEY}@host:8000/v1") == "http://***@host:8000/v1"
    assert redact_url(f"https://{KEY}@host/v1") == "https://***@host/v1"
    # every query value of a URL we were given is hidden, whatever the parameter is called
    assert redact_url(f"https://h/v1?api-key={KEY}&x=1") == "https://h/v1?api-key=***&x=***"
    assert redact_url("http://host/v1") == "http://host/v1" and redact_url(None) is None
    assert split_url_credentials(f"http://u:{KEY}@h/v1") == ("http://h/v1", "u", Secret(KEY))
    assert split_url_credentials("http://h/v1") == ("http://h/v1", None, None)
    assert repr(Secret(KEY)) == "'***'" and str(Secret(KEY)) == "'***'"
    text = scrub(f"failed: Authorization: Bearer {KEY} at http://u:{KEY}@h", [Secret("other")])
    _no_key(text, "scrubbed text")
    assert "Bearer ***" in text and "http://***@h" in text


def test_the_log_filter_redacts_url_credentials_from_the_http_loggers(debug_logs):
    from toolsearch_lab.secrets import install_log_redaction

    install_log_redaction()
    install_log_redaction()  # idempotent
    for name in ("httpx", "httpx2"):
        logger = logging.getLogger(name)
        logger.info('HTTP Request: %s %s "%s"', "POST", f"http://u:{KEY}@h/v1/x", "200 OK")
        assert len(logger.filters) == len(set(map(id, logger.filters)))
    _no_key(debug_logs.text, "filtered httpx log line")
    assert "http://***@h/v1/x" in debug_logs.text


def test_embedder_with_a_key_inside_the_base_url_shows_it_nowhere(server, debug_logs):
    import base64

    url = server.base_url.replace("http://", f"http://proxyuser:{KEY}@")
    embedder = OpenAIEmbedder(model="emb", base_url=url, max_retries=0)
    for text, where in (
        (repr(embedder), "repr(embedder)"),
        (str(embedder), "str(embedder)"),
        (embedder.name, "embedder.name"),
        (repr(vars(embedder)), "vars(embedder)"),
    ):
        _no_key(text, where)
    assert embedder.embed(["weather"]).shape == (1, 2)
    sent = server.requests[0].headers["authorization"]
    assert sent == "Basic " + base64.b64encode(f"proxyuser:{KEY}".encode()).decode()
    with pytest.raises(EmbeddingError) as info:
        embedder.embed(["please fail"])
    for e in _chain(info.value):
        _no_key(_exception_texts(e), "embedder error with URL credentials")
    _no_key(debug_logs.text, "logs")


@pytest.mark.parametrize("name", ["key", "api-key", "api_key", "token", "access_token", "sig", "API-KEY"])
@pytest.mark.parametrize("where", ["?{}=", "?model=m&{}=", "#{}=", "?a=1#{}="])
def test_every_credential_parameter_form_is_redacted_and_can_be_scrubbed(name, where):
    from toolsearch_lab.secrets import query_credentials, redact_url, scrub, split_url_query

    value = "s3cr%2Bet-0123456789"
    url = "https://host/v1" + where.format(name) + value
    assert value not in redact_url(url) and "s3cr" not in redact_url(url)
    secrets = query_credentials(url)
    assert {s.reveal() for s in secrets} >= {value, "s3cr+et-0123456789"}
    assert "s3cr" not in scrub(f"failed: s3cr+et-0123456789 at {url}", secrets)
    base, params = split_url_query("https://host/v1?" + name + "=" + value)
    assert base == "https://host/v1" and params == {name: "s3cr+et-0123456789"}


def _echo_path_responder(request):
    """A careless proxy: its error messages quote the request line, query string included."""
    if "please fail" in json.dumps((request.json or {}).get("messages", [])):
        return error_response(401, f"Bad key in POST {request.path} (http://127.0.0.1{request.path})")
    if request.path.split("?")[0].endswith("/embeddings"):
        return echo_server_responder(request)
    return chat_response("Sunny.")


@pytest.mark.parametrize(
    "suffix, sent_query",
    [
        (f"?api-key={KEY}", f"api-key={KEY}"),
        (f"?api-version=2024-06-01&api_key={KEY}", f"api-version=2024-06-01&api_key={KEY}"),
        (f"?token={KEY}#frag", f"token={KEY}"),
        (f"#key={KEY}", None),  # a fragment is never sent over HTTP
        (f"#{KEY}", None),
    ],
    ids=["api-key", "second-parameter", "token-and-fragment", "fragment-parameter", "bare-fragment"],
)
def test_chat_model_key_in_the_base_url_query_or_fragment_reaches_the_server_and_shows_nowhere(
    suffix, sent_query, debug_logs, tmp_path
):
    with FakeOpenAIServer(default=_echo_path_responder) as srv:
        url = srv.base_url.replace("http://", "http://proxyuser:" + KEY + "@") + suffix
        model = OpenAIChatModel(model="m", base_url=url, max_retries=1, record=True)
        model._sleep = lambda seconds: None
        for text, where in (
            (repr(model), "repr(model)"),
            (str(model), "str(model)"),
            (model.name, "model.name"),
            (str(model.base_url), "model.base_url"),
            (repr(vars(model)), "vars(model)"),
        ):
            _no_key(text, where)
        assert "127.0.0.1" in repr(model) and "***" in repr(model)
        assert model.complete([{"role": "user", "content": "hi"}], []).content == "Sunny."
        path, _, query = srv.requests[0].path.partition("?")
        assert path == "/v1/chat/completions"  # the SDK's path is not appended after the query
        assert query == (sent_query or "")
        with pytest.raises(ModelError) as info:
            model.complete([{"role": "user", "content": "please fail"}], [])
        assert "Bad key in POST /v1/chat/completions" in info.value.message
        for e in _chain(info.value):
            _no_key(_exception_texts(e), "error with a key in the URL query")
        tools = [Tool("get_weather", "Get the weather", function=lambda **kw: "sunny")]
        failed = ToolSearchAdvisor(RegexToolIndex()).run(
            model, [{"role": "user", "content": "please fail"}], tools, session_id="s"
        )
        assert failed.trace.stop_reason == "error" and "Bad key" in failed.trace.errors[0]
        _no_key(failed.trace.to_json(indent=2), "trace JSON")
        _no_key(json.dumps(failed.trace.summary()), "trace summary")
        model.save_recording(tmp_path / "rec.json")
        _no_key((tmp_path / "rec.json").read_text(encoding="utf-8"), "recording")
    _no_key(debug_logs.text, "logs")


def test_cli_output_holds_no_key_from_the_base_url_query(monkeypatch, capsys):
    from toolsearch_lab.cli.main import main

    with FakeOpenAIServer(default=_echo_path_responder) as srv:
        srv.enqueue(error_response(503, f"overloaded at {srv.base_url}?api-key={KEY}"))
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{srv.base_url}?api-key={KEY}")
        monkeypatch.setenv("OPENAI_MODEL", "m")
        code = main(["demo", "--model", "openai", "--max-retries", "0"])
        out, err = capsys.readouterr()
        assert srv.requests[0].path == f"/v1/chat/completions?api-key={KEY}"
    assert code == 1 and "overloaded" in out
    _no_key(out + err, "CLI output")


def test_one_base_url_parser_serves_both_clients():
    from toolsearch_lab.secrets import BaseUrl

    url = BaseUrl.parse("http://proxy:pw-0123456789@host:8/v1?api-key=K-0123456789&region=eu#tok-0123456789")
    assert url.wire == "http://host:8/v1"  # what the SDK appends paths to
    assert url.default_query() == {"api-key": "K-0123456789", "region": "eu"}
    assert url.auth() == ("proxy", "pw-0123456789")
    assert url.shown == "http://host:8/v1?api-key=***&region=***#***"
    assert {s.reveal() for s in url.secrets} >= {"pw-0123456789", "K-0123456789", "tok-0123456789"}
    plain = BaseUrl.parse("http://localhost:11434/v1")
    assert (plain.shown, plain.wire, plain.auth(), plain.default_query()) == (
        "http://localhost:11434/v1",
        "http://localhost:11434/v1",
        None,
        None,
    )
