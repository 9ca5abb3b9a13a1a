"""What an exercise is: a blank answer cell, a judge, and a solution that is a real function.

A solution is written as the function ``solution(<notebook objects it reads>)``: its body is the code a
student pastes into the answer cell, and it ends with ``return <the answer variables>``. ``reveal`` prints
the body without the ``def`` line and the ``return`` line; ``check`` (with ``TOOLSEARCH_LAB_SOLUTIONS=1``)
calls the function on the notebook's objects. The solution that is shown is the solution that is run.
"""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.text.normalise import keyword_tokens, porter_stem
from toolsearch_lab.text.stopwords import ENGLISH_STOP_WORDS

Judgement = tuple[bool, str]  # (right?, the reason shown after "✓" or "not quite, because")


@dataclass(frozen=True)
class Exercise:
    """One "Try this": the student's cell (by id), a hint, the solution, a typical wrong answer and the judge.

    ``names`` (the variables the cell sets, in the order ``check`` receives them) and ``solution`` (the code
    ``reveal`` prints) are read from the solution function, so they cannot drift from it."""

    key: str
    notebook: str
    answer_cell: str  # the id of the student's cell in the notebook
    hint: str
    solve: Callable[..., Any]  # the solution; its parameters are notebook objects passed to check()
    wrong: str  # a plausible wrong answer (code for the same cell): its check must say "not quite"
    why: str  # the reasoning behind the solution, printed by reveal()
    judge: Callable[..., Judgement]
    names: tuple[str, ...] = field(init=False)
    solution: str = field(init=False)

    def __post_init__(self) -> None:
        code, names = solution_code(self.solve)
        object.__setattr__(self, "solution", code)
        object.__setattr__(self, "names", names)

    def require(self, context: Mapping[str, Any]) -> None:
        """Refuse a ``check`` call that lacks a notebook object the solution or the judge's cases read."""
        reads = [*inspect.signature(self.solve).parameters, *_required(getattr(self.judge, "cases", None))]
        missing = list(dict.fromkeys(name for name in reads if name not in context))
        if missing:
            raise TypeError(
                f"exercise {self.key} reads {', '.join(missing)}: pass "
                f"{', '.join(f'{m}={m}' for m in missing)} to check({self.key!r}, ...)"
            )

    def solved(self, context: Mapping[str, Any]) -> tuple[Any, ...]:
        """The answers, computed by calling the solution on the objects the notebook passed to ``check``."""
        self.require(context)
        answers = self.solve(**{name: context[name] for name in inspect.signature(self.solve).parameters})
        return tuple(answers) if len(self.names) > 1 else (answers,)


def _required(function: Callable[..., Any] | None) -> list[str]:
    """The parameters ``function`` cannot do without (none for None)."""
    if function is None:
        return []
    return [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def solution_code(solve: Callable[..., Any]) -> tuple[str, tuple[str, ...]]:
    """(the code a student pastes, the variables it sets) of a solution function: its body without the
    ``def`` line(s) and the closing ``return``, dedented. Refuses a function whose last statement does not
    return its answer variables by name, since the pasted code would then set nothing the check reads."""
    source = textwrap.dedent(inspect.getsource(solve))
    (function,) = ast.parse(source).body
    last = function.body[-1] if isinstance(function, ast.FunctionDef) else None
    returned = last.value if isinstance(last, ast.Return) else None
    values = returned.elts if isinstance(returned, ast.Tuple) else [returned]
    if last is None or not all(isinstance(v, ast.Name) for v in values):
        raise ValueError(
            f"solution {solve.__qualname__} must end with `return <answer variables>`, e.g. "
            "`return my_target, my_query`"
        )
    names = tuple(v.id for v in values if isinstance(v, ast.Name))
    lines = source.splitlines()
    body = lines[_header_lines(source) : last.lineno - 1]
    return textwrap.dedent("\n".join(body)).strip("\n"), names


def _header_lines(source: str) -> int:
    """How many lines the ``def`` header takes: it ends with the first logical line (a signature may wrap)."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NEWLINE:
            return token.end[0]
    raise ValueError("a function's source has no complete first line")


def stems(text: str) -> set[str]:
    """Content-word stems: what "uses the same words" means for the checks (plurals and -ing folded)."""
    return {porter_stem(w) for w in keyword_tokens(text, ENGLISH_STOP_WORDS) if len(w) > 1}


def is_blank(value: Any) -> bool:
    """An answer not given yet: ``...``, ``None``, or a function with a ``...`` still in its body (the
    exercises where the learner writes code hand out a function with its blanks as ``...``)."""
    if value is ... or value is None:
        return True
    code = getattr(value, "__code__", None)
    return code is not None and _has_ellipsis(code)


def _has_ellipsis(code: Any) -> bool:
    return any(c is ... or (hasattr(c, "co_consts") and _has_ellipsis(c)) for c in code.co_consts)


def code_names(function: Any) -> set[str]:
    """Every global and attribute name a function's code (nested functions included) refers to."""
    names: set[str] = set()
    stack = [function.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack += [c for c in code.co_consts if hasattr(c, "co_names")]
    return names


MIN_DISTINCT_SHARE = 0.6  # "refund refund refund order" is a keyword repeated, not a sentence


def repeats_words(text: str) -> bool:
    """Whether ``text`` repeats its content words (stems, stop words left out) so much that fewer than
    :data:`MIN_DISTINCT_SHARE` of them are distinct: a search matches a word once, so repeating it says
    nothing more."""
    said = [porter_stem(w) for w in keyword_tokens(text, ENGLISH_STOP_WORDS) if len(w) > 1]
    return len(said) >= 2 and len(set(said)) < MIN_DISTINCT_SHARE * len(said)
