"""The facilitator's guide adds up: each plan fits its length with the slack it states, the outline's minutes
are the guide's planned minutes, and the measured table lists every lesson (notebooks added later included,
so a new one gets a slot)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "workshop.md").read_text(encoding="utf-8")
OUTLINE = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
LESSONS = sorted(p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}.*?(?=^## |\Z)", GUIDE, flags=re.S | re.M)
    assert match, f"docs/workshop.md has no section '{title}'"
    return match.group(0)


def rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("|---")][1:]  # fmt: skip


def planned() -> dict[str, int]:
    table = rows(section("How the minutes were measured"))
    return {r[0][:2]: int(r[-1].split()[0]) for r in table if r[0][:2].isdigit()}


@pytest.mark.parametrize(("title", "length"), [("The three-hour plan", 180), ("The two-hour plan", 120)])
def test_a_plan_fits_its_length_with_slack(title, length):
    text = section(title)
    slots = [(r[0], r[1], int(r[2])) for r in rows(text)]
    stated = int(re.search(r"(\d+) of them slack", text).group(1))
    slack = sum(m for _, what, m in slots if "slack" in what)
    assert slack == stated >= 10, f"{title}: {slack} minutes of slack, the title says {stated}"
    assert sum(m for *_, m in slots) == length, f"{title}: the slots add up to {sum(m for *_, m in slots)}"
    clock = 0
    for time, what, minutes in slots:  # each slot starts when the one before it ends
        hours, mins = map(int, time.split(":"))
        assert hours * 60 + mins == clock, (
            f"{title}: '{what}' starts at {time}, expected {clock // 60}:{clock % 60:02d}"
        )
        clock += minutes
    for _, what, minutes in slots:
        number = what[:2]
        if number.isdigit() and "to be timed" not in what:
            assert minutes >= planned()[number], (
                f"{title}: {what} gets {minutes} min, planned {planned()[number]}"
            )


def test_the_outline_gives_the_planned_minutes():
    outline = {r[0]: int(r[-1]) for r in rows(OUTLINE) if r[0].isdigit() and r[-1].isdigit()}
    assert outline == {k: v for k, v in planned().items() if k in outline}, (outline, planned())


def test_every_lesson_has_a_measured_row():
    missing = [n for n in LESSONS if n not in planned()]
    assert not missing, f"lessons with no row in the guide's timing table: {missing}"


def test_the_timing_table_gives_each_lessons_cells_and_words():
    """Cells and words are what ``python benchmarks/notebook_time.py`` prints for the notebooks as they are;
    when a lesson changes, run it and copy its figures (its times too) into docs/workshop.md."""
    import sys

    import nbformat

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from notebook_time import reading_minutes

    table = {r[0][:2]: r for r in rows(section("How the minutes were measured")) if r[0][:2].isdigit()}
    for number in LESSONS:
        nb = nbformat.read(next((ROOT / "notebooks").glob(f"{number}_*.ipynb")), as_version=4)
        words, minutes, optional = reading_minutes(nb)
        stated = f"{words:,}" + (f" (+ {optional})" if optional else "")
        _, cells, _, _, shown_words, reading, *_ = table[number]
        assert (int(cells), shown_words, float(reading)) == (len(nb.cells), stated, round(minutes, 1)), (
            f"docs/workshop.md's row for {number} is out of date: benchmarks/notebook_time.py prints "
            f"{len(nb.cells)} cells, {stated} words, {minutes:.1f} min to read"
        )


def exercise_minutes(cell: str) -> int:
    """The guide's exercise time: four minutes an exercise, five where participants write code ("1 (code)",
    "2 (one code)"; "2 (code)": both)."""
    count = int(cell.split()[0])
    code = 0 if "code" not in cell else 1 if "one code" in cell else count
    return 4 * count + code


def test_the_planned_minutes_are_the_guides_formula():
    """Twice the reading, the exercises, the quiet run, rounded to the nearest minute: as the guide says below
    its table, so a row whose words or exercises change cannot keep its old minutes."""
    for row in rows(section("How the minutes were measured")):
        if not row[0][:2].isdigit():
            continue
        _, _, quiet, _, _, reading, exercises, minutes = row
        exact = 2 * float(reading) + exercise_minutes(exercises) + float(quiet.split()[0]) / 60
        assert int(minutes) == int(exact + 0.5), f"{row[0]}: {minutes} planned, the formula gives {exact:.2f}"


@pytest.mark.parametrize("number", LESSONS)
def test_every_lesson_fits_the_course_rule_of_fifteen_minutes(number):
    """notebooks/README.md: a notebook teaches one idea in at most 15 minutes (the guide's planned ones)."""
    assert "in at most 15 minutes" in OUTLINE
    assert planned()[number] <= 15, f"notebook {number} plans {planned()[number]} minutes in the room"
