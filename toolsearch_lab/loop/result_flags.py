"""Flags on a tool result, for the trace and the stepper: text that looks like instructions injected into
the conversation, and secrets hidden. The result itself is not rewritten for the first (the model still
reads what the tool returned, and a person can judge it); a secret is, because the model is a reader like
a person: the trace keeps the result as the model read it (``secret-hidden``: the tool returned a
registered secret there). A replayed run's view flags the records it showed with a key-shaped string
hidden (:func:`toolsearch_lab.trace.shown_trace`); the transcript itself keeps them.

A tool's output is data, but a web page, a file or an issue body can carry text written for a model: a
closing ``</tool_result>`` followed by a ``<system>`` block, a chat template's special tokens, or "ignore
all previous instructions". A model that takes it for the conversation's own structure may follow it.
"""

from __future__ import annotations

import re

from toolsearch_lab.secrets import SECRET_HIDDEN

__all__ = ["FLAG_TEXT", "SECRET_HIDDEN", "injection_flags"]

ROLE_TAG = "injection:role-tag"
TEMPLATE_TOKEN = "injection:template-token"
OVERRIDE = "injection:override-instructions"

# What each flag means, for people (the stepper, docs/reliability.md).
FLAG_TEXT = {
    ROLE_TAG: "opens or closes a conversation tag (tool_result, system, assistant...) inside the result",
    TEMPLATE_TOKEN: "holds a chat template's special token (<|im_start|>, [INST], <<SYS>>...)",
    OVERRIDE: "tells the model to ignore or replace its instructions",
    SECRET_HIDDEN: "held a secret, shown as ***: a registered one the model never saw, or (a replayed "
    "run) a key-shaped string the log itself keeps",
}

_ROLES = (
    r"(?:tool_result|tool_response|tool_output|function_results?|function_call|system|assistant|user|"
    r"developer|human|instructions?|im_start|im_end)"
)
_PATTERNS = (
    (ROLE_TAG, re.compile(rf"</?\s*{_ROLES}\b[^<>\n]{{0,80}}>", re.IGNORECASE)),
    (
        TEMPLATE_TOKEN,
        re.compile(r"<\|[a-z_]{2,30}\|>|\[/?INST\]|<</?SYS>>|^\s*(?:system|assistant)\s*:\s", re.I | re.M),
    ),
    (
        OVERRIDE,
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|your|"
            r"system)\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules|messages|directions)\b"
            r"|\bnew (?:system )?instructions?\s*:|\byou are now (?:a|an|in)\b",
            re.IGNORECASE,
        ),
    ),
)


def injection_flags(text: str) -> list[str]:
    """The injection flags ``text`` raises (see :data:`FLAG_TEXT`), in a fixed order; [] for plain data."""
    return [flag for flag, pattern in _PATTERNS if pattern.search(text)]
