"""Prerequisite links: the tool that looks up what another tool needs.

A user asks "close the issue about the login crash"; the tool that closes an issue takes an
``issue_number``, which the request does not give. The agent first has to find the issue, with a tool
that lists or searches issues, and a search that returns only the closing tool leaves that step without
its tool. The link is in the catalog's own text: the closing tool *requires* a reference to an issue
(a parameter named ``issue_number``, ``issue_id``, or described as "the ID of the issue"), and another tool
of the same server *looks issues up* (its name starts with a lookup verb, ``list_issues``,
``search_issues``, and it needs no such reference itself).

:func:`prerequisite_links` finds those pairs once per catalog; :func:`lift` raises a provider to a share
of the score of the best-ranked tool that needs it, unless the request already names the thing ("issue
45", "#45"). The hybrid index applies it (``prerequisites=True``); the weight (0.8) and the one tool whose
providers are lifted were chosen on development data (BFCL, LiveMCPBench, MetaTool, the GitHub example
requests and the shipped ``github-prerequisites`` / ``bfcl-prerequisites`` requests), see
``docs/index.md``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolsearch_lab.model import Tool
from toolsearch_lab.text.identifiers import split_identifiers
from toolsearch_lab.text.normalise import porter_stem

__all__ = ["PREREQUISITE_WEIGHT", "PrerequisiteLinks", "lift", "names_reference", "prerequisite_links"]


def _words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


PREREQUISITE_WEIGHT = 0.8
# The first word of a tool's name that makes it a lookup: it finds things another tool then acts on.
LOOKUP_VERBS = _words_of("get list search find fetch retrieve read query lookup show view")
# The last word of a parameter name that makes it a reference to a thing, not a value.
REFERENCE_WORDS = _words_of("id ids name names number numbers uuid key keys identifier identifiers")
# Words of a reference parameter that name a value or a role, not a kind of thing.
NOT_THINGS = _words_of(
    "value values amount content message text body subject title description date time query keyword mode "
    "type status option options price limit start end new old source destination path file_path"
)
# Words of a tool name that are neither a thing nor an action.
_FILLER = _words_of("by for to of from in on with and or all the a an my new latest based given most recent")
# Action words of tool names (the rest of the name is what the tool acts on).
_ACTIONS = LOOKUP_VERBS | _words_of(
    "create update delete add remove set manage write edit make mark submit request resolve unresolve "
    "dismiss assign reprioritize star unstar fork merge push upload download post send cancel check start "
    "stop open close put patch replace move copy rename generate convert compute calculate count load save "
    "enable disable display estimate activate adjust press release fill lock verify purchase register "
    "contact book reserve invite schedule share append follow unfollow mention comment retweet "
    "authenticate login logout fund withdraw place notify filter run trigger"
)
_DESCRIBED_REFERENCE = re.compile(
    r"\b(?:id|ids|identifier|name|names)\s+of\s+(?:the\s+|a\s+|an\s+)?([a-z]+)|\b([a-z]+)\s+(?:id|ids|identifier)\b",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"#\d+")


def _words(identifier: str) -> list[str]:
    return [w.lower() for part in split_identifiers(identifier) for w in re.findall(r"[A-Za-z]+", part)]


def _things(tool_name: str) -> set[str]:
    """The stems of what a tool acts on: its name's words without the actions and the filler."""
    return {porter_stem(w) for w in _words(tool_name) if w not in _ACTIONS and w not in _FILLER}


def _required(tool: Tool) -> list[str]:
    props = tool.parameters.get("properties")
    required = tool.parameters.get("required")
    if not isinstance(props, dict) or not isinstance(required, list):
        return []
    return [p for p in required if isinstance(p, str) and p in props]


def referenced_things(parameter: str, schema: object, tool: Tool) -> set[str]:
    """The stems of the things a parameter refers to: ``restaurant_names`` -> {restaurant}; a bare ``id``
    means the tool's own thing (``update_scheduled_transaction(id)`` -> {schedul, transact}); a
    description "the ID of the order" -> {order}. Empty for a value (``amount``, ``query``)."""
    words = _words(parameter)
    things: set[str] = set()
    if words and words[-1] in REFERENCE_WORDS:
        named = [w for w in words[:-1] if w not in _FILLER]
        candidates = named or [w for w in _words(tool.name) if w not in _ACTIONS and w not in _FILLER]
        things |= {porter_stem(w) for w in candidates if w not in NOT_THINGS}
    description = schema.get("description") if isinstance(schema, dict) else None
    if isinstance(description, str):
        for match in _DESCRIBED_REFERENCE.finditer(description):
            word = (match.group(1) or match.group(2) or "").lower()
            if word and word not in _FILLER | NOT_THINGS | REFERENCE_WORDS:
                things.add(porter_stem(word))
    return things


def is_lookup(tool: Tool) -> bool:
    """A tool that finds things: its name starts with a lookup verb and it requires no reference itself
    (a ``name`` is allowed: ``get_symbol_by_name`` turns a name into the symbol others need)."""
    words = _words(tool.name)
    if not words or words[0] not in LOOKUP_VERBS:
        return False
    for parameter in _required(tool):
        last = _words(parameter)[-1:] or [""]
        if last[0] in REFERENCE_WORDS and last[0] not in ("name", "names"):
            return False
    return True


@dataclass(frozen=True)
class PrerequisiteLinks:
    """For each tool (by position) that needs a reference: the tools that look it up, each with the stems
    of the things that link them."""

    providers: dict[int, tuple[tuple[int, frozenset[str]], ...]]

    def __len__(self) -> int:
        return sum(len(p) for p in self.providers.values())


def prerequisite_links(tools: Sequence[Tool]) -> PrerequisiteLinks:
    """Every (tool that needs a reference, tool that looks it up) pair of the same server: both tools carry
    the same category, or at least one carries none."""
    lookups_of: dict[str, list[int]] = {}  # thing -> the lookups whose name carries it
    for i, t in enumerate(tools):
        if is_lookup(t):
            for thing in _things(t.name):
                lookups_of.setdefault(thing, []).append(i)
    out: dict[int, list[tuple[int, frozenset[str]]]] = {}
    for c, tool in enumerate(tools):
        props = tool.parameters.get("properties") or {}
        needed: dict[int, set[str]] = {}
        for parameter in _required(tool):
            for thing in referenced_things(parameter, props.get(parameter), tool):
                for p in lookups_of.get(thing, ()):
                    other = tools[p]
                    same_server = not (tool.category and other.category) or tool.category == other.category
                    if p != c and same_server:
                        needed.setdefault(p, set()).add(thing)
        if needed:
            out[c] = [(p, frozenset(ts)) for p, ts in needed.items()]
    return PrerequisiteLinks({c: tuple(v) for c, v in out.items()})


def names_reference(query: str, things: frozenset[str]) -> bool:
    """The request already names the thing by number ("issue 45", "order #3", "#45"): no lookup needed."""
    text = query.lower()
    if _NUMBERED.search(text):
        return True
    return any(re.search(rf"\b{re.escape(t)}\w*\s+(?:#|no\.?\s*|number\s+|id\s+)?\d+", text) for t in things)


def lift(
    scores: np.ndarray,
    query: str,
    links: PrerequisiteLinks,
    weight: float = PREREQUISITE_WEIGHT,
    top: int = 1,
) -> tuple[np.ndarray, dict[int, int]]:
    """``scores`` (one query's, over the session's tools) with the lookups of the ``top`` best tools raised
    to ``weight`` times that tool's score where that is higher, and {lifted tool: the tool it serves}."""
    out = scores.copy()
    lifted: dict[int, int] = {}
    if not links.providers or weight <= 0:
        return out, lifted
    for c in np.argsort(-scores, kind="stable")[:top].tolist():
        for p, things in links.providers.get(c, ()):
            target = weight * scores[c]
            if target > out[p] and not names_reference(query, things):
                out[p] = target
                lifted[p] = c
    return out, lifted
