"""Token costs per tool and per request, and why the heaviest tools are heavy.

The per-tool figures come from :class:`~toolsearch_lab.tokens.TokenCounter`: ``tool_tokens`` (estimated
prompt tokens, OpenAI's hidden tool format) and ``count_json`` (exact tokens of the JSON you send). The parts
(description, enum values, nested schemas, parameter descriptions) are measured by counting the tool again
with that part removed, so they use exactly the counter's own rules.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from typing import Any

from toolsearch_lab.eval.doctor.report import CostReport, Finding, ToolCost
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import TokenCounter

HEAVY_FACTOR = 3  # a tool is heavy when it costs this many times the median tool...
HEAVY_MIN_TOKENS = 400  # ...and at least this much
_NESTING = ("properties", "items", "anyOf", "oneOf", "allOf")


def catalog_cost(tools: list[Tool], counters: list[TokenCounter], tick: Callable[[int], None]) -> CostReport:
    rows = []
    for t in tools:
        rows.append(_tool_cost(t, counters))
        tick(1)
    first = counters[0].encoding_name
    rows.sort(key=lambda r: (-r.tokens[first], r.name))
    median = int(statistics.median(r.tokens[first] for r in rows)) if rows else 0
    for r in rows:
        r.reasons = _reasons(r, first)
    return CostReport(
        encodings=[c.encoding_name for c in counters],
        total={c.encoding_name: c.tools_tokens(tools) for c in counters},
        json_total={c.encoding_name: c.count_json(tools) for c in counters},
        median_tool=median,
        tools=rows,
    )


def _tool_cost(t: Tool, counters: list[TokenCounter]) -> ToolCost:
    counter = counters[0]
    full = counter.tool_tokens(t)

    def without(transform: Callable[[Mapping], Any]) -> int:
        return full - counter.tool_tokens(Tool(t.name, t.description, transform(t.parameters)))

    props = t.parameters.get("properties")
    return ToolCost(
        name=t.name,
        tokens={c.encoding_name: c.tool_tokens(t) for c in counters},
        json_tokens={c.encoding_name: c.count_json(t) for c in counters},
        description_tokens=counter.count(t.description),
        enum_tokens=without(lambda s: _drop_keys(s, {"enum"})),
        nested_tokens=without(_flatten),
        parameter_description_tokens=without(lambda s: _drop_keys(s, {"description"})),
        parameters=len(props) if isinstance(props, Mapping) else 0,
    )


def _drop_keys(schema: Any, keys: set[str], depth: int = 0) -> Any:
    """``schema`` with ``keys`` removed from every sub-schema below the top level."""
    if isinstance(schema, list):
        return [_drop_keys(v, keys, depth) for v in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {}
    for k, v in schema.items():
        if depth > 0 and k in keys:
            continue
        # The names under "properties" are keys, not keywords: a property called "enum" stays.
        if k == "properties" and isinstance(v, Mapping):
            out[k] = {name: _drop_keys(sub, keys, depth + 1) for name, sub in v.items()}
        else:
            out[k] = _drop_keys(v, keys, depth + 1)
    return out


def _flatten(schema: Mapping) -> dict:
    """Top-level properties only, each without its own sub-schemas."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return dict(schema)
    flat = {
        name: {k: v for k, v in sub.items() if k not in _NESTING} if isinstance(sub, Mapping) else sub
        for name, sub in props.items()
    }
    return {**schema, "properties": flat}


def _reasons(r: ToolCost, encoding: str) -> list[str]:
    total = r.tokens[encoding] or 1
    parts = [
        (r.description_tokens, "long description", "tokens of description"),
        (r.enum_tokens, "long enums", "tokens of enum values"),
        (r.nested_tokens, "nested schemas", "tokens of nested object/array/anyOf schemas"),
        (r.parameter_description_tokens, "long parameter descriptions", "tokens of parameter descriptions"),
    ]
    out = [
        f"{label}: {n:,} {what} ({n / total:.0%})"
        for n, label, what in parts
        if n >= 0.25 * total and n >= 50
    ]
    if r.parameters >= 12:
        out.append(f"many parameters: {r.parameters}")
    return out


def cost_findings(report: CostReport) -> list[Finding]:
    first = report.encodings[0]
    total = report.total[first] or 1
    limit = max(HEAVY_FACTOR * report.median_tool, HEAVY_MIN_TOKENS)
    out = []
    for r in report.tools:
        cost = r.tokens[first]
        if cost < limit:
            break  # rows are heaviest first
        why = "; ".join(r.reasons) or "many small parts"
        out.append(
            Finding(
                "warning",
                "heavy-tool",
                r.name,
                f"costs {cost:,} prompt tokens ({first}), {cost / max(report.median_tool, 1):.1f}x the "
                f"median tool and {cost / total:.1%} of the catalog: {why}",
                _heavy_fix(r),
                min(1.0, 0.2 + cost / total),
                [r.name],
                {"tokens": cost, "reasons": r.reasons},
            )
        )
    return out


def _heavy_fix(r: ToolCost) -> str:
    fixes = []
    if r.description_tokens >= max(r.enum_tokens, r.nested_tokens, r.parameter_description_tokens):
        fixes.append("cut the description to what the model needs to choose the tool (move examples to docs)")
    if r.enum_tokens >= 50:
        fixes.append("replace a long enum with a string parameter whose description gives the format")
    if r.nested_tokens >= 50:
        fixes.append("flatten nested objects, or split the tool into simpler tools")
    if r.parameter_description_tokens >= 50 and not fixes:
        fixes.append("shorten parameter descriptions to meaning, format and one example")
    return "; ".join(fixes) or "split it into smaller tools, each with fewer parameters"
