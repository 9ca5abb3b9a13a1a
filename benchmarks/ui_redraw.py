"""How long a UI takes to redraw after a control change (target: < 100 ms), with no browser attached.

For every shipped scenario: move the IterationStepper slider, and flip a setting whose run is already cached
(so we time the redraw, not the agent). Also the TokenDashboard catalog switch (cached), the
EvictionSimulator strategy change (simulation included) and the IndexExplorer query change (regex + BM25).
Each figure is printed as the median and the worst of N repetitions, and as a ratio to a reference measured
in the same process: a bare ``go.FigureWidget`` update of one trace (``fig.data[0].y = ...``), so the numbers
can be compared across machines.

    python benchmarks/ui_redraw.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import plotly.graph_objects as go

from toolsearch_lab.eval.scenarios import list_scenarios
from toolsearch_lab.ui import EvictionSimulator, IndexExplorer, IterationStepper, TokenDashboard

TARGET_MS = 100.0


def timed(fn, repeat: int) -> tuple[float, float]:
    samples = []
    for i in range(repeat):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), max(samples)


def reference(repeat: int) -> float:
    fig = go.FigureWidget(data=[go.Bar(x=list(range(10)), y=list(range(10)))])
    return timed(lambda i: setattr(fig.data[0], "y", [i + k for k in range(10)]), max(repeat, 30))[0]


def rebuild_reference(repeat: int) -> float:
    """What redrawing by rebuilding costs instead: a new 4-trace FigureWidget of the stepper's size."""
    data = [go.Bar(x=list(range(10)), y=list(range(10))) for _ in range(4)]
    return timed(lambda i: go.FigureWidget(data=data, layout={"title": {"text": str(i)}}), repeat)[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    ref = reference(args.repeat)
    rebuild = rebuild_reference(args.repeat)
    rows: list[tuple[str, float, float]] = []

    for name in list_scenarios():
        app = IterationStepper(scenario=name, index="lucene")
        n = len(app.trace.iterations)
        rows.append(
            (
                f"stepper[{name}] slider move ({n} iterations)",
                *timed(lambda i, app=app, n=n: setattr(app.slider, "value", i % n + 1), args.repeat),
            )
        )
        app.accumulation.value = False  # fill the cache for both settings, then time the redraw alone
        app.accumulation.value = True
        rows.append(
            (
                f"stepper[{name}] accumulation toggle (cached run)",
                *timed(lambda i, app=app: setattr(app.accumulation, "value", bool(i % 2)), args.repeat),
            )
        )

    dash = TokenDashboard("github-mcp")
    catalogs = list(dash.catalog_dropdown.options)
    for c in catalogs:  # warm the per-catalog cost cache
        dash.catalog_dropdown.value = c
    rows.append(
        (
            "tokens catalog switch (cached costs)",
            *timed(
                lambda i: setattr(dash.catalog_dropdown, "value", catalogs[i % len(catalogs)]), args.repeat
            ),
        )
    )

    sim = EvictionSimulator(sessions=8, requests=100)
    strategies = list(sim.strategy_dropdown.options)
    rows.append(
        (
            "eviction strategy change (100 requests, 8 sessions)",
            *timed(
                lambda i: setattr(sim.strategy_dropdown, "value", strategies[i % len(strategies)]),
                args.repeat,
            ),
        )
    )

    explorer = IndexExplorer("github-mcp", kinds=("regex", "lucene"))
    queries = ["create a pull request", "list issues", "merge branch", "search code", "add a comment"]
    rows.append(
        (
            "explorer query change (regex + BM25, 117 tools)",
            *timed(
                lambda i: setattr(explorer.query_box, "value", queries[i % len(queries)] + " " * (i // 5)),
                args.repeat,
            ),
        )
    )

    width = max(len(r[0]) for r in rows)
    print(
        f"reference: bare FigureWidget trace update = {ref:.2f} ms (median); "
        f"building a new 4-trace FigureWidget = {rebuild:.1f} ms"
    )
    print("(no browser attached: the cost of sending the update over a kernel comm is not included)")
    print(f"{'redraw':<{width}}  {'median ms':>9}  {'max ms':>7}  {'x ref':>6}  target < {TARGET_MS:.0f} ms")
    worst = 0.0
    for label, med, mx in rows:
        worst = max(worst, med)
        flag = "ok" if med < TARGET_MS else "SLOW"
        print(f"{label:<{width}}  {med:>9.1f}  {mx:>7.1f}  {med / ref:>6.1f}  {flag}")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
