"""IndexExplorer: one query, every index kind side by side, each ranking with its scores and the reason for
each score (regex: the matched text; BM25: what each query term contributed; vector: the cosine; hybrid:
its weighted parts). Every reason comes from the index's own ``explain`` (one shared ``Explanation``
type); the hybrid index's components get columns of their own, so each number in a hybrid reason can be
found, with the same rank, in the column it comes from."""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, load_catalog
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import Explanation, SearchRequest
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, html_sink
from toolsearch_lab.ui.display import Html

SESSION = "index-explorer"
KIND_TITLES = {
    "regex": ("regex", "Spring's keyword regex: query words OR-ed, hits in name count double"),
    "lucene": ("lucene (BM25)", "Spring's LuceneToolIndex: BM25 over name and description"),
    "vector": ("vector", "embeddings: cosine similarity of query and tool text"),
    "hybrid": ("hybrid", "BM25, character n-gram and vector scores, normalised and fused"),
    "hybrid/keyword": ("hybrid · its BM25", "the hybrid's word side: stemmed BM25 over the full tool text"),
    "hybrid/char": ("hybrid · its char n-grams", "the hybrid's character 3-5-gram TF-IDF cosine"),
    "hybrid/vector": ("hybrid · its vectors", "the hybrid's embedding side: mean cosine over its views"),
}
KIND_COLOURS = {"regex": t.NEW, "lucene": t.SEARCH, "vector": t.FOUND, "hybrid": t.INK}
COLUMN_WIDTH = (t.FIG_WIDTH - 10) // 2
COMPONENT_ROLES = ("keyword", "char", "vector")  # the hybrid's components, shown after it


def kind_label(kind: str) -> Html:
    """An index kind as a table cell, in the colour every view gives that index."""
    return Html(f"<b style='color:{KIND_COLOURS.get(kind, t.INK)}'>{t.esc(kind)}</b>", kind)


# ---- "why" renderers: explanation objects in, escaped HTML out -----
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


def why_regex(details: Any) -> str:
    """The regex index's evidence (``Explanation.details``): the parts of the score and the marked hits."""
    name_spans = [(s.start, s.end) for s in details.spans if s.field == "name"]
    desc_spans = [(s.start, s.end) for s in details.spans if s.field == "description"]
    other = [s for s in details.spans if s.field not in ("name", "description")]
    parts = [
        f"name {details.name_score:.2f} + description {details.description_score:.2f}"
        + (f" + parameters {details.parameter_score:.2f}" if details.parameter_score else "")
    ]
    if name_spans:
        parts.append(
            f"<span style='font-family:{t.MONO}'>{marked(details.fields.get('name', ''), name_spans)}</span>"
        )
    if desc_spans or not name_spans:
        parts.append(marked(details.fields.get("description", ""), desc_spans))
    if other:
        parts.append(t.muted("parameters: ") + ", ".join(t.esc(s.text) for s in other[:6]))
    return "<br>".join(parts)


def why_bm25(details: Any) -> str:
    """The BM25 index's evidence (``Explanation.details``): what each query term added, as chips."""
    leaves = [leaf for c in details.clauses for leaf in c.terms]
    if not leaves:
        return t.muted("no query term matched")
    leaves.sort(key=lambda leaf: -leaf.contribution)
    chips = []
    for leaf in leaves:
        kind = "“…”" if leaf.kind == "phrase" else ""
        title = (
            f"idf {leaf.idf:.3f} (in {leaf.doc_freq} of {leaf.doc_count} tools), "
            f"tf {leaf.tf}, length {leaf.dl} vs avg {leaf.avgdl:.1f}"
        )
        chips.append(
            f"<span style='display:inline-block;margin:1px 4px 1px 0;padding:0 6px;border-radius:8px;"
            f"background:{t.SEARCH_LIGHT}' title='{title}'><span style='font-family:{t.MONO}'>"
            f"{t.esc(leaf.field)}:{t.esc(leaf.term)}{kind}</span> <b>+{leaf.contribution:.2f}</b></span>"
        )
    return t.muted("term contributions: ") + "".join(chips)


def why_parts(exp: Explanation, label: str = "") -> str:
    """Any index's explanation as its additive parts: ``label = value (detail) + ...``."""
    if not exp.parts:
        return t.muted(f"{label}{exp.score:.3f}")
    terms = [
        f"{t.esc(p.label)} <b>{p.value:.2f}</b>" + (" " + t.muted(f"({p.detail})") if p.detail else "")
        for p in exp.parts
    ]
    return t.muted(label) + " + ".join(terms)


def why_hybrid(exp: Explanation) -> str:
    """Fused score = the weighted, normalised component scores, each with its raw score and column rank."""
    return why_parts(exp, "fused = ").replace(" x ", " × ")


def explain_html(kind: str, index: Any, query: str, tool: Any) -> str:
    """The "why" line for one hit, from the index's ``explain``; the description when it has none."""
    explain = getattr(index, "explain", None)
    if explain is None:
        return why_generic(tool, None, "")
    try:
        exp = explain(SESSION, query, tool.name)
    except (KeyError, ValueError, TypeError) as exc:
        return t.muted(t.esc(str(exc)))
    details = getattr(exp, "details", None)
    if hasattr(details, "spans"):
        return why_regex(details)
    if hasattr(details, "clauses"):
        return why_bm25(details)
    if kind == "hybrid":
        return why_hybrid(exp)
    return why_parts(exp)


def why_generic(tool: Any, score: float | None, label: str) -> str:
    score_text = f"{label} {score:.3f} · " if score is not None else ""
    return t.muted(score_text) + t.esc(t.clip(getattr(tool, "description", ""), 160))


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
    names = list(SHIPPED_CATALOGS)
    return names if current in names else [current] + names


def _controls(
    query: str, max_results: int, catalog: str, options: list[str]
) -> tuple[widgets.Text, widgets.IntSlider, widgets.Dropdown]:
    """The query box, the maxResults slider and the catalog dropdown."""
    style = {"description_width": "initial"}
    query_box = widgets.Text(
        value=query,
        description="Query",
        continuous_update=False,
        style=style,
        layout=widgets.Layout(width="560px"),
    )
    slider = widgets.IntSlider(
        value=max_results,
        min=1,
        max=10,
        description="maxResults",
        continuous_update=False,
        style=style,
        layout=widgets.Layout(width="300px"),
    )
    dropdown = widgets.Dropdown(
        options=options,
        value=catalog,
        description="Catalog",
        style=style,
        layout=widgets.Layout(width="260px"),
    )
    return query_box, slider, dropdown


class IndexExplorer(Displayable):
    """``indexes`` (kind → index object) replaces the factory, e.g. to explore your own configuration.
    With ``show_components`` (the default) a hybrid column is followed by one column per component of the
    hybrid index (its BM25, its character n-grams, its vectors)."""

    def __init__(
        self,
        catalog: str = "github-mcp",
        query: str = "create a pull request",
        kinds: tuple[str, ...] = ("regex", "lucene", "vector", "hybrid"),
        max_results: int = 5,
        indexes: dict[str, Any] | None = None,
        tools: list | None = None,
        show_components: bool = True,
    ) -> None:
        self.kinds = tuple(kinds)
        if show_components and "hybrid" in self.kinds:
            self.kinds += tuple(f"hybrid/{role}" for role in COMPONENT_ROLES)
        self._given = dict(indexes or {})
        self._tools_given = list(tools) if tools is not None else None
        self._built: dict[tuple[str, str], Any] = {}  # (catalog, kind) → index holding that catalog
        self._tools: dict[str, dict[str, Any]] = {}  # catalog → name → Tool
        options = [catalog] if self._tools_given is not None else _catalog_names(catalog)
        self.query_box, self.max_results, self.catalog_dropdown = _controls(
            query, max_results, catalog, options
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

    # ---- indexes -----
    def _catalog_tools(self, catalog: str) -> dict[str, Any]:
        if catalog not in self._tools:
            given = self._tools_given
            tools = given if given is not None else load_catalog(catalog).tools
            self._tools[catalog] = {tool.name: tool for tool in tools}
        return self._tools[catalog]

    def index_for(self, kind: str) -> Any:
        """The index of ``kind`` holding the current catalog; built on first use, then cached. A kind
        ``hybrid/<role>`` is that component of the hybrid index (None when the hybrid does not use it)."""
        if kind.startswith("hybrid/"):
            return self.index_for("hybrid").components.get(kind.split("/", 1)[1])
        catalog = self.catalog_dropdown.value
        key = (catalog, kind)
        if key not in self._built:
            index = self._given[kind] if kind in self._given else make_index(kind)
            tools = list(self._catalog_tools(catalog).values())
            index.clear_index(SESSION)
            index.index_tools(SESSION, tools)
            self._built[key] = index
        return self._built[key]

    # ---- search -----
    def search(self) -> None:
        """Search every kind with the current query and redraw the columns."""
        query = self.query_box.value
        k = int(self.max_results.value)
        tools = self._catalog_tools(self.catalog_dropdown.value)
        for kind in self.kinds:
            started = time.perf_counter()
            try:
                hits = self._hits(kind, query, k, tools)
                self.results[kind] = [(tool.name, score) for tool, score, _ in hits]
                self.columns[kind].value = column_html(kind, hits, (time.perf_counter() - started) * 1000)
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

    def _hits(
        self, kind: str, query: str, k: int, tools: dict[str, Any]
    ) -> list[tuple[Any, float | None, str]]:
        """(tool, score, why) for each result of ``kind``, the why from the index's own ``explain``."""
        index = self.index_for(kind)
        if index is None:
            raise ValueError("this hybrid index does not use that component (its share is 0)")
        hits = []
        for ref in index.search(SearchRequest(SESSION, query, k)).tool_references:
            tool = tools.get(ref.tool_name)
            if tool is not None:
                hits.append((tool, ref.relevance_score, explain_html(kind, index, query, tool)))
        return hits
