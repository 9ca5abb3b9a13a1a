"""The loop's failure modes, made to happen on screen (notebook 04): a tool found two searches ago lost when
accumulation is off, ``maxResults`` left unset, and the same settings as Python and as Spring Boot YAML.

The model in the accumulation demo is a :class:`~toolsearch_lab.models.base.ScriptedModel` that does what a
chat model does and the simulated agent does not: it remembers the tools earlier searches returned and calls
them later without searching again. The simulated agent searches for every step, so on the shipped scenarios
accumulation on and off give the same runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import timedelta
from typing import Any

from toolsearch_lab.eval.scenarios import load_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.config import PREFIX, PROPERTY_OF, ToolSearchConfig
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.trace import RunTrace
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.display import Html, Table

DEMO_SCENARIO = "spring-demo"
REMEMBERED_CALLS = ("weather", "clothing", "currentTime")  # what the remembering model calls in request 4


def _turn(request: int, *calls: tuple[str, dict[str, Any]]) -> AssistantTurn:
    """The scripted model's reply to request ``request``: these tool calls, together."""
    ids = (f"call-{request}-{n}" for n in range(len(calls)))
    return AssistantTurn(
        tool_calls=[ToolCall(i, name, json.dumps(a)) for i, (name, a) in zip(ids, calls, strict=True)]
    )


# Notebook 04 tells the learner to read these two with `??`: keep each whole, short and plain.
def remembering_runs(index: str = "lucene") -> dict[str, RunTrace]:
    """A model that remembers what its searches found, on Spring's demo catalog, with accumulation on and off:
    three searches, then one request calling every tool they found, then the answer."""
    place = {"location": "Landsmeer, NL", "atTime": "now"}
    script = [
        _turn(1, ("toolSearchTool", {"query": "weather forecast", "maxResults": 2})),
        _turn(2, ("toolSearchTool", {"query": "clothing shops", "maxResults": 2})),
        _turn(3, ("toolSearchTool", {"query": "current time", "maxResults": 1})),
        _turn(4, *[(name, place) for name in REMEMBERED_CALLS]),
        AssistantTurn(content="Here is what I found."),
    ]
    demo, runs = load_scenario(DEMO_SCENARIO), {}
    for label, accumulation in (("accumulation on", True), ("accumulation off", False)):
        advisor = ToolSearchAdvisor(make_index(index), reference_tool_name_accumulation=accumulation)
        runs[label] = advisor.run(ScriptedModel(script), demo.messages(), demo.tools, session_id="demo").trace
    return runs


def rejected_calls(trace: RunTrace) -> list[str]:
    """The tools the model called that the loop refused because they were not exposed, sorted."""
    return sorted({c.name for it in trace.iterations for c in it.tool_calls if c.kind == "rejected"})


def _calls_cell(it) -> Html:
    parts, text = [], []
    for call in it.tool_calls:
        if call.kind == "search":
            found = ", ".join(h.name for s in it.searches for h in s.hits if s.call_id == call.call_id)
            parts.append(f"search → {t.esc(found or 'nothing')}")
            text.append(f"search -> {found or 'nothing'}")
        else:
            ok = call.kind == "tool"
            mark = f"<b style='color:{t.GOOD if ok else t.BAD}'>{'✓' if ok else '✗ not exposed'}</b>"
            parts.append(f"{t.esc(call.name)} {mark}")
            text.append(f"{call.name} {'ok' if ok else 'not exposed'}")
    if not it.tool_calls:
        parts, text = ["answers"], ["answers"]
    return Html("<br>".join(parts), "; ".join(text))


def runs_table(traces: dict[str, RunTrace]) -> Table:
    """One row per model request: what each run exposed and what the model's calls did."""
    columns = ["request"]
    for label in traces:
        columns += [f"{label}: exposed", f"{label}: the model's calls"]
    rows = []
    for position in range(max(len(tr.iterations) for tr in traces.values())):
        row: list[Any] = [position + 1]
        for trace in traces.values():
            it = trace.iterations[position] if position < len(trace.iterations) else None
            exposed = [n for n in it.exposed_tools if n != TOOL_SEARCH_TOOL_NAME] if it else []
            row += [", ".join(exposed) or "only toolSearchTool", _calls_cell(it) if it else ""]
        rows.append(row)
    return Table(
        columns, rows, caption="toolSearchTool is exposed in every request and left out of the list."
    )


# ---- maxResults --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MaxResultsCase:
    label: str
    model_asks: int | None  # the model's maxResults argument (None: omitted)
    advisor: int | None  # the advisor's max_results (Spring: spring.ai...max-results)
    returned: int  # how many tools the search returned


# The default Spring's toolSearchTool description tells the model (spec section 6); the code's default is the
# index's (10), which is what a search with no maxResults anywhere gets.
SPRING_DESCRIBED_DEFAULT = 5
MAX_RESULTS_QUERY = "shoes perfume products"  # matches most of the demo's 23 shop tools
MAX_RESULTS_SETTINGS = (
    ("left unset: the model omits it and nothing is configured", None, None),
    ("the advisor is configured with 3, the model omits it", None, 3),
    ("the model asks for 5, the advisor says 3", 5, 3),
)


def max_results_cases(index: str = "lucene") -> list[MaxResultsCase]:
    """One search on Spring's demo catalog per setting: the model's maxResults (or none) and the advisor's
    max_results (or none), and how many tools came back."""
    demo, cases = load_scenario(DEMO_SCENARIO), []
    for label, asks, configured in MAX_RESULTS_SETTINGS:
        search = {"query": MAX_RESULTS_QUERY, **({"maxResults": asks} if asks else {})}
        model = ScriptedModel([_turn(1, ("toolSearchTool", search)), AssistantTurn(content="ok")])
        advisor = ToolSearchAdvisor(make_index(index), max_results=configured)
        run = advisor.run(model, demo.messages(), demo.tools, session_id="demo")
        cases.append(MaxResultsCase(label, asks, configured, len(run.trace.iterations[0].searches[0].hits)))
    return cases


def max_results_table(cases: list[MaxResultsCase]) -> Table:
    rows = [
        [c.label, "omitted" if c.model_asks is None else c.model_asks, c.advisor or "unset", c.returned]
        for c in cases
    ]
    return Table(
        ["setting", "model's maxResults", "advisor's max_results", "tools returned"],
        rows,
        caption=f"query {MAX_RESULTS_QUERY!r} on the {DEMO_SCENARIO} catalog",
    )


# ---- Python beside Spring Boot YAML ----------------------------------------------------------------------
# ToolSearchConfig field -> Spring Boot property (after the prefix); the suffix is left to the Python side, as
# its text (several lines) does not fit the one-line values written here.
_PROPERTY_OF = {setting: name for setting, name in PROPERTY_OF.items() if setting != "system_message_suffix"}


def _duration(value: timedelta) -> str:
    ms = round(value.total_seconds() * 1000)
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _changed(config: ToolSearchConfig) -> dict[str, Any]:
    """The settings that differ from the defaults: Spring's properties first, in their order, then ours."""
    default = ToolSearchConfig()
    names = [*_PROPERTY_OF, *(f.name for f in fields(config) if f.name not in _PROPERTY_OF)]
    return {name: getattr(config, name) for name in names if getattr(config, name) != getattr(default, name)}


def spring_properties(config: ToolSearchConfig) -> dict[str, str]:
    """The Spring Boot properties that give ``config`` (only the settings that differ from the defaults)."""
    out = {}
    for name, value in _changed(config).items():
        if name not in _PROPERTY_OF:
            raise ValueError(
                f"ToolSearchConfig.{name} has no Spring Boot property (it is this project's own)"
            )
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, timedelta):
            text = _duration(value)
        else:
            text = str(value)
        out[PREFIX + _PROPERTY_OF[name]] = text
    return out


def spring_yaml(properties: dict[str, str]) -> str:
    """``properties`` as the nested ``application.yml`` block Spring Boot reads."""
    tree: dict[str, Any] = {}
    for key, value in properties.items():
        node = tree
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value

    def lines(node: dict, depth: int) -> list[str]:
        out = []
        for key, value in node.items():
            if isinstance(value, dict):
                out += [f"{'  ' * depth}{key}:", *lines(value, depth + 1)]
            else:
                out.append(f"{'  ' * depth}{key}: {value}")
        return out

    return "\n".join(lines(tree, 0))


def python_source(config: ToolSearchConfig) -> str:
    """The ``ToolSearchConfig(...)`` call that builds ``config``."""
    args = []
    for name, value in _changed(config).items():
        shown = (
            f"timedelta(seconds={value.total_seconds():g})" if isinstance(value, timedelta) else repr(value)
        )
        args.append(f"    {name}={shown},")
    return "ToolSearchConfig(\n" + "\n".join(args) + "\n)"


def config_side_by_side(config: ToolSearchConfig) -> Table:
    """The Python call and the ``application.yml`` for ``config``, and whether reading the YAML's properties
    back gives the same configuration."""
    properties = spring_properties(config)
    same = ToolSearchConfig.from_spring_properties(properties) == config
    pre = f"<pre style='font-family:{t.MONO};font-size:{t.FONT_SIZE - 2}px;margin:0'>"
    python, yaml = python_source(config), spring_yaml(properties)
    verdict = "reads back as the same configuration" if same else "does NOT read back the same"
    return Table(
        ["Python (toolsearch-lab)", "application.yml (Spring Boot)"],
        [[Html(pre + t.esc(python) + "</pre>", python), Html(pre + t.esc(yaml) + "</pre>", yaml)]],
        caption=f"ToolSearchConfig.from_spring_properties(the YAML's properties) {verdict}.",
    )
