"""The package's front door: notebooks and the README import only from ``toolsearch_lab`` and
``toolsearch_lab.ui``, every exported name resolves, and importing the package (or starting the CLI) loads
none of the heavy dependencies until a name needs them."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolsearch_lab
import toolsearch_lab.ui
from toolsearch_lab.lazy import stub_exports

ROOT = Path(__file__).resolve().parents[1]
FRONT_DOORS = ("toolsearch_lab", "toolsearch_lab.ui")
HEAVY = ("sklearn", "scipy", "onnxruntime", "plotly", "ipywidgets", "anywidget", "mcp", "openai", "tiktoken")
# `from toolsearch_lab.x import (a, b)` or `from toolsearch_lab import a, b` (one line or parenthesised).
FROM_IMPORT = re.compile(r"from\s+(toolsearch_lab[\w.]*)\s+import\s+(\([^)]*\)|[^\n;]*)")
PLAIN_IMPORT = re.compile(r"^\s*import\s+(toolsearch_lab[\w.]*)", re.M)


def _notebook_sources() -> list[tuple[str, str]]:
    sources = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                sources.append((f"{path.name} cell {number}", "".join(cell["source"])))
    return sources


def _readme_sources() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [
        (f"README.md block {n}", block)
        for n, block in enumerate(re.findall(r"```[^\n]*\n(.*?)```", text, re.S))
    ]


SOURCES = _notebook_sources() + _readme_sources()


def _imports(source: str) -> list[tuple[str, list[str]]]:
    """(module, names) of each toolsearch_lab import in ``source``; a plain ``import`` has no names."""
    found = []
    for module, names in FROM_IMPORT.findall(source):
        cleaned = [n.split(" as ")[0].strip() for n in names.strip("()").replace("\n", ",").split(",")]
        found.append((module, [n for n in cleaned if n and not n.startswith("#")]))
    found += [(module, []) for module in PLAIN_IMPORT.findall(source)]
    return found


def test_sources_were_found():
    assert any(name.startswith("README") for name, _ in SOURCES)
    assert sum(1 for name, _ in SOURCES if ".ipynb" in name) > 10
    assert _imports("from toolsearch_lab.ui import (\n    check,\n    reveal as r,\n)\n") == [
        ("toolsearch_lab.ui", ["check", "reveal"])
    ]


def test_notebooks_and_readme_import_only_from_the_front_doors():
    deep = sorted(
        {
            f"{where}: from {module} import {', '.join(names)}"
            for where, source in SOURCES
            for module, names in _imports(source)
            if module not in FRONT_DOORS
        }
    )
    assert not deep, "import these from toolsearch_lab or toolsearch_lab.ui instead:\n" + "\n".join(deep)


def test_every_name_imported_through_a_front_door_is_exported():
    exported = {door: set(importlib.import_module(door).__all__) for door in FRONT_DOORS}
    missing = sorted(
        {
            f"{where}: {module}.{name}"
            for where, source in SOURCES
            for module, names in _imports(source)
            if module in FRONT_DOORS
            for name in names
            if name != "*" and name not in exported[module]
        }
    )
    assert not missing, "not in that front door's __all__:\n" + "\n".join(missing)


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_every_exported_name_resolves(door):
    module = importlib.import_module(door)
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = module.no_such_name


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_the_stub_beside_each_front_door_is_the_one_list_of_its_names(door):
    """Type checkers read ``__init__.pyi``; the runtime builds ``__all__`` and the lazy map from the same
    file, so there is no second list to keep in step: a name added to the stub is exported, and only then."""
    module = importlib.import_module(door)
    stub = Path(module.__file__).with_suffix(".pyi")
    names, modules = stub_exports(stub)
    assert module.__all__ == sorted(n for n in [*names, *modules] if not n.startswith("__"))
    for name, where in names.items():
        if not name.startswith("__"):
            assert getattr(module, name) is getattr(importlib.import_module(f"{door}.{where}"), name), name
    init = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    listed = [
        n
        for n in ast.walk(init)
        if isinstance(n, ast.List | ast.Dict) and len(getattr(n, "elts", getattr(n, "keys", []))) > 5
    ]
    assert not listed, f"{module.__file__} lists names again; the stub is the only list"


def test_a_stub_with_anything_but_explicit_re_exports_is_refused(tmp_path):
    stub = tmp_path / "__init__.pyi"
    stub.write_text('"""doc"""\nfrom .a import x as x, y as y\nfrom . import m as m\n')
    assert stub_exports(stub) == ({"x": "a", "y": "a"}, frozenset({"m"}))
    stub.write_text("from .a import x\n")
    with pytest.raises(ValueError, match="write 'x as x' to export it"):
        stub_exports(stub)
    stub.write_text("import os\n")
    with pytest.raises(ValueError, match="only relative imports"):
        stub_exports(stub)


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_dir_lists_the_lazy_names(door):
    module = importlib.import_module(door)
    listed = dir(module)
    assert set(module.__all__) <= set(listed)
    assert listed == sorted(listed)


def _loaded_after(code: str) -> list[str]:
    report = f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))"
    probe = f"{code}\nimport json, sys\n{report}"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT, timeout=120
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cli(*words: str) -> str:
    return (
        "from toolsearch_lab.cli.main import main\n"
        "try:\n"
        f"    main({list(words)!r})\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
    )


@pytest.mark.parametrize(
    "code",
    [
        "import toolsearch_lab",
        "import toolsearch_lab.ui",
        "from toolsearch_lab import Tool, SearchRequest, RunTrace, INDEX_KINDS, load_catalog",
        _cli("--version"),
        _cli("--help"),
        _cli("search", "--help"),
    ],
    ids=["package", "ui", "core-names", "cli-version", "cli-help", "cli-search-help"],
)
def test_start_up_loads_no_heavy_dependency(code):
    assert _loaded_after(code) == []


def test_a_name_loads_its_module_on_first_use():
    assert _loaded_after("import toolsearch_lab\ntoolsearch_lab.TokenCounter") == ["tiktoken"]
    widgets = _loaded_after("import toolsearch_lab.ui\ntoolsearch_lab.ui.TraceViewer")
    assert {"plotly", "ipywidgets"} <= set(widgets)


def test_the_front_door_hands_out_the_defining_objects():
    from toolsearch_lab.loop.advisor import ToolSearchAdvisor
    from toolsearch_lab.ui.course import check

    assert toolsearch_lab.ToolSearchAdvisor is ToolSearchAdvisor
    assert toolsearch_lab.ui.check is check
    assert toolsearch_lab.ui.theme is importlib.import_module("toolsearch_lab.ui.theme")
