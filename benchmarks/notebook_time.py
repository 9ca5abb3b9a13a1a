"""How long the notebooks take to run headless: each one, and all of them a few kernels at a time.

    python benchmarks/notebook_time.py            # TOOLSEARCH_LAB_FAST=1 sizes, as the tests run them
    python benchmarks/notebook_time.py --full     # the sizes a workshop room runs
    python benchmarks/notebook_time.py --workers 1 07_measuring_retrieval.ipynb

Prints seconds per notebook and the wall time, and each figure as a ratio to a reference run in the same
process (a one-cell notebook: kernel start + one execution), so a busy machine shows as a slow reference
rather than as slow notebooks. Nothing is asserted: the tests never time anything.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
SECRET_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")


def run(nb, path: Path) -> float:
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=1800,
        startup_timeout=300,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(path)}},
    ).execute()
    return time.perf_counter() - start


def reference() -> float:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1 + 1")]
    return run(nb, NOTEBOOKS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebook file names (default: every notebook)")
    parser.add_argument("--full", action="store_true", help="full sizes (default: TOOLSEARCH_LAB_FAST=1)")
    parser.add_argument("--workers", type=int, default=2, help="kernels at a time (default: 2)")
    args = parser.parse_args(argv)
    for key in SECRET_ENV:  # the offline path, as in the tests
        os.environ.pop(key, None)
    if not args.full:
        os.environ["TOOLSEARCH_LAB_FAST"] = "1"
    names = args.names or sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    missing = [n for n in names if not (NOTEBOOKS / n).is_file()]
    if missing:
        parser.error(f"no such notebook in {NOTEBOOKS}: {', '.join(missing)}")
    ref = reference()
    print(f"reference (kernel start + one cell): {ref:.1f} s")
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        books = [nbformat.read(NOTEBOOKS / n, as_version=4) for n in names]
        seconds = list(pool.map(lambda nb: run(nb, NOTEBOOKS), books))
    wall = time.perf_counter() - start
    for name, s in zip(names, seconds, strict=True):
        print(f"{name:38} {s:7.1f} s  {s / ref:6.1f}x reference")
    print(
        f"{'all, ' + str(args.workers) + ' kernels at a time':38} {wall:7.1f} s  {wall / ref:6.1f}x reference"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
