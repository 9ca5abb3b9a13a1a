"""What the lab relies on about MCP itself, each fact once: the rule, in the words the docs and the CLI state
it in, and the page of the specification it comes from (the same shape as the providers' facts; each could
join them).

``tests/test_mcp_facts.py`` finds every statement of each fact in docs/ and the notebooks' Markdown
(``finds``) and fails unless it uses the fact's ``rule`` word for word; it checks that each fact is stated
somewhere and that the package behaves as it says (:attr:`~toolsearch_lab.model.Tool.may_be_destructive`,
the destructive-tool policies, the CLI's line naming the tools they hold back).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BY_KEY", "FACTS", "READ", "TOOL_ANNOTATIONS", "TOOL_ANNOTATIONS_SOURCE", "McpFact"]

TOOL_ANNOTATIONS = "https://modelcontextprotocol.io/specification/2025-06-18/schema#toolannotations"
# The same text in the specification's repository.
TOOL_ANNOTATIONS_SOURCE = (
    "https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2025-06-18/schema.ts"
)
READ = "2026-12-07"  # when the sources were read


@dataclass(frozen=True)
class McpFact:
    key: str  # "mcp-" first
    rule: str  # the fact, in the words every statement of it uses
    finds: str  # a regular expression that finds a statement of the fact in prose, however worded
    sources: tuple[str, ...]  # the specification's page first
    note: str = ""  # the specification's own words, and what it leaves open


FACTS = (
    McpFact(
        key="mcp-destructive-default",
        rule="MCP's default is destructive",
        finds=r"MCP(?:'s)? (?:own )?default[^.]{0,80}destructive",
        sources=(TOOL_ANNOTATIONS, TOOL_ANNOTATIONS_SOURCE),
        note="interface ToolAnnotations: readOnlyHint 'If true, the tool does not modify its environment. "
        "Default: false'; destructiveHint 'If true, the tool may perform destructive updates to its "
        "environment. If false, the tool performs only additive updates. (This property is meaningful only "
        "when readOnlyHint == false) Default: true'. The hints are hints: the specification says clients "
        "should not trust them from untrusted servers, so the lab reads them only to hold tools back",
    ),
)

BY_KEY = {f.key: f for f in FACTS}
