"""The course's exercises without a notebook kernel: ``reveal`` prints each solution's code exactly, that code
pasted into a cell sets the same answers the check computes with ``TOOLSEARCH_LAB_SOLUTIONS=1`` (the solution
shown is the solution run), and pasted answers are judged right. tests/test_notebooks.py pastes the same code
into the real answer cells of every lesson."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
from functools import cache
from typing import Any
from unittest import mock

import pytest

from toolsearch_lab import diagnose, headline, helpdesk_catalog, load_transcript
from toolsearch_lab.eval.compare import compare, comparison_rows, run_strategy
from toolsearch_lab.eval.datasets import Dataset, load_dataset
from toolsearch_lab.eval.metrics import evaluate
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.ui.course import EXERCISES, SOLUTIONS_ENV, Exercise, check, reveal
from toolsearch_lab.ui.course.base import solution_code
from toolsearch_lab.ui.course.functions import FunctionCheck, refuse_value
from toolsearch_lab.ui.course.lesson07 import off_domain_confidences
from toolsearch_lab.ui.course.lesson10 import judge_description_fixes

TASK_07 = "ec6f4fe5-e650-48b1-8805-285d8f52eb10"  # notebook 07's task


def _head() -> dict[str, Any]:
    head = headline("github")
    return {"head": head, "run": head.tool_search.run}


def _task_ranking() -> dict[str, Any]:
    live = load_dataset("livemcpbench")
    task = next(q for q in live.queries if q.id == TASK_07)
    result = evaluate(make_index("lucene"), Dataset(live.tools, [task], "one task"), k=5)
    return {"task_ranking": result.per_query[0]}


def _loop_02() -> dict[str, Any]:
    """Notebook 02's objects: its script and catalog, and the names its loop cell reads."""
    import json

    from toolsearch_lab import AssistantTurn, SearchRequest, ToolCall, ToolSearchTool, load_scenario

    here = {"location": "Landsmeer, NL"}
    replies = [("weather", here), ("toolSearchTool", {"query": "current time", "maxResults": 1}),
               ("currentTime", here), ("toolSearchTool", {"query": "weather", "maxResults": 1}),
               ("weather", here), ("currentTime", here)]  # fmt: skip
    script = [
        AssistantTurn(tool_calls=[ToolCall(f"c{i}", n, json.dumps(a))]) for i, (n, a) in enumerate(replies)
    ]
    script.append(AssistantTurn(content="done"))
    names = {"json": json, "SearchRequest": SearchRequest, "SEARCH": ToolSearchTool(None).as_tool()}
    return {"script": script, "tools": load_scenario("spring-demo").tools, **names}


def _loop_02_acc() -> dict[str, Any]:
    loop = context("02")
    return {**loop, "my_loop": pasted(EXERCISES["02"], loop)[0]}


def _helpdesk() -> dict[str, Any]:
    catalog = helpdesk_catalog()
    return {"catalog": catalog, "report": diagnose(catalog, indexes=("lucene", "vector"))}


# The objects a notebook passes to check(), built the way the notebook builds them, for the exercises whose
# objects are quick to build; the others are judged in their notebooks only.
CONTEXTS = {
    "01": _head,
    "02": _loop_02,
    "02-acc": _loop_02_acc,
    "04": dict,
    "06": dict,
    "07": _task_ranking,
    "07-abstention": lambda: {"off_domain": list(off_domain_confidences("github-test", "github-mcp"))},
    "09": lambda: {"session": load_transcript("claude-code-session")},
    "10-doctor": _helpdesk,
    "11": lambda: {"rows": comparison_rows(compare("spring-demo", indexes=("lucene",), max_results=5))},
    "12": lambda: {
        "history_run": run_strategy(
            "support-conversation", "search-only", memory="window:6", accumulation_source="history"
        ).run
    },
}


@cache
def context(key: str) -> dict[str, Any]:
    return CONTEXTS[key]()


def pasted(exercise: Exercise, notebook_globals: dict[str, Any]) -> tuple[Any, ...]:
    """Run the printed solution as a notebook cell would (in the notebook's globals); its answers."""
    cell = dict(notebook_globals)
    exec(exercise.solution, cell)  # the student pasting the code into the answer cell
    return tuple(cell[name] for name in exercise.names)


@pytest.mark.parametrize("notebook", sorted({e.notebook for e in EXERCISES.values()}))
def test_reveal_prints_each_solution_exactly(notebook):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        reveal(notebook[:2])
    expected = "".join(
        f"# Try this ({e.notebook}): paste into the answer cell\n{e.solution}\n# why: {e.why}\n\n"
        for e in EXERCISES.values()
        if e.notebook == notebook
    )
    assert printed.getvalue() == expected


@pytest.mark.parametrize("key", sorted(EXERCISES))
def test_the_printed_solution_is_plain_cell_code_for_the_answer_cell(key):
    exercise = EXERCISES[key]
    lines = exercise.solution.splitlines()
    assert lines and not lines[0][:1].isspace(), exercise.solution
    wrapper = f"def {exercise.solve.__name__}("  # the solution function's own def and return are not shown
    assert not any(line.startswith((wrapper, "return")) for line in lines), exercise.solution
    for name in exercise.names:  # the cell sets every variable the self-check reads, at the top level
        assert any(line.startswith((f"{name} = ", f"def {name}(")) for line in lines), (
            name,
            exercise.solution,
        )


@pytest.mark.parametrize("key", sorted(EXERCISES))
@pytest.mark.slow
def test_the_solution_shown_is_the_solution_run(key):
    exercise = EXERCISES[key]
    objects = context(key) if key in CONTEXTS else {}
    if set(inspect.signature(exercise.solve).parameters) - set(objects):
        pytest.skip(f"{key}: its objects are built in the notebook only (tests/test_notebooks.py)")
    shown, run = pasted(exercise, objects), exercise.solved(objects)
    assert [_comparable(a) for a in shown] == [_comparable(a) for a in run]


def _comparable(answer: Any) -> Any:
    """An answer as it can be compared: a function (the loop a student writes) by what its code names, holds
    and takes (its bytecode changes as it runs warm). A helper the cell defines beside it is a global pasted
    and a closure's variable in the solution function: both are names the code refers to."""
    code = getattr(answer, "__code__", None)
    if code is None:
        return answer
    consts = [c for c in code.co_consts if not hasattr(c, "co_code")]
    return sorted({*code.co_names, *code.co_freevars}), code.co_varnames, code.co_argcount, consts


@pytest.mark.parametrize("key", sorted(CONTEXTS))
@pytest.mark.slow
def test_a_pasted_solution_is_judged_right(key):
    exercise = EXERCISES[key]
    answers = pasted(exercise, context(key))
    verdict = check(key, *answers, **context(key))
    assert verdict.status == "right", verdict.message
    assert verdict.message.startswith("✓ ")


@pytest.mark.parametrize("key", sorted(CONTEXTS))
@pytest.mark.slow
def test_the_solutions_flag_runs_the_solution_and_shows_its_code(key):
    blanks = [...] * len(EXERCISES[key].names)
    objects = {n: (... if n in EXERCISES["02"].names else v) for n, v in context(key).items()}
    with mock.patch.dict(os.environ, {SOLUTIONS_ENV: "1"}):
        verdict = check(key, *blanks, **objects)  # an earlier exercise left blank is solved too
    assert verdict.status == "right", verdict.message
    shown = f"(solution revealed by {SOLUTIONS_ENV}=1)\n{EXERCISES[key].solution}\n✓ "
    assert verdict.message.startswith(shown), verdict.message
    with mock.patch.dict(os.environ, {SOLUTIONS_ENV: ""}):
        assert check(key, *blanks, **context(key)).status == "blank"


def test_the_solutions_flag_names_a_notebook_object_the_check_was_not_given():
    with (
        mock.patch.dict(os.environ, {SOLUTIONS_ENV: "1"}),
        pytest.raises(TypeError, match=r"reads session: pass session=session to check\('09', \.\.\.\)"),
    ):
        check("09", ...)


def _wrapped(
    task_ranking: Any,
    offline: Any = None,
) -> tuple[float, list[int]]:
    # a comment the student sees
    my_share = 0.5
    my_list = [
        1,
        2,
    ]
    return my_share, my_list


def _no_return() -> None:
    my_answer = 1  # noqa: F841 - the point: nothing hands the answer back


def _returns_a_value() -> int:
    return 5


def test_solution_code_drops_a_wrapped_def_and_the_return_and_keeps_comments():
    code, names = solution_code(_wrapped)
    assert names == ("my_share", "my_list")
    assert code == "# a comment the student sees\nmy_share = 0.5\nmy_list = [\n    1,\n    2,\n]"


@pytest.mark.parametrize("solve", [_no_return, _returns_a_value])
def test_a_solution_that_does_not_return_its_answer_variables_is_refused(solve):
    with pytest.raises(ValueError, match=r"must end with `return <answer variables>`"):
        Exercise("x", "00_x", "c1", "hint", solve, "my_answer = 0", "why", lambda *a, **k: (True, ""))


def test_helpdesk_exercise_judge():
    catalog, before = context("10-doctor")["catalog"], context("10-doctor")["report"]
    assert before.worst_descriptions(2) == ["refund_order", "get_ticket"]
    good = {
        "refund_order": "Refund a customer's paid order in full or in part and email them the receipt.",
        "get_ticket": "Open a support ticket by its number and show its status, messages and assignee.",
    }
    right, why = judge_description_fixes(good, catalog=catalog, report=before)
    assert right, why
    assert f"{before.score:.0%} → " in why
    wrong = [
        ({"refund_order": good["refund_order"]}, "get_ticket is not rewritten yet"),
        ({**good, "get_ticket": "Get ticket."}, "get_ticket ('Get ticket.') is too short"),
        ({**good, "get_ticket": "ticket get ticket get ticket get"}, "get_ticket repeats its words"),
        ({**good, "get_ticket": good["refund_order"]}, "is another tool's"),
        ({**good, "issue_refund": "x"}, "'issue_refund' is not a tool"),
        ("refund it", "should be a dict"),
    ]
    for answer, reason in wrong:
        right, why = judge_description_fixes(answer, catalog=catalog, report=before)
        assert not right and reason in why, why


REFUSAL = 'result = f"error: {call.name} is not available; call {SEARCH.name} first"'
CALL = "result = run_tool(registry[call.name], args)  # CALL"


@pytest.mark.parametrize(
    "old, new, verdict",
    [
        # A refusal in the package's own shape, an error object, is a refusal: what counts is that the tool
        # did not run, whatever the words of the tool message.
        (REFUSAL, 'result = json.dumps({"error": f"{call.name} is not available"})', "right"),
        (
            REFUSAL,
            "result = json.dumps(registry[call.name].function(**args))",
            "request 1: your loop ran weather",
        ),
        (CALL, 'result = "error: I would rather not"', "your loop did not run it; it answered 'error: I"),
        (CALL, 'result = "Sunny."  # made up', "your loop did not run it; it answered 'Sunny.'"),
        (CALL, "result = str(registry[call.name].function(**args)).upper()", "your loop answered '"),
    ],
)
def test_the_loop_check_judges_what_the_learners_loop_ran_not_the_words_it_wrote(old, new, verdict):
    objects = context("02")
    assert old in EXERCISES["02"].solution
    variant = EXERCISES["02"].solution.replace(old, new)
    cell = dict(objects)
    exec(variant, cell)
    judged = check("02", cell["my_loop"], **objects)
    if verdict == "right":
        assert judged.status == "right", judged.message
    else:
        assert judged.status != "right" and verdict in judged.message, judged.message


def _shown_answer(key: str, function: Any, objects: dict[str, Any]) -> Any:
    """What the solution ``function`` of exercise ``key`` returns on the notebook's own case."""
    from toolsearch_lab import ScriptedModel

    judge = EXERCISES[key].judge
    if isinstance(judge, FunctionCheck):
        return function(*judge.cases(**objects)[0].args)
    if key == "02":
        return function(ScriptedModel(objects["script"]), objects["tools"], [], make_index("lucene"))
    return function(["weather", "clothing"], ["currentTime", "weather"])  # 02-acc: one merge


CODE_EXERCISES = ["02", "02-acc", "07-abstention", "09", "12"]


@pytest.mark.parametrize("key", CODE_EXERCISES)
@pytest.mark.slow
def test_a_code_exercise_refuses_its_right_answer_typed_in(key):
    """The notebook's answer typed in as a value is refused as such, and a function that returns it whatever
    it is given is refused too: the check runs the function where the notebook's answer is not the answer."""
    objects = context(key)
    (function,) = pasted(EXERCISES[key], objects)
    answer = _shown_answer(key, function, objects)
    typed = check(key, answer, **objects)
    assert typed.status == "wrong" and "an answer typed in cannot be checked" in typed.message, typed.message
    constant = check(key, lambda *args, **kwargs: answer, **objects)
    assert constant.status == "wrong", constant.message
    if isinstance(EXERCISES[key].judge, FunctionCheck):
        assert "it returned the same answer as on the notebook's" in constant.message, constant.message


@pytest.mark.parametrize("key", [k for k in CODE_EXERCISES if isinstance(EXERCISES[k].judge, FunctionCheck)])
@pytest.mark.slow
def test_the_cases_a_check_keeps_to_itself_have_other_answers(key):
    """On every case the notebook never shows, the solution's answer differs from the notebook's, so no
    constant passes; and the solution is judged right on each."""
    judge = EXERCISES[key].judge
    (function,) = pasted(EXERCISES[key], context(key))
    shown, *unseen = judge.cases(**context(key))
    assert unseen
    for case in unseen:
        assert function(*case.args) != function(*shown.args), case.label
        assert judge.judge(function(*case.args), **case.context)[0], case.label


def _pins(run):
    return []


@pytest.mark.parametrize(
    "value, refusal",
    [
        (["add_issue_comment"], "not a value (list): the check runs it on a conversation the notebook never"),
        ({"pins": 1}, "not a value (dict)"),
        (print, "pins_for should be a plain function (def pins_for(run): ...)"),
        (lambda: [], "pins_for should take run (def pins_for(run): ...)"),
        (lambda run, extra: [], "pins_for should take run (def pins_for(run): ...)"),
        (lambda run: ..., "pins_for still has a `...` blank in it"),
        (_pins, ""),
    ],
)
def test_refuse_value_says_why_a_value_is_not_a_function_to_run(value, refusal):
    said = refuse_value(value, EXERCISES["12"].solve(), "conversation")
    assert (refusal in said) if refusal else said == "", said


# Answers of every size around the right one, for the exercises whose answer is a number: a number in a
# rejection that moves with them is one a learner could bisect on.
SWEEPS: dict[str, list[str]] = {
    "01": [f"my_requests = {n}" for n in range(12)],
    "06": [f"my_index_builds = {n}" for n in range(10)],
    "07": [f"my_recall_at_5 = {a} / 6\nmy_rr = 1 / {b}" for a in range(7) for b in (1, 2, 4, 7)],
    "07-abstention": [
        f"def my_threshold(confidences):\n    return sorted(confidences)[{i}] + {step}"
        for i in range(0, 52, 3)
        for step in (-0.001, 0, 0.001, 0.05)
    ]
    + [f"def my_threshold(confidences):\n    return {t / 20}" for t in range(1, 21)],
    "09": [f"def first_in_context(run, tool):\n    return {n}" for n in range(-1, 14)],
}


@pytest.mark.parametrize("key", sorted(CONTEXTS))
@pytest.mark.slow
def test_no_rejection_gives_a_figure_to_home_in_on(key):
    """A rejection says which requirement an answer misses and where to look, never by how much: over the
    cheap answers, the held-out bank and answers of every size, no rejection gives a share, a direction, a
    rank or a count of how far off, and none carries a number that moves with the answer."""
    from course_bank import HELD_OUT
    from course_probe import probe

    from toolsearch_lab import ScriptedModel, ToolSearchAdvisor, load_scenario

    exercise, objects = EXERCISES[key], context(key)
    call = f"check({key!r}, {', '.join(exercise.names)}, {', '.join(f'{n}={n}' for n in objects)})"
    answers = [*HELD_OUT.get(key, []), exercise.wrong, *SWEEPS.get(key, [])]
    namespace = {  # what the bank's answers read besides the check's objects, as in the notebooks
        **objects,
        "check": check,
        "ScriptedModel": ScriptedModel,
        "ToolSearchAdvisor": ToolSearchAdvisor,
        "make_index": make_index,
        "messages": load_scenario("spring-demo").messages(),
    }
    results = json.loads(probe(key, list(exercise.names), exercise.solution, call, answers, namespace, False))
    rejections = [r for r in results["records"] if r["status"] == "wrong"]
    assert len(rejections) > 10, results["records"][:3]
    bisectable = [(r["label"], r["figures"], r["message"]) for r in rejections if r["figures"]]
    assert not bisectable, f"{key}: rejections a learner could bisect on: {bisectable[:2]}"
    assert not results["moving"], f"{key}: rejections whose numbers move with the answer: {results['moving']}"
