"""How long does ``diagnose`` take on real catalogs with the default indexes (every index kind)?

    .venv/bin/python benchmarks/doctor_speed.py [--size 5000] [--cold]

* LiveMCPBench (510 tools, about 1,400 probes): run twice in one process. The first run pays for whatever
  the embedding cache lacks (the derived queries, unless an earlier run cached them); the second is the
  warm-cache figure. The target is under 30 s on a 2-core machine.
* A synthetic catalog of ``--size`` tools (default 5,000): MetaTool + LiveMCPBench tools, topped up with
  renamed copies by ``eval.scaling.catalog_of`` (so descriptions repeat, the hard case for the pair
  checks). Run once after the LiveMCPBench runs; the target is "a few minutes".

``--cold`` points the embedding cache at an empty temporary directory first, so the first LiveMCPBench run
embeds every probe query (description vectors of the shipped catalogs come with the package). The stage
times (``report.seconds``) show where the time goes; ratios are against the LiveMCPBench warm run.
Prints times only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolsearch_lab.eval.doctor import DoctorReport, diagnose
from toolsearch_lab.eval.scaling import catalog_of, distractor_pool

TARGET_S = 30.0


def timed(label: str, catalog: object) -> tuple[float, DoctorReport]:
    started = time.perf_counter()
    report = diagnose(catalog, progress=True)
    seconds = time.perf_counter() - started
    stages = ", ".join(f"{stage} {s:.1f}" for stage, s in report.seconds.items())
    probes = sum(len(t.queries) for t in report.findability)
    print(f"{label:<34} {report.tools:>6} tools {probes:>6} probes {seconds:7.1f} s   ({stages})")
    return seconds, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000, help="tools in the synthetic catalog")
    parser.add_argument("--cold", action="store_true", help="start from an empty embedding cache")
    args = parser.parse_args()
    if args.cold:
        os.environ["TOOLSEARCH_LAB_CACHE"] = tempfile.mkdtemp(prefix="doctor-speed-")
    print(f"cpus: {os.cpu_count()}, embedding cache: {'empty (--cold)' if args.cold else 'as found on disk'}")
    first, _ = timed("livemcpbench, first run", "livemcpbench")
    warm, report = timed("livemcpbench, warm cache", "livemcpbench")
    print(
        f"  warm run: {warm / TARGET_S:.2f} x the {TARGET_S:.0f} s target; first run {first / warm:.1f} x it"
    )
    print(f"  findability score {report.score:.3f}, {len(report.findings)} findings")
    pool = distractor_pool(("metatool", "livemcpbench"))
    big = catalog_of(args.size, [], pool)
    seconds, big_report = timed(f"synthetic {args.size} tools", big)
    print(f"  {seconds / warm:.1f} x the livemcpbench warm run; {seconds / 60:.1f} min")
    print(f"  findability score {big_report.score:.3f}, {len(big_report.findings)} findings")


if __name__ == "__main__":
    main()
