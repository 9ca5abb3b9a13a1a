"""The text an index reads for a tool: Spring's description, the split name, or both plus the parameters."""

from __future__ import annotations

from toolsearch_lab.model import Tool
from toolsearch_lab.text.identifiers import spaced_identifiers

TEXT_MODES = ("description", "full", "name")


def _parameter_lines(tool: Tool) -> list[str]:
    props = tool.parameters.get("properties") or {}
    lines = []
    if isinstance(props, dict):
        for pname, schema in props.items():
            desc = schema.get("description") if isinstance(schema, dict) else None
            words = spaced_identifiers(str(pname))
            lines.append(f"{words}: {desc}" if isinstance(desc, str) and desc.strip() else words)
    return lines


def tool_text(tool: Tool, mode: str = "description") -> str:
    """The text indexed for ``tool``.

    ``description``: Spring's choice. ``full``: the name with identifiers split (``get_stock_price`` ->
    ``get stock price``), the description, then ``Parameters:`` with each parameter's name and description.
    ``name``: the split name alone (a "view" the hybrid index uses). The name matters most when descriptions
    are short, vague or in another language than the queries.
    """
    if mode == "description":
        return tool.description
    if mode == "name":
        return spaced_identifiers(tool.name)
    if mode != "full":
        raise ValueError(f"text mode must be one of {TEXT_MODES}, got {mode!r}")
    parts = [spaced_identifiers(tool.name) + ".", tool.description.strip()]
    params = _parameter_lines(tool)
    if params:
        parts.append("Parameters: " + "; ".join(params) + ".")
    return " ".join(p for p in parts if p)
