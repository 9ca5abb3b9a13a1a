"""The scenario file format: a user request over a catalog, the steps it takes, and what grades them.

A scenario file (``data/scenarios/<name>.json``)::

    {"name", "title", "system", "user_request",
     "wording": "plain" | "user",                                  # whose words the steps use (default plain)
     "catalog": "<shipped catalog name>"  or  "tools": [{"name","description","parameters"}...]
                                          or  "tools_of": "<scenario whose inline tools to reuse>",
     "results": {"<tool name>": <what the tool returns>},        # canned results of the tools a run needs
     "check_arguments": false,     # true: a tool refuses arguments its parameters' schema refuses (see below)
     "steps": [{"need": "...", "data": {...}, "expected_tools": ["..."], "also_accepted": ["..."]}]}

or a conversation: several user messages in one session, each with the steps it asks for (instead of
``user_request`` and ``steps``; graded turn by turn, the simulated agent working on the turn whose message it
was sent last)::

    {"name", "title", "system", "catalog" | "tools" | "tools_of", "results",
     "turns": [{"user": "<what the user writes>", "steps": [<steps as above>]}, ...]}

or a second wording of another scenario, which keeps everything of it but the words::

    {"name": "github-user", "wording_of": "github", "wording": "user", "title", "user_request",
     "needs": [{"rewords": "<the original step's need>", "need": "<it in the user's words>"}, ...]}

``plain`` steps use the catalog's own vocabulary; ``user`` steps are written the way people talk (no tool
names, synonyms, abbreviations). A second wording is named ``<original>-user``: ``load_scenario(name,
wording="user")`` finds it.

``expected_tools`` is for grading only: the simulated agent gets the needs and data, never the answers. A
step succeeds when its expected tools run in order, or any one of its ``also_accepted`` tools (another
tool that does the same job, e.g. ``issue_write`` closing an issue) runs. ``"expected_tools": []`` marks a
request no tool of the catalog can serve ("order sushi for the team" over GitHub's tools): that step succeeds
when no tool runs for it, whether the agent searched or not. Tools without a canned result return a clearly
labelled simulated echo of their arguments. With ``"check_arguments": true`` every tool first checks its
arguments against its parameters, as a validating server does: a required parameter missing, or a value of
another JSON type than the one declared, and the tool raises (the model reads an error result naming each
problem) instead of returning its result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.catalog.examples import load_example_requests, with_examples
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.model import Tool

WORDINGS = ("plain", "user")
USER_SUFFIX = "-user"
# The user-worded scenarios written blind (data/scenarios/PROVENANCE.md): held out, never tuned or chosen on.
HELD_OUT_SCENARIOS = (
    "github-security-triage-user",
    "livemcpbench-money-check-user",
    "spring-demo-market-day-user",
)


@dataclass(frozen=True)
class ScenarioStep:
    need: str
    data: dict = field(default_factory=dict)
    expected_tools: tuple[str, ...] = ()
    also_accepted: tuple[str, ...] = ()

    @property
    def servable(self) -> bool:
        """False for a request no tool of the catalog can serve (no expected tools)."""
        return bool(self.expected_tools)


@dataclass(frozen=True)
class ScenarioTurn:
    """One user message of a conversation scenario and the steps it asks for."""

    user: str
    steps: tuple[ScenarioStep, ...]


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
    turns: list[ScenarioTurn] = field(default_factory=list)  # a conversation's user messages (else none)

    @property
    def expected_tools(self) -> list[str]:
        return [t for s in self.steps for t in s.expected_tools]

    @property
    def servable(self) -> bool:
        """True when a tool serves every step (no request of it is one no tool can do)."""
        return all(step.servable for step in self.steps)

    @property
    def is_conversation(self) -> bool:
        return bool(self.turns)

    def messages(self) -> list[dict]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user_request}]

    def user_messages(self) -> list[str]:
        """What the user writes, turn by turn (one message for a single request)."""
        return [t.user for t in self.turns] or [self.user_request]

    def agent_steps(self) -> list[dict]:
        """What the simulated agent may know: the needs and their data, not the expected tools."""
        return [_agent_step(s) for s in self.steps]

    def agent_turns(self) -> list[dict]:
        """The same for a conversation: each user message with its steps' needs and data."""
        return [{"user": t.user, "steps": [_agent_step(s) for s in t.steps]} for t in self.turns]


def _agent_step(step: ScenarioStep) -> dict:
    return {"need": step.need, "data": dict(step.data)}


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


def load_scenario(
    name_or_path: str | Path,
    wording: str | None = None,
    examples: bool = False,
    *,
    live_tools: Sequence[Tool] | None = None,
) -> Scenario:
    """A shipped scenario by name (optionally in another ``wording``), or a scenario file by path;
    ``examples``: with the shipped example requests in its tools' descriptions
    (:func:`with_scenario_examples`); ``live_tools``: see :func:`scenario_from_dict`."""
    path = Path(name_or_path)
    if not path.is_file():
        name = str(name_or_path)
        if wording is not None:
            name = scenario_name(name, wording)
        path = _shipped_path(name)
    scenario = scenario_from_dict(_read_json(path), str(path), live_tools=live_tools)
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
    if "wording_of" in base or "tools_of" in base or (key == "wording_of" and "turns" in base):
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
    if also and not expected:
        raise ValueError(
            f"{where}: also_accepted {list(also)} without expected_tools; empty expected_tools marks a "
            "request no tool can serve, so nothing can be accepted for it"
        )
    return ScenarioStep(need, dict(s.get("data") or {}), expected, also)


def scenario_from_dict(
    raw: dict, where: str = "scenario", *, live_tools: Sequence[Tool] | None = None
) -> Scenario:
    """A scenario from its parsed file. ``live_tools``: the tools of live MCP servers in place of the file's
    own (``demo --mcp-config``); the steps name them, and they run for real unless ``results`` gives one a
    canned result."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a JSON object")
    name = _require(raw, "name", str, where)
    where = f"scenario {name!r}"
    if "wording_of" in raw:
        raw = _reworded(raw, where)
    wording = raw.get("wording", "plain")
    if wording not in WORDINGS:
        raise ValueError(f"{where}: field 'wording' must be one of {list(WORDINGS)}, got {wording!r}")
    base_tools = list(live_tools) if live_tools is not None else _tools(raw, where)
    results = raw.get("results", {})
    if not isinstance(results, dict):
        raise ValueError(f"{where}: field 'results' must be an object mapping tool names to results")
    names = {t.name for t in base_tools}
    unknown = sorted(set(results) - names)
    if unknown:
        raise ValueError(f"{where}: 'results' names tools that are not in the catalog: {unknown}")
    check = raw.get("check_arguments", False)
    if not isinstance(check, bool):
        raise ValueError(f"{where}: field 'check_arguments' must be true or false, got {check!r:.40}")
    tools = [
        t
        if live_tools is not None and t.function is not None and t.name not in results
        else _with_implementation(t, results, check)
        for t in base_tools
    ]
    turns = _turns(raw, names, where)
    steps = [s for t in turns for s in t.steps] or [
        _step(s, names, f"{where} steps[{i}]") for i, s in enumerate(_require(raw, "steps", list, where))
    ]
    if not steps:
        raise ValueError(f"{where}: needs at least one step")
    return Scenario(
        name=name,
        title=raw.get("title", name),
        system=raw.get("system", "You are a helpful assistant."),
        user_request=turns[0].user if turns else _require(raw, "user_request", str, where),
        turns=turns,
        tools=tools,
        steps=steps,
        description=raw.get("description", ""),
        wording=wording,
        family=raw.get("family", name[: -len(USER_SUFFIX)] if name.endswith(USER_SUFFIX) else name),
        tool_set=_tool_set(raw, name),
    )


def _turns(raw: dict, names: set[str], where: str) -> list[ScenarioTurn]:
    """A conversation's turns (none for a single request): each a non-blank message of its own, with steps."""
    if "turns" not in raw:
        return []
    clash = [k for k in ("steps", "user_request") if k in raw]
    if clash:
        raise ValueError(f"{where}: a conversation has 'turns' instead of {clash}, not both")
    turns: list[ScenarioTurn] = []
    for i, t in enumerate(_require(raw, "turns", list, where)):
        at = f"{where} turns[{i}]"
        if not isinstance(t, dict):
            raise ValueError(f"{at}: expected an object {{'user': ..., 'steps': [...]}}")
        user = _require(t, "user", str, at)
        if not user.strip() or user.strip() in [x.user for x in turns]:
            raise ValueError(f"{at}: 'user' must be non-blank text that no other turn has")
        raw_steps = _require(t, "steps", list, at)
        if not raw_steps:
            raise ValueError(f"{at}: needs at least one step")
        steps = tuple(_step(s, names, f"{at} steps[{j}]") for j, s in enumerate(raw_steps))
        turns.append(ScenarioTurn(user.strip(), steps))
    if not turns:
        raise ValueError(f"{where}: 'turns' needs at least one turn")
    return turns


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


def _with_implementation(tool: Tool, results: dict, check: bool = False) -> Tool:
    name = tool.name

    def run(**arguments):
        problems = argument_problems(tool.parameters, arguments) if check else []
        if problems:
            raise ValueError(f"invalid input for {name}: {'; '.join(problems)}")
        if name in results:
            return results[name]
        # Honest about what it is: the scenario has no real backend for this tool.
        return {
            "simulated": True,
            "tool": name,
            "arguments": arguments,
            "note": "no canned result in scenario",
        }

    return replace(tool, function=run)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def argument_problems(parameters: Mapping, arguments: Mapping) -> list[str]:
    """What a validating server refuses in ``arguments`` against the ``parameters`` schema, at the top level:
    each required parameter missing, each value whose JSON type is not the declared one (a bool is no
    number here, as in JSON Schema)."""
    properties = parameters.get("properties") or {}
    problems = [f"{key} is required" for key in parameters.get("required") or [] if key not in arguments]
    for key, value in arguments.items():
        declared = (properties.get(key) or {}).get("type")
        kinds = _JSON_TYPES.get(declared) if isinstance(declared, str) else None
        if kinds is not None and (
            not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)
        ):
            problems.append(f"{key} must be of type {declared}, got {json.dumps(value, ensure_ascii=False)}")
    return problems
