"""Every notebook runs headless and offline and is committed with outputs stripped; every "Try this"
exercise says "not answered yet" as shipped, passes with its solution and catches a wrong answer.

Execution uses nbclient with ``store_widget_state=False`` and never writes results back: the executed copy
lives only in memory. ``TOOLSEARCH_LAB_FAST=1`` shrinks notebook 05's query sample (06 runs at full
size: the shipped vectors cover its catalogs), and the OpenAI variables are removed so the live cells of
``09_real_models`` take their "not configured" path. Each lesson runs twice: as shipped (blank answers)
and with the package's solution in the student's cell plus a wrong answer and a second self-check
appended. No timing asserts: ``benchmarks/notebook_time.py`` prints how long
the notebooks take.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
sys.path.insert(0, str(REPO / "tools"))
from course_bank import HELD_OUT  # noqa: E402
from jupyter_math import html_math, markdown_math  # noqa: E402
from strip_notebooks import problems  # noqa: E402  (tools/ is not a package)

from toolsearch_lab.ui.course import EXERCISES, NOT_ANSWERED, NOT_QUITE, SOLUTIONS_ENV, check, reveal  # noqa: E402
from toolsearch_lab.ui.course.spring_facts import FACTS  # noqa: E402

NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))
NAMES = [p.name for p in NOTEBOOK_FILES]
LESSONS = [n for n in NAMES if n[:2].isdigit()]
EXPECTED_LESSONS = [
    "01_why_tool_search.ipynb",
    "02_build_it_yourself.ipynb",
    "03_three_indexes.ipynb",
    "04_the_loop_and_accumulation.ipynb",
    "05_words_agents_and_misses.ipynb",
    "06_fingerprint_and_eviction.ipynb",
    "07_measuring_retrieval.ipynb",
    "08_scaling.ipynb",
    "09_real_models.ipynb",
    "10_bring_your_own_tools.ipynb",
    "11_choosing_a_strategy.ipynb",
    "12_conversations.ipynb",
]
# Generous bounds: a loaded 2-core machine must slow the notebooks down, not fail them. A kernel that does
# not start, dies or runs out of time is retried once, with the reason printed; only a second failure fails.
CELL_TIMEOUT_S = 900
STARTUP_TIMEOUT_S = 600
SECRET_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

WORKERS = 2  # kernels executing at a time; they start one at a time (_STARTING)
SOLVED = "solved:"  # key prefix of the runs with solutions injected
RETRIED: list[str] = []  # why a run was retried, for the session's report
_STARTING = threading.Lock()


def offline_env(**values: str) -> dict[str, str]:
    """The kernels' environment: this one without the OpenAI variables or the solutions flag, plus
    ``values`` (``TOOLSEARCH_LAB_FAST=1`` for the suite)."""
    env = {k: v for k, v in os.environ.items() if k not in (*SECRET_ENV, SOLUTIONS_ENV)}
    return {**env, **values}


def _kernel_manager(folder: str):
    """A kernel manager on Unix sockets in ``folder``, not TCP ports. jupyter_client picks a TCP port by
    binding and releasing it, and the kernel binds it again later: under load that gap lasts seconds, and any
    process on the machine (another test session's kernels, a Jupyter server) can take the port meanwhile.
    Socket files in a folder of this run's own cannot be taken."""
    from jupyter_client.manager import AsyncKernelManager

    return AsyncKernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(folder, "kernel"))


def _execute(nb, env: dict[str, str]) -> None:
    """Execute ``nb`` in place in a new kernel started with ``env``; kernels start one at a time."""
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    folder = tempfile.mkdtemp(prefix="toolsearch-lab-kernel-")
    client = NotebookClient(
        nb,
        km=_kernel_manager(folder),
        timeout=CELL_TIMEOUT_S,
        startup_timeout=STARTUP_TIMEOUT_S,
        store_widget_state=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    try:
        with contextlib.ExitStack() as running:
            with _STARTING:  # a kernel start has the machine's attention: no race with our own kernels
                running.enter_context(client.setup_kernel(env=env))
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
    finally:
        if client.km is not None and client.km.has_kernel:  # ours (km passed in): nbclient leaves it running
            with contextlib.suppress(Exception):
                run_sync(client.km.shutdown_kernel)(now=True)
        shutil.rmtree(folder, ignore_errors=True)


def _busy_machine_failure(exc: BaseException) -> bool:
    """A failure a busy machine can cause (no kernel, a dead kernel, a cell out of time), as opposed to an
    error in the notebook, which fails at once."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    text = str(exc)
    return isinstance(exc, CellTimeoutError | DeadKernelError | TimeoutError) or (
        isinstance(exc, RuntimeError) and ("Kernel didn't respond" in text or "Kernel died" in text)
    )


def _run_one(name: str, nb=None, env: dict[str, str] | None = None) -> tuple[float, object]:
    """Execute ``nb`` (default: the notebook file as committed) in memory: (seconds, the executed notebook
    or the exception). A busy-machine failure is retried once in a new kernel."""
    source = nb if nb is not None else nbformat.read(NOTEBOOKS / name, as_version=4)
    env = env if env is not None else offline_env(TOOLSEARCH_LAB_FAST="1")
    start = time.perf_counter()
    for attempt in (1, 2):
        copy = nbformat.from_dict(json.loads(json.dumps(source)))
        try:
            _execute(copy, env)
            return time.perf_counter() - start, copy
        except Exception as exc:  # noqa: BLE001 - reported by the test that asked
            if attempt == 1 and _busy_machine_failure(exc):
                reason = f"{name}: retried once after {type(exc).__name__}: {str(exc)[:300]}"
                RETRIED.append(reason)
                print(reason, file=sys.stderr)
                continue
            return time.perf_counter() - start, exc
    raise AssertionError("unreachable")


class _Runs:
    """The notebook runs this session needs, executed on demand, ``WORKERS`` at a time, each once."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=WORKERS)
        self.futures: dict[str, Future] = {}

    def submit(self, key: str) -> None:
        if key not in self.futures:
            if key.startswith(SOLVED):
                exercise = EXERCISES[key.removeprefix(SOLVED)]
                job = (exercise.notebook + ".ipynb", solved_notebook(exercise))
            else:
                job = (key, None)
            self.futures[key] = self.pool.submit(_run_one, *job)

    def __getitem__(self, key: str) -> tuple[float, object]:
        self.submit(key)
        return self.futures[key].result()


RUNS = _Runs()
# The tests that read a run, and which run: the notebook as shipped (its ``name``) or with a solution.
AS_SHIPPED_TESTS = ("test_notebook_executes_offline", "test_outputs_are_readable", "test_numbers_in_prose",
                    "test_exercise_is_blank_as_shipped", "test_no_answer_shows_above_its_exercise",
                    "test_markdown_renders_without_unintended_math")  # fmt: skip
SOLVED_TESTS = ("test_exercise_solution_passes", "test_exercise_rejects_cheap_answers",
                "test_no_rejection_names_the_answer", "test_no_answer_shows_above_its_exercise")  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _start_the_runs_this_session_needs(request):
    """Submit every run the selected tests read, slowest first, so two kernels are busy from the start and
    ``pytest -k 08`` executes notebook 08 only."""
    wanted = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        test = getattr(item, "originalname", item.name)
        if item.module is not request.module:
            continue
        if "name" in params and test.startswith(AS_SHIPPED_TESTS):
            wanted.append(params["name"])
        if "key" in params and test.startswith(AS_SHIPPED_TESTS):
            wanted.append(EXERCISES[params["key"]].notebook + ".ipynb")
        if "key" in params and test.startswith(SOLVED_TESTS):
            wanted.append(SOLVED + params["key"])
        if "key" in params and test.startswith("test_no_answer_shows_above_its_exercise"):
            wanted += _earlier_lessons(EXERCISES[params["key"]].notebook + ".ipynb")
    for key in sorted(dict.fromkeys(wanted), key=lambda k: k.removeprefix(SOLVED)[:2] not in SLOW):
        RUNS.submit(key)
    yield
    if RETRIED:
        print("\nnotebook runs retried once (a busy machine):", *RETRIED, sep="\n  ")


SLOW = ("05", "07", "08", "10", "11")  # started first


def _earlier_lessons(name: str) -> list[str]:
    """The lessons a learner ran before ``name`` (its number is lower)."""
    return [n for n in LESSONS if n[:2] < name[:2]]


def _check_cell_index(nb, exercise) -> int:
    """The self-check cell that follows the exercise's answer cell."""
    ids = [c.get("id") for c in nb.cells]
    start = ids.index(exercise.answer_cell)
    return next(i for i in range(start + 1, len(nb.cells)) if f'check("{exercise.key}"' in nb.cells[i].source)


def solved_notebook(exercise):
    """The lesson with the solution in the student's cell (and in the cells of the exercises before it in the
    same notebook: a student reaches the second exercise with the first one done), then a wrong answer, a
    second self-check and the probe of tests/course_probe.py."""
    nb = nbformat.read(NOTEBOOKS / f"{exercise.notebook}.ipynb", as_version=4)
    ids = [c.get("id") for c in nb.cells]
    for earlier in EXERCISES.values():
        if earlier.notebook == exercise.notebook and ids.index(earlier.answer_cell) <= ids.index(
            exercise.answer_cell
        ):
            nb.cells[ids.index(earlier.answer_cell)].source = earlier.solution
    at = _check_cell_index(nb, exercise)
    nb.cells[at + 1 : at + 1] = [
        nbformat.v4.new_code_cell(exercise.wrong),
        nbformat.v4.new_code_cell(nb.cells[at].source),
        nbformat.v4.new_code_cell(_probe_cell(exercise, nb.cells[at].source)),
    ]
    return nb


CHEAP_MARK = "CHEAP-ANSWERS:"
# Exercises whose answer is open (many entries are right) and whose rejections quote the words of the request
# the exercise is about: naming one of them is the question, not the answer. Their second guesses (every word
# of every message, each a run of the agent) are not tried either.
LEAK_EXEMPT = {"05": "a glossary entry's words come from the request the exercise quotes"}


def _probe_cell(exercise, check_source: str) -> str:
    """The cell that runs the bank through the exercise's own self-check line, in the lesson's kernel."""
    call = next(line for line in reversed(check_source.splitlines()) if line.lstrip().startswith("check("))
    held_out = HELD_OUT.get(exercise.key, []) + [exercise.wrong]
    return f"""
import sys as _sys
_sys.path.insert(0, {str(REPO / "tests")!r})
from course_probe import probe as _probe
print({CHEAP_MARK!r} + _probe({exercise.key!r}, {list(exercise.names)!r}, {exercise.solution!r},
      {call.strip()!r}, {held_out!r}, globals(), second_guesses={exercise.key not in LEAK_EXEMPT!r}))
"""


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
    exercises = [e for e in EXERCISES.values() if e.notebook + ".ipynb" == name]
    assert exercises, f"{name}: no exercise registered in toolsearch_lab.ui.course"
    for exercise in exercises:
        answer = next(c for c in nb.cells if c.get("id") == exercise.answer_cell)
        for var in exercise.names:
            blank_value = re.search(rf"^{var} = \.\.\.", answer.source, re.M)
            blank_function = re.search(rf"^def {var}\(", answer.source, re.M) and re.search(
                r"(= |return )\.\.\.", answer.source
            )
            assert blank_value or blank_function, f"{name}: {var} is not left blank"
        assert "self-check" in nb.cells[_check_cell_index(nb, exercise)].source.lower()
    longest = max(len(c.splitlines()) for c in code)
    assert longest <= 25, f"{name}: a code cell has {longest} lines; logic belongs in the package"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.slow
def test_notebook_executes_offline(name):
    seconds, outcome = RUNS[name]
    if isinstance(outcome, Exception):
        pytest.fail(f"{name} failed after {seconds:.1f}s: {type(outcome).__name__}: {str(outcome)[-3000:]}")
    errors = _text_outputs(outcome, "error")
    assert not errors, f"{name}: error outputs: {errors[:2]}"
    stderr = _text_outputs(outcome, "stream", "stderr")
    assert not stderr, f"{name}: wrote to stderr (warnings or errors): {stderr[:3]}"
    # Nothing was written back: the file on disk is still stripped.
    assert not problems(nbformat.read(NOTEBOOKS / name, as_version=4))


MAX_CELLS = 28
MAX_TEXT_LINES = 30
# A plain-text output that looks like Python's default repr: `<Thing object at 0x…>` or `Name(field=…`.
RAW_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>|^[A-Z]\w*\(\w+=", re.M)
RICH = (
    "text/html",
    "text/markdown",
    "image/png",
    "image/svg+xml",
    "application/vnd.jupyter.widget-view+json",
)


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_fits_the_cell_budget(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert len(nb.cells) <= MAX_CELLS, f"{name} has {len(nb.cells)} cells; a lesson has at most {MAX_CELLS}"


def _plain_texts(nb) -> list[tuple[int, str]]:
    """(cell index, text) of every output read as plain text: streams, and results with no rich form."""
    out = []
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                out.append((i, o.get("text", "")))
            elif o.output_type in ("execute_result", "display_data"):
                data = o.get("data", {})
                if not any(kind in data for kind in RICH):
                    out.append((i, data.get("text/plain", "")))
    return out


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.slow
def test_outputs_are_readable(name):
    """No wall of text and no raw repr: a learner reads tables, widgets and plots."""
    seconds, outcome = RUNS[name]
    if isinstance(outcome, Exception):
        pytest.skip(f"{name} did not run; test_notebook_executes_offline reports why")
    for index, text in _plain_texts(outcome):
        lines = text.rstrip("\n").count("\n") + 1
        assert lines <= MAX_TEXT_LINES, (
            f"{name}, cell {index}: {lines} lines of text output (at most {MAX_TEXT_LINES})"
        )
        match = RAW_REPR.search(text)
        assert not match, (
            f"{name}, cell {index}: a raw repr is shown ({match.group(0)!r}); give it an HTML form"
        )


# Numbers in prose that a learner would check against the outputs: decimals, percentages and counts of 100
# or more. Versions ("Spring AI 2.0", "Python 3.10"), "SHA-256" and arXiv ids are names, not measurements.
PROSE_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d{3,})(?:\s?%)?(?![\w.]*\d)")
VERSION_BEFORE = re.compile(r"(?:AI|Python|Boot|Spring|version|v|mcp|openai|§|arXiv:|SHA-)\s?$", re.I)


# Spring's facts (toolsearch_lab/ui/course/spring_facts.py) are not measurements: tests/test_spring_facts.py
# holds every statement of them to their source and the code, so their numbers need no output here.
SPRING_NUMBERS = {m.group(1) for fact in FACTS for m in PROSE_NUMBER.finditer(fact.words)}


def _prose_numbers(markdown: str) -> list[str]:
    prose = re.sub(r"```.*?```|`[^`]*`|\]\([^)]*\)", " ", markdown, flags=re.S)
    return [
        m.group(1)
        for m in PROSE_NUMBER.finditer(prose)
        if not VERSION_BEFORE.search(prose[: m.start()]) and m.group(1) not in SPRING_NUMBERS
    ]


def _output_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            parts.append(o.get("text", ""))
            for value in o.get("data", {}).values():
                parts.append(
                    value if isinstance(value, str) else "\n".join(value) if isinstance(value, list) else ""
                )
    return "\n".join(parts).replace(",", "").replace("\u2009", "").replace("&#x27;", "'")


@pytest.mark.parametrize("name", LESSONS)
@pytest.mark.slow
def test_numbers_in_prose_match_the_outputs(name):
    """A number written in a Markdown cell is one the notebook's own run shows (or it is computed: Markdown
    displayed from code is an output, so it never drifts)."""
    seconds, outcome = RUNS[name]
    if isinstance(outcome, Exception):
        pytest.skip(f"{name} did not run; test_notebook_executes_offline reports why")
    shown = _output_text(outcome)
    missing = [
        number
        for cell in outcome.cells
        if cell.cell_type == "markdown"
        for number in _prose_numbers(cell.source)
        if number.replace(",", "") not in shown
    ]
    assert not missing, f"{name}: prose numbers that no output shows (compute them instead): {missing}"


def _verdicts(nb, key: str) -> list[str]:
    """The text each self-check cell of exercise ``key`` displayed, in order."""
    out = []
    for cell in nb.cells:
        if cell.cell_type == "code" and f'check("{key}"' in cell.source and CHEAP_MARK not in cell.source:
            texts = [o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])]
            out.append("\n".join(texts))
    return out


def _executed(key: str):
    seconds, outcome = RUNS[key]
    if isinstance(outcome, Exception):
        pytest.fail(f"{key} failed after {seconds:.1f}s: {type(outcome).__name__}: {str(outcome)[-3000:]}")
    return outcome


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_exercise_is_blank_as_shipped(key):
    verdicts = _verdicts(_executed(EXERCISES[key].notebook + ".ipynb"), key)
    assert len(verdicts) == 1 and NOT_ANSWERED in verdicts[0], verdicts


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_exercise_solution_passes_and_wrong_answer_is_caught(key):
    nb = _executed(SOLVED + key)
    assert not _text_outputs(nb, "error"), _text_outputs(nb, "error")[:2]
    solved, wrong = _verdicts(nb, key)
    assert solved.startswith("✓"), f"the solution of {key} does not pass its own check: {solved}"
    assert NOT_QUITE in wrong, f"the wrong answer to {key} was not caught: {wrong}"


def test_solutions_flag_fills_a_blank_answer_and_reveal_prints_it(capsys):
    assert check("04", ...).status == "blank"
    with mock.patch.dict(os.environ, {SOLUTIONS_ENV: "1"}):
        verdict = check("04", ...)
    assert verdict.status == "right" and EXERCISES["04"].solution in verdict.message
    assert check("04", 99).status == "wrong"
    reveal("04")
    assert EXERCISES["04"].solution in capsys.readouterr().out
    with pytest.raises(ValueError, match="no exercises for notebook '42'"):
        reveal("42")


@pytest.mark.slow
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
        env = offline_env(
            OPENAI_API_KEY=secret,
            OPENAI_BASE_URL=server.base_url,
            OPENAI_MODEL="fake-model",
            TOOLSEARCH_LAB_FAST="1",
        )
        _, outcome = _run_one("09_real_models.ipynb", env=env)
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
    assert "live model: task completed" in text, text[:3000]
    assert "API usage" in text and ">250<" in text, text[:3000]  # usage_table shows the reported usage


@pytest.mark.parametrize("uid", ["0", "1000"])
def test_make_lab_allows_root_only_when_root_and_make_app_stays_offline(tmp_path, uid):
    """`make lab` as root must pass --allow-root (Jupyter refuses to start otherwise), and only then; `make
    app` uses the Voila template without CDN links. A fake `id` on PATH plays the user;
    `make -n` runs nothing."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    fake = tmp_path / "id"
    fake.write_text(f"#!/bin/sh\necho {uid}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run(
        ["make", "-n", "-C", str(REPO), "lab", "app"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    lab = next(line for line in out.stdout.splitlines() if "jupyter lab" in line)
    assert ("--allow-root" in lab) == (uid == "0"), lab
    assert "--template=offline" in out.stdout and "toolsearch_lab/ui/jupyter" in out.stdout
    template = REPO / "toolsearch_lab/ui/jupyter/voila/templates/offline/index.html.j2"
    assert "https://" not in template.read_text()


def _probe_results(key: str) -> dict:
    nb = _executed(SOLVED + key)
    printed = "".join(_text_outputs(nb, "stream", "stdout"))
    line = next((ln for ln in printed.splitlines() if ln.startswith(CHEAP_MARK)), None)
    assert line is not None, f"the probe cell of {key} printed nothing: {_text_outputs(nb, 'error')[:1]}"
    results = json.loads(line[len(CHEAP_MARK) :])
    assert results["records"], f"no answers were tried on {key}"
    return results


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_exercise_rejects_cheap_answers_with_a_reason(key):
    """Blank answers, the target's own name or its words, filler, trivial numbers and the held-out bank
    (tests/course_bank.py) never pass, and a rejection says why; the self-check never crashes on them."""
    records = [r for r in _probe_results(key)["records"] if r["kind"] != "second guess"]
    crashed = [(r["label"], r["message"]) for r in records if r["status"] == "error"]
    assert not crashed, f"{key}: the self-check raised on cheap answers: {crashed[:3]}"
    passed = [r["label"] for r in records if r["status"] == "right"]
    assert not passed, f"{key}: cheap or held-out answers judged right: {passed[:5]}"
    silent = [r["label"] for r in records if r["status"] == "wrong" and len(r["message"]) < 30]
    assert not silent, f"{key}: rejections without a reason: {silent[:3]}"
    if HELD_OUT.get(key):
        assert any(r["kind"] == "held out" for r in records), f"{key}: the held-out bank was not judged"


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_no_rejection_names_the_answer_or_passes_on_a_second_guess(key):
    """A rejection explains why without naming the answer: it never carries the ✓ glyph, never names a part
    of the solution the student did not give, and no second guess read off it (a name, a number or a quoted
    text it mentions, put in the answer's place) is judged right."""
    records = _probe_results(key)["records"]
    rejections = [r for r in records if r["status"] == "wrong"]
    ticked = [r["message"] for r in rejections if "✓" in r["message"]]
    assert not ticked, f"{key}: rejections that carry ✓: {ticked[:2]}"
    named = [
        (r["label"], r["leaks"], r["message"])
        for r in rejections
        if r.get("leaks") and key not in LEAK_EXEMPT
    ]
    assert not named, f"{key}: rejections that name the answer: {named[:2]}"
    crashed = [
        (r["label"], r["message"]) for r in records if r["kind"] == "second guess" and r["status"] == "error"
    ]
    assert not crashed, f"{key}: the self-check raised on a second guess: {crashed[:2]}"
    passed = [r["label"] for r in records if r["kind"] == "second guess" and r["status"] == "right"]
    assert not passed, f"{key}: a second guess read off a rejection passed: {passed[:2]}"


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_no_rejection_gives_a_figure_to_home_in_on(key):
    """In the lesson's own kernel, over the cheap answers, the held-out bank and the second guesses: no
    rejection gives a share, a direction, a rank or a count of how far off, and no number in a rejection
    moves with the answer (tests/course_probe.py's figures and moving_numbers)."""
    results = _probe_results(key)
    figures = [(r["label"], r["figures"], r["message"]) for r in results["records"] if r.get("figures")]
    assert not figures, f"{key}: rejections a learner could bisect on: {figures[:2]}"
    assert not results["moving"], f"{key}: rejections whose numbers move with the answer: {results['moving']}"


@pytest.mark.parametrize("name", NAMES)
def test_markdown_cells_read_no_math(name):
    """A notebook's own Markdown is never typeset as LaTeX in JupyterLab: a ``$`` outside code is a dollar."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    found = [
        (i, m) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" for m in markdown_math(c.source)
    ]
    assert not found, f"{name}: Markdown cells JupyterLab would typeset as math (cell, math): {found[:3]}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.slow
def test_markdown_renders_without_unintended_math(name):
    """What the notebook displays (Markdown and HTML outputs) is never typeset as LaTeX in JupyterLab: a
    dollar amount stays a dollar amount, and the lines around it stay apart."""
    seconds, outcome = RUNS[name]
    if isinstance(outcome, Exception):
        pytest.skip(f"{name} did not run; test_notebook_executes_offline reports why")
    found = []
    for i, cell in enumerate(outcome.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            math = markdown_math(data.get("text/markdown", "")) + html_math(data.get("text/html", ""))
            found += [(i, m[:80]) for m in math]
    assert not found, f"{name}: outputs JupyterLab would typeset as math (cell, math): {found[:3]}"


def _number_forms(value: float) -> list[str]:
    """How a numeric answer could be printed: one and two decimals (and as a percentage for a share)."""
    forms = [f"{value:.1f}", f"{value:.2f}"]
    return forms + ([f"{100 * value:.1f}"] if 0 < abs(value) < 1 else [])


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_no_answer_shows_above_its_exercise(key):
    """No output above an exercise prints its answer: not in the notebook before the answer cell, nor in a
    notebook the learner ran before (01's table must not print 09's answer). Numeric answers with a fraction
    are looked for in the forms they are printed in; names and whole numbers are everywhere in a lesson by
    design (the question names its tools), and the rejections test covers them."""
    exercise = EXERCISES[key]
    solution = _probe_results(key)["solution"]
    numbers = [v for v in solution.values() if isinstance(v, float) and not float(v).is_integer()]
    if not numbers:
        pytest.skip(f"{key}: no fractional answer ({solution})")
    name = exercise.notebook + ".ipynb"
    shown: list[tuple[str, int, str]] = []
    for earlier in [*_earlier_lessons(name), name]:
        seconds, outcome = RUNS[earlier]
        if isinstance(outcome, Exception):
            pytest.skip(f"{earlier} did not run; test_notebook_executes_offline reports why")
        ids = [c.get("id") for c in outcome.cells]
        last = ids.index(exercise.answer_cell) if earlier == name else len(ids)
        for i, cell in enumerate(outcome.cells[:last]):
            text = _output_text(nbformat.from_dict({"cells": [cell]}))
            shown += [(earlier, i, text)]
    leaks = [
        (where, i, form)
        for value in numbers
        for form in _number_forms(value)
        for where, i, text in shown
        if re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", text)
    ]
    assert not leaks, f"{key}: its answer is printed above it (notebook, cell, as printed): {leaks[:3]}"


# Course helpers that run something for a lesson: the notebook tells the learner to read them with `??`, so
# each stays one short function in plain sight (what ran is never hidden behind a helper).
SHOWN_HELPERS = {"remembering_runs": "04", "max_results_cases": "04", "glossary_runs": "05"}


@pytest.mark.parametrize("helper", sorted(SHOWN_HELPERS))
def test_course_helpers_show_their_code(helper):
    import inspect

    import toolsearch_lab.ui as ui

    function = getattr(ui, helper)
    lines = inspect.getsource(function).splitlines()
    assert len(lines) <= 25, f"{helper} is {len(lines)} lines: `{helper}??` must show a short function"
    number = SHOWN_HELPERS[helper]
    nb = nbformat.read(next(NOTEBOOKS.glob(f"{number}_*.ipynb")), as_version=4)
    assert any(f"{helper}??" in c.source for c in nb.cells), f"notebook {number} never says `{helper}??`"
