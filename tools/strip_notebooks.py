#!/usr/bin/env python3
"""Strip outputs from notebooks so they are committed small and diff-friendly.

    python tools/strip_notebooks.py                 # strip notebooks/*.ipynb in place
    python tools/strip_notebooks.py --check         # exit 1 and list notebooks that still carry outputs
    python tools/strip_notebooks.py a.ipynb b.ipynb # only these

Removes: code-cell outputs and execution counts, cell metadata that execution adds (``execution``,
``collapsed``, ``scrolled``), and notebook-level widget state (``metadata.widgets``, ~5 MB per plotly
FigureWidget). Keeps everything a reader needs: sources, cell ids, kernelspec, tags.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
EXECUTION_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime")
EXECUTION_NB_METADATA = ("widgets",)


def problems(nb) -> list[str]:
    """What in ``nb`` is not stripped, as human-readable strings (empty list = clean)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            if cell.get("outputs"):
                found.append(f"cell {i}: {len(cell.outputs)} output(s)")
            if cell.get("execution_count") is not None:
                found.append(f"cell {i}: execution_count {cell.execution_count}")
        for key in EXECUTION_CELL_METADATA:
            if key in cell.get("metadata", {}):
                found.append(f"cell {i}: metadata.{key}")
        if cell.cell_type == "markdown" and cell.get("attachments"):
            found.append(f"cell {i}: attachments")
    for key in EXECUTION_NB_METADATA:
        if key in nb.metadata:
            found.append(f"notebook metadata.{key}")
    return found


def strip(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in EXECUTION_CELL_METADATA:
            cell.metadata.pop(key, None)
    for key in EXECUTION_NB_METADATA:
        nb.metadata.pop(key, None)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: notebooks/*.ipynb)")
    parser.add_argument(
        "--check", action="store_true", help="only report; exit 1 if any notebook has outputs"
    )
    args = parser.parse_args(argv)
    paths = args.paths or sorted(NOTEBOOKS.glob("*.ipynb"))
    dirty = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        found = problems(nb)
        if not found:
            continue
        dirty += 1
        if args.check:
            print(f"{path}: " + "; ".join(found[:5]) + (" ..." if len(found) > 5 else ""))
        else:
            nbformat.write(strip(nb), path)
            print(f"stripped {path}")
    return 1 if (args.check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main())
