"""Pinning: some tools always loaded beside tool search.

:class:`Pinned` wraps a search strategy: the pinned tools go first in every request's tools array (after
``toolSearchTool``), so they are callable without a search and form a stable, cacheable prefix; everything
else is found as before. It is Claude Code's ``alwaysLoad`` (``_meta["anthropic/alwaysLoad"]``) and the ask
"keep the 3-5 most used tools loaded".

Which tools to pin, from measured usage, is an evaluation: :func:`toolsearch_lab.eval.pins.recommend_pins`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolsearch_lab.loop.strategy import RequestPlan, RequestView, Strategy, Wrapper
from toolsearch_lab.model import Tool

__all__ = ["Pinned"]


class Pinned(Wrapper):
    """``inner`` (a strategy that offers search) with ``tools`` always in the tools array, first, in the order
    given (none: ``inner`` as it is, what a recommendation that pins nothing gives). A pinned name the catalog
    does not have is an error when the run starts."""

    def __init__(self, inner: Strategy, tools: Sequence[str]) -> None:
        if not isinstance(inner, Strategy) or isinstance(inner, Pinned) or not inner.offers_search:
            raise ValueError(
                f"Pinned: inner must be a strategy that offers search (not Pinned), got {inner!r}"
            )
        if isinstance(tools, str) or not isinstance(tools, Sequence):
            raise ValueError(f"Pinned: tools must be a list of tool names, got {tools!r:.80}")
        names = list(tools)
        bad = [n for n in names if not isinstance(n, str) or not n.strip()]
        if bad or len(set(names)) != len(names):
            raise ValueError(f"Pinned: tool names must be distinct non-blank text, got {names!r:.200}")
        super().__init__(inner, "pinned")
        self.tools = names
        if inner.name == "search-only":
            self.name = "pinned"

    def system_suffix(self, default: str, registered: Mapping[str, Tool]) -> str:
        missing = [n for n in self.tools if n not in registered]
        if missing:  # the first call that sees the catalog: refuse before any request is made
            raise ValueError(f"Pinned: {missing} are not in the catalog, so they cannot be pinned")
        return self.inner.system_suffix(default, registered)

    def plan(self, view: RequestView) -> RequestPlan:
        plan = self.inner.plan(view)
        pinned = [n for n in self.tools if n in view.registered]
        return RequestPlan(
            pinned + [n for n in plan.tools_array if n not in pinned],
            plan.offers_search,
            [n for n in plan.inline if n not in pinned],
            plan.loaded,
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "pinned": list(self.tools), "inner": self.inner.describe()}
