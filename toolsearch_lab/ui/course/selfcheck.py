"""``check`` and ``reveal``: what the notebooks' self-check cells and a facilitator call.

``check("04", my_rejected, **context)`` returns a :class:`Verdict` shown as the cell's output:

- "not answered yet" while an answer is ``...`` or ``None`` (no exception, so Run All keeps going);
- "not quite, because …" for a wrong answer;
- "✓ …" for a right one.

With ``TOOLSEARCH_LAB_SOLUTIONS=1`` a blank answer is replaced by the solution: the exercise's solution
function, called on the objects the notebook passed as ``context``.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from typing import Any

from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.course import (
    lesson01,
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
    lesson11,
    lesson12,
)
from toolsearch_lab.ui.course.base import Exercise, is_blank

SOLUTIONS_ENV = "TOOLSEARCH_LAB_SOLUTIONS"
NOT_ANSWERED = "not answered yet"
NOT_QUITE = "not quite, because"

LESSONS = (
    lesson01,
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
    lesson11,
    lesson12,
)
EXERCISES: dict[str, Exercise] = {e.key: e for lesson in LESSONS for e in lesson.EXERCISES}


@dataclass(frozen=True)
class Verdict:
    """The outcome of one self-check: ``status`` is "blank", "wrong" or "right"."""

    exercise: str
    status: str
    message: str

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        colour = {"right": t.GOOD, "wrong": t.BAD}.get(self.status, t.MUTED)
        body = html.escape(self.message).replace("\n", "<br>")
        return t.panel(f'<div style="border-left:4px solid {colour};padding-left:10px">{body}</div>')


def solutions_enabled() -> bool:
    return os.environ.get(SOLUTIONS_ENV, "").strip().lower() in ("1", "true", "yes")


def check(key: str, *answers: Any, **context: Any) -> Verdict:
    """Judge the student's answers to exercise ``key``; see the module docstring."""
    exercise = _exercise(key)
    if len(answers) != len(exercise.names):
        raise TypeError(
            f"check({key!r}) expects {len(exercise.names)} answer(s) ({', '.join(exercise.names)}), "
            f"got {len(answers)}"
        )
    prefix = ""
    if any(is_blank(a) for a in answers):
        if not solutions_enabled():
            return Verdict(
                key, "blank", f"… {NOT_ANSWERED}: set {', '.join(exercise.names)}. Hint: {exercise.hint}"
            )
        context = _solved_context(context)
        answers = exercise.solved(context)
        prefix = f"(solution revealed by {SOLUTIONS_ENV}=1)\n{exercise.solution}\n"
    exercise.require(context)
    right, because = exercise.judge(*answers, **context)
    if right:
        return Verdict(key, "right", f"{prefix}✓ {because}")
    return Verdict(key, "wrong", f"{prefix}✗ {NOT_QUITE} {because}")


def _solved_context(context: dict[str, Any]) -> dict[str, Any]:
    """``context`` with every blank answer of an earlier exercise (``my_loop=my_loop`` passed to a later
    check) replaced by that exercise's solution: a revealed solution builds on the ones before it."""
    filled = dict(context)
    for name, value in context.items():
        owner = next((e for e in EXERCISES.values() if name in e.names), None)
        if owner is not None and is_blank(value):
            filled[name] = owner.solved(filled)[owner.names.index(name)]
    return filled


def reveal(notebook: str) -> None:
    """Print the solution of every exercise of ``notebook`` ("04", "4" or "04_the_loop_and_accumulation"):
    the code to paste into the answer cell, then why it is right."""
    number = notebook.strip()[:2].rstrip("_").zfill(2)
    found = [e for e in EXERCISES.values() if e.notebook.startswith(number)]
    if not found:
        raise ValueError(f"no exercises for notebook {notebook!r}; known: {sorted(EXERCISES)}")
    for exercise in found:
        print(f"# Try this ({exercise.notebook}): paste into the answer cell\n{exercise.solution}")
        print(f"# why: {exercise.why}\n")


def _exercise(key: str) -> Exercise:
    if key not in EXERCISES:
        raise KeyError(f"unknown exercise {key!r}; known: {sorted(EXERCISES)}")
    return EXERCISES[key]
