"""The trace's typed facts, as a reader of a trace (a view, a notebook, a saved file) meets them: where a
trace came from and how a replayed run was set up (``RunTrace.source``, ``RunTrace.replay``), why a run
stopped (``StopReason``) and why a call got an error result (``FailureKind``); each checked when a trace is
made or loaded, and traces written by version 4 loading into the same fields.

tests/fixtures/traces/replay_v4_anthropic_messages.json is ``toolsearch-lab replay anthropic-messages --json``
as version 4 wrote it (the replay's settings were keys of ``config``), kept as it was written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsearch_lab.datafiles import data_path
from toolsearch_lab.jsonlimits import JsonLimitError, dumps_checked
from toolsearch_lab.replay.load import SHIPPED_TRANSCRIPTS, load_transcript
from toolsearch_lab.trace import (
    TRACE_VERSION,
    FailureKind,
    ReplaySettings,
    RunTrace,
    SearchTool,
    ToolCallRecord,
)

TESTS = Path(__file__).resolve().parent
TRANSCRIPTS = TESTS / "transcripts"
V4_REPLAY = TESTS / "fixtures" / "traces" / "replay_v4_anthropic_messages.json"


def _bodies(path: Path) -> list[dict]:
    """The request bodies of an API transcript, bare or HTTP-wrapped (bodies as JSON text)."""
    out = []
    for exchange in json.loads(path.read_text(encoding="utf-8")):
        request = exchange["request"]
        body = request.get("body", request) if "method" in request else request
        out.append(json.loads(body) if isinstance(body, str) else body)
    return out


def _deferred_in_file(path: Path) -> list[str]:
    """Every tool the file's requests send with defer_loading, namespace members as namespace.name."""
    names = []
    for body in _bodies(path):
        for tool in body.get("tools", []):
            members = (
                [(tool["name"], m) for m in tool.get("tools", [])] if tool.get("type") == "namespace" else []
            )
            for space, member in members or [(None, tool)]:
                name = f"{space}.{member['name']}" if space else member.get("name")
                if member.get("defer_loading") is True and name not in names:
                    names.append(name)
    return names


@pytest.mark.parametrize(
    "source, search_tools, namespaces",
    [
        ("anthropic-messages", [("tool_search_tool_regex", "regex")], []),
        (TRANSCRIPTS / "anthropic/heldout_github_bm25.json", [("tool_search_tool_bm25", "bm25")], []),
        (TRANSCRIPTS / "anthropic/heldout_clientside_search.json", [("find_tools", "client")], []),
        (
            "openai-responses",
            [("tool_search", "hosted")],
            ["github_pull_requests", "github_issues", "github_code"],
        ),
        (TRANSCRIPTS / "openai/heldout_github_client.json", [("tool_search", "client")], None),
        ("claude-code-session", [("ToolSearch", "client")], []),
    ],
)
def test_a_replay_says_how_the_provider_searched_in_typed_fields_not_in_config(
    source, search_tools, namespaces
):
    trace = load_transcript(source)
    replay = trace.replay
    assert trace.source == "replay" and trace.config == {}
    assert [(s.name, s.variant) for s in replay.search_tools] == search_tools
    assert replay.provider == ("openai" if replay.format == "openai-responses" else "anthropic")
    path = data_path("transcripts", SHIPPED_TRANSCRIPTS[source]) if isinstance(source, str) else source
    assert (replay.file, replay.sha256 is not None) == (path.name, True)
    if namespaces is not None:
        assert replay.namespaces == namespaces
    if replay.format != "claude-code-session":
        assert replay.deferred_tools == _deferred_in_file(path) and replay.deferred_tools
        assert replay.our_count == "each request in chat-completions form" and replay.counts_definitions
    else:  # the session file announces its deferred tools; it holds no definitions of them
        assert {"mcp__github__list_pull_requests", "WebSearch"} <= set(replay.deferred_tools)
        assert replay.user_prompts == 1 and not replay.counts_definitions


def test_a_trace_written_by_version_4_loads_into_the_typed_fields():
    text = V4_REPLAY.read_text(encoding="utf-8")
    written = json.loads(text)
    assert written["version"] == 4 and written["config"]["source"] == "replay"
    old = RunTrace.from_json(text)
    assert old.version == TRACE_VERSION and old.source == "replay" and old.config == {}
    assert old.replay.search_tools == [SearchTool("tool_search_tool_regex", "regex")]
    assert old.replay.file == "anthropic_github_regex.json" and old.replay.provenance.startswith("`anthropic")
    assert old == load_transcript("anthropic-messages")  # what this version reads from the same file
    again = json.loads(old.to_json())
    assert again["replay"]["format"] == "anthropic-messages" and "source" not in again["config"]


def test_version_4_replays_keep_how_each_format_searched():
    """A version-4 replay named its search tools only; the variant is what that version's reader knew."""
    for source in (
        "openai-responses",
        TRANSCRIPTS / "openai/heldout_github_client.json",
        "claude-code-session",
    ):
        trace = load_transcript(source)
        data = json.loads(trace.to_json())
        replay = data.pop("replay")
        data.pop("source")
        data["version"] = 4
        data["config"] = {
            "source": "replay",
            "format": replay["format"],
            "search_tools": [s["name"] for s in replay["search_tools"]],
            "counts_definitions": replay["counts_definitions"],
            "file": replay["file"],
        }
        for it in data["iterations"]:
            for call in it["tool_calls"]:
                del call["failure"]
        old = RunTrace.from_dict(data)
        assert old.replay.search_tools == trace.replay.search_tools
        assert old.replay.deferred_tools == trace.replay.deferred_tools


def test_a_stop_reason_an_older_version_passed_through_loads_as_unknown_with_the_word_kept():
    data = json.loads(V4_REPLAY.read_text(encoding="utf-8"))
    data["stop_reason"] = "None"  # what version 4 wrote for a last response without a stop_reason
    trace = RunTrace.from_dict(data)
    assert (
        trace.stop_reason == "unknown"
        and trace.errors[-1] == "the run's stop reason was 'None' (trace version 4)"
    )


@pytest.mark.parametrize(
    "end, stop, answered",
    [
        ("end_turn", "answered", True),
        ("max_tokens", "max_tokens", False),
        ("brand_new_end", "unknown", False),
    ],
)
def test_a_replayed_run_ends_with_a_stop_reason_the_trace_knows(tmp_path, end, stop, answered):
    exchanges = json.loads(data_path("transcripts", SHIPPED_TRANSCRIPTS["anthropic-messages"]).read_text())
    exchanges[-1]["response"]["stop_reason"] = end
    path = tmp_path / "ends.json"
    path.write_text(json.dumps(exchanges))
    trace = load_transcript(path)
    assert trace.stop_reason == stop and (trace.final_answer is not None) is answered
    named = [e for e in trace.errors if "stop_reason" in e]
    assert named == ([f"the last response's stop_reason '{end}' is not known"] if stop == "unknown" else [])


def test_the_trace_refuses_facts_it_does_not_know_naming_the_field():
    settings = ReplaySettings(format="anthropic-messages")
    with pytest.raises(ValueError, match="source='replay' needs replay"):
        RunTrace("s", "m", "i", "q", 1, source="replay")
    with pytest.raises(ValueError, match="replay settings belong to a replayed run, not source='loop'"):
        RunTrace("s", "m", "i", "q", 1, replay=settings)
    with pytest.raises(ValueError, match=r"RunTrace.stop_reason must be one of .* got 'finished'"):
        RunTrace("s", "m", "i", "q", 1, stop_reason="finished")
    with pytest.raises(ValueError, match=r"ReplaySettings.format must be one of .* got 'gemini'"):
        ReplaySettings(format="gemini")
    with pytest.raises(ValueError, match=r"SearchTool.variant must be one of .* got 'vector'"):
        SearchTool("find", "vector")
    data = json.loads(load_transcript("anthropic-messages").to_json())
    data["iterations"][0]["tool_calls"][0]["failure"] = "gremlins"
    with pytest.raises(ValueError, match=r"ToolCallRecord.failure must be one of .* got 'gremlins'"):
        RunTrace.from_dict(data)
    data["iterations"] = {"not": "a list"}
    with pytest.raises(ValueError, match=r"trace.iterations: expected a list of Iteration, got dict"):
        RunTrace.from_dict(data)


def test_a_failure_kind_survives_the_round_trip_as_the_kind():
    trace = load_transcript(TRANSCRIPTS / "anthropic/heldout_github_bm25.json")
    failed = [c for it in trace.iterations for c in it.tool_calls if c.failure is not None]
    assert [(c.failure, c.error) for c in failed] == [(FailureKind.SEARCH_FAILED, "too_many_requests")]
    again = RunTrace.from_json(trace.to_json())
    assert again == trace
    assert [c.failure for it in again.iterations for c in it.tool_calls if c.failure] == [
        FailureKind.SEARCH_FAILED
    ]
    assert '"failure": "search_failed"' in trace.to_json()
    record = ToolCallRecord("c", "t", "{}", "tool", failure="tool_timeout")  # as JSON gives it
    assert record.failure is FailureKind.TOOL_TIMEOUT


def test_an_object_that_is_not_json_data_is_named_by_the_error_not_by_its_message():
    with pytest.raises(JsonLimitError) as caught:
        dumps_checked({"when": {1, 2}}, 10, strict=True)
    assert caught.value.not_json == "set"
    assert (
        str(caught.value)
        == "it cannot be written as JSON (TypeError: Object of type set is not JSON serializable)"
    )
    with pytest.raises(JsonLimitError) as caught:
        dumps_checked({(1, 2): "tuple key"}, 10, strict=True)
    assert caught.value.not_json is None  # a problem of another kind


def test_the_trace_page_states_the_current_version():
    page = (TESTS.parent / "docs" / "trace.md").read_text(encoding="utf-8")
    assert f"The trace is version {TRACE_VERSION}; " in page
    assert f"traces of versions 1 to {TRACE_VERSION - 1} to the current shape" in page
