"""Abstention: the hybrid (and learned) index returns no tools when it judges that none fits, says how sure it
is, the model reads Spring's empty array, and the trace keeps the confidence and the reason."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.eval.abstention import (
    DEFAULT_FEATURES,
    evidence,
    fit_abstention,
)
from toolsearch_lab.eval.bfcl_live import load_bfcl_live
from toolsearch_lab.eval.offcatalog import OFFCATALOG_SETS, calibration_sets, load_offcatalog
from toolsearch_lab.index.abstention import AbstentionError, AbstentionModel
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.trace import Iteration, RunTrace
from toolsearch_lab.wire import NO_MATCH_RESULT, is_no_match

GITHUB = list(load_catalog("github-mcp").tools)
OFF_TOPIC = ["book a table for two at an Italian place tonight", "convert 100 dollars to euros"]
SERVABLE = ["merge pull request 12 in acme/api", "list the open issues of acme/webshop"]


@pytest.fixture(scope="module")
def hybrid() -> HybridToolIndex:
    index = HybridToolIndex()
    index.index_tools("gh", GITHUB)
    return index


def test_nothing_fits_returns_no_tools_with_the_confidence_and_its_reason(hybrid):
    assert hybrid.can_abstain and hybrid.abstention_note is None
    for query in OFF_TOPIC:
        response = hybrid.search(SearchRequest("gh", query, 5))
        assert response.tool_names == [] and response.total_matches == 0 and response.abstained
        confidence = response.confidence
        assert confidence.value < confidence.threshold == hybrid.min_confidence
        assert confidence.reason.startswith("best description similarity")
        assert response.to_dict()["confidence"]["abstained"] is True
    for query in SERVABLE:
        response = hybrid.search(SearchRequest("gh", query, 5))
        assert len(response.tool_names) == 5 and not response.abstained
        assert response.confidence.value >= hybrid.min_confidence


def test_abstention_can_be_turned_off_or_moved(hybrid):
    off = HybridToolIndex(abstain=False)
    off.index_tools("gh", GITHUB)
    response = off.search(SearchRequest("gh", OFF_TOPIC[0], 5))
    assert len(response.tool_names) == 5 and response.confidence is None and not off.can_abstain
    never = HybridToolIndex(min_confidence=0.0)
    never.index_tools("gh", GITHUB)
    answered = never.search(SearchRequest("gh", OFF_TOPIC[0], 5))
    assert answered.tool_names == response.tool_names  # same ranking, and the confidence is still reported
    assert answered.confidence.value == hybrid.search(SearchRequest("gh", OFF_TOPIC[0], 5)).confidence.value
    with pytest.raises(ValueError, match="min_confidence"):
        HybridToolIndex(min_confidence=1.5)


def test_a_small_catalog_is_never_refused_on_the_confidence_alone():
    """Over at most 3 tools the confidence alone refuses nothing (chosen by whole runs, docs/index.md); the
    trace's reason names the rule that applied."""
    live = {r.id: r for r in load_bfcl_live("choice")}
    servable = live["live_simple_43-17-3"]  # "set cool mode with a temp of 24 oC ..." over ThinQ_Connect
    unservable = live[
        "live_irrelevance_3-0-3"
    ]  # "write a python program to play game doom." over requests.get
    indexes = {
        "default": HybridToolIndex(),
        "before": HybridToolIndex(small_catalog=0),
        "strong evidence": HybridToolIndex(small_catalog_confidence=0.02),
    }
    for index in indexes.values():
        for request in (servable, unservable):
            index.index_tools(request.id, list(request.tools))

    def ask(kind, request):
        return indexes[kind].search(SearchRequest(request.id, request.query, 5))

    found = ask("default", servable)
    assert found.tool_names == ["ThinQ_Connect"] and not found.abstained
    assert found.confidence.value < indexes["default"].min_confidence  # a larger catalog would refuse it
    assert found.confidence.verdict.startswith("answered: confidence")
    assert (
        "for a catalog of 1 tool, at most 3 (never refused on the confidence alone);"
        in found.confidence.verdict
    )
    refused = ask("before", servable)
    assert refused.tool_names == [] and refused.confidence.verdict.startswith("refused: confidence")
    assert "below the threshold 0.229 for a catalog of 1 tool;" in refused.confidence.verdict
    assert ask("default", unservable).tool_names == ["requests.get"]  # the price: the model judges it
    assert ask("strong evidence", unservable).abstained and not ask("strong evidence", servable).abstained
    record = (
        ToolSearchTool(indexes["default"])
        .call(json.dumps({"query": servable.query}), servable.id, "c")
        .record
    )
    assert record.confidence_reason == found.confidence.verdict and not record.abstained
    assert indexes["default"].abstention_setting == (
        "below confidence 0.229 (over at most 3 tools: never on confidence alone); near-miss check on"
    )
    for bad in (-1, True, 2.5):
        with pytest.raises(ValueError, match="small_catalog must be a whole number"):
            HybridToolIndex(small_catalog=bad)


def test_another_embedder_is_not_judged_by_a_model_fitted_for_minilm():
    class Other:
        name = "some-other-embedder"

        def embed(self, texts):
            return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)

    index = HybridToolIndex(embedder=Other())
    assert not index.can_abstain and "all-MiniLM" in index.abstention_note
    index.index_tools("s", GITHUB[:5])
    assert index.search(SearchRequest("s", OFF_TOPIC[0], 3)).confidence is None


def test_the_learned_index_abstains_like_its_hybrid():
    learned = make_index("learned")
    learned.index_tools("gh", GITHUB)
    assert learned.can_abstain
    nothing = learned.search(SearchRequest("gh", OFF_TOPIC[1], 5))
    assert nothing.tool_names == [] and nothing.abstained
    found = learned.search(SearchRequest("gh", SERVABLE[0], 5))
    assert found.tool_names[0] == "merge_pull_request" and not found.abstained


def test_the_model_reads_springs_empty_array_and_the_trace_keeps_the_reason(hybrid):
    tool = ToolSearchTool(hybrid)
    assert "An empty array means no tool matches" in tool.as_tool().description
    assert "empty array" not in ToolSearchTool(make_index("lucene")).as_tool().description  # Spring's text
    outcome = tool.call(json.dumps({"query": OFF_TOPIC[0]}), "gh", "c1")
    assert outcome.result == NO_MATCH_RESULT == "[]" and is_no_match(outcome.result) and not outcome.is_error
    record = outcome.record
    assert record.abstained and record.confidence < hybrid.min_confidence
    assert "best description similarity" in record.confidence_reason
    step = Iteration(number=1, exposed_tools=[], newly_exposed=[], accumulated=[], searches=[record])
    trace = RunTrace("gh", "test", "hybrid", OFF_TOPIC[0], len(GITHUB), iterations=[step])
    again = RunTrace.from_json(trace.to_json())
    assert again.iterations[0].searches[0].abstained and again == trace
    served = tool.call(json.dumps({"query": SERVABLE[0]}), "gh", "c2")
    assert served.record.names and not served.record.abstained and served.record.confidence is not None


def test_a_category_filter_judges_only_the_tools_it_allows():
    from toolsearch_lab.model import Tool

    tools = [
        Tool("get_weather", "Get the weather forecast for a city", category="weather"),
        Tool("convert_currency", "Convert an amount of money between currencies", category="money"),
    ]
    index = HybridToolIndex(small_catalog=0)  # no rule by catalog size: the confidence alone decides
    index.index_tools("s", tools)
    query = "convert 100 dollars to euros"
    assert index.search(SearchRequest("s", query, 2)).tool_names[0] == "convert_currency"
    filtered = index.search(SearchRequest("s", query, 2, category_filter="weather"))
    assert filtered.tool_names == [] and filtered.abstained
    # By default the filter leaves one tool the request may get: never refused on the confidence alone.
    default = HybridToolIndex()
    default.index_tools("s", tools)
    small = default.search(SearchRequest("s", query, 2, category_filter="weather"))
    assert small.tool_names == ["get_weather"] and not small.abstained
    assert "a catalog of 1 tool, at most 3" in small.confidence.verdict


def test_bad_model_files_are_named(tmp_path):
    good = AbstentionModel.load().to_dict()
    cases = [
        ({**good, "format": "x"}, "format"),
        ({k: v for k, v in good.items() if k != "coef"}, "missing field 'coef'"),
        ({**good, "coef": [1.0]}, "coef has 1 values"),
        ({**good, "scale": [0.0, 1.0]}, "every scale must be >="),
        ({**good, "features": ["a", "b"]}, "unknown features"),
        ({**good, "min_confidence": 2}, "min_confidence"),
        ({**good, "intercept": float("inf")}, "intercept"),
    ]
    for i, (doc, message) in enumerate(cases):
        path = tmp_path / f"m{i}.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(AbstentionError, match=message):
            AbstentionModel.load(path)
    with pytest.raises(AbstentionError, match="no such file"):
        AbstentionModel.load(tmp_path / "missing.json")
    with pytest.raises(AbstentionError, match="abstention model: unknown features"):
        AbstentionModel.from_dict({**good, "features": ["nope"], "mean": [0], "scale": [1], "coef": [1]})


@pytest.mark.slow
def test_refitting_on_the_shipped_calibration_data_gives_the_shipped_model():
    cal = calibration_sets()
    shipped = AbstentionModel.load()
    refit = fit_abstention(cal, evidence(cal), embedder=default_embedder().name, info=shipped.info)
    assert refit.features == DEFAULT_FEATURES == shipped.features
    for a, b in zip(
        refit.coef + refit.mean + refit.scale, shipped.coef + shipped.mean + shipped.scale, strict=True
    ):
        assert a == pytest.approx(b, abs=1e-5)
    assert refit.intercept == pytest.approx(shipped.intercept, abs=1e-5)
    assert refit.min_confidence == pytest.approx(shipped.min_confidence, abs=1e-4)


def test_the_shipped_sets_are_what_they_say():
    assert set(OFFCATALOG_SETS) == {"calibration", "github-test", "bfcl-irrelevance"}
    calibration = load_offcatalog("calibration")
    catalogs = {"github-mcp", "spring-demo", "livemcpbench", "metatool", "bfcl"}
    assert len(calibration) == 291 and {r.catalog for r in calibration} == catalogs
    test = load_offcatalog("github-test")
    assert len(test) == 100 and sum(r.kind == "near-miss" for r in test) == 48
    assert len(load_offcatalog("bfcl-irrelevance")) == 240
    # No request is in two sets, nor among the example requests the calibration uses as servable.
    from toolsearch_lab.eval.datasets import load_dataset

    def norm(text: str) -> str:
        return " ".join(text.lower().split())

    seen: dict[tuple[str, str], str] = {}
    for name in OFFCATALOG_SETS:  # (BFCL's own set repeats four of its questions)
        mine = {(r.catalog, norm(r.query)) for r in load_offcatalog(name)}
        assert not mine & set(seen), (name, sorted(mine & set(seen))[:3])
        seen.update(dict.fromkeys(mine, name))
    for q in load_dataset("github-examples").queries + load_dataset("github-paraphrases").queries:
        assert ("github-mcp", norm(q.query)) not in seen, q.query
    with pytest.raises(ValueError, match="unknown off-catalog set"):
        load_offcatalog("nope")
