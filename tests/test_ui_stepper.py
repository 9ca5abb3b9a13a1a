"""IterationStepper driven like a browser would (trait values and set_state), no frontend needed."""

import importlib.util
import re

import pytest

from toolsearch_lab.eval.scenarios import load_scenario, run_scenario
from toolsearch_lab.trace import StepOutcome
from toolsearch_lab.ui import IterationStepper, theme
from toolsearch_lab.ui.sample import sample_trace
from toolsearch_lab.ui.stepper_panels import details_html, steps_html
from toolsearch_lab.ui.stepper_render import TOOLS_TRACES, tokens_spec, tools_spec
from toolsearch_lab.ui.stepper_turns import LOST_TINT, PLOT_PX, label_px


class FakeRunner:
    """Returns the sample trace for the requested accumulation setting and counts calls."""

    def __init__(self, fail=False):
        self.calls = []
        self.fail = fail

    def __call__(self, **params):
        self.calls.append(params)
        if self.fail:
            raise RuntimeError("index <b>exploded</b>")
        return sample_trace(accumulation=params["accumulation"])


def make(runner=None):
    runner = runner or FakeRunner()
    return IterationStepper(run=sample_trace(), runner=runner), runner


def trace_by_name(fig, name):
    return next(tr for tr in fig.data if tr.name == name)


def test_slider_moves_details_and_highlight():
    app, _ = make()
    # Iterations are numbered from 1, as in the trace and the CLI.
    assert app.slider.min == 1 and app.slider.max == 5 and "Iteration 1 of 5" in app.details.value
    app.slider.value = 3
    html = app.details.value
    assert "Iteration 3 of 5" in html
    assert "what to wear" in html  # this iteration's search query
    assert "exposed next" in html and "clothing" in html  # the hit that becomes exposed next request
    for fig in (app.tools_fig, app.tokens_fig):
        (shape,) = fig.layout.shapes
        assert shape.x0 == 2.5 and shape.x1 == 3.5
    assert list(app.tools_fig.layout.xaxis.tickvals) == [1, 2, 3, 4, 5]
    # the browser path
    app.slider.set_state({"value": 4})
    assert "Iteration 4 of 5" in app.details.value
    assert theme.NEW_LIGHT in app.details.value and ">new<" in app.details.value  # clothing is new here
    assert app.tools_fig.layout.shapes[0].x0 == 3.5


def test_play_is_linked_to_slider():
    app, _ = make()
    app.play.value = 2
    assert app.slider.value == 2 and "Iteration 2 of 5" in app.details.value


def test_tools_figure_shows_exposure_per_iteration():
    app, _ = make()
    assert [tr.name for tr in app.tools_fig.data] == list(TOOLS_TRACES)
    new = trace_by_name(app.tools_fig, "newly exposed")
    assert list(zip(new.x, new.y, strict=False)) == [(2, "currentTime"), (2, "weather"), (4, "clothing")]
    assert new.marker.color == theme.NEW
    assert trace_by_name(app.tools_fig, "toolSearchTool").marker.color == theme.SEARCH
    assert list(trace_by_name(app.tools_fig, "toolSearchTool").x) == [1, 2, 3, 4, 5]
    called = trace_by_name(app.tools_fig, "called")
    assert (4, "clothing") in list(zip(called.x, called.y, strict=False))
    assert "3 of 26 tools discovered" in app.tools_fig.layout.title.text


def test_tokens_figure_matches_trace():
    app, _ = make()
    tr = sample_trace()
    assert list(app.tokens_fig.data[0].y) == [it.tokens.tool_search.total for it in tr.iterations]
    assert list(app.tokens_fig.data[1].y) == [it.tokens.baseline.total for it in tr.iterations]
    assert app.tokens_fig.data[3].y[-1] == tr.tokens_total()["prompt_baseline"]
    assert app.tokens_fig.data[0].marker.color == theme.SEARCH
    assert app.tokens_fig.data[1].marker.color == theme.BASELINE
    assert app.tokens_fig.layout.title.text.startswith(
        "Prompt tokens per model request: tool search vs all 26 tools"
    )


def test_accumulation_toggle_reruns_and_changes_exposed_set_then_caches():
    app, runner = make()
    exposed_before = app.trace.iterations[3].exposed_tools
    app.accumulation.value = False
    assert len(runner.calls) == 1 and runner.calls[0]["accumulation"] is False
    assert app.trace.iterations[3].exposed_tools != exposed_before
    app.slider.value = 4  # iterations[3]
    assert "Discovered earlier but not sent" in app.details.value
    ys = [
        y
        for x, y in zip(
            trace_by_name(app.tools_fig, "exposed").x, trace_by_name(app.tools_fig, "exposed").y, strict=False
        )
        if x == 4
    ]
    assert "weather" not in ys
    app.accumulation.set_state({"value": True})  # back: served from the cache, no new run
    assert len(runner.calls) == 1 and app.trace.iterations[3].exposed_tools == exposed_before
    app.run_button.click()  # forced re-run
    assert len(runner.calls) == 2


def test_index_change_reconfigures_threshold_and_reruns_once():
    app, runner = make()
    app.index_dropdown.value = "regex"
    assert app.threshold.disabled and len(runner.calls) == 1 and runner.calls[0]["threshold"] is None
    app.index_dropdown.value = "vector"
    assert not app.threshold.disabled and app.threshold.max <= 1.0 and app.threshold.value == 0.2
    assert len(runner.calls) == 2 and runner.calls[1]["threshold"] == 0.2
    app.max_results.value = 7
    assert runner.calls[-1]["max_results"] == 7


def test_failed_run_is_shown_escaped_and_keeps_previous():
    app, _ = make(FakeRunner(fail=True))
    before = app.run
    app.accumulation.value = False
    assert app.run is before
    assert "Run failed" in app.status.value and "&lt;b&gt;exploded" in app.status.value
    assert "<b>exploded" not in app.status.value


def test_untrusted_text_is_escaped_everywhere():
    app, _ = make()
    sinks = []
    for i in range(5):
        app.slider.value = i
        sinks.append(app.details.value)
    sinks.append(app.status.value)
    joined = "".join(sinks)
    assert "<script" not in joined and "<img" not in joined and "<i>thanks" not in joined
    assert "&lt;script&gt;" in joined and "&lt;img src=x" in joined


def test_pure_renderers_are_cheap_to_call_without_widgets():
    tr = sample_trace()
    spec = tools_spec(tr, 1)
    assert len(spec["data"]) == len(TOOLS_TRACES) and spec["layout"]["shapes"][0]["x0"] == 1.5
    assert tokens_spec(tr)["layout"]["shapes"] == []
    assert "Iteration 5 of 5" in details_html(tr, 99)  # clamped


def test_repr_mimebundle_is_the_widget():
    app, _ = make()
    bundle = app._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == app.widget.model_id


@pytest.mark.skipif(
    importlib.util.find_spec("toolsearch_lab.index.factory") is None, reason="index_factory not available"
)
def test_real_scenario_accumulation_changes_exposed_tools():
    app = IterationStepper(scenario="github", index="lucene")
    assert app.run.grade is not None and app.slider.max == len(app.trace.iterations)
    last_with = app.trace.iterations[-1].exposed_tools
    app.accumulation.value = False
    last_without = app.trace.iterations[-1].exposed_tools
    assert set(last_without) < set(last_with)
    assert "(accumulation off)" in app.tools_fig.layout.title.text


def visible_text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_model_dropdown_offers_the_simulated_agents_semantic_first():
    app, runner = make()
    values = [value for _, value in app.model_dropdown.options]
    assert values[:3] == ["semantic", "literal", "semantic-no-glossary"]
    assert app.model_dropdown.value == "semantic"
    assert "simulated · semantic, no glossary" in [label for label, _ in app.model_dropdown.options]
    assert "simulated · semantic" in app.model_dropdown.label
    assert IterationStepper(run=sample_trace(), runner=runner, model="simulated").model_dropdown.value == (
        "semantic"
    )
    app.model_dropdown.value = "literal"  # a simulated agent is free: re-run at once, then cache
    assert [c["model"] for c in runner.calls] == ["literal"]
    app.model_dropdown.value = "semantic"
    app.model_dropdown.value = "literal"
    assert len(runner.calls) == 1


def test_example_requests_checkbox_reruns_with_them():
    app, runner = make()
    assert app.examples.value is False
    app.examples.value = True
    assert [c["examples"] for c in runner.calls] == [True]
    app.examples.value = False  # the first run is cached under the initial settings
    assert len(runner.calls) == 1


def test_default_runner_writes_examples_into_the_scenario(monkeypatch, tmp_path):
    from toolsearch_lab.text.tool_text import example_requests
    from toolsearch_lab.ui.stepper import default_runner

    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path))
    run = default_runner("spring-demo-shop-user", "hybrid", False, "semantic", 5, None, examples=True)
    assert run.scenario.examples and all(example_requests(t.description)[1] for t in run.scenario.tools)
    assert run.grade.steps_succeeded == 5


def test_steps_block_is_empty_for_an_ungraded_trace():
    app, _ = make()
    assert sample_trace().steps == [] and app.steps.value == "" and steps_html(sample_trace()) == ""


def test_steps_block_escapes_and_marks_each_step():
    tr = sample_trace()
    tr.steps = [
        StepOutcome("close <b>bug</b> 7", ["close_issue"], True, ["close_issue"]),
        StepOutcome("land PR 7", ["merge_pull_request"], False, [], ["merge_pr"]),
    ]
    html = steps_html(tr)
    text = visible_text(html)
    assert "Steps 1/2" in text and "<b>bug" not in html and "close &lt;b&gt;bug&lt;/b&gt; 7" in html
    assert text.count("✓") == 1 and text.count("✗") == 1 and "nothing ran" in text
    assert "merge_pull_request" in text and "merge_pr" in text
    assert "white-space:nowrap" in html and theme.BAD in html and theme.GOOD in html


@pytest.mark.skipif(
    importlib.util.find_spec("toolsearch_lab.index.factory") is None, reason="index_factory not available"
)
def test_agent_switch_shows_per_step_grade_on_user_worded_scenario():
    name = "github-release-day-user"
    app = IterationStepper(scenario=name, index="lucene")
    settings = {
        "index": "lucene",
        "max_results": app.max_results.value,
        "min_score_threshold": app.threshold.value,
    }
    expected = run_scenario(name, model="semantic", **settings)
    n = len(load_scenario(name).steps)
    k = round(expected.step_success_rate * n)
    semantic_text = visible_text(app.steps.value)
    assert f"Steps {k}/{n}" in semantic_text
    assert semantic_text.count("✓") == k and semantic_text.count("✗") == n - k
    for step in expected.steps:
        assert theme.esc(step.need) in app.steps.value
    app.model_dropdown.value = "literal"
    assert app.trace.model != expected.trace.model  # the literal agent ran, not the semantic one again
    literal_text = visible_text(app.steps.value)
    assert f"Steps 0/{n}" in literal_text and literal_text.count("✗") == n
    app.model_dropdown.value = "semantic"  # from the cache
    assert f"Steps {k}/{n}" in visible_text(app.steps.value)


# ---- notebook 04's failure demonstrations (toolsearch_lab.ui.stepper_demos) ------------------------------
def test_accumulation_off_refuses_a_tool_found_two_searches_ago():
    from toolsearch_lab.ui.stepper_demos import REMEMBERED_CALLS, rejected_calls, remembering_runs, runs_table

    runs = remembering_runs()
    assert rejected_calls(runs["accumulation on"]) == []
    lost = rejected_calls(runs["accumulation off"])
    assert lost and set(lost) < set(REMEMBERED_CALLS), lost
    last_search = runs["accumulation off"].iterations[2].searches[0]
    assert not set(lost) & {h.name for h in last_search.hits}  # only what the latest search missed is lost
    text = repr(runs_table(runs))
    assert "not exposed" in text and len(text.splitlines()) <= 30


def test_max_results_left_unset_gets_the_index_default_and_the_model_wins():
    from toolsearch_lab.model import DEFAULT_MAX_RESULTS
    from toolsearch_lab.ui.stepper_demos import SPRING_DESCRIBED_DEFAULT, max_results_cases

    unset, configured, model_wins = max_results_cases()
    assert unset.returned == DEFAULT_MAX_RESULTS != SPRING_DESCRIBED_DEFAULT
    assert configured.returned == configured.advisor
    assert model_wins.returned == model_wins.model_asks != model_wins.advisor


def test_spring_yaml_reads_back_as_the_same_config():
    from datetime import timedelta

    from toolsearch_lab.loop.config import ToolSearchConfig
    from toolsearch_lab.ui.stepper_demos import config_side_by_side, spring_properties, spring_yaml

    config = ToolSearchConfig(
        enabled=True, index_type="lucene", max_results=5, lru_max_sessions=50, ttl=timedelta(seconds=90)
    )
    properties = spring_properties(config)
    assert ToolSearchConfig.from_spring_properties(properties) == config
    assert properties["spring.ai.chat.client.tool-search-advisor.eviction.ttl"] == "90s"
    yaml = spring_yaml(properties)
    assert yaml.splitlines()[:5] == [
        "spring:",
        "  ai:",
        "    chat:",
        "      client:",
        "        tool-search-advisor:",
    ]
    assert "reads back as the same configuration" in config_side_by_side(config)._repr_html_()
    with pytest.raises(ValueError, match="strict has no Spring Boot property"):
        spring_properties(ToolSearchConfig(strict=True))


def test_a_conversation_gets_turn_bands_a_turn_selector_and_its_memory_in_the_details():
    app = IterationStepper("support-conversation")
    assert not app.memory.disabled and not app.turn.disabled
    app.memory.value, app.source.value = "window:6", "history"
    trace = app.trace
    assert trace.config["memory"] == "window:6" and trace.config["accumulation_source"] == "history"
    labels = [label for label, _ in app.turn.options]
    assert len(labels) == 5 and labels[3].startswith("turn 4: #57 is the same crash")
    app.turn.value = app.turn.options[3][1]  # jump to turn 4's first request
    assert app.slider.value == app.turn.options[3][1]
    html = app.details.value
    assert "Turn 4 of 5" in html and "Lost" in html and "add_issue_comment" in html
    bands = [s for s in app.tools_fig.layout.shapes if s.label and s.label.text]
    assert [b.label.text.split(" ")[:2] for b in bands] == [["turn", str(k)] for k in range(1, 6)]
    lost = [b.label.text for b in bands if b.fillcolor == LOST_TINT]
    assert lost and all("lost" in text or "✗" in text for text in lost)
    # Each label fits its own band, so neighbouring turns' labels never overlap (turns 2 and 3: 3 requests).
    per_request = PLOT_PX / (len(trace.iterations) + 0.2)
    for band in bands:
        assert label_px(band.label.text) <= (band.x1 - band.x0) * per_request, band.label.text
    app.slider.value = 1
    assert app.turn.value == app.turn.options[0][1]  # the selector follows the slider
    app.scenario_dropdown.value = "spring-demo"
    assert app.memory.disabled and app.placement.disabled and app.turn.disabled
    assert app.turn.options == (("(one user request)", 0),)


def test_the_memory_advisor_dropdown_places_memory_and_says_when_a_placement_is_refused():
    app = IterationStepper("spring-7034", memory_advisor="inside", source="history")
    assert app.trace.config["memory_advisor"] == "inside" and "lookupShipment" in app.trace.turns[0].lost
    assert "memory advisor: inside" in app.details.value
    app.placement.value = "outside"
    assert [t.first_request_tools for t in app.trace.turns] == [["toolSearchTool"]] * 2
    app.memory.value, app.placement.value = "compact:6", "inside"
    assert "compaction rewrites whole turns" in app.status.value  # refused, and the stepper says why


def test_turns_table_and_turn_view_say_what_memory_took_in_text_too():
    from toolsearch_lab.eval.compare import run_strategy
    from toolsearch_lab.ui import turn_view, turns_table

    run = run_strategy(
        "support-conversation", "search-only", memory="window:6", accumulation_source="history"
    )
    table = turns_table(run)
    text = repr(table)
    assert table.columns[:3] == ["turn", "the user", "memory kept"] and len(table.rows) == 5
    assert "1 of 7" in text and "0/1" in text and "add_issue_comment" not in text.split("\n")[1]
    assert "found tools kept in: history" in text and "memory advisor: none" in text
    view = turn_view(run.trace, 4)
    assert "Turn 4: #57 is the same crash" in repr(view) and "add_issue_comment" in repr(view)
    assert "Lost" in view._repr_html_() and "first request exposed toolSearchTool" in repr(view)
    with pytest.raises(ValueError, match="has no turn 7"):
        turn_view(run.trace, 7)


def test_each_error_of_a_step_is_shown_once_with_its_call_or_on_its_own():
    from toolsearch_lab.trace import FailureKind, Iteration, RunTrace, ToolCallRecord

    timed_out = ToolCallRecord("c1", "get_x", "{}", "tool", error="timeout", failure=FailureKind.TOOL_TIMEOUT)
    limit = "limit reached: max_total_tool_calls (1)"
    refused = ToolCallRecord("c2", "get_y", "{}", "rejected", error=limit, failure=FailureKind.LIMIT_REACHED)
    model_failed = "test: the model request failed: timeout"  # its words end as the call's error does
    step = Iteration(
        1, [], [], [], tool_calls=[timed_out, refused], errors=["get_x: timeout", limit, model_failed]
    )
    # What the loop records: a call's failure on the call and the step; the run's failures on the run too.
    trace = RunTrace("s", "test", "lucene", "q", 2, iterations=[step], errors=[limit, model_failed])
    html = details_html(trace, 0)
    assert html.count("get_x: timeout") == 0 and html.count(">timeout<") == 1  # with its call only
    assert html.count(limit) == 1  # on the call it refused, not again below
    assert html.count(model_failed) == 1  # the model's failure, on its own
