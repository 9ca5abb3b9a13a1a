"""load_transcript and ``toolsearch-lab replay`` on transcripts of the three formats, as a user meets them.

The held-out transcripts (tests/transcripts/, written by hand from the published formats, other tasks and the
other variant of each feature than the shipped ones) are replayed and compared with expectations written by
hand from the transcripts themselves: the tools in context and deferred per request, each search's query and
references, the calls, the API's usage. Each malformed transcript is refused with an error naming the place
and the fault; the credentials planted in HTTP-wrapped headers never reach a trace, the CLI or an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsearch_lab.cli.main import main
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.replay.common import TranscriptError
from toolsearch_lab.replay.load import SHIPPED_TRANSCRIPTS, load_transcript
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import RunTrace

HERE = Path(__file__).resolve().parent / "transcripts"
EXPECTED = json.loads((HERE / "expectations.json").read_text(encoding="utf-8"))
# The shipped files were renamed when they moved to data/transcripts.
SHIPPED = {
    "anthropic/shipped_github_regex.json": "anthropic-messages",
    "openai/shipped_github_hosted.json": "openai-responses",
    "claude_code/shipped_session.jsonl": "claude-code-session",
}
VALID = sorted(k for k, v in EXPECTED.items() if not k.startswith("_") and "error" not in v)
MALFORMED = sorted(k for k, v in EXPECTED.items() if not k.startswith("_") and "error" in v)


def _source(key: str) -> str:
    return SHIPPED.get(key) or str(HERE / key)


def _usage_value(raw: dict, key: str):
    for holder in (raw, raw.get("input_tokens_details") or {}, raw.get("output_tokens_details") or {}):
        if key in holder:
            return holder[key]
    return None


@pytest.mark.parametrize("key", VALID)
def test_replayed_transcript_matches_what_the_transcript_says(key):
    expected = EXPECTED[key]
    trace = load_transcript(_source(key))
    assert trace.source == "replay" and trace.config == {} and trace.replay.format == expected["format"]
    assert (trace.model, trace.user_request, trace.stop_reason) == (
        expected["model"],
        expected["user_request"],
        expected["stop_reason"],
    )
    assert len(trace.iterations) == len(expected["iterations"])
    for it, want in zip(trace.iterations, expected["iterations"], strict=True):
        where = f"{key} request {it.number}"
        assert it.exposed_tools == want["in_context"], where
        assert len(it.deferred) == want["deferred"], where
        assert not set(it.deferred) & set(it.exposed_tools), where
        searches = [{"query": s.query, "references": s.names, "error": s.error} for s in it.searches]
        assert searches == [{k: s[k] for k in ("query", "references", "error")} for s in want["searches"]]
        for search, wanted in zip(it.searches, want["searches"], strict=True):
            tool = next(c.name for c in it.tool_calls if c.call_id == search.call_id)
            assert tool == wanted["tool"], where
        assert [c.name for c in it.tool_calls if c.kind == "tool"] == want["calls"], where
        raw = it.tokens.api_usage["raw"]
        assert {k: _usage_value(raw, k) for k in want["usage"]} == want["usage"], where
    assert trace.called_tools() == expected["called"]
    if "discovered" in expected:
        assert [n for it in trace.iterations for n in it.discovered] == expected["discovered"]
    if "final_answer_starts" in expected:
        assert trace.final_answer.startswith(expected["final_answer_starts"])
    for skipped in expected.get("skipped_records_named", []):
        assert any(f"line {skipped['line']}" in e and skipped["type"] in e for e in trace.errors)
    assert RunTrace.from_json(trace.to_json()) == trace


@pytest.mark.parametrize("key", VALID)
def test_the_api_usage_sits_beside_our_count_and_says_which_is_which(key):
    trace = load_transcript(_source(key))
    for it in trace.iterations:
        usage, raw = it.tokens.api_usage, it.tokens.api_usage["raw"]
        assert usage["source"] in ("anthropic", "openai-responses", "claude-code")
        if usage["source"] == "openai-responses":
            assert usage["prompt_tokens"] == raw["input_tokens"]
        else:  # the whole prompt: fresh input, cache writes and cache reads
            parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            assert usage["prompt_tokens"] == sum(raw.get(k, 0) for k in parts)
            assert usage["cached_tokens"] == raw.get("cache_read_input_tokens", 0)
        assert usage["completion_tokens"] == raw["output_tokens"]
        assert it.tokens.tool_search.total > 0  # ours: the request as this project counts it


@pytest.mark.parametrize("key", MALFORMED)
def test_malformed_transcript_is_refused_by_name(key):
    with pytest.raises(TranscriptError) as info:
        load_transcript(HERE / key)
    message = str(info.value)
    for word in EXPECTED[key]["error"]:
        assert word in message, f"{word!r} missing from {message!r}"


@pytest.mark.parametrize("key", [k for k in VALID if "must_not_contain" in EXPECTED[k]])
def test_secrets_in_headers_never_reach_the_trace_or_the_terminal(key, capsys):
    trace = load_transcript(HERE / key)
    assert main(["replay", str(HERE / key)]) == 0
    assert main(["replay", str(HERE / key), "--json"]) == 0
    shown = capsys.readouterr().out
    for secret in EXPECTED[key]["must_not_contain"]:
        assert secret not in trace.to_json() and secret not in shown


def test_a_refused_wrapped_transcript_does_not_quote_its_headers(tmp_path):
    exchanges = json.loads((HERE / "anthropic/heldout_github_bm25.json").read_text())
    del exchanges[1]["response"]["body"]["usage"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(exchanges))
    with pytest.raises(TranscriptError, match="exchange 2") as info:
        load_transcript(broken)
    assert "sk-ant-fake-redaction-probe" not in str(info.value) and "x-api-key" not in str(info.value)


def test_every_shipped_transcript_loads_by_name_and_tells_the_same_run():
    called = []
    for name in SHIPPED_TRANSCRIPTS:
        trace = load_transcript(name)
        assert trace.replay.format == name and trace.stop_reason == "answered"
        assert "hand-written" in trace.replay.provenance.lower()
        called.append([c.split(".")[-1].removeprefix("mcp__github__") for c in trace.called_tools()])
    assert (
        called[0]
        == called[1]
        == called[2]
        == ["list_pull_requests", "pull_request_read", "add_issue_comment"]
    )


def test_cli_replay_prints_each_request_and_refuses_a_malformed_file(capsys):
    assert main(["replay", "anthropic-messages"]) == 0
    out = capsys.readouterr().out
    assert (
        "search tool_search_tool_regex: (?i)list.*pull.?request → list_pull_requests, pull_request_read"
        in out
    )
    assert "API prompt" in out and "ours = this project's o200k count" in out
    assert main(["replay", str(HERE / "openai/malformed_unknown_item.json")]) == 2
    err = capsys.readouterr().err
    assert "exchange 1, response.output[1]: unknown output item type 'tool_lookup_call'" in err


def test_cli_json_is_the_trace(capsys):
    assert main(["replay", "claude-code-session", "--json"]) == 0
    trace = RunTrace.from_json(capsys.readouterr().out)
    assert trace == load_transcript("claude-code-session")
    assert trace.iterations[0].deferred[:2] == ["EnterPlanMode", "ExitPlanMode"]


def test_untrusted_text_reaches_the_terminal_neutralised(tmp_path, capsys):
    lines = (HERE / "claude_code/heldout_session.jsonl").read_text().splitlines()
    record = json.loads(lines[3])
    record["message"]["content"] = "Label issues \x1b[2J\x1b]0;pwned\x07 now \u202egnp.exe"
    lines[3] = json.dumps(record)
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("\n".join(lines))
    assert main(["replay", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\u001b[2J" in out and "\\u202e" in out
    assert main(["replay", str(hostile), "--json"]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\u202e" not in text
    assert RunTrace.from_json(text).user_request.startswith("Label issues \x1b[2J")  # the data is unchanged


# ---- shapes the shipped and held-out files do not have -----------------------------------------------------
def test_a_cut_last_line_is_named_and_left_out(tmp_path):
    text = (HERE / "claude_code/heldout_session.jsonl").read_text()
    cut = tmp_path / "live.jsonl"
    cut.write_text(text + '{"type": "assistant", "message": {"id": "msg_')
    trace = load_transcript(cut)
    assert len(trace.iterations) == 6
    assert any("line 21: not valid JSON" in e and "cut" in e for e in trace.errors)


def test_stream_json_and_saved_traces_are_refused_with_what_they_are(tmp_path):
    stream = tmp_path / "stream.jsonl"
    stream.write_text(
        json.dumps({"type": "system", "subtype": "init", "session_id": "s", "tools": []}) + "\n"
    )
    with pytest.raises(TranscriptError, match="stream-json"):
        load_transcript(stream)
    saved = tmp_path / "trace.json"
    saved.write_text(load_transcript("anthropic-messages").to_json())
    with pytest.raises(TranscriptError, match="saved RunTrace"):
        load_transcript(saved)
    with pytest.raises(TranscriptError, match="format='openai-responses' was asked for"):
        load_transcript("anthropic-messages", format="openai-responses")


def test_a_failed_call_is_named_and_left_out(tmp_path):
    exchanges = json.loads((HERE / "anthropic/heldout_github_bm25.json").read_text())
    overloaded = {
        "request": exchanges[1]["request"],
        "response": {
            "status": 529,
            "headers": {},
            "body": {"type": "error", "error": {"type": "overloaded_error"}},
        },
    }
    retried = tmp_path / "retried.json"
    retried.write_text(json.dumps([exchanges[0], overloaded, *exchanges[1:]]))
    trace = load_transcript(retried)
    assert len(trace.iterations) == 3
    assert any("exchange 2: the call failed (HTTP 529, overloaded_error)" in e for e in trace.errors)


def test_previous_response_id_must_name_an_earlier_response(tmp_path):
    exchanges = json.loads((HERE / "openai/heldout_github_client.json").read_text())
    broken = tmp_path / "chain.json"
    broken.write_text(json.dumps(exchanges[1:]))
    with pytest.raises(
        TranscriptError, match=r"exchange 1, request.previous_response_id: .* names no earlier"
    ):
        load_transcript(broken)


def test_the_2025_search_result_form_is_read_as_a_search(tmp_path):
    first = json.loads(data_path("transcripts", SHIPPED_TRANSCRIPTS["anthropic-messages"]).read_text())[0]
    block = first["response"]["content"][2]
    refs = block["content"]["tool_references"]
    first["response"]["content"][2] = {
        "type": "tool_result",
        "tool_use_id": block["tool_use_id"],
        "content": refs,
    }
    old = tmp_path / "launch.json"
    old.write_text(json.dumps([first]))
    trace = load_transcript(old)
    assert trace.iterations[0].searches[0].names == ["list_pull_requests", "pull_request_read"]


def test_sub_agent_lines_are_counted_and_skipped(tmp_path):
    lines = (HERE / "claude_code/heldout_session.jsonl").read_text().splitlines()
    side = json.loads(lines[6])
    side["isSidechain"] = True
    side["message"]["id"] = "msg_subagent"
    path = tmp_path / "with_subagent.jsonl"
    path.write_text("\n".join([*lines[:7], json.dumps(side), *lines[7:]]))
    trace = load_transcript(path)
    assert len(trace.iterations) == 6
    assert any("1 sub-agent (isSidechain) line" in e for e in trace.errors)


def test_a_claude_code_catalog_gives_our_count_the_tool_definitions():
    bare = load_transcript("claude-code-session")
    counted = load_transcript("claude-code-session", catalog="github-mcp")
    assert bare.tokens_total()["prompt_saved_pct"] == 0.0  # nothing to compare without definitions
    assert counted.tokens_total()["prompt_baseline"] > counted.tokens_total()["prompt_tool_search"]
    assert "loaded tools' definitions" in counted.replay.our_count and counted.replay.counts_definitions
    assert not bare.replay.counts_definitions and "no tool definitions" in bare.replay.our_count


def test_traces_written_before_the_deferred_field_still_load():
    data = json.loads(load_transcript("anthropic-messages").to_json())
    data["version"] = 2
    for it in data["iterations"]:
        del it["deferred"]
    assert all(it.deferred == [] for it in RunTrace.from_dict(data).iterations)


def _nodes(value, path=()):
    yield path, value
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        yield from _nodes(child, (*path, key))


@pytest.mark.parametrize("name", list(SHIPPED_TRANSCRIPTS))
@pytest.mark.slow
def test_a_damaged_transcript_is_refused_by_name_or_read_never_crashes(name, tmp_path):
    """One value anywhere in a shipped transcript replaced by another type, or a key removed: the loader reads
    it or raises TranscriptError (a message naming the place), never another exception."""
    import random

    source = data_path("transcripts", SHIPPED_TRANSCRIPTS[name]).read_text()
    jsonl = SHIPPED_TRANSCRIPTS[name].endswith(".jsonl")
    rng = random.Random(f"damage-{name}")
    refused = 0
    for _ in range(80):
        doc = [json.loads(line) for line in source.splitlines()] if jsonl else json.loads(source)
        paths = [p for p, _ in _nodes(doc) if p]
        last = paths[rng.randrange(len(paths))]
        target = doc
        for key in last[:-1]:
            target = target[key]
        if isinstance(target, dict) and rng.random() < 0.3:
            del target[last[-1]]
        else:
            target[last[-1]] = rng.choice([None, 0, -1, "x", [], {}, True])
        damaged = tmp_path / SHIPPED_TRANSCRIPTS[name]
        damaged.write_text("\n".join(json.dumps(r) for r in doc) if jsonl else json.dumps(doc))
        try:
            load_transcript(damaged).to_json()
        except TranscriptError as exc:
            refused += 1
            assert str(exc).startswith(f"{damaged}: ")  # the file, then the place in it
    assert refused > 0  # the damage is noticed, not only survived


def test_exchanges_logged_as_json_lines_or_with_text_bodies_read_the_same(tmp_path):
    """Loggers differ: one exchange per line, bodies kept as JSON text, credentials in the URL."""
    exchanges = json.loads(data_path("transcripts", SHIPPED_TRANSCRIPTS["openai-responses"]).read_text())
    lines = tmp_path / "exchanges.jsonl"
    lines.write_text("\n".join(json.dumps(e) for e in exchanges))
    wrapped = tmp_path / "wrapped.json"
    secret = "sk-url-probe-3141592653"
    wrapped.write_text(
        json.dumps(
            [
                {
                    "request": {
                        "method": "POST",
                        "url": f"https://user:{secret}@api.openai.com/v1/responses?api-key={secret}",
                        "body": json.dumps(e["request"]),
                    },
                    "response": {"status_code": 200, "body": json.dumps(e["response"])},
                }
                for e in exchanges
            ]
        )
    )
    shipped = load_transcript("openai-responses")
    for path in (lines, wrapped):
        trace = load_transcript(path)
        assert [it.exposed_tools for it in trace.iterations] == [
            it.exposed_tools for it in shipped.iterations
        ]
    assert load_transcript(wrapped).replay.endpoint == "api.openai.com" and secret not in trace.to_json()


def _read_file_run(result: str) -> list[dict]:
    """Two Messages exchanges: the model reads a file, then answers; ``result`` is what the read returned."""
    tools = [{"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}}]
    call = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "app.log"}}
    usage = {"input_tokens": 10, "output_tokens": 5}
    first = [{"role": "user", "content": "What does the log say?"}]
    second = first + [
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]},
    ]
    answer = {"type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage}
    return [
        {
            "request": {"model": "claude-sonnet-4-5", "tools": tools, "messages": first},
            "response": {**answer, "content": [call], "stop_reason": "tool_use"},
        },
        {
            "request": {"model": "claude-sonnet-4-5", "tools": tools, "messages": second},
            "response": {**answer, "content": [{"type": "text", "text": "Fine."}], "stop_reason": "end_turn"},
        },
    ]


def test_a_long_tool_result_is_counted_in_full_and_kept_cut_in_the_trace(tmp_path):
    result = "".join(
        f"2026-12-07 10:{i // 60:02d}:{i % 60:02d} GET /api/items/{i} 200 12ms\n" for i in range(500)
    )
    result = result[:20_000]
    counts = []
    for name, text in (("long.json", result), ("empty.json", "")):
        (tmp_path / name).write_text(json.dumps(_read_file_run(text)))
        counts.append(load_transcript(tmp_path / name).iterations[1].tokens.tool_search.total)
    counter = TokenCounter()
    assert counts[0] - counts[1] == counter.count(result) == len(counter.encoding.encode_ordinary(result))
    assert counter.count(result) > 4_000 * 2  # far more than the 4,000 characters the trace keeps
    kept = load_transcript(tmp_path / "long.json").iterations[0].tool_calls[0].result
    assert kept.startswith(result[:3_000]) and kept.endswith("(16,000 more characters)")
