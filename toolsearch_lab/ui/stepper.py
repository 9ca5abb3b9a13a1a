"""IterationStepper: step through one tool-search run, iteration by iteration, and re-run it with other
settings to see what changes.

Moving the slider only redraws (a highlight and the details panel). Changing a setting re-runs the scenario,
but runs are cached per parameter set, so going back to an earlier setting is instant. A conversation scenario
(``support-conversation``, ``spring-7034``) adds its chat memory, where Spring's memory advisor sits and where
found tools live to the settings, a band per user
turn behind both figures, a turn selector, and the selected request's turn above its details
(:mod:`toolsearch_lab.ui.stepper_turns`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.compat import resync_figure_widget
from toolsearch_lab.eval.scenarios import list_scenarios, load_scenario, run_scenario
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.models.simulated import AGENT_NAMES, DEFAULT_MODE, simulated_agent
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, update_figure
from toolsearch_lab.ui.stepper_panels import details_html, error_html, status_html, steps_html
from toolsearch_lab.ui.stepper_render import highlight, tokens_spec, tools_spec, trace_of
from toolsearch_lab.ui.stepper_replay import replay_search_settings as search_settings
from toolsearch_lab.ui.stepper_turns import turn_bands, turn_choices, turn_html, with_turns

# What the threshold slider means per index kind: (label, min, max, step, default). Regex has no scores;
# hybrid ranks by fused rank, so neither has a threshold to move.
THRESHOLDS: dict[str, tuple[str, float, float, float, float]] = {
    "lucene": ("min BM25 score", 0.0, 6.0, 0.05, 0.25),
    "vector": ("min cosine", 0.0, 0.9, 0.01, 0.2),
}
DEFAULT_MAX_RESULTS = 5  # what the simulated agent asks for when nobody moves the slider

# The model dropdown's (label, value) choices; the simulated agents run free, so they re-run on every change.
AGENT_LABELS = {
    "semantic": "simulated · semantic",
    "literal": "simulated · literal",
    "semantic-no-glossary": "simulated · semantic, no glossary",
}
OPENAI_LABEL = ("openai", "openai")
MEMORIES = ("full", "window:6", "window:20", "compact:6")  # the memory dropdown (conversation scenarios)
SOURCES = ("session", "history")
MEMORY_ADVISORS = ("none", "outside", "inside")  # where Spring's memory advisor sits (loop/chain.py)
_CONVERSATIONS: dict[str, bool] = {}


def is_conversation(scenario: str) -> bool:
    """Whether the shipped scenario holds several user turns (remembered per name)."""
    if scenario not in _CONVERSATIONS:
        try:
            _CONVERSATIONS[scenario] = bool(load_scenario(scenario).turns)
        except Exception:  # noqa: BLE001 - a hand-made run's name that is no shipped scenario: not one
            _CONVERSATIONS[scenario] = False
    return _CONVERSATIONS[scenario]


def model_choices(current: str) -> list[tuple[str, str]]:
    """The simulated agents (the default one first), "openai" only when configured, and ``current`` if it
    is none of those (a custom runner's model)."""
    modes = [DEFAULT_MODE] + [m for m in AGENT_NAMES if m != DEFAULT_MODE]
    choices = [(AGENT_LABELS.get(m, f"simulated · {m}"), m) for m in modes]
    if openai_configured():
        choices.append(OPENAI_LABEL)
    if current not in {value for _, value in choices}:
        choices.append((current, current))
    return choices


def openai_configured() -> bool:
    try:  # the openai client is an optional dependency
        from toolsearch_lab.models.openai import OpenAIChatModel
    except Exception:  # noqa: BLE001 - a missing optional dependency only hides the choice
        return False
    try:
        return bool(OpenAIChatModel.is_configured())
    except Exception:  # noqa: BLE001
        return False


def _scenario_names(current: str) -> list[str]:
    try:
        names = list(list_scenarios())
    except Exception:  # noqa: BLE001 - a hand-made run still displays without the scenario files
        names = []
    if current not in names:
        names.insert(0, current)
    return names


def default_runner(
    scenario: str,
    index: str,
    accumulation: bool,
    model: str,
    max_results: int,
    threshold: float | None,
    examples: bool = False,
    memory: str | None = None,
    accumulation_source: str | None = None,
    memory_advisor: str | None = None,
):
    """Run a shipped scenario, its tools' descriptions with example requests if ``examples``. ``model`` is
    a simulated agent's name (``AGENT_NAMES``; "simulated" means the default one) or "openai". With a
    simulated agent the slider's max_results is what the agent asks for (it always sends maxResults, and
    the model's value wins over the advisor's, as in Spring). A conversation runs with ``memory``,
    ``memory_advisor`` and ``accumulation_source``."""
    sc = load_scenario(scenario, examples=examples)
    chat_model: Any = model
    mode = DEFAULT_MODE if model == "simulated" else model
    if mode in AGENT_NAMES:
        task: dict[str, Any] = {"turns": sc.agent_turns()} if sc.turns else {"steps": sc.agent_steps()}
        chat_model = simulated_agent(mode, max_results=max_results, **task)
    return run_scenario(
        sc,
        index=index,
        accumulation=accumulation,
        model=chat_model,
        max_results=max_results,
        min_score_threshold=threshold,
        memory=memory if sc.turns else None,
        accumulation_source=accumulation_source if sc.turns else None,  # type: ignore[arg-type]
        memory_advisor=memory_advisor if sc.turns else None,  # type: ignore[arg-type]
    )


class IterationStepper(Displayable):
    """See the module docstring. ``run`` may be a ScenarioRun or a RunTrace (a replayed one too:
    :func:`~toolsearch_lab.replay.load.load_transcript`; its settings cannot be re-run, so they are shown
    disabled); ``runner`` replaces :func:`default_runner` (tests, or a custom model); ``memory``,
    ``memory_advisor`` and ``source`` are a conversation's first chat memory, where Spring's memory advisor
    sits and where its found tools live."""

    def __init__(
        self,
        scenario: str = "spring-demo",
        index: str = "lucene",
        model: str = DEFAULT_MODE,
        run=None,
        runner: Callable[..., Any] | None = None,
        *,
        memory: str = "full",
        source: str = "session",
        memory_advisor: str = "none",
    ) -> None:
        self._runner = runner or default_runner
        replay = trace_of(run).replay if run is not None else None
        replayed = replay is not None
        if replay is not None:  # the settings show what was replayed; there is nothing to re-run
            scenario, model = f"replay: {replay.file or 'transcript'}", trace_of(run).model
        self._cache: dict[tuple, Any] = {}
        self._busy = False  # suppresses re-runs while controls are set programmatically
        self._build_settings(scenario, index, model)
        self.memory.value, self.source.value, self.placement.value = memory, source, memory_advisor
        self._build_stepping()
        self.status = html_sink()
        self.details = html_sink()
        self.steps = html_sink()
        self._configure_threshold(index)
        self._first_run(run)
        if replayed:
            self._show_replay_settings(trace_of(run))
        self._wire()
        self.widget = self._layout()

    def _build_settings(self, scenario: str, index: str, model: str) -> None:
        """The controls that choose a run: scenario, model, index, Re-run, maxResults, threshold,
        accumulation and example requests in the descriptions."""
        model = DEFAULT_MODE if model == "simulated" else model
        style = {"description_width": "initial"}

        def dropdown(options: Any, value: str, description: str, width: str) -> widgets.Dropdown:
            return widgets.Dropdown(
                options=options,
                value=value,
                description=description,
                style=style,
                layout=widgets.Layout(width=width),
            )

        self.scenario_dropdown = dropdown(_scenario_names(scenario), scenario, "Scenario", "260px")
        self.model_dropdown = dropdown(model_choices(model), model, "Model", "250px")
        self.index_dropdown = dropdown(INDEX_KINDS, index, "Index", "190px")
        self.run_button = widgets.Button(
            description="Re-run", icon="play", button_style="primary", layout=widgets.Layout(width="120px")
        )
        self.max_results = widgets.IntSlider(
            value=DEFAULT_MAX_RESULTS,
            min=1,
            max=10,
            description="maxResults",
            continuous_update=False,
            style=style,
            layout=widgets.Layout(width="300px"),
        )
        self.threshold = widgets.FloatSlider(
            value=0.25,
            min=0.0,
            max=6.0,
            step=0.05,
            description="min BM25 score",
            continuous_update=False,
            readout_format=".2f",
            style=style,
            layout=widgets.Layout(width="340px"),
        )
        self.accumulation = widgets.Checkbox(
            value=True,
            description="accumulate discovered tools",
            indent=False,
            layout=widgets.Layout(width="280px"),
        )
        self.examples = widgets.Checkbox(
            value=False,
            description="example requests in descriptions",
            indent=False,
            layout=widgets.Layout(width="300px"),
        )
        self.memory = dropdown(MEMORIES, "full", "Chat memory", "220px")
        self.source = dropdown(SOURCES, "session", "Found tools kept in", "250px")
        self.placement = dropdown(MEMORY_ADVISORS, "none", "Memory advisor", "220px")
        self.turn = widgets.Dropdown(
            options=[("(one user request)", 0)],
            value=0,
            description="Turn",
            layout=widgets.Layout(width="420px"),
        )
        self.replay_limit = widgets.HTML("")  # a replayed run's own maxResults, in place of the slider
        self._sync_conversation(scenario)

    def _show_replay_settings(self, trace) -> None:
        """A replayed run's own search (its tools, how they searched, the results asked for), not the lab's
        index and maxResults, which did not run; every control disabled: there is nothing to re-run."""
        search, limit = search_settings(trace)
        self.index_dropdown.options, self.index_dropdown.description = [search], "Searched by"
        self.index_dropdown.layout.width = "700px"
        self.max_results.layout.display = self.threshold.layout.display = "none"
        self.replay_limit.value = f"<b>maxResults</b> asked by its searches: {t.esc(limit)}"
        for control in (*self._settings(), self.run_button):
            control.disabled = True

    def _build_stepping(self) -> None:
        """The iteration slider and its play button."""
        self.slider = widgets.IntSlider(
            value=1,
            min=1,
            max=1,
            description="Iteration",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="700px"),
        )
        # Iterations are numbered from 1 (one per model request), as in the trace and the CLI.
        self.play = widgets.Play(
            value=1, min=1, max=1, interval=1500, description="play", layout=widgets.Layout(width="120px")
        )
        # A Python-side link (not jslink) so stepping works the same in a kernel, in Voila and in tests.
        self._play_link = widgets.link((self.play, "value"), (self.slider, "value"))

    def _first_run(self, run) -> None:
        """Show ``run`` (cached under the initial settings) or run the initial settings, and draw."""
        self.run = None
        self.error: str | None = None
        if run is not None:
            self.run = run
            self._cache[self._params()] = run
        else:
            self._execute(self._params())
        trace = trace_of(self.run) if self.run is not None else None
        empty: dict = {"data": [], "layout": {}}
        self.tools_fig = new_figure(tools_spec(trace) if trace else empty)
        self.tokens_fig = new_figure(tokens_spec(trace) if trace else empty)
        self._redraw_all()

    def _settings(self) -> tuple[widgets.ValueWidget, ...]:
        return (
            self.scenario_dropdown,
            self.model_dropdown,
            self.index_dropdown,
            self.max_results,
            self.threshold,
            self.accumulation,
            self.examples,
            self.memory,
            self.placement,
            self.source,
        )

    def _wire(self) -> None:
        for control in self._settings():
            control.observe(self._on_setting, names="value")
        self.slider.observe(self._on_step, names="value")
        self.turn.observe(self._on_turn, names="value")
        self.run_button.on_click(lambda _: self.rerun(force=True))

    def _layout(self) -> widgets.VBox:
        row1 = widgets.HBox(
            [self.scenario_dropdown, self.model_dropdown, self.index_dropdown, self.run_button]
        )
        row2 = widgets.HBox([self.max_results, self.threshold, self.replay_limit])
        row3 = widgets.HBox([self.accumulation, self.examples])
        row4 = widgets.HBox([self.memory, self.placement, self.source])
        stepper = widgets.VBox([widgets.HBox([self.play, self.slider]), self.turn])
        return widgets.VBox(
            [
                row1,
                row2,
                row3,
                row4,
                self.status,
                stepper,
                figure_box(self.tools_fig),
                self.details,
                self.steps,
                figure_box(self.tokens_fig),
            ],
            layout=widgets.Layout(width=f"{t.FIG_WIDTH + 20}px"),
        )

    # ---- parameters and runs -----------------------------------------------------------------------------
    def _params(self) -> tuple:
        kind = self.index_dropdown.value
        threshold = round(float(self.threshold.value), 4) if kind in THRESHOLDS else None
        return (
            self.scenario_dropdown.value,
            kind,
            bool(self.accumulation.value),
            self.model_dropdown.value,
            int(self.max_results.value),
            threshold,
            bool(self.examples.value),
            self.memory.value,
            self.source.value,
            self.placement.value,
        )

    def _configure_threshold(self, kind: str) -> None:
        spec = THRESHOLDS.get(kind)
        self._busy = True
        try:
            if spec is None:
                self.threshold.disabled = True
                self.threshold.description = "no threshold"
                return
            label, low, high, step, default = spec
            # Widen before narrowing so value never falls outside [min, max] mid-update.
            self.threshold.min = min(self.threshold.min, low)
            self.threshold.max = max(self.threshold.max, high)
            self.threshold.value = default
            self.threshold.min, self.threshold.max, self.threshold.step = low, high, step
            self.threshold.description = label
            self.threshold.disabled = False
        finally:
            self._busy = False

    def _execute(self, params: tuple, force: bool = False) -> bool:
        if not force and params in self._cache:
            self.run, self.error = self._cache[params], None
            return True
        scenario, index, accumulation, model, max_results, threshold, examples, memory, source, placement = (
            params
        )
        # Only a conversation takes memory, a placement and a source (a custom runner may know none of them,
        # and is given a placement only when it is not the default).
        chat = {"memory": memory, "accumulation_source": source} if is_conversation(scenario) else {}
        if chat and placement != "none":
            chat["memory_advisor"] = placement
        try:
            run = self._runner(
                scenario=scenario,
                index=index,
                accumulation=accumulation,
                model=model,
                max_results=max_results,
                threshold=threshold,
                examples=examples,
                **chat,
            )
        except Exception as exc:  # noqa: BLE001 - shown to the room instead of a traceback
            self.error = f"Run failed: {type(exc).__name__}: {exc}"
            return False
        self._cache[params] = run
        self.run, self.error = run, None
        return True

    def rerun(self, force: bool = False) -> None:
        """Run with the current settings (from the cache unless ``force``) and redraw everything."""
        ok = self._execute(self._params(), force=force)
        if ok:
            self._redraw_all()
        else:
            self.status.value = error_html(self.error or "Run failed")

    def _on_setting(self, change) -> None:
        if self._busy:
            return
        if change["owner"] is self.index_dropdown:
            self._configure_threshold(change["new"])
        if change["owner"] is self.scenario_dropdown:
            self._sync_conversation(change["new"])
        if self.model_dropdown.value not in AGENT_NAMES and self._params() not in self._cache:
            # A real model costs money and time: wait for the button instead of running on every click.
            self.status.value = (
                status_html(self.run, "Settings changed: press Re-run to call the model.")
                if self.run is not None
                else error_html("Press Re-run.")
            )
            return
        self.rerun()

    # ---- drawing -------------------------------------------------------------------------------------------
    @property
    def trace(self):
        return trace_of(self.run) if self.run is not None else None

    def _redraw_all(self) -> None:
        trace = self.trace
        if trace is None:
            self.status.value = error_html(self.error or "No run.")
            return
        n = len(trace.iterations)
        self._busy = True
        try:
            keep = max(1, min(self.slider.value, n))
            self.slider.max = max(n, 1)
            self.play.max = self.slider.max
            self.slider.value = keep
        finally:
            self._busy = False
        self.status.value = status_html(self.run)
        self.steps.value = steps_html(trace)
        self._sync_turns(trace)
        position = keep - 1
        tools, tokens = (
            with_turns(tools_spec(trace, position), trace),
            with_turns(tokens_spec(trace, position), trace),
        )
        if self.tools_fig.data:
            update_figure(self.tools_fig, tools)
            update_figure(self.tokens_fig, tokens)
        else:  # first real run after a failed start: figures were built empty
            for fig, spec in ((self.tools_fig, tools), (self.tokens_fig, tokens)):
                with fig.batch_update():
                    fig.add_traces(spec["data"])
                    fig.layout.update(spec["layout"])
                resync_figure_widget(fig)
        self.details.value = turn_html(trace, position) + details_html(trace, position)

    def _on_step(self, change) -> None:
        if self._busy:
            return
        self.show_iteration(change["new"])

    def show_iteration(self, number: int) -> None:
        """Move the highlight and the details panel to iteration ``number`` (from 1); nothing else is
        recomputed."""
        trace = self.trace
        if trace is None:
            return
        n = len(trace.iterations)
        shapes = turn_bands(trace) + highlight(number - 1, n)
        for fig in (self.tools_fig, self.tokens_fig):
            fig.layout.shapes = shapes
            resync_figure_widget(fig)
        self.details.value = turn_html(trace, number - 1) + details_html(trace, number - 1)
        self._busy = True
        try:  # the turn selector follows the slider
            first = [v for _, v in self.turn.options if 0 < v <= number]
            self.turn.value = first[-1] if first else self.turn.options[0][1]
        finally:
            self._busy = False

    # ---- conversations -------------------------------------------------------------------------------------
    def _sync_conversation(self, scenario: str) -> None:
        """Memory, its placement and where found tools live matter only for a conversation scenario."""
        conversation = is_conversation(scenario)
        self.memory.disabled = self.source.disabled = self.placement.disabled = not conversation

    def _sync_turns(self, trace) -> None:
        """The turn selector's choices for this run (one entry when it is a single request)."""
        choices = turn_choices(trace) or [("(one user request)", 0)]
        self._busy = True
        try:
            self.turn.options = choices
            self.turn.value = choices[0][1]
            self.turn.disabled = not trace.turns
        finally:
            self._busy = False

    def _on_turn(self, change) -> None:
        """Jump the slider to the first request of the chosen turn."""
        if self._busy or not change["new"]:
            return
        self.slider.value = change["new"]
