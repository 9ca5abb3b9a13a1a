"""How long the command line takes to start (target: within 2x a bare ``python -c "import numpy"``).

Runs ``toolsearch-lab --version`` and ``toolsearch-lab search --help`` as fresh processes, and the reference
``python -c "import numpy"`` with the same interpreter, in turns (so load on the machine hits all three
alike), several times each; prints the median wall time of each and its ratio to the reference, and exits 1
when a command is over the target. It also lists which heavy packages each command loaded (it should be
none: they load inside the command that needs them).

    python benchmarks/cli_startup.py [--repeat 9] [--target 2.0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sklearn", "scipy", "onnxruntime", "plotly", "ipywidgets", "mcp", "openai", "tiktoken")
REFERENCE = 'python -c "import numpy"'
COMMANDS = {"--version": ["--version"], "search --help": ["search", "--help"]}
# The CLI's own entry point, run the way the console script runs it, with a probe that reports which heavy
# packages were imported once the command has finished.
PROBE = (
    "import json, sys\n"
    "from toolsearch_lab.cli.main import main\n"
    "try:\n"
    "    main(sys.argv[2:])\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)))\n"
)


def script() -> list[str]:
    """The installed ``toolsearch-lab`` next to this interpreter, else ``python -m toolsearch_lab.cli``."""
    installed = Path(sys.executable).with_name("toolsearch-lab")
    return [str(installed)] if installed.exists() else [sys.executable, "-m", "toolsearch_lab.cli"]


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - started


def loaded(words: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY), *words],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs of each command (median taken)")
    parser.add_argument("--target", type=float, default=2.0, help="allowed ratio to the reference")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    runs = {"reference": [sys.executable, "-c", "import numpy"]}
    runs.update({name: script() + words for name, words in COMMANDS.items()})
    for argv in runs.values():  # warm the file cache and the bytecode before timing
        wall(argv, env)
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeat):
        for name, argv in runs.items():
            samples[name].append(wall(argv, env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    reference = medians["reference"]
    print(f"{'command':<32} {'median s':>9} {'ratio':>6}  heavy packages loaded")
    print(f"{REFERENCE:<32} {reference:>9.3f} {1.0:>6.2f}")
    over = []
    for name, words in COMMANDS.items():
        ratio = medians[name] / reference
        heavy = ", ".join(loaded(words, env)) or "none"
        print(f"{'toolsearch-lab ' + name:<32} {medians[name]:>9.3f} {ratio:>6.2f}  {heavy}")
        if ratio > args.target:
            over.append(f"toolsearch-lab {name}: {ratio:.2f}x")
    print(f"({args.repeat} runs each, interleaved; target <= {args.target:g}x the reference)")
    if over:
        print(f"over the target: {'; '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
