"""TraceViewer: two runs side by side (a simulated and a real model, or two settings), iteration by iteration.

Each side is a RunTrace: from a run in the notebook, opened from any saved trace JSON (anything
``RunTrace.to_json`` wrote), or replayed from a transcript (an Anthropic or OpenAI transcript, a Claude Code
session, or a shipped transcript's name: :func:`~toolsearch_lab.replay.load.load_transcript`). The slider
picks an iteration number (from 1) and both columns show what that model request exposed, deferred, searched
and called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.replay.common import TranscriptError
from toolsearch_lab.replay.load import SHIPPED_TRANSCRIPTS, load_transcript
from toolsearch_lab.trace import RunTrace
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure
from toolsearch_lab.ui.display import Table
from toolsearch_lab.ui.stepper_render import highlight, trace_of
from toolsearch_lab.ui.stepper_replay import search_tools

COLUMN_WIDTH = (t.FIG_WIDTH - 10) // 2
SIDES = ("left", "right")
SIDE_STYLE = {  # both are tool-search runs (violet); the right one is drawn lighter with a violet outline
    "left": {"color": t.SEARCH},
    "right": {"color": t.SEARCH_LIGHT, "line": {"color": t.SEARCH, "width": 2}},
}


def load_trace(path: str | Path) -> RunTrace:
    """A RunTrace from a saved trace JSON file or a transcript (or a shipped transcript's name), with an
    error that names the file when it is neither."""
    file = Path(path).expanduser()
    if isinstance(path, str) and path in SHIPPED_TRANSCRIPTS and not file.exists():
        return load_transcript(path)
    if not file.is_file():
        raise FileNotFoundError(f"no trace file at {str(file)!r}")
    try:
        return RunTrace.from_json(file.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - not a trace: perhaps a transcript
        trace_problem = exc
    try:
        return load_transcript(file)
    except TranscriptError as exc:
        raise ValueError(
            f"{str(file)!r} is not a saved RunTrace JSON ({trace_problem}), nor a transcript ({exc})"
        ) from exc


BAR_WIDTH = 0.34
# Each run's bar sits on one side of its iteration number, and that run's "all tools" line runs through the
# middle of its own bars: two runs of one scenario have near-identical baselines, which drawn at the same x
# would lie exactly on top of each other.
SIDE_OFFSET = {"left": -BAR_WIDTH / 2 - 0.01, "right": BAR_WIDTH / 2 + 0.01}
BASELINE_STYLE = {
    "left": {
        "line": {"color": t.BASELINE, "dash": "dot", "width": 3},
        "marker": {"symbol": "circle", "size": 9},
    },
    "right": {
        "line": {"color": t.INK, "dash": "dash", "width": 2},
        "marker": {"symbol": "diamond-open", "size": 10, "line": {"width": 2}},
    },
}


def grade_table(grade: Any, label: str = "run") -> Table:
    """A graded run (``ScenarioRun.grade``) as a table: each step's need, the tools it expected, what ran for
    it and whether it was done; the caption gives the all-or-nothing task grade."""
    rows = [
        [s.need, ", ".join(s.expected) or "no tool serves it", ", ".join(s.called) or None, s.success]
        for s in grade.steps
    ]
    outcome = "task completed" if grade.success else "task failed"
    caption = f"{label}: {outcome}, {grade.steps_succeeded} of {len(grade.steps)} steps done"
    if grade.missing:
        caption += f"; never called: {', '.join(grade.missing)}"
    return Table(["step", "expected", "called", "done"], rows, caption=caption)


def usage_table(trace: Any) -> Table:
    """Per model request: the tools it exposed, this project's prompt estimate and the API's own
    ``usage.prompt_tokens`` with the difference (– when the model reported no usage, as the simulated
    agent never does)."""
    trace = trace_of(trace)
    rows = []
    for it in trace.iterations:
        theirs = (it.tokens.api_usage or {}).get("prompt_tokens")
        ours = it.tokens.tool_search.total
        delta = None if theirs is None else f"{theirs - ours:+,}"
        rows.append([it.number, len(it.exposed_tools), ours, theirs, delta])
    caption = (
        "ours = the prompt as this project counts it (tokens.tool_search.total, o200k); API = what the "
        "provider's usage said (its own tokenizer; Anthropic's prompt = input + cache writes + cache reads)"
    )
    return Table(["request", "tools exposed", "ours", "API usage", "API − ours"], rows, caption=caption)


def tokens_spec(traces: dict[str, RunTrace], labels: dict[str, str], selected: int | None) -> dict:
    """Prompt tokens per model request for both runs, and what sending every tool would have cost."""
    n = max(len(tr.iterations) for tr in traces.values())
    data: list[dict[str, Any]] = []
    for side in SIDES:
        its = traces[side].iterations
        data.append(
            {
                "type": "bar",
                "name": f"{labels[side]}: tool search",
                "x": list(range(1, len(its) + 1)),
                "y": [it.tokens.tool_search.total for it in its],
                "width": BAR_WIDTH,
                "offset": SIDE_OFFSET[side] - BAR_WIDTH / 2,
                "marker": SIDE_STYLE[side],
                "hovertemplate": f"{t.esc(labels[side])}, iteration %{{x}}: %{{y:,}} prompt tokens"
                "<extra></extra>",
            }
        )
    for side in SIDES:
        its = traces[side].iterations
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{labels[side]}: all {traces[side].catalog_size} tools",
                "x": [i + SIDE_OFFSET[side] for i in range(1, len(its) + 1)],
                "y": [it.tokens.baseline.total for it in its],
                **BASELINE_STYLE[side],
                "hovertemplate": f"{t.esc(labels[side])}: %{{y:,}} prompt tokens sending every tool"
                "<extra></extra>",
            }
        )
    top = max((max(d["y"], default=0) for d in data), default=0)
    layout = t.base_layout(
        "Prompt tokens per model request, both runs",
        height=400,
        barmode="overlay",  # the bars carry their own offsets (SIDE_OFFSET)
        xaxis=t.axis(
            "Iteration (one model request each)", dtick=1, range=[0.4, max(n, 1) + 0.6], showgrid=False
        ),
        yaxis=t.axis("prompt tokens", tickformat=",.0f", **t.nice_range(top)),
        shapes=highlight(selected, n),
        margin={"l": 80, "r": 30, "t": 110, "b": 60},
    )
    return {"data": data, "layout": layout}


def summary_html(trace: RunTrace, label: str) -> str:
    total = trace.tokens_total()
    tokens = (
        f"prompt tokens <b style='color:{t.SEARCH}'>{total['prompt_tool_search']:,}</b> vs "
        f"{total['prompt_baseline']:,} with all tools put into each of these requests (per-request "
        f"counterfactual: {total['prompt_saved_pct']:g}% saved)"
    )
    if trace.replay is not None and not trace.replay.counts_definitions:  # a session file, no definitions
        tokens = (
            f"prompt tokens <b style='color:{t.SEARCH}'>{total['prompt_tool_search']:,}</b> (ours: no tools)"
        )
    reported = sum((it.tokens.api_usage or {}).get("prompt_tokens") or 0 for it in trace.iterations)
    if reported:
        tokens += f" · API usage {reported:,}"
    return (
        t.heading(t.esc(label))
        + f"<div>model <b>{t.esc(trace.model)}</b> · index <b>{t.esc(trace.index)}</b> · "
        f"{len(trace.iterations)} requests · stop: {t.esc(trace.stop_reason)}</div>" + f"<div>{tokens}</div>"
    )


def iteration_html(trace: RunTrace, label: str, position: int) -> str:
    """One column: the run's summary, then what request ``position + 1`` exposed, searched and called."""
    its = trace.iterations
    head = summary_html(trace, label)
    if not 0 <= position < len(its):
        return t.panel(head + t.muted(f"This run has no iteration {position + 1}."), COLUMN_WIDTH)
    it = its[position]
    new, searchers = set(it.newly_exposed), search_tools(trace)
    chips = "".join(
        t.chip(n, t.SEARCH, t.SEARCH_LIGHT, bold=True)
        if n in searchers
        else t.chip(n, t.INK, t.NEW_LIGHT, "new")
        if n in new
        else t.chip(n, t.FOUND, t.FOUND_LIGHT)
        for n in it.exposed_tools
    )
    parts = [head, t.heading(f"Iteration {position + 1} of {len(its)}"), f"<div>exposed: {chips}</div>"]
    if it.deferred:
        parts.append(f"<div>{t.muted(f'{len(it.deferred)} more sent deferred (not loaded)')}</div>")
    for s in it.searches:
        nothing = "no tool matches" if s.abstained else "nothing"  # abstained: the index judged none fits
        found = "".join(t.chip(h.name, t.FOUND, t.FOUND_LIGHT) for h in s.hits) or t.muted(nothing)
        parts.append(f"<div>search <b>“{t.esc(t.clip(s.query, 120))}”</b> → {found}</div>")
    for c in it.tool_calls:
        if c.kind != "search":
            outcome = f" <span style='color:{t.BAD}'>{t.esc(c.error)}</span>" if c.error else ""
            parts.append(f"<div>called {t.chip(c.name, t.CALLED, t.PAPER, ring=True)}{outcome}</div>")
    if it.assistant_content:
        parts.append(f"<div>said: {t.muted(t.esc(t.clip(it.assistant_content, 300)))}</div>")
    return t.panel("".join(parts), COLUMN_WIDTH)


class TraceViewer(Displayable):
    """``left``/``right``: a ScenarioRun, a RunResult, a RunTrace or the path of a saved trace JSON."""

    def __init__(self, left: Any, right: Any, labels: tuple[str, str] = ("left", "right")) -> None:
        self.traces = {side: self._as_trace(value) for side, value in zip(SIDES, (left, right), strict=True)}
        self.labels = dict(zip(SIDES, labels, strict=True))
        n = max(len(tr.iterations) for tr in self.traces.values())
        self.slider = widgets.IntSlider(
            value=1, min=1, max=max(n, 1), description="Iteration", layout=widgets.Layout(width="600px")
        )
        self.paths = {
            side: widgets.Text(
                placeholder="path/to/trace.json",
                description=f"Open {side}",
                layout=widgets.Layout(width="420px"),
            )
            for side in SIDES
        }
        self.open_buttons = {
            side: widgets.Button(description="Open", layout=widgets.Layout(width="80px")) for side in SIDES
        }
        self.status = html_sink()
        self.columns = {side: html_sink(COLUMN_WIDTH) for side in SIDES}
        self.fig = new_figure(tokens_spec(self.traces, self.labels, 0))
        self.redraw()
        self.slider.observe(lambda _: self.redraw(), names="value")
        for side in SIDES:
            self.open_buttons[side].on_click(lambda _, side=side: self.open(side, self.paths[side].value))
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.paths["left"], self.open_buttons["left"]]),
                widgets.HBox([self.paths["right"], self.open_buttons["right"]]),
                self.status,
                self.slider,
                widgets.HBox([self.columns["left"], self.columns["right"]]),
                figure_box(self.fig),
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    @staticmethod
    def _as_trace(value: Any) -> RunTrace:
        return load_trace(value) if isinstance(value, str | Path) else trace_of(value)

    def open(self, side: str, path: str | Path) -> None:
        """Replace one side with a saved trace; a bad file is reported in the status line, not raised."""
        try:
            self.traces[side] = load_trace(path)
        except (OSError, ValueError) as exc:
            self.status.value = t.panel(f"<span style='color:{t.BAD}'>{t.esc(exc)}</span>")
            return
        self.labels[side] = Path(path).name
        self.status.value = t.panel(f"opened {t.esc(path)} on the {side}")
        n = max(len(tr.iterations) for tr in self.traces.values())
        self.slider.max = max(n, 1)
        self.redraw()

    def redraw(self) -> None:
        position = int(self.slider.value) - 1
        for side in SIDES:
            self.columns[side].value = iteration_html(self.traces[side], self.labels[side], position)
        update_figure(self.fig, tokens_spec(self.traces, self.labels, position))
