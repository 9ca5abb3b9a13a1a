"""A trace as it may be shown: every text with its secrets hidden, for a run whose secrets nobody
registered (a replayed log: a key inside a tool result or a user's message).

The trace itself is data and stays exact (its token counts are of the real text); :func:`shown_trace`
makes the copy that ``replay --json``, the replay table and the widgets show.
"""

from __future__ import annotations

from typing import Any

from toolsearch_lab.secrets import SECRET_HIDDEN, hide_keys
from toolsearch_lab.trace.run import RunTrace

__all__ = ["shown_trace"]


def shown_trace(trace: RunTrace) -> RunTrace:
    """A copy of ``trace`` with every registered secret and every key-shaped string in its texts shown as
    ``***`` (:func:`~toolsearch_lab.secrets.hide_keys`), each tool call that had one flagged
    ``secret-hidden``, and a note in ``errors`` saying how many texts were changed; ordinary text is left
    as it is. ``trace`` is not changed."""
    data = trace.to_dict()
    counter = _Hider()
    for iteration in data["iterations"]:
        for i, call in enumerate(iteration["tool_calls"]):
            before = counter.hidden
            call = iteration["tool_calls"][i] = counter.walk(call)
            if counter.hidden > before and SECRET_HIDDEN not in call["flags"]:
                call["flags"].append(SECRET_HIDDEN)
    data = counter.walk(data)
    if counter.hidden:
        data["errors"].append(
            f"{SECRET_HIDDEN}: {counter.hidden} text(s) of this view held a secret or a key-shaped string, "
            "shown as ***; the log itself keeps them"
        )
    return RunTrace.from_dict(data)


class _Hider:
    """Walks a JSON value, hiding secrets in every string, and counts the strings it changed."""

    def __init__(self) -> None:
        self.hidden = 0

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            shown = hide_keys(value)
            self.hidden += shown != value
            return shown
        if isinstance(value, dict):
            return {key: self.walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.walk(item) for item in value]
        return value
