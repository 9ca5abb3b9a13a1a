"""Tools that hijack searches: a description stuffed with the catalog's common words (or repeating them) makes
a tool come back above the right tool for queries that are not about it. Spring's keyword index scores by
hit count, so repetition is rewarded as designed; BM25 and embeddings resist it better but not fully. The
doctor already runs every tool's probe queries through every index; this reads, per index, how often each
tool was ranked above the tool a probe was written for, and names the ones that win a large share.

Two signals, both measured. How often it wins: the share of the other tools' probe queries (own-words and
user-style) where it ranks above the right tool within the top k, per index, and how many different tools
it pushes down. Whether its description is stuffed (:func:`stuffing`): most of its words repeated
(:data:`STUFFED_MEDIAN` times or more), or the names of many other tools spelled out in it
(:data:`STUFFED_COVERAGE` of them; ordinary descriptions of the shipped GitHub catalog name at most 5 %).
A tool is named when it wins :data:`HIJACK_SHARE` of the probes on some index, or when it is stuffed and
wins :data:`STUFFED_SHARE` (BM25 and embeddings dilute stuffing, so a stuffed tool wins less there while
still pushing the right tool down for many queries).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Sequence

from toolsearch_lab.eval.doctor.report import Finding, ToolFindability
from toolsearch_lab.model import Tool

__all__ = [
    "HIJACK_MIN_TOOLS",
    "HIJACK_SHARE",
    "STUFFED_COVERAGE",
    "STUFFED_MEDIAN",
    "STUFFED_SHARE",
    "hijack_shares",
    "poisoning_findings",
    "stuffing",
]

# A tool ranked above the right tool for this share of the other tools' probes (on some index) hijacks
# (the shipped GitHub catalog's busiest honest tool reaches 23 % with the regex index, 14 % with BM25)...
HIJACK_SHARE = 0.5
# ...or this share, when its description is stuffed.
STUFFED_SHARE = 0.02
# Either way it pushes down at least this many different tools (or the square root of the catalog's size).
HIJACK_MIN_TOOLS = 5
# Stuffed: half its distinct words occur this often or more, or it spells out this share of other tools'
# names (every word of the name, plurals folded) and at least three of them.
STUFFED_MEDIAN = 3
STUFFED_COVERAGE = 0.15
_WORD = re.compile(r"[a-z]{3,}")


def _words(text: str) -> set[str]:
    return {w.removesuffix("s") for w in _WORD.findall(text.lower())}


def _name_words(name: str) -> set[str]:
    return _words(re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " "))


def stuffing(tool: Tool, tools: Sequence[Tool]) -> dict:
    """How stuffed ``tool``'s description is: ``median`` (how often its typical distinct word occurs),
    ``coverage`` (share of the other tools whose names it spells out), ``covered`` (how many),
    ``word``/``count`` (its most frequent word) and ``stuffed`` (the verdict of the module docstring)."""
    counts = Counter(_WORD.findall(tool.description.lower()))
    median = statistics.median(counts.values()) if counts else 0
    words = _words(tool.description)
    others = [t for t in tools if t.name != tool.name and _name_words(t.name)]
    covered = sum(_name_words(t.name) <= words for t in others)
    coverage = covered / len(others) if others else 0.0
    word, count = counts.most_common(1)[0] if counts else ("", 0)
    stuffed = median >= STUFFED_MEDIAN or (coverage >= STUFFED_COVERAGE and covered >= 3)
    return {
        "median": median,
        "coverage": round(coverage, 3),
        "covered": covered,
        "word": word,
        "count": count,
        "stuffed": stuffed,
    }


def hijack_shares(findability: Sequence[ToolFindability], indexes: Sequence[str]) -> dict[str, dict]:
    """Per tool and index: ``{"above": share of other tools' probes where it ranked above the right tool,
    "first": share where it took rank 1 instead, "tools": how many different tools it displaced}``."""
    probes = {label: 0 for label in indexes}
    above: dict[str, Counter] = {label: Counter() for label in indexes}
    first: dict[str, Counter] = {label: Counter() for label in indexes}
    displaced: dict[str, dict[str, set[str]]] = {label: {} for label in indexes}
    for tool in findability:
        for query in [*tool.queries, *tool.user_queries]:
            for label in indexes:
                if label not in query.above:
                    continue
                probes[label] += 1
                ahead = [name for name in query.above[label] if name != tool.name]
                above[label].update(set(ahead))
                if ahead and query.ranks.get(label) != 1:
                    first[label][ahead[0]] += 1
                for name in ahead:
                    displaced[label].setdefault(name, set()).add(tool.name)
    out: dict[str, dict] = {}
    for label in indexes:
        total = probes[label] or 1
        for name, n in above[label].items():
            out.setdefault(name, {})[label] = {
                "above": round(n / total, 4),
                "first": round(first[label][name] / total, 4),
                "tools": len(displaced[label].get(name, ())),
            }
    return out


def poisoning_findings(
    findability: Sequence[ToolFindability], tools: Sequence[Tool], indexes: Sequence[str], k: int
) -> list[Finding]:
    """A "hijacks-searches" finding per tool the module docstring's rule names, with its share of the
    other tools' probe queries per index and why its description wins (stuffing)."""
    shares = hijack_shares(findability, indexes)
    least = max(HIJACK_MIN_TOOLS, round(math.sqrt(len(tools))))
    by_name = {t.name: t for t in tools}
    out = []
    for name, per_index in shares.items():
        if name not in by_name:
            continue
        stuffed = stuffing(by_name[name], tools)
        floor = STUFFED_SHARE if stuffed["stuffed"] else HIJACK_SHARE
        winning = [s["above"] for s in per_index.values() if s["above"] >= floor and s["tools"] >= least]
        if not winning and not stuffed["stuffed"]:
            continue
        each = "; ".join(
            f"{label}: above the right tool for {s['above']:.0%} of the other tools' probe queries "
            f"(rank 1 for {s['first']:.0%}, {s['tools']} tools pushed down)"
            for label, s in sorted(per_index.items(), key=lambda item: -item[1]["above"])
        )
        why = ""
        if stuffed["stuffed"]:
            why = (
                f"; its description is keyword-stuffed ({stuffed['word']!r} x{stuffed['count']}, the names "
                f"of {stuffed['covered']} other tools spelled out)"
            )
        worst = max(winning, default=0.0)
        said = (
            f"hijacks searches: it comes back in the top {k} above the tool a query is about ({each}){why}"
            if winning
            else f"can hijack searches{why}: an index that counts keyword hits (Spring's keyword index, "
            f"regex here) ranks it above the right tool for most queries; the indexes probed here resist "
            f"it ({each})"
        )
        out.append(
            Finding(
                "error" if winning else "warning",
                "hijacks-searches",
                name,
                said,
                "rewrite its description to say what this tool does, once, in its own words (no keyword "
                "lists); until then leave it out of the catalog: it pushes the right tool out of the "
                "results the model sees",
                min(1.0, 0.5 + worst),
                [name],
                {"shares": per_index, "stuffing": stuffed},
            )
        )
    return sorted(out, key=lambda f: -f.impact)
