"""Near-misses: a request for an operation no tool of its object offers gets no tools, says what is missing,
and the check can be turned off; its margin is the one the calibration data chooses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.eval.abstention import choose_near_miss_gain, near_miss_gains
from toolsearch_lab.eval.offcatalog import calibration_sets
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.index.operations import NEAR_MISS_GAIN, OperationIndex, lead_verb, swapped
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchRequest, Tool

GITHUB = list(load_catalog("github-mcp").tools)
NEAR_MISSES = ["delete the feature/login branch", "Please delete gist 9f8e7d"]
SERVED = ["create a branch called feature/login", "update gist 9f8e7d with the new notes", "Close issue #93"]


@pytest.fixture(scope="module")
def hybrid() -> HybridToolIndex:
    index = HybridToolIndex()
    index.index_tools("gh", GITHUB)
    return index


def test_the_operation_a_request_asks_for_against_what_the_tools_named_after_its_object_offer():
    operations = OperationIndex(GITHUB)
    missing = operations.missing("Please delete the feature/login branch")
    assert missing is not None and (missing.verb, missing.operation, missing.objects) == (
        "delete",
        "delete",
        ("branch",),
    )
    assert {"create_branch", "list_branches"} <= set(missing.tools) and "delete" not in missing.offered
    assert "no tool about branch offers 'delete'" in missing.describe()
    assert operations.missing("create a branch called feature/login") is None  # create_branch does it
    assert operations.missing("Close issue #93") is None  # update_issue_state: close is an update
    assert operations.missing("what is on the feature/login branch?") is None  # no leading verb
    assert operations.missing("supprime la branche feature/login") is None  # another language: not judged
    assert operations.missing("delete everything") is None  # no object any tool is named after
    # Verbs whose operation depends on what follows are not judged: these are servable.
    assert (
        operations.missing("Follow up under review note 2233 in basalt/api #98 explaining the lock") is None
    )
    assert operations.missing("Start watching acme/api so I get all of its activity") is None
    assert operations.missing("unfollow the user octocat").operation == "delete"  # users are only searched


def test_an_open_ended_tool_does_anything_only_to_its_head_noun():
    tools = [
        Tool("manage_repository_subscription", "Watch or ignore a repository"),
        Tool("create_repository", "x"),
    ]
    missing = OperationIndex(tools).missing("delete the repository acme/api")
    assert missing is not None and missing.tools == ("create_repository",)  # subscriptions, not repositories
    assert OperationIndex(tools).missing("delete my subscription") is None


def test_the_verb_is_swapped_for_each_other_operation_keeping_the_rest():
    assert lead_verb("Could you please remove the label?").verb == "remove"
    assert swapped("Could you remove the label?") == [
        "Could you get the label?",
        "Could you create the label?",
        "Could you update the label?",
    ]
    assert swapped("hello there") == []


def test_a_near_miss_gets_no_tools_and_says_what_is_missing(hybrid):
    for query in NEAR_MISSES:
        response = hybrid.search(SearchRequest("gh", query, 5))
        assert response.tool_names == [] and response.abstained, query
        confidence = response.confidence
        assert confidence.value >= confidence.threshold  # the confidence alone would have answered
        assert "offers 'delete'" in confidence.near_miss
        assert response.to_dict()["confidence"]["near_miss"] == confidence.near_miss
    for query in SERVED:
        response = hybrid.search(SearchRequest("gh", query, 5))
        assert len(response.tool_names) == 5 and response.confidence.near_miss is None, query


def test_the_check_can_be_turned_off_and_its_margin_is_checked():
    off = HybridToolIndex(near_miss=False)
    off.index_tools("gh", GITHUB)
    found = off.search(SearchRequest("gh", NEAR_MISSES[0], 5))
    assert "create_branch" in found.tool_names and not found.abstained
    lenient = HybridToolIndex(near_miss_gain=2.0)  # no swap comes closer by more than the whole range
    lenient.index_tools("gh", GITHUB)
    assert lenient.search(SearchRequest("gh", NEAR_MISSES[0], 5)).tool_names
    with pytest.raises(ValueError, match="near_miss_gain"):
        HybridToolIndex(near_miss_gain=-0.1)


def test_a_category_filter_judges_only_the_tools_it_allows():
    tools = [
        Tool("create_branch", "Create a new branch in a repository", category="git"),
        Tool("delete_branch", "Delete a branch from a repository", category="admin"),
    ]
    index = HybridToolIndex()
    index.index_tools("s", tools)
    query = "delete the feature/login branch"
    assert index.search(SearchRequest("s", query, 2)).tool_names[0] == "delete_branch"
    filtered = index.search(SearchRequest("s", query, 2, category_filter="git"))
    assert filtered.tool_names == [] and "create_branch" in filtered.confidence.near_miss


def test_the_learned_index_and_the_trace_see_it(hybrid):
    learned = make_index("learned")
    learned.index_tools("gh", GITHUB)
    assert learned.search(SearchRequest("gh", NEAR_MISSES[0], 5)).confidence.near_miss is not None
    plain = make_index("learned", near_miss=False)
    plain.index_tools("gh", GITHUB)
    assert plain.search(SearchRequest("gh", NEAR_MISSES[0], 5)).tool_names  # the option reaches its hybrid
    outcome = ToolSearchTool(hybrid).call(json.dumps({"query": NEAR_MISSES[0]}), "gh", "c1")
    assert outcome.result == "[]" and outcome.record.abstained
    assert outcome.record.confidence_reason.startswith("refused: a near-miss, no tool about branch offers")
    assert "best description similarity" in outcome.record.confidence_reason


@pytest.mark.slow
def test_the_shipped_margin_is_the_one_the_calibration_data_chooses():
    sets = calibration_sets()
    gains = near_miss_gains(sets)
    chosen, rows = choose_near_miss_gain(sets, gains)
    assert chosen == NEAR_MISS_GAIN
    at = next(r for r in rows if r["gain"] == chosen)
    assert at["servable flagged"] <= 0.01 and at["off-catalog flagged"] > 0
    hand = next(s for s in sets if s.name == "hand-written for github-mcp")
    assert np.mean(gains[hand.name] > chosen) > 0.05  # it catches GitHub requests no tool serves


def test_the_stepper_says_no_tool_matches_and_why_escaped(hybrid):
    from toolsearch_lab.trace import Iteration, RunTrace
    from toolsearch_lab.ui.stepper_panels import details_html

    record = ToolSearchTool(hybrid).call(json.dumps({"query": NEAR_MISSES[0]}), "gh", "c1").record
    step = Iteration(number=1, exposed_tools=[], newly_exposed=[], accumulated=[], searches=[record])
    html = details_html(RunTrace("gh", "test", "hybrid", NEAR_MISSES[0], len(GITHUB), iterations=[step]), 0)
    assert "no tool matches: the index judged that none fits" in html
    assert "no tool about branch offers &#x27;delete&#x27;" in html  # what is missing, escaped like all text
    record.confidence_reason = "<script>alert(1)</script>"  # the reason quotes catalog text: escaped
    html = details_html(RunTrace("gh", "test", "hybrid", "q", len(GITHUB), iterations=[step]), 0)
    assert "<script>" not in html and "&lt;script&gt;" in html
