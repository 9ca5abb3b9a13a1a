"""MCP's facts the lab states and acts on, each once: the specification's words, the page they come from, and
the words the docs use for them.

``tests/test_mcp_facts.py`` finds every statement of each fact in the notebooks' Markdown, the README and
``docs/`` (``finds``) and fails unless it uses ``words``; it also checks that the package behaves as each fact
says (the model's :attr:`~toolsearch_lab.model.Tool.may_be_destructive`, the destructive-tool policy and the
CLI's line). The Spring facts are in :mod:`toolsearch_lab.ui.course.spring_facts`, kept the same way.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class McpFact:
    key: str
    source: str  # the page of the specification, and the file of the specification's repository
    spec: str  # the specification's words
    words: str  # how the lab states it: every statement of the fact contains these words
    finds: str  # a regular expression that finds a statement of the fact, however it is worded


TOOL_ANNOTATIONS_PAGE = "https://modelcontextprotocol.io/specification/2025-06-18/schema#toolannotations"

FACTS = (
    McpFact(
        key="destructive-default",
        source=f"{TOOL_ANNOTATIONS_PAGE} (modelcontextprotocol/modelcontextprotocol, "
        "schema/2025-06-18/schema.ts, interface ToolAnnotations)",
        spec="readOnlyHint: If true, the tool does not modify its environment. Default: false. "
        "destructiveHint: If true, the tool may perform destructive updates to its environment. If false, "
        "the tool performs only additive updates. (This property is meaningful only when "
        "`readOnlyHint == false`) Default: true",
        words="MCP's default is destructive",
        finds=r"MCP(?:'s)? (?:own )?default[^.]{0,80}destructive|(?:says nothing|no annotations|unmarked)"
        r"[^.]{0,80}MCP(?:'s)? (?:reading|default)",
    ),
)

BY_KEY = {fact.key: fact for fact in FACTS}
