#!/usr/bin/env python3
"""Build the wording lesson's tables that notebook 05 loads instead of computing them (minutes of runs).

    python tools/build_wording_matrix.py            # write data/course/wording_matrix.json
    python tools/build_wording_matrix.py --check    # exit 1 if the shipped file is missing or stale

See :mod:`toolsearch_lab.eval.wording_matrix` for what the file holds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolsearch_lab.eval.wording_matrix import build_wording_matrix, load_wording_matrix, write_wording_matrix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the shipped file is current")
    args = parser.parse_args(argv)
    if args.check:
        try:
            load_wording_matrix()
        except (FileNotFoundError, ValueError) as exc:
            print(exc)
            return 1
        print("wording matrix is current")
        return 0
    start = time.perf_counter()
    tables = build_wording_matrix()
    path = write_wording_matrix(tables)
    print(
        f"wrote {path}: {len(tables['matrix'])} runs, {len(tables['examples'])} runs with and without "
        f"example requests, {len(tables['ceiling'])} step ranks in {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
