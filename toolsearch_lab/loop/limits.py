"""The advisor's limits on one request: tool calls per tool and in total (Spring's tool manager), and the
runaway-loop guard on repeated searches (ours)."""

from __future__ import annotations

from typing import Any, Literal

from toolsearch_lab.models.base import AssistantTurn
from toolsearch_lab.trace import SearchRecord

__all__ = ["Breach", "limit_breach", "repeated_search"]

# The limit a turn broke (the run's stop reason, and the key of its setting in the trace's config) and why.
Breach = tuple[Literal["max_calls_per_tool", "max_total_tool_calls"], str]


def limit_breach(
    turn: AssistantTurn, calls_per_tool: dict[str, int], total_calls: int, max_per_tool: int, max_total: int
) -> tuple[Breach | None, int]:
    """Count the turn's calls into ``calls_per_tool`` and return ((stop reason, message) or None, the new
    total). Spring checks the limits before running a turn's calls and, on a breach, returns to the caller
    without calling the model again."""
    breach: Breach | None = None
    for call in turn.tool_calls:
        calls_per_tool[call.name] = calls_per_tool.get(call.name, 0) + 1
        total_calls += 1
        if calls_per_tool[call.name] > max_per_tool:
            breach = ("max_calls_per_tool", f"tool {call.name!r} called more than {max_per_tool} times")
        elif total_calls > max_total:
            breach = ("max_total_tool_calls", f"more than {max_total} tool calls in this request")
    return breach, total_calls


def repeated_search(
    args: dict[str, Any], call_id: str, search_counts: dict[str, int], limit: int
) -> SearchRecord | None:
    """The runaway-loop guard: a refusal record once the same query (case and outer spaces ignored) was
    searched more than ``limit`` times, else None. Counts into ``search_counts``."""
    query = args.get("query")
    if not isinstance(query, str):
        return None
    key = query.strip().casefold()
    search_counts[key] = search_counts.get(key, 0) + 1
    if search_counts[key] <= limit:
        return None
    message = (
        f"you already searched for {query!r} {limit} times and the results will not change; call one of "
        "the tools found, search for something different, or answer"
    )
    return SearchRecord(call_id, query, None, error=message)
