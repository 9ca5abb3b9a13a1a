#!/usr/bin/env python3
"""Static images of each notebook's key visual, for handouts, slides or a projector that fails.

    python tools/export_visuals.py --out visuals          # every notebook's key visual
    python tools/export_visuals.py --out visuals 04 08    # only these notebooks

For each notebook NN it writes ``NN_<visual>.png`` (the whole visual as the notebook shows it: its plots,
tables and panels, with the controls' settings written out) and ``NN_<visual>-K.svg`` for each plot in it
(vector, for print). The visuals are built with the same calls as the notebooks, offline, and drawn by
headless Chromium (Debian's ``/usr/bin/chromium`` through Playwright, as the browser tests do; plotly.js is
inlined from the installed plotly package, and SVGs come from plotly.js's own ``toImage``), so nothing
else is installed and nothing is fetched. The files are generated: do not commit them.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
WIDTH = 1000  # the page: JupyterLab's output area is 968 px wide


# ---- the key visual of each notebook, built as the notebook builds it ------------------------------------
def visual_01():
    from toolsearch_lab import headline
    from toolsearch_lab.ui import TokenDashboard

    return "token_dashboard", TokenDashboard(catalog="github-mcp", run=headline("github").tool_search.run)


def visual_02():
    from toolsearch_lab import run_scenario
    from toolsearch_lab.ui import Table

    # The loop's moves, request by request (the loop diagram itself is notebooks/img/loop.svg).
    run = run_scenario("spring-demo", index="lucene", accumulation=False)
    rows = [
        [it.number, ", ".join(it.exposed_tools), ", ".join(c.name for c in it.tool_calls) or "(answer)",
         ", ".join(c.kind for c in it.tool_calls) or "returned the answer"]
        for it in run.trace.iterations
    ]  # fmt: skip
    return "advisor_trace", Table(["request", "exposed", "the model called", "what the loop did"], rows)


def visual_03():
    from toolsearch_lab.ui import IndexExplorer

    return "index_explorer", IndexExplorer(catalog="github-mcp", query="create a pull request")


def visual_04():
    from toolsearch_lab.ui import IterationStepper

    return "iteration_stepper", IterationStepper(scenario="spring-demo", index="lucene", model="simulated")


def visual_05():
    from toolsearch_lab import load_wording_matrix
    from toolsearch_lab.ui import ceiling_table

    return "index_top5", ceiling_table(load_wording_matrix())


def visual_06():
    from toolsearch_lab.ui import EvictionSimulator

    return "eviction_simulator", EvictionSimulator(strategy="LRU", sessions=5, lru_max=3)


def visual_07():
    from toolsearch_lab import evaluate, load_dataset, make_index
    from toolsearch_lab.ui import RetrievalExplorer

    data = load_dataset("metatool")
    results = {(data.name, kind): evaluate(make_index(kind), data, k=5) for kind in ("lucene", "vector")}
    return "retrieval_explorer", RetrievalExplorer(results, dataset=data.name, k=5)


def visual_08():
    from toolsearch_lab import TokenCounter, ToolSearchTool, catalog_of, distractor_pool, load_scenario
    from toolsearch_lab.ui import line_chart

    sizes = [10, 100, 1000, 3000, 10000]
    targets = [
        t for t in load_scenario("spring-demo").tools if t.name in ("currentTime", "weather", "clothing")
    ]
    pool = distractor_pool(exclude={t.name: "" for t in targets})
    counter = TokenCounter()
    search = counter.tools_tokens([ToolSearchTool(None).as_tool()] + targets)
    every = [counter.tools_tokens(catalog_of(size, targets, pool)) for size in sizes]
    series = {"all tools": (sizes, every), "tool search": (sizes, [search] * len(sizes))}
    title = "Tool tokens per request vs catalog size"
    figure = line_chart(title, series, "tools in catalog", "prompt tokens (model-visible, est.)", True, True)
    return "tokens_vs_catalog_size", figure


def visual_09():
    from toolsearch_lab import run_scenario
    from toolsearch_lab.ui import TraceViewer

    left, right = (
        run_scenario("spring-demo", index=kind, model="simulated") for kind in ("lucene", "hybrid")
    )
    return "trace_viewer", TraceViewer(left, right, labels=("simulated · lucene", "simulated · hybrid"))


def visual_10():
    from toolsearch_lab import diagnose, helpdesk_catalog
    from toolsearch_lab.ui import CatalogDoctor

    return "catalog_doctor", CatalogDoctor(diagnose(helpdesk_catalog(), indexes=("lucene", "vector")))


def visual_11():
    from toolsearch_lab import compare
    from toolsearch_lab.ui import prefix_view

    by_name = {r.strategy.name: r for r in compare("livemcpbench", indexes=("lucene",), max_results=5)}
    return "cache_prefix", prefix_view(
        by_name["search-only"], by_name["inline-references"], by_name["all-tools"]
    )


def visual_12():
    from toolsearch_lab import run_strategy
    from toolsearch_lab.ui import turn_view

    # Turn 4 under Spring's reading and a 6-message window: the tool found in turn 3 is gone.
    history = run_strategy(
        "support-conversation", "search-only", memory="window:6", accumulation_source="history"
    )
    return "turn_view", turn_view(history.trace, 4)


VISUALS: dict[str, Callable[[], tuple[str, object]]] = {
    name.removeprefix("visual_"): function
    for name, function in sorted(globals().items())
    if name.startswith("visual_")
}


# ---- a visual as a static page --------------------------------------------------------------------------
def static_page(visual: object) -> tuple[str, list[dict]]:
    """(the HTML of ``visual`` as a page, the plotly figures in it as JSON): its plots, HTML panels and
    tables in order, and each control as a line saying its setting."""
    import ipywidgets as widgets
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.basedatatypes import BaseFigure

    parts: list[str] = []
    figures: list[dict] = []

    def walk(item: object) -> None:
        if isinstance(item, BaseFigure):  # a Figure or a FigureWidget
            figures.append(json.loads(pio.to_json(go.Figure(item))))
            parts.append(f"<div class='fig' id='fig{len(figures) - 1}'></div>")
        elif isinstance(item, widgets.HTML | widgets.HTMLMath | widgets.Label):
            parts.append(f"<div>{item.value}</div>")
        elif isinstance(item, widgets.Box):
            for child in item.children:
                walk(child)
        elif isinstance(item, widgets.ValueWidget) and getattr(item, "description", ""):
            setting = html.escape(f"{item.description}: {item.value}")
            parts.append(f"<div style='color:#6B7280;margin:4px 0'>{setting}</div>")
        elif hasattr(item, "widget"):
            walk(item.widget)
        elif hasattr(item, "_repr_html_"):
            parts.append(item._repr_html_())

    walk(visual)
    return "".join(parts), figures


def page_html(body: str, figures: list[dict]) -> str:
    from plotly.offline import get_plotlyjs

    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<script>{get_plotlyjs()}</script></head>"
        f"<body style='margin:16px;width:{WIDTH - 32}px;background:white'>{body}"
        f"<script>const FIGURES = {json.dumps(figures)};"
        "window.drawn = Promise.all(FIGURES.map((f, i) => Plotly.newPlot('fig' + i, f.data, f.layout,"
        " {staticPlot: true})));</script></body></html>"
    )


def export(numbers: list[str], out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    executable = next((c for c in CHROMIUM if Path(c).exists()), None)
    if executable is None:
        raise SystemExit("Chromium not found at /usr/bin/chromium: apt-get install -y chromium")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        for number in numbers:
            name, visual = VISUALS[number]()
            body, figures = static_page(visual)
            page = browser.new_page(viewport={"width": WIDTH, "height": 800})
            page.route("**/*", lambda route: route.abort())  # nothing is fetched: the page is self-contained
            page.set_content(page_html(body, figures))
            page.evaluate("() => window.drawn.then(() => true)")
            stem = f"{number}_{name}"
            png = out / f"{stem}.png"
            page.screenshot(path=str(png), full_page=True)
            written.append(png)
            for i, figure in enumerate(figures):
                layout = figure.get("layout", {})
                url = page.evaluate(
                    "([i, w, h]) => Plotly.toImage(document.getElementById('fig' + i),"
                    " {format: 'svg', width: w, height: h})",
                    [i, layout.get("width", 940), layout.get("height", 450)],
                )
                svg = out / f"{stem}-{i + 1}.svg"
                header, _, data = url.partition(",")
                text = base64.b64decode(data).decode() if ";base64" in header else urllib.parse.unquote(data)
                svg.write_text(text, encoding="utf-8")
                written.append(svg)
            page.close()
            print(f"{stem}: {png.name}" + (f" and {len(figures)} SVG" if figures else ""))
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("numbers", nargs="*", help=f"notebook numbers (default: all of {', '.join(VISUALS)})")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG and SVG files")
    args = parser.parse_args(argv)
    unknown = [n for n in args.numbers if n not in VISUALS]
    if unknown:
        parser.error(f"no key visual for notebook(s) {', '.join(unknown)}; known: {', '.join(VISUALS)}")
    export(args.numbers or list(VISUALS), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
