"""The wording lesson's heavy tables, shipped as data: every scenario run by every index and simulated agent,
with the tools' descriptions as shipped and with example requests, and where each step's tool stands before
any search.

Computing them takes minutes (several hundred runs, and the example requests must be embedded), so
``tools/build_wording_matrix.py`` writes them to ``data/course/wording_matrix.json``; notebook 05 loads that
file, and the tables of docs/eval.md and docs/wording-table.md are rendered from it
(:func:`~toolsearch_lab.eval.scenarios.report.markdown_tables`, checked by ``tests/test_wording_matrix.py``).
``load_wording_matrix(recompute=True)`` computes the same tables live. The file records a digest of what
the tables are computed from (:func:`inputs_digest`): the data (scenarios, glossary, example requests, the
catalogs the scenarios use), the code (every module of the package but the two front ends, which the core
never imports) and the shipped resources (vectors, models), with the package version. A shipped file whose
digest no longer matches is refused, naming the script that rebuilds it. Conversation scenarios (several
user turns) are not part of the wording tables, nor of their digest.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from toolsearch_lab.atomic import write_text
from toolsearch_lab.datafiles import data_dir
from toolsearch_lab.eval.ceiling import step_ranks
from toolsearch_lab.eval.scenarios import (
    buildable_indexes,
    list_scenarios,
    load_scenario,
    scenario_matrix,
)
from toolsearch_lab.version import __version__

FORMAT = 2
RELATIVE_PATH = ("course", "wording_matrix.json")
EXAMPLES_INDEX = "hybrid"  # the one index the example-request and ceiling tables use
EXAMPLES_AGENT = "semantic"
_INPUT_DIRS = ("scenarios", "agent", "examples", "mcp_catalogs", "livemcpbench")
_PACKAGE = Path(__file__).resolve().parents[1]
_FRONT_ENDS = (
    "cli",
    "ui",
)  # the core never imports them (pyproject.toml's contracts): they cannot move a figure


def shipped_path() -> Path:
    return data_dir().joinpath(*RELATIVE_PATH)


def inputs_digest() -> str:
    """SHA-256 over what the tables are computed from: the package version, the data (the scenarios the
    tables cover, the glossary, the example requests, the catalogs), the package's code but its front ends,
    and its shipped resources."""
    digest = hashlib.sha256(__version__.encode())
    for folder in _INPUT_DIRS:
        for path in sorted((data_dir() / folder).rglob("*.json")):
            if folder == "scenarios" and not _in_tables(path):
                continue
            _add(digest, f"data/{path.relative_to(data_dir()).as_posix()}", path)
    code = [p for p in _PACKAGE.rglob("*.py") if p.relative_to(_PACKAGE).parts[0] not in _FRONT_ENDS]
    resources = [p for p in (_PACKAGE / "resources").rglob("*") if p.is_file()]
    for path in sorted(code) + sorted(resources):
        _add(digest, path.relative_to(_PACKAGE).as_posix(), path)
    return digest.hexdigest()


def _add(digest: Any, name: str, path: Path) -> None:
    digest.update(f"{name}\0".encode())
    digest.update(path.read_bytes())


def _in_tables(path: Path) -> bool:
    """One user request (a conversation has turns) whose every step a tool serves: the tables compare
    wordings of servable work; a scenario with requests no tool serves measures abstention instead."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or "turns" in raw:
        return False
    if isinstance(raw.get("wording_of"), str):  # a second wording has the steps of its original
        return _in_tables(path.with_name(f"{raw['wording_of']}.json"))
    return all(step.get("expected_tools") for step in raw.get("steps", []))


def _single_requests() -> list[str]:
    """The shipped scenarios the tables cover (:func:`_in_tables`)."""
    folder = data_dir() / "scenarios"
    return [n for n in list_scenarios() if _in_tables(folder / f"{n}.json")]


def build_wording_matrix(names: list[str] | None = None) -> dict[str, Any]:
    """Compute every table (``names``: a subset of the scenarios, for a quick look or a test)."""
    names = list(names) if names is not None else _single_requests()
    indexes, left_out = buildable_indexes()
    ceiling: list[dict[str, Any]] = []
    for examples in (False, True):
        for name in names:
            ranks = step_ranks(load_scenario(name, examples=examples), index=EXAMPLES_INDEX)
            ceiling.extend(asdict(r) for r in ranks)
    matrix = scenario_matrix(names, indexes=indexes)
    matrix_examples = scenario_matrix(names, indexes=indexes, examples=(True,))
    return {
        "format": FORMAT,
        "inputs": inputs_digest(),
        "indexes": indexes,
        "left_out": left_out,
        "matrix": matrix,
        "matrix_examples": matrix_examples,
        "examples": examples_rows(matrix + matrix_examples),
        "ceiling": ceiling,
    }


def examples_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs notebook 05's example-request table shows: user wording, :data:`EXAMPLES_INDEX`,
    :data:`EXAMPLES_AGENT`, as shipped and with example requests."""
    return [
        r
        for r in rows
        if r["wording"] == "user" and r["index"] == EXAMPLES_INDEX and r["agent"] == EXAMPLES_AGENT
    ]


def load_wording_matrix(recompute: bool = False) -> dict[str, Any]:
    """The shipped tables, or (``recompute``) the same tables computed now, which takes minutes."""
    if recompute:
        return build_wording_matrix()
    path = shipped_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"toolsearch-lab: {path} is missing; build it with `python tools/build_wording_matrix.py`"
        )
    tables = json.loads(path.read_text(encoding="utf-8"))
    if tables.get("format") != FORMAT or tables.get("inputs") != inputs_digest():
        raise ValueError(
            f"toolsearch-lab: {path} was computed from other data, code or resources than the ones shipped "
            "now; rebuild it with `python tools/build_wording_matrix.py` (or pass recompute=True)"
        )
    return tables


def write_wording_matrix(tables: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``tables`` as JSON atomically (toolsearch_lab.atomic)."""
    target = path or shipped_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text(target, json.dumps(tables, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    return target
