"""The deferred IRI grammar: importing the UI no longer compiles it, and an IRI check still gives the real
answer (it loads the real package on first use)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each test starts fresh interpreters that import the UI

pytest.importorskip("rfc3987_syntax")

CHECKS = ["http://example.com/ä", "not an iri", "urn:isbn:0451450523", "http://[::1", ""]
PROBE = f"""
import json, sys
{{setup}}
import jsonschema
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
before = "rfc3987_syntax.syntax_helpers" in sys.modules
answers = [checker.conforms(value, "iri") for value in {CHECKS!r}]
import rfc3987_syntax
print(json.dumps({{"compiled_at_import": before, "answers": answers,
                   "parse": bool(rfc3987_syntax.parse("iri", "http://x.org/"))}}))
"""


def _run(setup: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.replace("{setup}", setup)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def test_the_grammar_waits_for_the_first_iri_check_and_answers_as_the_real_one():
    real = _run("")
    deferred = _run("from toolsearch_lab.deferred import defer_iri_grammar; defer_iri_grammar()")
    assert real["compiled_at_import"] is True  # what the deferral saves
    assert deferred["compiled_at_import"] is False
    assert deferred["answers"] == real["answers"] and deferred["parse"] is True


def test_the_ui_front_door_defers_it_before_plotly_loads():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, toolsearch_lab.ui as ui; ui.IterationStepper; import plotly.graph_objects as go; "
            "go.FigureWidget(); print('rfc3987_syntax.syntax_helpers' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert out.stdout.strip() == "False"
