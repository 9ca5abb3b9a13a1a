"""The run trace: the contract between the advisor loop and every visual.

Plain dataclasses that round-trip through JSON exactly (``RunTrace.from_json(t.to_json()) == t``). Nothing
secret goes in: the loop records tool names, arguments, results, token counts, retries and timings, never API
keys, URLs with credentials or HTTP headers.

Iterations are numbered from 1 (``Iteration.number``), as the CLI, the widgets and the docs show them.
Trace version 1 stored a 0-based ``index`` instead; :meth:`RunTrace.from_dict` reads such traces and turns
``index`` into ``number = index + 1``.

A conversation (``ToolSearchAdvisor.chat``) is one trace too: its iterations are numbered across the whole
conversation and each carries the ``turn`` (user message) it belongs to; ``RunTrace.turns`` says per turn
what the user wrote, what chat memory dropped or rewrote before it, which found tools the turn started with
and which it had lost. A single request has no turns (``turns == []``, ``Iteration.turn is None``); traces
written before version 3 load as such (and before version 4, with no deferred tools).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, get_args

from toolsearch_lab.jsonlimits import loads_checked, non_finite_as_null

# 2: Iteration.number (1-based) replaces index; Iteration.retries. 3: turns (RunTrace.turns, Iteration.turn,
# StepOutcome.turn, SessionEvent.turn). 4: Iteration.deferred.
TRACE_VERSION = 4
# A trace nests about 6 levels (trace, iterations, tool calls, tokens, api usage); deeper text is not ours.
MAX_TRACE_DEPTH = 64


@dataclass(frozen=True)
class RequestTokens:
    """Prompt tokens of one chat-completions request, split by where they come from (what
    :meth:`toolsearch_lab.tokens.TokenCounter.count_request` returns, and what a trace keeps per request).

    ``system``: role, name and content of system/developer messages. ``messages``: the same for every other
    message, plus function names and arguments of assistant tool calls. ``tools``: the tool definitions in
    OpenAI's hidden format, including its per-function/property overheads and the once-per-request block end.
    ``framing``: per-message wrapping (3 each, +1 per name) and the 3-token reply priming.
    ``total`` = the sum = estimated ``usage.prompt_tokens``.
    """

    system: int = 0
    messages: int = 0
    tools: int = 0
    framing: int = 0
    total: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


TokenCount = RequestTokens  # the name the trace and the UI used first


@dataclass
class SearchHit:
    name: str
    score: float | None


@dataclass
class SearchRecord:
    """One toolSearchTool call: what was asked and what came back."""

    call_id: str
    query: str | None
    max_results: int | None
    category_filter: str | None = None
    hits: list[SearchHit] = field(default_factory=list)
    duration_ms: float = 0.0
    error: str | None = None
    retries: list[RetryRecord] = field(default_factory=list)  # e.g. the embedder's, for a vector index
    # An index that can say "no tool matches" (the hybrid): its calibrated confidence that some tool fits,
    # whether it returned nothing for that reason, and the evidence in words.
    confidence: float | None = None
    abstained: bool = False
    confidence_reason: str | None = None

    @property
    def names(self) -> list[str]:
        return [h.name for h in self.hits]


@dataclass
class ToolCallRecord:
    """One tool call the model made and how the loop answered it.

    ``kind`` is "search" (toolSearchTool), "tool" (an exposed tool ran) or "rejected" (not exposed,
    bad arguments, limit reached: answered with an error result instead of running anything).
    ``flags`` mark a result that looks like injected instructions or had a secret hidden
    (:mod:`toolsearch_lab.loop.result_flags`); the result itself is what the model read.
    """

    call_id: str
    name: str
    arguments: str
    kind: str
    result: str = ""
    error: str | None = None
    duration_ms: float = 0.0
    flags: list[str] = field(default_factory=list)


@dataclass
class RetryRecord:
    """One failed model request that was retried: which attempt failed (1 = the first request), the HTTP
    status (None when no answer came: timeout, connection error), the error class and how long the model
    waited before the next attempt (from ``Retry-After`` when the server sent one)."""

    attempt: int
    status: int | None
    error: str
    wait_s: float
    message: str = ""


_journal = threading.local()


@contextmanager
def recording_retries() -> Iterator[list[RetryRecord]]:
    """Collect the :class:`RetryRecord` s that code below the loop notes (:func:`note_retry`) in this
    thread while the block runs: the embedder's HTTP retries during a search, which happen deep inside an
    index that knows nothing of traces. Nested blocks also pass their records to the outer one."""
    outer = getattr(_journal, "records", None)
    records: list[RetryRecord] = []
    _journal.records = records
    try:
        yield records
    finally:
        _journal.records = outer
        if outer is not None:
            outer.extend(records)


def note_retry(record: RetryRecord) -> None:
    """Hand a retry to the innermost :func:`recording_retries` block of this thread (none: dropped)."""
    records = getattr(_journal, "records", None)
    if records is not None:
        records.append(record)


@dataclass
class IterationTokens:
    tool_search: RequestTokens = field(default_factory=RequestTokens)
    baseline: RequestTokens = field(default_factory=RequestTokens)
    completion: int = 0
    api_usage: dict | None = None  # what the API's `usage` said, beside our own count


@dataclass
class Iteration:
    """One model request of a run and what the loop did with its answer. ``number`` counts from 1."""

    number: int
    exposed_tools: list[str]
    newly_exposed: list[str]
    accumulated: list[str]  # every tool discovered so far in this run, in discovery order
    assistant_content: str | None = None
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    searches: list[SearchRecord] = field(default_factory=list)
    discovered: list[str] = field(default_factory=list)  # registered tools first returned in this iteration
    errors: list[str] = field(default_factory=list)
    tokens: IterationTokens = field(default_factory=IterationTokens)
    model_ms: float = 0.0
    duration_ms: float = 0.0
    retries: list[RetryRecord] = field(default_factory=list)  # failed model requests retried in this step
    turn: int | None = None  # the conversation turn (user message) this request belongs to; None: no turns
    # Tools the request sent deferred (``defer_loading``; Claude Code's deferred tools): named to the API but
    # not in the model's context until a search loads them. Replayed runs fill it; the loop's own strategies
    # keep deferred tools out of the request, so their iterations leave it empty.
    deferred: list[str] = field(default_factory=list)

    @property
    def index(self) -> int:
        """Position in ``RunTrace.iterations`` (0-based). Show ``number`` to people."""
        return self.number - 1


SessionEventKind = Literal["evicted", "indexed", "reused", "reindexed", "evicted_during_run"]
# Why it happened. Views read this, never the words of ``detail`` (which are for people and may change).
SessionReason = Literal[
    "first_request",  # indexed: the session had no index yet
    "catalog_changed",  # indexed: the registered tools' fingerprint changed
    "after_eviction",  # indexed, reindexed or evicted_during_run: the session had been evicted
    "fingerprint_unchanged",  # reused
    "eviction_strategy",  # evicted: the eviction strategy chose it
    "evict_session",  # evicted: by evict_session() (a logout)
    "reindexed_by_other_request",  # reindexed: another request of the session indexed the same tools
]


@dataclass
class SessionEvent:
    """What happened to the session's index at the start of a user request.

    kind: "evicted" (cleared by the eviction strategy or evict_session), "indexed" (fingerprint new or
    changed: clear + re-index) or "reused" (fingerprint unchanged: no work). During a run, before a
    search: "reindexed" (the session had been evicted since the run started and was indexed again) or
    "evicted_during_run" (evicted, and left so: Spring's behaviour, ``protect_running_sessions=False``).
    ``reason`` says why (:data:`SessionReason`; None only in traces written before it existed);
    ``detail`` says it in words. ``iteration`` is the iteration number of a mid-run event (None for the
    start of the request).
    """

    kind: SessionEventKind
    session_id: str
    fingerprint: str | None = None
    tool_count: int = 0
    detail: str = ""
    iteration: int | None = None
    reason: SessionReason | None = None
    turn: int | None = None  # the conversation turn whose request it happened in (None: no turns)

    def __post_init__(self) -> None:
        if self.kind not in get_args(SessionEventKind):
            raise ValueError(
                f"SessionEvent.kind must be one of {get_args(SessionEventKind)}, got {self.kind!r:.60}"
            )
        if self.reason is not None and self.reason not in get_args(SessionReason):
            allowed = get_args(SessionReason)
            raise ValueError(f"SessionEvent.reason must be one of {allowed} or None, got {self.reason!r:.60}")


@dataclass
class StepOutcome:
    """How one step of a graded scenario went: the tools it expected (``also_accepted`` would do as well;
    none for a request no tool serves), the tools that ran for it (when it failed, or when no tool serves
    it: what ran between the neighbouring successful steps)."""

    need: str
    expected: list[str]
    success: bool
    called: list[str] = field(default_factory=list)
    also_accepted: list[str] = field(default_factory=list)
    turn: int | None = None  # the conversation turn the step was asked in (None: a single request)


@dataclass
class MemoryRecord:
    """What chat memory did when a turn's user message arrived (with the previous turn's messages): how many
    messages it was given and kept, a one-line description of each message it dropped (``window``) or
    rewrote into its summary (``compact``), the summary it wrote, and the tool names of the toolSearchTool
    results that left the conversation with them (what ``accumulation_source="history"`` can no longer read).
    """

    memory: str  # "full", "window:6", "compact:8"
    given: int
    kept: int
    dropped: list[str] = field(default_factory=list)
    summarised: list[str] = field(default_factory=list)
    summary: str | None = None
    search_results_removed: list[str] = field(default_factory=list)


@dataclass
class TurnRecord:
    """One user message of a conversation and how its turn went. ``carried``: found tools the turn's first
    request exposed from earlier turns; ``lost``: tools the same accumulation rule would have carried from
    everything found so far, but the turn did not have (the discovered tools memory took away)."""

    number: int
    user_message: str
    memory: MemoryRecord | None = None
    carried: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    stop_reason: str = "running"
    answer: str | None = None


@dataclass
class RunTrace:
    session_id: str
    model: str
    index: str
    user_request: str
    catalog_size: int
    config: dict = field(default_factory=dict)
    session_events: list[SessionEvent] = field(default_factory=list)
    iterations: list[Iteration] = field(default_factory=list)
    final_answer: str | None = None
    stop_reason: str = (
        "running"  # answered | max_calls_per_tool | max_total_tool_calls | max_iterations | error
    )
    errors: list[str] = field(default_factory=list)
    encoding: str = "o200k_base"
    version: int = TRACE_VERSION
    steps: list[StepOutcome] = field(default_factory=list)  # filled when a scenario run is graded
    turns: list[TurnRecord] = field(default_factory=list)  # a conversation's user turns (none: one request)

    # ---- derived views (not stored) -------------------------------------------------------------
    def tokens_total(self) -> dict:
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
            "prompt_saved_pct": round(100.0 * (1 - prompt_ts / prompt_base), 2) if prompt_base else 0.0,
        }

    def searches(self) -> list[SearchRecord]:
        return [s for it in self.iterations for s in it.searches]

    def step_success_rate(self) -> float | None:
        """Share of graded steps that succeeded (None when the run was not graded step by step)."""
        return sum(1 for s in self.steps if s.success) / len(self.steps) if self.steps else None

    def called_tools(self) -> list[str]:
        """Names of tools that really ran, in order (searches and rejected calls excluded)."""
        return [c.name for it in self.iterations for c in it.tool_calls if c.kind == "tool"]

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

    def turns_summary(self) -> list[dict]:
        """Per turn: the user message, requests, prompt tokens, what memory did and the tools carried/lost."""
        out = []
        for record in self.turns:
            part = self.turn_trace(record.number)
            memory = record.memory
            out.append(
                {
                    "turn": record.number,
                    "user_message": record.user_message,
                    "requests": len(part.iterations),
                    "prompt_tokens": sum(it.tokens.tool_search.total for it in part.iterations),
                    "called_tools": part.called_tools(),
                    "carried": record.carried,
                    "lost": record.lost,
                    "memory": None if memory is None else asdict(memory),
                    "stop_reason": record.stop_reason,
                }
            )
        return out

    def summary(self) -> dict:
        out = self._summary()
        if self.turns:
            out["turns"] = self.turns_summary()
        return out

    def _summary(self) -> dict:
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
    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        """The trace as strict JSON. A float that is not finite (a NaN or infinite search score from a
        broken index, say) is written as ``null``, the trace's "no value" (``SearchHit.score`` None means
        "the index gave no score"): ``NaN`` and ``Infinity`` are not JSON, and a file holding them cannot
        be read by most JSON readers. So ``from_json(t.to_json()) == t`` for every trace whose numbers are
        finite, and ``from_json(t.to_json()).to_json() == t.to_json()`` for every trace."""
        data = self.to_dict()
        try:
            text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
        except ValueError:  # a NaN or an infinity somewhere: see the docstring
            data = non_finite_as_null(data, MAX_TRACE_DEPTH)
            text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
        # A model can send a lone surrogate ('{"query": "\ud800"}' is valid JSON), which then sits in the
        # trace and cannot be written as UTF-8; escaping everything in that case keeps the text UTF-8-safe
        # and it still round-trips.
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False)
        return text

    def retries(self) -> list[RetryRecord]:
        """Every retry of the run: the chat model's, then each search's (the embedder's) per iteration."""
        return [
            r for it in self.iterations for r in [*it.retries, *(x for s in it.searches for x in s.retries)]
        ]

    @classmethod
    def from_dict(cls, data: dict) -> RunTrace:
        return _build(cls, _upgrade(data), "trace")

    @classmethod
    def from_json(cls, text: str) -> RunTrace:
        if not isinstance(text, (str, bytes, bytearray)):
            raise ValueError(f"RunTrace.from_json: expected JSON text, got {type(text).__name__}")
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8", errors="replace")
        try:
            data = loads_checked(text, "RunTrace.from_json: the text", MAX_TRACE_DEPTH)
        except json.JSONDecodeError as exc:
            raise ValueError(f"RunTrace.from_json: not valid JSON ({exc})") from None
        return cls.from_dict(data)


# Nested dataclass fields, so from_dict can rebuild the tree without a framework.
_NESTED: dict[tuple[type, str], type] = {
    (RunTrace, "session_events"): SessionEvent,
    (RunTrace, "iterations"): Iteration,
    (RunTrace, "steps"): StepOutcome,
    (RunTrace, "turns"): TurnRecord,
    (TurnRecord, "memory"): MemoryRecord,
    (Iteration, "tool_calls"): ToolCallRecord,
    (Iteration, "searches"): SearchRecord,
    (Iteration, "tokens"): IterationTokens,
    (Iteration, "retries"): RetryRecord,
    (SearchRecord, "hits"): SearchHit,
    (SearchRecord, "retries"): RetryRecord,
    (IterationTokens, "tool_search"): RequestTokens,
    (IterationTokens, "baseline"): RequestTokens,
}
_OPTIONAL = {(TurnRecord, "memory")}  # nested fields that may be null


def _upgrade(data: Any) -> Any:
    """A version-1 trace (0-based ``Iteration.index``) in the current shape; other input is left as is.
    Versions 2 and 3 need nothing: the fields versions 3 and 4 added (turns, ``Iteration.deferred``)
    default to empty."""
    if (
        not isinstance(data, dict)
        or data.get("version", 1) != 1
        or not isinstance(data.get("iterations"), list)
    ):
        return data
    iterations = []
    for it in data["iterations"]:
        if isinstance(it, dict) and "index" in it and "number" not in it and isinstance(it["index"], int):
            it = {**{k: v for k, v in it.items() if k != "index"}, "number": it["index"] + 1}
        iterations.append(it)
    return {**data, "iterations": iterations, "version": TRACE_VERSION}


def _build(cls: type, data: Any, where: str):
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object for {cls.__name__}, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)} for {cls.__name__}")
    kwargs = {}
    for name, value in data.items():
        sub = _NESTED.get((cls, name))
        if sub is None or (value is None and (cls, name) in _OPTIONAL):
            kwargs[name] = value
        elif isinstance(value, list):
            kwargs[name] = [_build(sub, v, f"{where}.{name}[{i}]") for i, v in enumerate(value)]
        else:
            kwargs[name] = _build(sub, value, f"{where}.{name}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None
