"""Prerequisite links: a tool that needs an issue number pulls up the tool that finds issues, unless the
request already names the issue; the explanation says why, and the parts still add up."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch_lab.eval.datasets import load_dataset
from toolsearch_lab.eval.metrics import evaluate
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.index.links import lift, names_reference, prerequisite_links, referenced_things
from toolsearch_lab.model import SearchRequest, Tool


def _tool(
    name: str, description: str, required: dict[str, str] | None = None, category: str | None = None
) -> Tool:
    props = {p: {"type": "string", "description": d} for p, d in (required or {}).items()}
    return Tool(name, description, {"type": "object", "properties": props, "required": list(props)}, category)


TOOLS = [
    _tool("close_issue", "Close an issue.", {"issue_number": "The issue to close"}),
    _tool("list_issues", "List the issues of a repository.", {"repo": "owner/name"}),
    _tool("search_issues", "Search issues by words.", {"query": "the words"}),
    _tool("get_issue", "Read one issue.", {"issue_number": "The issue"}),  # needs the reference itself
    _tool("create_label", "Create a label.", {"name": "label name"}),
    _tool("send_money", "Send money to a recipient.", {"recipient": "IBAN", "amount": "how much"}),
    _tool("cancel_order", "Cancel an order.", {"order_id": "ID of the order"}, "shop"),
    _tool("get_order_history", "The user's past orders.", {}, "shop"),
    _tool("get_orders_report", "Orders of another shop.", {}, "other-shop"),
]


def test_links_go_from_a_reference_to_the_lookups_of_the_same_server():
    links = prerequisite_links(TOOLS)
    names = {TOOLS[c].name: sorted(TOOLS[p].name for p, _ in ps) for c, ps in links.providers.items()}
    assert names["close_issue"] == ["list_issues", "search_issues"]  # get_issue needs the number itself
    assert names["get_issue"] == ["list_issues", "search_issues"]
    assert names["cancel_order"] == ["get_order_history"]  # not the other shop's report
    assert "send_money" not in names and "create_label" not in names  # values, not references
    assert referenced_things("id", None, _tool("update_scheduled_transaction", "x")) == {
        "schedul",
        "transact",
    }
    assert referenced_things("receiver", {"description": "User ID of the user to message"}, TOOLS[0]) == {
        "user"
    }


def test_lift_raises_the_lookup_unless_the_request_names_the_thing():
    links = prerequisite_links(TOOLS)
    scores = np.array([0.9, 0.2, 0.5, 0.6, 0.1, 0.0, 0.0, 0.0, 0.0])
    raised, by = lift(scores, "close the issue about the login crash", links, 0.8)
    assert raised[1] == pytest.approx(0.72) and raised[2] == pytest.approx(0.72) and by == {1: 0, 2: 0}
    assert raised[0] == 0.9 and raised[3] == 0.6  # only lookups move, and only up
    same, none = lift(scores, "close issue 45", links, 0.8)
    assert none == {} and (same == scores).all()
    assert names_reference("close #12 please", frozenset({"issu"}))
    assert names_reference("cancel order no. 881", frozenset({"order"}))
    assert not names_reference("cancel my last order from 2021", frozenset({"order"}))


def test_the_hybrid_explains_a_raised_tool_and_its_parts_add_up():
    index = HybridToolIndex(abstain=False)
    index.index_tools("s", TOOLS)
    query = "close the issue about the login crash"
    hits = {h.tool_name: h for h in index.explain_search(SearchRequest("s", query, 9))}
    raised = [h for h in hits.values() if h.prerequisite_of is not None]
    assert raised and all(h.prerequisite_of == "close_issue" for h in raised)
    for hit in raised:
        explanation = index.explain("s", query, hit.tool_name)
        assert explanation.score == pytest.approx(hit.score)
        assert sum(p.value for p in explanation.parts) == pytest.approx(explanation.score)
        assert "close_issue" in explanation.parts[-1].label
    plain = HybridToolIndex(abstain=False, prerequisites=False)
    plain.index_tools("s", TOOLS)
    assert all(h.prerequisite_of is None for h in plain.explain_search(SearchRequest("s", query, 9)))
    with pytest.raises(ValueError, match="prerequisite_weight"):
        HybridToolIndex(prerequisite_weight=1.5)


def test_requests_that_need_a_lookup_first_find_it():
    """The shipped prerequisite requests (dev data the weight was chosen on): recall@5 rises."""
    for name in ("github-prerequisites", "bfcl-prerequisites"):
        dataset = load_dataset(name)
        on = evaluate(HybridToolIndex(abstain=False), dataset).metrics["recall@5"]
        off = evaluate(HybridToolIndex(abstain=False, prerequisites=False), dataset).metrics["recall@5"]
        assert on > off + 0.03, (name, on, off)
