"""Notebook 02 (build it yourself): the learner writes the loop from its contract, then adds accumulation.

Both self-checks run the learner's loop and :class:`ToolSearchAdvisor` on the same scripted model, request by
request: the tools each request offers, what each search returned, whether each tool call ran or got an error
result, and what the loop returned. They do it on the notebook's script and on a second script the check keeps
to itself, so a loop that only replays the first one is caught. A difference is reported as the request where
the two loops part and what each did there, never as the code to write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ScriptExhausted, ToolCall
from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.course.functions import Case, first_difference, raised, refuse_value

SEARCH = ToolSearchTool(None).as_tool()  # the meta-tool, as the notebook names it
MAX_RESULTS = 5  # my_loop's default, and the advisor's max_results in the comparison
MESSAGES = [{"role": "user", "content": "Check the loop."}]
# Calling these is running the package's loop, not writing one.
PACKAGE_LOOPS = frozenset({"ToolSearchAdvisor", "run_scenario", "compare", "headline", "build_advisor"})


def _turn(number: int, *calls: tuple[str, dict[str, Any]]) -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[ToolCall(f"held-{number}-{i}", n, json.dumps(a)) for i, (n, a) in enumerate(calls)]
    )


def held_out_script() -> list[AssistantTurn]:
    """The script the checks keep to themselves: a search without maxResults, a tool found two searches ago,
    two calls in one turn, and the same tool found twice."""
    perfume = ("getPerfumeByName", {"name": "Santal 33"})
    return [
        _turn(1, (SEARCH.name, {"query": "perfume by name"})),
        _turn(2, perfume),
        _turn(3, (SEARCH.name, {"query": "shoes by size", "maxResults": 2})),
        _turn(4, ("getShoesVariationsBySize", {"size": "9"}), perfume),
        _turn(5, (SEARCH.name, {"query": "perfume by name", "maxResults": 1})),
        _turn(6, perfume),
        AssistantTurn(content="Santal 33 is in stock; size 9 too."),
    ]


def _names(items: list[str], shown: int = 6) -> str:
    if not items:
        return "nothing"
    more = f", … ({len(items)} in all)" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class _Mine:
    """How the learner's loop went: the model it called (with what each request carried), the tools it ran
    after each request (``(request, tool name)``, requests numbered from 1), what it returned and the error
    it raised, with the learner's line ("" when it returned)."""

    model: ScriptedModel
    ran: set[tuple[int, str]] = field(default_factory=set)
    returned: Any = None
    crashed: str = ""


def _run_mine(loop: Callable[..., Any], turns: list, tools: list, merge: Any) -> _Mine:
    """Run the learner's loop on a scripted model, with tools that note when the loop runs them."""
    mine = _Mine(ScriptedModel(turns, name="the script"))
    kwargs = {} if merge is None else {"merge": merge}
    try:
        mine.returned = loop(
            mine.model, [_noted(t, mine) for t in tools], MESSAGES, make_index("lucene"), **kwargs
        )
    except ScriptExhausted:
        mine.crashed = "it called the model again after the final answer (it should return the answer)"
    except Exception as exc:  # noqa: BLE001 - the learner's code: its error is the feedback
        mine.crashed = raised(exc, loop, merge)
    return mine


def _noted(tool: Tool, mine: _Mine) -> Tool:
    """``tool``, whose function notes in ``mine.ran`` that the learner's loop ran it, and after which
    request."""
    function = tool.function
    if function is None:
        return tool

    def run(*args: Any, **kwargs: Any) -> Any:
        mine.ran.add((len(mine.model.calls), tool.name))
        return function(*args, **kwargs)

    return replace(tool, function=run)


def _results_of(model: ScriptedModel, request: int) -> dict[str, Any]:
    """The tool messages the learner's loop added after request ``request`` (1-based), by tool-call id."""
    if request >= len(model.calls):
        return {}
    before = len(model.calls[request - 1]["messages"])
    after = model.calls[request]["messages"][before:]
    return {m.get("tool_call_id", ""): m.get("content") for m in after if m.get("role") == "tool"}


def _same_result(mine: str | None, tool: Tool, arguments: str, theirs: str) -> bool:
    if mine is None:
        return False
    if mine == theirs:
        return True
    value = tool.function(**json.loads(arguments)) if tool.function else None
    try:
        return json.loads(mine) == value
    except (TypeError, ValueError):
        return mine == str(value)


def loop_differences(
    loop: Callable[..., Any], turns: list, tools: list, merge: Any = None, accumulation: bool = False
) -> str:
    """Where the learner's loop parts from ``ToolSearchAdvisor`` on ``turns`` ("" when it never does)."""
    mine = _run_mine(loop, turns, tools, merge)
    crashed = mine.crashed
    advisor = ToolSearchAdvisor(
        make_index("lucene"), max_results=MAX_RESULTS, reference_tool_name_accumulation=accumulation
    )
    outcome = advisor.run(ScriptedModel(turns), MESSAGES, tools, session_id="02")
    theirs = outcome.trace.iterations
    registry = {t.name: t for t in tools}
    for it in theirs:
        n = it.number
        if n > len(mine.model.calls):
            return f"request {n}: your loop never sent it: {crashed or 'it returned early'}"
        offered, exposed = sorted(mine.model.calls[n - 1]["tools"]), sorted(it.exposed_tools)
        if offered != exposed:
            twice = sorted({t for t in offered if offered.count(t) > 1})
            extra = f" ({_names(twice)} twice: a request offers each tool once)" if twice else ""
            return (
                f"request {n}: your loop offered {_names(offered)}{extra}; the advisor exposed "
                f"{_names(exposed)} (what a request offers is the EXPOSE move"
                + (", and what the search keeps is your merge)" if merge is not None else ")")
            )
        results = _results_of(mine.model, n)
        for call in it.tool_calls:
            got = results.get(call.call_id)
            if got is None and crashed:
                return f"request {n}: your loop stopped before answering the call to {call.name}: {crashed}"
            if got is not None and not isinstance(got, str):
                return (
                    f"request {n}: your loop handed the model a {type(got).__name__} for the call to "
                    f"{call.name}; what a model reads back is text (a tool message's content is a string)"
                )
            if call.kind == "search":
                try:
                    names = json.loads(got or "")
                except ValueError:
                    names = got
                if names != json.loads(call.result):
                    mine_text = _names(names) if isinstance(names, list) else repr(_clip(str(names)))
                    return (
                        f"request {n}: your search returned {mine_text}; the advisor's search returned "
                        f"{_names(json.loads(call.result))} (the SEARCH move asks the index with the request)"
                    )
            elif call.kind == "tool" and not _same_result(
                got, registry[call.name], call.arguments, call.result
            ):
                answered = "sent no tool message for it" if got is None else f"answered {_clip(str(got))!r}"
                what = answered if (n, call.name) in mine.ran else f"did not run it; it {answered}"
                return (
                    f"request {n}: the call to {call.name} is exposed and the advisor ran it, but your loop "
                    f"{what} (the CALL move runs the exposed tool with the model's arguments)"
                )
            elif call.kind == "rejected" and (n, call.name) in mine.ran:
                return f"request {n}: your loop ran {call.name}, which was not exposed in that request"
    if len(mine.model.calls) != len(theirs):
        return (
            f"your loop kept sending requests after request {len(theirs)}, where the advisor stopped: a "
            "reply without tool calls is the answer, and the loop returns it"
        )
    if crashed:
        return f"after the last request, {crashed}"
    if mine.returned != outcome.answer:
        return (
            f"your loop sent every request as the advisor did, then returned {_clip(repr(mine.returned))}; "
            "the loop's result is what the model answered in its last reply"
        )
    return ""


def _judge(loop: Any, merge: Any, script: list, tools: list, accumulation: bool) -> Judgement:
    cases = [
        Case("the notebook's script", (script,)),
        Case("a second script the check keeps to itself", (held_out_script(),)),
    ]
    found = first_difference(
        "your loop", cases, lambda case: loop_differences(loop, case.args[0], tools, merge, accumulation)
    )
    if found:
        return False, found
    setting = "on" if accumulation else "off"
    return True, (
        f"your loop and ToolSearchAdvisor (accumulation {setting}) agree on every request of the notebook's "
        f"script ({len(script)} requests) and of a second one ({len(held_out_script())}): the same tools "
        "offered, the same search results, the same calls run or refused, the same answer returned"
    )


def judge_loop(loop: Any, *, script: list, tools: list, **_: Any) -> Judgement:
    problem = refuse_value(loop, solution_loop(), "script", PACKAGE_LOOPS)
    if problem:
        return False, problem
    return _judge(loop, None, script, tools, accumulation=False)


def judge_merge(merge: Any, *, my_loop: Any, script: list, tools: list, **_: Any) -> Judgement:
    problem = refuse_value(merge, solution_merge(), "script", PACKAGE_LOOPS)
    if problem:
        return False, problem
    if judge_loop(my_loop, script=script, tools=tools)[0] is False:
        return False, "my_loop does not pass its own self-check yet: finish the first exercise first"
    return _judge(my_loop, merge, script, tools, accumulation=True)


def solution_loop() -> Callable[..., Any]:
    def latest(exposed, found):
        return found  # accumulation off: the latest search's names replace the exposed ones

    def run_tool(tool, arguments):
        return json.dumps(tool.function(**arguments))  # the tool runner: its result, as JSON text

    def my_loop(model, tools, messages, index, max_results=5, merge=latest):
        registry, messages, exposed = {t.name: t for t in tools}, list(messages), []
        index.index_tools("mine", tools)
        while True:
            offered = [SEARCH] + [registry[name] for name in exposed]  # EXPOSE
            turn = model.complete(messages, [t.definition() for t in offered])  # the MODEL's turn
            messages.append(turn.to_message())
            if not turn.tool_calls:
                return turn.content
            for call in turn.tool_calls:
                args = json.loads(call.arguments)
                if call.name == SEARCH.name:
                    request = SearchRequest("mine", args["query"], args.get("maxResults", max_results))
                    found = index.search(request).tool_names  # SEARCH
                    exposed = merge(exposed, found)
                    result = json.dumps(found)
                elif call.name in exposed:
                    result = run_tool(registry[call.name], args)  # CALL
                else:
                    result = f"error: {call.name} is not available; call {SEARCH.name} first"
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    return my_loop


def solution_merge() -> Callable[..., Any]:
    def my_merge(exposed, found):
        # keep what earlier searches found, add what is new, each tool once
        return exposed + [name for name in found if name not in exposed]

    return my_merge


EXERCISES = (
    Exercise(
        key="02",
        notebook="02_build_it_yourself",
        answer_cell="c03",
        hint="one round per model request: offer the meta-tool and the exposed tools, add the reply to the "
        "messages, stop on a reply without calls; then one tool message per call (a search: the names found, "
        "merged into the exposed ones; an exposed tool: run_tool; any other name: an error).",
        solve=solution_loop,
        wrong=(
            "def my_loop(model, tools, messages, index, max_results=5, merge=latest):\n"
            "    return model.complete(messages, [t.definition() for t in tools]).content"
        ),
        why="each request offers the meta-tool plus the tools the searches kept; a search asks the index and "
        "its names become the exposed tools; only an exposed tool runs, anything else gets an error result.",
        judge=judge_loop,
    ),
    Exercise(
        key="02-acc",
        notebook="02_build_it_yourself",
        answer_cell="acc-answer",
        hint="my_merge(exposed, found) returns the names the next request exposes: with accumulation on, "
        "everything found so far, each name once.",
        solve=solution_merge,
        wrong="def my_merge(exposed, found):\n    return exposed + found",
        why="Spring's accumulation keeps every tool any earlier search found; a name found twice is still "
        "one tool in the request (providers refuse a tools array with a name twice).",
        judge=judge_merge,
    ),
)
