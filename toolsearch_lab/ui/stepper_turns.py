"""The stepper across a conversation's turns: a band per user turn behind both figures, a turn selector's
choices, and a panel for the selected request's turn (what the user wrote, what chat memory did during it,
the tools its first request exposed, the found tools it carried and the ones a request of it lost). Pure
functions of a :class:`~toolsearch_lab.trace.RunTrace`; a trace without turns gets none of it.
"""

from __future__ import annotations

from toolsearch_lab.eval.compare import StrategyRun
from toolsearch_lab.eval.requests import turn_costs
from toolsearch_lab.loop.chain import why_lost
from toolsearch_lab.trace import RunTrace, TurnRecord
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.display import Html, Table
from toolsearch_lab.ui.strategy_lab import HtmlPanel

__all__ = ["turn_bands", "turn_choices", "turn_html", "turn_of", "turn_view", "turns_table", "with_turns"]

BAND_TINTS = ("#F5F3FF", "#FFFFFF")  # alternate turns: a pale violet, then none
LOST_TINT = "#FEE2E2"
LABEL_FONT = t.FONT_SIZE - 2
# The narrower of the stepper's two plot areas (the tools figure gives room to tool names), so a label that
# fits there fits in both; and a generous average glyph width, so an estimate never undercounts.
PLOT_PX = t.FIG_WIDTH - 400
GLYPH_EM = 0.62


def label_px(text: str) -> float:
    """About how wide ``text`` is drawn as a turn label."""
    return len(text) * GLYPH_EM * LABEL_FONT


def turn_label(number: int, lost: bool, band_px: float) -> str:
    """The longest label that fits a band ``band_px`` wide ("turn N · lost tools" down to "N ✗" for a turn
    that lost found tools, "turn N" or "N" for one that did not), so neighbouring turns' labels never
    overlap; the shortest when none fits (the band's tint still tells a lost turn)."""
    if lost:
        texts = [f"turn {number} · lost tools", f"turn {number} · lost", f"turn {number} ✗", f"{number} ✗"]
    else:
        texts = [f"turn {number}", str(number)]
    return next((text for text in texts if label_px(text) <= band_px), texts[-1])


def turn_bands(trace: RunTrace) -> list[dict]:
    """One rectangle per turn over its requests (alternating tints), labelled with the turn's number as far as
    the band has room; a turn that had lost found tools is tinted red so the loss shows before you step into
    it."""
    shapes = []
    per_request = PLOT_PX / (max(len(trace.iterations), 1) + 0.2)  # the x axis spans [0.4, n + 0.6]
    for k, record in enumerate(trace.turns):
        numbers = [it.number for it in trace.iterations if it.turn == record.number]
        if not numbers:
            continue
        tint = LOST_TINT if record.lost else BAND_TINTS[k % 2]
        text = turn_label(record.number, bool(record.lost), (max(numbers) - min(numbers) + 1) * per_request)
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": min(numbers) - 0.5,
                "x1": max(numbers) + 0.5,
                "y0": 0,
                "y1": 1,
                "fillcolor": tint,
                "opacity": 1.0,
                "line": {"width": 1, "color": "#DDD6FE", "dash": "dot"},
                "layer": "below",
                "label": {
                    "text": text,
                    "textposition": "top center",
                    "font": {"size": LABEL_FONT, "color": t.MUTED},
                },
            }
        )
    return shapes


def with_turns(spec: dict, trace: RunTrace) -> dict:
    """A figure spec with the turn bands drawn under its own shapes (the selected request's highlight)."""
    if not trace.turns:
        return spec
    layout = dict(spec["layout"])
    layout["shapes"] = turn_bands(trace) + list(layout.get("shapes") or [])
    return {**spec, "layout": layout}


def turn_choices(trace: RunTrace) -> list[tuple[str, int]]:
    """The turn selector's (label, first request number) choices."""
    out = []
    for record in trace.turns:
        numbers = [it.number for it in trace.iterations if it.turn == record.number]
        if numbers:
            out.append((f"turn {record.number}: {t.clip(record.user_message, 48)}", min(numbers)))
    return out


def turn_of(trace: RunTrace, position: int) -> TurnRecord | None:
    """The turn of the request at ``position`` (0-based), or None for a single request."""
    if not trace.turns or not 0 <= position < len(trace.iterations):
        return None
    number = trace.iterations[position].turn
    return next((r for r in trace.turns if r.number == number), None)


def turn_html(trace: RunTrace, position: int) -> str:
    """The selected request's turn: the user's message, chat memory's account, found tools carried and lost
    (all text escaped). Empty for a single request."""
    record = turn_of(trace, position)
    if record is None:
        return ""
    config = trace.config
    parts = [
        t.heading(
            f"Turn {record.number} of {len(trace.turns)} · memory {t.esc(config.get('memory'))} · memory "
            f"advisor: {t.esc(config.get('memory_advisor', 'none'))} · found tools kept in: "
            f"{t.esc(config.get('accumulation_source', '?'))}"
        ),
        f"<div><b>The user:</b> “{t.esc(t.clip(record.user_message, 300))}”</div>",
    ]
    memory = record.memory
    if memory is not None:
        gone = [("dropped", d) for d in memory.dropped] + [("summarised", d) for d in memory.summarised]
        text = f"Memory was given {memory.given} messages and kept {memory.kept}."
        if gone:
            items = "".join(f"<li>{t.esc(how)}: {t.esc(t.clip(what, 140))}</li>" for how, what in gone[:8])
            more = f"<li>… {len(gone) - 8} more</li>" if len(gone) > 8 else ""
            text += f"<ul style='margin:2px 0 2px 18px'>{items}{more}</ul>"
        if memory.summary:
            text += (
                "<div style='white-space:pre-wrap;background:#F9FAFB;padding:4px 8px;border-left:4px solid "
                f"{t.BASELINE}'>{t.esc(t.clip(memory.summary, 600))}</div>"
            )
        parts.append(f"<div>{text}</div>")
    first = "".join(t.chip(n, t.INK, "#EDE9FE") for n in record.first_request_tools) or t.muted("none")
    parts.append(f"<div><b>The turn's first request exposed:</b> {first}</div>")
    if record.number > 1:
        carried = "".join(t.chip(n, t.INK, "#EDE9FE") for n in record.carried) or t.muted("none")
        parts.append(f"<div><b>Found in earlier turns and still loaded:</b> {carried}</div>")
    if record.lost:
        lost = "".join(t.chip(n, t.BAD, LOST_TINT) for n in record.lost)
        why = why_lost(config)
        parts.append(
            f"<div><b style='color:{t.BAD}'>Lost by a request of this turn</b> ({why}): {lost}</div>"
        )
    return t.panel("".join(parts))


def turn_view(trace: RunTrace, number: int) -> HtmlPanel:
    """Turn ``number`` of a conversation as the stepper's panel shows it (with a plain-text form)."""
    position = next((i for i, it in enumerate(trace.iterations) if it.turn == number), None)
    record = turn_of(trace, position) if position is not None else None
    if position is None or record is None:
        raise ValueError(f"the trace has no turn {number!r}; its turns are {[t.number for t in trace.turns]}")
    memory = record.memory
    text = f"Turn {number}: {record.user_message}"
    if memory is not None:
        text += f"\nmemory {memory.memory}: given {memory.given}, kept {memory.kept}"
    text += f"\nfirst request exposed {', '.join(record.first_request_tools) or 'none'}"
    text += f"\ncarried {', '.join(record.carried) or 'none'}; lost {', '.join(record.lost) or 'none'}"
    return HtmlPanel(turn_html(trace, position), text)


def turns_table(run: StrategyRun, caption: str = "") -> Table:
    """A conversation run, one row per user turn: what memory kept of what it was given, the found tools the
    turn carried and lost, its requests and searches, prompt tokens and billed cost, and its steps."""
    trace = run.trace
    bills = {b["turn"]: b for b in turn_costs(trace, run.costs)}
    rows = []
    for record in trace.turns:
        bill = bills[record.number]
        memory = record.memory
        more = f" +{len(record.lost) - 3}" if len(record.lost) > 3 else ""
        lost = Html(
            "".join(t.chip(n, t.BAD, LOST_TINT) for n in record.lost[:3]) + t.muted(more),
            ", ".join(record.lost[:3]) + more,
        )
        done = bill["steps_succeeded"] == bill["steps"]
        mark = Html(
            f"<b style='color:{t.GOOD if done else t.BAD}'>{'✓' if done else '✗'} {bill['steps_succeeded']}/"
            f"{bill['steps']}</b>",
            f"{bill['steps_succeeded']}/{bill['steps']}",
        )
        rows.append(
            [
                record.number,
                t.clip(record.user_message, 60),
                "-" if memory is None else f"{memory.kept} of {memory.given}",
                len(record.carried),
                lost if record.lost else "-",
                bill["requests"],
                len(trace.turn_trace(record.number).searches()),
                bill["prompt_tokens"],
                round(bill["cost_usd"], 4),
                mark,
            ]
        )
    columns = [
        "turn",
        "the user",
        "memory kept",
        "carried",
        "lost",
        "requests",
        "searches",
        "prompt",
        "$",
        "steps",
    ]
    config = trace.config
    return Table(
        columns,
        rows,
        caption
        or f"memory {config.get('memory')} · memory advisor: {config.get('memory_advisor', 'none')} · found "
        f"tools kept in: {config.get('accumulation_source')}",
    )
