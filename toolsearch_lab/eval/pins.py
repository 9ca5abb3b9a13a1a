"""Which tools to pin beside tool search, and why, from measured usage (the advice for
:class:`~toolsearch_lab.loop.pinning.Pinned`).

:func:`recommend_pins` reads traces of earlier runs (sessions): how many sessions used each tool, what the
searches before its calls cost, and what sending its definition in every request would cost instead. Both
sides are prompt tokens of the same conversation, so both are weighed at the same cache discount: a search
request repeats the conversation before it as a cached prefix just as a pinned definition does.
:func:`~toolsearch_lab.eval.compare.usage_pins` runs the sessions it measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolsearch_lab.model import Tool, check_positive_int
from toolsearch_lab.trace import RunTrace

if TYPE_CHECKING:  # tiktoken is loaded only when a recommendation counts tokens (the CLI starts without it)
    from toolsearch_lab.tokens import TokenCounter

__all__ = ["PinAdvice", "PinRecommendation", "recommend_pins"]


@dataclass(frozen=True)
class PinAdvice:
    """One tool's measured case for pinning, per session: ``sessions`` that called it out of ``of``;
    ``search_tokens`` = prompt tokens of the search requests before each of its calls (what finding it cost);
    ``pin_tokens`` = its definition in every request of a session (what keeping it loaded costs); both times
    the same cache discount; ``net`` = what pinning saves per session (positive) or costs (negative)."""

    tool: str
    sessions: int
    of: int
    calls: int
    definition_tokens: int
    search_tokens: float
    pin_tokens: float
    pin: bool
    why: str

    @property
    def share(self) -> float:
        return self.sessions / self.of if self.of else 0.0

    @property
    def net(self) -> float:
        return self.share * self.search_tokens - self.pin_tokens


@dataclass(frozen=True)
class PinRecommendation:
    """The tools to pin (best first) and every used tool's case, from ``sessions`` traces."""

    pinned: list[str]
    advice: list[PinAdvice] = field(default_factory=list)
    sessions: int = 0
    requests_per_session: float = 0.0
    measured_on: list[str] = field(default_factory=list)  # the scenarios whose runs were measured, if known

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "tool": a.tool,
                "sessions": f"{a.sessions}/{a.of}",
                "calls": a.calls,
                "definition_tokens": a.definition_tokens,
                "search_tokens_per_use": round(a.search_tokens),
                "pin_tokens_per_session": round(a.pin_tokens),
                "net_per_session": round(a.net),
                "pin": a.pin,
                "why": a.why,
            }
            for a in self.advice
        ]


def recommend_pins(
    traces: Sequence[RunTrace],
    tools: Sequence[Tool],
    counter: TokenCounter | None = None,
    *,
    max_pins: int = 5,
    min_share: float = 0.5,
    cached_ratio: float = 1.0,
) -> PinRecommendation:
    """Which tools to pin, from ``traces`` (one per session, e.g. earlier runs of the scenarios over the same
    catalog). A tool is pinned when at least ``min_share`` of the sessions called it and what its searches
    cost (prompt tokens of the search requests before each of its calls, weighted by that share) exceeds what
    its definition would cost in every request of a session. Both sides are weighed the same way, times
    ``cached_ratio`` (the price of a cached prompt token over an uncached one, e.g. 0.25 on gpt-4.1): pinned
    tools lead the tools array, so after the first request they are a cached prefix, and a search request's
    prompt is the conversation so far, a cached prefix too. The discount therefore scales both figures and
    never changes which tools are pinned. At most ``max_pins``, by net saving."""
    check_positive_int(max_pins, "recommend_pins: max_pins")
    if not 0.0 < min_share <= 1.0:
        raise ValueError(f"recommend_pins: min_share must be in (0, 1], got {min_share!r}")
    if not 0.0 <= cached_ratio <= 1.0:
        raise ValueError(f"recommend_pins: cached_ratio must be in [0, 1], got {cached_ratio!r}")
    if not traces:
        raise ValueError("recommend_pins: needs at least one trace (a session) to measure usage from")
    if counter is None:
        from toolsearch_lab.tokens import TokenCounter

        counter = TokenCounter(traces[0].encoding)
    by_name = {t.name: t for t in tools}
    sessions: dict[str, int] = {}
    calls: dict[str, int] = {}
    search_cost: dict[str, list[int]] = {}
    for trace in traces:
        for name, cost in _uses(trace):
            calls[name] = calls.get(name, 0) + 1
            search_cost.setdefault(name, []).append(cost)
        for name in set(trace.called_tools()):
            sessions[name] = sessions.get(name, 0) + 1
    per_session = sum(len(t.iterations) for t in traces) / len(traces)
    advice = []
    for name in sorted(sessions, key=lambda n: (-sessions[n], n)):
        if name not in by_name:
            continue
        tokens = counter.tool_tokens(by_name[name].definition())
        found = sum(search_cost[name]) / len(search_cost[name]) * cached_ratio
        pin_cost = tokens * per_session * cached_ratio
        item = PinAdvice(name, sessions[name], len(traces), calls[name], tokens, found, pin_cost, False, "")
        advice.append(item)
    ranked = sorted(advice, key=lambda a: -a.net)
    chosen = [a.tool for a in ranked if a.share >= min_share and a.net > 0][:max_pins]
    advice = [_explained(a, a.tool in chosen, min_share, max_pins) for a in ranked]
    return PinRecommendation(chosen, advice, len(traces), per_session)


def _uses(trace: RunTrace) -> list[tuple[str, int]]:
    """(tool, prompt tokens of the search requests since the previous tool call) for each call of a tool."""
    out: list[tuple[str, int]] = []
    searching = 0
    for it in trace.iterations:
        if it.searches:
            searching += it.tokens.tool_search.total
        for call in it.tool_calls:
            if call.kind == "tool":
                out.append((call.name, searching))
                searching = 0
    return out


def _explained(advice: PinAdvice, pinned: bool, min_share: float, max_pins: int) -> PinAdvice:
    used = f"called in {advice.sessions} of {advice.of} sessions"
    costs = (
        f"finding it cost {advice.search_tokens:,.0f} prompt tokens of searches per use; keeping it loaded "
        f"{advice.pin_tokens:,.0f} per session, both at the same cache discount"
    )
    if pinned:
        why = f"pin: {used}; {costs}"
    elif advice.share < min_share:
        why = f"not pinned: only {used} (pin from {min_share:.0%})"
    elif advice.net <= 0:
        why = f"not pinned: keeping it loaded costs more than finding it; {costs}"
    else:
        why = f"not pinned: {used}, but {max_pins} tools with larger savings come first"
    return replace(advice, pin=pinned, why=why)
