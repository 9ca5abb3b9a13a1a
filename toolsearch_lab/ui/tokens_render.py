"""Pure render functions for the TokenDashboard: token numbers in, figure specs and HTML out."""

from __future__ import annotations

from typing import Any

from toolsearch_lab.eval.cost import Segment, shared_prefix_tokens
from toolsearch_lab.loop.search_tool import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.tokens import REPLY_PRIMING
from toolsearch_lab.trace import Iteration, RunTrace, TokenCount
from toolsearch_lab.ui import theme as t

MAX_TICK_LABELS = 40  # more tool names than this on one axis are unreadable on a projector


# ---- tokens per tool ---------------------------------------------------------------------------------------
def per_tool_spec(
    rows: list[tuple[str, int]],
    total: int,
    catalog: str,
    sent: set[str] | frozenset = frozenset(),
    func_end: int = 12,
    sent_label: str = "sent by tool search in this run",
) -> dict:
    """One bar per tool definition, most expensive first. Tools in ``sent`` are teal (legend: ``sent_label``),
    the rest grey."""
    names = [n for n, _ in rows]
    costs = [c for _, c in rows]
    many = len(rows) > MAX_TICK_LABELS
    data = [
        {
            "type": "bar",
            "name": "tokens per tool",
            "x": names,
            "y": costs,
            "marker": {"color": [t.FOUND if n in sent else t.BASELINE for n in names]},
            "hovertemplate": "%{x}: %{y:,} tokens<extra></extra>",
            "showlegend": False,
        }
    ]
    # With 100+ tools the tick labels are unreadable: name the three most expensive tools instead.
    annotations = _top_tool_labels(rows) if many else []
    layout = t.base_layout(
        f"Tokens per tool definition: {t.esc(catalog)} ({len(rows)} tools, most expensive first)"
        f"<br>{_per_tool_subtitle(names, total, func_end, sent, sent_label)}",
        height=470,
        bargap=0.15 if many else 0.3,
        xaxis=t.axis(
            "tool (sorted by cost)" if many else "",
            showticklabels=not many,
            tickangle=-45,
            tickfont={"family": t.MONO, "size": t.FONT_SIZE - 3},
            categoryorder="array",
            categoryarray=names,
        ),
        # Headroom above the tallest bar for the name labels of the top three.
        yaxis=t.axis(
            "prompt tokens of the definition",
            tickformat=",.0f",
            range=[0, max(costs, default=1) * (1.35 if many else 1.08)],
        ),
        annotations=annotations,
        margin={"l": 80, "r": 30, "t": 84, "b": 60 if many else 160},  # no legend: title only
    )
    return {"data": data, "layout": layout}


def _top_tool_labels(rows: list[tuple[str, int]]) -> list[dict]:
    """Name labels for the three most expensive tools, stacked top-down in rank order at the same horizontal
    offset, so their lines never cross."""
    top = rows[0][1] if rows else 1
    return [
        {
            "x": name,
            "y": cost,
            "text": t.esc(name),
            "showarrow": True,
            "arrowhead": 0,
            "axref": "pixel",
            "ax": 70,
            "ayref": "y",
            "ay": top * (1.26 - 0.11 * i),
            "xanchor": "left",
            "arrowcolor": t.MUTED,
            "font": {"family": t.MONO, "size": t.FONT_SIZE - 2},
        }
        for i, (name, cost) in enumerate(rows[:3])
    ]


def _per_tool_subtitle(
    names: list[str], total: int, func_end: int, sent: set[str] | frozenset, sent_label: str
) -> str:
    mean = total / len(names) if names else 0
    sent_note = (
        f" · <span style='color:{t.FOUND}'>■</span> {sent_label} ({len(sent & set(names))})" if sent else ""
    )
    # Short enough for one line at FIG_WIDTH: a longer subtitle runs off the figure's right edge.
    return (
        f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>all of them: {total:,} prompt tokens "
        f"per request ({func_end} for the block) · mean {mean:,.0f} per tool{sent_note}</span>"
    )


# ---- tokens per request ------------------------------------------------------------------------------------
def run_spec(
    trace: RunTrace | None, search_only_tokens: int, all_tools_tokens: int, catalog_size: int
) -> dict:
    """Prompt tokens per request split into tool definitions and everything else, tool search vs all tools.

    Without a run: the tools block of a single request, toolSearchTool alone vs every tool."""
    if trace is not None and trace.iterations:
        x, columns, n_all, title, x_title = _run_columns(trace)
    else:
        x, columns, n_all, title, x_title = _single_request_columns(
            search_only_tokens, all_tools_tokens, catalog_size
        )
    layout = t.base_layout(
        title,
        height=450,
        barmode="group",
        bargap=0.3,
        xaxis=t.axis(x_title, type="category", showgrid=False),
        yaxis=t.axis("prompt tokens", rangemode="tozero", tickformat=",.0f"),
        margin={"l": 80, "r": 30, "t": 160, "b": 60},
    )
    return {"data": _run_bars(x, *columns, n_all), "layout": layout}


_Columns = tuple[list[int], list[int], list[int], list[int]]  # tool search tools/rest, all tools tools/rest


def _run_columns(trace: RunTrace) -> tuple[list[str], _Columns, int, str, str]:
    its = trace.iterations
    x = [str(position + 1) for position in range(len(its))]
    columns = (
        [it.tokens.tool_search.tools for it in its],
        [it.tokens.tool_search.total - it.tokens.tool_search.tools for it in its],
        [it.tokens.baseline.tools for it in its],
        [it.tokens.baseline.total - it.tokens.baseline.tools for it in its],
    )
    n_all = trace.catalog_size
    total = trace.tokens_total()
    title = (
        f"Prompt tokens per model request: tool search vs all {n_all} tools<br>"
        f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>whole run: "
        f"{total['prompt_tool_search']:,} vs {total['prompt_baseline']:,} prompt tokens with every tool put "
        "into each of these requests<br>"
        f"(the per-request counterfactual: {total['prompt_saved_pct']:g}% saved; a real all-tools run makes "
        "fewer requests); dark = tool definitions, light = system + messages</span>"
    )
    return x, columns, n_all, title, "Iteration (one model request each)"


def _single_request_columns(
    search_only_tokens: int, all_tools_tokens: int, catalog_size: int
) -> tuple[list[str], _Columns, int, str, str]:
    columns = ([search_only_tokens], [0], [all_tools_tokens], [0])
    title = (
        f"Tool definitions in one request: toolSearchTool alone vs all {catalog_size} tools<br>"
        f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>{search_only_tokens:,} vs "
        f"{all_tools_tokens:,} tokens before the conversation even starts</span>"
    )
    return ["one request"], columns, catalog_size, title, ""


def _run_bars(
    x: list[str],
    ts_tools: list[int],
    ts_rest: list[int],
    base_tools: list[int],
    base_rest: list[int],
    n_all: int,
) -> list[dict]:
    """Two stacked bars per request: tool definitions, with system + messages on top."""
    tools_hover = "%{y:,} tokens of tool definitions<extra></extra>"
    rest_hover = "%{y:,} tokens of system prompt, messages and framing<extra></extra>"
    return [
        _bar_trace("tool search: tool definitions", x, ts_tools, "search", t.SEARCH, tools_hover),
        _bar_trace(
            "tool search: system + messages", x, ts_rest, "search", t.SEARCH_LIGHT, rest_hover, ts_tools
        ),
        _bar_trace(f"all {n_all} tools: tool definitions", x, base_tools, "all", t.BASELINE, tools_hover),
        _bar_trace(
            f"all {n_all} tools: system + messages",
            x,
            base_rest,
            "all",
            t.BASELINE_LIGHT,
            rest_hover,
            base_tools,
        ),
    ]


def _bar_trace(
    name: str, x: list[str], y: list[int], group: str, colour: str, hover: str, base: list[int] | None = None
) -> dict:
    bar: dict[str, Any] = {"type": "bar", "name": name, "x": x, "y": y}
    if base is not None:
        bar["base"] = base
    bar.update(offsetgroup=group, marker={"color": colour}, hovertemplate=hover)
    return bar


# ---- prompt prefix -----------------------------------------------------------------------------------------
def prefix_rows(trace: RunTrace, tool_costs: dict[str, int], func_end: int = 12) -> list[dict]:
    """For each request: how much of it repeats the previous request from the very start (a prompt cache can
    reuse that) and how much is new, with tool search and with all tools.

    Each pair of consecutive requests is cut into :class:`~toolsearch_lab.eval.cost.Segment` s in the order
    the provider renders them (tool definitions, the end of the tools block, the conversation, the reply
    priming) and the reuse is their :func:`~toolsearch_lab.eval.cost.shared_prefix_tokens`. The trace keeps
    token counts, not messages, and the conversation only grows: it is the previous request's conversation
    plus what this request added, so with an unchanged tool list all the previous request sent is a prefix
    of this one, and a changed tool list breaks the prefix right after the last tool the two lists share in
    order. Idealised: real caches also need a minimum length and work in blocks.
    """
    its = trace.iterations
    costs = dict(tool_costs)
    if its and its[0].exposed_tools == [TOOL_SEARCH_TOOL_NAME] and TOOL_SEARCH_TOOL_NAME not in costs:
        costs[TOOL_SEARCH_TOOL_NAME] = max(its[0].tokens.tool_search.tools - func_end, 0)
    ts_blocks = [
        _tool_block(it.tokens.tool_search, [(n, costs.get(n, 0)) for n in it.exposed_tools]) for it in its
    ]
    # Sending all tools: the same tool block every time, one segment.
    base_blocks = [_tool_block(it.tokens.baseline, [("all tools", it.tokens.baseline.tools)]) for it in its]
    rows = []
    for i, it in enumerate(its):
        ts, base = it.tokens.tool_search, it.tokens.baseline
        row: dict[str, Any] = {"number": i + 1, "ts_total": ts.total, "base_total": base.total}
        row.update(_tool_changes(its[i - 1] if i else None, it))
        ts_reused = base_reused = 0
        if i:
            prev = its[i - 1].tokens
            ts_reused = _reused(prev.tool_search, ts_blocks[i - 1], ts, ts_blocks[i])
            base_reused = _reused(prev.baseline, base_blocks[i - 1], base, base_blocks[i])
        row["ts_reused"] = min(max(ts_reused, 0), ts.total)
        row["base_reused"] = min(max(base_reused, 0), base.total)
        row["ts_new"] = ts.total - row["ts_reused"]
        row["base_new"] = base.total - row["base_reused"]
        rows.append(row)
    return rows


def _tool_block(count: TokenCount, tools: list[tuple[str, int]]) -> list[Segment]:
    """A request's tools block as segments: each tool ``(name, tokens)``, then the rest of the block."""
    listed = [Segment("tool", name, tokens) for name, tokens in tools]
    return [*listed, Segment("tools_end", "", count.tools - sum(s.tokens for s in listed))]


def _reused(prev: TokenCount, prev_block: list[Segment], count: TokenCount, block: list[Segment]) -> int:
    """Tokens at the start of a request that repeat the previous one: the tools blocks, then the
    conversation (the previous request's, plus what this one added), then the reply priming."""
    before = _conversation(prev)
    priming = Segment("priming", "", REPLY_PRIMING)
    earlier = [*prev_block, Segment("message", "conversation part 0", before), priming]
    added = Segment("message", "conversation part 1", _conversation(count) - before)
    later = [*block, Segment("message", "conversation part 0", before), added, priming]
    return shared_prefix_tokens(earlier, later)


def _conversation(count: TokenCount) -> int:
    return count.total - count.tools - REPLY_PRIMING


def _tool_changes(prev: Iteration | None, it: Iteration) -> dict[str, Any]:
    """Which tools came and went since the previous request, and the last tool both lists share from the
    start (``""`` when the first tool changed, None when nothing changed)."""
    if prev is None or prev.exposed_tools == it.exposed_tools:
        return {"added": [], "removed": [], "break_after": None}
    shared = 0
    while shared < min(len(prev.exposed_tools), len(it.exposed_tools)) and (
        prev.exposed_tools[shared] == it.exposed_tools[shared]
    ):
        shared += 1
    return {
        "added": [n for n in it.exposed_tools if n not in prev.exposed_tools],
        "removed": [n for n in prev.exposed_tools if n not in it.exposed_tools],
        "break_after": it.exposed_tools[shared - 1] if shared else "",
    }


def _bar(reused: int, new: int, scale: float, colour: str, light: str, width: int) -> str:
    w_reused = round(reused * scale)
    w_new = max(round(new * scale), 1 if new else 0)
    hatch = f"repeating-linear-gradient(45deg,{light},{light} 6px,#FFFFFF 6px,#FFFFFF 9px)"
    return (
        f"<div style='display:flex;width:{width}px;height:18px;align-items:center'>"
        f"<div title='{reused:,} tokens repeat the previous request' style='width:{w_reused}px;height:18px;"
        f"background:{hatch};border:1px solid {light}'></div>"
        f"<div title='{new:,} tokens are new from here' "
        f"style='width:{w_new}px;height:18px;background:{colour}'>"
        "</div></div>"
    )


def prefix_html(
    trace: RunTrace | None, tool_costs: dict[str, int], func_end: int = 12, width: int = t.PANEL_WIDTH
) -> str:
    """The prompt-prefix view: per request, the part that repeats the previous request (hatched) and the part
    that changed (solid), and which tool changes broke the prefix."""
    if trace is None or not trace.iterations:
        return t.panel(
            t.muted(
                "Pass a run (TokenDashboard(run=...) or .set_run(run)) to see how each request's "
                "prompt prefix changes from one iteration to the next."
            ),
            width,
        )
    rows = prefix_rows(trace, tool_costs, func_end)
    bar_width = width - 360
    scale = bar_width / max(max(r["base_total"] for r in rows), max(r["ts_total"] for r in rows), 1)
    out = [
        t.heading("Prompt prefix from request to request: what a prompt cache could reuse", t.FONT_SIZE + 3),
        (
            "<div style='margin-bottom:6px'>"
            f"<span style='color:{t.MUTED}'>Hatched: identical to the start of the previous request. Solid: "
            "new from the first changed token on. Adding tools changes the tool block at the top of the "
            "prompt, so everything after it counts as new; sending all tools every time keeps the prefix "
            "stable."
            "</span></div>"
        ),
        "<table style='border-collapse:collapse'>",
        *(_prefix_row_html(r, scale, bar_width) for r in rows),
        "</table>",
        _prefix_summary_html(rows),
    ]
    return t.panel("".join(out), width)


def _prefix_row_html(r: dict, scale: float, bar_width: int) -> str:
    """Two table rows for one request: tool search (with what broke its prefix) and all tools."""
    note = ""
    if r["added"] or r["removed"]:
        where = f"after <code>{t.esc(r['break_after'])}</code>" if r["break_after"] else "at the first tool"
        changes = " ".join([f"+{t.esc(n)}" for n in r["added"]] + [f"−{t.esc(n)}" for n in r["removed"]])
        note = (
            f"<div style='color:{t.INK};background:{t.NEW_LIGHT};padding:0 6px;"
            f"font-size:{t.FONT_SIZE - 2}px'>"
            f"tools changed ({changes}): prefix breaks {where}</div>"
        )
    mono = f"white-space:nowrap;font-family:{t.MONO};font-size:{t.FONT_SIZE - 2}px"
    base_bar = _bar(r["base_reused"], r["base_new"], scale, t.BASELINE, t.BASELINE_LIGHT, bar_width)
    return (
        "<tr><td rowspan=2 style='padding:4px 10px 4px 0;vertical-align:top;font-weight:700'>"
        f"{r['number']}</td>"
        f"<td style='padding:2px 8px;color:{t.SEARCH};white-space:nowrap'>tool search</td>"
        f"<td>{_bar(r['ts_reused'], r['ts_new'], scale, t.SEARCH, t.SEARCH_LIGHT, bar_width)}{note}</td>"
        f"<td style='padding:2px 8px;{mono}'>{r['ts_new']:,} new</td></tr>"
        f"<tr><td style='padding:2px 8px 8px 8px;color:{t.MUTED};white-space:nowrap'>all tools</td>"
        f"<td style='padding-bottom:8px'>{base_bar}</td>"
        f"<td style='padding:2px 8px 8px 8px;{mono}'>{r['base_new']:,} new</td></tr>"
    )


def _prefix_summary_html(rows: list[dict]) -> str:
    ts_new = sum(r["ts_new"] for r in rows)
    base_new = sum(r["base_new"] for r in rows)
    ts_all = sum(r["ts_total"] for r in rows)
    base_all = sum(r["base_total"] for r in rows)
    return (
        "<div style='margin-top:6px'>Whole run: tool search sends "
        f"<b style='color:{t.SEARCH}'>{ts_all:,}</b> "
        f"prompt tokens of which <b>{ts_new:,}</b> are new; all tools send <b>{base_all:,}</b> of which "
        f"<b>{base_new:,}</b> are new. "
        + t.muted("(Idealised: real caches need a minimum prompt length and reuse in blocks.)")
        + "</div>"
    )
