"""Every notebook runs headless and offline, quickly, and is committed with outputs stripped.

Execution uses nbclient with ``store_widget_state=False`` and never writes results back: the executed copy
lives only in memory. ``TOOLSEARCH_LAB_FAST=1`` shrinks the sizes of the scaling notebook, and the OpenAI
variables are removed so the live cells of ``07_real_models`` take their "not configured" path.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
sys.path.insert(0, str(REPO / "tools"))
from strip_notebooks import problems  # noqa: E402  (tools/ is not a package)

NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))
NAMES = [p.name for p in NOTEBOOK_FILES]
LESSONS = [n for n in NAMES if n[:2].isdigit()]
EXPECTED_LESSONS = [
    "01_why_tool_search.ipynb",
    "02_three_indexes.ipynb",
    "03_advisor_loop.ipynb",
    "04_fingerprint_and_eviction.ipynb",
    "05_measuring_retrieval.ipynb",
    "06_scaling.ipynb",
    "07_real_models.ipynb",
    "08_bring_your_own_tools.ipynb",
]
TOTAL_BUDGET_S = 60.0
CELL_TIMEOUT_S = 120
SECRET_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

WORKERS = max(2, min(4, os.cpu_count() or 2))

_results: dict[str, tuple[float, object]] = {}  # name -> (seconds, executed notebook or exception)
_wall: list[float] = []  # wall-clock seconds of the parallel run of all notebooks


def _run_one(name: str) -> tuple[float, object]:
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    start = time.perf_counter()
    try:
        NotebookClient(
            nb,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            store_widget_state=False,
            resources={"metadata": {"path": str(NOTEBOOKS)}},
        ).execute()
        outcome: object = nb
    except Exception as exc:  # noqa: BLE001 - reported by the test that asked
        outcome = exc
    return time.perf_counter() - start, outcome


@contextlib.contextmanager
def _environment(**values: str):
    """Run with the OpenAI variables removed and ``values`` set; restore the environment afterwards."""
    with mock.patch.dict(os.environ):
        for key in SECRET_ENV:
            os.environ.pop(key, None)
        os.environ.update(values)
        yield


def _execute_all() -> dict[str, tuple[float, object]]:
    """Execute every notebook once per session, in memory, a few kernels in parallel (each notebook runs in
    its own kernel process, so they do not share state). Offline: the OpenAI variables are removed."""
    if _results:
        return _results
    start = time.perf_counter()
    with _environment(TOOLSEARCH_LAB_FAST="1"):
        # Longest first, so the slow ones do not start last.
        order = sorted(NAMES, key=lambda n: n[:2] not in ("05", "06", "08", "03"))
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for name, result in zip(order, pool.map(_run_one, order), strict=False):
                _results[name] = result
    _wall.append(time.perf_counter() - start)
    return _results


def _text_outputs(nb, output_type: str, stream: str | None = None) -> list[str]:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.output_type != output_type:
                continue
            if stream is not None and o.get("name") != stream:
                continue
            out.append(o.get("text", "") or "\n".join(o.get("traceback", [])))
    return out


def test_all_lessons_present():
    assert LESSONS == EXPECTED_LESSONS
    assert "app_stepper.ipynb" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_stripped(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    found = problems(nb)
    assert not found, f"{name} is committed with outputs ({found[:3]}): run `python tools/strip_notebooks.py`"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_never_reads_shared_or_prints_keys(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "../shared" not in source and "/work/" not in source, f"{name} points outside the repo"
    assert not re.search(r"\bsk-[A-Za-z0-9_-]{12,}", source), f"{name} seems to contain an API key"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert 'OPENAI_API_KEY"]' not in cell.source and 'getenv("OPENAI_API_KEY")' not in cell.source, (
                f"{name}: code cells must not read the API key themselves (let the package do it)"
            )


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_structure(name):
    """Each lesson has learning objectives, a 'Try this' exercise with a self-check cell, and a summary."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert markdown and markdown[0].lstrip().startswith("# "), f"{name}: first cell must be a '# ' title"
    joined = "\n".join(markdown)
    assert "Learning objectives" in joined, f"{name}: no learning objectives"
    assert "Try this" in joined, f"{name}: no 'Try this' exercise"
    assert "## Summary" in joined, f"{name}: no summary"
    assert any("self-check" in c.lower() and "assert" in c for c in code), f"{name}: no self-check cell"
    longest = max(len(c.splitlines()) for c in code)
    assert longest <= 25, f"{name}: a code cell has {longest} lines; logic belongs in the package"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes_offline(name):
    seconds, outcome = _execute_all()[name]
    if isinstance(outcome, Exception):
        pytest.fail(f"{name} failed after {seconds:.1f}s: {type(outcome).__name__}: {str(outcome)[-3000:]}")
    errors = _text_outputs(outcome, "error")
    assert not errors, f"{name}: error outputs: {errors[:2]}"
    stderr = _text_outputs(outcome, "stream", "stderr")
    assert not stderr, f"{name}: wrote to stderr (warnings or errors): {stderr[:3]}"
    # Nothing was written back: the file on disk is still stripped.
    assert not problems(nbformat.read(NOTEBOOKS / name, as_version=4))


def test_notebooks_run_within_budget():
    results = _execute_all()
    timings = ", ".join(f"{name} {seconds:.1f}s" for name, (seconds, _) in results.items())
    print(f"notebooks: {_wall[0]:.1f}s wall with {WORKERS} kernels in parallel ({timings})")
    assert _wall[0] < TOTAL_BUDGET_S, (
        f"notebooks took {_wall[0]:.1f}s together (budget {TOTAL_BUDGET_S:.0f}s): {timings}"
    )


def test_real_models_notebook_live_path_never_prints_the_key():
    """07 against a loopback OpenAI-compatible fake: the live cells run, compare our counts with `usage`,
    and the API key appears in no output (it does reach the server, so the notebook really used it)."""
    from openai_fake_server import FakeOpenAIServer, chat_response, tool_call

    secret = "sk-test-" + "notebook-secret-0123456789"
    replies = [
        chat_response(
            tool_calls=[
                tool_call("toolSearchTool", {"query": "current time weather clothing shops", "maxResults": 5})
            ],
            usage=(250, 20),
        ),
        chat_response(tool_calls=[tool_call("currentTime", {"location": "Landsmeer, NL"})], usage=(520, 15)),
        chat_response(
            tool_calls=[tool_call("weather", {"location": "Landsmeer, NL", "atTime": "now"})], usage=(600, 15)
        ),
        chat_response(
            tool_calls=[tool_call("clothing", {"location": "Landsmeer, NL", "atTime": "now"})],
            usage=(680, 15),
        ),
        chat_response("Wear a light jacket; Foo, Bar and Baz are open.", usage=(760, 12)),
    ]
    with FakeOpenAIServer() as server:
        server.enqueue(*replies)
        with _environment(
            OPENAI_API_KEY=secret,
            OPENAI_BASE_URL=server.base_url,
            OPENAI_MODEL="fake-model",
            TOOLSEARCH_LAB_FAST="1",
        ):
            _, outcome = _run_one("07_real_models.ipynb")
        requests = list(server.requests)
    if isinstance(outcome, Exception):
        pytest.fail(f"07 failed with a configured model: {type(outcome).__name__}: {str(outcome)[-3000:]}")
    text = "\n".join(
        _text_outputs(outcome, "stream")
        + [str(o.get("data", {})) for c in outcome.cells for o in c.get("outputs", []) if "data" in o]
    )
    assert secret not in text and "notebook-secret" not in text, "the API key was printed"
    assert "skipped" not in text, text[:2000]
    assert len(requests) == 5 and all(secret in r.headers.get("authorization", "") for r in requests)
    assert "success=True" in text, text[:3000]
    assert "iteration 0: ours" in text and "API    250" in text, text[:3000]
