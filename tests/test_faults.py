"""Model, server and tool faults inside the advisor loop (issue 6), against the loopback OpenAI-compatible
fake server (real ``openai`` client over real HTTP) and the real MCP stdio test server.

Every case must end in bounded time, with the stop reason and the loop's limits in the trace, an error the
model (or the presenter) can read, and no exception escaping ``advisor.run``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from openai_fake_server import (
    FakeOpenAIServer,
    Reply,
    chat_response,
    error_response,
    invalid_json,
    slow,
    tool_call,
    truncated,
)

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.models.openai import OpenAIChatModel
from toolsearch_lab.trace import FailureKind, RunTrace

HANG_GUARD_S = 20.0
CONTEXT = {"chat_memory_conversation_id": "faults"}
MESSAGES = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "weather in Paris?"},
]
MCP_SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
MEASURED: dict[str, float] = {}


def _tools() -> list[Tool]:
    def raises(**kwargs):
        raise ConnectionError("backend down")

    return [
        Tool(
            "get_weather",
            "Get the current weather for a city",
            {"type": "object", "properties": {"city": {"type": "string"}}},
            function=lambda city: f"sunny in {city}",
        ),
        Tool("flaky_weather", "Weather from a backend that is down", function=raises),
        Tool("weather_dump", "Dump one megabyte of raw weather data", function=lambda: "w" * 1_000_000),
    ]


def _model(server, **kw) -> OpenAIChatModel:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5.0)
    return OpenAIChatModel(model="fake-model", base_url=server.base_url, api_key="sk-fault-test", **kw)


def _run(label, model, advisor=None, tools=None) -> tuple[RunTrace, object]:
    advisor = advisor or ToolSearchAdvisor(RegexToolIndex())
    started = time.perf_counter()
    result = advisor.run(model, MESSAGES, tools if tools is not None else _tools(), CONTEXT)
    elapsed = time.perf_counter() - started
    MEASURED[label] = elapsed
    assert elapsed < HANG_GUARD_S, f"{label}: {elapsed:.1f} s"
    trace = result.trace
    assert RunTrace.from_json(trace.to_json()) == trace  # never lose a trace, whatever happened
    for key in (
        "max_calls_per_tool",
        "max_total_tool_calls",
        "max_repeated_searches",
        "max_tool_result_chars",
    ):
        assert key in trace.config, f"the trace does not report limit {key}"
    return trace, result


def _tool_messages(request) -> list[dict]:
    return [m for m in request.messages if m["role"] == "tool"]


# ---------------------------------------------------------------------------------------------- model faults


def test_model_timeout_ends_the_run_with_a_readable_error():
    with FakeOpenAIServer() as server:
        server.enqueue(slow(chat_response("too late"), 3.0))
        trace, result = _run("timeout", _model(server, timeout=0.3))
    assert trace.stop_reason == "error" and result.answer is None
    assert "ModelTimeout" in trace.errors[0] and "no answer within 0.3 s" in trace.errors[0]
    MEASURED["timeout model_ms"] = trace.iterations[0].model_ms / 1000


def test_429_with_retry_after_is_retried_then_answers():
    with FakeOpenAIServer() as server:
        server.enqueue(
            error_response(429, "Rate limit reached", "rate_limit_exceeded", {"Retry-After": "1"}),
            chat_response("Sunny."),
        )
        trace, result = _run("429-retry-after", _model(server, max_retries=1))
        gap = server.requests[1].received_at - server.requests[0].received_at
    assert trace.stop_reason == "answered" and result.answer == "Sunny."
    assert len(server.requests) == 2 and len(trace.iterations) == 1
    assert [(r.status, r.wait_s) for r in trace.iterations[0].retries] == [(429, 1.0)]
    MEASURED["429-retry-after gap"] = gap
    assert gap >= 0.5  # Retry-After: 1 was honoured (the first backoff without it is 0.5 s)


def test_429_that_persists_reports_the_status_and_stops():
    with FakeOpenAIServer(
        default=error_response(429, "Rate limit reached", "rate_limit_exceeded", {"retry-after-ms": "10"})
    ) as server:
        trace, _ = _run("429-persistent", _model(server, max_retries=2))
    assert len(server.requests) == 3
    assert (
        trace.stop_reason == "error" and "HTTP 429" in trace.errors[0] and "Rate limited" in trace.errors[0]
    )


@pytest.mark.parametrize("then_ok", [False, True])
def test_500(then_ok):
    with FakeOpenAIServer() as server:
        server.enqueue(error_response(500, "internal explosion"))
        if then_ok:
            server.enqueue(chat_response("Recovered."))
        trace, result = _run(f"500-{then_ok}", _model(server, max_retries=1 if then_ok else 0))
    if then_ok:
        assert trace.stop_reason == "answered" and result.answer == "Recovered."
    else:
        assert (
            trace.stop_reason == "error"
            and "HTTP 500" in trace.errors[0]
            and "internal explosion" in trace.errors[0]
        )


@pytest.mark.parametrize(
    "reply",
    [
        truncated(),
        invalid_json(),
        Reply(status=200, body=b"", headers={}),
        Reply(status=200, json={"unexpected": "shape"}),
        Reply(status=200, json={"choices": []}),
    ],
    ids=["truncated", "invalid-json", "empty-body", "wrong-shape", "no-choices"],
)
def test_broken_response_bodies_end_the_run_with_an_error(reply):
    with FakeOpenAIServer() as server:
        server.enqueue(reply)
        trace, result = _run("broken-body", _model(server))
    assert trace.stop_reason == "error" and result.answer is None
    assert trace.errors and trace.errors[0].startswith(
        "model call failed: Model"
    )  # one of our ModelError types


def test_connection_refused_is_an_error_not_a_crash():
    model = OpenAIChatModel(
        model="m", base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0, timeout=2
    )
    trace, _ = _run("refused", model)
    assert trace.stop_reason == "error" and "ModelConnectionError" in trace.errors[0]


# --------------------------------------------------------------------------------------------- bad tool calls


def test_non_json_arguments_and_unknown_tools_get_error_results_the_model_reads():
    with FakeOpenAIServer() as server:
        server.enqueue(
            chat_response(
                tool_calls=[
                    tool_call("toolSearchTool", "{query: weather"),  # not JSON
                    tool_call("toolSearchTool", "[1, 2]"),  # JSON, not an object
                    tool_call("get_weather_v9", {"city": "Paris"}),  # does not exist
                    tool_call("get_weather", {"city": "Paris"}),
                ]
            ),  # exists, not discovered
            chat_response(tool_calls=[tool_call("toolSearchTool", {"query": "weather"})]),
            chat_response(
                tool_calls=[tool_call("get_weather", "{'city': 'Paris'}")]
            ),  # python repr, not JSON
            chat_response("Done."),
        )
        trace, result = _run("bad-calls", _model(server))
        second, fourth = server.requests[1], server.requests[3]
    assert trace.stop_reason == "answered" and result.answer == "Done."
    errors = [json.loads(m["content"])["error"] for m in _tool_messages(second)]
    assert "not valid JSON" in errors[0]
    assert "must be a JSON object" in errors[1]
    assert "'get_weather_v9' is not available (not a known tool)" in errors[2]
    assert "registered but not discovered yet" in errors[3]
    last = json.loads(_tool_messages(fourth)[-1]["content"])["error"]
    assert "get_weather: arguments are not valid JSON" in last
    assert [c.kind for c in trace.iterations[0].tool_calls] == ["search", "search", "rejected", "rejected"]


@pytest.mark.slow
def test_200_identical_searches_in_a_row_stop_at_the_per_tool_limit():
    search = chat_response(tool_calls=[tool_call("toolSearchTool", {"query": "weather"})])
    with FakeOpenAIServer(default=search) as server:
        trace, result = _run("200-searches-sequential", _model(server))
        n_requests = len(server.requests)
        answered = [json.loads(m["content"]) for m in _tool_messages(server.requests[-1])]
    assert trace.stop_reason == "max_calls_per_tool" and result.answer is None
    assert n_requests == 41 == len(trace.iterations)  # 40 allowed calls, the 41st breaches the limit
    assert "limit reached: tool 'toolSearchTool' called more than 40 times" in trace.errors
    # the 4th and later identical searches were answered with the runaway-loop error, not re-run
    assert all(sorted(a) == ["flaky_weather", "get_weather", "weather_dump"] for a in answered[:3])
    assert all("already searched for 'weather' 3 times" in a["error"] for a in answered[3:])


def test_200_parallel_searches_in_one_turn_are_rejected_together():
    calls = [tool_call("toolSearchTool", {"query": "weather"}) for _ in range(200)]
    with FakeOpenAIServer() as server:
        server.enqueue(chat_response(tool_calls=calls))
        trace, _ = _run("200-searches-parallel", _model(server))
    assert trace.stop_reason == "max_calls_per_tool" and len(trace.iterations) == 1
    records = trace.iterations[0].tool_calls
    assert len(records) == 200 and all(
        r.kind == "rejected"
        and r.failure is FailureKind.LIMIT_REACHED
        and r.error.startswith("limit reached")
        for r in records
    )


def test_total_tool_call_limit_is_reported():
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_total_tool_calls=5, max_repeated_searches=100)
    turn = chat_response(tool_calls=[tool_call("toolSearchTool", {"query": f"w{i}"}) for i in range(2)])
    with FakeOpenAIServer(default=turn) as server:
        trace, _ = _run("total-limit", _model(server), advisor)
    assert trace.stop_reason == "max_total_tool_calls" and trace.config["max_total_tool_calls"] == 5


def test_raising_tool_and_one_megabyte_result():
    with FakeOpenAIServer() as server:
        server.enqueue(
            chat_response(tool_calls=[tool_call("toolSearchTool", {"query": "weather"})]),
            chat_response(tool_calls=[tool_call("flaky_weather"), tool_call("weather_dump")]),
            chat_response("Partial answer."),
        )
        trace, result = _run("raise-and-1mb", _model(server))
        third = server.requests[2]
        body_size = len(third.body)
    assert trace.stop_reason == "answered" and result.answer == "Partial answer."
    raised, big = trace.iterations[1].tool_calls
    assert raised.error == "flaky_weather raised ConnectionError: backend down"
    assert json.loads(raised.result) == {"error": "flaky_weather raised ConnectionError: backend down"}
    assert raised.failure is FailureKind.TOOL_RAISED
    # A cut result is the tool's result, with a note: no failure.
    assert big.error.startswith("result cut to 100000 characters (900000 cut)") and big.failure is None
    sent = _tool_messages(third)[-1]["content"]
    assert len(sent) < 100_100 and sent.endswith("[... 900000 more characters cut by the advisor]")
    assert body_size < 200_000  # the 1 MB never went over the wire
    MEASURED["request body after 1 MB result (bytes)"] = body_size


# ---------------------------------------------------------------------------------------------- MCP faults


@pytest.fixture()
def mcp_server():
    from toolsearch_lab.catalog.live import connect_mcp_stdio

    servers = connect_mcp_stdio(sys.executable, [MCP_SERVER], name="test", timeout=1.5)
    yield servers
    servers.close()


@pytest.mark.slow
def test_mcp_server_dying_mid_run_is_an_error_result_not_a_crash(mcp_server):
    with FakeOpenAIServer() as server:
        server.enqueue(
            chat_response(
                tool_calls=[
                    tool_call("toolSearchTool", {"query": "add integers"}),
                    tool_call("toolSearchTool", {"query": "kill crash server"}),
                ]
            ),
            chat_response(tool_calls=[tool_call("add", {"a": 2, "b": 40})]),
            chat_response(tool_calls=[tool_call("crash")]),
            chat_response(tool_calls=[tool_call("add", {"a": 1, "b": 1})]),  # on the restarted server
            chat_response("The tool server died."),
        )
        started = time.perf_counter()
        trace, result = _run(
            "mcp-dies", _model(server), ToolSearchAdvisor(BM25ToolIndex()), list(mcp_server.catalog)
        )
        after_death = time.perf_counter() - started
    assert trace.stop_reason == "answered" and result.answer == "The tool server died."
    calls = [c for it in trace.iterations for c in it.tool_calls if c.kind == "tool"]
    assert [c.name for c in calls] == ["add", "crash", "add"]
    assert calls[0].result == "42" and calls[0].error is None
    assert "McpToolError" in calls[1].error and "closed the connection" in calls[1].error
    assert calls[1].failure is FailureKind.TOOL_RAISED
    assert "the server was restarted (1 of 1)" in calls[1].error  # the restart is in the trace
    assert calls[2].result == "2" and calls[2].error is None
    connection = mcp_server.connections["test"]
    assert connection.alive and len(connection.restarts) == 1
    assert after_death < 15


@pytest.mark.slow
def test_mcp_tool_that_hangs_is_cut_by_the_timeout(mcp_server):
    with FakeOpenAIServer() as server:
        server.enqueue(
            chat_response(
                tool_calls=[
                    tool_call("toolSearchTool", {"query": "sleep slow"}),
                    tool_call("toolSearchTool", {"query": "always fails message"}),
                ]
            ),
            chat_response(tool_calls=[tool_call("slow", {"seconds": 30})]),
            chat_response(tool_calls=[tool_call("fail", {"message": "boom"})]),
            chat_response("ok"),
        )
        trace, _ = _run(
            "mcp-slow", _model(server), ToolSearchAdvisor(BM25ToolIndex()), list(mcp_server.catalog)
        )
    slow_call, fail_call = (c for it in trace.iterations for c in it.tool_calls if c.kind == "tool")
    assert "no answer within the 1.5 s timeout" in slow_call.error
    assert "boom" in fail_call.error
    assert trace.stop_reason == "answered" and MEASURED["mcp-slow"] < 10


def test_zz_print_measurements():
    print("\nfault timings (s): " + ", ".join(f"{k}={v:.2f}" for k, v in sorted(MEASURED.items())))


# -------------------------------------------------------------------------------------------- embedder faults


def _embedder(server):
    from toolsearch_lab.embed import OpenAIEmbedder

    return OpenAIEmbedder(model="emb", base_url=server.base_url, api_key="k", max_retries=0, timeout=0.5)


@pytest.mark.parametrize(
    "reply",
    [error_response(500, "down"), truncated(), slow(Reply(json={}), 3.0)],
    ids=["500", "truncated", "timeout"],
)
def test_embedder_http_faults_are_embedding_errors(reply):
    from toolsearch_lab.embed import EmbeddingError

    with FakeOpenAIServer() as server:
        server.enqueue(reply)
        with pytest.raises(EmbeddingError, match="OpenAIEmbedder: "):
            _embedder(server).embed(["weather"])


@pytest.mark.parametrize(
    "reply",
    [
        # found by this suite (escaped as json.JSONDecodeError); fixed in the embedder by its author
        invalid_json(),
        Reply(
            status=200, json={"data": "x"}
        ),  # found by this suite (escaped as AttributeError); fixed likewise
    ],
    ids=["invalid-json", "wrong-shape"],
)
def test_embedder_unreadable_bodies_are_embedding_errors(reply):
    from toolsearch_lab.embed import EmbeddingError

    with FakeOpenAIServer() as server:
        server.enqueue(reply)
        with pytest.raises(EmbeddingError):
            _embedder(server).embed(["weather"])


# ---------------------------------------------------------------------------------------------- hardening II


def test_arguments_nested_1000_deep_over_http_become_an_error_result():
    """Reproduced first over real HTTP: the RecursionError escaped advisor.run and no trace came back."""
    deep = "[" * 1_000 + "]" * 1_000
    with FakeOpenAIServer() as server:
        server.enqueue(
            chat_response(tool_calls=[tool_call("toolSearchTool", '{"query": ' + deep + "}")]),
            chat_response("Sorry, I sent broken arguments."),
        )
        trace, result = _run("deep-arguments", _model(server))
        tool_messages = _tool_messages(server.requests[1])
    assert trace.stop_reason == "answered" and result.answer.startswith("Sorry")
    error = json.loads(tool_messages[0]["content"])["error"]
    assert "nested 1001 levels deep; the limit is 64" in error
    assert "nested 1001 levels deep" in trace.searches()[0].error


def test_three_429s_in_a_row_are_retried_and_every_retry_is_in_the_trace():
    with FakeOpenAIServer() as server:
        server.enqueue(
            *[error_response(429, "Rate limit reached", "rate_limit_exceeded", {"retry-after-ms": "20"})] * 3,
            chat_response("Sunny."),
        )
        trace, result = _run("429x3", _model(server, max_retries=3))
    assert trace.stop_reason == "answered" and len(server.requests) == 4
    retries = trace.iterations[0].retries
    assert [(r.attempt, r.status, r.error, r.wait_s) for r in retries] == [
        (1, 429, "RateLimitError", 0.02),
        (2, 429, "RateLimitError", 0.02),
        (3, 429, "RateLimitError", 0.02),
    ]
    assert "Rate limit reached" in retries[0].message and "sk-fault-test" not in trace.to_json()
    # Each record describes an attempt that was retried: none of them may claim the model gave up.
    assert all("gave up" not in r.message.lower() and "retrying" in r.message for r in retries)


def test_a_run_that_finally_fails_still_carries_its_retries():
    with FakeOpenAIServer(
        default=error_response(503, "overloaded", headers={"retry-after-ms": "10"})
    ) as server:
        trace, _ = _run("503-persistent", _model(server, max_retries=2))
    assert trace.stop_reason == "error" and len(server.requests) == 3
    assert [(r.attempt, r.status) for r in trace.iterations[0].retries] == [(1, 503), (2, 503)]
    assert "Gave up after 2 retries" in trace.errors[0]
    assert all("Retrying." in r.message and "Gave up" not in r.message for r in trace.iterations[0].retries)
    assert trace.summary()["retries"] == 2 and len(trace.summary()["errors"]) == 1
