"""The text an index reads for a tool: Spring's description, the split name, or both plus the parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from toolsearch_lab.model import Tool
from toolsearch_lab.text.identifiers import spaced_identifiers

TextMode = Literal["description", "full", "name", "name+description"]
TEXT_MODES: tuple[TextMode, ...] = get_args(TextMode)
# A description may end with example requests (Toolshed's "synthetic questions", written into the text the
# model and the indexes read): a blank line, this heading, then one "- request" per line.
EXAMPLES_HEADING = "Example requests:"
_EXAMPLES_START = "\n\n" + EXAMPLES_HEADING + "\n"


def with_example_requests(description: str, examples: Sequence[str]) -> str:
    """``description`` followed by ``examples`` in the format :func:`example_requests` reads back."""
    if isinstance(examples, str):
        raise ValueError(f"example requests must be a list of strings, got one string {examples!r:.80}")
    lines = [" ".join(str(e).split()) for e in examples]
    if not lines:
        return description
    if any(not line for line in lines):
        raise ValueError("example requests must be non-blank strings")
    if _EXAMPLES_START in description:
        raise ValueError(f"the description already lists example requests ({EXAMPLES_HEADING!r})")
    return description.rstrip() + _EXAMPLES_START + "\n".join(f"- {line}" for line in lines)


def example_requests(description: str) -> tuple[str, list[str]]:
    """(the description without its example requests, the example requests), or (description, [])."""
    head, sep, tail = description.rpartition(_EXAMPLES_START)
    if not sep:
        return description, []
    lines = tail.split("\n")
    if not all(line.startswith("- ") and line[2:].strip() for line in lines):
        return description, []
    return head, [line[2:].strip() for line in lines]


def parameter_text(schema: object) -> str:
    """Property names (as written) and descriptions of a JSON Schema, nested ones included, depth first,
    one per line: the parameters field of the BM25 index's ``include_parameters`` option."""
    parts: list[str] = []

    def walk(node: object) -> None:
        if not isinstance(node, dict):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                parts.append(str(name))
                if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                    parts.append(sub["description"])
                walk(sub)
        walk(node.get("items"))

    walk(schema)
    return "\n".join(parts)


def _parameter_lines(tool: Tool) -> list[str]:
    props = tool.parameters.get("properties") or {}
    lines = []
    if isinstance(props, dict):
        for pname, schema in props.items():
            desc = schema.get("description") if isinstance(schema, dict) else None
            words = spaced_identifiers(str(pname))
            lines.append(f"{words}: {desc}" if isinstance(desc, str) and desc.strip() else words)
    return lines


def tool_text(tool: Tool, mode: TextMode = "description") -> str:
    """The text indexed for ``tool``.

    ``description``: Spring's choice. ``full``: the name with identifiers split (``get_stock_price`` ->
    ``get stock price``), the description, then ``Parameters:`` with each parameter's name and description.
    ``name``: the split name alone (a "view" the hybrid index uses). ``name+description``: the name as
    written, a colon and the description (``get_iban: Get the IBAN of the current bank account.``), what
    most embedding baselines embed; it beat the description alone on every dataset measured
    (docs/index.md). The name matters most when descriptions are short, vague or in another language than
    the queries.
    """
    if mode == "description":
        return tool.description
    if mode == "name":
        return spaced_identifiers(tool.name)
    if mode == "name+description":
        return f"{tool.name}: {tool.description}"
    if mode != "full":
        raise ValueError(f"text mode must be one of {TEXT_MODES}, got {mode!r}")
    parts = [spaced_identifiers(tool.name) + ".", tool.description.strip()]
    params = _parameter_lines(tool)
    if params:
        parts.append("Parameters: " + "; ".join(params) + ".")
    return " ".join(p for p in parts if p)
