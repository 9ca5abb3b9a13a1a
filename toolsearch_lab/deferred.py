"""Deferring a dependency's import-time work that our users never reach.

plotly's ``FigureWidget`` imports ``nbformat``, which imports ``jsonschema``, whose format checkers do
``from rfc3987_syntax import is_valid_syntax`` when that package is installed (Jupyter's server installs
it). ``rfc3987_syntax`` compiles an Earley grammar for IRIs at import: about 1.7 s of every kernel's first
plot, 2 s of a 5 s notebook start, for a check (``"format": "iri"``) that no notebook of ours asks for.

:func:`defer_iri_grammar` puts a stand-in module under that name whose ``is_valid_syntax`` (and any other
attribute) loads the real package on first use and hands over to it, so an IRI check still gives exactly
the real answer, only its grammar is compiled when one is first made.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

_NAME = "rfc3987_syntax"


def _real() -> types.ModuleType:
    stand_in = sys.modules.pop(_NAME, None)
    try:
        module = importlib.import_module(_NAME)
    except BaseException:
        if stand_in is not None:
            sys.modules[_NAME] = stand_in
        raise
    return module


class _Deferred(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system probes __path__ and friends: not a use
            raise AttributeError(name)
        return getattr(_real(), name)


def _is_valid_syntax(term: str, value: str) -> bool:
    return _real().is_valid_syntax(term, value)


def defer_iri_grammar() -> None:
    """Install the stand-in, unless the package is already imported or is not installed."""
    if _NAME in sys.modules or importlib.util.find_spec(_NAME) is None:
        return
    stand_in = _Deferred(_NAME, "rfc3987_syntax, loaded on first use (toolsearch_lab.deferred)")
    stand_in.is_valid_syntax = _is_valid_syntax  # type: ignore[attr-defined]
    sys.modules[_NAME] = stand_in
