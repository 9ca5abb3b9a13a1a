"""Findability: can each tool be found, by queries made from its own text and by queries written the way
users ask, and which tools does a search actually mix up?

Every tool gets up to three **own-words** probes: the first sentence of its description, its name split
into words and its parameter names. They use the tool's own words, so they are the easy case: a tool its
own first sentence cannot find in the top k will not be found by a user's paraphrase either. It also gets
up to two **user-style** probes (``USER_PROBE_KINDS``), made without a model: "request" is the first
sentence said as a request ("I need to show changes that are for commit": the verb in its base form, the
words of the tool's name left out, since a user who knew the name would not search), and "task" keeps
only its content words with the name's words left out ("working tree"). The name's words are what make
own-words probes easy; without them the probes fail about as often as plain requests do, so the two
shares bound what plain requests find (``DoctorReport.findable_range``).

Each probe is searched against the whole catalog with every index; the rank at which the probing tool
comes back is recorded along with the tools that ranked above it. Confusable pairs come from those
searches: a pair is flagged when request-like probes of one tool rank the other ahead of it (three times
in all; fewer when the two are close or their names are twins), or when the two share most of their
words and each comes back in the other's top k. Description cosine is shown beside a pair but never
flags one by itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolsearch_lab.eval.doctor.quality import DOCSTRING_SECTION, name_words, words
from toolsearch_lab.eval.doctor.report import (
    USER_PROBE_KINDS,
    ConfusablePair,
    Finding,
    IndexScore,
    QueryRank,
    ToolFindability,
    plural,
)
from toolsearch_lab.eval.metrics import search_queries
from toolsearch_lab.model import Tool
from toolsearch_lab.text.stopwords import AGENT_STOP_WORDS as STOP_WORDS

SESSION = "doctor"
CHUNK = 256  # probes per search batch: small enough for a smooth progress bar, large enough to batch
MAX_QUERY_WORDS = 24
MAX_PARAMETER_WORDS = 8
MIN_SWAPS = (
    2  # one probe returning the other tool first can be chance; two (any index, any probe) is a pattern
)
MAX_USER_WORDS = 10
PAIR_EVIDENCE = ("lucene", "vector")  # the indexes whose swaps flag a pair (all probed, without them)
SWAP_DEPTH = (
    2  # a tool ranked in the first two places for another's probe crowds it out of a small maxResults
)
# Parameter names (repo_path, ...) are shared boilerplate nobody searches with: those probes say nothing
# about which tools a request confuses.
NOT_A_REQUEST = frozenset({"parameters"})
WEAK_SCORE = 0.5  # a tool fewer than half of whose probes find it is weakly findable
HIT_AT = range(1, 11)  # the result counts whose hit rates the maxResults advice compares (Spring's 1-10)
# Swaps needed to flag a pair: MIN_SWAPS + 1; MIN_SWAPS when the descriptions are close (cosine
# CLOSE_COSINE, or CLOSE_OVERLAP of their words shared); one when the names are twins (_name_twins).
CLOSE_COSINE = 0.6
CLOSE_OVERLAP = 0.4
HUB_MIN_TOOLS = 4  # ahead of this many different tools (or the square root of the catalog size): a hub
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
    """Up to three queries from the tool's own text (description, name, parameters), then up to two written
    the way users ask ("request", "task"; see the module docstring), without repeats."""
    props = tool.parameters.get("properties")
    names = list(props)[:MAX_PARAMETER_WORDS] if isinstance(props, Mapping) else []
    sentence = first_sentence(tool.description)
    candidates = [
        ("description", sentence),
        ("name", " ".join(name_words(tool.name))),
        ("parameters", " ".join(w for p in names for w in name_words(str(p)))),
        *user_probes(sentence, tool.name),
    ]
    out: list[Probe] = []
    seen: set[str] = set()
    for kind, query in candidates:
        if query and query.casefold() not in seen:
            seen.add(query.casefold())
            out.append(Probe(tool.name, kind, query))
    return out


def user_probes(sentence: str, name: str) -> list[tuple[str, str]]:
    """The "request" and "task" probes of a description's first sentence (see the module docstring); none
    when, without the name's words, fewer than two content words are left."""
    own = {_stem(w) for w in name_words(name)}
    sentence_words = words(sentence)
    kept = [w for w in sentence_words if _stem(w) not in own][:MAX_USER_WORDS]
    content = [w for w in kept if w not in STOP_WORDS]
    if len(content) < 2:
        return []
    if kept[0] == sentence_words[0]:  # the opening verb is not one of the name's words
        request = " ".join(["I need to", _base_verb(kept[0]), *kept[1:]])
    else:
        request = " ".join(["I need", *kept])
    return [("request", request), ("task", " ".join(content))]


def _stem(word: str) -> str:
    """A crude plural/3rd-person fold (branches -> branch, files -> file), enough to match name words."""
    for end in ("ches", "shes", "sses", "xes"):
        if word.endswith(end):
            return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def _base_verb(word: str) -> str:
    """The base form of a description's opening verb ("Shows" -> "show", "Switches" -> "switch")."""
    return _stem(word)


@dataclass
class Searched:
    """What one index returned for every probe: the names (best first, at most the depth) and whether it
    returned nothing because it judged that no tool fits (an index that can abstain)."""

    names: list[list[str]]
    abstained: list[bool] | None = None  # None: the index never abstains

    def __getitem__(self, i: int) -> list[str]:
        return self.names[i]


def search_probes(
    index: Any, tools: list[Tool], queries: list[str], depth: int, tick: Callable[[int], None]
) -> Searched:
    """What each query's search returns from a fresh session holding the whole catalog. Batches through
    ``search_many`` when the index has it (see ``search_queries``)."""
    index.clear_index(SESSION)
    index.index_tools(SESSION, tools)
    names: list[list[str]] = []
    abstained: list[bool] = []
    can_abstain = False
    try:
        for start in range(0, len(queries), CHUNK):
            chunk = queries[start : start + CHUNK]
            for response in search_queries(index, SESSION, chunk, depth):
                names.append(response.tool_names)
                can_abstain = can_abstain or response.confidence is not None
                abstained.append(response.abstained)
            tick(len(chunk))
    finally:
        index.clear_index(SESSION)
    return Searched(names, abstained if can_abstain else None)


@dataclass
class Rivalry:
    """Which tools get in each other's way, over every probe (own-words and user-style) and index:
    ``lost[(a, b)]`` counts probes of ``a`` where ``b`` ranked above ``a`` within the top k;
    ``swapped[(a, b)]`` request-like probes of ``a`` (not ``NOT_A_REQUEST``) that ranked ``b`` above ``a``
    in the first ``SWAP_DEPTH`` places; ``near[(a, b)]`` probes of ``a`` where ``b`` was anywhere in the
    top k."""

    lost: Counter = field(default_factory=Counter)
    swapped: Counter = field(default_factory=Counter)
    near: Counter = field(default_factory=Counter)


def assemble(
    probes: list[Probe], results: dict[str, Searched], k: int, seconds: dict[str, float]
) -> tuple[list[ToolFindability], list[IndexScore], Rivalry]:
    """Per-tool probes with their ranks, per-index scores, and the rivalry counts between tools."""
    per_tool: dict[str, list[QueryRank]] = {}
    per_tool_user: dict[str, list[QueryRank]] = {}
    rivalry = Rivalry()
    by_index: dict[str, Counter] = {}
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
            if probe.kind not in NOT_A_REQUEST:
                # What this search returns instead: the tools above it in the first SWAP_DEPTH places.
                ahead = names[: min(rank - 1, SWAP_DEPTH)] if rank else names[:SWAP_DEPTH]
                by_index.setdefault(label, Counter()).update((probe.tool, b) for b in ahead)
        into = per_tool_user if probe.kind in USER_PROBE_KINDS else per_tool
        into.setdefault(probe.tool, []).append(QueryRank(probe.kind, probe.query, ranks, above))
    # Swaps flag a pair by the keyword and the embedding index (PAIR_EVIDENCE, the two the thresholds were
    # set on): regex swaps are noisy, and the hybrid and learned indexes fuse those same two signals, so
    # counting them too would flag more pairs for probing more indexes, not for more confusion.
    evidence = [label for label in PAIR_EVIDENCE if label in by_index] or list(by_index)
    for label in evidence:
        rivalry.swapped.update(by_index[label])
    names_in_order = list(dict.fromkeys(p.tool for p in probes))
    findability = [
        _tool_score(name, per_tool.get(name, []), per_tool_user.get(name, []), k) for name in names_in_order
    ]
    scores = [
        _index_score(label, findability, k, seconds.get(label, 0.0), searched.abstained)
        for label, searched in results.items()
    ]
    return findability, scores, rivalry


def _index_score(
    label: str, findability: list[ToolFindability], k: int, seconds: float, abstained: list[bool] | None
) -> IndexScore:
    ranks = [q.ranks[label] for t in findability for q in t.queries]
    n = max(len(ranks), 1)
    never = sum(1 for t in findability if not any((r := q.ranks[label]) and r <= k for q in t.queries))
    user = [q.ranks[label] for t in findability for q in t.user_queries]
    every = ranks + user
    return IndexScore(
        index=label,
        found_at_k=sum(1 for r in ranks if r and r <= k) / n,
        mrr=sum(1.0 / r for r in ranks if r) / n,
        probes=len(ranks),
        tools_never_found=never,
        seconds=round(seconds, 3),
        user_found_at_k=sum(1 for r in user if r and r <= k) / len(user) if user else None,
        user_probes=len(user),
        hit_at=[round(sum(1 for r in every if r and r <= c) / max(len(every), 1), 4) for c in HIT_AT],
        abstained=None if abstained is None else round(sum(abstained) / max(len(abstained), 1), 4),
    )


def _tool_score(name: str, queries: list[QueryRank], user: list[QueryRank], k: int) -> ToolFindability:
    ranks = [r for q in queries for r in q.ranks.values()]
    found = [r for r in ranks if r is not None]
    score = sum(1 for r in found if r <= k) / len(ranks) if ranks else 0.0
    user_ranks = [r for q in user for r in q.ranks.values()]
    user_score = sum(1 for r in user_ranks if r and r <= k) / len(user_ranks) if user_ranks else None
    return ToolFindability(name, score, min(found) if found else None, queries, user, user_score)


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
    """Pairs a search actually mixes up, by two signals. "swapped": request-like probes of one rank the
    other above it in the first places, MIN_SWAPS + 1 times in all either way, MIN_SWAPS when their
    descriptions are close, once when their names are twins; swaps towards a hub (a tool ahead of many
    different tools) do not count. "words": each is in the other's top k and they share WORD_OVERLAP of
    their name and description words (tools that differ by a word or two, like ..._to_user and
    ..._to_channel). The description cosine (``vectors``) is reported with each pair and orders them,
    but never flags a pair on its own: unrelated tools can sit close in vector space without a search
    ever returning one for the other. ``threshold`` marks a cosine "nearly identical" in the wording.
    Swaps are those of the BM25 and vector indexes when they were probed (:data:`PAIR_EVIDENCE`), so
    probing more indexes finds the same pairs rather than more."""
    order = {t.name: i for i, t in enumerate(tools)}
    by_name = {t.name: t for t in tools}
    lost, swapped, near = rivalry.lost, rivalry.swapped, rivalry.near
    hubs = _hubs(swapped, len(tools))
    candidates = {tuple(sorted((a, b), key=order.__getitem__)) for a, b in [*lost, *swapped, *near]}
    signals: dict[tuple[str, str], list[str]] = {}
    for a, b in candidates:
        if a not in order or b not in order:
            continue
        swaps = (0 if b in hubs else swapped[(a, b)]) + (0 if a in hubs else swapped[(b, a)])
        close = (vectors is not None and (vectors.cosine(a, b) or 0.0) >= CLOSE_COSINE) or _overlap(
            by_name[a], by_name[b]
        ) >= CLOSE_OVERLAP
        needed = 1 if _name_twins(a, b) else MIN_SWAPS if close else MIN_SWAPS + 1
        if swaps >= needed:
            signals.setdefault((a, b), []).append("swapped")
        if near[(a, b)] and near[(b, a)] and _overlap(by_name[a], by_name[b]) >= WORD_OVERLAP:
            signals.setdefault((a, b), []).append("words")
    pairs = [_pair(by_name[a], by_name[b], rivalry, vectors, why) for (a, b), why in signals.items()]
    pairs.sort(
        key=lambda p: (
            -len(p.signals),
            -(p.a_swapped_to_b + p.b_swapped_to_a),
            -(p.a_lost_to_b + p.b_lost_to_a),
            -(p.similarity or 0.0),
            p.a,
            p.b,
        )
    )
    return pairs[:limit]


def _name_twins(a: str, b: str) -> bool:
    """One name's words all occur in the other's (git_diff, git_diff_staged), or the two share two words
    or more and differ in one (git_diff_staged, git_diff_unstaged; not git_log, git_reset)."""
    wa, wb = set(name_words(a)), set(name_words(b))
    if not wa or not wb:
        return False
    return wa <= wb or wb <= wa or (len(wa) == len(wb) and len(wa - wb) == 1 and len(wa & wb) >= 2)


def _hubs(swapped: Counter, n_tools: int) -> set[str]:
    """Tools that come back ahead of many different tools (a short description full of common words, or
    the one description that shares a word with every name): they crowd out everything, so their swaps
    say nothing about which two tools a user mixes up."""
    ahead_of: dict[str, set[str]] = {}
    for (a, b), n in swapped.items():
        if n:
            ahead_of.setdefault(b, set()).add(a)
    limit = max(HUB_MIN_TOOLS, round(math.sqrt(n_tools)))
    return {b for b, tools in ahead_of.items() if len(tools) >= limit}


def _pair(
    a: Tool, b: Tool, rivalry: Rivalry, vectors: DescriptionVectors | None, why: list[str]
) -> ConfusablePair:
    wa, wb = _words_of(a), _words_of(b)
    return ConfusablePair(
        a=a.name,
        b=b.name,
        a_lost_to_b=rivalry.lost.get((a.name, b.name), 0),
        b_lost_to_a=rivalry.lost.get((b.name, a.name), 0),
        a_swapped_to_b=rivalry.swapped.get((a.name, b.name), 0),
        b_swapped_to_a=rivalry.swapped.get((b.name, a.name), 0),
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
    if p.a_swapped_to_b or p.b_swapped_to_a:
        how.append(
            f"a search for one returns the other first ({p.a}'s queries: "
            f"{plural(p.a_swapped_to_b, 'time')}, {p.b}'s: {plural(p.b_swapped_to_a, 'time')})"
        )
    elif p.a_lost_to_b or p.b_lost_to_a:
        how.append(
            f"one ranks above the other on its queries ({p.a}: {p.a_lost_to_b}, {p.b}: {p.b_lost_to_a})"
        )
    if "words" in p.signals:
        how.append(f"{p.word_overlap:.0%} of their words are the same")
    if p.similarity is not None and p.similarity >= CLOSE_COSINE:
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
        min(1.0, 0.3 + 0.05 * (p.a_swapped_to_b + p.b_swapped_to_a) + 0.3 * max(p.similarity or 0.0, 0.0)),
        [p.a, p.b],
        {
            "a_lost_to_b": p.a_lost_to_b,
            "b_lost_to_a": p.b_lost_to_a,
            "a_swapped_to_b": p.a_swapped_to_b,
            "b_swapped_to_a": p.b_swapped_to_a,
            "similarity": p.similarity,
            "only_a": p.only_a,
            "only_b": p.only_b,
        },
    )
