"""RetrievalExplorer (05), TraceViewer (07), CatalogView (08) and the themed line charts (06), driven the way
a browser drives them (trait values and set_state), no frontend needed."""

from __future__ import annotations

import pytest

from toolsearch_lab.eval.datasets import Dataset, Query
from toolsearch_lab.eval.metrics import evaluate
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import Tool
from toolsearch_lab.ui import CatalogView, RetrievalExplorer, TraceViewer, theme
from toolsearch_lab.ui.charts import line_chart
from toolsearch_lab.ui.sample import sample_trace

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
        "t", {"all tools": ([10, 100], [1, 2]), "tool search": ([10, 100], [1, 1])}, "x", "y", log_x=True
    )
    assert [tr.line.color for tr in fig.data] == [theme.BASELINE, theme.SEARCH]
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.dtick == 1
