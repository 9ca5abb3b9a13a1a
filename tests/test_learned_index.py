"""LearnedToolIndex: ranking by a fitted model, explanations that add up, the JSON model format, training,
and the ``train-ranker`` command."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from toolsearch_lab.cli.main import main as cli_main
from toolsearch_lab.eval.ranker_training import DEFAULT_FEATURES, fit_ranker
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.index.learned import (
    FEATURES,
    SHIPPED_MODEL,
    LearnedToolIndex,
    RankerError,
    RankerModel,
)
from toolsearch_lab.model import SearchRequest, Tool


def _tool(name: str, description: str, *params: str) -> Tool:
    properties = {p: {"type": "string"} for p in params}
    return Tool(name, description, {"type": "object", "properties": properties})


TOOLS = [
    _tool("get_weather", "Current weather and forecast for a city.", "city"),
    _tool("send_email", "Send an email message to a recipient.", "to", "subject"),
    _tool("convert_currency", "Convert an amount between currencies at today's rate."),
    _tool("search_flights", "Find flights between two airports on a date.", "origin"),
    _tool("translate_text", "Translate text into another language.", "target_language"),
    _tool("create_invoice", "Create an invoice for a customer."),
]
LABELLED = [
    ("will it rain in Paris tomorrow", ["get_weather"]),
    ("mail the report to my boss", ["send_email"]),
    ("how many yen is 50 euros", ["convert_currency"]),
    ("book a plane from Berlin to Rome", ["search_flights"]),
    ("say hello in Spanish", ["translate_text"]),
    ("bill the customer for March", ["create_invoice"]),
    ("temperature outside this afternoon", ["get_weather"]),
    ("write to alice about the meeting", ["send_email"]),
]


@pytest.fixture(scope="module")
def index() -> LearnedToolIndex:
    idx = make_index("learned")
    idx.index_tools("s", TOOLS)
    return idx


def test_shipped_model_ranks_the_obvious_tool_first(index):
    response = index.search(SearchRequest("s", "what is the weather forecast in Oslo", 3))
    assert response.tool_names[0] == "get_weather"
    scores = [r.relevance_score for r in response.tool_references]
    assert scores == sorted(scores, reverse=True) and all(0.0 < s < 1.0 for s in scores)
    assert len(response.tool_names) == 3


def test_search_many_equals_search_and_sessions_are_isolated(index):
    requests = [SearchRequest("s", q, 4) for q, _ in LABELLED[:4]] + [SearchRequest("other", "weather", 4)]
    many = index.search_many(requests)
    assert [r.tool_names for r in many] == [index.search(r).tool_names for r in requests]
    assert many[-1].tool_names == []
    assert index.search(SearchRequest(None, "weather")).tool_names == []


def test_min_score_threshold_keeps_only_likely_tools(index):
    request = SearchRequest("s", "what is the weather forecast in Oslo", 6)
    first, second = [r.relevance_score for r in index.search(request).tool_references][:2]
    assert first > second
    strict = make_index("learned", min_score_threshold=(first + second) / 2)  # the CLI's --min-score
    strict.index_tools("s", TOOLS)
    assert strict.search(request).tool_names == ["get_weather"]
    runner_up = index.search(request).tool_names[1]
    assert strict.explain("s", request.query, runner_up).rank is None
    assert index.explain("s", request.query, runner_up).rank == 2


def test_explain_parts_add_up_to_the_search_score(index):
    query = "convert 20 dollars to pounds"
    top = index.search(SearchRequest("s", query)).tool_references[0]
    explanation = index.explain("s", query, top.tool_name)
    assert explanation.score == pytest.approx(top.relevance_score, abs=1e-12)
    assert sum(p.value for p in explanation.parts) == pytest.approx(explanation.score, abs=1e-9)
    assert explanation.rank == 1 and explanation.returned
    assert {p.label for p in explanation.parts} >= set(index.model.features)
    with pytest.raises(KeyError, match="no_such_tool"):  # NotIndexedError, as every index kind
        index.explain("s", query, "no_such_tool")


def test_model_json_round_trip(tmp_path, index):
    model = index.model
    path = tmp_path / "m.json"
    model.save(path)
    again = RankerModel.load(path)
    assert again == model
    x = np.random.default_rng(0).normal(size=(3, 5, len(FEATURES)))
    np.testing.assert_array_equal(again.scores(x), model.scores(x))
    assert json.loads(path.read_text())["format"] == "toolsearch-lab-ranker-1"
    assert RankerModel.load() == RankerModel.load(SHIPPED_MODEL)


def test_save_replaces_a_model_file_whole(tmp_path, index, monkeypatch):
    path = tmp_path / "m.json"
    path.write_text("an older model", encoding="utf-8")
    index.model.save(path)
    assert RankerModel.load(path) == index.model and sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("toolsearch_lab.atomic.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        index.model.save(path)
    # the failed save left the previous file as it was, and no temporary file beside it
    assert RankerModel.load(path) == index.model and sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"format": "pickle"}, "format"),
        ({"coef": [1.0]}, "coef has 1 values"),
        ({"scale": None}, "scale"),
        ({"features": ["not a feature"], "mean": [0], "scale": [1], "coef": [1]}, "unknown features"),
        ({"intercept": float("nan")}, "finite"),
    ],
)
def test_bad_model_files_name_the_problem(tmp_path, change, message):
    doc = {**RankerModel.load().to_dict(), **change}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(RankerError, match=message):
        RankerModel.load(path)
    path.write_text("{not json")
    with pytest.raises(RankerError, match="not valid JSON"):
        RankerModel.load(path)
    doc.pop("intercept", None)
    doc.update(RankerModel.load().to_dict())
    del doc["intercept"]
    path.write_text(json.dumps(doc))
    with pytest.raises(RankerError, match="missing field 'intercept'"):
        RankerModel.load(path)


def test_fit_ranker_learns_a_model_that_ranks_its_labels(index):
    model = fit_ranker([(TOOLS, LABELLED)], negatives=5, info={"trained_on": "tiny"})
    assert model.features == DEFAULT_FEATURES and model.info["queries"] == len(LABELLED)
    assert all(math.isfinite(w) for w in model.coef)
    learned = LearnedToolIndex(model, abstain=False)  # the ranking, not whether anything fits
    learned.index_tools("t", TOOLS)
    hits = [learned.search(SearchRequest("t", q, 1)).tool_names[0] in rel for q, rel in LABELLED]
    assert sum(hits) >= len(LABELLED) - 1
    with pytest.raises(RankerError, match="no query has a relevant tool"):
        fit_ranker([(TOOLS, [("anything", ["not_in_catalog"])])])


def test_train_ranker_command(tmp_path, capsys):
    data = {
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in TOOLS],
        "queries": [{"query": q, "relevant_tools": rel} for q, rel in LABELLED],
    }
    source = tmp_path / "labelled.json"
    source.write_text(json.dumps(data))
    out = tmp_path / "ranker.json"
    assert cli_main(["train-ranker", "--dataset", str(source), "--out", str(out), "--negatives", "5"]) == 0
    printed = capsys.readouterr().out
    assert "weights per standard deviation" in printed and str(out) in printed
    model = RankerModel.load(out)
    assert "labelled" in model.info["trained_on"]
    idx = make_index("learned", model=str(out))
    idx.index_tools("u", TOOLS)
    assert idx.search(SearchRequest("u", "email my colleague", 1)).tool_names == ["send_email"]
    data["queries"] = [{"query": "x", "relevant_tools": ["ghost_tool"]}]
    source.write_text(json.dumps(data))
    assert cli_main(["train-ranker", "--dataset", str(source), "--out", str(out)]) == 2
    assert "ghost_tool" in capsys.readouterr().err
