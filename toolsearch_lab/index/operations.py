"""Near-misses: a request for an operation that no tool of its object offers.

"Delete the feature/login branch", over a catalog whose branch tools are ``create_branch`` and
``list_branches``, is as close to those tools as "create a branch" is, by every similarity the hybrid
index has: its object is there, only its operation is not. The calibrated confidence of
:mod:`.abstention` cannot tell them apart. Two weaker signals can, together, for some of them:

* **Names.** A tool's name says what it does to what. The request's leading verb falls into one of four
  operations (:data:`OPERATIONS`: read, create, update, delete); the request's words that name tools are
  its objects. The operation is missing when no tool named after an object offers it. A name without a
  known verb, or an open-ended one (``issue_write``, ``manage_…``, ``…_trigger``), may do anything, but
  only to its head noun (its last word): ``manage_repository_notification_subscription`` manages
  subscriptions, not repositories.
* **Contrast.** Names under-describe tools (``actions_run_trigger`` also cancels runs), and users' verbs
  are idioms ("drop a note"). So the request is embedded again with its verb swapped for each other
  operation's (get, create, update, delete): when a swapped request comes closer to the catalog than the
  request itself by more than a margin, the embeddings agree that the operation is what does not fit.

The hybrid index abstains when both hold (``near_miss``, on by default; the margin ``near_miss_gain`` was
chosen on calibration data, ``benchmarks/abstention.py --near-miss``). The lexicon is hand-written and
English-only: a request in another language, or without a leading verb, is never a near-miss by this rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolsearch_lab.model import Tool
from toolsearch_lab.text.normalise import keyword_tokens, porter_stem

__all__ = ["NEAR_MISS_GAIN", "OPERATIONS", "MissingOperation", "OperationIndex", "lead_verb", "swapped"]

# The margin by which a verb-swapped request must come closer to the catalog (mean over the hybrid's
# views of the best raw similarity) for the operation to be the misfit: the largest catch of calibration
# near-misses that turns away at most 1 % of the calibration catalogs' servable requests on average.
NEAR_MISS_GAIN = 0.06

# The verbs a request may start with, by operation; a verb whose operation depends on its object ("open"
# an issue or a file, "run", "make", "check") is left out, so such a request is never judged.
OPERATIONS: dict[str, str] = {  # operation -> its verbs, space-separated
    "read": "get show list find search look view read fetch see display browse inspect lookup query count "
    "retrieve download summarize summarise review",
    "create": "create add new write post file submit raise build generate publish upload draft compose "
    "invite fork clone star sponsor",
    "update": "update edit change modify set rewrite reword adjust replace fix patch amend revise rename "
    "transfer move migrate archive unarchive merge squash rebase lock unlock block unblock ban mute approve "
    "reject close reopen resolve assign unassign enable disable turn pin unpin revert convert upgrade "
    "downgrade dismiss protect hide unhide",
    "delete": "delete remove erase clear destroy purge wipe discard cancel unstar unfollow",
}
_SWAP = {"read": "get", "create": "create", "update": "update", "delete": "delete"}
_ANY = frozenset(OPERATIONS)
_VERB = {verb: op for op, verbs in OPERATIONS.items() for verb in verbs.split()}
# A tool name's verbs: the request verbs, and some only tools use.
_NAME_VERB: dict[str, frozenset[str]] = {verb: frozenset({op}) for verb, op in _VERB.items()}
_NAME_VERB.update({w: _ANY for w in ("write", "manage", "trigger")})
_NAME_VERB.update({w: frozenset({"create"}) for w in ("request", "push", "send", "insert", "open", "make")})
_NAME_VERB.update({w: frozenset({"update"}) for w in ("mark", "dismiss", "reprioritize", "unresolve")})
# Politeness and framing before the verb: "please", "can you", "I'd like to", "help me", ...
_LEAD = re.compile(
    r"^\s*(?:(?:please|pls|kindly|hey|hi|ok|okay|now|also|then|just|quickly)[,\s]+)*"
    r"(?:(?:can|could|would|will) you\s+|i (?:want|need|would like|'d like) (?:you )?to\s+|help me\s+|"
    r"let'?s\s+|go ahead and\s+)?(?:please\s+)?",
    re.IGNORECASE,
)
_WORD = re.compile(r"([A-Za-z]+)(.*)$", re.DOTALL)


@dataclass(frozen=True)
class LeadVerb:
    """A request split around its leading verb: ``before + verb + after`` is the request."""

    before: str
    verb: str
    after: str

    @property
    def operation(self) -> str:
        return _VERB[self.verb.lower()]


def lead_verb(query: str) -> LeadVerb | None:
    """The request's leading verb, if the lexicon knows it ("Please delete the branch" -> "delete")."""
    rest = _LEAD.sub("", query, count=1)
    match = _WORD.match(rest)
    if match is None or match.group(1).lower() not in _VERB:
        return None
    return LeadVerb(query[: len(query) - len(rest)], match.group(1), match.group(2))


def swapped(query: str) -> list[str]:
    """The request with its verb swapped for each other operation's ([] without a known leading verb)."""
    lead = lead_verb(query)
    if lead is None:
        return []
    return [lead.before + verb + lead.after for op, verb in _SWAP.items() if op != lead.operation]


@dataclass(frozen=True)
class MissingOperation:
    """What a near-miss asks for and what the tools named after its object offer."""

    verb: str
    operation: str
    objects: tuple[str, ...]  # the request's words that name tools
    offered: tuple[str, ...]  # the operations those tools offer
    tools: tuple[str, ...]  # those tools

    def describe(self) -> str:
        shown = ", ".join(self.tools[:4]) + (", ..." if len(self.tools) > 4 else "")
        return (
            f"no tool about {', '.join(self.objects)} offers '{self.verb}' ({self.operation}); "
            f"they {', '.join(self.offered)} ({shown})"
        )


class OperationIndex:
    """The operations the tools of a session offer, by the (stemmed) nouns of their names."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self._by_noun: dict[str, list[tuple[int, frozenset[str]]]] = {}
        self.names = [t.name for t in tools]
        for position, tool in enumerate(tools):
            words = keyword_tokens(tool.name)
            ops = frozenset().union(*(_NAME_VERB[w] for w in words if w in _NAME_VERB))
            nouns = [w for w in words if w not in _NAME_VERB and len(w) >= 3]
            if not ops or ops == _ANY:
                ops, nouns = _ANY, nouns[-1:]
            for noun in nouns:
                self._by_noun.setdefault(porter_stem(noun), []).append((position, ops))

    def missing(self, query: str, allowed: np.ndarray | None = None) -> MissingOperation | None:
        """The operation ``query`` asks for when no tool (of those ``allowed``) named after its objects
        offers it; None when one does, or when the request has no known verb or no object."""
        lead = lead_verb(query)
        if lead is None:
            return None
        objects: dict[str, list[tuple[int, frozenset[str]]]] = {}
        for word in keyword_tokens(lead.after):
            stem = porter_stem(word)
            named = [(p, ops) for p, ops in self._by_noun.get(stem, []) if allowed is None or allowed[p]]
            if named and word not in _VERB:
                objects.setdefault(word, named)
        if not objects:
            return None
        offered = frozenset().union(*(ops for named in objects.values() for _, ops in named))
        if lead.operation in offered:
            return None
        positions = sorted({p for named in objects.values() for p, _ in named})
        return MissingOperation(
            lead.verb.lower(),
            lead.operation,
            tuple(objects),
            tuple(op for op in OPERATIONS if op in offered),
            tuple(self.names[p] for p in positions),
        )
