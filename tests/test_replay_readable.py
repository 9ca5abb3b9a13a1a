"""``toolsearch-lab replay`` as a person reads it: tool errors in the table, search queries as written, a cost
per request and in total, a Claude Code session with its tool definitions from a file and its sub-agents'
requests among its own, labelled, and a search tool sent deferred flagged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toolsearch_lab.cli.main import main
from toolsearch_lab.cli.replay import format_trace, run_price
from toolsearch_lab.eval.cost import load_prices
from toolsearch_lab.replay.load import load_transcript

HERE = Path(__file__).resolve().parent / "transcripts"
SESSION = HERE / "claude_code" / "heldout_session.jsonl"


def _replay(capsys, *args: str) -> str:
    assert main(["replay", *args]) == 0
    return capsys.readouterr().out


def test_a_query_reads_as_written_and_each_request_has_a_cost(capsys):
    out = _replay(capsys, "anthropic-messages")
    assert "search tool_search_tool_regex: (?i)list.*pull.?request → list_pull_requests" in out
    assert '"(?i)list' not in out  # not an escaped JSON string
    # Request 1: 2,941 fresh input and 171 output tokens at Sonnet 4.5's $3 / $15 per million.
    row = next(line for line in out.splitlines() if line.startswith("1 "))
    assert f"${(2_941 * 3 + 171 * 15) / 1e6:.4f}" in row
    trace = load_transcript("anthropic-messages")
    price = load_prices().models["claude-sonnet-4.5"]
    total = 0.0
    for it in trace.iterations:
        u = it.tokens.api_usage
        fresh = u["prompt_tokens"] - u["cached_tokens"] - u["cache_write_tokens"]
        total += (
            fresh * 3
            + u["cached_tokens"] * 0.3
            + u["cache_write_tokens"] * 3.75
            + u["completion_tokens"] * 15
        )
    assert price.input == 3 and price.cache_read == 0.3 and price.cache_write == 3.75 and price.output == 15
    assert (
        f"cost: ${total / 1e6:.4f} over 4 requests" in out
        and "claude-sonnet-4.5 prices (the run's model)" in out
    )


def test_a_run_whose_model_has_no_price_says_so_and_takes_a_named_one(capsys):
    out = _replay(capsys, "openai-responses")
    assert (
        "cost: - (no price for model gpt-5.4 in the shipped price table; name one with --price-model)" in out
    )
    out = _replay(capsys, "openai-responses", "--price-model", "gpt-5")
    assert "gpt-5 prices (as named)" in out and "cost: $" in out
    assert main(["replay", "openai-responses", "--price-model", "gpt-9"]) == 2
    assert "no price for model 'gpt-9'" in capsys.readouterr().err


def test_a_failed_tool_call_shows_in_the_table_with_what_it_answered(tmp_path, capsys):
    exchanges = json.loads((HERE / "anthropic" / "heldout_clientside_search.json").read_text())
    for exchange in exchanges:
        for message in exchange["request"]["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and not isinstance(block.get("content"), list):
                    block["is_error"], block["content"] = (
                        True,
                        "HTTP 403: resource not accessible by integration",
                    )
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(exchanges))
    out = _replay(capsys, str(path))
    failed = [line.strip() for line in out.splitlines() if "failed:" in line]
    assert failed and all(
        line.endswith("HTTP 403: resource not accessible by integration") for line in failed
    )
    assert failed[0].startswith("✗ ")


ANTHROPIC_TOOLS = [
    {
        "name": "mcp__github__search_issues",
        "description": "Search issues in GitHub repositories.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
    {
        "name": "mcp__github__update_issue_labels",
        "description": "Replace the labels of an issue.",
        "input_schema": {
            "type": "object",
            "properties": {"labels": {"type": "array", "items": {"type": "string"}}},
        },
    },
]


@pytest.mark.parametrize("shape", ["anthropic tool list", "mcp tools/list"])
def test_a_claude_code_catalog_file_gives_our_count_the_definitions_it_holds(tmp_path, shape, capsys):
    tools = ANTHROPIC_TOOLS
    if shape == "mcp tools/list":
        tools = {
            "tools": [
                {"name": t["name"], "description": t["description"], "inputSchema": t["input_schema"]}
                for t in tools
            ]
        }
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps(tools))
    bare, given = load_transcript(SESSION), load_transcript(SESSION, catalog=catalog)
    assert not bare.replay.counts_definitions and given.replay.counts_definitions
    ours = [it.tokens.tool_search.total for it in given.iterations]
    assert ours[-1] > [it.tokens.tool_search.total for it in bare.iterations][-1]
    missing = [e for e in given.errors if e.startswith("the catalog given defines none of")]
    assert missing and "mcp__github__update_issue_labels" not in missing[0]
    assert "mcp__github__search_issues" not in missing[0]
    out = _replay(capsys, str(SESSION), "--catalog", str(catalog))
    assert "the conversation in the file and the loaded tools' definitions" in out


def _sub_agent_lines(session_id: str) -> list[dict]:
    base = {"isSidechain": True, "sessionId": session_id, "agentId": "a5f1c9e2b7d3", "userType": "external"}
    usage = {"input_tokens": 900, "output_tokens": 20}
    grep = {"type": "tool_use", "id": "toolu_sub_1", "name": "Grep", "input": {"pattern": "FAILED"}}
    return [
        base
        | {
            "type": "user",
            "uuid": "s1",
            "timestamp": "2026-12-01T08:00:07.000Z",
            "message": {"role": "user", "content": "Find which test failed in the CI log."},
        },
        base
        | {
            "type": "assistant",
            "uuid": "s2",
            "timestamp": "2026-12-01T08:00:07.900Z",
            "message": {
                "id": "msg_sub_1",
                "model": "claude-haiku-4-5",
                "role": "assistant",
                "content": [grep],
                "stop_reason": "tool_use",
                "usage": usage,
            },
        },
        base
        | {
            "type": "user",
            "uuid": "s3",
            "timestamp": "2026-12-01T08:00:08.300Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_sub_1",
                        "content": "tests/test_pay.py::test_retry FAILED",
                    }
                ],
            },
        },
        base
        | {
            "type": "assistant",
            "uuid": "s4",
            "timestamp": "2026-12-01T08:00:09.100Z",
            "message": {
                "id": "msg_sub_2",
                "model": "claude-haiku-4-5",
                "role": "assistant",
                "content": [{"type": "text", "text": "test_retry failed."}],
                "stop_reason": "end_turn",
                "usage": usage,
            },
        },
    ]


def test_sub_agent_files_beside_a_session_join_its_requests_labelled(tmp_path, capsys):
    session = tmp_path / "9e4c2a7b.jsonl"
    shutil.copy(SESSION, session)
    session_id = json.loads(SESSION.read_text().splitlines()[1])["sessionId"]
    folder = tmp_path / "9e4c2a7b" / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-a5f1c9e2b7d3.jsonl").write_text(
        "\n".join(json.dumps(r) for r in _sub_agent_lines(session_id))
    )
    (folder / "agent-a5f1c9e2b7d3.meta.json").write_text(
        json.dumps({"agentType": "Explore", "spawnDepth": 1})
    )
    alone, followed = load_transcript(SESSION), load_transcript(session)
    assert len(followed.iterations) == len(alone.iterations) + 2
    (agent,) = followed.replay.sub_agents
    assert (
        agent.label == "Explore a5f1c9e2b7d3" and agent.file == "9e4c2a7b/subagents/agent-a5f1c9e2b7d3.jsonl"
    )
    # In time order: the main session's second call (08:00:06.8) before them, its third (08:00:10.4) after.
    assert agent.requests == [3, 4]
    sub = followed.iterations[2]
    assert [c.name for c in sub.tool_calls] == ["Grep"] and sub.tokens.api_usage["prompt_tokens"] == 900
    assert followed.iterations[4].exposed_tools == alone.iterations[2].exposed_tools
    assert followed.final_answer == alone.final_answer
    out = _replay(capsys, str(session))
    assert "↳ sub-agent Explore a5f1c9e2b7d3's request" in out
    assert (
        "sub-agent Explore a5f1c9e2b7d3 (9e4c2a7b/subagents/agent-a5f1c9e2b7d3.jsonl): requests 3, 4" in out
    )


def test_format_trace_prices_with_what_it_is_given():
    trace = load_transcript("anthropic-messages")
    text = format_trace(trace, run_price(trace, price_model="claude-haiku-4.5"))
    assert "claude-haiku-4.5 prices (as named)" in text


@pytest.mark.parametrize(
    ("name", "search_tool"),
    [("anthropic-messages", "tool_search_tool_regex"), ("openai-responses", "tool_search")],
)
def test_a_search_tool_sent_deferred_is_flagged(tmp_path, capsys, name, search_tool):
    from toolsearch_lab.datafiles import data_path
    from toolsearch_lab.replay.load import SHIPPED_TRANSCRIPTS

    exchanges = json.loads(data_path("transcripts", SHIPPED_TRANSCRIPTS[name]).read_text())
    for tool in exchanges[1]["request"]["tools"]:
        if tool.get("name") == search_tool or tool.get("type") == search_tool:
            tool["defer_loading"] = True
    path = tmp_path / "deferred.json"
    path.write_text(json.dumps(exchanges))
    assert not [e for e in load_transcript(name).errors if "itself sent deferred" in e]
    (note,) = [e for e in load_transcript(path).errors if "itself sent deferred" in e]
    assert note.startswith(f"request 2: the search tool '{search_tool}' is itself sent deferred")
    assert "the API refuses such a request" in note
    assert f"note: request 2: the search tool '{search_tool}'" in _replay(capsys, str(path))
