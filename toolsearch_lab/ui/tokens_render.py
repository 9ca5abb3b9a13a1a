"""Pure render functions for the TokenDashboard: token numbers in, figure specs and HTML out."""

from __future__ import annotations

from toolsearch_lab.loop.search_tool import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.tokens import REPLY_PRIMING
from toolsearch_lab.trace import RunTrace
from toolsearch_lab.ui import theme as t

MAX_TICK_LABELS = 40  # more tool names than this on one axis are unreadable on a projector


def per_tool_spec(
    rows: list[tuple[str, int]],
    total: int,
    catalog: str,
    sent: set[str] | frozenset = frozenset(),
    func_end: int = 12,
) -> dict:
    """One bar per tool definition, most expensive first. Tools the run sent are teal, the rest grey."""
    names = [n for n, _ in rows]
    costs = [c for _, c in rows]
    colours = [t.FOUND if n in sent else t.BASELINE for n in names]
    many = len(rows) > MAX_TICK_LABELS
    data = [
        {
            "type": "bar",
            "name": "tokens per tool",
            "x": names,
            "y": costs,
            "marker": {"color": colours},
            "hovertemplate": "%{x}: %{y:,} tokens<extra></extra>",
            "showlegend": False,
        }
    ]
    annotations = []
    if many:  # name the three most expensive tools instead of 100+ unreadable tick labels
        # Labels stacked top-down in rank order at the same horizontal offset, so their lines never cross.
        top = rows[0][1] if rows else 1
        for i, (name, cost) in enumerate(rows[:3]):
            annotations.append(
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
            )
    mean = total / len(rows) if rows else 0
    sent_note = (
        f" · <span style='color:{t.FOUND}'>■</span> sent by tool search in this run ({len(sent & set(names))})"
        if sent
        else ""
    )
    subtitle = (
        f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>sending all of them costs "
        f"{total:,} prompt tokens in every request (incl. {func_end} once for the tools block) · mean "
        f"{mean:,.0f} per tool{sent_note}</span>"
    )
    layout = t.base_layout(
        f"Tokens per tool definition: {t.esc(catalog)} ({len(rows)} tools, most expensive first)<br>{subtitle}",
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
        margin={"l": 80, "r": 30, "t": 100, "b": 60 if many else 160},
    )
    return {"data": data, "layout": layout}


def run_spec(
    trace: RunTrace | None, search_only_tokens: int, all_tools_tokens: int, catalog_size: int
) -> dict:
    """Prompt tokens per request split into tool definitions and everything else, tool search vs all tools.

    Without a run: the tools block of a single request, toolSearchTool alone vs every tool."""
    if trace is not None and trace.iterations:
        x = [str(it.index) for it in trace.iterations]
        ts_tools = [it.tokens.tool_search.tools for it in trace.iterations]
        ts_rest = [it.tokens.tool_search.total - it.tokens.tool_search.tools for it in trace.iterations]
        base_tools = [it.tokens.baseline.tools for it in trace.iterations]
        base_rest = [it.tokens.baseline.total - it.tokens.baseline.tools for it in trace.iterations]
        n_all = trace.catalog_size
        total = trace.tokens_total()
        title = (
            f"Prompt tokens per model request: tool search vs all {n_all} tools<br>"
            f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>whole run: "
            f"{total['prompt_tool_search']:,} vs {total['prompt_baseline']:,} prompt tokens, "
            f"{total['prompt_saved_pct']:g}% saved; dark = tool definitions, light = system + messages</span>"
        )
        x_title = "Iteration (one model request each)"
    else:
        x = ["one request"]
        ts_tools, ts_rest = [search_only_tokens], [0]
        base_tools, base_rest = [all_tools_tokens], [0]
        n_all = catalog_size
        title = (
            f"Tool definitions in one request: toolSearchTool alone vs all {n_all} tools<br>"
            f"<span style='font-size:{t.FONT_SIZE - 1}px;color:{t.MUTED}'>{search_only_tokens:,} vs "
            f"{all_tools_tokens:,} tokens before the conversation even starts</span>"
        )
        x_title = ""
    data = [
        {
            "type": "bar",
            "name": "tool search: tool definitions",
            "x": x,
            "y": ts_tools,
            "offsetgroup": "search",
            "marker": {"color": t.SEARCH},
            "hovertemplate": "%{y:,} tokens of tool definitions<extra></extra>",
        },
        {
            "type": "bar",
            "name": "tool search: system + messages",
            "x": x,
            "y": ts_rest,
            "base": ts_tools,
            "offsetgroup": "search",
            "marker": {"color": t.SEARCH_LIGHT},
            "hovertemplate": "%{y:,} tokens of system prompt, messages and framing<extra></extra>",
        },
        {
            "type": "bar",
            "name": f"all {n_all} tools: tool definitions",
            "x": x,
            "y": base_tools,
            "offsetgroup": "all",
            "marker": {"color": t.BASELINE},
            "hovertemplate": "%{y:,} tokens of tool definitions<extra></extra>",
        },
        {
            "type": "bar",
            "name": f"all {n_all} tools: system + messages",
            "x": x,
            "y": base_rest,
            "base": base_tools,
            "offsetgroup": "all",
            "marker": {"color": t.BASELINE_LIGHT},
            "hovertemplate": "%{y:,} tokens of system prompt, messages and framing<extra></extra>",
        },
    ]
    layout = t.base_layout(
        title,
        height=450,
        barmode="group",
        bargap=0.3,
        xaxis=t.axis(x_title, type="category", showgrid=False),
        yaxis=t.axis("prompt tokens", rangemode="tozero", tickformat=",.0f"),
        margin={"l": 80, "r": 30, "t": 140, "b": 60},
    )
    return {"data": data, "layout": layout}


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return out


def prefix_rows(trace: RunTrace, tool_costs: dict[str, int], func_end: int = 12) -> list[dict]:
    """For each request: how much of it repeats the previous request from the very start (a prompt cache can
    reuse that) and how much is new, with tool search and with all tools.

    Model: the provider renders the tool definitions first, then the system prompt, then the conversation
    (OpenAI's format does). The conversation only grows, so with an unchanged tool list everything the previous
    request sent is a prefix of this one. A changed tool list breaks the prefix right after the last tool the
    two lists share in order. Idealised: real caches also need a minimum length and work in blocks.
    """
    its = trace.iterations
    costs = dict(tool_costs)
    if its and its[0].exposed_tools == [TOOL_SEARCH_TOOL_NAME] and TOOL_SEARCH_TOOL_NAME not in costs:
        costs[TOOL_SEARCH_TOOL_NAME] = max(its[0].tokens.tool_search.tools - func_end, 0)
    rows = []
    for i, it in enumerate(its):
        ts, base = it.tokens.tool_search, it.tokens.baseline
        row = {
            "index": it.index,
            "ts_total": ts.total,
            "base_total": base.total,
            "added": [],
            "removed": [],
            "break_after": None,
        }
        if i == 0:
            row.update(ts_reused=0, base_reused=0)
        else:
            prev = its[i - 1]
            row["base_reused"] = max(prev.tokens.baseline.total - REPLY_PRIMING, 0)
            if prev.exposed_tools == it.exposed_tools:
                row["ts_reused"] = max(prev.tokens.tool_search.total - REPLY_PRIMING, 0)
            else:
                shared = _common_prefix(prev.exposed_tools, it.exposed_tools)
                row["ts_reused"] = sum(costs.get(n, 0) for n in shared)
                row["break_after"] = shared[-1] if shared else ""
                row["added"] = [n for n in it.exposed_tools if n not in prev.exposed_tools]
                row["removed"] = [n for n in prev.exposed_tools if n not in it.exposed_tools]
        row["ts_reused"] = min(row["ts_reused"], ts.total)
        row["base_reused"] = min(row["base_reused"], base.total)
        row["ts_new"] = ts.total - row["ts_reused"]
        row["base_new"] = base.total - row["base_reused"]
        rows.append(row)
    return rows


def _bar(reused: int, new: int, scale: float, colour: str, light: str, width: int) -> str:
    w_reused = round(reused * scale)
    w_new = max(round(new * scale), 1 if new else 0)
    hatch = f"repeating-linear-gradient(45deg,{light},{light} 6px,#FFFFFF 6px,#FFFFFF 9px)"
    return (
        f"<div style='display:flex;width:{width}px;height:18px;align-items:center'>"
        f"<div title='{reused:,} tokens repeat the previous request' style='width:{w_reused}px;height:18px;"
        f"background:{hatch};border:1px solid {light}'></div>"
        f"<div title='{new:,} tokens are new from here' style='width:{w_new}px;height:18px;background:{colour}'>"
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
            f"<span style='color:{t.MUTED}'>Hatched: identical to the start of the previous request. Solid: new "
            "from the first changed token on. Adding tools changes the tool block at the top of the prompt, so "
            "everything after it counts as new; sending all tools every time keeps the prefix stable.</span></div>"
        ),
        "<table style='border-collapse:collapse'>",
    ]
    for r in rows:
        note = ""
        if r["added"] or r["removed"]:
            where = (
                f"after <code>{t.esc(r['break_after'])}</code>" if r["break_after"] else "at the first tool"
            )
            changes = " ".join([f"+{t.esc(n)}" for n in r["added"]] + [f"−{t.esc(n)}" for n in r["removed"]])
            note = (
                f"<div style='color:{t.INK};background:{t.NEW_LIGHT};padding:0 6px;font-size:{t.FONT_SIZE - 2}px'>"
                f"tools changed ({changes}): prefix breaks {where}</div>"
            )
        out.append(
            f"<tr><td rowspan=2 style='padding:4px 10px 4px 0;vertical-align:top;font-weight:700'>{r['index']}</td>"
            f"<td style='padding:2px 8px;color:{t.SEARCH};white-space:nowrap'>tool search</td>"
            f"<td>{_bar(r['ts_reused'], r['ts_new'], scale, t.SEARCH, t.SEARCH_LIGHT, bar_width)}{note}</td>"
            f"<td style='padding:2px 8px;white-space:nowrap;font-family:{t.MONO};font-size:{t.FONT_SIZE - 2}px'>"
            f"{r['ts_new']:,} new</td></tr>"
            f"<tr><td style='padding:2px 8px 8px 8px;color:{t.MUTED};white-space:nowrap'>all tools</td>"
            f"<td style='padding-bottom:8px'>{_bar(r['base_reused'], r['base_new'], scale, t.BASELINE, t.BASELINE_LIGHT, bar_width)}</td>"
            f"<td style='padding:2px 8px 8px 8px;white-space:nowrap;font-family:{t.MONO};font-size:{t.FONT_SIZE - 2}px'>"
            f"{r['base_new']:,} new</td></tr>"
        )
    out.append("</table>")
    ts_new = sum(r["ts_new"] for r in rows)
    base_new = sum(r["base_new"] for r in rows)
    ts_all = sum(r["ts_total"] for r in rows)
    base_all = sum(r["base_total"] for r in rows)
    out.append(
        f"<div style='margin-top:6px'>Whole run: tool search sends <b style='color:{t.SEARCH}'>{ts_all:,}</b> "
        f"prompt tokens of which <b>{ts_new:,}</b> are new; all tools send <b>{base_all:,}</b> of which "
        f"<b>{base_new:,}</b> are new. "
        + t.muted("(Idealised: real caches need a minimum prompt length and reuse in blocks.)")
        + "</div>"
    )
    return t.panel("".join(out), width)
