"""Exercises whose answer is a function the learner writes: the check runs it on the notebook's own case and
on cases the notebook never shows, and holds each answer to the solution's there.

An answer typed in (a number, a list, a dict) cannot be run, so it is refused at once, saying why. A
function that returns what the notebook showed, whatever it is given, passes the notebook's case and fails
the next one, and the check says that is what happened. The cases a check keeps to itself are chosen so that
the solution's answer on each differs from the notebook's (tests/test_course.py holds them to it).

:class:`FunctionCheck` judges a function that returns a value (09, 12); notebook 02's loop is compared request
by request instead, with :func:`refuse_value`, :func:`raised` and :func:`first_difference` from here.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.ui.course.base import Judgement, code_names, is_blank


@dataclass(frozen=True)
class Case:
    """One input a learner's function is run on. ``label`` names it in a sentence ("the notebook's session",
    "a run the check keeps to itself"); ``args`` is what the function is called with; ``context`` is what
    the exercise's judge of one answer reads for this case."""

    label: str
    args: tuple[Any, ...]
    context: Mapping[str, Any] = field(default_factory=dict)


def declared(function: Callable[..., Any]) -> str:
    """How a cell declares ``function``: its name and the parameters it cannot do without, ``...`` for the
    rest ("my_loop(model, tools, messages, index, ...)")."""
    parameters = inspect.signature(function).parameters.values()
    required = [p.name for p in parameters if p.default is p.empty]
    more = ", ..." if len(required) < len(parameters) else ""
    return f"{function.__name__}({', '.join(required)}{more})"


def refuse_value(
    value: Any, solution: Callable[..., Any], what: str, forbidden: frozenset[str] = frozenset()
) -> str:
    """Why ``value`` cannot be run in place of the function ``solution`` ("" when it can). ``what`` is the
    kind of input the check runs it on ("conversation"), ``forbidden`` the package names that would do the
    exercise for it."""
    name, signature = solution.__name__, declared(solution)
    if not callable(value):
        return (
            f"{name} should be the function the cell above defines (def {signature}: ...), not a value "
            f"({type(value).__name__}): the check runs it on a {what} the notebook never shows, so an answer "
            "typed in cannot be checked"
        )
    if getattr(value, "__code__", None) is None:
        return f"{name} should be a plain function (def {signature}: ...)"
    if is_blank(value):
        return f"{name} still has a `...` blank in it"
    used = sorted(forbidden & code_names(value))
    if used:
        return f"{name} calls {', '.join(used)}, which does the exercise for it: write the steps yourself"
    required = [p.name for p in inspect.signature(solution).parameters.values() if p.default is p.empty]
    try:
        inspect.signature(value).bind(*required)
    except TypeError:
        return f"{name} should take {', '.join(required)} (def {signature}: ...)"
    return ""


def raised(exc: BaseException, *functions: Any) -> str:
    """``exc`` as the learner reads it: its type, its message and the line of the learner's code it came from
    (the last frame in one of ``functions``' cells)."""
    files = {f.__code__.co_filename for f in functions if hasattr(f, "__code__")}
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in files]
    line = f" at the line `{frames[-1].line}`" if frames and frames[-1].line else ""
    said = f": {exc}" if str(exc) else ""
    return f"it raised {type(exc).__name__}{said}{line}"


def first_difference(name: str, cases: Sequence[Case], differs: Callable[[Case], str]) -> str:
    """The sentence for the first case on which ``differs`` finds the learner's function parting from the
    solution ("" when it never does): the notebook's case (``cases[0]``) or one the check keeps to itself."""
    for number, case in enumerate(cases):
        found = differs(case)
        if found and number == 0:
            return f"on {case.label}, {found}"
        if found:
            return f"{name} agrees with the solution on {cases[0].label}, but not on {case.label}: {found}"
    return ""


@dataclass(frozen=True)
class FunctionCheck:
    """The judge of an exercise whose answer is a function returning a value.

    ``solution`` is the exercise's solution (it returns the function a learner writes: its name and
    parameters are the ones asked for); ``cases`` builds, from the objects the notebook passed to ``check``,
    the notebook's case first and then the ones the check keeps to itself; ``judge`` judges one answer,
    ``judge(answer, **case.context)``, with the reasons a learner reads; ``look_at`` says where to look when
    the function is right on the notebook's case only (it names no number a learner could home in on).
    """

    solution: Callable[[], Callable[..., Any]]
    what: str
    cases: Callable[..., Sequence[Case]]
    judge: Callable[..., Judgement]
    look_at: str
    forbidden: frozenset[str] = frozenset()

    def __call__(self, function: Any, **context: Any) -> Judgement:
        solution = self.solution()
        problem = refuse_value(function, solution, self.what, self.forbidden)
        if problem:
            return False, problem
        cases = self.cases(**context)
        answers: list[Any] = []
        verdicts: list[str] = []

        def differs(case: Case) -> str:
            try:
                answer = function(*case.args)
            except Exception as exc:  # noqa: BLE001 - the learner's code: its error is the feedback
                return raised(exc, function)
            answers.append(answer)
            right, because = self.judge(answer, **case.context)
            verdicts.append(because)
            if right:
                return ""
            if len(answers) > 1 and _same(answer, answers[0]):
                return (
                    f"it returned the same answer as on {cases[0].label}. A function that returns what the "
                    f"notebook shows, or reads the notebook's objects instead of its arguments, computes "
                    f"nothing: work from the {self.what} it is given"
                )
            return because if len(answers) == 1 else self.look_at

        found = first_difference(solution.__name__, cases, differs)
        if found:
            return False, found
        others = f"{len(cases) - 1} {self.what}{'s' if len(cases) > 2 else ''} the notebook never shows"
        return True, f"{verdicts[0]}; and on {others}, {solution.__name__} agrees with the solution"


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001 - a learner's value whose == raises is not the same answer
        return False
