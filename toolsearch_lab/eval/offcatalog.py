"""Requests no tool of a catalog can serve, and the labelled sets abstention is fitted and judged on.

Shipped off-catalog sets (``data/offcatalog``, tab-separated: catalog, kind, query, why, batch):

* ``calibration`` - 291 hand-written requests over five catalogs (github-mcp, spring-demo, livemcpbench,
  metatool, bfcl), **fit data**. ``kind`` is ``near-miss`` (in the catalog's domain but not offered:
  "delete the feature/login branch" where branches can be created and listed) or ``off-domain`` ("book
  a table for two").
* ``github-test`` - 100 hand-written requests over github-mcp (48 near-miss, 52 off-domain), **held out**.
* ``bfcl-irrelevance`` - BFCL's 240 "irrelevance" questions (trivia, maths, travel; Apache-2.0), none
  about GitHub, as off-catalog requests for github-mcp, **held out** and written by others.

:func:`calibration_sets` adds, for three catalogs, requests *another* catalog serves that this one cannot
(generated: MetaTool queries, BFCL turns, GitHub and demo example requests, with the ones that might be
servable here filtered out by their labels and words), and the servable requests of the training sources.
:func:`held_out_sets` are the held-out sets. Nothing here is AgentDojo except its servable tasks in the tests.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolsearch_lab.datafiles import data_path
from toolsearch_lab.eval.datasets import (
    Query,
    catalog_tools as _dataset_catalog_tools,
    load_dataset,
    read_tsv,
)
from toolsearch_lab.model import Tool

__all__ = [
    "KINDS",
    "OFFCATALOG_SETS",
    "LabelledSet",
    "OffCatalogRequest",
    "calibration_sets",
    "catalog_tools",
    "load_offcatalog",
    "held_out_sets",
    "read_requests",
    "user_worded_sets",
]

OFFCATALOG_SETS = {
    "calibration": "291 hand-written requests no tool serves, over 5 catalogs (fit data)",
    "github-test": "100 hand-written requests github-mcp cannot serve, half near-misses (held out)",
    "bfcl-irrelevance": "BFCL's 240 irrelevance questions, none about GitHub, over github-mcp (held out)",
}
_FILES = {
    "calibration": "calibration.tsv",
    "github-test": "test-github.tsv",
    "bfcl-irrelevance": "bfcl-irrelevance.tsv",
}
KINDS = ("near-miss", "off-domain")
SEED = 0


@dataclass(frozen=True)
class OffCatalogRequest:
    id: str
    catalog: str
    kind: str  # "near-miss" or "off-domain"
    query: str
    why: str = ""  # for a near-miss: what the catalog lacks
    batch: str = ""  # who wrote it when ("research", "phase-b", "bfcl")


def load_offcatalog(name: str, catalog: str | None = None) -> list[OffCatalogRequest]:
    """A shipped off-catalog set (:data:`OFFCATALOG_SETS`), optionally only the requests for ``catalog``."""
    if name not in _FILES:
        raise ValueError(f"unknown off-catalog set {name!r}; expected one of {', '.join(OFFCATALOG_SETS)}")
    out = []
    for i, row in enumerate(read_tsv(data_path("offcatalog", _FILES[name]))):
        kind, query = row.get("kind") or "", (row.get("query") or "").strip()
        if kind not in KINDS or not query or not row.get("catalog"):
            raise ValueError(
                f"data/offcatalog/{_FILES[name]} row {i + 2}: needs a catalog, a kind in {KINDS}, a query"
            )
        request = OffCatalogRequest(
            f"{name}-{i:03d}", row["catalog"], kind, query, row.get("why") or "", row.get("batch") or ""
        )
        if catalog is None or request.catalog == catalog:
            out.append(request)
    return out


def read_requests(path: str | os.PathLike[str]) -> list[str]:
    """Your own requests no tool serves: one per line of a UTF-8 text file (blank lines and lines starting
    with ``#`` are skipped; a byte-order mark is allowed)."""
    where = f"off-catalog requests {os.fspath(path)}"
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not UTF-8 text; expected one request per line") from None
    except OSError as exc:
        raise ValueError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    # read_text has already turned \r\n into \n; split() rather than splitlines(), which also breaks at \f
    # and \x1c, so that line numbers are an editor's
    lines = text.split("\n")
    requests = []
    for number, line in enumerate(lines, 1):
        request = line.strip()
        if not request or request.startswith("#"):
            continue
        if "\t" in request:  # a table such as the shipped sets' would become requests with its columns in
            raise ValueError(f"{where}: line {number} holds a tab; expected one request per line, no columns")
        requests.append(request)
    if not requests:
        raise ValueError(f"{where}: no requests; expected one request per line")
    return requests


def catalog_tools(name: str) -> list[Tool]:
    """The tools of a catalog the off-catalog sets name (``spring-demo``: the 26 tools of Spring's demo)."""
    if name == "spring-demo":
        from toolsearch_lab.eval.scenarios import load_scenario  # scenarios import the catalogs on load

        return list(load_scenario("spring-demo").tools)
    return _dataset_catalog_tools(name)


@dataclass(frozen=True)
class LabelledSet:
    """Requests over one catalog, all servable (``label`` 1, with their relevant tools) or all off-catalog
    (``label`` 0). ``source``: the catalog a generated off-catalog request comes from (where it *is*
    servable), else None."""

    name: str
    catalog: str
    label: int
    queries: tuple[str, ...]
    relevant: tuple[tuple[str, ...], ...] = ()
    source: str | None = None


def _sample(items: list, n: int) -> list:
    return items if len(items) <= n else random.Random(SEED).sample(items, n)


# Which generated requests might be servable by the target catalog, and so are left out: by the tools
# that serve them (labels) and by their words.
_CODE_PLUGINS = frozenset(
    [
        "copilot",
        "hackit_web_scanner",
        "magi_codex",
        "deployscript",
        "dev",
        "RepoTool",
        "SSH",
        "AutoInfra1",
        "AI2sql",
        "AppyPieAIAppBuilder",
        "Algorithma",
        "Creaticode_Extension_of_MIT_Scratch",
        "noteable",
        "webhooks",
        "web_requests",
        "cloudflare_radar",
        "website_performance_insights",
        "web_scraper",
        "wpinteract",
        "Zapier",
        "chat_with_workspace",
        "WebsiteTool",
        "URLTool",
        "PDF_URLTool",
    ]
)
_GITHUB_WORDS = re.compile(
    r"git|repo|code|commit|pull|issue|branch|program|develop|bug|deploy|merge|fork|release|workflow|software",
    re.I,
)
_BFCL_PLUGINS = frozenset(
    [
        "FinanceTool",
        "ExchangeTool",
        "TripTool",
        "TripAdviceTool",
        "calculator",
        "WeatherTool",
        "airqualityforeast",
        "NotesTool",
        "EmailByNylas",
        "portfoliopilot",
        "QuiverQuantitative",
        "Magnetis",
        "Tax_Calculator",
        "fundsdbsearch",
        "SuperchargeMyEV",
        "AusPetrolPrices",
        "CarYardBard",
        "social_media_muse",
        "socialsearch",
        "timeport",
        "Now",
        "hdbcarpark",
        "SASpeedCameras",
        "korea_subway",
        "MapTool",
        "local",
    ]
)
_BFCL_WORDS = re.compile(
    r"stock|share|invest|trad|flight|airport|trip|travel|tweet|twitter|file|folder|director|car\b|vehicle|"
    r"engine|fuel|tire|tyre|ticket|message|currency|exchange|calculat|math|number|temperature|login|"
    r"credit card|budget|insurance",
    re.I,
)
_TIME_WORDS = re.compile(r"\btime\b|weather|date", re.I)
_GITHUB_FILE_TOOLS = re.compile(
    "issue|file|push|tree|blame|notification"
)  # GitHub tools BFCL's tools overlap
_BFCL_OFF_GITHUB = ("MathAPI", "TravelAPI", "VehicleControlAPI", "TradingBot", "TwitterAPI", "MessageAPI")


def _spring_examples() -> list[tuple[str, str]]:
    examples = json.loads(data_path("examples", "spring-demo.json").read_text(encoding="utf-8"))
    return [(text, tool) for tool, texts in examples.items() for text in texts]


def _not(pattern: re.Pattern[str], labels: frozenset[str] = frozenset()) -> Callable[[Query], bool]:
    """A filter that keeps the queries none of whose words match ``pattern`` and no relevant tool is in
    ``labels``: requests that might be servable by the target catalog are left out."""
    return lambda q: not pattern.search(q.query) and not labels & set(q.relevant_tools)


def _generated() -> list[LabelledSet]:
    metatool, turns = load_dataset("metatool"), load_dataset("bfcl-turns")
    github = load_dataset("github-examples")
    spring = [Query(str(i), text, (tool,)) for i, (text, tool) in enumerate(_spring_examples())]
    github_no_files = [q for q in github.queries if not _GITHUB_FILE_TOOLS.search(q.relevant_tools[0])]
    spring_no_time = [q for q in spring if q.relevant_tools[0] not in ("weather", "currentTime")]
    plans = [  # (target catalog, source catalog, the source's requests, the filter, how many)
        ("github-mcp", "metatool", metatool.queries, _not(_GITHUB_WORDS, _CODE_PLUGINS), 300),
        (
            "github-mcp",
            "bfcl",
            [q for q in turns.queries if q.group in _BFCL_OFF_GITHUB],
            _not(_GITHUB_WORDS),
            200,
        ),
        ("github-mcp", "spring-demo", spring, lambda q: True, 200),
        ("bfcl", "github-mcp", github_no_files, _not(_BFCL_WORDS), 200),
        ("bfcl", "metatool", metatool.queries, _not(_BFCL_WORDS, _BFCL_PLUGINS), 300),
        ("bfcl", "spring-demo", spring_no_time, _not(_BFCL_WORDS), 200),
        ("spring-demo", "github-mcp", github.queries, lambda q: True, 200),
        ("spring-demo", "bfcl", turns.queries, _not(_TIME_WORDS), 200),
    ]
    out = []
    for target, source, queries, keep, n in plans:
        picked = _sample([q.query for q in queries if keep(q)], n)
        out.append(
            LabelledSet(f"generated: {source} requests for {target}", target, 0, tuple(picked), source=source)
        )
    return out


def _labelled(name: str, catalog: str, queries: Sequence[Query]) -> LabelledSet:
    return LabelledSet(
        name, catalog, 1, tuple(q.query for q in queries), tuple(q.relevant_tools for q in queries)
    )


def _servable() -> list[LabelledSet]:
    live = load_dataset("livemcpbench")
    examples = json.loads(data_path("examples", "livemcpbench.json").read_text(encoding="utf-8"))
    live_examples = [
        Query(str(i), text, (tool,)) for i, (tool, texts) in enumerate(examples.items()) for text in texts
    ]
    turns, tasks = load_dataset("bfcl-turns"), load_dataset("bfcl-tasks")
    spring = [Query(str(i), text, (tool,)) for i, (text, tool) in enumerate(_spring_examples())]
    return [
        _labelled("servable: GitHub example requests", "github-mcp", load_dataset("github-examples").queries),
        _labelled("servable: demo example requests", "spring-demo", spring),
        _labelled("servable: LiveMCPBench tasks and example requests", "livemcpbench",
                  live.queries + _sample(live_examples, 300)),
        _labelled("servable: MetaTool queries", "metatool", _sample(load_dataset("metatool").queries, 400)),
        _labelled("servable: BFCL turns and tasks", "bfcl",
                  _sample(turns.queries, 200) + _sample(tasks.queries, 100)),
    ]  # fmt: skip


def calibration_sets() -> list[LabelledSet]:
    """The fit data: hand-written off-catalog requests per catalog, generated ones, servable ones."""
    hand: dict[str, list[str]] = {}
    for request in load_offcatalog("calibration"):
        hand.setdefault(request.catalog, []).append(request.query)
    written = [LabelledSet(f"hand-written for {c}", c, 0, tuple(qs)) for c, qs in hand.items()]
    return written + _generated() + _servable()


def user_worded_sets(scenarios: Sequence[str] | None = None, label: str = "user-worded") -> list[LabelledSet]:
    """Servable requests in users' words over the calibration catalogs, none of them fitted on: the step
    needs of the user-worded ``scenarios`` (default: every shipped one), one set per catalog (GitHub,
    LiveMCPBench, the demo's) named "<label> steps over <catalog>", and, by default, the GitHub paraphrases
    (held out)."""
    from toolsearch_lab.eval.scenarios import list_scenarios, load_scenario  # scenarios load the catalogs

    steps: dict[str, list[Query]] = {}
    for name in scenarios if scenarios is not None else list_scenarios("user"):
        scenario = load_scenario(name)
        for i, step in enumerate(s for s in scenario.steps if s.servable):
            query = Query(f"{name}/{i}", step.need, step.expected_tools + step.also_accepted)
            steps.setdefault(scenario.tool_set, []).append(query)
    found = [_labelled(f"{label} steps over {c}", c, qs) for c, qs in steps.items()]
    if scenarios is not None:
        return found
    return [*found, _labelled("github-paraphrases", "github-mcp", load_dataset("github-paraphrases").queries)]


def held_out_sets() -> list[LabelledSet]:
    """The held-out sets: off-catalog requests over github-mcp, servable requests nothing was fitted on."""
    off = [
        LabelledSet(name, "github-mcp", 0, tuple(r.query for r in load_offcatalog(name)))
        for name in ("github-test", "bfcl-irrelevance")
    ]
    paraphrases = _labelled("github-paraphrases", "github-mcp", load_dataset("github-paraphrases").queries)
    return [*off, paraphrases, _labelled("agentdojo", "agentdojo", load_dataset("agentdojo").queries)]
