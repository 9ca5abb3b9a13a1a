"""What a notebook shows besides widgets: tables and sentences built from computed numbers.

A notebook never prints a dict or an object's repr for a learner to read. It shows a :class:`Table` (an HTML
table in the kit's look, with an aligned text form for logs and headless runs), or :class:`Prose`, Markdown
written by code so that every number in it comes from the output beside it rather than from a draft. What
they show is never typeset as math: a dollar amount stays a dollar amount (:func:`theme.no_math`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolsearch_lab.ui import theme as t


class Prose:
    """Markdown from code: ``Prose(f"Each extra tool costs **{per_tool:.0f}** tokens.")``."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"Prose needs some Markdown text, got {text!r}")
        self.text = text

    def _repr_markdown_(self) -> str:
        return t.no_math(self.text)

    def __repr__(self) -> str:
        return self.text


class Table:
    """Rows of values under ``columns``. A cell is shown as text (escaped), or as HTML when it is a
    :class:`Html`; ``caption`` is a muted line under the table."""

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> None:
        columns = list(columns)
        rows = [list(row) for row in rows]
        bad = [i for i, row in enumerate(rows) if len(row) != len(columns)]
        if bad:
            raise ValueError(
                f"row {bad[0]} has {len(rows[bad[0]])} cells, the table has {len(columns)} columns {columns}"
            )
        self.columns, self.rows, self.caption = columns, rows, caption

    def _repr_html_(self) -> str:
        # A column of numbers is right-aligned, header included, so digits line up under each other.
        align = [
            _RIGHT if all(_is_number(row[i]) for row in self.rows if row[i] not in (None, "")) else _LEFT
            for i in range(len(self.columns))
        ]
        head = "".join(
            f"<th style='padding:4px 10px;{a}'>{t.esc(c)}</th>"
            for c, a in zip(self.columns, align, strict=True)
        )
        body = "".join(
            "<tr>"
            + "".join(
                f"<td style='padding:3px 10px;border-top:1px solid {t.GRID};{a}'>{_cell_html(v)}</td>"
                for v, a in zip(row, align, strict=True)
            )
            + "</tr>"
            for row in self.rows
        )
        style = f"border-collapse:collapse;font-size:{t.FONT_SIZE - 1}px"
        table = f"<table style='{style}'><tr>{head}</tr>{body}</table>"
        note = f"<div style='margin-top:6px'>{t.muted(t.esc(self.caption))}</div>" if self.caption else ""
        return t.panel(table + note)

    def __repr__(self) -> str:
        cells = [self.columns, *([_cell_text(v) for v in row] for row in self.rows)]
        widths = [max(len(str(row[i])) for row in cells) for i in range(len(self.columns))]
        lines = [
            "  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells
        ]
        return "\n".join(lines + ([self.caption] if self.caption else []))


class Html(str):
    """A table cell that is already HTML (a coloured mark, a chip), with the plain text shown in logs."""

    text: str

    def __new__(cls, html: str, text: str = "") -> Html:
        cell = super().__new__(cls, html)
        cell.text = text or html
        return cell


def _cell_text(value: Any) -> str:
    if isinstance(value, Html):
        return value.text
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _cell_html(value: Any) -> str:
    if isinstance(value, Html):
        return str(value)
    if isinstance(value, bool):
        colour = t.GOOD if value else t.BAD
        return f"<b style='color:{colour}'>{'✓' if value else '✗'}</b>"
    return t.esc(_cell_text(value))


_RIGHT = "text-align:right;font-variant-numeric:tabular-nums"
_LEFT = "text-align:left"


def _is_number(value: Any) -> bool:
    if isinstance(value, Html):
        return value.text.strip(" *#+-−").replace(",", "").replace(".", "", 1).isdigit()
    if isinstance(value, str):
        return value.strip("+-−").replace(",", "").isdigit()
    return isinstance(value, int | float) and not isinstance(value, bool)
