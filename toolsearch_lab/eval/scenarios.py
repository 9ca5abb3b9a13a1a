"""Shipped scenarios: a user request over a catalog, the steps it takes, and how to grade a run.

A scenario file (``data/scenarios/<name>.json``)::

    {"name", "title", "system", "user_request",
     "catalog": "<shipped catalog name>"  or  "tools": [{"name","description","parameters"}...],
     "results": {"<tool name>": <what the tool returns>},        # canned results of the tools a run needs
     "steps": [{"need": "...", "data": {...}, "expected_tools": ["..."]}]}

``expected_tools`` is for grading only: the simulated agent gets the needs and data, never the answers.
Tools without a canned result return a clearly labelled simulated echo of their arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from toolsearch_lab.model import Tool


@dataclass(frozen=True)
class ScenarioStep:
    need: str
    data: dict = field(default_factory=dict)
    expected_tools: tuple[str, ...] = ()


@dataclass
class Scenario:
    name: str
    title: str
    system: str
    user_request: str
    tools: list[Tool]
    steps: list[ScenarioStep]
    description: str = ""

    @property
    def expected_tools(self) -> list[str]:
        return [t for s in self.steps for t in s.expected_tools]

    def messages(self) -> list[dict]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user_request}]

    def agent_steps(self) -> list[dict]:
        """What the simulated agent may know: the needs and their data, not the expected tools."""
        return [{"need": s.need, "data": dict(s.data)} for s in self.steps]


@dataclass
class Grade:
    success: bool
    expected: list[str]
    called: list[str]
    missing: list[str]


@dataclass
class ScenarioRun:
    scenario: Scenario
    trace: object  # RunTrace
    grade: Grade
    messages: list[dict]


def scenarios_dir() -> Path:
    from toolsearch_lab.catalog.shipped import data_path

    return data_path("scenarios")


def list_scenarios() -> list[str]:
    return sorted(p.stem for p in scenarios_dir().glob("*.json"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    path = Path(name_or_path)
    if not path.is_file():
        candidate = scenarios_dir() / f"{name_or_path}.json"
        if not candidate.is_file():
            raise ValueError(
                f"unknown scenario {str(name_or_path)!r}: shipped scenarios are {list_scenarios()}"
            )
        path = candidate
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"scenario {path}: not valid UTF-8 JSON ({exc})") from None
    return scenario_from_dict(raw, str(path))


def _require(raw: dict, key: str, kind: type, where: str):
    if key not in raw:
        raise ValueError(f"{where}: missing field {key!r}")
    if not isinstance(raw[key], kind):
        raise ValueError(f"{where}: field {key!r} must be {kind.__name__}, got {type(raw[key]).__name__}")
    return raw[key]


def scenario_from_dict(raw: dict, where: str = "scenario") -> Scenario:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a JSON object")
    name = _require(raw, "name", str, where)
    where = f"scenario {name!r}"
    if "catalog" in raw:
        from toolsearch_lab.catalog.container import load_catalog

        base_tools = list(load_catalog(_require(raw, "catalog", str, where)).tools)
    else:
        base_tools = [
            Tool(
                t["name"],
                t["description"],
                t.get("parameters") or {"type": "object", "properties": {}},
                t.get("category"),
            )
            for t in _require(raw, "tools", list, where)
        ]
    results = raw.get("results", {})
    if not isinstance(results, dict):
        raise ValueError(f"{where}: field 'results' must be an object mapping tool names to results")
    names = {t.name for t in base_tools}
    unknown = sorted(set(results) - names)
    if unknown:
        raise ValueError(f"{where}: 'results' names tools that are not in the catalog: {unknown}")
    tools = [_with_implementation(t, results) for t in base_tools]
    steps = []
    for i, s in enumerate(_require(raw, "steps", list, where)):
        step_where = f"{where} steps[{i}]"
        need = _require(s, "need", str, step_where)
        expected = tuple(_require(s, "expected_tools", list, step_where))
        missing = [e for e in expected if e not in names]
        if missing:
            raise ValueError(f"{step_where}: expected_tools {missing} are not in the catalog")
        steps.append(ScenarioStep(need, dict(s.get("data") or {}), expected))
    if not steps:
        raise ValueError(f"{where}: needs at least one step")
    return Scenario(
        name=name,
        title=raw.get("title", name),
        system=raw.get("system", "You are a helpful assistant."),
        user_request=_require(raw, "user_request", str, where),
        tools=tools,
        steps=steps,
        description=raw.get("description", ""),
    )


def _with_implementation(tool: Tool, results: dict) -> Tool:
    if tool.name in results:
        canned = results[tool.name]

        def run(**arguments):
            return canned
    else:
        name = tool.name

        def run(**arguments):
            # Honest about what it is: the scenario has no real backend for this tool.
            return {
                "simulated": True,
                "tool": name,
                "arguments": arguments,
                "note": "no canned result in scenario",
            }

    return Tool(tool.name, tool.description, tool.parameters, tool.category, function=run)


def grade(scenario: Scenario, trace) -> Grade:
    """Successful when every expected tool ran, in the scenario's order (other calls may come between)."""
    called = trace.called_tools()
    expected = scenario.expected_tools
    position = 0
    missing = []
    for name in expected:
        try:
            position = called.index(name, position) + 1
        except ValueError:
            missing.append(name)
    return Grade(not missing and trace.stop_reason == "answered", expected, called, missing)


def run_scenario(
    scenario,
    index: str = "lucene",
    accumulation: bool = True,
    model="simulated",
    max_results: int | None = None,
    min_score: float | None = None,
    encoding: str = "o200k_base",
    session_id: str | None = None,
    advisor=None,
) -> ScenarioRun:
    """Run a scenario through a fresh ToolSearchAdvisor (or the one given) and grade it."""
    from toolsearch_lab.index.factory import make_index
    from toolsearch_lab.loop.advisor import ToolSearchAdvisor
    from toolsearch_lab.models.simulated import SimulatedAgent
    from toolsearch_lab.tokens import TokenCounter

    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    if advisor is None:
        options = {}
        if min_score is not None:
            threshold_option = {
                "lucene": "min_score",
                "hybrid": "min_score",
                "vector": "similarity_threshold",
            }
            if index not in threshold_option:
                raise ValueError(
                    f"the {index!r} index has no score threshold; min_score applies to lucene, vector, hybrid"
                )
            options[threshold_option[index]] = min_score
        advisor = ToolSearchAdvisor(
            make_index(index, **options),
            max_results=max_results,
            reference_tool_name_accumulation=accumulation,
            token_counter=TokenCounter(encoding),
            index_name=index,
        )
    if model == "simulated":
        chat_model = SimulatedAgent(sc.agent_steps())
    elif model == "openai":
        from toolsearch_lab.models.openai import OpenAIChatModel

        chat_model = OpenAIChatModel()
    elif isinstance(model, str):
        raise ValueError(f"unknown model {model!r}: use 'simulated', 'openai' or a ChatModel object")
    else:
        chat_model = model
    result = advisor.run(
        chat_model, sc.messages(), sc.tools, {advisor.session_id_key: session_id or f"scenario-{sc.name}"}
    )
    return ScenarioRun(sc, result.trace, grade(sc, result.trace), result.messages)
