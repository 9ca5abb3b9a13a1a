"""Shipped scenarios: a user request over a catalog, the steps it takes, and how to grade a run.

A scenario file (``data/scenarios/<name>.json``)::

    {"name", "title", "system", "user_request",
     "wording": "plain" | "user",                                  # whose words the steps use (default plain)
     "catalog": "<shipped catalog name>"  or  "tools": [{"name","description","parameters"}...]
                                          or  "tools_of": "<scenario whose inline tools to reuse>",
     "results": {"<tool name>": <what the tool returns>},        # canned results of the tools a run needs
     "steps": [{"need": "...", "data": {...}, "expected_tools": ["..."], "also_accepted": ["..."]}]}

or a second wording of another scenario, which keeps everything of it but the words::

    {"name": "github-user", "wording_of": "github", "wording": "user", "title", "user_request",
     "needs": [{"rewords": "<the original step's need>", "need": "<it in the user's words>"}, ...]}

``plain`` steps use the catalog's own vocabulary; ``user`` steps are written the way people talk (no tool
names, synonyms, abbreviations). A second wording is named ``<original>-user``: ``load_scenario(name,
wording="user")`` finds it.

``expected_tools`` is for grading only: the simulated agent gets the needs and data, never the answers. A
step succeeds when its expected tools run in order, or any one of its ``also_accepted`` tools (another
tool that does the same job, e.g. ``issue_write`` closing an issue) runs. Tools without a canned result
return a clearly labelled simulated echo of their arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.catalog.examples import load_example_requests, with_examples
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.index.factory import INDEX_KINDS, make_index, threshold_options
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import ChatModel
from toolsearch_lab.models.simulated import AGENT_NAMES, SKIP_NOTE, SimulatedAgent, simulated_agent
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import RunTrace, StepOutcome

WORDINGS = ("plain", "user")
USER_SUFFIX = "-user"


@dataclass(frozen=True)
class ScenarioStep:
    need: str
    data: dict = field(default_factory=dict)
    expected_tools: tuple[str, ...] = ()
    also_accepted: tuple[str, ...] = ()


@dataclass
class Scenario:
    name: str
    title: str
    system: str
    user_request: str
    tools: list[Tool]
    steps: list[ScenarioStep]
    description: str = ""
    wording: str = "plain"
    family: str = ""  # the scenario this one re-words, or its own name
    tool_set: str = ""  # the shipped catalog, or the scenario that holds the tools
    examples: bool = False  # the tools' descriptions list example requests (catalog.examples)

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
    """``success`` is the all-or-nothing task grade; ``steps`` say which steps succeeded."""

    success: bool
    expected: list[str]
    called: list[str]
    missing: list[str]
    steps: list[StepOutcome] = field(default_factory=list)

    @property
    def steps_succeeded(self) -> int:
        return sum(1 for s in self.steps if s.success)

    @property
    def step_success_rate(self) -> float:
        return self.steps_succeeded / len(self.steps) if self.steps else 0.0


@dataclass
class ScenarioRun:
    scenario: Scenario
    trace: RunTrace
    grade: Grade
    messages: list[dict]

    @property
    def step_success_rate(self) -> float:
        return self.grade.step_success_rate

    @property
    def steps(self) -> list[StepOutcome]:
        return self.grade.steps


def scenarios_dir() -> Path:
    return data_path("scenarios")


def list_scenarios(wording: str | None = None) -> list[str]:
    """Shipped scenario names (both wordings), or only those of one wording."""
    names = sorted(p.stem for p in scenarios_dir().glob("*.json"))
    if wording is None:
        return names
    _check_wording(wording)
    return [n for n in names if n.endswith(USER_SUFFIX) == (wording == "user")]


def _check_wording(wording: str) -> None:
    if wording not in WORDINGS:
        raise ValueError(f"unknown wording {wording!r}: expected one of {list(WORDINGS)}")


def scenario_name(name: str, wording: str) -> str:
    """The shipped scenario with ``name``'s task in ``wording`` ("github", "user" -> "github-user")."""
    _check_wording(wording)
    base = name[: -len(USER_SUFFIX)] if name.endswith(USER_SUFFIX) else name
    wanted = base + USER_SUFFIX if wording == "user" else base
    if wanted not in list_scenarios():
        have = [n for n in (base, base + USER_SUFFIX) if n in list_scenarios()]
        raise ValueError(f"scenario {name!r} has no {wording!r} wording; shipped wordings of it: {have}")
    return wanted


def load_scenario(name_or_path: str | Path, wording: str | None = None, examples: bool = False) -> Scenario:
    """A shipped scenario by name (optionally in another ``wording``), or a scenario file by path;
    ``examples``: with the shipped example requests in its tools' descriptions
    (:func:`with_scenario_examples`)."""
    path = Path(name_or_path)
    if not path.is_file():
        name = str(name_or_path)
        if wording is not None:
            name = scenario_name(name, wording)
        path = _shipped_path(name)
    scenario = scenario_from_dict(_read_json(path), str(path))
    return with_scenario_examples(scenario) if examples else scenario


def _shipped_path(name: str) -> Path:
    candidate = scenarios_dir() / f"{name}.json"
    if not candidate.is_file():
        raise ValueError(f"unknown scenario {name!r}: shipped scenarios are {list_scenarios()}")
    return candidate


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"scenario {path}: not valid UTF-8 JSON ({exc})") from None


def _require(raw: dict, key: str, kind: type, where: str):
    if key not in raw:
        raise ValueError(f"{where}: missing field {key!r}")
    if not isinstance(raw[key], kind):
        raise ValueError(f"{where}: field {key!r} must be {kind.__name__}, got {type(raw[key]).__name__}")
    return raw[key]


def _base_raw(raw: dict, key: str, where: str) -> dict:
    """The shipped scenario a ``wording_of``/``tools_of`` field points at (one level: no chains)."""
    base_name = _require(raw, key, str, where)
    base = _read_json(_shipped_path(base_name))
    if "wording_of" in base or "tools_of" in base:
        raise ValueError(
            f"{where}: {key} must name a scenario with its own steps and tools, not {base_name!r}"
        )
    return base


def _reworded(raw: dict, where: str) -> dict:
    """A ``wording_of`` file merged onto its original: same tools, data, results and expected tools. Each
    entry of ``needs`` names the original need it rewords, so a changed original fails loudly here instead
    of pairing a user's words with the wrong step."""
    base = _base_raw(raw, "wording_of", where)
    needs = _require(raw, "needs", list, where)
    base_steps = _require(base, "steps", list, f"scenario {base.get('name')!r}")
    if len(needs) != len(base_steps):
        raise ValueError(
            f"{where}: 'needs' must reword each of the {len(base_steps)} steps of {raw['wording_of']!r}, "
            f"got {len(needs)}"
        )
    for i, (entry, step) in enumerate(zip(needs, base_steps, strict=True)):
        if not isinstance(entry, dict) or not str(entry.get("need") or "").strip():
            raise ValueError(
                f"{where}: needs[{i}] must be {{'rewords': <original need>, 'need': <new words>}}"
            )
        if entry.get("rewords") != step.get("need"):
            raise ValueError(
                f"{where}: needs[{i}] rewords {entry.get('rewords')!r} but step {i + 1} of "
                f"{raw['wording_of']!r} is {step.get('need')!r}; update the user wording"
            )
    merged = {k: v for k, v in base.items() if k not in ("steps", "title", "description", "wording")}
    merged.update({k: v for k, v in raw.items() if k not in ("needs", "wording_of")})
    merged["family"] = raw["wording_of"]
    merged["steps"] = [{**step, "need": entry["need"]} for step, entry in zip(base_steps, needs, strict=True)]
    return merged


def _tools(raw: dict, where: str) -> list[Tool]:
    if "catalog" in raw:
        return list(load_catalog(_require(raw, "catalog", str, where)).tools)
    if "tools_of" in raw and "tools" not in raw:
        return _tools(_base_raw(raw, "tools_of", where), where)
    return [
        Tool(
            t["name"],
            t["description"],
            t.get("parameters") or {"type": "object", "properties": {}},
            t.get("category"),
        )
        for t in _require(raw, "tools", list, where)
    ]


def _step(s: dict, names: set[str], where: str) -> ScenarioStep:
    need = _require(s, "need", str, where)
    expected = tuple(_require(s, "expected_tools", list, where))
    also = tuple(s.get("also_accepted") or ())
    missing = [e for e in expected if e not in names]
    if missing:
        raise ValueError(f"{where}: expected_tools {missing} are not in the catalog")
    missing = [e for e in also if e not in names]
    if missing:
        raise ValueError(f"{where}: also_accepted {missing} are not in the catalog")
    return ScenarioStep(need, dict(s.get("data") or {}), expected, also)


def scenario_from_dict(raw: dict, where: str = "scenario") -> Scenario:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a JSON object")
    name = _require(raw, "name", str, where)
    where = f"scenario {name!r}"
    if "wording_of" in raw:
        raw = _reworded(raw, where)
    wording = raw.get("wording", "plain")
    if wording not in WORDINGS:
        raise ValueError(f"{where}: field 'wording' must be one of {list(WORDINGS)}, got {wording!r}")
    base_tools = _tools(raw, where)
    results = raw.get("results", {})
    if not isinstance(results, dict):
        raise ValueError(f"{where}: field 'results' must be an object mapping tool names to results")
    names = {t.name for t in base_tools}
    unknown = sorted(set(results) - names)
    if unknown:
        raise ValueError(f"{where}: 'results' names tools that are not in the catalog: {unknown}")
    tools = [_with_implementation(t, results) for t in base_tools]
    steps = [
        _step(s, names, f"{where} steps[{i}]") for i, s in enumerate(_require(raw, "steps", list, where))
    ]
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
        wording=wording,
        family=raw.get("family", name[: -len(USER_SUFFIX)] if name.endswith(USER_SUFFIX) else name),
        tool_set=_tool_set(raw, name),
    )


def _tool_set(raw: dict, name: str) -> str:
    if "catalog" in raw:
        return raw["catalog"]
    return raw.get("tools_of") or raw.get("family") or name


def with_scenario_examples(
    scenario: Scenario, examples: Mapping[str, Sequence[str]] | None = None
) -> Scenario:
    """``scenario`` with example requests written into its tools' descriptions (:mod:`catalog.examples`):
    ``examples``, or the shipped ones of its tool set. Steps, data and canned results are unchanged."""
    if scenario.examples:
        raise ValueError(f"scenario {scenario.name!r}: its tools already list example requests")
    chosen = examples if examples is not None else load_example_requests(scenario.tool_set)
    tools = with_examples(scenario.tools, chosen, where=f"example requests for {scenario.tool_set!r}")
    return replace(scenario, tools=tools, examples=True)


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


def _match(step: ScenarioStep, called: list[str], start: int) -> tuple[int, int] | None:
    """Where in ``called`` (from ``start``) the step is done: (first, last) position of its expected tools
    in order, or of one ``also_accepted`` tool, whichever finishes first; None when it is not done."""
    options: list[tuple[int, int]] = []
    position, first = start, None
    for name in step.expected_tools:
        if name not in called[position:]:
            break
        found = called.index(name, position)
        first = found if first is None else first
        position = found + 1
    else:
        if first is not None:
            options.append((position - 1, first))
    options += [
        (called.index(n, start), called.index(n, start)) for n in step.also_accepted if n in called[start:]
    ]
    if not options:
        return None
    last, first = min(options)
    return first, last


def _alignment(steps: Sequence[ScenarioStep], called: list[str]) -> list[tuple[int, int] | None]:
    """Each step's match in ``called``, in the scenario's order, choosing the matches so that as many steps
    as possible are done: a wrong call for one step must not use up a call that did a later step (the
    agent that called ``list_releases`` for step 4 did not thereby do step 1, which accepts it, and undo
    steps 2 and 3). Among equally good alignments, earlier steps are matched first."""

    @cache
    def best(k: int, position: int) -> tuple[int, tuple[tuple[int, int] | None, ...]]:
        if k == len(steps):
            return 0, ()
        skip_count, skip_rest = best(k + 1, position)
        found = _match(steps[k], called, position)
        if found is not None:
            take_count, take_rest = best(k + 1, found[1] + 1)
            if take_count + 1 >= skip_count:
                return take_count + 1, (found, *take_rest)
        return skip_count, (None, *skip_rest)

    return list(best(0, 0)[1])


def grade(scenario: Scenario, trace: RunTrace) -> Grade:
    """Grade each step, then the task. Steps are matched in the scenario's order against the tools that ran
    (other calls may come between), as many as an in-order matching allows (:func:`_alignment`). The task
    succeeds when every step did and the run ended with an answer; a failed step's ``called`` lists what
    ran between the neighbouring successful steps."""
    called = trace.called_tools()
    matches = _alignment(scenario.steps, called)
    outcomes = []
    for k, (step, found) in enumerate(zip(scenario.steps, matches, strict=True)):
        if found is not None:
            ran = called[found[0] : found[1] + 1]
        else:
            before = [m[1] for m in matches[:k] if m is not None]
            after = [m[0] for m in matches[k + 1 :] if m is not None]
            ran = called[(before[-1] + 1 if before else 0) : (after[0] if after else len(called))]
        outcomes.append(
            StepOutcome(
                step.need, list(step.expected_tools), found is not None, ran, list(step.also_accepted)
            )
        )
    missing = [
        t
        for step, found in zip(scenario.steps, matches, strict=True)
        if found is None
        for t in step.expected_tools
    ]
    success = all(m is not None for m in matches) and trace.stop_reason == "answered"
    return Grade(success, scenario.expected_tools, called, missing, outcomes)


def chat_model_for(model: str | ChatModel, scenario: Scenario) -> ChatModel:
    """``"simulated"`` (the default agent), a name of ``AGENT_NAMES``, ``"openai"`` or a ChatModel."""
    if model == "simulated":
        return SimulatedAgent(scenario.agent_steps())
    if model in AGENT_NAMES:
        return simulated_agent(str(model), scenario.agent_steps())
    if model == "openai":
        # Optional dependency (the openai client): imported only when asked for.
        from toolsearch_lab.models.openai import OpenAIChatModel

        return OpenAIChatModel.from_env()  # ModelNotConfigured now, naming what to set, not a failed run
    if isinstance(model, str):
        raise ValueError(
            f"unknown model {model!r}: use 'simulated', {', '.join(repr(m) for m in AGENT_NAMES)}, "
            "'openai' or a ChatModel object"
        )
    return model


def run_scenario(
    scenario: Scenario | str | Path,
    index: str = "lucene",
    accumulation: bool = True,
    model: str | ChatModel = "simulated",
    max_results: int | None = None,
    min_score: float | None = None,
    encoding: str = "o200k_base",
    session_id: str | None = None,
    advisor: ToolSearchAdvisor | None = None,
    wording: str | None = None,
) -> ScenarioRun:
    """Run a scenario through a fresh ToolSearchAdvisor (or the one given), grade it step by step and put
    the step outcomes in the trace. ``model``: see :func:`chat_model_for`."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, wording)
    if advisor is None:
        advisor = ToolSearchAdvisor(
            make_index(index, **threshold_options(index, min_score)),
            max_results=max_results,
            reference_tool_name_accumulation=accumulation,
            token_counter=TokenCounter(encoding),
            index_name=index,
        )
    result = advisor.run(
        chat_model_for(model, sc),
        sc.messages(),
        sc.tools,
        {advisor.session_id_key: session_id or f"scenario-{sc.name}"},
    )
    verdict = grade(sc, result.trace)
    result.trace.steps = verdict.steps
    return ScenarioRun(sc, result.trace, verdict, result.messages)


def buildable_indexes(kinds: Sequence[str] = INDEX_KINDS) -> tuple[list[str], dict[str, str]]:
    """(the index kinds that can be built here, {kind: why not} for the others), e.g. a learned ranker
    whose model file has not been built."""
    usable, problems = [], {}
    for kind in kinds:
        try:
            make_index(kind)
        except Exception as exc:  # noqa: BLE001 - any failure to build means: leave it out and say why
            problems[kind] = f"{type(exc).__name__}: {exc}"
        else:
            usable.append(kind)
    return usable, problems


def scenario_matrix(
    names: Sequence[str] | None = None,
    indexes: Sequence[str] = INDEX_KINDS,
    agents: Sequence[str] = AGENT_NAMES,
    accumulation: bool = False,
    examples: Sequence[bool] = (False,),
) -> list[dict]:
    """Run every scenario (default: all shipped, both wordings) with every index and simulated agent, with
    the tools as shipped and/or with example requests in their descriptions (``examples``); one row per run
    with the task grade, the step success rate and the steps that failed."""
    rows = []
    for name in names if names is not None else list_scenarios():
        for with_examples_ in examples:
            scenario = load_scenario(name, examples=with_examples_)
            for index in indexes:
                for agent in agents:
                    rows.append(_matrix_row(scenario, index, agent, accumulation))
    return rows


def _matrix_row(scenario: Scenario, index: str, agent: str, accumulation: bool) -> dict:
    run = run_scenario(scenario, index=index, accumulation=accumulation, model=agent)
    return {
        "scenario": scenario.name,
        "family": scenario.family,
        "wording": scenario.wording,
        "examples": scenario.examples,
        "index": index,
        "agent": agent,
        "task_success": run.grade.success,
        "steps": len(run.steps),
        "steps_succeeded": run.grade.steps_succeeded,
        "step_success_rate": run.step_success_rate,
        "failed_steps": _failed_steps(run),
        "searches": [s.query for s in run.trace.searches()],
    }


def searches_per_step(trace: RunTrace, steps: int) -> list[list[list[str]]]:
    """For a simulated agent's run: the names each step's searches returned, step by step. A step ends at
    the agent's next real tool call or at its "Skipping step N" note (see models.simulated)."""
    out: list[list[list[str]]] = [[] for _ in range(steps)]
    step = 0
    for it in trace.iterations:
        step += len(SKIP_NOTE.findall(it.assistant_content or ""))
        for search in it.searches:
            if step < steps:
                out[step].append(search.names)
        step += sum(1 for c in it.tool_calls if c.kind == "tool")
    return out


def _failed_steps(run: ScenarioRun) -> list[dict]:
    """Each failed step with why: did any of its searches return an expected (or accepted) tool?
    (``surfaced`` True, False, or None when it made no search for the step)."""
    found = searches_per_step(run.trace, len(run.steps))
    failed = []
    for outcome, results in zip(run.steps, found, strict=True):
        if not outcome.success:
            wanted = set(outcome.expected) | set(outcome.also_accepted)
            # None: the agent never searched for this step (it had stopped, or picked without a search)
            surfaced = any(wanted & set(names) for names in results) if results else None
            failed.append(
                {
                    "need": outcome.need,
                    "expected": outcome.expected,
                    "called": outcome.called,
                    "surfaced": surfaced,
                }
            )
    return failed


def summarise_matrix(rows: Sequence[dict]) -> list[dict]:
    """Per wording x descriptions (as shipped, or with example requests) x index x agent: tasks succeeded
    and steps succeeded over all scenarios (pooled)."""
    groups: dict[tuple[str, bool, str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["wording"], row["examples"], row["index"], row["agent"]), []).append(row)
    return [
        {
            "wording": wording,
            "examples": examples,
            "index": index,
            "agent": agent,
            "tasks": len(group),
            "tasks_succeeded": sum(r["task_success"] for r in group),
            "steps": sum(r["steps"] for r in group),
            "steps_succeeded": sum(r["steps_succeeded"] for r in group),
            "step_success_rate": sum(r["steps_succeeded"] for r in group) / sum(r["steps"] for r in group),
            "failed_not_searched": sum(f["surfaced"] is None for r in group for f in r["failed_steps"]),
            "failed_not_surfaced": sum(f["surfaced"] is False for r in group for f in r["failed_steps"]),
            "failed_surfaced": sum(f["surfaced"] is True for r in group for f in r["failed_steps"]),
        }
        for (wording, examples, index, agent), group in sorted(groups.items())
    ]


_WHY = {True: "returned, not chosen", False: "never returned", None: "not searched"}


def summary_text(summary: Sequence[dict]) -> str:
    """:func:`summarise_matrix` as a text table, with why steps failed."""
    lines = [
        f"{'wording':<7} {'descriptions':<12} {'index':<7} {'agent':<20} {'tasks':>7} {'steps':>9} "
        f"{'step rate':>9}   failed steps: not searched / tool never returned / returned but not chosen"
    ]
    for s in summary:
        lines.append(
            f"{s['wording']:<7} {descriptions_label(s['examples']):<12} {s['index']:<7} {s['agent']:<20} "
            f"{s['tasks_succeeded']:>3}/{s['tasks']:<3} "
            f"{s['steps_succeeded']:>4}/{s['steps']:<4} {100 * s['step_success_rate']:>8.0f}%   "
            f"{s['failed_not_searched']:>3} / {s['failed_not_surfaced']:>3} / {s['failed_surfaced']}"
        )
    return "\n".join(lines)


def descriptions_label(examples: bool) -> str:
    return "+ examples" if examples else "as shipped"


# What the benchmarks' ``--examples`` choices run: the tools as shipped, with example requests, or both.
EXAMPLES_CHOICES = {"off": (False,), "on": (True,), "both": (False, True)}


def failed_steps_text(
    rows: Sequence[dict], agent: str = "semantic", wording: str = "user", index: str | None = None
) -> str:
    """One line per failed step of ``agent`` on ``wording`` scenarios (one index, or all): what was expected,
    what ran, and whether a search had returned the expected tool."""
    lines = []
    for r in rows:
        if r["agent"] == agent and r["wording"] == wording and index in (None, r["index"]):
            for f in r["failed_steps"]:
                lines.append(
                    f"  {r['index']:<7} {descriptions_label(r['examples']):<10} {r['scenario']:<26} "
                    f"{f['need']!r}: expected {f['expected']}, "
                    f"ran {f['called']} ({_WHY[f['surfaced']]})"
                )
    return "\n".join(lines)
