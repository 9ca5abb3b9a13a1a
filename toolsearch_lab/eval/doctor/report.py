"""The doctor's report: plain dataclasses that round-trip through JSON (``to_json`` / ``from_json``).

Everything a view needs is in here as data (numbers, names, strings), so a report saved by the CLI can be
re-opened in a notebook and drawn by :class:`toolsearch_lab.ui.doctor.CatalogDoctor` without the catalog.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Union

SEVERITIES = ("error", "warning", "info")
# The findings a better description text fixes (parameter descriptions and names are separate fixes).
DESCRIPTION_KINDS = (
    "blank-description",
    "short-description",
    "name-echo",
    "docstring-leak",
    "duplicate-description",
)
# Probe kinds written the way users ask (see findability.derive_probes); the others use the tool's own words.
USER_PROBE_KINDS = ("request", "task")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 tool"``, ``"2 tools"`` (``many``: an irregular plural)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


@dataclass
class Finding:
    """One thing to fix. ``problem`` says what is wrong, ``fix`` what to change; ``tools`` lists every tool
    involved (both of a pair, a whole group of duplicates) and ``tool`` the first of them ("" for the catalog
    as a whole). ``impact`` (0-1) orders findings of the same severity: the measured share of the tool's
    search probes or of the catalog's tokens the defect affects, weighted by how directly it hurts."""

    severity: str
    kind: str
    tool: str
    problem: str
    fix: str
    impact: float
    tools: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolCost:
    """What one tool definition costs. ``tokens``: estimated prompt tokens per encoding (what the model
    reads); ``json_tokens``: exact tokens of its compact JSON definition (what you send). The parts are in
    the first encoding and overlap (an enum inside a nested object counts in both); ``reasons`` explains a
    heavy tool."""

    name: str
    tokens: dict[str, int]
    json_tokens: dict[str, int]
    description_tokens: int
    enum_tokens: int
    nested_tokens: int
    parameter_description_tokens: int
    parameters: int
    reasons: list[str] = field(default_factory=list)


@dataclass
class CostReport:
    """Token costs: ``total`` is every tool sent in one request (per encoding, including the once-per-request
    end of the tools block); ``tools`` is heaviest first in the first encoding."""

    encodings: list[str]
    total: dict[str, int]
    json_total: dict[str, int]
    median_tool: int
    tools: list[ToolCost]


@dataclass
class QueryRank:
    """One probe: a query derived from the tool's own text (``kind`` is "description", "name" or
    "parameters"), the 1-based rank the tool came back at with each index (None: not within the searched
    depth), and the tools each index ranked above it (at most k)."""

    kind: str
    query: str
    ranks: dict[str, int | None]
    above: dict[str, list[str]]


@dataclass
class ToolFindability:
    """All probes of one tool. ``score`` is the share of its own-words (query, index) probes (``queries``)
    that found it in the top k; ``user_queries`` are the probes written the way users ask
    (``USER_PROBE_KINDS``), and ``user_score`` their share."""

    name: str
    score: float
    best_rank: int | None
    queries: list[QueryRank]
    user_queries: list[QueryRank] = field(default_factory=list)
    user_score: float | None = None


@dataclass
class IndexScore:
    """How one index did on the own-words probes of the catalog: ``found_at_k`` is the share of probes whose
    tool came back in the top k, ``mrr`` the mean reciprocal rank within the searched depth;
    ``user_found_at_k`` the share for the ``user_probes`` written the way users ask (None: none made)."""

    index: str
    found_at_k: float
    mrr: float
    probes: int
    tools_never_found: int
    seconds: float
    user_found_at_k: float | None = None
    user_probes: int = 0
    # Every probe (own-words and user-style): the share whose tool is in the top k, for k = 1, 2, ...
    # (the maxResults advice), and the share the index returned no tools for because it judged that none
    # fits (None: an index that never abstains).
    hit_at: list[float] = field(default_factory=list)
    abstained: float | None = None
    # Everyday off-topic requests (``OFF_TOPIC_PROBES``): the share the index returned no tools for.
    off_topic_empty: float | None = None


@dataclass
class ConfusablePair:
    """Two tools a search mixes up. ``a_swapped_to_b``: probes of ``a`` (any kind, any index) that returned
    ``b`` first, and the other way round; ``a_lost_to_b``: probes of ``a`` where ``b`` ranked above ``a``
    within the top k; ``similarity``: cosine of their description vectors (None without an embedder; shown,
    never a signal by itself); ``word_overlap``: Jaccard overlap of their name and description words;
    ``only_a`` / ``only_b``: the words that tell them apart; ``signals``: which tests flagged the pair
    ("swapped", "words"; see ``findability.confusable_pairs``)."""

    a: str
    b: str
    a_lost_to_b: int
    b_lost_to_a: int
    similarity: float | None
    word_overlap: float
    only_a: list[str]
    only_b: list[str]
    signals: list[str] = field(default_factory=list)
    a_swapped_to_b: int = 0
    b_swapped_to_a: int = 0


@dataclass
class Payoff:
    """Tokens per task with and without tool search, in one encoding.

    A task makes ``calls_per_task`` model calls when every tool is sent (each carries ``catalog_tokens``).
    With tool search it makes ``searches_per_task`` more; every call carries ``search_overhead_tokens``
    (the toolSearchTool definition, the system-message suffix and the tools block end) and the calls after
    a search also carry the tools it found (``discovered_tokens`` for ``max_results`` tools of average cost;
    all found so far when ``accumulation``). Both ways every call carries the conversation so far: the calls
    and their results (``result_tokens`` each) and the searches and what they found (``doctor.payoff``).
    ``break_even_calls`` is the fewest calls per task for which search is cheaper (None: never within 64);
    ``pays_off_up_to_calls`` the most (None: still cheaper at 64), since the conversation the extra requests
    carry, and accumulated tools, grow with the task; ``break_even_tools`` the catalog size, at this
    average tool cost, from which search is cheaper at ``calls_per_task``; ``saved_share`` the saving as a
    share of ``tokens_per_task_all`` (the verdict rule is in ``doctor.payoff``); ``search_every_call``: the
    searches were not given, so a task of n calls makes n - 1. ``bill_all_usd`` / ``bill_search_usd``: the
    task's bill both ways at the price of ``priced_as``, prompts with that provider's prompt caching (the
    repeated all-tools list is mostly served from the cache) and the model's replies (one more per search);
    ``bill_saved_share`` the share of the bill search saves ("" / 0: not billed)."""

    encoding: str
    catalog_tokens: int
    meta_tool_tokens: int
    suffix_tokens: int
    search_overhead_tokens: int
    mean_tool_tokens: float
    max_results: int
    discovered_tokens: int
    calls_per_task: int
    searches_per_task: int
    tokens_per_task_all: int
    tokens_per_task_search: int
    saved_per_task: int
    break_even_calls: int | None
    break_even_tools: int | None
    saved_share: float = 0.0
    search_every_call: bool = False
    priced_as: str = ""
    bill_all_usd: float = 0.0
    bill_search_usd: float = 0.0
    bill_saved_share: float = 0.0
    result_tokens: int = 0
    accumulation: bool = False
    pays_off_up_to_calls: int | None = None


@dataclass
class Recommendation:
    """Whether to use tool search, and how; ``reasons`` holds one sentence per choice (keys
    "tool_search", "index", "max_results", "accumulation")."""

    use_tool_search: bool
    index: str
    max_results: int
    accumulation: bool
    reasons: dict[str, str]

    @property
    def verdict(self) -> str:
        """The advice in one line, the deciding reason first: "yes: saves ..." or "no: <why not>"."""
        return f"{'yes' if self.use_tool_search else 'no'}: {self.reasons['tool_search']}"


@dataclass
class DoctorReport:
    """Everything :func:`~toolsearch_lab.eval.doctor.diagnose` found about one catalog."""

    source: str
    tools: int
    k: int
    depth: int
    indexes: list[str]
    cost: CostReport
    scores: list[IndexScore]
    findability: list[ToolFindability]
    confusable: list[ConfusablePair]
    payoff: Payoff
    recommendation: Recommendation
    findings: list[Finding]
    servers: dict[str, str] = field(default_factory=dict)  # tool -> server, when several were merged
    # Servers whose tools duplicate another server's: {server to drop: the server that covers it}.
    duplicate_servers: dict[str, str] = field(default_factory=dict)
    skipped_indexes: dict[str, str] = field(default_factory=dict)  # index kind -> why it was not probed
    failed_servers: dict[str, str] = field(default_factory=dict)  # server -> why it did not start
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """The findability score: the share of all own-words probes (every index) that found their own
        tool in the top k."""
        probes = sum(s.probes for s in self.scores)
        return sum(s.found_at_k * s.probes for s in self.scores) / probes if probes else 0.0

    @property
    def findable_range(self) -> tuple[float, float]:
        """What share of plain requests to expect in the top k with the recommended index. The high end is
        the best of its own-words and user-style probes' shares. The low end is the lowest share any probed
        index has on either kind: the probes are made from the tools' own words, which a strong index
        matches whatever the wording of a user who does not know them (on mcp-server-git the fused indexes
        find every user-style probe, and 13 of 15 plain requests), so the spread between the indexes is the
        honest width. A single value with one index and no user-style probe."""
        chosen = next((s for s in self.scores if s.index == self.recommendation.index), self.scores[0])
        shares = [v for s in self.scores for v in (s.found_at_k, s.user_found_at_k) if v is not None]
        user = chosen.found_at_k if chosen.user_found_at_k is None else chosen.user_found_at_k
        return min(shares), max(user, chosen.found_at_k)

    def by_severity(self, severity: str) -> list[Finding]:
        if severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {severity!r}")
        return [f for f in self.findings if f.severity == severity]

    def worst_descriptions(self, n: int = 2) -> list[str]:
        """The ``n`` tools whose descriptions to fix first: the first distinct tools of the ranked findings
        about description text (``DESCRIPTION_KINDS``)."""
        names: list[str] = []
        for f in self.findings:
            for name in f.tools if f.kind in DESCRIPTION_KINDS else ():
                if name not in names and len(names) < n:
                    names.append(name)
        return names

    def findings_for(self, tool: str) -> list[Finding]:
        return [f for f in self.findings if tool in f.tools or f.tool == tool]

    def tool(self, name: str) -> ToolFindability:
        for item in self.findability:
            if item.name == name:
                return item
        raise KeyError(f"no tool named {name!r} in this report ({self.tools} tools from {self.source!r})")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> DoctorReport:
        return _build(cls, data, "report")

    @classmethod
    def from_json(cls, text: str) -> DoctorReport:
        return cls.from_dict(json.loads(text))


def _build(kind: Any, value: Any, where: str) -> Any:
    """Rebuild ``value`` (parsed JSON) as the type ``kind`` from the dataclass annotations above."""
    origin = typing.get_origin(kind)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object for {kind.__name__}, got {type(value).__name__}")
        hints = typing.get_type_hints(kind)
        names = {f.name for f in dataclasses.fields(kind)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown} for {kind.__name__}")
        args = {k: _build(hints[k], v, f"{where}.{k}") for k, v in value.items()}
        try:
            return kind(**args)
        except TypeError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if origin in (Union, types.UnionType):
        options = typing.get_args(kind)
        if value is None and type(None) in options:
            return None
        return _build(next(o for o in options if o is not type(None)), value, where)
    if origin is list:
        (item,) = typing.get_args(kind)
        return [_build(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        _, item = typing.get_args(kind)
        return {k: _build(item, v, f"{where}.{k}") for k, v in value.items()}
    if kind is float and isinstance(value, int):
        return float(value)
    return value
