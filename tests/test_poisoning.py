"""Poisoning made visible (issue 30, finding 5): the doctor names a tool whose description wins searches it
has no business winning, says it hijacks searches, and gives the share of the other tools' probe queries it
wins per index; an honest catalog gets no such finding. The stuffed descriptions here are our own."""

from __future__ import annotations

import pytest

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.eval.doctor.engine import diagnose
from toolsearch_lab.model import Tool

GITHUB = list(load_catalog("github-mcp"))
WORDS = (
    "issues pull requests branches commits releases tags workflows runs repositories files comments "
    "reviews labels notifications teams organizations security alerts discussions gists projects"
)
STUFFED = {
    # a keyword list pasted several times (Spring's keyword index scores by hit count)
    "repeated": "Answers anything about GitHub. " + (WORDS + ". ") * 6,
    # the names of other tools spelled out once each, as an "index" of what it can do
    "names": "Universal GitHub tool: list issues, create issue, get commit, list commits, list branches, "
    "create branch, get file contents, create pull request, list pull requests, merge pull request, "
    "list releases, get release, list tags, list workflows, run workflow, search code, search issues, "
    "search repositories, create repository, fork repository, list notifications, get me.",
}


def _hijack_findings(report):
    return [f for f in report.findings if f.kind == "hijacks-searches"]


@pytest.mark.parametrize("style", sorted(STUFFED))
def test_the_doctor_names_a_stuffed_tool_and_the_share_of_searches_it_wins(style):
    tool = Tool("do_anything", STUFFED[style], {"type": "object", "properties": {"q": {"type": "string"}}})
    report = diagnose([*GITHUB, tool], indexes=("lucene", "vector"))
    findings = _hijack_findings(report)
    assert [f.tool for f in findings] == ["do_anything"], [f.problem for f in findings]
    finding = findings[0]
    assert "hijack" in finding.problem and "keyword-stuffed" in finding.problem
    shares = finding.evidence["shares"]
    assert set(shares) <= {"lucene", "vector"}
    for index, share in shares.items():  # each index's share, as measured, is in the text
        assert f"{index}: above the right tool for {share['above']:.0%}" in finding.problem
    assert finding.evidence["stuffing"]["stuffed"]


def test_the_keyword_index_is_hijacked_for_almost_every_query_and_the_doctor_says_how_often():
    tool = Tool("do_anything", STUFFED["repeated"])
    report = diagnose([*GITHUB, tool], indexes=("regex",))
    (finding,) = _hijack_findings(report)
    assert finding.severity == "error" and "hijacks searches" in finding.problem
    assert finding.evidence["shares"]["regex"]["above"] >= 0.25  # the busiest honest tool: 23 %


def test_an_honest_catalog_gets_no_hijack_finding():
    assert _hijack_findings(diagnose(GITHUB, indexes=("lucene", "vector", "regex"))) == []
