"""IterationStepper: step through one tool-search run, iteration by iteration, and re-run it with other
settings to see what changes.

Moving the slider only redraws (a highlight and the details panel). Changing a setting re-runs the scenario,
but runs are cached per parameter set, so going back to an earlier setting is instant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.base import Displayable, figure_box, html_sink, new_figure, resync, update_figure
from toolsearch_lab.ui.stepper_render import (
    details_html,
    error_html,
    highlight,
    status_html,
    tokens_spec,
    tools_spec,
    trace_of,
)

INDEX_KINDS = ("regex", "lucene", "vector", "hybrid")

# What the threshold slider means per index kind: (label, min, max, step, default). Regex has no scores;
# hybrid ranks by fused rank, so neither has a threshold to move.
THRESHOLDS: dict[str, tuple[str, float, float, float, float]] = {
    "lucene": ("min BM25 score", 0.0, 6.0, 0.05, 0.25),
    "vector": ("min cosine", 0.0, 0.9, 0.01, 0.2),
}
DEFAULT_MAX_RESULTS = 5  # what the simulated agent asks for when nobody moves the slider


def openai_configured() -> bool:
    try:
        from toolsearch_lab.models.openai import OpenAIChatModel
    except Exception:  # noqa: BLE001 - a missing optional dependency only hides the choice
        return False
    try:
        return bool(OpenAIChatModel.is_configured())
    except Exception:  # noqa: BLE001
        return False


def _scenario_names(current: str) -> list[str]:
    try:
        from toolsearch_lab.eval.scenarios import list_scenarios

        names = list(list_scenarios())
    except Exception:  # noqa: BLE001 - a hand-made run still displays without the scenario files
        names = []
    if current not in names:
        names.insert(0, current)
    return names


def default_runner(
    scenario: str, index: str, accumulation: bool, model: str, max_results: int, threshold: float | None
):
    """Run a shipped scenario. With the simulated agent the slider's max_results is what the agent asks for
    (it always sends maxResults, and the model's value wins over the advisor's, as in Spring)."""
    from toolsearch_lab.eval.scenarios import load_scenario, run_scenario

    sc = load_scenario(scenario)
    chat_model: Any = model
    if model == "simulated":
        from toolsearch_lab.models.simulated import SimulatedAgent

        chat_model = SimulatedAgent(sc.agent_steps(), max_results=max_results)
    return run_scenario(
        sc,
        index=index,
        accumulation=accumulation,
        model=chat_model,
        max_results=max_results,
        min_score=threshold,
    )


class IterationStepper(Displayable):
    """See the module docstring. ``run`` may be a ScenarioRun or a RunTrace; ``runner`` replaces
    :func:`default_runner` (tests, or a custom model)."""

    def __init__(
        self,
        scenario: str = "spring-demo",
        index: str = "lucene",
        model: str = "simulated",
        run=None,
        runner: Callable[..., Any] | None = None,
    ) -> None:
        self._runner = runner or default_runner
        self._cache: dict[tuple, Any] = {}
        self._busy = False  # suppresses re-runs while controls are set programmatically
        models = ["simulated"] + (["openai"] if openai_configured() else [])
        if model not in models:
            models.append(model)
        style = {"description_width": "initial"}
        self.scenario_dropdown = widgets.Dropdown(
            options=_scenario_names(scenario),
            value=scenario,
            description="Scenario",
            style=style,
            layout=widgets.Layout(width="260px"),
        )
        self.model_dropdown = widgets.Dropdown(
            options=models,
            value=model,
            description="Model",
            style=style,
            layout=widgets.Layout(width="200px"),
        )
        self.index_dropdown = widgets.Dropdown(
            options=INDEX_KINDS,
            value=index,
            description="Index",
            style=style,
            layout=widgets.Layout(width="190px"),
        )
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
        self.slider = widgets.IntSlider(
            value=0, min=0, max=0, description="Iteration", style=style, layout=widgets.Layout(width="700px")
        )
        self.play = widgets.Play(
            value=0, min=0, max=0, interval=1500, description="play", layout=widgets.Layout(width="120px")
        )
        # A Python-side link (not jslink) so stepping works the same in a kernel, in Voila and in tests.
        self._play_link = widgets.link((self.play, "value"), (self.slider, "value"))
        self.status = html_sink()
        self.details = html_sink()
        self._configure_threshold(index)

        self.run = None
        self.error: str | None = None
        if run is not None:
            self.run = run
            self._cache[self._params()] = run
        else:
            self._execute(self._params())
        trace = trace_of(self.run) if self.run is not None else None
        empty = {"data": [], "layout": {}}
        self.tools_fig = new_figure(tools_spec(trace) if trace else empty)
        self.tokens_fig = new_figure(tokens_spec(trace) if trace else empty)
        self._redraw_all()

        for control in (
            self.scenario_dropdown,
            self.model_dropdown,
            self.index_dropdown,
            self.max_results,
            self.threshold,
            self.accumulation,
        ):
            control.observe(self._on_setting, names="value")
        self.slider.observe(self._on_step, names="value")
        self.run_button.on_click(lambda _: self.rerun(force=True))

        row1 = widgets.HBox(
            [self.scenario_dropdown, self.model_dropdown, self.index_dropdown, self.run_button]
        )
        row2 = widgets.HBox([self.max_results, self.threshold, self.accumulation])
        stepper = widgets.HBox([self.play, self.slider])
        self.widget = widgets.VBox(
            [
                row1,
                row2,
                self.status,
                stepper,
                figure_box(self.tools_fig),
                self.details,
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
        scenario, index, accumulation, model, max_results, threshold = params
        try:
            run = self._runner(
                scenario=scenario,
                index=index,
                accumulation=accumulation,
                model=model,
                max_results=max_results,
                threshold=threshold,
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
        if self.model_dropdown.value != "simulated" and self._params() not in self._cache:
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
            keep = min(self.slider.value, max(n - 1, 0))
            self.slider.max = max(n - 1, 0)
            self.play.max = self.slider.max
            self.slider.value = keep
        finally:
            self._busy = False
        self.status.value = status_html(self.run)
        if self.tools_fig.data:
            update_figure(self.tools_fig, tools_spec(trace, keep))
            update_figure(self.tokens_fig, tokens_spec(trace, keep))
        else:  # first real run after a failed start: figures were built empty
            for fig, spec in (
                (self.tools_fig, tools_spec(trace, keep)),
                (self.tokens_fig, tokens_spec(trace, keep)),
            ):
                with fig.batch_update():
                    fig.add_traces(spec["data"])
                    fig.layout.update(spec["layout"])
                resync(fig)
        self.details.value = details_html(trace, keep)

    def _on_step(self, change) -> None:
        if self._busy:
            return
        self.show_iteration(change["new"])

    def show_iteration(self, i: int) -> None:
        """Move the highlight and the details panel to iteration ``i``; nothing else is recomputed."""
        trace = self.trace
        if trace is None:
            return
        n = len(trace.iterations)
        shapes = highlight(i, n)
        for fig in (self.tools_fig, self.tokens_fig):
            fig.layout.shapes = shapes
            resync(fig)
        self.details.value = details_html(trace, i)
