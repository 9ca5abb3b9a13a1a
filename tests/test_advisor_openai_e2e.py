"""The whole loop with the real ``openai`` client over real HTTP, against a loopback fake server."""

from __future__ import annotations

import json

from openai_fake_server import FakeOpenAIServer, chat_response, rate_limited, tool_call

from toolsearch_lab.eval.scenarios import grade, load_scenario
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.models.openai import OpenAIChatModel

KEY = "sk-test-DO-NOT-LEAK-4242"


def _agent_script(request):
    """A scripted 'model' that behaves like a real one: search first, then call what it found, then answer."""
    names = request.tool_names
    tool_results = [m for m in request.messages if m["role"] == "tool"]
    if names == ["toolSearchTool"]:
        return chat_response(
            tool_calls=[tool_call("toolSearchTool", {"query": "current time"})], usage=(300, 20)
        )
    if "currentTime" in names and not tool_results[1:]:
        return chat_response(
            tool_calls=[tool_call("currentTime", {"location": "Landsmeer, NL"})], usage=(520, 15)
        )
    return chat_response("It is 15:00 in Landsmeer.", usage=(560, 12))


def _run(server, scenario_name="spring-demo"):
    scenario = load_scenario(scenario_name)
    model = OpenAIChatModel(model="fake-model", base_url=server.base_url, api_key=KEY, max_retries=2)
    advisor = ToolSearchAdvisor(BM25ToolIndex(), index_name="lucene")
    result = advisor.run(model, scenario.messages(), scenario.tools, {"chat_memory_conversation_id": "e2e"})
    return scenario, result


def test_search_discover_call_answer_over_http():
    with FakeOpenAIServer(default=_agent_script) as server:
        scenario, result = _run(server)
    trace = result.trace
    assert trace.stop_reason == "answered" and result.answer == "It is 15:00 in Landsmeer."
    assert [r.tool_names for r in server.requests] == [
        ["toolSearchTool"],
        ["toolSearchTool", "currentTime", "weather", "clothing"],
        ["toolSearchTool", "currentTime", "weather", "clothing"],
    ]
    assert trace.searches()[0].names[0] == "currentTime"
    assert trace.called_tools() == ["currentTime"]
    # API usage is recorded beside our own count, per iteration
    assert [it.tokens.api_usage["prompt_tokens"] for it in trace.iterations] == [300, 520, 560]
    assert all(it.tokens.tool_search.total > 0 for it in trace.iterations)
    # the suffix reached the model, and tool messages went out without our internal 'name' key
    first = server.requests[0].messages
    assert "toolSearchTool" in first[0]["content"]
    tool_msgs = [m for m in server.requests[-1].messages if m["role"] == "tool"]
    assert tool_msgs and all("name" not in m for m in tool_msgs)
    # no secret in the trace
    assert KEY not in trace.to_json() and "Authorization" not in trace.to_json()


def test_rate_limited_then_success_is_one_iteration():
    with FakeOpenAIServer(default=_agent_script) as server:
        server.enqueue(rate_limited(retry_after_ms=5))
        _, result = _run(server)
    assert result.trace.stop_reason == "answered"
    assert len(server.requests) == 4 and len(result.trace.iterations) == 3


def test_malformed_arguments_and_hallucinated_tool_are_answered_with_errors():
    with FakeOpenAIServer() as server:
        server.enqueue(
            chat_response(tool_calls=[tool_call("toolSearchTool", '{"query": "weather"')]),  # truncated JSON
            chat_response(tool_calls=[tool_call("get_weather_v2", {"city": "Paris"})]),  # hallucinated
            chat_response("Sorry, I could not do it."),
        )
        _, result = _run(server)
    trace = result.trace
    assert trace.stop_reason == "answered"
    assert "not valid JSON" in trace.iterations[0].tool_calls[0].error
    assert trace.iterations[1].tool_calls[0].kind == "rejected"
    assert "not a known tool" in trace.iterations[1].tool_calls[0].error
    # the model saw both errors as tool results
    contents = [json.loads(m["content"]) for m in server.requests[-1].messages if m["role"] == "tool"]
    assert all("error" in c for c in contents)


def test_simulated_agent_grades_the_same_scenario_successfully():
    from toolsearch_lab.eval.scenarios import run_scenario

    run = run_scenario("spring-demo", index="lucene")
    assert grade(run.scenario, run.trace).success
