"""Which tools a search may return: the destructive-tool policy (not a Spring setting; see docs/loop.md).

A tool may be destructive as MCP reads its annotations (:attr:`~toolsearch_lab.model.Tool.may_be_destructive`,
ToolAnnotations: ``readOnlyHint`` defaults to false, ``destructiveHint`` to true): it declares
``destructiveHint: true``, or it is not marked read-only and says nothing else (a tool without annotations
too). The policy decides what happens to such tools in search results:

* ``"include"`` (the default, Spring's behaviour): nothing is held back;
* ``"exclude"``: they never appear in search results;
* ``"ask"``: they appear only when the query asks for them, by a destructive verb
  (:data:`DESTRUCTIVE_WORDS`: "delete", "drop", "reset", ...) or by the tool's exact name.

The rule looks at the query only, never at the model's other arguments: the meta-tool's schema stays
Spring's.

A tool's function that asks a person before it runs (the CLI's ``--destructive ask``) raises
:class:`ToolCallRefused` when the call is declined or there is no one to ask: the loop answers the model
with an error result, records the call as not run (``FailureKind.DECLINED`` or ``REFUSED``) and stops the run
with the stop reason ``"refused"``, so a grade never counts it as done.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, get_args

from toolsearch_lab.model import Tool
from toolsearch_lab.trace import FailureKind

__all__ = [
    "DESTRUCTIVE_POLICIES",
    "DESTRUCTIVE_WORDS",
    "DestructivePolicy",
    "ToolCallRefused",
    "asks_for_destructive",
    "hidden_tools",
]

DestructivePolicy = Literal["include", "exclude", "ask"]
DESTRUCTIVE_POLICIES: tuple[DestructivePolicy, ...] = get_args(DestructivePolicy)
# Verbs of the changes a destructive tool makes, with their inflections, matched as whole words (so the
# "reset" of "git_reset" counts, the "drop" of "dropdown" does not).
DESTRUCTIVE_WORDS = frozenset(
    {
        *("delete", "deletes", "deleted", "deleting", "deletion"),
        *("remove", "removes", "removed", "removing", "removal"),
        *("drop", "drops", "dropped", "dropping"),
        *("reset", "resets", "resetting"),
        *("erase", "erases", "erased", "erasing"),
        *("destroy", "destroys", "destroyed", "destroying"),
        *("truncate", "truncates", "truncated", "truncating"),
        *("purge", "purges", "purged", "purging"),
        *("wipe", "wipes", "wiped", "wiping"),
        *("write", "writes", "writing", "overwrite", "overwrites", "overwriting"),
        *("kill", "kills", "killed", "killing"),
        *("terminate", "terminates", "terminated", "terminating"),
        *("cancel", "cancels", "cancelled", "canceled", "cancelling", "canceling"),
        *("revoke", "revokes", "revoked", "revoking"),
        *("uninstall", "uninstalls", "uninstalled", "uninstalling"),
        *("discard", "discards", "discarded", "discarding"),
        *("clear", "clears", "cleared", "clearing"),
        *("rm", "del", "unlink"),
    }
)
_WORD = re.compile(r"[a-z]+")
_NAME_CHARS = r"A-Za-z0-9_.:-"


class ToolCallRefused(PermissionError):
    """A tool call that needed a person's yes and did not get it: ``declined`` (they said no) or not (there
    was no one to ask, e.g. no terminal). The loop records it as not run and stops the run."""

    def __init__(self, message: str, *, declined: bool) -> None:
        super().__init__(message)
        self.declined = declined

    @property
    def failure(self) -> FailureKind:
        return FailureKind.DECLINED if self.declined else FailureKind.REFUSED


def asks_for_destructive(query: str | None) -> bool:
    """The query contains one of :data:`DESTRUCTIVE_WORDS` (case-insensitive, as a whole word; ``_`` and
    other non-letters separate words)."""
    return any(w in DESTRUCTIVE_WORDS for w in _WORD.findall((query or "").casefold()))


def _names_tool(query: str, name: str) -> bool:
    return (
        re.search(rf"(?<![{_NAME_CHARS}]){re.escape(name)}(?![{_NAME_CHARS}])", query, re.IGNORECASE)
        is not None
    )


def hidden_tools(tools: Iterable[Tool], policy: str, query: str | None) -> frozenset[str]:
    """The names of ``tools`` that a search for ``query`` must not return under ``policy``."""
    if policy == "include":
        return frozenset()
    destructive = [t.name for t in tools if t.may_be_destructive]
    if policy == "exclude" or not destructive:
        return frozenset(destructive)
    if asks_for_destructive(query):
        return frozenset()
    return frozenset(n for n in destructive if not _names_tool(query or "", n))
