"""``compare_replay`` and ``toolsearch-lab replay FILE --compare`` on every shipped and held-out transcript,
as a user with a log meets them: every strategy row with a cost and what it assumes, the model's searches
asked of every index with hit@k against the tool the model then called, a malformed file refused by name.

Expected figures are read off the transcripts themselves (tests/transcripts/expectations.json and the
files), never from a run of the code under test.
"""

from __future__ import annotations

import json

import pytest
from test_replay import EXPECTED, HERE, MALFORMED, VALID, _source

from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.replay_compare import EVERY_RERUN, REPLAY_STRATEGIES, compare_replay
from toolsearch_lab.eval.replay_script import read_script
from toolsearch_lab.eval.replay_searches import SEARCH_INDEXES
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.replay.common import TranscriptError
from toolsearch_lab.replay.load import load_transcript, read_recording


@pytest.fixture(scope="module")
def compared():
    return {key: compare_replay(_source(key)) for key in VALID}


@pytest.mark.slow
@pytest.mark.parametrize("key", VALID)
def test_every_strategy_row_has_a_cost_and_says_what_it_assumes(key, compared):
    c = compared[key]
    expected = EXPECTED[key]
    rows = {(r.strategy, r.index) for r in c.rows}
    for name in REPLAY_STRATEGIES:
        assert any(s == name for s, _ in rows), f"{key}: no {name} row"
    for index in ("logged", *INDEX_KINDS):
        assert ("search-only", index) in rows and ("search-only-no-accumulation", index) in rows
    for row in c.rows:
        assert row.cost_usd > 0 and row.bill["requests"] > 0 and row.bill["prompt_tokens"] > 0, row.strategy
        assert row.assumes and "\n" not in row.assumes
    billed = c.row("logged")  # the API's own usage, priced
    usage = [it["usage"] for it in expected["iterations"]]
    assert billed.bill["requests"] == len(usage)
    assert billed.bill["completion_tokens"] == sum(u["output_tokens"] for u in usage)
    # The re-runs bill the log's output tokens: every row that makes all the logged responses has them all.
    assert c.row("search-only", "logged").bill["completion_tokens"] == billed.bill["completion_tokens"]


@pytest.mark.slow
@pytest.mark.parametrize("key", VALID)
def test_every_logged_search_is_asked_of_every_index(key, compared):
    c = compared[key]
    logged = [s for it in EXPECTED[key]["iterations"] for s in it["searches"]]
    assert [case.query for case in c.searches.cases] == [s["query"] for s in logged]
    assert [case.logged for case in c.searches.cases] == [s["references"] for s in logged]
    assert [i.index for i in c.searches.indexes] == ["logged", *SEARCH_INDEXES]
    for case in c.searches.cases:
        assert [a.index for a in case.answers] == ["logged", *SEARCH_INDEXES]
        assert all(len(a.names) <= c.searches.k for a in case.answers)
    for hits in c.searches.indexes:
        assert hits.searches == c.searches.scored and 0 <= hits.hit_at_1 <= hits.hit_at_k <= hits.searches


@pytest.mark.slow
def test_the_lab_reproduction_of_anthropic_regex_returns_what_the_log_returned(compared):
    """The shipped Anthropic run searched with tool_search_tool_regex: the lab's reproduction of that
    search, given the model's own patterns, returns the tools the log says the API returned."""
    c = compared["anthropic/shipped_github_regex.json"]
    for case in c.searches.cases:
        answer = next(a for a in case.answers if a.index == "anthropic-regex")
        assert answer.query_as == "the pattern as written" and answer.names == case.logged
    assert [case.targets for case in c.searches.cases] == [["list_pull_requests"], ["add_issue_comment"]]


def test_the_tool_the_model_then_called_skips_searches_and_select_lookups_are_not_scored():
    c = compare_replay(
        HERE / "openai/heldout_github_client.json", indexes=["lucene"], strategies=["all-tools"]
    )
    cases = {case.query: case for case in c.searches.cases}
    # "file a ticket" found nothing; the model searched again, then called issue_write: that is its target.
    assert cases["file a ticket"].targets == ["issue_write"] and cases["file a ticket"].logged == []
    assert next(a.rank for a in cases["file a ticket"].answers if a.index == "logged") is None
    assert cases["create an issue"].targets == ["issue_write"]
    session = compare_replay(HERE / "claude_code/heldout_session.jsonl", indexes=["lucene"], strategies=[])
    select = [case for case in session.searches.cases if case.select]
    assert [case.query for case in select] == ["select:mcp__github__update_issue_labels"]
    assert session.searches.scored == len(session.searches.cases) - 1
    assert any("no definition in the log" in note for note in session.notes)


def test_a_rerun_keeps_the_models_moves_and_counts_what_the_strategy_refused():
    c = compare_replay(
        HERE / "openai/heldout_github_client.json",
        indexes=["lucene"],
        strategies=["all-tools", "search-only", "pre-retrieval"],
    )
    trace = load_transcript(HERE / "openai/heldout_github_client.json")
    calling = [it for it in trace.iterations if any(call.kind == "tool" for call in it.tool_calls)]
    # Spring's loop with the logged results makes the log's requests again: a client search is a request.
    assert c.row("search-only", "logged").bill["requests"] == len(trace.iterations)
    assert c.row("search-only", "logged").refused_calls == 0
    # A real all-tools agent never searches: the responses that only searched are not made.
    assert c.row("all-tools").bill["requests"] == len(calling) + 1 and c.row("all-tools").searches == 0
    assert c.row("all-tools").mean_tools == len(trace.replay.deferred_tools)
    assert c.row("pre-retrieval").searches == 0


def test_pre_retrieval_refuses_the_logged_calls_to_tools_it_did_not_retrieve():
    script = read_script(read_recording("anthropic-messages"))
    index = make_index("lucene")
    index.index_tools("probe", script.tools)
    request = load_transcript("anthropic-messages").user_request
    retrieved = index.search(SearchRequest("probe", request, 10)).tool_names
    missed = [call.name for call in script.calls() if call.name not in retrieved]
    assert missed  # the user's words alone do not find every tool this run needed
    c = compare_replay("anthropic-messages", indexes=["lucene"], strategies=["pre-retrieval"])
    assert c.row("pre-retrieval").refused_calls == len(missed)


def test_openai_deferral_outside_namespaces_bills_every_definition():
    c = compare_replay("openai-responses", indexes=["lucene"], strategies=[*REPLAY_STRATEGIES[-2:]])
    flat, spaces = c.row("openai-deferred-flat"), c.row("openai-deferred-namespaces")
    deferred = len(load_transcript("openai-responses").replay.deferred_tools)
    assert flat.bill["prompt_tokens"] > spaces.bill["prompt_tokens"] and flat.cost_usd > spaces.cost_usd
    assert flat.mean_tools == 1 + len(c.kept) + deferred  # the search tool, get_me, every deferred function
    assert spaces.mean_tools == 1 + len(c.kept) + 3  # the log's own three namespaces
    assert "the log's own" in spaces.assumes and "billed in full" in flat.assumes


def test_the_run_is_priced_with_its_own_model_or_a_named_stand_in():
    own = compare_replay("anthropic-messages", indexes=["lucene"], strategies=["all-tools"])
    assert own.price.model == "claude-sonnet-4.5" and "the run's model" in own.priced_as
    stand_in = compare_replay("openai-responses", indexes=["lucene"], strategies=["all-tools"])
    assert stand_in.price.provider == "openai" and "no price for 'gpt-5.4'" in stand_in.priced_as
    named = compare_replay("openai-responses", indexes=["lucene"], strategies=[], price_model="gpt-5")
    assert named.price.model == "gpt-5" and named.row("logged").cost_usd != stand_in.row("logged").cost_usd
    with pytest.raises(ValueError, match="unknown strategies or indexes"):
        compare_replay("openai-responses", strategies=["all-the-tools"])


def test_cli_compare_prints_the_rows_the_assumptions_and_the_searches(capsys):
    assert main(["replay", "anthropic-messages", "--compare", "--index", "lucene"]) == 0
    out = capsys.readouterr().out
    assert "hand-written" in out and "priced as claude-sonnet-4.5" in out
    assert f"assumed in every re-run: {EVERY_RERUN}" in " ".join(out.split())
    for name in REPLAY_STRATEGIES:
        assert f"  {name}  " in out
    assert "what each row assumes:" in out and "hit@5" in out
    assert "“(?i)list.*pull.?request”" in out and "then called: list_pull_requests" in out
    assert main(["replay", "anthropic-messages", "--compare", "--index", "lucene", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["priced_as"] == "claude-sonnet-4.5" and "hand-written" in data["provenance"]
    assert {r["strategy"] for r in data["rows"]} >= set(REPLAY_STRATEGIES)
    assert [i["index"] for i in data["searches"]["indexes"]] == ["logged", "lucene", *SEARCH_INDEXES[5:]]


@pytest.mark.parametrize("key", MALFORMED)
def test_a_malformed_transcript_is_refused_by_name(key, capsys):
    assert main(["replay", str(HERE / key), "--compare", "--index", "lucene"]) == 2
    err = capsys.readouterr().err
    for word in EXPECTED[key]["error"]:
        assert word in err, f"{word!r} missing from {err!r}"
    with pytest.raises(TranscriptError):
        compare_replay(HERE / key, indexes=["lucene"])


def test_untrusted_text_reaches_the_terminal_neutralised(tmp_path, capsys):
    exchanges = json.loads((HERE / "openai/heldout_github_client.json").read_text())
    text = json.dumps(exchanges).replace("file a ticket", "file a ticket \\u001b[2J\\u202e")
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text)
    assert main(["replay", str(hostile), "--compare", "--index", "lucene"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\\u001b[2J" in out
