"""Retrieval datasets: a tool catalog plus queries labelled with the tools that answer them.

File format (``normalized.json``)::

    {"source": "...",
     "tools":   [{"name", "description", "parameters", "category"?}, ...],
     "queries": [{"id"?, "query", "relevant_tools": [tool name, ...]}, ...]}

Shipped (:data:`SHIPPED_DATASETS`, ``data/*/PROVENANCE.md`` for each source and licence):

* ``metatool`` (199 tools, 21,111 single-intent queries) and ``livemcpbench`` (510 MCP tools, 94 multi-step
  tasks) take their tools from :func:`catalog.load_catalog`, so they carry the same fixes as the shipped
  catalogs (MetaTool's ``PDF&URLTool`` -> ``PDF_URLTool``, LiveMCPBench server categories); query labels
  are mapped through the same renames.
* ``agentdojo`` (97 multi-step user tasks over 69 tools of 9 servers) is a **held-out** benchmark: nothing
  in the package is trained or tuned on it. ``bfcl-turns`` / ``bfcl-tasks`` (BFCL's multi-turn set, 8 API
  servers) are development data.
* ``github-examples`` (the shipped example requests, ``data/examples``), ``github-paraphrases`` (held out)
  and ``github-prerequisites`` / ``bfcl-prerequisites`` (requests whose ids must be looked up first) are
  hand-written tab-separated files over a shipped catalog: ``query`` and ``relevant`` (tool names separated
  by spaces) columns.

A query's ``group`` is its suite, API server or catalog where the source gives one (per-group figures).
"""

from __future__ import annotations

import csv
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsearch_lab.catalog.container import CatalogError, load_catalog, read_json_file, tool_from_record
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.model import Tool

SHIPPED_DATASETS = {
    "metatool": "MetaTool: 199 ChatGPT-plugin tools, 21,111 queries (1-2 relevant tools each)",
    "livemcpbench": "LiveMCPBench: 510 MCP tools, 94 multi-step tasks (1-7 relevant tools each)",
    "agentdojo": "AgentDojo v1.2.2: 69 tools of 9 servers, 97 multi-step user tasks (held out)",
    "bfcl-turns": "BFCL v4 multi-turn: 128 tools of 8 API servers, 731 user turns",
    "bfcl-tasks": "BFCL v4 multi-turn: 128 tools of 8 API servers, 200 tasks (a task's turns as one request)",
    "github-examples": "the 585 shipped example requests over the github-mcp catalog (5 per tool)",
    "github-paraphrases": "67 hand-written requests over the github-mcp catalog (held out)",
    "github-prerequisites": "40 requests over github-mcp whose issue, PR or alert must be looked up first",
    "bfcl-prerequisites": "20 requests over BFCL's tools whose order, tweet or user must be looked up first",
}
# Shipped datasets that are files in load_dataset's format: name -> path under data/.
_JSON_DATASETS = {
    "agentdojo": ("agentdojo", "normalized.json"),
    "bfcl-turns": ("bfcl", "turns.json"),
    "bfcl-tasks": ("bfcl", "tasks.json"),
}  # the folder is the catalog's name (the hand-written sets call BFCL's tools "bfcl")
# Shipped hand-written datasets: name -> (catalog, TSV path under data/, the TSV's catalog column value).
_TSV_DATASETS = {
    "github-paraphrases": ("github-mcp", ("paraphrases", "github-mcp.tsv"), None),
    "github-prerequisites": ("github-mcp", ("prerequisites", "tasks.tsv"), "github-mcp"),
    "bfcl-prerequisites": ("bfcl", ("prerequisites", "tasks.tsv"), "bfcl"),
}
# Catalogs the hand-written sets name that are not shipped catalogs: their tools come from a dataset.
_DATASET_CATALOGS = {"bfcl": "bfcl-turns", "agentdojo": "agentdojo"}


class DatasetError(ValueError):
    """A dataset file is malformed. ``problems`` lists every problem found (one line each)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


@dataclass(frozen=True)
class Query:
    id: str
    query: str
    relevant_tools: tuple[str, ...]
    group: str | None = None  # suite, API server or catalog, where the source says


@dataclass
class Dataset:
    tools: list[Tool]
    queries: list[Query]
    name: str
    problems: list[str] = field(default_factory=list)  # filled only by strict=False loads
    catalog: str | None = None  # the shipped catalog the tools are, when they are one
    # Tool name -> server, for a catalog of several servers (server-level recall); {} for one server.
    servers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.servers:
            cats = {t.name: t.category for t in self.tools if t.category}
            if len(cats) == len(self.tools) and len(set(cats.values())) > 1:
                self.servers = cats

    def __repr__(self) -> str:
        extra = f", {len(self.problems)} problems" if self.problems else ""
        return f"Dataset({self.name!r}, {len(self.tools)} tools, {len(self.queries)} queries{extra})"

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def subset(self, n: int, *, seed: int = 0) -> Dataset:
        """A reproducible random sample of ``n`` queries over the same tools (quick notebook runs)."""
        if n >= len(self.queries):
            return self
        picked = sorted(random.Random(seed).sample(range(len(self.queries)), n))
        queries = [self.queries[i] for i in picked]
        return Dataset(self.tools, queries, f"{self.name}[{n}]", catalog=self.catalog, servers=self.servers)


def load_dataset(name_or_path: str | os.PathLike, *, strict: bool = True) -> Dataset:
    """A shipped dataset by name or a ``normalized.json``-shaped file.

    ``strict=True`` raises :class:`DatasetError` at the first problem, naming the entry (``tools[3]
    'x'``, ``queries[17] (id 'q9')``) and what is wrong. ``strict=False`` skips bad entries and returns the
    rest with every problem listed in ``dataset.problems``.
    """
    if isinstance(name_or_path, str) and name_or_path in SHIPPED_DATASETS:
        if name_or_path in _JSON_DATASETS:
            folder, file = _JSON_DATASETS[name_or_path]
            dataset = parse_dataset(read_json_file(data_path(folder, file)), name=name_or_path, strict=strict)
            dataset.catalog = folder
            return dataset
        if name_or_path in _TSV_DATASETS:
            return _load_tsv(name_or_path, strict)
        if name_or_path == "github-examples":
            return _github_examples()
        return _load_shipped(name_or_path, strict)
    path = Path(name_or_path)
    if not path.is_file():
        shipped = ", ".join(repr(k) for k in SHIPPED_DATASETS)
        raise DatasetError(
            f"unknown dataset {str(name_or_path)!r}: not a shipped dataset ({shipped}) and no such file"
        )
    try:
        doc = read_json_file(path)  # bounded nesting depth and strict UTF-8, with the offset of a bad byte
    except CatalogError as exc:
        raise DatasetError(str(exc)) from None
    return parse_dataset(
        doc, name=path.stem if path.stem != "normalized" else path.parent.name, strict=strict
    )


def _load_shipped(name: str, strict: bool) -> Dataset:
    catalog = load_catalog(name)
    doc = json.loads(data_path(name, "normalized.json").read_text(encoding="utf-8"))
    renames = getattr(catalog, "renames", {}) or {}
    for q in doc.get("queries", []):
        if isinstance(q, dict) and isinstance(q.get("relevant_tools"), list):
            q["relevant_tools"] = [renames.get(r, r) for r in q["relevant_tools"]]
    dataset = _parse_queries(doc, list(catalog.tools), name=name, strict=strict, problems=[])
    dataset.catalog = name
    if name == "livemcpbench":  # its tools' category is the server's category; the server is in tools.json
        dataset.servers = _livemcpbench_servers()
    return dataset


def _livemcpbench_servers() -> dict[str, str]:
    """Tool -> LiveMCPBench server, the first server that defines the name (as the shipped catalog keeps)."""
    out: dict[str, str] = {}
    for server in read_json_file(data_path("livemcpbench", "tools.json")):
        for listing in server["tools"].values():
            for raw in listing["tools"]:
                out.setdefault(raw.get("name"), server["name"])
    return out


def catalog_tools(name: str) -> list[Tool]:
    """The tools of a catalog the shipped hand-written sets name: a shipped catalog, or the tools of a
    shipped dataset (``bfcl``: BFCL's 128 tools; ``agentdojo``: AgentDojo's 69)."""
    if name in _DATASET_CATALOGS:
        return load_dataset(_DATASET_CATALOGS[name]).tools
    return list(load_catalog(name).tools)


def read_tsv(path: Path) -> list[dict[str, str]]:
    """The rows of a tab-separated file with a header line, as dicts (a shipped hand-written set)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _load_tsv(name: str, strict: bool) -> Dataset:
    catalog, parts, column = _TSV_DATASETS[name]
    rows = [r for r in read_tsv(data_path(*parts)) if column is None or r.get("catalog") == column]
    records = [
        {
            "id": f"{name}-{i:03d}",
            "query": r.get("query"),
            "relevant_tools": (r.get("relevant") or "").split(),
        }
        for i, r in enumerate(rows)
    ]
    dataset = _parse_queries(
        {"queries": records}, catalog_tools(catalog), name=name, strict=strict, problems=[]
    )
    dataset.catalog = catalog
    return dataset


def _github_examples() -> Dataset:
    """The shipped example requests (``data/examples/github-mcp.json``): each labelled with its own tool."""
    examples = json.loads(data_path("examples", "github-mcp.json").read_text(encoding="utf-8"))
    queries = [
        Query(f"{tool}-{i}", text, (tool,))
        for tool, texts in examples.items()
        for i, text in enumerate(texts)
    ]
    return Dataset(list(load_catalog("github-mcp").tools), queries, "github-examples", catalog="github-mcp")


def parse_dataset(doc: Any, *, name: str = "dataset", strict: bool = True) -> Dataset:
    """A :class:`Dataset` from an already-parsed JSON document (see :func:`load_dataset`)."""
    problems: list[str] = []

    def problem(message: str) -> None:
        if strict:
            raise DatasetError(f"{name}: {message}")
        problems.append(message)

    if not isinstance(doc, dict):
        raise DatasetError(
            f"{name}: expected a JSON object with 'tools' and 'queries', got {type(doc).__name__}"
        )
    for key in ("tools", "queries"):
        if key not in doc:
            raise DatasetError(f"{name}: missing top-level field {key!r}")
        if not isinstance(doc[key], list):
            raise DatasetError(f"{name}: field {key!r} must be a list, got {type(doc[key]).__name__}")

    tools: list[Tool] = []
    seen: dict[str, int] = {}
    for i, record in enumerate(doc["tools"]):
        label = f"tools[{i}]" + (
            f" {record.get('name')!r}" if isinstance(record, dict) and "name" in record else ""
        )
        try:
            tool = tool_from_record(record, "dataset", index=i)
        except CatalogError as exc:
            problem(f"{label}: {exc.problem}")
            continue
        if tool.name in seen:
            problem(f"{label}: duplicate tool name (first defined at tools[{seen[tool.name]}])")
            continue
        seen[tool.name] = i
        tools.append(tool)
    return _parse_queries(doc, tools, name=name, strict=strict, problems=problems)


def _parse_queries(doc: dict, tools: list[Tool], *, name: str, strict: bool, problems: list[str]) -> Dataset:
    def problem(message: str) -> None:
        if strict:
            raise DatasetError(f"{name}: {message}")
        problems.append(message)

    known = {t.name for t in tools}
    queries: list[Query] = []
    ids: set[str] = set()
    for i, record in enumerate(doc.get("queries", [])):
        checked = _checked_query(record, i, known)
        if isinstance(checked, str):
            problem(checked)
        elif checked.id in ids:
            problem(f"{_query_label(record, i)}: duplicate query id {checked.id!r}")
        else:
            ids.add(checked.id)
            queries.append(checked)
    if not tools:
        problem("no usable tools")
    if not queries:
        problem("no usable queries")
    return Dataset(tools, queries, name, problems)


def _query_label(record: dict, i: int) -> str:
    """``queries[i]``, plus the id when the record gives one."""
    return f"queries[{i}]" + (f" (id {str(record['id'])!r})" if "id" in record else "")


def _checked_query(record: Any, i: int, known: set[str]) -> Query | str:
    """The query of one record, or the problem with it (naming the record) as a string."""
    if not isinstance(record, dict):
        return f"queries[{i}]: expected an object, got {type(record).__name__}"
    qid = record.get("id", str(i))
    if not isinstance(qid, (str, int)) or isinstance(qid, bool):
        return f"queries[{i}]: 'id' must be a string, got {type(qid).__name__}"
    label = _query_label(record, i)
    text = record.get("query")
    rel = record.get("relevant_tools")
    if "query" not in record:
        return f"{label}: missing field 'query'"
    if not isinstance(text, str) or not text.strip():
        return f"{label}: 'query' must be a non-empty string, got {text!r:.60}"
    if "relevant_tools" not in record:
        return f"{label}: missing field 'relevant_tools'"
    if not isinstance(rel, list) or not rel or not all(isinstance(r, str) for r in rel):
        return f"{label}: 'relevant_tools' must be a non-empty list of tool names, got {rel!r:.80}"
    unknown = [r for r in rel if r not in known]
    if unknown:
        return f"{label}: unknown relevant tool(s) {', '.join(repr(u) for u in unknown)} (not in 'tools')"
    group = record.get("domain", record.get("group"))
    # Order kept, duplicates dropped: a tool counted twice would inflate recall.
    return Query(str(qid), text, tuple(dict.fromkeys(rel)), group if isinstance(group, str) else None)
