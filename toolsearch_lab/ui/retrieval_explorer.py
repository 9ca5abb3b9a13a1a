"""RetrievalExplorer: recall@k curves per index with k on a slider, and a per-query drill-down showing where
the needed tools ranked in each index.

It takes evaluation results that already exist (``evaluate`` from ``toolsearch_lab.eval.metrics``): moving
the slider or picking a query only re-reads them, nothing is searched again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.compat import resync_figure_widget
from toolsearch_lab.eval.metrics import QueryResult, recall_at_k
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure
from toolsearch_lab.ui.display import Html, Table
from toolsearch_lab.ui.index_explorer import KIND_COLOURS, kind_label

Results = Mapping[tuple[str, str], Any]  # (dataset name, index kind) -> EvalResult


def recall_curve(result: Any, depth: int) -> list[float]:
    """Mean recall@k over the result's queries for k = 1..depth."""
    queries = result.per_query
    if not queries:
        return [0.0] * depth
    return [
        sum(recall_at_k(q.ranked, q.relevant, k) for q in queries) / len(queries) for k in range(1, depth + 1)
    ]


def curves_spec(results: Results, dataset: str, k: int) -> dict:
    """One line per index: recall@k against k, with the chosen k marked and its values in the legend."""
    kinds = [kind for ds, kind in results if ds == dataset]
    depth = max((results[dataset, kind].depth for kind in kinds), default=10)
    data = []
    for kind in kinds:
        curve = recall_curve(results[dataset, kind], depth)
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{kind}: {curve[k - 1]:.2f} at k={k}",
                "x": list(range(1, depth + 1)),
                "y": curve,
                "line": {"color": KIND_COLOURS.get(kind, t.INK), "width": 3},
                "marker": {"size": [12 if i + 1 == k else 6 for i in range(depth)]},
                "hovertemplate": f"{kind}: recall@%{{x}} = %{{y:.3f}}<extra></extra>",
            }
        )
    n = len(results[dataset, kinds[0]].per_query) if kinds else 0
    layout = t.base_layout(
        f"recall@k on {t.esc(dataset)} ({n} queries): share of the needed tools among the first k results",
        height=440,
        xaxis=t.axis("k = maxResults (tools the model gets to see)", dtick=1, range=[0.5, depth + 0.5]),
        yaxis=t.axis("mean recall@k", range=[0, 1.05], dtick=0.2, tickformat=".1f"),
        shapes=[
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": k,
                "x1": k,
                "y0": 0,
                "y1": 1,
                "line": {"color": t.MUTED, "dash": "dot", "width": 2},
            }
        ],
        margin={"l": 80, "r": 30, "t": 120, "b": 60},
    )
    return {"data": data, "layout": layout}


def metrics_table(results: Results, sizes: Mapping[str, int] | None = None) -> Table:
    """One row per (dataset, index) evaluation: its query count and every metric, best per dataset in bold.
    ``sizes`` (dataset name -> tools) adds a column for the catalog each index searched."""
    first = next(iter(results.values()), None)
    if first is None:
        raise ValueError("metrics_table needs at least one evaluation result: {(dataset, kind): EvalResult}")
    names = list(first.metrics)
    best = {
        (ds, m): max(r.metrics[m] for (d, _), r in results.items() if d == ds)
        for ds, _ in results
        for m in names
    }
    rows = []
    for (ds, kind), result in results.items():
        cells: list[Any] = [ds, kind_label(kind)]
        if sizes is not None:
            cells.append(sizes[ds])
        cells.append(len(result.per_query))
        for m in names:
            value = result.metrics[m]
            text = f"{value:.3f}"
            cells.append(Html(f"<b>{text}</b>", text + " *") if value == best[ds, m] else value)
        rows.append(cells)
    columns = ["dataset", "index", *(["tools"] if sizes is not None else []), "queries", *names]
    return Table(columns, rows, caption="bold (* in text): the best index on that dataset for that metric")


def ranking_table(result: QueryResult, depth: int = 10) -> Table:
    """Where one query's ranking put each tool, the needed ones marked: the data recall@k and MRR are
    computed from. Needed tools the index did not return are listed in the caption."""
    needed = set(result.relevant)
    mark = Html(f"<b style='color:{t.GOOD}'>✓ needed</b>", "✓ needed")
    rows = [
        [rank, name, mark if name in needed else ""] for rank, name in enumerate(result.ranked[:depth], 1)
    ]
    missing = [name for name in result.relevant if name not in result.ranked[:depth]]
    caption = f"needed: {', '.join(result.relevant)}"
    if missing:
        caption += f"; not in the top {depth}: {', '.join(missing)}"
    return Table(["rank", "tool", "the task needs it"], rows, caption=caption)


def _rank_cell(rank: int | None, k: int) -> str:
    if rank is None:
        return f"<span style='color:{t.BAD};font-weight:700'>not returned</span>"
    colour = t.GOOD if rank <= k else t.BAD
    return f"<span style='color:{colour};font-weight:700'>#{rank}</span>"


def drilldown_html(results: Results, dataset: str, query_id: str, k: int) -> str:
    """Where each needed tool ranked in every index, and each index's top k, for one query."""
    kinds = [kind for ds, kind in results if ds == dataset]
    by_kind = {kind: next(q for q in results[dataset, kind].per_query if q.id == query_id) for kind in kinds}
    first = next(iter(by_kind.values()))
    needed = list(first.relevant)
    head = "".join(
        f"<th style='text-align:left;padding:4px 10px'>{t.chip(name, t.FOUND, t.FOUND_LIGHT)}</th>"
        for name in needed
    )
    rows = []
    for kind, q in by_kind.items():
        ranks = q.ranks
        cells = "".join(f"<td style='padding:4px 10px'>{_rank_cell(ranks[name], k)}</td>" for name in needed)
        top = "".join(
            t.chip(name, t.FOUND, t.FOUND_LIGHT)
            if name in ranks
            else t.chip(name, t.BASELINE, t.BASELINE_LIGHT)
            for name in q.ranked[:k]
        )
        colour = KIND_COLOURS.get(kind, t.INK)
        rows.append(
            f"<tr><td style='padding:4px 10px;font-weight:700;color:{colour};white-space:nowrap'>"
            f"{t.esc(kind)}</td>"
            f"{cells}<td style='padding:4px 10px'>{top or t.muted('nothing returned')}</td></tr>"
        )
    body = (
        t.heading(f"“{t.esc(first.query)}”")
        + t.muted(
            f"rank of each needed tool per index (green = within the first {k}); then each index's top {k}"
        )
        + "<table style='border-collapse:collapse;margin-top:6px'><tr><th></th>"
        + head
        + f"<th style='text-align:left;padding:4px 10px'>top {k}</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    return t.panel(body)


def query_options(results: Results, dataset: str, k: int, limit: int = 200) -> list[tuple[str, str]]:
    """(label, query id) pairs: the queries some index misses at k first, then the rest."""
    kinds = [kind for ds, kind in results if ds == dataset]
    if not kinds:
        return []
    queries = results[dataset, kinds[0]].per_query
    missed = {
        q.id
        for kind in kinds
        for q in results[dataset, kind].per_query
        if recall_at_k(q.ranked, q.relevant, k) < 1
    }
    ordered = sorted(queries, key=lambda q: q.id not in missed)[:limit]
    return [(("✗ " if q.id in missed else "✓ ") + t.clip(q.query, 80), q.id) for q in ordered]


class RetrievalExplorer(Displayable):
    """``results`` maps (dataset name, index kind) to an EvalResult, as notebook 05 builds it."""

    def __init__(self, results: Results, dataset: str | None = None, k: int = 5) -> None:
        if not results:
            raise ValueError(
                "RetrievalExplorer needs at least one evaluation result: {(dataset, kind): EvalResult}"
            )
        self.results = dict(results)
        datasets = list(dict.fromkeys(ds for ds, _ in self.results))
        dataset = dataset or datasets[0]
        if dataset not in datasets:
            raise ValueError(f"dataset {dataset!r} has no results; known: {datasets}")
        style = {"description_width": "initial"}
        self.dataset_dropdown = widgets.Dropdown(
            options=datasets,
            value=dataset,
            description="Dataset",
            style=style,
            layout=widgets.Layout(width="300px"),
        )
        self.k_slider = widgets.IntSlider(
            value=k, min=1, max=10, description="k", style=style, layout=widgets.Layout(width="420px")
        )
        self.query_dropdown = widgets.Dropdown(
            options=query_options(self.results, dataset, k),
            description="Query (✗ = missed by some index at k)",
            style=style,
            layout=widgets.Layout(width=f"{t.FIG_WIDTH}px"),
        )
        self.fig = new_figure(curves_spec(self.results, dataset, k))
        self.details = html_sink()
        self._redraw_details()
        self.k_slider.observe(lambda _: self.redraw(), names="value")
        self.dataset_dropdown.observe(lambda _: self.redraw(), names="value")
        self.query_dropdown.observe(lambda _: self._redraw_details(), names="value")
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.dataset_dropdown, self.k_slider]),
                figure_box(self.fig),
                self.query_dropdown,
                self.details,
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    def redraw(self) -> None:
        dataset, k = self.dataset_dropdown.value, int(self.k_slider.value)
        spec = curves_spec(self.results, dataset, k)
        if len(spec["data"]) == len(self.fig.data):
            update_figure(self.fig, spec)
        else:  # another dataset with another set of indexes: rebuild the traces
            with self.fig.batch_update():
                self.fig.data = []
                self.fig.add_traces(spec["data"])
                self.fig.layout.update(spec["layout"], overwrite=True)
            resync_figure_widget(self.fig)
        current = self.query_dropdown.value
        options = query_options(self.results, dataset, k)
        self.query_dropdown.options = options
        ids = [qid for _, qid in options]
        if current in ids:
            self.query_dropdown.value = current
        self._redraw_details()

    def _redraw_details(self) -> None:
        qid = self.query_dropdown.value
        if qid is None:
            self.details.value = t.panel(t.muted("No queries."))
            return
        self.details.value = drilldown_html(
            self.results, self.dataset_dropdown.value, qid, int(self.k_slider.value)
        )
