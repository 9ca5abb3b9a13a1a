"""The notebooks' "Try this" exercises: blank answers, self-checks that explain, and solutions to reveal.

One module per lesson (``lesson01`` … ``lesson12``) holds its exercise: the judge, which recomputes the right
answer from the package and the objects the notebook built; the solution, a function whose body is the code
``reveal`` prints for the answer cell; and the record tying them to the notebook's cell. ``base`` says what an
exercise is and how a solution function becomes the code shown; ``functions`` judges an answer that is code by
running it on the notebook's case and on cases the notebook never shows; ``selfcheck`` has ``check`` and
``reveal``.

A facilitator reveals solutions with ``reveal("04")`` (prints the code to paste) or for the whole room with
``TOOLSEARCH_LAB_SOLUTIONS=1`` (a blank answer is then replaced by the solution inside ``check``).
"""

from __future__ import annotations

from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.course.selfcheck import (
    EXERCISES,
    NOT_ANSWERED,
    NOT_QUITE,
    SOLUTIONS_ENV,
    Verdict,
    check,
    reveal,
    solutions_enabled,
)

__all__ = [
    "EXERCISES",
    "NOT_ANSWERED",
    "NOT_QUITE",
    "SOLUTIONS_ENV",
    "Exercise",
    "Judgement",
    "Verdict",
    "check",
    "reveal",
    "solutions_enabled",
]
