"""Cache-aware cost: the OpenAI and Anthropic caching rules on hand-made requests, the price table, the
reconciliation with a server's reported cached tokens, and ``toolsearch-lab compare --json`` in process."""

from __future__ import annotations

import json

import pytest
from openai_fake_server import FakeOpenAIServer, chat_response

from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.eval.cost import (
    AnthropicCache,
    load_prices,
    openai_split,
    request_costs,
    request_segments,
    shared_prefix_tokens,
)
from toolsearch_lab.loop.anthropic_native import AnthropicNative
from toolsearch_lab.loop.strategies import STRATEGY_NAMES, make_strategy
from toolsearch_lab.models.openai import OpenAIChatModel
from toolsearch_lab.models.simulated import SimulatedAgent
from toolsearch_lab.tokens import TokenCounter

COUNTER = TokenCounter()


def _tool(name: str, words: int) -> dict:
    description = " ".join(f"{name}{i}" for i in range(words))
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {}}}


SYSTEM = {"role": "system", "content": "Be brief."}
USER = {"role": "user", "content": "Find the weather."}
ASK = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
}
ANSWER = {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": "sunny " * 50}
BIG = [_tool("alpha", 400), _tool("beta", 400), _tool("gamma", 400)]


def _total(segments) -> int:
    return sum(s.tokens for s in segments)


def test_segments_add_up_to_the_request_count():
    messages = [SYSTEM, USER, ASK, ANSWER]
    wire = [{k: v for k, v in m.items() if k != "name"} if m["role"] == "tool" else m for m in messages]
    assert _total(request_segments(messages, BIG, COUNTER)) == COUNTER.count_request(wire, BIG).total


def test_openai_caches_the_previous_request_in_128_token_steps_above_1024():
    first = request_segments([SYSTEM, USER], BIG, COUNTER)
    second = request_segments([SYSTEM, USER, ASK, ANSWER], BIG, COUNTER)
    shared = shared_prefix_tokens(second, first)
    assert shared == _total(first) - 3  # all but the reply priming
    split = openai_split(second, [first])
    assert split.read == 1024 + (shared - 1024) // 128 * 128 and split.read % 128 == 0
    assert split.read + split.uncached == _total(second) and split.write == 0
    assert openai_split(first, []).read == 0
    small = request_segments([SYSTEM, USER], BIG[:1], COUNTER)
    assert _total(small) < 1024 and openai_split(small, [small]).read == 0  # below the minimum: nothing


def test_openai_adding_a_tool_keeps_only_the_tools_before_it():
    before = request_segments([SYSTEM, USER, ASK, ANSWER], BIG[:2], COUNTER)
    after = request_segments([SYSTEM, USER, ASK, ANSWER], BIG, COUNTER)
    two_tools = sum(s.tokens for s in before if s.kind == "tool")
    assert shared_prefix_tokens(after, before) == two_tools
    # Expanding the new definition inside the conversation instead keeps the whole previous prefix.
    inline = request_segments(
        [SYSTEM, USER, ASK, ANSWER, {"role": "user", "content": json.dumps(BIG[2])}], BIG[:2], COUNTER
    )
    assert shared_prefix_tokens(inline, before) == _total(before) - 3


def test_anthropic_writes_at_breakpoints_then_reads_and_tool_changes_invalidate_what_follows():
    cache = AnthropicCache(min_cacheable=1024)
    first = request_segments([SYSTEM, USER], BIG, COUNTER)
    split = cache.split(first)
    assert split.read == 0 and split.write == _total(first) - 3 and split.uncached == 3
    second = request_segments([SYSTEM, USER, ASK, ANSWER], BIG, COUNTER)
    split = cache.split(second)
    assert split.read == _total(first) - 3 and split.write == _total(second) - _total(first)
    changed = request_segments([SYSTEM, USER, ASK, ANSWER], [*BIG, _tool("delta", 10)], COUNTER)
    split = cache.split(changed)
    tools_before = sum(s.tokens for s in second if s.kind == "tool")
    assert split.read == 0 or split.read <= tools_before + 12  # only a tools prefix can still match
    short = AnthropicCache(min_cacheable=100_000)
    assert short.split(first).write == 0 and short.split(second).read == 0  # below the model's minimum


def test_anthropic_lookback_is_twenty_blocks():
    cache = AnthropicCache(min_cacheable=1)
    history = [SYSTEM, USER]
    cache.split(request_segments(history, BIG, COUNTER))
    long = history + [{"role": "user", "content": f"note {i}"} for i in range(25)]
    cache_far = AnthropicCache(min_cacheable=1)
    cache_far.entries = dict(cache.entries)
    # 25 new blocks after the last cached message: the last-message breakpoint cannot look back that far, but
    # the system breakpoint still finds the cached tools + system prefix.
    split = cache_far.split(request_segments(long, BIG, COUNTER))
    system_end = _total(request_segments([SYSTEM], BIG, COUNTER)) - 3
    assert split.read == system_end


def test_costs_use_the_price_table_and_show_the_servers_cached_tokens_beside_ours():
    prices = load_prices()
    price = prices.price("gpt-4.1")
    requests = [([SYSTEM, USER], BIG), ([SYSTEM, USER, ASK, ANSWER], BIG)]
    rows = request_costs(
        requests, [10, 20], price, COUNTER, [None, {"prompt_tokens": 999, "cached_tokens": 512}]
    )
    second = rows[1]
    expected = (second.cached_tokens * 0.5 + second.uncached_tokens * 2.0 + 20 * 8.0) / 1_000_000
    assert second.cost_usd == pytest.approx(expected)
    assert (second.reported_prompt, second.reported_cached) == (999, 512)
    assert rows[0].cached_tokens == 0 and rows[0].reported_cached is None
    sonnet = request_costs(requests, [10, 20], prices.price("claude-sonnet-4.5"), COUNTER)
    assert sonnet[0].cache_write_tokens > 0 and sonnet[0].cost_usd > rows[0].cost_usd


def test_bad_price_tables_name_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="non-empty 'models'"):
        load_prices({"models": {}})
    with pytest.raises(ValueError, match=r"models\['m'\].provider must be one of"):
        load_prices({"models": {"m": {"provider": "acme", "input": 1, "cache_read": 1, "output": 1}}})
    with pytest.raises(ValueError, match=r"models\['m'\].output must be a number >= 0"):
        load_prices({"models": {"m": {"provider": "openai", "input": 1, "cache_read": 1, "output": "free"}}})
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="prices.json: not valid JSON"):
        load_prices(bad)
    with pytest.raises(ValueError, match="no price for model 'gpt-9'"):
        load_prices().price("gpt-9")
    assert load_prices().taken == "2025-11-24"


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
@pytest.mark.slow
def test_every_strategy_runs_through_the_real_openai_client_and_reconciles_reported_cached_tokens(strategy):
    """SimulatedAgent decides behind a loopback OpenAI-compatible server that reports cached tokens."""
    from toolsearch_lab.eval.scenarios import load_scenario

    scenario = load_scenario("spring-demo")
    agent = SimulatedAgent(scenario.agent_steps())
    pins = ["weather"] if strategy == "pinned" else None
    built = make_strategy(strategy, pinned=pins)
    if isinstance(built, AnthropicNative):  # behind the server too, the agent writes regex queries for it
        agent = built.model_for(agent)

    def respond(request):
        body = request.json
        turn = agent.complete(body["messages"], body.get("tools") or [])
        calls = [c.to_dict() for c in turn.tool_calls]
        usage = {
            "prompt_tokens": 2000,
            "completion_tokens": 7,
            "total_tokens": 2007,
            "prompt_tokens_details": {"cached_tokens": 1024},
        }
        return chat_response(turn.content, calls or None, usage=usage)

    with FakeOpenAIServer(default=respond) as server:
        model = OpenAIChatModel(
            model="fake-model", base_url=server.base_url, api_key="sk-test-key", timeout=5.0
        )
        run = run_strategy(scenario, strategy, model=model, pinned=pins)
        sent = [r.json for r in server.requests]
    assert run.run.grade.success or strategy == "pre-retrieval"
    assert [[t["function"]["name"] for t in body.get("tools", [])] for body in sent] == [
        it.exposed_tools for it in run.trace.iterations
    ]
    if strategy == "inline-references":
        assert all([t["function"]["name"] for t in body["tools"]] == ["toolSearchTool"] for body in sent)
    assert all(c.reported_cached == 1024 and c.reported_prompt == 2000 for c in run.costs)
    assert run.row()["reported_cached_tokens"] == 1024 * len(run.costs)


@pytest.mark.slow
def test_compare_cli_json_lists_one_row_per_strategy(capsys):
    code = main(
        [
            "compare",
            "--scenario",
            "livemcpbench",
            "--strategies",
            "all-tools",
            "inline-references",
            "search-only",
            "--json",
        ]
    )
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["strategy"] for r in rows] == ["all-tools", "inline-references", "search-only"]
    for row in rows:
        assert (
            row["prompt_tokens"] == row["cached_tokens"] + row["uncached_tokens"] + row["cache_write_tokens"]
        )
        assert row["cost_usd"] > 0 and row["requests"] == len(row["tools_per_request"])
    all_tools, inline, search = rows
    assert all_tools["tools_per_request"][0] == 510 and all_tools["first_unexposed_request"] is None
    assert set(inline["tools_per_request"]) == {1} and search["first_unexposed_request"] == 1
    assert inline["success"] and search["success"] and all_tools["success"]


def test_compare_cli_refuses_an_unknown_model_price(capsys):
    assert main(["compare", "--scenario", "spring-demo", "--price-model", "gpt-9"]) == 2
    assert "no price for model 'gpt-9'" in capsys.readouterr().err
