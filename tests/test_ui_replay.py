"""The stepper, TraceViewer and TokenDashboard open a replayed run: its own search tool, the tools each
request sent deferred, the API's usage beside our count; nothing pretends to re-run it."""

from __future__ import annotations

import pytest

from toolsearch_lab.eval.replay_compare import compare_replay
from toolsearch_lab.eval.scenarios import run_scenario
from toolsearch_lab.replay.load import SHIPPED_TRANSCRIPTS, load_transcript
from toolsearch_lab.ui import (
    IterationStepper,
    TokenDashboard,
    TraceViewer,
    replay_comparison_table,
    replay_search_table,
    request_table,
    runs_overview,
)
from toolsearch_lab.ui.stepper_render import TOOLS_TRACES, tool_cells, tool_rows
from toolsearch_lab.ui.stepper_replay import DEFERRED


@pytest.fixture(scope="module")
def replays():
    return {name: load_transcript(name) for name in SHIPPED_TRANSCRIPTS}


@pytest.mark.parametrize("name", list(SHIPPED_TRANSCRIPTS))
def test_the_stepper_shows_a_replay_with_its_deferred_tools_and_cannot_rerun_it(name, replays):
    trace = replays[name]
    app = IterationStepper(run=trace)
    assert app.scenario_dropdown.value.startswith("replay: ") and app.scenario_dropdown.disabled
    assert app.run_button.disabled and app.model_dropdown.value == trace.model
    search_tool = trace.replay.search_tools[0].name
    assert tool_rows(trace)[0] == search_tool and app.tools_fig.data[0].name == search_tool
    xs, ys, _ = tool_cells(trace)[DEFERRED]
    assert len(ys) == sum(len(it.deferred) for it in trace.iterations) > 0
    assert set(ys) == {n for it in trace.iterations for n in it.deferred}
    seen = {
        n for it in trace.iterations for n in [*it.exposed_tools, *(h for s in it.searches for h in s.names)]
    }
    shown = len(seen - {search_tool})  # deferred-only tools are drawn, not counted as discovered
    assert f"request: {shown} of {trace.catalog_size} tools discovered" in app.tools_fig.layout.title.text
    app.show_iteration(2)
    details = app.details.value
    assert "Deferred" in details and f"({len(trace.iterations[1].deferred)} sent, not loaded)" in details
    usage = trace.iterations[1].tokens.api_usage
    assert f"<b>{usage['prompt_tokens']:,}</b>" in details and "o200k count" in details
    assert "Replayed from" in app.status.value


def test_the_loops_own_runs_draw_as_before():
    run = run_scenario("spring-demo", index="lucene")
    assert tool_rows(run.trace)[0] == "toolSearchTool"
    assert tool_cells(run.trace)[DEFERRED] == ([], [], [])
    app = IterationStepper(run=run)
    assert [d.name for d in app.tools_fig.data] == list(TOOLS_TRACES) and not app.run_button.disabled
    assert "Replayed" not in app.status.value


def test_the_trace_viewer_opens_transcripts_beside_saved_traces(replays, tmp_path):
    saved = tmp_path / "run.json"
    saved.write_text(replays["anthropic-messages"].to_json())
    viewer = TraceViewer(saved, "claude-code-session", labels=("saved", "claude code"))
    viewer.slider.value = 2
    assert "ToolSearch" in viewer.columns["right"].value and "sent deferred" in viewer.columns["right"].value
    session = data_file("claude_code_session.jsonl")
    viewer.open("left", session)
    assert viewer.traces["left"] == replays["claude-code-session"] and "opened" in viewer.status.value
    broken = tmp_path / "broken.json"
    broken.write_text("[1, 2]")
    viewer.open("left", broken)
    assert "is not a saved RunTrace JSON" in viewer.status.value and "nor a transcript" in viewer.status.value


def test_the_token_dashboard_names_what_a_replay_deferred_and_what_the_api_said(replays):
    trace = replays["openai-responses"]
    dashboard = TokenDashboard(run=trace)
    prompt = sum(it.tokens.api_usage["prompt_tokens"] for it in trace.iterations)
    assert f"sent {len(trace.iterations[0].deferred)} tools deferred" in dashboard.summary.value
    assert f"{prompt:,} prompt tokens" in dashboard.summary.value
    assert (
        "add_issue_comment" in dashboard._sent()
    )  # github_issues.add_issue_comment, as the catalog names it


def test_request_tables_explain_each_request(replays):
    table = request_table(replays["anthropic-messages"])
    assert [row[0] for row in table.rows] == [1, 2, 3, 4]
    assert [row[3] for row in table.rows] == [
        len(it.deferred) for it in replays["anthropic-messages"].iterations
    ]
    assert table.rows[2][4].text == "tool_search_tool_regex “(?i)add.*comment” → 3 tools"
    assert (
        table.rows[3][2].text
        == "add_issue_comment, add_reply_to_pull_request_comment, add_comment_to_pending_review"
    )
    overview = runs_overview(replays)
    assert [row[5] for row in overview.rows] == ["tool_search_tool_regex", "tool_search", "ToolSearch"]


def data_file(name: str):
    from toolsearch_lab.datafiles import data_path

    return data_path("transcripts", name)


def test_the_rerun_tables_show_every_row_its_assumption_and_the_searches():
    comparison = compare_replay("anthropic-messages", indexes=["lucene"])
    table = replay_comparison_table(comparison)
    assert [row[0] for row in table.rows] == [r.strategy for r in comparison.rows]
    assert table.columns[-1] == "assumes" and all(row[-1] for row in table.rows)
    assert "hand-written" in table.caption  # the shipped transcripts stay labelled
    html = table._repr_html_()
    assert "openai-deferred-namespaces" in html and "billed in full" in html
    searches = replay_search_table(comparison)
    assert [row[0] for row in searches.rows] == ["logged", "lucene", "anthropic-regex", "anthropic-bm25"]
    assert searches.columns[4] == "“(?i)list.*pull.?request” → list_pull_requests"
    assert searches.rows[0][4].startswith("#1 of list_pull_requests")


def test_request_tables_price_each_request_and_mark_failed_calls(replays):
    from toolsearch_lab.cli.replay import request_cost, run_price

    trace = replays["anthropic-messages"]
    table = request_table(trace)
    price = run_price(trace).price
    assert table.columns[-1] == "cost" and "claude-sonnet-4.5 prices" in table.caption
    assert [row[-1] for row in table.rows] == [f"${request_cost(it, price):.4f}" for it in trace.iterations]
    assert [row[-1] for row in request_table(replays["openai-responses"]).rows] == [None] * 4
    named = request_table(replays["openai-responses"], price_model="gpt-5")
    assert all(row[-1].startswith("$") for row in named.rows)
    failed = load_transcript(data_file("claude_code_session.jsonl"))
    failed.iterations[1].tool_calls[0].error = "the tool reported an error"
    failed.iterations[1].tool_calls[0].result = "HTTP 404: Not Found"
    cells = [row[5] for row in request_table(failed).rows]
    assert any(cell and "✗" in cell and "HTTP 404: Not Found" in cell for cell in cells)
