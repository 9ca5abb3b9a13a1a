"""OpenAIChatModel against a loopback fake server, through the real openai SDK and real HTTP."""

from __future__ import annotations

import json

import pytest
from openai_fake_server import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    chat_response,
    error_response,
    invalid_json,
    rate_limited,
    slow,
    tool_call,
    truncated,
)

from toolsearch_lab.models.base import AssistantTurn, ChatModel, ToolCall, Usage
from toolsearch_lab.models.openai import (
    DEFAULT_MODEL,
    ModelConnectionError,
    ModelError,
    ModelNotConfigured,
    ModelTimeout,
    OpenAIChatModel,
    load_recording,
)

FAKE_KEY = "sk-test-DO-NOT-LEAK-7f3a9c1e5b"
ENV_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "toolSearchTool",
        "description": "Search the tool catalogue.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
USER = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Oslo?"}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    # The developer's real key must never reach the fake server, and env must not change test outcomes.
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def make_model(server: FakeOpenAIServer, **kw) -> OpenAIChatModel:
    kw.setdefault("timeout", 5.0)
    return OpenAIChatModel(model="fake-model", base_url=server.base_url, api_key=FAKE_KEY, **kw)


def test_plain_answer_with_usage(server):
    server.enqueue(chat_response("It is sunny.", usage=(12, 4)))
    model = make_model(server)
    assert isinstance(model, ChatModel)
    turn = model.complete(USER, [])
    assert turn == AssistantTurn("It is sunny.", [], Usage(12, 4, 16))
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    body = request.json
    assert body["model"] == "fake-model"
    assert body["messages"] == USER
    # No tools: neither an empty tools array nor tool_choice may be sent (OpenAI rejects both).
    assert "tools" not in body and "tool_choice" not in body


def test_missing_usage_gives_none(server):
    server.enqueue(chat_response("ok", usage=None))
    assert make_model(server).complete(USER, []).usage is None


def test_tool_call_parsed_with_exact_raw_arguments(server):
    raw = '{"city": "Oslo",  "units":"metric"}'  # odd spacing: must come back byte for byte
    server.enqueue(chat_response(None, [tool_call("get_weather", raw, id="call_1")]))
    turn = make_model(server).complete(USER, [WEATHER_TOOL])
    assert turn.content is None
    assert turn.tool_calls == [ToolCall("call_1", "get_weather", raw)]
    body = server.requests[0].json
    assert body["tools"] == [WEATHER_TOOL]
    assert body["tool_choice"] == "auto"


def test_malformed_arguments_pass_through_untouched(server):
    broken = '{"city": "Oslo"'  # truncated JSON: the loop, not the client, answers it
    server.enqueue(chat_response(None, [tool_call("get_weather", broken, id="c1")]))
    turn = make_model(server).complete(USER, [WEATHER_TOOL])
    assert turn.tool_calls[0].arguments == broken


def test_hallucinated_tool_name_passes_through(server):
    server.enqueue(chat_response(None, [tool_call("send_rocket", "{}", id="c1")]))
    turn = make_model(server).complete(USER, [WEATHER_TOOL])
    assert [c.name for c in turn.tool_calls] == ["send_rocket"]


def test_request_strips_internal_keys_and_keeps_conversation(server):
    server.enqueue(chat_response("Sunny."))
    call = ToolCall("call_1", "get_weather", '{"city":"Oslo"}')
    messages = USER + [
        {**AssistantTurn(None, [call]).to_message(), "turn": 1},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "sunny", "ms": 3.2},
    ]
    make_model(server).complete(messages, [WEATHER_TOOL])
    sent = server.requests[0].json["messages"]
    # "" not null: llama-cpp-python refuses null (tests/test_local_models.py)
    assert sent[2] == {"role": "assistant", "content": "", "tool_calls": [call.to_dict()]}
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    assert messages[3]["name"] == "get_weather"  # the caller's messages are not mutated


def test_unknown_role_is_a_clear_error(server):
    with pytest.raises(ValueError, match="unsupported message role 'robot'"):
        make_model(server).complete([{"role": "robot", "content": "x"}], [])
    assert server.requests == []


def test_scripted_tool_search_flow_branches_on_request(server):
    """The shape the advisor's end-to-end test uses: answer according to which tools are exposed."""

    def respond(request: RecordedRequest):
        tools = request.tool_names
        if tools == ["toolSearchTool"]:
            return chat_response(None, [tool_call("toolSearchTool", {"query": "weather"}, id="s1")])
        if request.messages[-1].get("tool_call_id") == "s1":  # search answered: call the discovered tool
            return chat_response(None, [tool_call("get_weather", {"city": "Oslo"}, id="w1")])
        return chat_response("Sunny in Oslo.")

    server.default = respond
    model = make_model(server)
    convo = list(USER)
    turn = model.complete(convo, [SEARCH_TOOL])
    assert turn.tool_calls[0].name == "toolSearchTool"
    convo += [
        turn.to_message(),
        {"role": "tool", "tool_call_id": "s1", "name": "toolSearchTool", "content": "[]"},
    ]
    turn = model.complete(convo, [SEARCH_TOOL, WEATHER_TOOL])
    assert turn.tool_calls == [ToolCall("w1", "get_weather", '{"city": "Oslo"}')]
    convo += [
        turn.to_message(),
        {"role": "tool", "tool_call_id": "w1", "name": "get_weather", "content": "sun"},
    ]
    assert model.complete(convo, [SEARCH_TOOL, WEATHER_TOOL]).content == "Sunny in Oslo."
    assert [r.tool_names for r in server.requests] == [
        ["toolSearchTool"],
        ["toolSearchTool", "get_weather"],
        ["toolSearchTool", "get_weather"],
    ]


def test_429_with_retry_after_ms_then_success(server):
    server.enqueue(rate_limited(retry_after_ms=10), chat_response("after the wait"))
    model = make_model(server)
    waits: list[float] = []
    model._sleep = waits.append
    turn = model.complete(USER, [])
    assert turn.content == "after the wait"
    assert len(server.requests) == 2
    assert waits == [0.01]  # retry-after-ms honoured, not the default backoff


def test_500_then_success(server):
    server.enqueue(error_response(500, "boom"), chat_response("recovered"))
    assert make_model(server).complete(USER, []).content == "recovered"
    assert len(server.requests) == 2


def test_truncated_body_is_retried_then_surfaces_as_connection_error(server):
    server.enqueue(truncated(), chat_response("second try"))
    assert make_model(server).complete(USER, []).content == "second try"
    server.enqueue(truncated())
    with pytest.raises(ModelConnectionError, match="connection failed"):
        make_model(server, max_retries=0).complete(USER, [])


def test_invalid_json_body_is_a_model_error(server):
    server.enqueue(invalid_json())
    with pytest.raises(ModelError, match="unreadable response"):
        make_model(server, max_retries=0).complete(USER, [])


def test_error_status_after_retries_is_exhausted(server):
    server.enqueue(*[error_response(503, "overloaded", headers={"retry-after-ms": "1"})] * 2)
    with pytest.raises(ModelError) as info:
        make_model(server, max_retries=1).complete(USER, [])
    assert info.value.status_code == 503
    assert "HTTP 503" in str(info.value) and "overloaded" in str(info.value)
    assert len(server.requests) == 2


def test_non_retryable_status_is_raised_at_once(server):
    server.enqueue(error_response(404, "The model `nope` does not exist", "invalid_request_error"))
    with pytest.raises(ModelError, match="does not exist.*Check the model name") as info:
        make_model(server).complete(USER, [])
    assert info.value.status_code == 404
    assert len(server.requests) == 1


def test_timeout_is_bounded(server):
    server.enqueue(slow(chat_response("too late"), 3), slow(chat_response("too late"), 3))
    model = make_model(server, timeout=0.3, max_retries=1)
    model._sleep = lambda seconds: None
    # Both replies would arrive after 3 s: an answer here would mean the timeout was not applied.
    with pytest.raises(ModelTimeout, match="no answer within 0.3 s") as info:
        model.complete(USER, [])
    assert len(server.requests) == 2
    assert [(r.attempt, r.error) for r in info.value.retries] == [(1, "APITimeoutError")]


def test_not_configured_is_helpful():
    model = OpenAIChatModel()  # constructing never fails: notebooks build it before checking
    assert not OpenAIChatModel.is_configured()
    with pytest.raises(ModelNotConfigured) as info:
        model.complete(USER, [])
    message = str(info.value)
    for hint in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "11434"):
        assert hint in message
    with pytest.raises(ModelNotConfigured):
        OpenAIChatModel.from_env()
    # An openai.com base URL without a key is not a local server: still not configured.
    with pytest.raises(ModelNotConfigured):
        OpenAIChatModel(base_url="https://api.openai.com/v1").complete(USER, [])


def test_local_server_needs_no_key(server):
    server.enqueue(chat_response("local"))
    model = OpenAIChatModel(model="llama3.2", base_url=server.base_url)
    assert model.complete(USER, []).content == "local"
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_env_configuration(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    assert OpenAIChatModel.is_configured()
    model = OpenAIChatModel.from_env(temperature=0.0, extra_body={"seed": 7})
    assert model.name == "openai:env-model"
    assert model.base_url == server.base_url
    server.enqueue(chat_response("from env"))
    assert model.complete(USER, []).content == "from env"
    body = server.requests[0].json
    assert body["model"] == "env-model"
    assert body["temperature"] == 0.0 and body["seed"] == 7
    assert server.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    # Explicit arguments win over the environment.
    assert OpenAIChatModel(model="arg-model").name == "openai:arg-model"


def test_default_model_name():
    assert OpenAIChatModel().name == f"openai:{DEFAULT_MODEL}"
    assert DEFAULT_MODEL == "gpt-4o-mini"


def test_key_never_leaks(server):
    model = make_model(server, max_retries=0, timeout=1)  # the slow reply's 3 s pass it; the others must not
    strings = [repr(model), str(model)]
    assert server.base_url in repr(model) and "fake-model" in repr(model)
    # A hostile or careless server echoes the key and the Authorization header back in its error.
    echo = f"Incorrect API key provided: {FAKE_KEY}. Authorization: Bearer {FAKE_KEY}"
    server.enqueue(
        error_response(401, echo, "invalid_request_error"),
        error_response(500, echo),
        slow(chat_response("late"), 3),
        truncated(),
        invalid_json(),
    )
    for _ in range(5):
        with pytest.raises(ModelError) as info:
            model.complete(USER, [])
        exc = info.value
        # Not chained: the SDK exception holds the request with its Authorization header.
        assert exc.__cause__ is None and exc.__context__ is None
        strings += [str(exc), repr(exc), exc.message, repr(vars(exc))]
    assert "Check OPENAI_API_KEY" in strings[2]
    for s in strings:
        assert FAKE_KEY not in s
        assert "DO-NOT-LEAK" not in s


def test_record_and_replay(server, tmp_path):
    server.enqueue(
        chat_response(None, [tool_call("get_weather", '{"city":"Oslo"}', id="w1")], usage=(20, 3)),
        chat_response("Sunny.", usage=(30, 2)),
    )
    model = make_model(server, record=True)
    live = [model.complete(USER, [WEATHER_TOOL]), model.complete(USER, [WEATHER_TOOL])]
    path = model.save_recording(tmp_path / "run.json")
    text = path.read_text()
    assert FAKE_KEY not in text and server.base_url not in text
    replay = load_recording(path)
    assert replay.name == "replay:openai:fake-model"
    assert [replay.complete(USER, [WEATHER_TOOL]) for _ in range(2)] == live
    # The saved turns are plain assistant messages, so ScriptedModel takes them directly too.
    from toolsearch_lab.models.base import ScriptedModel

    turns = json.loads(text)["turns"]
    assert ScriptedModel(turns).complete(USER, []).tool_calls == live[0].tool_calls


def test_fake_server_reports_missing_script(server):
    with pytest.raises(ModelError, match="no scripted reply left"):
        make_model(server, max_retries=0).complete(USER, [])
    assert server.pending == 0


def test_fake_server_raw_reply_and_headers(server):
    """Raw Reply objects for fault injection other suites may need."""
    server.enqueue(Reply(status=200, json=chat_response("x").json, headers={"x-request-id": "req_42"}))
    assert make_model(server).complete(USER, []).content == "x"
    server.enqueue(error_response(400, "bad", headers={"x-request-id": "req_43"}))
    with pytest.raises(ModelError) as info:
        make_model(server).complete(USER, [])
    assert info.value.request_id == "req_43" and info.value.status_code == 400


# ---- our own retry loop ----------------------------------------------------------------------------------
def test_retries_are_ours_and_recorded_on_the_turn(server):
    server.enqueue(
        error_response(429, "slow down", "rate_limit_exceeded", {"retry-after-ms": "30"}),
        error_response(500, "hiccup"),
        chat_response("finally"),
    )
    model = make_model(server, max_retries=2)
    waits: list[float] = []
    model._sleep = waits.append
    turn = model.complete(USER, [])
    assert turn.content == "finally" and len(server.requests) == 3
    assert model.client.max_retries == 0  # the SDK does not retry behind our back
    assert [(r.attempt, r.status, r.error, r.wait_s) for r in turn.retries] == [
        (1, 429, "RateLimitError", 0.03),
        (2, 500, "InternalServerError", 1.0),  # no Retry-After: backoff 0.5 s doubling
    ]
    assert waits == [0.03, 1.0]
    assert FAKE_KEY not in repr(turn.retries)
    # Each record tells what happened to its attempt: it was retried; none claims the model gave up.
    assert [r.message.split(": ", 1)[1] for r in turn.retries] == [
        "HTTP 429: slow down. Rate limited; retrying.",
        "HTTP 500: hiccup. Retrying.",
    ]


@pytest.mark.parametrize(
    "status, final", [(429, "Rate limited; gave up after 2 retries."), (502, "Gave up after 2 retries.")]
)
def test_only_the_attempt_given_up_on_says_gave_up_with_the_real_count(server, status, final):
    server.enqueue(*[error_response(status, "busy", headers={"retry-after-ms": "1"})] * 3)
    model = make_model(server, max_retries=2)
    model._sleep = lambda seconds: None
    with pytest.raises(ModelError) as info:
        model.complete(USER, [])
    assert len(server.requests) == 3 and info.value.message.endswith(f"HTTP {status}: busy. {final}")
    assert [r.attempt for r in info.value.retries] == [1, 2]
    assert all(r.message.endswith("etrying.") and "ave up" not in r.message for r in info.value.retries)
    server.enqueue(error_response(status, "busy"))
    with pytest.raises(ModelError, match=r"after 0 retries\.$"):
        make_model(server, max_retries=0).complete(USER, [])


def test_retry_after_forms_and_caps():
    from datetime import datetime, timedelta, timezone
    from email.utils import format_datetime

    from toolsearch_lab.models.http import MAX_RETRY_AFTER_S, backoff_seconds, retry_after as _retry_after

    assert _retry_after({"retry-after-ms": "250"}) == 0.25
    assert _retry_after({"retry-after": "2"}) == 2.0
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= _retry_after({"retry-after": later}) <= 30
    assert _retry_after({"retry-after": "soon"}) is None and _retry_after({}) is None
    assert (
        backoff_seconds(1, None) == 0.5
        and backoff_seconds(3, None) == 2.0
        and backoff_seconds(9, None) == 8.0
    )
    assert backoff_seconds(1, 3600.0) == MAX_RETRY_AFTER_S == 60.0


def test_connection_failure_after_retries_carries_them(server):
    model = OpenAIChatModel(
        model="m", base_url="http://127.0.0.1:9/v1", api_key=FAKE_KEY, max_retries=2, timeout=2
    )
    model._sleep = lambda s: None
    with pytest.raises(ModelConnectionError, match="after 3 attempt") as info:
        model.complete(USER, [])
    assert [(r.attempt, r.status, r.error) for r in info.value.retries] == [
        (1, None, "APIConnectionError"),
        (2, None, "APIConnectionError"),
    ]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_max_retries_is_validated(bad):
    with pytest.raises(ValueError, match=r"max_retries must be a non-negative integer \(>= 0\)"):
        OpenAIChatModel(max_retries=bad)
