"""``diagnose(catalog)``: cost, findability, confusable pairs, description quality and payoff in a report."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from toolsearch_lab.eval.doctor.cost import catalog_cost, cost_findings
from toolsearch_lab.eval.doctor.deferral import deferral_findings, sent_document
from toolsearch_lab.eval.doctor.findability import (
    DescriptionVectors,
    Searched,
    assemble,
    confusable_pairs,
    derive_probes,
    embedder_of,
    findability_findings,
    search_probes,
)
from toolsearch_lab.eval.doctor.inputs import CatalogLike, resolve
from toolsearch_lab.eval.doctor.payoff import (
    RESULT_TOKENS,
    payoff,
    payoff_finding,
    pick_index,
    pick_max_results,
    recommend,
)
from toolsearch_lab.eval.doctor.poisoning import poisoning_findings
from toolsearch_lab.eval.doctor.quality import description_findings, name_findings
from toolsearch_lab.eval.doctor.report import (
    SEVERITIES,
    ConfusablePair,
    CostReport,
    DoctorReport,
    Finding,
    IndexScore,
    ToolFindability,
)
from toolsearch_lab.eval.doctor.servers import duplicate_server_findings, duplicate_servers
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.model import Tool, check_positive_int
from toolsearch_lab.tokens import ENCODINGS, TokenCounter

# Every index kind: the embedding kinds share one embedding of each probe (the embedding cache), so all
# five take about twice as long as the two keyword ones alone (benchmarks/doctor_speed.py).
DEFAULT_INDEXES = INDEX_KINDS
LARGE_CATALOG = 1_000  # above this many tools the default leaves out SKIPPED_WHEN_LARGE, and says so
SKIPPED_WHEN_LARGE = ("learned",)
DEFAULT_ENCODINGS = ("o200k_base", "cl100k_base")
SIMILARITY_THRESHOLD = 0.9


def diagnose(
    catalog: CatalogLike,
    indexes: Sequence[str] | Mapping[str, Any] = DEFAULT_INDEXES,
    k: int = 5,
    *,
    encodings: Sequence[str] = DEFAULT_ENCODINGS,
    calls_per_task: int = 4,
    searches_per_task: int | None = None,
    result_tokens: int = RESULT_TOKENS,
    similarity_threshold: float = SIMILARITY_THRESHOLD,
    progress: bool = False,
    sent: Sequence[Any] | None = None,
) -> DoctorReport:
    """Check a catalog: what it costs, whether each tool can be found, which tools get mixed up, what is
    wrong with its descriptions and names, and whether tool search pays off (see the package docstring).

    ``catalog``: anything :func:`~toolsearch_lab.eval.doctor.inputs.resolve` accepts (a shipped name, a JSON
    path, a ToolCatalog, Tools or functions, or ``{server: catalog}`` to check several servers merged).
    ``searches_per_task``: the searches a task makes; None (default) is one before each tool call but
    the last (the final answer), as Spring's loop searches whenever a step needs a tool it has not found.
    ``result_tokens``: the size of a typical tool result, which every later request carries again (a
    search adds requests, so it adds carried results; default 100 tokens, a short result).
    ``indexes``: index kinds for :func:`~toolsearch_lab.index.factory.make_index`, or ``{label: index}`` with
    ready-made indexes. ``k``: a probe succeeds when its tool is in the top k. ``progress``: a tqdm bar on
    stderr. ``sent``: the tools as your requests send them (tools arrays or request bodies, Anthropic's or
    OpenAI's), checked for deferral that saves no billed tokens or is refused
    (:mod:`~toolsearch_lab.eval.doctor.deferral`); by default the catalog itself when it is a JSON file or
    parsed JSON. Findings come ranked: errors first, then by impact.
    """
    _check_arguments(k, encodings, calls_per_task, searches_per_task, similarity_threshold)
    check_positive_int(result_tokens, "diagnose: result_tokens", allow_zero=True)
    timings: dict[str, float] = {}
    with _stage(timings, "load"):
        resolved = resolve(catalog)
    tools = resolved.tools
    skipped: dict[str, str] = {}
    if indexes is DEFAULT_INDEXES and len(tools) > LARGE_CATALOG:
        indexes = tuple(k for k in DEFAULT_INDEXES if k not in SKIPPED_WHEN_LARGE)
        skipped = dict.fromkeys(SKIPPED_WHEN_LARGE, f"not probed: above {LARGE_CATALOG:,} tools its features "
                                "cost probes x tools x 17 numbers and it ranks from the hybrid's signals; "
                                "pass it in indexes= to include it")  # fmt: skip
    built = _build_indexes(indexes)
    counters = [TokenCounter(e) for e in dict.fromkeys(encodings)]
    duplicates = duplicate_servers(tools, resolved.servers, resolved.originals)
    m = _measure(tools, built, counters, k, similarity_threshold, _bar(progress, resolved.source), timings)
    pairs = _without_twin_copies(m.pairs, resolved.servers, resolved.originals, duplicates)
    index_choice = pick_index(m.scores, m.findability, k)
    chosen = next(s for s in m.scores if s.index == index_choice[0])
    max_results = pick_max_results(chosen, pairs, k)
    pay = payoff(
        m.cost, counters[0], max_results[0], calls_per_task, searches_per_task, tools,
        result_tokens=result_tokens,
    )  # fmt: skip
    rec = recommend(index_choice, max_results, pay, len(tools))
    rec.reasons["abstention"] = abstention_reason(chosen, m.scores)
    quality = _without_twin_findings(
        description_findings(tools, counters[0]) + name_findings(tools), resolved.servers, duplicates
    )
    blank = {f.tool for f in quality if f.kind == "blank-description"}
    documents = [d for d in [sent_document(catalog)] if d is not None] if sent is None else list(sent)
    findings = (
        resolved.findings
        + deferral_findings(documents)
        + quality
        + findability_findings(m.findability, pairs, k, blank, similarity_threshold)
        + duplicate_server_findings(tools, resolved.servers, duplicates)
        + cost_findings(m.cost)
        + destructive_findings(tools)
        + poisoning_findings(m.findability, tools, list(built), k)
        + [payoff_finding(pay, rec, len(tools))]
    )
    return DoctorReport(
        source=resolved.source,
        tools=len(tools),
        k=k,
        depth=m.depth,
        indexes=list(built),
        skipped_indexes=skipped,
        cost=m.cost,
        scores=m.scores,
        findability=sorted(m.findability, key=lambda f: (f.score, f.name)),
        confusable=pairs,
        payoff=pay,
        recommendation=rec,
        findings=rank_findings(findings, {f.name: f.score for f in m.findability}),
        servers=resolved.servers,
        duplicate_servers=duplicates,
        failed_servers=resolved.failed,
        seconds={stage: round(s, 3) for stage, s in timings.items()},
    )


class _Measured(NamedTuple):
    cost: CostReport
    findability: list[ToolFindability]
    scores: list[IndexScore]
    pairs: list[ConfusablePair]
    depth: int


def _measure(
    tools: list[Tool],
    built: dict[str, Any],
    counters: list[TokenCounter],
    k: int,
    threshold: float,
    bar: Callable[[int], AbstractContextManager[Callable[[int], None]]],
    timings: dict[str, float],
) -> _Measured:
    """The expensive part: token costs, every probe through every index, and the confusable pairs."""
    probes = [p for t in tools for p in derive_probes(t)]
    off_topic = off_topic_probes()
    depth = max(2 * k, 10)  # deep enough to see the tools just below the top k
    with bar(len(tools) + (len(probes) + len(off_topic)) * len(built)) as tick:
        with _stage(timings, "cost"):
            cost = catalog_cost(tools, counters, tick)
        results, empty = {}, {}
        for label, index in built.items():
            with _stage(timings, label):
                searched = search_probes(index, tools, [p.query for p in probes] + off_topic, depth, tick)
            abstained = searched.abstained[: len(probes)] if searched.abstained is not None else None
            results[label] = Searched(searched.names[: len(probes)], abstained)
            answers = searched.names[len(probes) :]
            empty[label] = sum(1 for names in answers if not names) / max(len(off_topic), 1)
    findability, scores, rivalry = assemble(probes, results, k, timings)
    scores = [replace(s, off_topic_empty=round(empty[s.index], 4)) for s in scores]
    embedder = next((e for e in map(embedder_of, built.values()) if e is not None), None)
    with _stage(timings, "pairs"):
        vectors = DescriptionVectors(tools, embedder) if embedder is not None else None
        pairs = confusable_pairs(tools, rivalry, vectors, threshold)
    return _Measured(cost, findability, scores, pairs, depth)


def off_topic_probes() -> list[str]:
    """Everyday requests no developer-tool catalog serves ("book a table for two", "convert 100 dollars to
    euros"): the shipped calibration set's off-domain requests for the GitHub catalog."""
    from toolsearch_lab.eval.offcatalog import load_offcatalog  # the doctor's only use of the sets

    return [r.query for r in load_offcatalog("calibration", "github-mcp") if r.kind == "off-domain"]


def abstention_reason(chosen: IndexScore, scores: list[IndexScore]) -> str:
    """What the chosen index does when no tool fits, measured: everyday off-topic requests it returns no
    tools for, and the tools' own probes it wrongly says nothing fits for."""
    off = chosen.off_topic_empty or 0.0
    if chosen.abstained is not None:
        return (
            f"{chosen.index} returns no tools when it judges that none fits: for {off:.0%} of everyday "
            f"off-topic requests, and for {chosen.abstained:.1%} of the tools' own probes"
        )
    best = max(
        (s for s in scores if s.abstained is not None), key=lambda s: s.off_topic_empty or 0, default=None
    )
    other = (
        f"; {best.index} says none fits for {best.off_topic_empty or 0:.0%} of them "
        f"({best.abstained:.1%} of the probes)"
        if best is not None
        else ""
    )
    return f"{chosen.index} returns tools for {1 - off:.0%} of everyday off-topic requests{other}"


def _without_twin_findings(
    findings: list[Finding], servers: dict[str, str], duplicates: dict[str, str]
) -> list[Finding]:
    """The description findings, less a shared description whose tools are one tool and its copies on
    duplicate servers: the fix is to drop the copy (duplicate-server), not to reword a third party's text."""
    groups = [{keep, *(d for d, k in duplicates.items() if k == keep)} for keep in set(duplicates.values())]

    def twins_only(f: Finding) -> bool:
        return any({servers.get(t) for t in f.tools} <= group for group in groups) and len(
            {servers.get(t) for t in f.tools}
        ) == len(f.tools)

    return [f for f in findings if not (f.kind == "duplicate-description" and twins_only(f))]


def _without_twin_copies(
    pairs: list[ConfusablePair],
    servers: dict[str, str],
    originals: dict[str, str],
    duplicates: dict[str, str],
) -> list[ConfusablePair]:
    """The confusable pairs, less those of a tool and its own copy on a duplicate server: the
    duplicate-server finding says to drop the copy, not to reword third-party descriptions."""
    twins = set(duplicates.items())
    out = []
    for p in pairs:
        same_tool = originals.get(p.a, p.a) == originals.get(p.b, p.b)
        if not (same_tool and (servers.get(p.b), servers.get(p.a)) in twins | {(b, a) for a, b in twins}):
            out.append(p)
    return out


def destructive_findings(tools: Sequence[Tool]) -> list[Finding]:
    """One "destructive" finding (information) listing the tools whose MCP annotations declare them
    destructive (``Tool.destructive``), with the tools that say nothing either way in its evidence: MCP
    assumes those may be destructive too."""
    declared = [t.name for t in tools if t.destructive]
    if not declared:
        return []
    unstated = [t.name for t in tools if t.may_be_destructive and not t.destructive]
    also = (
        f"; {len(unstated)} more {'says' if len(unstated) == 1 else 'say'} nothing either way, which MCP "
        "treats as possibly destructive"
        if unstated
        else ""
    )
    return [
        Finding(
            "info",
            "destructive",
            declared[0],
            f"{len(declared)} tool{'s' if len(declared) != 1 else ''} declared destructive "
            f"(annotations destructiveHint: true): {', '.join(declared)}{also}",
            "to keep them (and those that say nothing) out of search results unless the query asks for "
            'them, use destructive="ask" (or "exclude") on ToolSearchAdvisor / ToolSearchConfig',
            0.05,
            declared,
            {"declared": declared, "unstated": unstated},
        )
    ]


def rank_findings(findings: list[Finding], scores: Mapping[str, float]) -> list[Finding]:
    """Errors, then warnings, then information; within a severity by impact, where a tool-level defect
    weighs more the less findable its tool measured (so a short description on a tool nobody finds comes
    before the same defect on a tool every probe finds)."""
    weighted = [
        replace(f, impact=round(f.impact * (0.5 + 0.5 * (1.0 - scores[f.tool])), 4))
        if f.tool in scores and f.kind not in ("unfindable", "weak-findability")
        else replace(f, impact=round(f.impact, 4))
        for f in findings
    ]
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(weighted, key=lambda f: (rank[f.severity], -f.impact, f.kind, f.tool))


def _check_arguments(
    k: int, encodings: Sequence[str], calls: int, searches: int | None, threshold: float
) -> None:
    check_positive_int(k, "diagnose: k")
    if isinstance(encodings, str) or not encodings:
        raise ValueError(f"diagnose: encodings must be a non-empty list of {ENCODINGS}, got {encodings!r}")
    check_positive_int(calls, "diagnose: calls_per_task")
    if searches is not None:
        check_positive_int(searches, "diagnose: searches_per_task", allow_zero=True)
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"diagnose: similarity_threshold must be a cosine within [-1, 1], got {threshold!r}")


def _build_indexes(indexes: Sequence[str] | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(indexes, Mapping):
        built = {str(label): index for label, index in indexes.items()}
    else:
        if isinstance(indexes, str):
            indexes = [indexes]
        bad = [kind for kind in indexes if not isinstance(kind, str) or kind.lower() not in INDEX_KINDS]
        if bad:
            raise ValueError(
                f"diagnose: unknown index kind(s) {bad}; expected some of {', '.join(INDEX_KINDS)}"
            )
        built = {kind.lower(): make_index(kind) for kind in dict.fromkeys(indexes)}
    if not built:
        raise ValueError(f"diagnose: no index given; expected some of {', '.join(INDEX_KINDS)}")
    return built


@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - started


def _bar(enabled: bool, source: str) -> Callable[[int], AbstractContextManager[Callable[[int], None]]]:
    """A factory for the progress bar over ``total`` steps (a tqdm bar on stderr, or nothing)."""

    @contextmanager
    def bar(total: int) -> Iterator[Callable[[int], None]]:
        if not enabled:
            yield lambda n: None
            return
        shown = tqdm(total=total, desc=f"doctor {source}", unit="step", file=sys.stderr, leave=False)
        try:
            yield shown.update
        finally:
            shown.close()

    return bar
