"""AnthropicChatModel against a loopback fake of the Messages API, through the real anthropic SDK and real
HTTP: the request it sends, the answer it reads, usage, retries, keys never shown, and the Anthropic-native
strategy on the wire (tool_reference blocks, defer_loading)."""

from __future__ import annotations

import json

import pytest
from anthropic_fake_server import anthropic_error, message_response, text, tool_use
from openai_fake_server import FakeOpenAIServer

from toolsearch_lab.datafiles import data_path
from toolsearch_lab.eval.scenarios import load_scenario, run_scenario
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.anthropic_native import AnthropicNative
from toolsearch_lab.models.anthropic import AnthropicChatModel, messages_request
from toolsearch_lab.models.base import ChatModel, ToolCall, Usage
from toolsearch_lab.models.factory import make_model
from toolsearch_lab.models.http import ModelError, ModelNotConfigured

FAKE_KEY = "sk-ant-test-DO-NOT-LEAK-4b1e"
ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL")
WEATHER = {
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
    for var in ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def sent_key(request) -> str | None:
    """The key as the SDK sent it: x-api-key, or (SDK 2.x) an Authorization bearer."""
    bearer = request.headers.get("authorization", "")
    return request.headers.get("x-api-key") or (bearer.removeprefix("Bearer ") if bearer else None)


def model_for(server: FakeOpenAIServer, **options) -> AnthropicChatModel:
    options.setdefault("timeout", 5.0)
    return AnthropicChatModel(model="fake-claude", base_url=server.url, api_key=FAKE_KEY, **options)


def test_a_plain_answer_and_the_request_on_the_wire(server):
    server.enqueue(message_response([text("Sunny.")], usage={"input_tokens": 9, "output_tokens": 2}))
    model = model_for(server)
    assert isinstance(model, ChatModel)
    turn = model.complete(USER, [WEATHER])
    assert turn.content == "Sunny." and turn.tool_calls == [] and turn.usage == Usage(9, 2, 11, 0, 0)
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert sent_key(request) == FAKE_KEY and "anthropic-version" in request.headers
    body = request.json
    assert body["system"] == "Be brief." and body["model"] == "fake-claude" and body["max_tokens"] == 1024
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": WEATHER["function"]["parameters"],
        }
    ]


def test_tool_calls_go_out_as_tool_use_and_results_as_one_user_turn(server):
    server.enqueue(message_response([text("Done.")]))
    calls = [
        ToolCall("toolu_1", "get_weather", '{"city": "Oslo"}'),
        ToolCall("toolu_2", "get_weather", "{bad"),
    ]
    messages = USER + [
        {"role": "assistant", "content": None, "tool_calls": [c.to_dict() for c in calls]},
        {"role": "tool", "tool_call_id": "toolu_1", "name": "get_weather", "content": "3 °C"},
        {
            "role": "tool",
            "tool_call_id": "toolu_2",
            "name": "get_weather",
            "content": '{"error": "bad arguments"}',
        },
    ]
    model_for(server).complete(messages, [WEATHER])
    sent = server.requests[0].json["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}},  # unreadable: {}
        ],
    }
    assert sent[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 °C"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": '{"error": "bad arguments"}',
                "is_error": True,
            },
        ],
    }


def test_an_answer_from_a_real_transcript_is_read_with_its_usage(server):
    """The shipped transcript's second response (text + tool_use, cache write) as the server's answer."""
    exchanges = json.loads(data_path("transcripts", "anthropic_github_regex.json").read_text())
    server.enqueue(
        message_response(**{k: exchanges[1]["response"][k] for k in ("content", "usage", "stop_reason")})
    )
    turn = model_for(server).complete(USER, [WEATHER])
    assert turn.content == "#412 is the oldest. Checking whether it is behind release-2.4."
    assert [(c.name, json.loads(c.arguments)["pullNumber"]) for c in turn.tool_calls] == [
        ("pull_request_read", 412)
    ]
    assert turn.usage == Usage(3 + 3915, 96, 3918 + 96, 0, 3915)  # prompt = input + cache writes + reads


def test_overloaded_and_rate_limited_answers_are_retried_and_recorded(server):
    server.enqueue(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "0"}),
        message_response([text("ok")]),
    )
    model = model_for(server)
    waits = []
    model._sleep = waits.append
    turn = model.complete(USER, [])
    assert turn.content == "ok" and [r.status for r in turn.retries] == [529, 429]
    assert waits[1] == 0.0  # the server's Retry-After


def test_a_final_failure_names_the_fix_and_never_the_key(server):
    server.enqueue(anthropic_error(401, "authentication_error", f"invalid x-api-key {FAKE_KEY}"))
    model = model_for(server)
    with pytest.raises(ModelError, match="Check ANTHROPIC_API_KEY") as info:
        model.complete(USER, [])
    assert (
        FAKE_KEY not in str(info.value) and FAKE_KEY not in repr(model) and FAKE_KEY not in str(vars(model))
    )


def test_a_server_tool_block_in_the_answer_is_refused_by_name(server):
    server.enqueue(
        message_response([{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}])
    )
    with pytest.raises(ModelError, match="'server_tool_use' block"):
        model_for(server).complete(USER, [])


def test_configuration_comes_from_the_environment(monkeypatch, server):
    with pytest.raises(ModelNotConfigured, match="ANTHROPIC_API_KEY"):
        make_model("anthropic")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_MODEL", "local-claude")
    model = make_model("anthropic")
    server.enqueue(message_response([text("hi")]))
    assert model.complete(USER, []).content == "hi" and server.requests[0].json["model"] == "local-claude"
    assert sent_key(server.requests[0]) == "not-needed"  # a local server needs no key


def test_all_tools_deferred_is_refused_before_sending():
    with pytest.raises(ValueError, match="at least one"):
        messages_request(USER, [], [WEATHER])  # nothing but deferred tools


def test_the_native_strategy_on_the_wire_sends_tool_references_and_deferred_tools(server):
    """The advisor with AnthropicNative over the Anthropic client: the search tool is the only tool that is
    not deferred, every tool of the catalog is declared deferred from the first request (the tools array never
    changes), and a search result goes back as tool_reference blocks."""
    scenario = load_scenario("spring-demo")
    strategy = AnthropicNative("bm25")
    catalog = [t.definition() for t in scenario.tools]
    model = model_for(server, tool_references=True, deferred_tools=catalog)
    server.enqueue(
        message_response(
            [tool_use("toolSearchTool", {"query": "weather forecast for a city"}, id="toolu_s")]
        ),
        message_response([tool_use("weather", {"city": "Lisbon"}, id="toolu_w")]),
        message_response([text("It is sunny in Lisbon.")]),
    )
    advisor = ToolSearchAdvisor(strategy.make_index(), strategy=strategy)
    result = advisor.run(model, scenario.messages(), scenario.tools, session_id="wire")
    assert result.trace.stop_reason == "answered", result.trace.errors
    bodies = [r.json for r in server.requests]
    tools = [[(t["name"], t.get("defer_loading", False)) for t in b["tools"]] for b in bodies]
    assert tools[0] == tools[1] == tools[2]
    assert tools[0][0] == ("toolSearchTool", False) and all(deferred for _, deferred in tools[0][1:])
    assert not any("cache_control" in t for b in bodies for t in b["tools"] if t.get("defer_loading"))
    result_block = bodies[1]["messages"][-1]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_s"
    references = [b["tool_name"] for b in result_block["content"]]
    assert references and all(b["type"] == "tool_reference" for b in result_block["content"])
    assert "weather" in references and len(references) <= 5


def test_the_native_strategy_runs_a_scenario_through_the_anthropic_client(server):
    """A whole run with the offline agent deciding behind the fake server, as a real model would."""
    from toolsearch_lab.models.simulated import SimulatedAgent

    scenario = load_scenario("spring-demo")
    agent = SimulatedAgent(scenario.agent_steps())

    def respond(request):
        body = request.json
        messages = [{"role": "system", "content": body.get("system", "")}]
        for m in body["messages"]:
            for block in m["content"]:
                if block["type"] == "text":
                    messages.append({"role": m["role"], "content": block["text"]})
                elif block["type"] == "tool_use":
                    call = {
                        "id": block["id"],
                        "type": "function",
                        "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
                    }
                    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                elif block["type"] == "tool_result":
                    content = block["content"]
                    if isinstance(content, list):  # references: the API expands them into definitions
                        content = json.dumps(
                            [
                                next(t for t in catalog if t["function"]["name"] == b["tool_name"])
                                for b in content
                            ]
                        )
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": block["tool_use_id"],
                            "name": "toolSearchTool",
                            "content": content,
                        }
                    )
        tools = [
            {"type": "function", "function": {"name": t["name"], "parameters": t["input_schema"]}}
            for t in body["tools"]
            if not t.get("defer_loading")
        ]
        turn = agent.complete(messages, tools)
        blocks = ([text(turn.content)] if turn.content else []) + [
            tool_use(c.name, json.loads(c.arguments), id=c.id) for c in turn.tool_calls
        ]
        return message_response(blocks, usage={"input_tokens": 50, "output_tokens": 5})

    catalog = [t.definition() for t in scenario.tools]
    server.default = respond
    strategy = AnthropicNative("bm25")
    model = model_for(server, tool_references=True, deferred_tools=catalog)
    run = run_scenario(
        scenario, model=model, advisor=ToolSearchAdvisor(strategy.make_index(), strategy=strategy)
    )
    assert run.grade.success, [s.need for s in run.steps if not s.success]
    assert all(it.tokens.api_usage["prompt_tokens"] == 50 for it in run.trace.iterations)
