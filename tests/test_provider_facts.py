"""The providers' facts the lab relies on are stated one way everywhere, in the words of
toolsearch_lab/eval/provider_facts.py, each names the provider's page, and what rests on them says so: the
doctor's deferral findings and the re-priced replay's OpenAI rows.
"""

from __future__ import annotations

import json

import pytest
from test_spring_facts import statements

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.catalog.export import to_anthropic_tools, to_openai_responses_tools
from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.doctor import diagnose
from toolsearch_lab.eval.provider_facts import BY_KEY, FACTS
from toolsearch_lab.eval.replay_compare import compare_replay

PAGES = {"anthropic": "https://platform.claude.com/docs/", "openai": "https://developers.openai.com/"}


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.key)
def test_every_statement_of_a_provider_fact_uses_its_words_and_names_its_page(fact):
    assert fact.sources[0].startswith(PAGES[fact.provider])
    stated, wrong = statements(fact.finds, fact.rule, code_marks=False)
    assert not wrong, f"{fact.key} stated otherwise than '{fact.rule}':\n" + "\n".join(wrong)
    assert stated, f"{fact.key} is stated nowhere; drop it from provider_facts.py or state it"


@pytest.fixture(scope="module")
def tools():
    return list(load_catalog("github-mcp"))[:12]


def _deferral(report):
    return [f for f in report.findings if f.kind.startswith("deferred-")]


def test_the_doctor_warns_that_openai_bills_functions_deferred_outside_a_namespace(tools, tmp_path):
    sent = to_openai_responses_tools(tools)  # the search tool, then every function deferred, flat
    namespaced = {"type": "namespace", "name": "github", "description": "GitHub", "tools": sent[7:]}
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"model": "gpt-5.4", "tools": [*sent[:7], namespaced]}))
    report = diagnose(request, indexes=("lucene",))
    (finding,) = _deferral(report)
    fact = BY_KEY["openai-flat-billed"]
    flat = [t["name"] for t in sent[1:7]]
    assert finding.severity == "warning" and finding.kind == "deferred-billed-in-full"
    assert finding.tools == flat  # the namespace's functions are not flagged
    assert fact.rule in finding.problem and fact.sources[0] in finding.problem
    assert finding.evidence["fact"] == fact.key and "namespaces" in finding.fix
    assert report.tools == len(tools)  # the namespace's functions are in the catalog checked


def test_the_doctor_refuses_defer_loading_with_cache_control_on_one_tool(tools, tmp_path, capsys):
    sent = to_anthropic_tools(tools[1:], search_tool=tools[0])
    sent[3]["cache_control"] = {"type": "ephemeral"}
    sent[0]["cache_control"] = {"type": "ephemeral"}  # on the search tool, not deferred: fine
    request = tmp_path / "messages.json"
    request.write_text(json.dumps({"model": "claude-sonnet-4-5", "tools": sent}))
    fact = BY_KEY["anthropic-defer-cache-control"]
    assert main(["doctor", str(request), "--index", "lucene", "--no-progress", "--json"]) == 0
    findings = [
        f for f in json.loads(capsys.readouterr().out)["findings"] if f["kind"].startswith("deferred-")
    ]
    assert [(f["severity"], f["kind"], f["tools"]) for f in findings] == [
        ("error", "deferred-with-cache-control", [sent[3]["name"]])
    ]
    assert fact.rule in findings[0]["problem"] and fact.sources[0] in findings[0]["problem"]
    clean = to_anthropic_tools(tools[1:], search_tool=tools[0])
    assert not _deferral(diagnose(clean, indexes=("lucene",)))  # deferral alone costs nothing on Anthropic


def test_the_replay_rows_state_the_facts_they_rest_on():
    c = compare_replay("openai-responses", indexes=["lucene"], strategies=["openai-deferred-flat"])
    assumes = c.row("openai-deferred-flat").assumes
    assert BY_KEY["openai-flat-billed"].rule in assumes and BY_KEY["openai-loaded-at-end"].rule in assumes
