"""TokenDashboard: per-tool costs sorted, totals equal TokenCounter's, run and prefix views follow the run."""

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.eval.cost import request_segments, shared_prefix_tokens
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.ui import TokenDashboard, theme
from toolsearch_lab.ui.sample import SAMPLE_COSTS, sample_trace
from toolsearch_lab.ui.tokens_render import prefix_html, prefix_rows


def test_per_tool_sorted_and_totals_match_counter():
    dash = TokenDashboard("github-mcp")
    rows, total = TokenCounter().catalog_tokens(load_catalog("github-mcp").tools)
    bars = dash.per_tool_fig.data[0]
    assert len(bars.y) == 117 == len(rows)
    assert list(bars.y) == sorted(bars.y, reverse=True)
    assert list(bars.x) == [n for n, _ in rows] and list(bars.y) == [c for _, c in rows]
    assert dash.total == total == sum(bars.y) + dash.func_end
    assert f"{total:,}" in dash.per_tool_fig.layout.title.text
    assert "one request" in dash.run_fig.data[0].x  # no run yet: single-request view
    assert dash.run_fig.data[2].y[0] == total


def test_catalog_and_encoding_switch():
    dash = TokenDashboard("github-mcp")
    dash.catalog_dropdown.set_state({"index": list(dash.catalog_dropdown.options).index("metatool")})
    assert len(dash.per_tool_fig.data[0].y) == 199
    assert dash.total == TokenCounter().catalog_tokens(load_catalog("metatool").tools)[1]
    dash.encoding_dropdown.value = "cl100k_base"
    assert dash.total == TokenCounter("cl100k_base").catalog_tokens(load_catalog("metatool").tools)[1]


def test_run_view_and_sent_tools_highlighted():
    trace = sample_trace()
    dash = TokenDashboard("github-mcp", run=trace)
    ts_tools, ts_rest, base_tools, base_rest = (list(d.y) for d in dash.run_fig.data)
    assert ts_tools == [it.tokens.tool_search.tools for it in trace.iterations]
    assert [a + b for a, b in zip(ts_tools, ts_rest, strict=False)] == [
        it.tokens.tool_search.total for it in trace.iterations
    ]
    assert [a + b for a, b in zip(base_tools, base_rest, strict=False)] == [
        it.tokens.baseline.total for it in trace.iterations
    ]
    assert list(dash.run_fig.data[1].base) == ts_tools  # stacked on top of the tool definitions
    assert dash.run_fig.layout.title.text.startswith(
        "Prompt tokens per model request: tool search vs all 26 tools"
    )
    # the sample's tools are not in github-mcp, so nothing is teal
    assert set(dash.per_tool_fig.data[0].marker.color) == {theme.BASELINE}
    dash.set_run(None)
    assert "toolSearchTool alone" in dash.run_fig.layout.title.text


def test_prefix_rows_model_cache_breaks():
    trace = sample_trace()
    rows = prefix_rows(trace, SAMPLE_COSTS)
    assert rows[0]["ts_reused"] == 0 and rows[0]["ts_new"] == trace.iterations[0].tokens.tool_search.total
    assert [r["number"] for r in rows] == [1, 2, 3, 4, 5]  # requests are numbered from 1, as everywhere
    # request 2 adds currentTime and weather after toolSearchTool: only toolSearchTool's block is reused
    assert rows[1]["added"] == ["currentTime", "weather"] and rows[1]["break_after"] == "toolSearchTool"
    assert rows[1]["ts_reused"] == SAMPLE_COSTS["toolSearchTool"]
    # request 3 has the same tools: the whole previous request (minus reply priming) is a prefix
    assert rows[2]["ts_reused"] == trace.iterations[1].tokens.tool_search.total - 3
    # all tools: the tool block never changes
    assert all(
        r["base_reused"] == p.tokens.baseline.total - 3
        for r, p in zip(rows[1:], trace.iterations, strict=False)
    )
    html = prefix_html(trace, SAMPLE_COSTS)
    assert "prefix breaks after" in html and "+clothing" in html


def test_prefix_without_accumulation_breaks_at_first_tool_change():
    rows = prefix_rows(sample_trace(accumulation=False), SAMPLE_COSTS)
    assert rows[3]["removed"] == ["currentTime", "weather"] and rows[3]["break_after"] == "toolSearchTool"


def test_prefix_rows_agree_with_the_cost_model_on_the_recorded_requests():
    # Without accumulation the tool list changes in the middle as well as at the end: both kinds of break.
    run = run_strategy("github-bugfix-week", "search-only-no-accumulation")
    counter = TokenCounter(run.trace.encoding)
    costs = {
        tool["function"]["name"]: counter.tool_tokens(tool) for _, tools in run.requests for tool in tools
    }
    rows = prefix_rows(run.trace, costs, counter.tool_format.func_end)
    segments = [request_segments(messages, tools, counter) for messages, tools in run.requests]
    assert [r["ts_total"] for r in rows] == [sum(s.tokens for s in request) for request in segments]
    reused = [0] + [shared_prefix_tokens(a, b) for a, b in zip(segments, segments[1:], strict=False)]
    assert [r["ts_reused"] for r in rows] == reused
    assert any(r["break_after"] for r in rows) and any(r["ts_reused"] > 0 and not r["added"] for r in rows)
