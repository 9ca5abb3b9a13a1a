"""Pure render functions for the IterationStepper's HTML panels: one iteration's details, the run's status
line and its per-step grade. A RunTrace (and a selected iteration) in, escaped HTML out; the position of the
selected iteration counts from 0 and is shown from 1, as in :mod:`.stepper_render` (its figures). A replayed
run adds its own context, deferred tools and usage (:mod:`.stepper_replay`).
"""

from __future__ import annotations

from toolsearch_lab.loop.result_flags import FLAG_TEXT
from toolsearch_lab.loop.search_tool import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.trace import Iteration, RunTrace, SearchRecord, StepOutcome
from toolsearch_lab.ui import stepper_replay as replay, theme as t
from toolsearch_lab.ui.stepper_baseline import savings_html
from toolsearch_lab.ui.stepper_render import trace_of


def _hit_label(name: str, it: Iteration, next_it: Iteration | None) -> str:
    if next_it is not None and name in next_it.newly_exposed:
        return t.chip(name, t.INK, t.NEW_LIGHT, "exposed next")
    if name in it.exposed_tools:
        return t.chip(name, t.FOUND, t.FOUND_LIGHT, "already exposed")
    return t.chip(name, t.FOUND, t.FOUND_LIGHT)


def details_html(trace: RunTrace, selected: int) -> str:
    """Everything about one iteration: exposed tools (new ones highlighted), what the model said, each
    search with its ranked hits and scores, and each tool call with its result. All text is escaped."""
    its = trace.iterations
    if not its:
        return t.panel(t.muted("This run has no iterations."))
    selected = max(0, min(selected, len(its) - 1))
    it = its[selected]
    next_it = its[selected + 1] if selected + 1 < len(its) else None
    parts = [
        t.heading(
            f"Iteration {selected + 1} of {len(its)}: the model saw {replay.context_label(trace, it)} of "
            f"{trace.catalog_size} tools",
            t.FONT_SIZE + 3,
        ),
        *_exposed_html(it),
        *replay.replay_details(trace, it),
    ]
    if it.assistant_content:
        parts.append(
            t.heading("The model said")
            + f"<div style='white-space:pre-wrap;background:#F9FAFB;padding:6px 10px;border-left:4px "
            f"solid {t.BASELINE}'>{t.esc(t.clip(it.assistant_content, 800))}</div>"
        )
    for s in it.searches:
        parts += _search_html(s, it, next_it)
    parts += _calls_html(it)
    if not it.tool_calls and it.assistant_content is not None and next_it is None:
        parts.append(
            f"<div style='color:{t.GOOD};font-weight:700'>No tool calls: this is the final answer.</div>"
        )
    for e in _run_errors(trace, it):
        parts.append(f"<div style='color:{t.BAD}'>{t.esc(t.clip(e, 300))}</div>")
    tk = it.tokens
    parts.append(
        f"<div style='margin-top:8px;color:{t.MUTED}'>Prompt tokens of this request: "
        f"<b style='color:{t.SEARCH}'>{tk.tool_search.total:,}</b> with tool search "
        f"(tool definitions {tk.tool_search.tools:,}) vs <b style='color:{t.INK}'>{tk.baseline.total:,}"
        f"</b> sending all {trace.catalog_size} tools (tool definitions {tk.baseline.tools:,}).</div>"
    )
    return t.panel("".join(parts))


def _exposed_html(it: Iteration) -> list[str]:
    """The exposed tools as chips (new ones highlighted, called ones ringed), and the discovered tools that
    were not sent (accumulation off)."""
    called = {c.name for c in it.tool_calls}
    new = set(it.newly_exposed)
    chips = []
    for name in it.exposed_tools:
        ring = name in called
        if name == TOOL_SEARCH_TOOL_NAME:
            chips.append(t.chip(name, t.SEARCH, t.SEARCH_LIGHT, bold=True, ring=ring))
        elif name in new:
            chips.append(t.chip(name, t.INK, t.NEW_LIGHT, "new", bold=True, ring=ring))
        else:
            chips.append(t.chip(name, t.FOUND, t.FOUND_LIGHT, ring=ring))
    parts = [
        "<div><b>Exposed tools</b> "
        + t.muted("(ring = called in this iteration)")
        + "<br>"
        + "".join(chips)
        + "</div>"
    ]
    dropped = [n for n in it.accumulated if n not in it.exposed_tools]
    if dropped:
        parts.append(
            "<div style='margin-top:4px'><b>Discovered earlier but not sent</b> "
            + t.muted("(accumulation off: only the last search's results stay exposed)")
            + "<br>"
            + "".join(t.chip(n, t.MUTED, t.BASELINE_LIGHT) for n in dropped)
            + "</div>"
        )
    return parts


def _search_html(s: SearchRecord, it: Iteration, next_it: Iteration | None) -> list[str]:
    """One toolSearchTool call: its query and settings, then its error, 'no tool matches' (and why),
    'no tools found' or ranked hits."""
    query = t.esc(s.query) if s.query is not None else t.muted("(no query)")
    extra = f" · maxResults {s.max_results}" if s.max_results is not None else ""
    if s.category_filter:
        extra += f" · category {t.esc(s.category_filter)}"
    head = t.heading(
        f"<span style='color:{t.SEARCH}'>{t.esc(replay.tool_of(it, s))}</span> query: "
        f"<span style='font-family:{t.MONO}'>“{query}”</span>"
        f"<span style='font-weight:400;color:{t.MUTED}'>{extra}</span>"
    )
    if s.error:
        return [head, f"<div style='color:{t.BAD}'>search failed: {t.esc(t.clip(s.error))}</div>"]
    if not s.hits and s.abstained:  # the index judged that no tool fits, and says why
        why = t.muted(t.esc(t.clip(s.confidence_reason or "", 300)))
        verdict = f"<div style='color:{t.BAD}'>no tool matches: the index judged that none fits</div>"
        return [head, verdict, why]
    if not s.hits:
        return [head, f"<div style='color:{t.BAD}'>no tools found</div>"]
    best = max((h.score for h in s.hits if h.score is not None), default=None)
    rows = "".join(
        f"<tr><td style='padding:1px 10px 1px 0;color:{t.MUTED};text-align:right'>{rank}</td>"
        f"<td style='padding:1px 12px 1px 0'>{_hit_label(h.name, it, next_it)}</td>"
        f"<td>{t.score_bar(h.score, best)}</td></tr>"
        for rank, h in enumerate(s.hits, 1)
    )
    return [head, f"<table style='border-collapse:collapse'>{rows}</table>"]


def _run_errors(trace: RunTrace, it: Iteration) -> list[str]:
    """The iteration's errors that are not shown with a tool call. A call's failure is kept on its record
    and in the iteration's errors only; what went wrong with the run (a model request failed, a call limit
    was reached) is also in the run's errors, and a limit's message on each call it rejected."""
    on_calls = {c.error for c in it.tool_calls if c.error}
    return [e for e in it.errors if e in trace.errors and e not in on_calls]


def _calls_html(it: Iteration) -> list[str]:
    """The iteration's calls of real tools (searches are shown above): arguments, status, error, result."""
    real_calls = [c for c in it.tool_calls if c.kind != "search"]
    if not real_calls:
        return []
    parts = [t.heading("Tool calls")]
    for c in real_calls:
        colour = t.BAD if c.kind == "rejected" or c.failure is not None else t.GOOD
        status = "rejected" if c.kind == "rejected" else ("error" if c.failure is not None else "ran")
        body = (
            f"<div style='margin:4px 0 8px 0;padding:6px 10px;border-left:4px solid {colour};"
            f"background:#F9FAFB'><b style='font-family:{t.MONO}'>{t.esc(c.name)}</b>"
            f" <span style='color:{colour};font-weight:700'>{status}</span><br>"
            f"<span style='color:{t.MUTED}'>arguments</span> "
            f"<code style='font-family:{t.MONO}'>{t.esc(t.clip(c.arguments, 300))}</code>"
        )
        flags = [f"\u26a0 flagged: {FLAG_TEXT.get(f, f)}" for f in c.flags]  # injected-looking text...
        for note in ([c.error] if c.error else []) + flags:
            body += f"<br><span style='color:{t.BAD}'>{t.esc(t.clip(note, 300))}</span>"
        if c.result:
            text = t.esc(t.clip(c.result, 500))
            code = f"<code style='font-family:{t.MONO};white-space:pre-wrap'>{text}</code>"
            body += f"<br><span style='color:{t.MUTED}'>result</span> {code}"
        parts.append(body + "</div>")
    return parts


def status_html(run, note: str = "") -> str:
    """Totals and the grade of a run: the one-line answer to "did it work and what did it cost"."""
    trace = trace_of(run)
    grade = getattr(run, "grade", None)
    parts = []
    if grade is not None:
        ok = bool(getattr(grade, "success", False))
        mark = (
            f"<span style='color:{t.GOOD};font-weight:700'>✔ success</span>"
            if ok
            else f"<span style='color:{t.BAD};font-weight:700'>✘ not solved</span>"
        )
        missing = list(getattr(grade, "missing", []) or [])
        expected = list(getattr(grade, "expected", []) or [])
        parts.append(
            f"{mark} · called {len(expected) - len(missing)} of {len(expected)} expected tools"
            + (" · missing " + "".join(t.chip(m, t.BAD, "#FEE2E2") for m in missing) if missing else "")
        )
    parts.append(
        f"<b>{len(trace.iterations)}</b> model requests · {t.count(len(trace.searches()), 'search')} · stop: "
        f"{t.esc(trace.stop_reason)} · {savings_html(run, trace)}"
    )
    head = (
        f"<div style='font-size:{t.FONT_SIZE + 1}px'><b>Request</b> "
        f"“{t.esc(t.clip(trace.user_request, 300))}” "
        + t.muted(f"· model {t.esc(trace.model)} · index {t.esc(trace.index)}")
        + "</div>"
    )
    body = head + "".join(f"<div>{p}</div>" for p in parts) + replay.replay_status(trace)
    if trace.final_answer:
        body += (
            f"<div style='margin-top:4px'><b>Answer</b> "
            f"<span style='white-space:pre-wrap'>{t.esc(t.clip(trace.final_answer, 500))}</span></div>"
        )
    for e in trace.errors[:3]:
        body += f"<div style='color:{t.BAD}'>{t.esc(t.clip(e, 300))}</div>"
    if note:
        body += f"<div style='color:{t.NEW};font-weight:700'>{note}</div>"
    return t.panel(body)


def steps_html(trace: RunTrace) -> str:
    """The per-step grade: "Steps k/n" and one ✓/✗ line per step with its need, what ran and what was
    expected, so one miss shows *which* step failed instead of zeroing the run. Empty for an ungraded
    trace."""
    steps = trace.steps
    if not steps:
        return ""
    done = sum(1 for s in steps if s.success)
    colour = t.GOOD if done == len(steps) else (t.BAD if done == 0 else t.NEW)
    head = t.heading(
        f"Steps <span style='color:{colour}'>{done}/{len(steps)}</span> "
        + t.muted(f"({100 * done / len(steps):.0f} % of the task's steps done right)")
    )
    rows = "".join(_step_row(number, step) for number, step in enumerate(steps, 1))
    return t.panel(head + f"<table style='border-collapse:collapse'>{rows}</table>")


def _step_row(number: int, step: StepOutcome) -> str:
    """One step: mark, number, need, then the tools that ran and the ones expected (as chips)."""
    mark, colour = ("✓", t.GOOD) if step.success else ("✗", t.BAD)
    ran_bg = t.FOUND_LIGHT if step.success else "#FEE2E2"
    ran = (
        "".join(t.chip(name, colour, ran_bg) for name in step.called)
        if step.called
        else t.muted("nothing ran")
    )
    expected = "".join(t.chip(name, t.FOUND, t.BASELINE_LIGHT) for name in step.expected)
    if not step.expected:
        expected = t.muted("no tool: none of the catalog's serves this request")
    if step.also_accepted:
        expected += t.muted(" or ") + "".join(
            t.chip(name, t.FOUND, t.BASELINE_LIGHT) for name in step.also_accepted
        )
    cell = "padding:3px 10px 3px 0;vertical-align:top"
    return (
        f"<tr><td style='{cell};color:{colour};font-weight:700;font-size:{t.FONT_SIZE + 2}px'>{mark}</td>"
        f"<td style='{cell};color:{t.MUTED};text-align:right'>{number}.</td>"
        f"<td style='{cell}'>{t.esc(t.clip(step.need, 200))}<br>"
        f"{t.muted('ran')} {ran} {t.muted('· expected')} {expected}</td></tr>"
    )


def error_html(message: str) -> str:
    return t.panel(f"<div style='color:{t.BAD};font-weight:700'>{t.esc(t.clip(message, 600))}</div>")
