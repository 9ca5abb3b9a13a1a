"""Findability: can each tool be found by queries made from its own text, and which tools get mixed up?

Every tool gets up to three probes: the first sentence of its description, its name split into words (a
paraphrase a user might type) and its parameter names. Each probe is searched against the whole catalog
with every index; the rank at which the probing tool comes back is recorded along with the tools that
ranked above it. The probes use the tool's own words, so they are the easy case: a tool its own first
sentence cannot find in the top k will not be found by a user's paraphrase either.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolsearch_lab.eval.doctor.quality import DOCSTRING_SECTION, name_words, words
from toolsearch_lab.eval.doctor.report import ConfusablePair, Finding, IndexScore, QueryRank, ToolFindability
from toolsearch_lab.eval.metrics import rank_queries
from toolsearch_lab.model import Tool

SESSION = "doctor"
CHUNK = 256  # probes per search batch: small enough for a smooth progress bar, large enough to batch
MAX_QUERY_WORDS = 24
MAX_PARAMETER_WORDS = 8
MIN_MUTUAL_LOSSES = 3  # one lost probe each way is ordinary overlap; three in all is a pattern
WEAK_SCORE = 0.5  # a tool fewer than half of whose probes find it is weakly findable
WORD_OVERLAP = 0.6  # Jaccard overlap of name + description words that makes two co-retrieved tools twins
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n\s*\n|\n(?=\s*[-*#])")
_MARKUP = re.compile(r"[`*_#>|\[\]]+")


@dataclass(frozen=True)
class Probe:
    tool: str
    kind: str
    query: str


def summary(description: str) -> str:
    """The description before any leaked docstring section."""
    leak = DOCSTRING_SECTION.search(description)
    return (description[: leak.start()] if leak else description).strip()


def first_sentence(description: str) -> str:
    """The description's first sentence without markdown, cut before any leaked docstring section."""
    text = _SENTENCE_END.split(summary(description), maxsplit=1)[0]
    return " ".join(_MARKUP.sub(" ", text).split()[:MAX_QUERY_WORDS])


def derive_probes(tool: Tool) -> list[Probe]:
    """Up to three queries from the tool's own text, without repeats: description, name, parameters."""
    props = tool.parameters.get("properties")
    names = list(props)[:MAX_PARAMETER_WORDS] if isinstance(props, Mapping) else []
    candidates = [
        ("description", first_sentence(tool.description)),
        ("name", " ".join(name_words(tool.name))),
        ("parameters", " ".join(w for p in names for w in name_words(str(p)))),
    ]
    out: list[Probe] = []
    seen: set[str] = set()
    for kind, query in candidates:
        if query and query.casefold() not in seen:
            seen.add(query.casefold())
            out.append(Probe(tool.name, kind, query))
    return out


def search_probes(
    index: Any, tools: list[Tool], probes: list[Probe], depth: int, tick: Callable[[int], None]
) -> list[list[str]]:
    """The names each probe's search returns (best first, at most ``depth``) from a fresh session holding
    the whole catalog. Batches through ``search_many`` when the index has it (see ``rank_queries``)."""
    index.clear_index(SESSION)
    index.index_tools(SESSION, tools)
    out: list[list[str]] = []
    try:
        for start in range(0, len(probes), CHUNK):
            chunk = [p.query for p in probes[start : start + CHUNK]]
            out.extend(names for names, _ in rank_queries(index, SESSION, chunk, depth))
            tick(len(chunk))
    finally:
        index.clear_index(SESSION)
    return out


@dataclass
class Rivalry:
    """Which tools get in each other's way: ``lost[(a, b)]`` counts probes of ``a`` where ``b`` ranked
    above ``a`` within the top k; ``near[(a, b)]`` probes of ``a`` where ``b`` was anywhere in the top k."""

    lost: Counter = field(default_factory=Counter)
    near: Counter = field(default_factory=Counter)


def assemble(
    probes: list[Probe], results: dict[str, list[list[str]]], k: int, seconds: dict[str, float]
) -> tuple[list[ToolFindability], list[IndexScore], Rivalry]:
    """Per-tool probes with their ranks, per-index scores, and the rivalry counts between tools."""
    per_tool: dict[str, list[QueryRank]] = {}
    rivalry = Rivalry()
    for i, probe in enumerate(probes):
        ranks: dict[str, int | None] = {}
        above: dict[str, list[str]] = {}
        for label, ranked in results.items():
            names = ranked[i]
            rank = names.index(probe.tool) + 1 if probe.tool in names else None
            ranks[label] = rank
            above[label] = names[: min(rank - 1, k)] if rank else names[:k]
            rivalry.lost.update((probe.tool, b) for b in above[label])
            rivalry.near.update((probe.tool, b) for b in names[:k] if b != probe.tool)
        per_tool.setdefault(probe.tool, []).append(QueryRank(probe.kind, probe.query, ranks, above))
    findability = [_tool_score(name, queries, k) for name, queries in per_tool.items()]
    scores = [_index_score(label, findability, k, seconds.get(label, 0.0)) for label in results]
    return findability, scores, rivalry


def _index_score(label: str, findability: list[ToolFindability], k: int, seconds: float) -> IndexScore:
    ranks = [q.ranks[label] for t in findability for q in t.queries]
    n = max(len(ranks), 1)
    never = sum(1 for t in findability if not any((r := q.ranks[label]) and r <= k for q in t.queries))
    return IndexScore(
        index=label,
        found_at_k=sum(1 for r in ranks if r and r <= k) / n,
        mrr=sum(1.0 / r for r in ranks if r) / n,
        probes=len(ranks),
        tools_never_found=never,
        seconds=round(seconds, 3),
    )


def _tool_score(name: str, queries: list[QueryRank], k: int) -> ToolFindability:
    ranks = [r for q in queries for r in q.ranks.values()]
    found = [r for r in ranks if r is not None]
    score = sum(1 for r in found if r <= k) / len(ranks) if ranks else 0.0
    return ToolFindability(name, score, min(found) if found else None, queries)


def embedder_of(index: Any) -> Any:
    """The embedder behind a vector or hybrid index, else None."""
    embedder = getattr(index, "embedder", None)
    if embedder is None and isinstance(getattr(index, "views", None), Mapping) and index.views:
        embedder = getattr(next(iter(index.views.values())), "embedder", None)
    return embedder


class DescriptionVectors:
    """Unit vectors of the non-blank descriptions, for pair similarities (one embedder call)."""

    def __init__(self, tools: list[Tool], embedder: Any) -> None:
        self.tools = [t for t in tools if t.description.strip()]
        self.row = {t.name: i for i, t in enumerate(self.tools)}
        texts = [t.description for t in self.tools]
        self.matrix = np.asarray(embedder.embed(texts), dtype=np.float32) if texts else np.zeros((0, 1))

    def cosine(self, a: str, b: str) -> float | None:
        if a not in self.row or b not in self.row:
            return None
        return float(self.matrix[self.row[a]] @ self.matrix[self.row[b]])

    def similar(self, threshold: float) -> set[tuple[str, str]]:
        """Pairs (in catalog order) with cosine >= ``threshold``; identical descriptions are left to the
        duplicate-description check."""
        out = set()
        for start in range(0, len(self.tools), 1024):  # bounds the [rows x tools] block in memory
            block = self.matrix[start : start + 1024] @ self.matrix.T
            for r, c in zip(*np.nonzero(block >= threshold), strict=True):
                a, b = self.tools[start + int(r)], self.tools[int(c)]
                if start + int(r) < int(c) and a.description.strip() != b.description.strip():
                    out.add((a.name, b.name))
        return out


def confusable_pairs(
    tools: list[Tool],
    rivalry: Rivalry,
    vectors: DescriptionVectors | None,
    threshold: float,
    limit: int = 200,
) -> list[ConfusablePair]:
    """Pairs a search mixes up, by any of three signals: "outrank" (each ranks above the other on its
    probes, MIN_MUTUAL_LOSSES times in all), "vectors" (description cosine >= ``threshold``) and "words"
    (each is in the other's top k and they share WORD_OVERLAP of their name and description words: tools
    that differ by a word or two, like ..._to_user and ..._to_channel)."""
    order = {t.name: i for i, t in enumerate(tools)}
    by_name = {t.name: t for t in tools}
    lost, near = rivalry.lost, rivalry.near
    signals: dict[tuple[str, str], list[str]] = {}
    for a, b in list(near):
        if order[a] < order[b] and near.get((b, a)):
            if lost[(a, b)] and lost[(b, a)] and lost[(a, b)] + lost[(b, a)] >= MIN_MUTUAL_LOSSES:
                signals.setdefault((a, b), []).append("outrank")
            if _overlap(by_name[a], by_name[b]) >= WORD_OVERLAP:
                signals.setdefault((a, b), []).append("words")
    for key in vectors.similar(threshold) if vectors is not None else ():
        signals.setdefault(key, []).append("vectors")
    pairs = [_pair(by_name[a], by_name[b], rivalry, vectors, why) for (a, b), why in signals.items()]
    pairs.sort(
        key=lambda p: (-len(p.signals), -(p.a_lost_to_b + p.b_lost_to_a), -(p.similarity or 0.0), p.a, p.b)
    )
    return pairs[:limit]


def _pair(
    a: Tool, b: Tool, rivalry: Rivalry, vectors: DescriptionVectors | None, why: list[str]
) -> ConfusablePair:
    wa, wb = _words_of(a), _words_of(b)
    return ConfusablePair(
        a=a.name,
        b=b.name,
        a_lost_to_b=rivalry.lost.get((a.name, b.name), 0),
        b_lost_to_a=rivalry.lost.get((b.name, a.name), 0),
        similarity=_round(vectors.cosine(a.name, b.name) if vectors else None),
        word_overlap=round(_overlap(a, b), 3),
        only_a=[w for w in wa if w not in set(wb)][:12],
        only_b=[w for w in wb if w not in set(wa)][:12],
        signals=why,
    )


def _overlap(a: Tool, b: Tool) -> float:
    wa, wb = set(_words_of(a)), set(_words_of(b))
    return len(wa & wb) / max(len(wa | wb), 1)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _words_of(tool: Tool) -> list[str]:
    return list(dict.fromkeys(name_words(tool.name) + words(summary(tool.description))))


def findability_findings(
    findability: list[ToolFindability], pairs: list[ConfusablePair], k: int, skip: set[str], threshold: float
) -> list[Finding]:
    """Tools no probe finds in the top k (error), tools most probes miss (warning), confusable pairs
    (warning). Tools in ``skip`` already have an error that explains their findability (blank description)."""
    out = [
        _tool_finding(item, k)
        for item in findability
        if item.name not in skip and item.queries and item.score < WEAK_SCORE
    ]
    out.extend(_pair_finding(p, threshold) for p in pairs)
    return out


def _tool_finding(item: ToolFindability, k: int) -> Finding:
    rivals = Counter(b for q in item.queries for names in q.above.values() for b in names)
    top = [name for name, _ in rivals.most_common(3)]
    evidence = {"score": round(item.score, 3), "outranked_by": top, "best_rank": item.best_rank}
    if item.score == 0.0:
        return Finding(
            "error",
            "unfindable",
            item.name,
            f"none of its own {len(item.queries)} queries finds it in the top {k} with any index"
            + (f" (best rank {item.best_rank})" if item.best_rank else "")
            + (f"; {', '.join(top)} take the top spots" if top else ""),
            "start the description with what it does in the words a user would search for, and say how it "
            "differs from " + (", ".join(top) if top else "the tools that rank above it"),
            1.0,
            [item.name],
            evidence,
        )
    missed = [
        f"{label}: {q.kind} query" for q in item.queries for label, r in q.ranks.items() if r is None or r > k
    ]
    return Finding(
        "warning",
        "weak-findability",
        item.name,
        f"only {item.score:.0%} of its own queries find it in the top {k} (missed: {'; '.join(missed[:6])})"
        + (f"; outranked by {', '.join(top)}" if top else ""),
        "use the words of its name and parameters in the description's first sentence, and name what sets "
        "it apart from " + (", ".join(top) if top else "similar tools"),
        0.5 * (1.0 - item.score),
        [item.name],
        evidence,
    )


def _pair_finding(p: ConfusablePair, threshold: float) -> Finding:
    how = []
    if p.a_lost_to_b or p.b_lost_to_a:
        how.append(
            f"the other ranks above it on its own queries ({p.a}: {p.a_lost_to_b}, {p.b}: {p.b_lost_to_a})"
        )
    if "words" in p.signals:
        how.append(f"{p.word_overlap:.0%} of their words are the same")
    if p.similarity is not None:
        closeness = "nearly identical" if p.similarity >= threshold else "close"
        how.append(f"description vectors {closeness} (cosine {p.similarity:.2f})")
    differ = f"'{' '.join(p.only_a) or '-'}' vs '{' '.join(p.only_b) or '-'}'"
    return Finding(
        "warning",
        "confusable-pair",
        p.a,
        f"{p.a} and {p.b} are easy to confuse: {'; '.join(how)}. The words that differ: {differ}",
        f"make the difference explicit in both descriptions (when to use {p.a}, when {p.b}); or merge them "
        "into one tool with a parameter",
        min(1.0, 0.3 + 0.05 * (p.a_lost_to_b + p.b_lost_to_a) + 0.3 * (p.similarity or 0.0)),
        [p.a, p.b],
        {
            "a_lost_to_b": p.a_lost_to_b,
            "b_lost_to_a": p.b_lost_to_a,
            "similarity": p.similarity,
            "only_a": p.only_a,
            "only_b": p.only_b,
        },
    )
