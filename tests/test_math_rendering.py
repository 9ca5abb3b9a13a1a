"""Dollar amounts and other text the package shows are never typeset as LaTeX in JupyterLab.

tests/jupyter_math.py reads Markdown and HTML the way JupyterLab 4 does; these tests hold it to what
JupyterLab did in Chromium with the same inputs (tests/test_notebooks.py runs it over every notebook's cells
and outputs), and hold the package's Markdown and HTML paths to it.
"""

from __future__ import annotations

import pytest
from jupyter_math import html_math, markdown_math, remove_math

from toolsearch_lab.ui import Prose, Table, theme
from toolsearch_lab.ui.course import Verdict

PLAIN = "costs $0.0133 and the other $0.0200 here"


# What JupyterLab 4.6 in Chromium typeset (an mjx-container in the page) for each input, in a Markdown cell, a
# text/markdown output and a text/html output.
@pytest.mark.parametrize(
    ("text", "in_markdown", "in_html"),
    [
        (PLAIN, True, True),
        (PLAIN.replace("$", "\\$"), True, False),  # marked drops the backslash before MathJax reads the page
        (PLAIN.replace("$", "&#36;"), True, True),
        (f'<span class="mathjax_ignore">{PLAIN}</span>', False, False),
        (PLAIN.replace("$", '<span class="mathjax_ignore">&#36;</span>'), False, False),
        ("in code `$0.01` and `$0.02` here", False, True),
        ("a \\(x\\) and \\\\(y\\\\) here", True, True),
    ],
)
def test_the_reader_finds_what_jupyterlab_typeset(text, in_markdown, in_html):
    assert bool(markdown_math(text)) is in_markdown, markdown_math(text)
    assert bool(html_math(f"<div>{text}</div>")) is in_html, html_math(f"<div>{text}</div>")


def test_remove_math_keeps_paragraphs_and_code_apart():
    # A math span never crosses a blank line, and a dollar in a code span or a fence is code.
    assert remove_math("one $a\n\nb$ two")[1] == []
    assert remove_math("`$x` and `$y`")[1] == []
    assert remove_math("```\n$a$\n```\n")[1] == []
    # The bullet lines notebook 11 merged: a dollar on one line, another on the next.
    text, math = remove_math("- cheapest: $0.0133.\n- Spring's HashSet order: $0.0150")
    assert math == ["$0.0133.\n- Spring's HashSet order: $"]


def test_prose_shows_dollars_as_dollars():
    prose = Prose("- tool search: **$0.0133**\n- all tools: $0.0200, in `$HOME`")
    assert markdown_math(prose._repr_markdown_()) == []
    assert "`$HOME`" in prose._repr_markdown_()  # code spans untouched
    assert repr(prose) == prose.text  # the text form for logs is unchanged


def test_html_panels_are_never_typeset():
    table = Table(["run", "cost"], [["tool search", "$0.0133, against $0.0200 for all tools"]])
    assert html_math(table._repr_html_().replace(theme.NO_MATH, "x"))  # it would be, without the class
    assert html_math(table._repr_html_()) == []
    verdict = Verdict("11", "wrong", "✗ not quite, because it costs $0.0133, and the other $0.0200")
    assert html_math(verdict._repr_html_()) == []
