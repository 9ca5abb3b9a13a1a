"""Grading a run of a scenario: which steps the tools that ran did, and why the others failed.

A step succeeds when its expected tools run in order, or any one of its ``also_accepted`` tools runs
(:mod:`.format`); a step no tool can serve (no expected tools) succeeds when the agent said it skipped it
("Skipping step N") or no tool ran between the neighbouring steps' tools. The task succeeds when every
step did and the run ended with an answer. A conversation is graded turn by turn: a turn's steps against
the tools that ran in that turn only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import takewhile

from toolsearch_lab.eval.scenarios.format import Scenario, ScenarioStep
from toolsearch_lab.models.fit import SKIP_NOTE
from toolsearch_lab.trace import ANSWERED, RunTrace, StepOutcome


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
    (other calls may come between), as many as an in-order matching allows (:func:`_alignment`); in a
    conversation, each turn's steps against the tools of that turn. The task succeeds when every step did
    and the run (every turn) ended with an answer; a failed step's ``called`` lists what ran between the
    neighbouring successful steps."""
    if not scenario.turns:
        outcomes = _outcomes(scenario.steps, trace.called_tools(), None, _skipped(trace))
        finished = trace.stop_reason == ANSWERED
    else:
        numbers = {t.number for t in trace.turns}
        outcomes = []
        for number, turn in enumerate(scenario.turns, start=1):
            part = trace.turn_trace(number) if number in numbers else None
            called, skipped = (part.called_tools(), _skipped(part)) if part is not None else ([], set())
            outcomes += _outcomes(turn.steps, called, number, skipped)
        finished = trace.stop_reason == ANSWERED and len(trace.turns) == len(scenario.turns)
    missing = [
        t
        for step, o in zip(scenario.steps, outcomes, strict=True)
        if not o.success
        for t in step.expected_tools
    ]
    success = all(o.success for o in outcomes) and finished
    return Grade(success, scenario.expected_tools, trace.called_tools(), missing, outcomes)


def _skipped(trace: RunTrace) -> set[int]:
    """The 0-based steps the agent said it skipped ("Skipping step N", as the simulated agents write)."""
    return {int(n) - 1 for it in trace.iterations for n in SKIP_NOTE.findall(it.assistant_content or "")}


def _missed_beside(
    steps: Sequence[ScenarioStep], matches: Sequence[tuple[int, int] | None], positions: range
) -> int:
    """How many of the unmatched steps at ``positions``, up to the first matched one, a tool could serve."""
    return sum(steps[j].servable for j in takewhile(lambda j: matches[j] is None, positions))


def _outcomes(
    steps: Sequence[ScenarioStep], called: list[str], turn: int | None, skipped: set[int]
) -> list[StepOutcome]:
    servable = [k for k, step in enumerate(steps) if step.servable]
    matches: list[tuple[int, int] | None] = [None] * len(steps)
    for k, found in zip(servable, _alignment([steps[k] for k in servable], called), strict=True):
        matches[k] = found
    outcomes = []
    for k, (step, found) in enumerate(zip(steps, matches, strict=True)):
        if found is not None:
            ran = called[found[0] : found[1] + 1]
        elif not step.servable and k in skipped:
            ran = []  # the agent said it skipped this step: what ran nearby was for another step
        else:
            before = [m[1] for m in matches[:k] if m is not None]
            after = [m[0] for m in matches[k + 1 :] if m is not None]
            start = before[-1] + 1 if before else 0
            end = after[0] if after else len(called)
            if not step.servable:
                # A failed step that a tool could serve is taken to have made the wrong call nearest it, so
                # an unservable step beside it is not blamed for that step's miss.
                start += _missed_beside(steps, matches, range(k - 1, -1, -1))
                end -= _missed_beside(steps, matches, range(k + 1, len(steps)))
            ran = called[start:end] if start < end else []
        # A request no tool serves is done right when nothing ran for it: any call there was a wrong tool.
        success = found is not None if step.servable else not ran
        outcomes.append(
            StepOutcome(step.need, list(step.expected_tools), success, ran, list(step.also_accepted), turn)
        )
    return outcomes


def searches_per_step(trace: RunTrace, steps: int | Sequence[int]) -> list[list[list[str]]]:
    """For a simulated agent's run: the names each step's searches returned, step by step. A step ends at
    the agent's next real tool call or at its "Skipping step N" note (see models.simulated). For a
    conversation, ``steps`` is the number of steps of each turn."""
    if not isinstance(steps, int):
        ran = {t.number for t in trace.turns}
        return [
            s
            for n, count in enumerate(steps, 1)
            for s in (searches_per_step(trace.turn_trace(n), count) if n in ran else [[]] * count)
        ]
    out: list[list[list[str]]] = [[] for _ in range(steps)]
    step = 0
    for it in trace.iterations:
        step += len(SKIP_NOTE.findall(it.assistant_content or ""))
        for search in it.searches:
            if step < steps:
                out[step].append(search.names)
        step += sum(1 for c in it.tool_calls if c.kind == "tool")
    return out


def failed_steps(graded: Grade, trace: RunTrace) -> list[dict]:
    """Each failed step of a graded run with why: did any of its searches return an expected (or
    accepted) tool? (``surfaced`` True, False, or None when it made no search for the step)."""
    turns = max((s.turn or 0 for s in graded.steps), default=0)
    per_turn = [sum(1 for s in graded.steps if s.turn == n) for n in range(1, turns + 1)]
    found = searches_per_step(trace, per_turn if turns else len(graded.steps))
    failed = []
    for outcome, results in zip(graded.steps, found, strict=True):
        if not outcome.success:
            wanted = set(outcome.expected) | set(outcome.also_accepted)
            # None: the agent never searched for this step (it had stopped, or picked without a search),
            # or no tool serves the step, so no search could have surfaced one
            surfaced = any(wanted & set(names) for names in results) if results and wanted else None
            failed.append(
                {
                    "need": outcome.need,
                    "expected": outcome.expected,
                    "called": outcome.called,
                    "surfaced": surfaced,
                }
            )
    return failed
