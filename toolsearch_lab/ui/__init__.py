"""Notebook UIs for toolsearch-lab: each class owns its widgets and figures and displays as its ``.widget``.

The front door for notebooks' widgets, exercises (``check``/``reveal``), the ``theme``, charts and the
strategy lab's helpers. The core package never imports this one. Names load their modules on first use, so
``import toolsearch_lab.ui`` does not import plotly or ipywidgets until a name needs them; type checkers read
the ``TYPE_CHECKING`` block, which must list what ``_LAZY`` lists (tests/test_front_door.py checks it).

ipywidgets, plotly and anywidget are default dependencies of toolsearch-lab; an environment that lacks them
(``pip install --no-deps``, a trimmed image) gets one error that says what to install instead of a bare
``ModuleNotFoundError`` from deep inside a widget module.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from toolsearch_lab.deferred import defer_iri_grammar
from toolsearch_lab.lazy import lazy_exports

_WIDGET_PACKAGES = ("ipywidgets", "plotly", "anywidget")
# find_spec locates a package without importing it: the check costs no start-up time.
_missing = [name for name in _WIDGET_PACKAGES if importlib.util.find_spec(name) is None]
if _missing:
    raise ImportError(
        f"toolsearch_lab.ui needs {', '.join(_missing)}, which are missing from this environment. "
        "Install them with `pip install toolsearch-lab` (they are default dependencies) or "
        f"`pip install {' '.join(_missing)}`; for a full local JupyterLab add the extra: "
        "`pip install 'toolsearch-lab[lab]'`."
    )

if TYPE_CHECKING:
    from toolsearch_lab.ui import theme
    from toolsearch_lab.ui.catalog_view import CatalogView
    from toolsearch_lab.ui.charts import line_chart, rank_table
    from toolsearch_lab.ui.course import check, reveal
    from toolsearch_lab.ui.display import Html, Prose, Table
    from toolsearch_lab.ui.doctor import CatalogDoctor
    from toolsearch_lab.ui.eviction_view import (
        EvictionSimulator,
        index_builds,
        rebuilt_advisor_runs,
        rebuilt_advisor_table,
        session_events_table,
    )
    from toolsearch_lab.ui.index_explorer import IndexExplorer
    from toolsearch_lab.ui.retrieval_explorer import RetrievalExplorer, metrics_table, ranking_table
    from toolsearch_lab.ui.stepper import IterationStepper
    from toolsearch_lab.ui.stepper_demos import (
        SPRING_DESCRIBED_DEFAULT,
        config_side_by_side,
        max_results_cases,
        max_results_table,
        rejected_calls,
        remembering_runs,
        runs_table,
    )
    from toolsearch_lab.ui.strategy_lab import (
        StrategyLab,
        comparison_table,
        pareto_figure,
        pareto_spec,
        prefix_html,
        prefix_view,
        spring_order_run,
        table_html,
    )
    from toolsearch_lab.ui.tokens_dashboard import TokenDashboard
    from toolsearch_lab.ui.trace_viewer import TraceViewer, grade_table, usage_table
    from toolsearch_lab.ui.wording_view import (
        WordingBrowser,
        agents_table,
        best_index,
        ceiling_shares,
        ceiling_table,
        examples_table,
        glossary_runs,
        glossary_table,
        matrix_table,
        wording_table,
    )

# name -> module (relative to this package) that defines it; _MODULES are submodules exported as such.
_LAZY: dict[str, str] = {
    "CatalogDoctor": "doctor",
    "CatalogView": "catalog_view",
    "EvictionSimulator": "eviction_view",
    "IndexExplorer": "index_explorer",
    "IterationStepper": "stepper",
    "SPRING_DESCRIBED_DEFAULT": "stepper_demos",
    "config_side_by_side": "stepper_demos",
    "max_results_cases": "stepper_demos",
    "max_results_table": "stepper_demos",
    "rejected_calls": "stepper_demos",
    "remembering_runs": "stepper_demos",
    "runs_table": "stepper_demos",
    "RetrievalExplorer": "retrieval_explorer",
    "StrategyLab": "strategy_lab",
    "TokenDashboard": "tokens_dashboard",
    "TraceViewer": "trace_viewer",
    "check": "course",
    "reveal": "course",
    "line_chart": "charts",
    "rank_table": "charts",
    "Html": "display",
    "Prose": "display",
    "Table": "display",
    "metrics_table": "retrieval_explorer",
    "ranking_table": "retrieval_explorer",
    "grade_table": "trace_viewer",
    "usage_table": "trace_viewer",
    "pareto_spec": "strategy_lab",
    "prefix_html": "strategy_lab",
    "table_html": "strategy_lab",
    "comparison_table": "strategy_lab",
    "pareto_figure": "strategy_lab",
    "prefix_view": "strategy_lab",
    "spring_order_run": "strategy_lab",
    "index_builds": "eviction_view",
    "rebuilt_advisor_runs": "eviction_view",
    "rebuilt_advisor_table": "eviction_view",
    "session_events_table": "eviction_view",
    "WordingBrowser": "wording_view",
    "agents_table": "wording_view",
    "best_index": "wording_view",
    "ceiling_table": "wording_view",
    "ceiling_shares": "wording_view",
    "examples_table": "wording_view",
    "glossary_runs": "wording_view",
    "glossary_table": "wording_view",
    "matrix_table": "wording_view",
    "wording_table": "wording_view",
}
_MODULES = frozenset({"theme"})


# defer_iri_grammar runs before any widget module imports plotly (see toolsearch_lab.deferred).
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY, _MODULES, before=defer_iri_grammar)


__all__ = [
    "CatalogDoctor",
    "CatalogView",
    "EvictionSimulator",
    "IndexExplorer",
    "IterationStepper",
    "Html",
    "Prose",
    "RetrievalExplorer",
    "StrategyLab",
    "TokenDashboard",
    "Table",
    "TraceViewer",
    "check",
    "line_chart",
    "pareto_spec",
    "prefix_html",
    "reveal",
    "grade_table",
    "metrics_table",
    "rank_table",
    "ranking_table",
    "table_html",
    "comparison_table",
    "pareto_figure",
    "prefix_view",
    "spring_order_run",
    "SPRING_DESCRIBED_DEFAULT",
    "config_side_by_side",
    "max_results_cases",
    "max_results_table",
    "rejected_calls",
    "remembering_runs",
    "runs_table",
    "theme",
    "usage_table",
    "index_builds",
    "rebuilt_advisor_runs",
    "rebuilt_advisor_table",
    "session_events_table",
    "WordingBrowser",
    "agents_table",
    "best_index",
    "ceiling_table",
    "ceiling_shares",
    "examples_table",
    "glossary_runs",
    "glossary_table",
    "matrix_table",
    "wording_table",
]
