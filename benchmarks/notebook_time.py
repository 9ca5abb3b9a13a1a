"""How long the notebooks take to run headless from an empty cache: each one, all of them, and a kernel start.

    python benchmarks/notebook_time.py                 # the sizes a student runs, each from an empty cache
    python benchmarks/notebook_time.py --fast          # TOOLSEARCH_LAB_FAST=1 sizes, as the tests run them
    python benchmarks/notebook_time.py --warm          # one shared cache, filled by the first runs
    python benchmarks/notebook_time.py --workers 1 07_measuring_retrieval.ipynb

The course's budget: each notebook within 20 s and all of them within 120 s (2 kernels at a time) on the
2-core machine. Each figure is also printed as a ratio to a reference run in the same process (a one-cell
notebook: kernel start + one execution), so a busy machine shows as a slow reference rather than as slow
notebooks, and the kernel-start import of the front door (``toolsearch_lab`` and ``toolsearch_lab.ui``) is
timed on its own. Nothing is asserted by the tests; this script exits 1 when a budget is exceeded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
SECRET_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")
EACH_BUDGET_S = 20.0
ALL_BUDGET_S = 120.0
CACHE_ENV = "TOOLSEARCH_LAB_CACHE"
READING_WPM = 200  # a careful reading pace for technical prose, used for the workshop guide's timings


def run(nb, cache: str | None) -> float:
    """Seconds to execute ``nb`` in a new kernel, with ``cache`` as its embedding cache (None: inherited)."""
    env = dict(os.environ)
    if cache is not None:
        env[CACHE_ENV] = cache
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        timeout=1800,
        startup_timeout=300,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    # The kernel inherits env through the kernel manager's launch: pass it explicitly so runs do not share.
    with client.setup_kernel(env=env):
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    return time.perf_counter() - start


GOING_FURTHER = "## Going further"  # the optional part of a notebook, after its summary


def reading_minutes(nb) -> tuple[int, float, int]:
    """Words of Markdown in ``nb`` up to its optional part, the minutes a learner needs to read them (code is
    skimmed), and the words of the optional part ("Going further", after the summary)."""
    core, optional, further = 0, 0, False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        head, _, rest = cell.source.partition(GOING_FURTHER)
        further = further or bool(_)
        if further and not _:
            optional += len(cell.source.split())
        else:
            core += len(head.split())
            optional += len(rest.split())
    return core, core / READING_WPM, optional


def one_cell(source: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    return nb


def cold_run(nb, warm_cache: str | None) -> float:
    if warm_cache is not None:
        return run(nb, warm_cache)
    cache = tempfile.mkdtemp(prefix="toolsearch-lab-cold-")
    try:
        return run(nb, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook file names (default: every notebook)")
    parser.add_argument("--fast", action="store_true", help="TOOLSEARCH_LAB_FAST=1 sizes, as in the tests")
    parser.add_argument("--warm", action="store_true", help="share one cache across the runs")
    parser.add_argument("--workers", type=int, default=2, help="kernels at a time (default: 2)")
    args = parser.parse_args(argv)
    for key in SECRET_ENV:  # the offline path, as in the tests
        os.environ.pop(key, None)
    os.environ.pop("TOOLSEARCH_LAB_FAST", None)
    if args.fast:
        os.environ["TOOLSEARCH_LAB_FAST"] = "1"
    names = args.names or sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    missing = [n for n in names if not (NOTEBOOKS / n).is_file()]
    if missing:
        parser.error(f"no such notebook in {NOTEBOOKS}: {', '.join(missing)}")
    warm = tempfile.mkdtemp(prefix="toolsearch-lab-warm-") if args.warm else None
    # The best of three: the first kernel of a run also pays for reading Python's files from disk.
    ref = min(cold_run(one_cell("1 + 1"), warm) for _ in range(3))
    # The front door is lazy, so time what a lesson's first cells pull in: the loop, an index, a widget.
    first_use = (
        "import toolsearch_lab as tl, toolsearch_lab.ui as ui\n"
        "tl.ToolSearchAdvisor, tl.BM25ToolIndex, ui.TokenDashboard"
    )
    imports = min(cold_run(one_cell(first_use), warm) for _ in range(3)) - ref
    print(f"reference (kernel start + one cell): {ref:.1f} s")
    print(f"kernel-start imports (loop, index, widget): {imports:.1f} s  {imports / ref:5.1f}x reference")
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        books = [nbformat.read(NOTEBOOKS / n, as_version=4) for n in names]
        seconds = list(pool.map(lambda nb: cold_run(nb, warm), books))
    wall = time.perf_counter() - start
    over = []
    for name, s, nb in zip(names, seconds, books, strict=True):
        flag = "" if s <= EACH_BUDGET_S else f"  over the {EACH_BUDGET_S:.0f} s budget"
        over += [name] if flag else []
        words, minutes, optional = reading_minutes(nbformat.read(NOTEBOOKS / name, as_version=4))
        cells = len(nb.cells)
        further = f" + {optional} optional" if optional else ""
        print(
            f"{name:40} {s:7.1f} s  {s / ref:6.1f}x reference  {cells:3d} cells  "
            f"{words:5d} words ({minutes:4.1f} min to read){further}{flag}"
        )
    label = f"all, {args.workers} kernels at a time"
    flag = "" if wall <= ALL_BUDGET_S else f"  over the {ALL_BUDGET_S:.0f} s budget"
    print(f"{label:40} {wall:7.1f} s  {wall / ref:6.1f}x reference{flag}")
    cache = "one shared cache" if warm else "empty for every notebook"
    print(f"cache: {cache}; sizes: {'fast' if args.fast else 'full'}")
    if warm:
        shutil.rmtree(warm, ignore_errors=True)
    return 1 if over or flag else 0


if __name__ == "__main__":
    sys.exit(main())
