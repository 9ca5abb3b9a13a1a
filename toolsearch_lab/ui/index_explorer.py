"""IndexExplorer: one query, every index kind side by side, each ranking with its scores and the reason for
each score (regex: the matched text; BM25: what each query term contributed; vector: the cosine)."""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.model import SearchRequest
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, html_sink

SESSION = "index-explorer"
KIND_TITLES = {
    "regex": ("regex", "Spring's keyword regex: query words OR-ed, hits in name count double"),
    "lucene": ("lucene (BM25)", "Spring's LuceneToolIndex: BM25 over name and description"),
    "vector": ("vector", "embeddings: cosine similarity of query and tool text"),
    "hybrid": ("hybrid", "BM25 and vector rankings fused"),
}
KIND_COLOURS = {"regex": t.NEW, "lucene": t.SEARCH, "vector": t.FOUND, "hybrid": t.INK}
COLUMN_WIDTH = (t.FIG_WIDTH - 10) // 2


def make_index(kind: str):
    from toolsearch_lab.index.factory import make_index as factory

    return factory(kind)


# ---- "why" renderers: explanation objects in, escaped HTML out --------------------------------------------------
def marked(text: str, spans: list[tuple[int, int]], limit: int = 170) -> str:
    """``text`` escaped, with ``spans`` (start, end) wrapped in <mark>, windowed around the first hit."""
    spans = sorted(s for s in spans if 0 <= s[0] < s[1] <= len(text))
    start = 0
    if spans and spans[0][0] > limit // 3:
        start = spans[0][0] - limit // 4
    end = min(len(text), start + limit)
    out, pos = ["…" if start else ""], start
    for a, b in spans:
        if a < pos or a >= end:
            continue  # overlapping or outside the window
        b = min(b, end)
        out.append(t.esc(text[pos:a]))
        out.append(
            f"<mark style='background:{t.NEW_LIGHT};border-bottom:2px solid {t.NEW};padding:0'>"
            f"{t.esc(text[a:b])}</mark>"
        )
        pos = b
    out.append(t.esc(text[pos:end]))
    out.append("…" if end < len(text) else "")
    return "".join(out)


def why_regex(exp) -> str:
    name_spans = [(s.start, s.end) for s in exp.spans if s.field == "name"]
    desc_spans = [(s.start, s.end) for s in exp.spans if s.field == "description"]
    other = [s for s in exp.spans if s.field not in ("name", "description")]
    parts = [
        f"name {exp.name_score:.2f} + description {exp.description_score:.2f}"
        + (f" + parameters {exp.parameter_score:.2f}" if exp.parameter_score else "")
    ]
    if name_spans:
        parts.append(
            f"<span style='font-family:{t.MONO}'>{marked(exp.fields.get('name', ''), name_spans)}</span>"
        )
    if desc_spans or not name_spans:
        parts.append(marked(exp.fields.get("description", ""), desc_spans))
    if other:
        parts.append(t.muted("parameters: ") + ", ".join(t.esc(s.text) for s in other[:6]))
    return "<br>".join(parts)


def why_bm25(exp) -> str:
    leaves = [leaf for c in exp.clauses for leaf in c.terms]
    if not leaves:
        return t.muted("no query term matched")
    leaves.sort(key=lambda leaf: -leaf.contribution)
    chips = []
    for leaf in leaves:
        kind = "“…”" if leaf.kind == "phrase" else ""
        chips.append(
            f"<span style='display:inline-block;margin:1px 4px 1px 0;padding:0 6px;border-radius:8px;"
            f"background:{t.SEARCH_LIGHT}' title='idf {leaf.idf:.3f} (in {leaf.doc_freq} of {leaf.doc_count} tools), "
            f"tf {leaf.tf}, length {leaf.dl} vs avg {leaf.avgdl:.1f}'><span style='font-family:{t.MONO}'>"
            f"{t.esc(leaf.field)}:{t.esc(leaf.term)}{kind}</span> <b>+{leaf.contribution:.2f}</b></span>"
        )
    return t.muted("term contributions: ") + "".join(chips)


def why_hybrid(hit, vector_weight: float) -> str:
    """Fused score = w * normalised vector score + (1 - w) * normalised BM25 score, with each side's rank."""
    kw_rank = f"rank {hit.keyword_rank}" if hit.keyword_rank is not None else "no match"
    return (
        t.muted("fused = ")
        + f"{vector_weight:.2f} × vector <b>{hit.vector_normalised:.2f}</b> "
        + t.muted(f"(cosine {hit.vector_score:.2f}, rank {hit.vector_rank})")
        + f" + {1 - vector_weight:.2f} × BM25 <b>{hit.keyword_normalised:.2f}</b> "
        + t.muted(f"(score {hit.keyword_score:.2f}, {kw_rank})")
    )


def why_generic(tool, score: float | None, label: str) -> str:
    score_text = f"{label} {score:.3f} · " if score is not None else ""
    return t.muted(score_text) + t.esc(t.clip(getattr(tool, "description", ""), 160))


def explain_html(kind: str, index: Any, query: str, tool) -> str:
    """The "why" line for one hit; falls back to the description when an index cannot explain itself."""
    explain = getattr(index, "explain", None)
    try:
        if kind == "regex" and explain is not None:
            return why_regex(explain(SESSION, query, tool.name))
        if kind == "lucene" and explain is not None:
            return why_bm25(explain(SESSION, query, tool.name))
    except (KeyError, ValueError) as exc:
        return t.muted(t.esc(str(exc)))
    return why_generic(tool, None, "")  # an index of this kind without explain()


def column_html(
    kind: str,
    hits: list[tuple[Any, float | None, str]],
    elapsed_ms: float,
    error: str | None = None,
    width: int = COLUMN_WIDTH,
) -> str:
    """One index's ranking: rank, tool name, a score bar and the reason."""
    title, subtitle = KIND_TITLES.get(kind, (kind, ""))
    colour = KIND_COLOURS.get(kind, t.INK)
    head = (
        f"<div style='border-top:5px solid {colour};padding-top:4px'><span style='font-weight:700;"
        f"font-size:{t.FONT_SIZE + 3}px'>{t.esc(title)}</span> "
        f"<span style='color:{t.MUTED};font-size:{t.FONT_SIZE - 2}px'>{elapsed_ms:.1f} ms</span><br>"
        f"<span style='color:{t.MUTED};font-size:{t.FONT_SIZE - 2}px'>{t.esc(subtitle)}</span></div>"
    )
    if error:
        return t.panel(head + f"<div style='color:{t.BAD}'>{t.esc(t.clip(error, 300))}</div>", width)
    if not hits:
        return t.panel(head + f"<div style='color:{t.BAD};margin-top:6px'>no tool found</div>", width)
    best = max((s for _, s, _ in hits if s is not None), default=None)
    rows = []
    for rank, (tool, score, why) in enumerate(hits, 1):
        rows.append(
            f"<div style='margin:6px 0;padding-bottom:4px;border-bottom:1px solid {t.GRID}'>"
            f"<span style='color:{t.MUTED};display:inline-block;width:22px'>{rank}</span>"
            f"<b style='font-family:{t.MONO}'>{t.esc(tool.name)}</b><br>"
            f"<span style='margin-left:22px'>{t.score_bar(score, best, colour, width=120)}</span>"
            f"<div style='margin-left:22px;font-size:{t.FONT_SIZE - 2}px'>{why}</div></div>"
        )
    return t.panel(head + "".join(rows), width)


def _catalog_names(current: str) -> list[str]:
    from toolsearch_lab.catalog.container import SHIPPED_CATALOGS

    names = list(SHIPPED_CATALOGS)
    return names if current in names else [current] + names


class IndexExplorer(Displayable):
    """``indexes`` (kind → index object) replaces the factory, e.g. to explore your own configuration."""

    def __init__(
        self,
        catalog: str = "github-mcp",
        query: str = "create a pull request",
        kinds: tuple[str, ...] = ("regex", "lucene", "vector", "hybrid"),
        max_results: int = 5,
        indexes: dict[str, Any] | None = None,
        tools: list | None = None,
    ) -> None:
        self.kinds = tuple(kinds)
        self._given = dict(indexes or {})
        self._tools_given = list(tools) if tools is not None else None
        self._built: dict[tuple[str, str], Any] = {}  # (catalog, kind) → index holding that catalog
        self._tools: dict[str, dict[str, Any]] = {}  # catalog → name → Tool
        style = {"description_width": "initial"}
        self.query_box = widgets.Text(
            value=query,
            description="Query",
            continuous_update=False,
            style=style,
            layout=widgets.Layout(width="560px"),
        )
        self.max_results = widgets.IntSlider(
            value=max_results,
            min=1,
            max=10,
            description="maxResults",
            continuous_update=False,
            style=style,
            layout=widgets.Layout(width="300px"),
        )
        options = [catalog] if self._tools_given is not None else _catalog_names(catalog)
        self.catalog_dropdown = widgets.Dropdown(
            options=options,
            value=catalog,
            description="Catalog",
            style=style,
            layout=widgets.Layout(width="260px"),
        )
        self.columns: dict[str, widgets.HTML] = {k: html_sink(COLUMN_WIDTH) for k in self.kinds}
        self.status = html_sink()
        self.results: dict[str, list[tuple[str, float | None]]] = {}
        self.search()
        for control in (self.query_box, self.max_results, self.catalog_dropdown):
            control.observe(lambda _: self.search(), names="value")
        cells = [self.columns[k] for k in self.kinds]
        grid = widgets.GridBox(
            cells,
            layout=widgets.Layout(
                grid_template_columns=f"{COLUMN_WIDTH}px {COLUMN_WIDTH}px",
                grid_gap="6px 10px",
                width=f"{t.FIG_WIDTH}px",
            ),
        )
        self.widget = widgets.VBox(
            [widgets.HBox([self.query_box, self.max_results]), self.catalog_dropdown, self.status, grid],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    # ---- indexes ---------------------------------------------------------------------------------------------
    def _catalog_tools(self, catalog: str) -> dict[str, Any]:
        if catalog not in self._tools:
            if self._tools_given is not None:
                tools = self._tools_given
            else:
                from toolsearch_lab.catalog.container import load_catalog

                tools = load_catalog(catalog).tools
            self._tools[catalog] = {tool.name: tool for tool in tools}
        return self._tools[catalog]

    def index_for(self, kind: str) -> Any:
        """The index of ``kind`` holding the current catalog; built on first use, then cached."""
        catalog = self.catalog_dropdown.value
        key = (catalog, kind)
        if key not in self._built:
            index = self._given[kind] if kind in self._given else make_index(kind)
            tools = list(self._catalog_tools(catalog).values())
            index.clear_index(SESSION)
            index.index_tools(SESSION, tools)
            self._built[key] = index
        return self._built[key]

    # ---- search ----------------------------------------------------------------------------------------------
    def search(self) -> None:
        """Search every kind with the current query and redraw the columns."""
        query = self.query_box.value
        k = int(self.max_results.value)
        tools = self._catalog_tools(self.catalog_dropdown.value)
        for kind in self.kinds:
            started = time.perf_counter()
            try:
                index = self.index_for(kind)
                request = SearchRequest(SESSION, query, k)
                hybrid = getattr(index, "explain_search", None)
                if hybrid is not None:  # the fused ranking and its evidence in one call
                    weight = float(getattr(index, "vector_weight", 0.0))
                    ranked = [(h.tool_name, h.score, why_hybrid(h, weight)) for h in hybrid(request)]
                else:
                    ranked = [
                        (r.tool_name, r.relevance_score, None) for r in index.search(request).tool_references
                    ]
                elapsed = (time.perf_counter() - started) * 1000
                hits = []
                for name, score, why in ranked:
                    tool = tools.get(name)
                    if tool is None:
                        continue
                    if why is None and kind in ("regex", "lucene"):
                        why = explain_html(kind, index, query, tool)
                    elif why is None:
                        why = why_generic(tool, score, "cosine" if kind == "vector" else "score")
                    hits.append((tool, score, why))
                self.results[kind] = [(tool.name, score) for tool, score, _ in hits]
                self.columns[kind].value = column_html(kind, hits, elapsed)
            except Exception as exc:  # noqa: BLE001 - one broken index must not blank the others
                self.results[kind] = []
                self.columns[kind].value = column_html(
                    kind, [], (time.perf_counter() - started) * 1000, f"{type(exc).__name__}: {exc}"
                )
        self.status.value = t.panel(
            f"Query <b style='font-family:{t.MONO}'>“{t.esc(query)}”</b> over <b>{len(tools)}</b> tools of "
            f"{t.esc(self.catalog_dropdown.value)}; top {k} per index. "
            + t.muted("Scores are not comparable across columns: each index has its own scale.")
        )
