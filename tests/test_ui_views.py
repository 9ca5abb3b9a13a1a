"""RetrievalExplorer (05), TraceViewer (07), CatalogView (08) and the themed line charts (06), driven the way
a browser drives them (trait values and set_state), no frontend needed."""

from __future__ import annotations

import pytest

from toolsearch_lab.eval.datasets import Dataset, Query
from toolsearch_lab.eval.metrics import evaluate
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import Tool
from toolsearch_lab.ui import CatalogView, RetrievalExplorer, TraceViewer, theme
from toolsearch_lab.ui.charts import line_chart, rank_table
from toolsearch_lab.ui.display import Html, Prose, Table
from toolsearch_lab.ui.retrieval_explorer import metrics_table, ranking_table
from toolsearch_lab.ui.sample import sample_trace
from toolsearch_lab.ui.trace_viewer import grade_table, usage_table

TOOLS = [
    Tool("get_weather", "Get the weather forecast for a city"),
    Tool("book_flight", "Book a flight between two airports"),
    Tool("send_email", "Send an email message to a recipient"),
    Tool("ph_ai_news_query", "Search recent news articles about artificial intelligence"),
    Tool("convert_currency", "Convert an amount of money from one currency to another"),
]
QUERIES = [
    Query("q1", "weather forecast for Paris", ("get_weather",)),
    Query("q2", "latest artificial intelligence news", ("ph_ai_news_query",)),
    Query("q3", "will it rain tomorrow", ("get_weather",)),  # no shared words: keyword indexes miss it
    Query("q4", "email my boss and book a flight", ("send_email", "book_flight")),
]


@pytest.fixture(scope="module")
def results():
    dataset = Dataset(TOOLS, QUERIES, "tiny")
    return {("tiny", kind): evaluate(make_index(kind), dataset, k=2) for kind in ("regex", "lucene")}


def test_retrieval_explorer_slider_moves_curves_marker_and_legend(results):
    app = RetrievalExplorer(results, k=2)
    lucene = next(tr for tr in app.fig.data if tr.name.startswith("lucene"))
    assert lucene.y[1] == pytest.approx(results["tiny", "lucene"].metrics["recall@2"])
    assert app.fig.layout.shapes[0].x0 == 2
    app.k_slider.set_state({"value": 4})  # the browser path
    assert app.fig.layout.shapes[0].x0 == 4
    lucene = next(tr for tr in app.fig.data if tr.name.startswith("lucene"))
    assert lucene.name == f"lucene: {lucene.y[3]:.2f} at k=4" and list(lucene.marker.size).index(12) == 3


def test_retrieval_explorer_drilldown_shows_ranks_per_index_and_never_wraps_names(results):
    app = RetrievalExplorer(results, k=2)
    labels = [label for label, _ in app.query_dropdown.options]
    assert labels[0].startswith("✗"), "queries some index misses come first"
    app.query_dropdown.value = "q2"
    html = app.details.value
    assert "latest artificial intelligence news" in html and "ph_ai_news_query" in html
    assert "#1" in html and "white-space:nowrap" in html
    app.query_dropdown.value = "q3"
    assert "not returned" in app.details.value


def test_retrieval_explorer_rejects_empty_or_unknown_dataset(results):
    with pytest.raises(ValueError, match="at least one evaluation result"):
        RetrievalExplorer({})
    with pytest.raises(ValueError, match="'other' has no results"):
        RetrievalExplorer(results, dataset="other")


def test_trace_viewer_compares_two_runs_and_opens_saved_json(tmp_path):
    left, right = sample_trace(True), sample_trace(False)
    app = TraceViewer(left, right, labels=("accumulate", "latest only"))
    assert app.slider.min == 1 and app.slider.max == len(left.iterations)
    app.slider.set_state({"value": 3})
    assert "Iteration 3 of 5" in app.columns["left"].value and "latest only" in app.columns["right"].value
    assert app.fig.layout.shapes[0].x0 == 2.5
    assert list(app.fig.data[0].y) == [it.tokens.tool_search.total for it in left.iterations]

    saved = tmp_path / "run.json"
    saved.write_text(left.to_json())
    app.paths["right"].value = str(saved)
    app.open_buttons["right"].click()
    assert "run.json" in app.columns["right"].value
    assert list(app.fig.data[1].y) == [it.tokens.tool_search.total for it in left.iterations]

    app.open("left", tmp_path / "missing.json")
    assert "no trace file" in app.status.value
    (tmp_path / "bad.json").write_text("{not json")
    app.open("left", tmp_path / "bad.json")
    assert "is not a saved RunTrace JSON" in app.status.value


def test_catalog_view_colours_what_the_query_finds():
    app = CatalogView(TOOLS, name="tiny", query="weather forecast", index="lucene")
    bars = app.fig.data[0]
    colours = dict(zip(bars.x, bars.marker.color, strict=True))
    assert colours["get_weather"] == theme.FOUND and colours["send_email"] == theme.BASELINE
    assert "get_weather" in app.details.value and "toolSearchTool" in app.details.value
    app.query_box.value = "send an email"
    colours = dict(zip(app.fig.data[0].x, app.fig.data[0].marker.color, strict=True))
    assert colours["send_email"] == theme.FOUND
    app.query_box.value = ""
    assert set(app.fig.data[0].marker.color) == {theme.BASELINE}
    with pytest.raises(ValueError, match="at least one tool"):
        CatalogView([])


def test_line_chart_uses_the_shared_colours_and_decade_log_ticks():
    fig = line_chart(
        "t",
        {"all tools": ([10, 10_000], [1, 2]), "tool search": ([10, 10_000], [1, 1])},
        "x",
        "y",
        log_x=True,
    )
    assert [tr.line.color for tr in fig.data] == [theme.BASELINE, theme.SEARCH]
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.dtick == 1
    # Fewer than three decades (notebook 08's latencies, 0.3 to 8 ms) are labelled at 1, 2 and 5 in each.
    narrow = line_chart("t", {"lucene": ([10, 10_000], [0.3, 8.0])}, "x", "ms", log_x=True, log_y=True)
    assert narrow.layout.yaxis.dtick == "D2" and narrow.layout.xaxis.dtick == 1


def test_spring_hashset_order_rebills_the_same_run_with_tools_in_no_fixed_order():
    """Spring collects the exposed tools in a HashSet: same tools, an order fixed per JVM (its hash codes),
    buckets reshuffled as the set grows. Re-billing a search-only run in that order keeps its requests'
    tool sets and its grade; only the cache split moves."""
    from toolsearch_lab.eval.compare import compare
    from toolsearch_lab.eval.cost import hashset_order
    from toolsearch_lab.ui.strategy_lab import SPRING_ORDER, spring_order_run, table_html

    names = ["toolSearchTool", *(f"tool_{i}" for i in range(20))]
    orders = {tuple(hashset_order(names, jvm)) for jvm in range(5)}
    assert all(sorted(o) == sorted(names) for o in orders) and len(orders) > 1
    assert hashset_order(names, 3) == hashset_order(names, 3)
    assert any(o[0] != "toolSearchTool" for o in orders)  # the meta-tool is not pinned first

    run = next(r for r in compare("livemcpbench", strategies=["search-only"]) if r.index == "lucene")
    spring = [spring_order_run(run, jvm) for jvm in range(10)]
    for other in spring:
        assert [sorted(t["function"]["name"] for t in tools) for _, tools in other.requests] == [
            sorted(t["function"]["name"] for t in tools) for _, tools in run.requests
        ]
        assert other.row()["success"] == run.row()["success"] and other.row()["strategy"] == SPRING_ORDER
    assert min(s.row()["cached_tokens"] for s in spring) < run.row()["cached_tokens"]
    assert SPRING_ORDER in table_html([run.row(), spring[0].row()])
    with pytest.raises(ValueError, match="needs a search-only run"):
        spring_order_run(compare("livemcpbench", strategies=["all-tools"])[0])


def test_trace_viewer_draws_each_runs_baseline_over_its_own_bars():
    """Two runs of one scenario have near-identical "all tools" lines: each is drawn on its own side of the
    iteration number, with its own dash and marker, so neither hides the other."""
    trace = sample_trace(True)
    app = TraceViewer(trace, trace, labels=("a", "b"))
    bars, lines = app.fig.data[:2], app.fig.data[2:]
    assert list(lines[0].y) == list(lines[1].y)  # the same run twice: identical baselines
    assert all(r - left > 0.3 for left, r in zip(lines[0].x, lines[1].x, strict=True))
    assert lines[0].line.dash != lines[1].line.dash and lines[0].marker.symbol != lines[1].marker.symbol
    for bar, line in zip(bars, lines, strict=True):  # a line runs through the middle of its run's bars
        assert bar.offset + bar.width / 2 == pytest.approx(line.x[0] - bar.x[0])


def test_tables_show_html_and_aligned_text_never_a_raw_repr(results):
    table = Table(["name", "n", "ok"], [["a <b>", 1234, True], [Html("<i>x</i>", "x"), None, False]], "note")
    html = table._repr_html_()
    assert "a &lt;b&gt;" in html and "<i>x</i>" in html and "1,234" in html and "note" in html
    assert repr(table).splitlines() == ["name   n      ok", "a <b>  1,234  ✓", "x      –      ✗", "note"]
    with pytest.raises(ValueError, match="row 0 has 1 cells, the table has 3 columns"):
        Table(["name", "n", "ok"], [["a"]])
    with pytest.raises(ValueError, match="Prose needs some Markdown text"):
        Prose("  ")
    assert Prose("**3** tools")._repr_markdown_() == "**3** tools"

    metrics = metrics_table(results, sizes={"tiny": len(TOOLS)})
    assert [row[0] for row in metrics.rows] == ["tiny", "tiny"]
    assert metrics.columns[2:4] == ["tools", "queries"]
    best = max(r.metrics["mrr"] for r in results.values())
    assert any(cell == Html(f"<b>{best:.3f}</b>") for row in metrics.rows for cell in row)
    q4 = next(q for q in results["tiny", "lucene"].per_query if q.id == "q4")
    ranking = ranking_table(q4)
    marked = [row[1] for row in ranking.rows if row[2]]
    assert sorted(marked) == sorted(n for n in q4.ranked if n in q4.relevant)


def test_grade_usage_and_rank_tables_read_a_run():
    from toolsearch_lab.eval.scenarios import run_scenario

    run = run_scenario("spring-demo", index="lucene")
    grade = grade_table(run.grade, label="demo")
    assert grade.caption.startswith("demo: task completed, 3 of 3 steps") and all(r[3] for r in grade.rows)
    usage = usage_table(run)
    assert [r[0] for r in usage.rows] == [it.number for it in run.trace.iterations]
    assert all(r[3] is None for r in usage.rows)  # the simulated agent reports no usage
    measured = {("lucene", 10): {"ranks": {"a": 1, "b": None}}, ("lucene", 100): {"ranks": {"a": 3, "b": 2}}}
    ranks = rank_table(measured, [10, 100, 1000])
    assert [[c.text if isinstance(c, Html) else c for c in r[1:]] for r in ranks.rows] == [
        ["a", "#1", "#3", None],
        ["b", "✗", "#2", None],
    ]


def test_strategy_lab_reuses_runs_from_the_cell_above_and_refuses_other_runs():
    from toolsearch_lab.eval.compare import compare
    from toolsearch_lab.ui import StrategyLab

    runs = compare("spring-demo", max_results=5)
    lab = StrategyLab("spring-demo", runs=runs)
    assert [r.run for r in lab.runs] == [r.run for r in runs]  # re-priced, not re-run
    with pytest.raises(ValueError, match="maxResults 5 and nothing unloaded"):
        StrategyLab("spring-demo", runs=compare("spring-demo", max_results=3))
