"""MCP's facts are stated one way everywhere, in the words of toolsearch_lab/eval/mcp_facts.py, each names
the specification's page, and the package behaves as each says."""

from __future__ import annotations

import json

import pytest
from test_spring_facts import statements

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.catalog.live import destructive_text
from toolsearch_lab.eval.mcp_facts import BY_KEY, FACTS, TOOL_ANNOTATIONS
from toolsearch_lab.loop.policy import hidden_tools
from toolsearch_lab.model import Tool


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.key)
def test_every_statement_of_an_mcp_fact_uses_its_words_and_names_its_page(fact):
    assert fact.sources[0].startswith("https://modelcontextprotocol.io/specification/")
    stated, wrong = statements(fact.finds, fact.rule, code_marks=False)
    assert not wrong, f"{fact.key} stated otherwise than '{fact.rule}':\n" + "\n".join(wrong)
    assert stated, f"{fact.key} is stated nowhere; drop it from mcp_facts.py or state it"


def test_a_tool_may_be_destructive_as_the_tool_annotations_defaults_say():
    """ToolAnnotations: readOnlyHint defaults to false, destructiveHint to true, and destructiveHint means
    something only when the tool is not read-only."""
    fact = BY_KEY["mcp-destructive-default"]
    read_only, destructive = fact.note.split("; destructiveHint")
    assert "Default: false" in read_only and "Default: true" in destructive
    cases = {
        None: True,  # says nothing: both defaults apply
        "{}": True,
        '{"title": "Add Paragraph"}': True,
        '{"readOnlyHint": false}': True,
        '{"destructiveHint": true}': True,
        '{"destructiveHint": false}': False,  # only additive updates
        '{"readOnlyHint": true}': False,
        '{"readOnlyHint": true, "destructiveHint": true}': False,  # meaningless when read-only
    }
    for given, expected in cases.items():
        tool = Tool("t", "d", annotations=json.loads(given) if given else None)
        assert tool.may_be_destructive is expected, given
        # The policies hold back exactly these; the CLI's line names the unmarked ones in the fact's words.
        assert hidden_tools([tool], "exclude", "anything") == ({"t"} if expected else set())
    unmarked = destructive_text(ToolCatalog([Tool("add_paragraph", "Add a paragraph")]))
    assert fact.rule in unmarked and "add_paragraph" in unmarked
    assert TOOL_ANNOTATIONS.endswith("#toolannotations")
