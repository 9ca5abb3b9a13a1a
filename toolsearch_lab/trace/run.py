"""The :class:`RunTrace`: one run (a request, a conversation, a replayed log) and the views derived from
it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from toolsearch_lab.jsonlimits import loads_checked
from toolsearch_lab.trace.codec import MAX_TRACE_DEPTH, TRACE_VERSION, decode, dumps, upgrade
from toolsearch_lab.trace.records import Iteration, RetryRecord, SearchRecord, check_choice
from toolsearch_lab.trace.source import ReplaySettings, TraceSource
from toolsearch_lab.trace.turns import SessionEvent, StepOutcome, StopReason, TurnRecord

__all__ = ["RunTrace", "saved_pct"]


def saved_pct(prompt: int, other: int) -> float:
    """Percent of ``other``'s prompt tokens that ``prompt`` saves (negative: it costs more; 0 when ``other``
    is 0)."""
    return 100.0 * (1 - prompt / other) if other else 0.0


@dataclass
class RunTrace:
    """One run. ``config``: the loop's settings (empty for a replay); ``source``: what produced the trace,
    and ``replay``: for a replayed run (``source == "replay"``), what its log says about how it ran (None
    otherwise). ``stop_reason``: why it ended (:data:`~toolsearch_lab.trace.turns.StopReason`)."""

    session_id: str
    model: str
    index: str
    user_request: str
    catalog_size: int
    config: dict[str, Any] = field(default_factory=dict)
    source: TraceSource = field(default="loop", kw_only=True)
    replay: ReplaySettings | None = field(default=None, kw_only=True)
    session_events: list[SessionEvent] = field(default_factory=list)
    iterations: list[Iteration] = field(default_factory=list)
    final_answer: str | None = None
    stop_reason: StopReason = "running"
    errors: list[str] = field(default_factory=list)
    encoding: str = "o200k_base"
    version: int = TRACE_VERSION
    steps: list[StepOutcome] = field(default_factory=list)  # filled when a scenario run is graded
    turns: list[TurnRecord] = field(default_factory=list)  # a conversation's user turns (none: one request)

    def __post_init__(self) -> None:
        check_choice("RunTrace", "source", self.source, TraceSource)
        check_choice("RunTrace", "stop_reason", self.stop_reason, StopReason)
        if self.source == "replay" and self.replay is None:
            raise ValueError("RunTrace: source='replay' needs replay, the replayed run's ReplaySettings")
        if self.source != "replay" and self.replay is not None:
            raise ValueError(
                f"RunTrace: replay settings belong to a replayed run, not source={self.source!r}"
            )

    # ---- derived views (not stored) -------------------------------------------------------------
    def tokens_total(self) -> dict[str, Any]:
        ts = sum(it.tokens.tool_search.total + it.tokens.completion for it in self.iterations)
        base = sum(it.tokens.baseline.total + it.tokens.completion for it in self.iterations)
        prompt_ts = sum(it.tokens.tool_search.total for it in self.iterations)
        prompt_base = sum(it.tokens.baseline.total for it in self.iterations)
        return {
            "tool_search": ts,
            "baseline": base,
            "prompt_tool_search": prompt_ts,
            "prompt_baseline": prompt_base,
            "completion": sum(it.tokens.completion for it in self.iterations),
            "prompt_saved_pct": round(saved_pct(prompt_ts, prompt_base), 2),
        }

    def searches(self) -> list[SearchRecord]:
        return [s for it in self.iterations for s in it.searches]

    def step_success_rate(self) -> float | None:
        """Share of graded steps that succeeded (None when the run was not graded step by step)."""
        return sum(1 for s in self.steps if s.success) / len(self.steps) if self.steps else None

    def called_tools(self) -> list[str]:
        """Names of tools that really ran, in order (searches and rejected calls excluded)."""
        return [c.name for it in self.iterations for c in it.tool_calls if c.kind == "tool"]

    def retries(self) -> list[RetryRecord]:
        """Every retry of the run: the chat model's, then each search's (the embedder's) per iteration."""
        return [
            r for it in self.iterations for r in [*it.retries, *(x for s in it.searches for x in s.retries)]
        ]

    def turn_trace(self, number: int) -> RunTrace:
        """The part of a conversation's trace that is turn ``number``: its iterations (numbered as in the
        whole conversation), session events and graded steps, its user message, answer and stop reason."""
        record = next((t for t in self.turns if t.number == number), None)
        if record is None:
            raise ValueError(
                f"this trace has no turn {number!r}; its turns are {[t.number for t in self.turns]}"
            )
        return replace(
            self,
            user_request=record.user_message,
            session_events=[e for e in self.session_events if e.turn == number],
            iterations=[it for it in self.iterations if it.turn == number],
            final_answer=record.answer,
            stop_reason=record.stop_reason,
            steps=[s for s in self.steps if s.turn == number],
            turns=[record],
        )

    def turns_summary(self) -> list[dict[str, Any]]:
        """Per turn: the user message, requests, searches, prompt tokens, the tools called, the tools array of
        its first request, the found tools carried and lost, what memory did."""
        out = []
        for record in self.turns:
            part = self.turn_trace(record.number)
            memory = record.memory
            out.append(
                {
                    "turn": record.number,
                    "user_message": record.user_message,
                    "requests": len(part.iterations),
                    "searches": len(part.searches()),
                    "prompt_tokens": sum(it.tokens.tool_search.total for it in part.iterations),
                    "called_tools": part.called_tools(),
                    "first_request_tools": record.first_request_tools,
                    "carried": record.carried,
                    "lost": record.lost,
                    "memory": None if memory is None else asdict(memory),
                    "stop_reason": record.stop_reason,
                }
            )
        return out

    def summary(self) -> dict[str, Any]:
        out = self._summary()
        if self.turns:
            out["turns"] = self.turns_summary()
        return out

    def _summary(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "model": self.model,
            "index": self.index,
            "user_request": self.user_request,
            "catalog_size": self.catalog_size,
            "iterations": len(self.iterations),
            "searches": [
                {"query": s.query, "found": s.names, "error": s.error, "abstained": s.abstained}
                for s in self.searches()
            ],
            "called_tools": self.called_tools(),
            "stop_reason": self.stop_reason,
            "final_answer": self.final_answer,
            # The error that stopped a run is also on its iteration: list it once.
            "errors": self.errors + [e for it in self.iterations for e in it.errors if e not in self.errors],
            "retries": len(self.retries()),
            "tokens": self.tokens_total(),
            "encoding": self.encoding,
        }

    # ---- JSON --------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        """The trace as strict JSON. A float that is not finite (a NaN or infinite search score from a
        broken index, say) is written as ``null``, the trace's "no value" (``SearchHit.score`` None means
        "the index gave no score"): ``NaN`` and ``Infinity`` are not JSON, and a file holding them cannot
        be read by most JSON readers. So ``from_json(t.to_json()) == t`` for every trace whose numbers are
        finite, and ``from_json(t.to_json()).to_json() == t.to_json()`` for every trace."""
        return dumps(self.to_dict(), indent)

    @classmethod
    def from_dict(cls, data: Any) -> RunTrace:
        """The trace of a parsed JSON document (of this version, or of an earlier one, brought up to it)."""
        trace: RunTrace = decode(cls, upgrade(data), "trace")
        return trace

    @classmethod
    def from_json(cls, text: str | bytes | bytearray) -> RunTrace:
        if not isinstance(text, (str, bytes, bytearray)):
            raise ValueError(f"RunTrace.from_json: expected JSON text, got {type(text).__name__}")
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8", errors="replace")
        try:
            data = loads_checked(text, "RunTrace.from_json: the text", MAX_TRACE_DEPTH)
        except json.JSONDecodeError as exc:
            raise ValueError(f"RunTrace.from_json: not valid JSON ({exc})") from None
        return cls.from_dict(data)
