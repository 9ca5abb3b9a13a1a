"""A run recorded under the real SDKs (toolsearch_lab.models.recorder) replays to the requests the server got.

The lab's own clients record with ``record_to=``; any ``openai``/``anthropic`` client records through
``record_client``. Each is run against the loopback fake server, unstreamed and streamed (server-sent events),
and the file is read back with ``load_transcript``: the same request bodies, the same tools in context per
request, the same searches and calls, our count of each request as the server received it. No header and no
key is ever written.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from anthropic_fake_server import message_response, text, tool_use
from openai_fake_server import FakeOpenAIServer, Reply, chat_response, tool_call
from sse_streams import message_events, response_body, streamed

from toolsearch_lab.eval.scenarios import load_scenario
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.strategies import AnthropicNative
from toolsearch_lab.models.anthropic import AnthropicChatModel
from toolsearch_lab.models.openai import OpenAIChatModel
from toolsearch_lab.models.recorder import record_client
from toolsearch_lab.models.sse import assemble
from toolsearch_lab.replay.load import load_transcript
from toolsearch_lab.tokens import TokenCounter

KEY = "sk-test-recorder-DO-NOT-WRITE-1729"


def _agent_script(request):
    """Search first, call what was found, then answer (as test_advisor_openai_e2e's agent)."""
    names = request.tool_names
    if names == ["toolSearchTool"]:
        return chat_response(
            tool_calls=[tool_call("toolSearchTool", {"query": "current time"})], usage=(300, 20)
        )
    if not [m for m in request.messages if m["role"] == "tool"][1:]:
        return chat_response(
            tool_calls=[tool_call("currentTime", {"location": "Landsmeer, NL"})], usage=(520, 15)
        )
    return chat_response("It is 15:00 in Landsmeer.", usage=(560, 12))


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _nothing_secret(path):
    written = path.read_text(encoding="utf-8")
    assert KEY not in written and "headers" not in written and "authorization" not in written.lower()


def test_a_recorded_run_of_the_lab_replays_to_the_requests_the_server_received(tmp_path):
    scenario, path = load_scenario("spring-demo"), tmp_path / "run.jsonl"
    with FakeOpenAIServer(default=_agent_script) as server:
        base_url = server.base_url
        model = OpenAIChatModel(model="fake-model", base_url=base_url, api_key=KEY, record_to=path)
        advisor = ToolSearchAdvisor(BM25ToolIndex(), index_name="lucene")
        result = advisor.run(model, scenario.messages(), scenario.tools, session_id="recorded")
    assert result.trace.stop_reason == "answered"
    records = _records(path)
    assert [r["request"]["body"] for r in records] == server.bodies()
    assert {r["request"]["url"] for r in records} == {f"{base_url}/chat/completions"}
    _nothing_secret(path)

    replayed = load_transcript(path)
    assert replayed.replay.format == "openai-chat-completions" and replayed.replay.endpoint == "127.0.0.1"
    assert [it.exposed_tools for it in replayed.iterations] == [r.tool_names for r in server.requests]
    counter = TokenCounter()
    assert [it.tokens.tool_search.total for it in replayed.iterations] == [
        counter.count_request(b["messages"], b.get("tools")).total for b in server.bodies()
    ]
    ran = result.trace
    assert [(s.query, s.names) for s in replayed.searches()] == [(s.query, s.names) for s in ran.searches()]
    assert replayed.called_tools() == ran.called_tools() == ["currentTime"]
    assert [it.tokens.api_usage["prompt_tokens"] for it in replayed.iterations] == [300, 520, 560]
    assert replayed.final_answer == result.answer and replayed.stop_reason == "answered"
    assert replayed.iterations[1].newly_exposed == ran.iterations[1].newly_exposed


def test_a_recorded_anthropic_run_replays_with_its_searches_as_tool_references(tmp_path):
    scenario, path = load_scenario("spring-demo"), tmp_path / "run.jsonl"
    strategy = AnthropicNative("bm25")
    with FakeOpenAIServer() as server:
        server.enqueue(
            message_response(
                [tool_use("toolSearchTool", {"query": "weather forecast for a city"}, id="toolu_s")]
            ),
            message_response([tool_use("weather", {"city": "Lisbon"}, id="toolu_w")]),
            message_response([text("It is sunny in Lisbon.")]),
        )
        model = AnthropicChatModel(
            model="fake-claude",
            base_url=server.url,
            api_key=KEY,
            tool_references=True,
            deferred_tools=[t.definition() for t in scenario.tools],
            record_to=path,
        )
        advisor = ToolSearchAdvisor(strategy.make_index(), strategy=strategy)
        result = advisor.run(model, scenario.messages(), scenario.tools, session_id="recorded")
    assert [r["request"]["body"] for r in _records(path)] == server.bodies()
    _nothing_secret(path)
    replayed = load_transcript(path)
    assert replayed.replay.format == "anthropic-messages"
    assert [(s.query, s.names) for s in replayed.searches()] == [
        (s.query, s.names) for s in result.trace.searches()
    ]
    assert replayed.called_tools() == ["weather"] and replayed.final_answer == "It is sunny in Lisbon."
    first, second = replayed.iterations[:2]
    assert first.exposed_tools == ["toolSearchTool"] and len(first.deferred) == len(scenario.tools)
    assert "weather" in second.exposed_tools and "weather" not in second.deferred


CHAT_CONVERSATION = [
    {"role": "user", "content": "What time is it in Landsmeer?"},
]
TIME_TOOL = {
    "type": "function",
    "function": {"name": "currentTime", "description": "Current time.", "parameters": {"type": "object"}},
}


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_completions_client_records_alike_streamed_or_not(tmp_path, stream):
    path = tmp_path / "chat.jsonl"
    first = chat_response(
        tool_calls=[tool_call("currentTime", {"location": "Landsmeer"}, id="call_1")], usage=(30, 9)
    )
    second = chat_response("It is 15:00.", usage=(45, 5))
    with FakeOpenAIServer() as server:
        server.enqueue(*((streamed(first), streamed(second)) if stream else (first, second)))
        client = record_client(openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0), path)
        messages = list(CHAT_CONVERSATION)
        call = _chat_call(client, messages, stream)
        messages += [call, {"role": "tool", "tool_call_id": "call_1", "content": '{"time": "15:00"}'}]
        answer = _chat_call(client, messages, stream)
    assert answer["content"] == "It is 15:00."
    records = _records(path)
    assert [r["response"]["body"]["choices"] for r in records] == [
        first.json["choices"],
        second.json["choices"],
    ]
    assert [r["response"]["body"]["usage"] for r in records] == [first.json["usage"], second.json["usage"]]
    _nothing_secret(path)
    replayed = load_transcript(path)
    assert replayed.called_tools() == ["currentTime"] and replayed.final_answer == "It is 15:00."
    assert [it.tokens.api_usage["prompt_tokens"] for it in replayed.iterations] == [30, 45]


def _chat_call(client, messages, stream):
    options = {"model": "fake-model", "messages": messages, "tools": [TIME_TOOL]}
    if not stream:
        message = client.chat.completions.create(**options).choices[0].message
        return message.model_dump(exclude_none=True)
    content, calls = "", {}
    for chunk in client.chat.completions.create(**options, stream=True):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for piece in choice.delta.tool_calls or []:
                slot = calls.setdefault(
                    piece.index,
                    {"id": piece.id, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                slot["function"]["name"] += piece.function.name or ""
                slot["function"]["arguments"] += piece.function.arguments or ""
    message = {"role": "assistant", "content": content or None}
    return message | ({"tool_calls": list(calls.values())} if calls else {})


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_client_records_alike_streamed_or_not(tmp_path, stream):
    path = tmp_path / "messages.jsonl"
    answer = message_response(
        [text("Checking."), tool_use("currentTime", {"location": "Landsmeer"}, id="toolu_1")]
    )
    with FakeOpenAIServer() as server:
        server.enqueue(streamed(answer) if stream else answer)
        client = record_client(anthropic.Anthropic(base_url=server.url, api_key=KEY, max_retries=0), path)
        options = {
            "model": "fake-claude",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "What time is it?"}],
            "tools": [
                {"name": "currentTime", "description": "Current time.", "input_schema": {"type": "object"}}
            ],
        }
        if stream:
            with client.messages.stream(**options) as events:
                got = events.get_final_message()
        else:
            got = client.messages.create(**options)
    assert got.content[1].input == {"location": "Landsmeer"}
    (record,) = _records(path)
    assert record["response"]["body"] == answer.json
    _nothing_secret(path)
    replayed = load_transcript(path)
    assert replayed.iterations[0].tool_calls[0].name == "currentTime"
    assert replayed.iterations[0].assistant_content == "Checking."


@pytest.mark.parametrize("stream", [False, True])
def test_an_openai_responses_client_records_alike_streamed_or_not(tmp_path, stream):
    path = tmp_path / "responses.jsonl"
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "currentTime",
        "arguments": "{}",
    }
    body = response_body([call])
    with FakeOpenAIServer() as server:
        server.enqueue(streamed(Reply(json=body)) if stream else Reply(json=body))
        client = record_client(openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0), path)
        tool = {"type": "function", "name": "currentTime", "parameters": {"type": "object", "properties": {}}}
        options = {"model": "fake-model", "input": "What time is it?", "tools": [tool]}
        if stream:
            for _ in client.responses.create(**options, stream=True):
                pass
        else:
            client.responses.create(**options)
    (record,) = _records(path)
    assert record["response"]["body"] == body
    replayed = load_transcript(path)
    assert replayed.replay.format == "openai-responses" and replayed.called_tools() == ["currentTime"]


def test_an_async_client_records_too(tmp_path):
    import asyncio

    path = tmp_path / "async.jsonl"
    with FakeOpenAIServer() as server:
        server.enqueue(chat_response("Hello.", usage=(5, 1)))

        async def ask():
            client = record_client(
                openai.AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0), path
            )
            return await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "Hi"}]
            )

        assert asyncio.run(ask()).choices[0].message.content == "Hello."
    assert load_transcript(path).final_answer == "Hello."


def test_a_logged_stream_replays_as_its_assembled_answer(tmp_path):
    """A logger that kept the stream's text (not this recorder) is read the same way."""
    answer = message_response([tool_use("currentTime", {"location": "Landsmeer"}, id="toolu_1")])
    events = "".join(
        (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
        for name, data in message_events(answer.json)
    )
    assert assemble(events) == answer.json
    request = {"model": "fake-claude", "max_tokens": 64, "messages": [{"role": "user", "content": "Time?"}]}
    request["tools"] = [{"name": "currentTime", "input_schema": {"type": "object"}}]
    logged = tmp_path / "logged.json"
    logged.write_text(json.dumps([{"request": request, "response": events}]))
    assert load_transcript(logged).iterations[0].tool_calls[0].arguments == '{"location": "Landsmeer"}'
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps([{"request": request, "response": events.replace('"index": 0', '"index": "x"', 1)}])
    )
    with pytest.raises(ValueError, match="exchange 1, response: a streamed body that cannot be read: event"):
        load_transcript(broken)
