"""CatalogDoctor: the doctor's report as a notebook view. A sortable findings table, a confusion view of the
closest pairs (click a cell to open a tool), and one tool's probes with the rank each index gave it.

The render functions are pure (report in, HTML or a figure spec out); the widget only wires them up.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from toolsearch_lab.eval.doctor import SEVERITIES, DoctorReport, Finding, diagnose
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure

SORTS = {
    "rank (severity, impact)": None,
    "impact": lambda f: -f.impact,
    "tool": lambda f: (f.tool or "~", -f.impact),
    "kind": lambda f: (f.kind, -f.impact),
}
SEVERITY_COLOURS = {"error": (t.BAD, "#FEE2E2"), "warning": (t.NEW, t.NEW_LIGHT), "info": (t.MUTED, t.GRID)}
MAX_ROWS = 40
MAX_PAIR_TOOLS = 14
CELL_PX = 64  # height of one row of the confusion view


def summary_html(report: DoctorReport) -> str:
    cost, pay, rec = report.cost, report.payoff, report.recommendation
    low, high = report.findable_range
    first = cost.encodings[0]
    scores = " · ".join(
        f"{t.esc(s.index)} <b>{s.found_at_k:.0%}</b> ({s.tools_never_found} never found)"
        for s in report.scores
    )
    advice = (
        f"use tool search with <b>{t.esc(rec.index)}</b>, maxResults <b>{rec.max_results}</b>, "
        f"accumulation <b>{'on' if rec.accumulation else 'off'}</b>"
        if rec.use_tool_search
        else "<b>send every tool</b>; tool search does not pay off"
    )
    counts = ", ".join(_count(len(report.by_severity(s)), s) for s in SEVERITIES)
    saved = (
        f"{pay.saved_share:.0%} saved" if pay.saved_share >= 0 else f"{-pay.saved_share:.0%} more with search"
    )
    return t.panel(
        f"<b>{t.esc(report.source)}</b>: {_count(report.tools, 'tool')}, <b>{cost.total[first]:,}</b> "
        f"prompt tokens per request with every tool ({first}).<br>"
        f"Findability score <b>{report.score:.0%}</b> (the tools' own queries that find their tool in the "
        f"top {report.k}): {scores}. Plain requests expected in the top {report.k} with "
        f"{t.esc(rec.index)}: <b>{low:.0%}-{high:.0%}</b> (user-style to own-words probes).<br>"
        f"A {pay.calls_per_task}-call task ({pay.result_tokens:,}-token tool results): "
        f"{pay.tokens_per_task_all:,} tokens sending everything vs "
        f"{pay.tokens_per_task_search:,} with search ({saved}). Advice: {advice}.<br>"
        f"{t.muted(t.esc(rec.reasons['tool_search']))}<br>Findings: {counts}."
    )


def sort_findings(findings: list[Finding], sort_by: str, severity: str = "all") -> list[Finding]:
    """The findings to show: filtered by severity ("all" keeps every one), in the chosen order."""
    if sort_by not in SORTS:
        raise ValueError(f"sort_by must be one of {list(SORTS)}, got {sort_by!r}")
    if severity != "all" and severity not in SEVERITIES:
        raise ValueError(f"severity must be 'all' or one of {SEVERITIES}, got {severity!r}")
    rows = [f for f in findings if severity in ("all", f.severity)]
    key = SORTS[sort_by]
    return sorted(rows, key=key) if key is not None else rows


def findings_html(findings: list[Finding], limit: int = MAX_ROWS) -> str:
    if not findings:
        return t.panel(t.muted("No findings of this kind."))
    cell = "padding:4px 8px;vertical-align:top;border-bottom:1px solid " + t.GRID
    widths = ("4%", "13%", "23%", "34%", "26%")
    head = "".join(
        f'<th style="{cell};text-align:left;width:{w}">{h}</th>'
        for h, w in zip(("#", "severity", "tool", "what is wrong", "fix"), widths, strict=True)
    )
    rows = []
    for i, f in enumerate(findings[:limit], 1):
        fg, bg = SEVERITY_COLOURS[f.severity]
        tools = "".join(t.chip(name, t.INK, t.GRID) for name in (f.tools or [f.tool]) if name) or t.muted(
            "catalog"
        )
        rows.append(
            f'<tr><td style="{cell}">{i}</td><td style="{cell}">{t.chip(f.severity, fg, bg)}<br>'
            f"{t.muted(t.esc(f.kind))}<br>{t.muted(f'impact {f.impact:.2f}')}</td>"
            f'<td style="{cell}">{tools}</td><td style="{cell}">{t.esc(t.clip(f.problem, 360))}</td>'
            f'<td style="{cell}">{t.esc(t.clip(f.fix, 240))}</td></tr>'
        )
    more = t.muted(f"… and {len(findings) - limit} more") if len(findings) > limit else ""
    return t.panel(
        f'<table style="border-collapse:collapse;width:100%;font-size:{t.FONT_SIZE - 2}px">'
        f"<tr>{head}</tr>{''.join(rows)}</table>{more}"
    )


def pair_tools(report: DoctorReport, limit: int = MAX_PAIR_TOOLS) -> list[str]:
    """The tools of the closest pairs, in pair order, at most ``limit``."""
    names: list[str] = []
    for p in report.confusable:
        for name in (p.a, p.b):
            if name not in names and len(names) < limit:
                names.append(name)
    return names


def confusion_spec(report: DoctorReport, limit: int = MAX_PAIR_TOOLS) -> dict:
    """A heatmap of the closest pairs: cell (row a, column b) counts a's probes where b ranked above a;
    the hover adds the description cosine and the words that differ."""
    names = pair_tools(report, limit)
    pos = {n: i for i, n in enumerate(names)}
    z: list[list[float | None]] = [[None] * len(names) for _ in names]
    text = [[""] * len(names) for _ in names]
    for p in report.confusable:
        if p.a in pos and p.b in pos:
            cos = f"{p.similarity:.2f}" if p.similarity is not None else "-"
            for row, col, lost, mine, theirs in (
                (p.a, p.b, p.a_lost_to_b, p.only_a, p.only_b),
                (p.b, p.a, p.b_lost_to_a, p.only_b, p.only_a),
            ):
                z[pos[row]][pos[col]] = lost
                text[pos[row]][pos[col]] = (
                    f"{t.esc(row)} lost {lost} probe(s) to {t.esc(col)}<br>cosine {cos}, signals "
                    f"{', '.join(p.signals)}<br>only {t.esc(row)}: {t.esc(' '.join(mine[:6]) or '-')}"
                    f"<br>only {t.esc(col)}: {t.esc(' '.join(theirs[:6]) or '-')}"
                )
    title = "Closest pairs: probes of the row tool that the column tool outranked"
    if not names:
        title = "No confusable pairs found"
    # Rows get a fixed height so a few pairs still read as a grid (a fixed figure height squashed them into
    # slivers); the bottom margin holds the slanted tool names of the x axis and its title.
    label = max((len(n) for n in names), default=8)
    bottom = 50 + round(label * t.FONT_SIZE * 0.35)
    height = 100 + bottom + max(CELL_PX * len(names), 2 * CELL_PX)
    top = max((v for row in z for v in row if v is not None), default=0)
    return {
        "data": [
            {
                "type": "heatmap",
                "x": names,
                "y": names,
                "z": z,
                "zmin": 0,
                "zmax": max(top, 1),
                "text": text,
                "texttemplate": "%{z}",
                "textfont": {"size": t.FONT_SIZE + 1},
                "hovertemplate": "%{text}<extra></extra>",
                "colorscale": [[0.0, t.NEW_LIGHT], [1.0, t.BAD]],
                "hoverongaps": False,
                "xgap": 2,
                "ygap": 2,
                "colorbar": {
                    "title": {"text": "probes lost", "side": "right"},
                    "dtick": 1,
                    "thickness": 16,
                    "outlinewidth": 0,
                },
            }
        ],
        "layout": t.base_layout(
            title,
            height,
            xaxis=t.axis("outranking tool", tickangle=-30, showgrid=False, side="bottom"),
            yaxis=t.axis("tool whose probes lost", autorange="reversed", showgrid=False),
            margin={"l": 40, "r": 40, "t": 70, "b": bottom},
            plot_bgcolor="#F9FAFB",  # an empty cell (no pair) reads as a cell, not as missing plot
        ),
    }


def tool_html(report: DoctorReport, name: str) -> str:
    """One tool: each probe with its rank per index and the tools above it, its cost, its findings."""
    item = report.tool(name)
    cell = "padding:3px 8px;vertical-align:top;border-bottom:1px solid " + t.GRID
    head = "".join(
        f'<th style="{cell};text-align:left">{h}</th>' for h in ["probe", "query", *report.indexes]
    )
    rows = []
    for q in item.queries:
        ranks = "".join(
            f'<td style="{cell}">{_rank_cell(q.ranks.get(label), q.above.get(label, []), report.k)}</td>'
            for label in report.indexes
        )
        rows.append(
            f'<tr><td style="{cell}">{t.esc(q.kind)}</td><td style="{cell}">{t.esc(q.query)}</td>{ranks}</tr>'
        )
    cost = next((c for c in report.cost.tools if c.name == name), None)
    cost_line = (
        f"{cost.tokens[report.cost.encodings[0]]:,} tokens ({report.cost.encodings[0]})"
        + (f": {t.esc('; '.join(cost.reasons))}" if cost.reasons else "")
        if cost
        else ""
    )
    findings = "".join(
        f"<li>{t.esc(f.severity)} · {t.esc(f.kind)}: {t.esc(t.clip(f.problem, 240))}</li>"
        for f in report.findings_for(name)
    )
    return t.panel(
        t.heading(f"{t.esc(name)} · findability {item.score:.0%}")
        + f'<table style="border-collapse:collapse;font-size:{t.FONT_SIZE - 2}px"><tr>{head}</tr>'
        + "".join(rows)
        + "</table>"
        + f"<div>{cost_line}</div>"
        + (f"<ul>{findings}</ul>" if findings else t.muted("No findings for this tool."))
    )


def _rank_cell(rank: int | None, above: list[str], k: int) -> str:
    colour = t.GOOD if rank is not None and rank <= k else (t.NEW if rank is not None else t.BAD)
    label = f"#{rank}" if rank is not None else "not found"
    rivals = t.muted(" above: " + ", ".join(t.esc(n) for n in above[:3])) if above else ""
    return f'<b style="color:{colour}">{label}</b>{rivals}'


class CatalogDoctor(Displayable):
    """``CatalogDoctor(report)`` or ``CatalogDoctor(catalog, **diagnose_options)``."""

    def __init__(self, report_or_catalog: Any, **diagnose_options: Any) -> None:
        if isinstance(report_or_catalog, DoctorReport):
            self.report = report_or_catalog
        else:
            self.report = diagnose(report_or_catalog, **diagnose_options)
        style = {"description_width": "initial"}
        self.sort = widgets.Dropdown(options=list(SORTS), description="Sort by", style=style)
        self.severity = widgets.ToggleButtons(options=["all", *SEVERITIES], description="Show", style=style)
        self.tool_picker = widgets.Dropdown(
            description="Tool", style=style, layout=widgets.Layout(width="520px")
        )
        self.summary = html_sink()
        self.table = html_sink()
        self.detail = html_sink()
        self.confusion = new_figure(confusion_spec(self.report))
        self.confusion.data[0].on_click(self._on_cell_click)
        self.sort.observe(lambda _: self._draw_table(), names="value")
        self.severity.observe(lambda _: self._draw_table(), names="value")
        self.tool_picker.observe(lambda change: self._draw_tool(change["new"]), names="value")
        self.widget = widgets.VBox(
            [
                self.summary,
                widgets.HBox([self.sort, self.severity]),
                self.table,
                figure_box(self.confusion),
                self.tool_picker,
                self.detail,
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )
        self.show(self.report)

    def show(self, report: DoctorReport) -> None:
        """Draw another report (e.g. after fixing descriptions) in the same view."""
        self.report = report
        self.summary.value = summary_html(report)
        self._draw_table()
        update_figure(self.confusion, confusion_spec(report))
        ordered = [(f"{f.name}  ({f.score:.0%})", f.name) for f in report.findability]
        self.tool_picker.options = ordered
        if ordered:
            self.select_tool(ordered[0][1])

    def select_tool(self, name: str) -> None:
        """Open one tool's probes (what a click on the confusion view does)."""
        self.report.tool(name)  # a clear KeyError for an unknown name
        if self.tool_picker.value != name:
            self.tool_picker.value = name
        else:
            self._draw_tool(name)

    def _draw_table(self) -> None:
        self.table.value = findings_html(
            sort_findings(self.report.findings, self.sort.value, self.severity.value)
        )

    def _draw_tool(self, name: str | None) -> None:
        self.detail.value = tool_html(self.report, name) if name else ""

    def _on_cell_click(self, trace: Any, points: Any, state: Any) -> None:
        if points.ys:
            self.select_tool(points.ys[0])


def _count(n: int, noun: str) -> str:
    """``1 error``, ``5 warnings``; "info" has no plural."""
    return f"{n} {noun}" if n == 1 or noun == "info" else f"{n} {noun}s"
