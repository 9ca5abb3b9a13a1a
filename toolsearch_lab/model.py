"""The tool model and the search contract shared by every index (Spring: ToolReference, ToolSearchRequest,
ToolSearchResponse, ToolIndex)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolsearch_lab.jsonlimits import JsonLimitError, find_non_finite

log = logging.getLogger(__name__)

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}\Z")  # \Z: "$" would accept a final "\n"
# What OpenAI and Anthropic accept as a tool name: stricter than a Tool's own rule (no '.' or ':', at most
# 64 characters). The one home of this rule: MCP import renames names outside it, the doctor flags them.
PROVIDER_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}\Z")
# Deepest nesting checked for NaN/Infinity in a Tool's schemas (the catalog loader's own limit is 100).
_MAX_TOOL_DEPTH = 100
# The meta-tool's name: models and the loop both need it, so it lives below both.
TOOL_SEARCH_TOOL_NAME = "toolSearchTool"
# The boolean hints of MCP's ToolAnnotations (spec 2025-06-18); ``title`` is its one string field.
MCP_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def provider_name_problem(name: str) -> str | None:
    """Why providers would refuse ``name`` as a tool name (:data:`PROVIDER_NAME_PATTERN`), or None."""
    if PROVIDER_NAME_PATTERN.match(name):
        return None
    if name == "" or len(name) > 64:
        return f"{len(name)} characters; providers take 1 to 64"
    bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "_-"))})
    return f"holds {', '.join(map(repr, bad))}; providers take only letters, digits, '_' and '-'"


def annotations_problem(annotations: Any) -> str | None:
    """What is wrong with MCP tool annotations (None or a JSON object: :data:`MCP_HINTS` booleans, a
    string ``title``, any other key kept as it is), or None."""
    if annotations is None:
        return None
    if not isinstance(annotations, dict):
        return f"must be a JSON object (dict) or None, got {type(annotations).__name__}"
    for key, value in annotations.items():
        if not isinstance(key, str):
            return f"keys must be strings, got {type(key).__name__} {key!r:.40}"
        if key in MCP_HINTS and not isinstance(value, bool):
            return f"{key!r} must be true or false, got {type(value).__name__} {value!r:.40}"
        if key == "title" and not isinstance(value, str):
            return f"'title' must be a string, got {type(value).__name__} {value!r:.40}"
    return None


class ToolDefinitionError(ValueError):
    """A :class:`Tool` refused one of its fields. The message names the tool (``tool 'x': ...``);
    ``problem`` holds what is wrong on its own, for a caller that names the tool its own way."""

    def __init__(self, label: str, problem: str) -> None:
        super().__init__(f"tool {label}: {problem}")
        self.problem = problem


@dataclass(frozen=True)
class Tool:
    """One tool definition as a model sees it: a name, a description and a JSON Schema for its arguments.

    ``function`` is what the advisor executes when the model calls the tool; it is not part of the
    definition, so it is left out of equality and of every export.

    ``title``, ``annotations``, ``output_schema`` and ``meta`` are MCP's own fields (``title``,
    ``annotations``, ``outputSchema`` and ``_meta`` of a ``tools/list`` entry): part of the definition, so
    they count for equality, but not for the fingerprint (names and descriptions, as in Spring), and only
    the MCP export carries them, because OpenAI and Anthropic tool definitions have no such fields.
    ``annotations`` is a JSON object whose MCP hints (:data:`MCP_HINTS`) are booleans and whose ``title``
    is a string; other keys are kept as they are. ``meta`` is any JSON object (FastMCP puts tags there).

    No NaN or Infinity may sit anywhere in the schemas, annotations or meta: JSON has neither, so such a
    Tool could not be sent or exported. The error names the path (``parameters.properties.limit.default``).
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    category: str | None = None
    function: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    title: str | None = None
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = field(default=None, repr=False)
    meta: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def read_only(self) -> bool:
        """The annotations say ``readOnlyHint: true``."""
        return (self.annotations or {}).get("readOnlyHint") is True

    @property
    def destructive(self) -> bool:
        """The annotations *declare* the tool destructive: ``destructiveHint: true`` and not read-only (MCP
        gives ``destructiveHint`` meaning only when ``readOnlyHint`` is false). The doctor's finding."""
        return (self.annotations or {}).get("destructiveHint") is True and not self.read_only

    @property
    def may_be_destructive(self) -> bool:
        """MCP's reading of the hints (ToolAnnotations, spec 2025-06-18: ``readOnlyHint`` defaults to
        false, ``destructiveHint`` to true): a tool that is not marked read-only may be destructive unless
        it says ``destructiveHint: false``. So a tool that says nothing (no annotations) may be; the
        destructive-tool policies hold these back (:mod:`toolsearch_lab.loop.policy`)."""
        return not self.read_only and (self.annotations or {}).get("destructiveHint") is not False

    def __post_init__(self) -> None:
        label = repr(self.name) if isinstance(self.name, str) else "<unnamed>"
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.match(self.name):
            raise ToolDefinitionError(
                label,
                f"field 'name' must match {TOOL_NAME_PATTERN.pattern} "
                f"(1-128 letters, digits, '_', '.', ':' or '-'), "
                f"got {label if isinstance(self.name, str) else type(self.name).__name__:.80}",
            )
        if not isinstance(self.description, str):
            raise ToolDefinitionError(
                label, f"field 'description' must be a string, got {type(self.description).__name__}"
            )
        if not isinstance(self.parameters, dict):
            raise ToolDefinitionError(
                label,
                f"field 'parameters' must be a JSON Schema object (dict), "
                f"got {type(self.parameters).__name__}",
            )
        if self.parameters.get("type") != "object":
            raise ToolDefinitionError(
                label, f'field \'parameters\' must have "type": "object", got {self.parameters.get("type")!r}'
            )
        if self.category is not None and not isinstance(self.category, str):
            raise ToolDefinitionError(
                label, f"field 'category' must be a string or None, got {type(self.category).__name__}"
            )
        if self.title is not None and not isinstance(self.title, str):
            raise ToolDefinitionError(
                label, f"field 'title' must be a string or None, got {type(self.title).__name__}"
            )
        problem = annotations_problem(self.annotations)
        if problem:
            raise ToolDefinitionError(label, f"field 'annotations': {problem}")
        if self.output_schema is not None and (
            not isinstance(self.output_schema, dict) or self.output_schema.get("type") != "object"
        ):
            got = (
                f'"type": {self.output_schema.get("type")!r}'
                if isinstance(self.output_schema, dict)
                else type(self.output_schema).__name__
            )
            raise ToolDefinitionError(
                label,
                f"field 'output_schema' must be None or a JSON Schema object with "
                f'"type": "object" (MCP outputSchema), got {got}',
            )
        if self.meta is not None and not isinstance(self.meta, dict):
            raise ToolDefinitionError(
                label, f"field 'meta' must be a JSON object (dict) or None, got {type(self.meta).__name__}"
            )
        self._check_json_numbers(label)

    def _check_json_numbers(self, label: str) -> None:
        for where, value in (
            ("parameters", self.parameters),
            ("output_schema", self.output_schema),
            ("annotations", self.annotations),
            ("meta", self.meta),
        ):
            if value is None:
                continue
            try:
                problem = find_non_finite(value, where, _MAX_TOOL_DEPTH)
            except JsonLimitError as exc:
                problem = f"{where}: {exc}"
            if problem:
                raise ToolDefinitionError(label, f"{problem} (JSON has no NaN or Infinity)")

    def definition(self) -> dict[str, Any]:
        """The OpenAI chat-completions ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolReference:
    """A search hit: the tool's name, its raw relevance score and its description (Spring's ``summary``)."""

    tool_name: str
    relevance_score: float | None
    summary: str

    def __post_init__(self) -> None:
        if self.tool_name is None:
            raise ValueError("ToolReference: tool_name is required")
        if self.summary is None:
            raise ValueError(f"ToolReference {self.tool_name!r}: summary is required")

    def to_dict(self) -> dict[str, Any]:
        # Spring serialises with NON_ABSENT: null fields are left out.
        out: dict[str, Any] = {"toolName": self.tool_name}
        if self.relevance_score is not None:
            out["relevanceScore"] = self.relevance_score
        out["summary"] = self.summary
        return out


DEFAULT_MAX_RESULTS = 10  # Spring's default for every index; each index instance may set its own


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__ must not hide the real problem
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 40 else text[:39] + "…"


def positive_int_problem(value: Any, *, allow_zero: bool = False) -> str | None:
    """What is wrong with ``value`` as an ``int`` >= 1 (>= 0 with ``allow_zero``), or None. A bool is
    refused although it is an ``int``: ``True`` as a limit is always a mistake."""
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        kind = "a non-negative integer (>= 0)" if allow_zero else "a positive integer"
        return f"must be {kind}, got {_shown(value)}"
    return None


def check_positive_int(value: Any, name: str, *, allow_zero: bool = False) -> int:
    """``value`` if :func:`positive_int_problem` finds nothing wrong with it, else a ``ValueError`` naming
    ``name``."""
    problem = positive_int_problem(value, allow_zero=allow_zero)
    if problem is not None:
        raise ValueError(f"{name} {problem}")
    return int(value)


def session_key(value: Any, *, what: str = "session_id") -> str:
    """The session rule, stated once: a session id is a non-blank ``str``, and it is used as a plain ``str``
    copy. Anything else is a ``ValueError`` naming ``what``. Other types are refused rather than converted,
    so ``1`` and ``"1"`` can never silently become the same session; a ``str`` subclass comes back as a
    plain ``str``, so it cannot forge how it compares or hashes and reach another session's tools."""
    if not isinstance(value, str):
        raise ValueError(
            f"{what} must be a non-blank string, got {type(value).__name__} {_shown(value)}; convert it "
            "yourself (e.g. str(...)) if ids that print alike really are the same session"
        )
    plain = str.__str__(value)
    if not plain.strip():
        raise ValueError(f"{what} must be a non-blank string, got {_shown(plain)}")
    return plain


@dataclass(frozen=True)
class SearchRequest:
    """One search. ``max_results`` None means "the index's own ``default_max_results``"; this is the one
    place it is validated, so every index can trust it. The session id is taken as given: a search with a
    blank or missing one gets Spring's empty response, and :class:`BaseToolIndex` keys it by
    :func:`session_key`."""

    session_id: str | None
    query: str | None
    max_results: int | None = None
    category_filter: str | None = None

    def __post_init__(self) -> None:
        if self.max_results is not None:
            check_positive_int(self.max_results, "SearchRequest.max_results (None for the index default)")


@dataclass(frozen=True)
class SearchMetadata:
    search_type: str
    query: str | None
    search_time_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"searchType": self.search_type, "query": self.query}
        if self.search_time_ms is not None:
            out["searchTimeMs"] = self.search_time_ms
        return out


@dataclass(frozen=True)
class SearchConfidence:
    """How sure an index is that some tool of the session serves the request (not part of Spring's contract:
    only an index that can answer "no tool matches" sets it). ``value`` is a calibrated probability; the
    index returned no tools when it is below ``threshold`` (None: the index never abstains), or when the
    request is a ``near_miss``: it asks for an operation no tool offers (what is missing, in words).
    ``reason`` states the evidence in words; ``rule`` why this threshold applies (a catalog's size may
    choose it); :attr:`verdict` the rule that fired."""

    value: float
    threshold: float | None
    reason: str
    near_miss: str | None = None
    rule: str | None = None

    @property
    def abstained(self) -> bool:
        return self.threshold is not None and (self.value < self.threshold or self.near_miss is not None)

    @property
    def verdict(self) -> str:
        """What the index did and the rule that made it, then the evidence: "refused: confidence 0.054
        below the threshold 0.229 for a catalog of 117 tools, over 3; best description similarity ..."."""
        if self.threshold is None:
            return f"answered: confidence {self.value:.3f}, no threshold; {self.reason}"
        if self.near_miss is not None:
            return f"refused: a near-miss, {self.near_miss}; {self.reason}"
        done, side = ("refused", "below") if self.value < self.threshold else ("answered", "at or above")
        at = f"confidence {self.value:.3f} {side} the threshold {self.threshold:.3f}"
        return f"{done}: {at}{f' for {self.rule}' if self.rule else ''}; {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        out = {
            "value": self.value,
            "threshold": self.threshold,
            "abstained": self.abstained,
            "reason": self.reason,
        }
        if self.near_miss is not None:
            out["near_miss"] = self.near_miss
        if self.rule is not None:
            out["rule"] = self.rule
        return out


@dataclass(frozen=True)
class SearchResponse:
    tool_references: list[ToolReference] = field(default_factory=list)
    total_matches: int | None = None
    metadata: SearchMetadata | None = None
    confidence: SearchConfidence | None = None  # set only by an index that can say "nothing fits"

    @property
    def tool_names(self) -> list[str]:
        return [r.tool_name for r in self.tool_references]

    @property
    def abstained(self) -> bool:
        """The index returned no tools because it judged that none fits (not because none matched)."""
        return self.confidence is not None and self.confidence.abstained

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"toolReferences": [r.to_dict() for r in self.tool_references]}
        if self.total_matches is not None:
            out["totalMatches"] = self.total_matches
        if self.metadata is not None:
            out["searchMetadata"] = self.metadata.to_dict()
        if self.confidence is not None:
            out["confidence"] = self.confidence.to_dict()
        return out


def empty_response() -> SearchResponse:
    """What Spring's indexes answer for a blank or unknown session: no refs, no count, no metadata."""
    return SearchResponse([], None, None)


@dataclass(frozen=True)
class Contribution:
    """One additive part of a score: ``value`` is what it adds, ``detail`` the inputs behind it."""

    label: str
    value: float
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "value": self.value, "detail": self.detail}


@dataclass(frozen=True)
class Explanation:
    """Why one tool scored what it did for one query, in the same terms for every index.

    ``score`` is exactly the ``relevance_score`` that ``search`` gives the tool (0.0 when it does not
    match); the ``parts`` add up to it. ``returned`` says whether ``search`` with the index's default
    ``max_results`` would return it. ``details`` holds the index's own evidence (regex spans, BM25 clauses,
    the hybrid's component hits) for views that want more than the parts.
    """

    index: str
    tool_name: str
    query: str | None
    score: float
    parts: tuple[Contribution, ...] = ()
    returned: bool = False
    rank: int | None = None
    details: Any = None

    @property
    def matched(self) -> bool:
        return self.score > 0

    def to_text(self) -> str:
        """The parts one per line, then the index's own evidence when it can render itself as text."""
        lines = [f"{self.index}: {self.tool_name} scored {self.score:.6g} for {self.query!r}"]
        lines += [
            f"  {p.value:+.6g}  {p.label}" + (f"  ({p.detail})" if p.detail else "") for p in self.parts
        ]
        details_text = getattr(self.details, "to_text", None)
        if callable(details_text):
            lines.append(details_text())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "toolName": self.tool_name,
            "query": self.query,
            "score": self.score,
            "returned": self.returned,
            "rank": self.rank,
            "parts": [p.to_dict() for p in self.parts],
        }


class NotIndexedError(KeyError, ValueError):
    """``explain`` for a session or tool name the index does not hold. A ``KeyError`` (a lookup that
    failed) and a ``ValueError`` (a bad argument), so callers catching either keep working."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@runtime_checkable
class ToolIndex(Protocol):
    """Per-session tool index. A search in one session never sees another session's tools.

    ``default_max_results`` is how many results a request with ``max_results=None`` gets; ``search_many``
    answers several requests (equal to calling ``search`` on each); ``explain`` says why one tool scored
    what it did, with ``score`` equal to the ``relevance_score`` that ``search`` gives it."""

    default_max_results: int

    def index_tool(self, session_id: str, tool: Tool) -> None: ...

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None: ...

    def search(self, request: SearchRequest) -> SearchResponse: ...

    def search_many(self, requests: Sequence[SearchRequest]) -> list[SearchResponse]: ...

    def explain(self, session_id: str, query: str, tool_name: str) -> Explanation: ...

    def clear_index(self, session_id: str) -> None: ...
