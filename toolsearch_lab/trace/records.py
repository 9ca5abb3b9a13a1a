"""What one model request of a run holds: its token counts, its searches, its tool calls (and why a call was
answered with an error result), the retries of failed requests, and the :class:`Iteration` that gathers them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Literal, get_args

__all__ = [
    "CallKind",
    "FailureKind",
    "REFUSALS",
    "Iteration",
    "IterationTokens",
    "RequestTokens",
    "RetryRecord",
    "SearchHit",
    "SearchRecord",
    "TokenCount",
    "ToolCallRecord",
    "check_choice",
    "note_retry",
    "recording_retries",
]


def check_choice(owner: str, name: str, value: Any, choices: Any, optional: bool = False) -> None:
    """Refuse ``value`` for field ``owner.name`` unless it is one of the ``Literal`` type ``choices`` (or
    None, when ``optional``): what the trace's typed fields hold, whether made in code or read from JSON."""
    allowed = get_args(choices)
    if value in allowed or (optional and value is None):
        return
    either = " or None" if optional else ""
    raise ValueError(f"{owner}.{name} must be one of {allowed}{either}, got {value!r:.60}")


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
class RetryRecord:
    """One failed model request that was retried: which attempt failed (1 = the first request), the HTTP
    status (None when no answer came: timeout, connection error), the error class and how long the model
    waited before the next attempt (from ``Retry-After`` when the server sent one)."""

    attempt: int
    status: int | None
    error: str
    wait_s: float
    message: str = ""


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


# "search": toolSearchTool (or a replayed run's own search tool); "tool": an exposed tool ran (or was called,
# in a replayed run); "rejected": not run, answered with an error result (see FailureKind).
CallKind = Literal["search", "tool", "rejected"]


class FailureKind(str, Enum):
    """Why a tool call was answered with an error result, recorded by whoever made the result (the loop, or
    a transcript reader), so that views and checks never read it off the message's words, which are for
    people (and for the model) and may change."""

    NOT_EXPOSED = "not_exposed"  # the request did not expose the tool (not discovered yet, or unknown)
    BAD_ARGUMENTS = "bad_arguments"  # the arguments are not a JSON object
    NO_IMPLEMENTATION = "no_implementation"  # the catalog has the tool's definition but no function
    LIMIT_REACHED = "limit_reached"  # max_calls_per_tool or max_total_tool_calls: the turn's calls refused
    REPEATED_SEARCH = "repeated_search"  # the runaway-loop guard: the same query searched too often
    SEARCH_FAILED = "search_failed"  # the search refused its arguments, or the index (the provider) failed
    TOOL_RAISED = "tool_raised"  # the tool's function raised
    TOOL_TIMEOUT = "tool_timeout"  # the tool gave no answer within tool_timeout
    BAD_RESULT = "bad_result"  # the tool returned something that is neither text nor JSON data
    DECLINED = "declined"  # not run: the person asked before it runs said no (ToolCallRefused)
    REFUSED = "refused"  # not run: it needed a person's yes and there was no one to ask (no terminal)
    TOOL_ERROR = "tool_error"  # a replayed run: the log marks the tool's result as an error (is_error)
    NO_RESULT = "no_result"  # a replayed run: the log holds no result for the call


# The failures that mean a person withheld their yes: the call was not run, and the run stops ("refused").
REFUSALS: frozenset[FailureKind] = frozenset({FailureKind.DECLINED, FailureKind.REFUSED})


@dataclass
class ToolCallRecord:
    """One tool call the model made and how the loop answered it.

    ``kind`` says what the call was (:data:`CallKind`). ``failure`` says why it got an error result
    (:class:`FailureKind`; None: it did not), ``error`` the same in words; a result cut to
    ``max_tool_result_chars`` has ``error`` saying so and no ``failure``. ``flags`` mark a result that looks
    like injected instructions or had a secret hidden (:mod:`toolsearch_lab.loop.result_flags`); the result
    itself is what the model read.
    """

    call_id: str
    name: str
    arguments: str
    kind: CallKind
    result: str = ""
    error: str | None = None
    duration_ms: float = 0.0
    flags: list[str] = field(default_factory=list)
    failure: FailureKind | None = None

    def __post_init__(self) -> None:
        check_choice("ToolCallRecord", "kind", self.kind, CallKind)
        if self.failure is None:
            return
        try:  # a kind read from JSON is its value
            self.failure = FailureKind(self.failure)
        except ValueError:
            known = tuple(k.value for k in FailureKind)
            raise ValueError(
                f"ToolCallRecord.failure must be one of {known} or None, got {self.failure!r:.60}"
            ) from None


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
    api_usage: dict[str, Any] | None = None  # what the API's `usage` said, beside our own count


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
