"""BFCL live: requests real users contributed to the Berkeley Function Calling Leaderboard, each over its own
catalog of 1 to 12 functions (``data/bfcl-live``, Apache-2.0; PROVENANCE.md there says how it was made).

The lab's only real users' words over catalogs of one to three tools, so the one place a rule by catalog
size can be measured. Each request is servable (the functions its ground-truth calls use) or not (BFCL's
"irrelevance": no function of its catalog serves it, and the right answer calls none). The catalogs are
split in two, fixed before any figure was computed: ``choice`` (the default abstention setting is chosen on
whole runs over it) and ``held-out`` (never fitted, tuned or chosen on).

* :func:`load_bfcl_live` - the requests, optionally of one split, each with its catalog's tools.
* :func:`search_each` - every request searched over its own catalog by one index (each catalog indexed
  once, its requests searched together).
* :func:`live_scenario` - one request as a one-step scenario over its own catalog, for whole runs: the step
  succeeds when a function that serves it runs (any of them: BFCL's "relevance" and "parallel_multiple"
  requests have several), or, for an unservable request, when none runs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.datafiles import data_path
from toolsearch_lab.eval.metrics import search_queries
from toolsearch_lab.eval.scenarios.format import Scenario, scenario_from_dict
from toolsearch_lab.model import SearchResponse, Tool

__all__ = ["CATEGORIES", "SPLITS", "SYSTEM", "LiveRequest", "live_scenario", "load_bfcl_live", "search_each"]

SPLITS = ("choice", "held-out")
CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "relevance", "irrelevance")
# Our own words: what a deployment over a catalog of a few functions would tell the model.
SYSTEM = "You are a helpful assistant. Use a tool when one serves the request; otherwise answer without one."


@dataclass(frozen=True)
class LiveRequest:
    """One user request over its own catalog (``tools``); ``relevant`` is empty when no function serves it."""

    id: str
    category: str
    split: str
    catalog: str  # the catalog's key: requests over identical catalogs share it
    query: str
    relevant: tuple[str, ...]
    tools: tuple[Tool, ...]
    arguments: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # per relevant tool, BFCL's first values

    @property
    def servable(self) -> bool:
        return bool(self.relevant)


@functools.lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    path = data_path("bfcl-live", "requests.json")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def load_bfcl_live(split: str | None = None) -> list[LiveRequest]:
    """Every request (``split``: only those of ``"choice"`` or ``"held-out"``), in the file's order."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown BFCL live split {split!r}; expected one of {list(SPLITS)} or None")
    doc = _raw()
    catalogs = {
        key: tuple(Tool(t["name"], t["description"], t["parameters"]) for t in tools)
        for key, tools in doc["catalogs"].items()
    }
    out = []
    for row in doc["requests"]:
        if split is not None and row["split"] != split:
            continue
        out.append(
            LiveRequest(
                row["id"],
                row["category"],
                row["split"],
                row["catalog"],
                row["query"],
                tuple(row["relevant_tools"]),
                catalogs[row["catalog"]],
                dict(row["arguments"]),
            )
        )
    return out


def search_each(index: Any, requests: Sequence[LiveRequest], depth: int = 10) -> list[SearchResponse]:
    """``index``'s response to each request over the request's own catalog, in ``requests``' order."""
    by_catalog: dict[str, list[int]] = {}
    for i, request in enumerate(requests):
        by_catalog.setdefault(request.catalog, []).append(i)
    out: list[SearchResponse | None] = [None] * len(requests)
    for key, members in by_catalog.items():
        session = f"bfcl-live-{key}"
        index.index_tools(session, list(requests[members[0]].tools))
        try:
            found = search_queries(index, session, [requests[i].query for i in members], depth)
        finally:
            index.clear_index(session)
        for i, response in zip(members, found, strict=True):
            out[i] = response
    return [r for r in out if r is not None]


def live_scenario(request: LiveRequest) -> Scenario:
    """``request`` as a one-step, user-worded scenario over its own catalog (see the module docstring); the
    step's data are the ground truth's arguments, so a tool called is called as the user asked."""
    first = request.relevant[:1]
    step = {
        "need": request.query,
        "data": request.arguments.get(first[0], {}) if first else {},
        "expected_tools": list(first),
        "also_accepted": list(request.relevant[1:]),
    }
    raw = {
        "name": f"bfcl-live-{request.id}",
        "title": f"BFCL live {request.category} request {request.id} ({len(request.tools)} functions)",
        "system": SYSTEM,
        "user_request": request.query,
        "wording": "user",
        "family": "bfcl-live",
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools
        ],
        "steps": [step],
    }
    return scenario_from_dict(raw, f"BFCL live request {request.id}")
