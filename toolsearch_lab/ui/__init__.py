"""Notebook UIs for toolsearch-lab: each class owns its widgets and figures and displays as its ``.widget``.

The core package never imports this one; it needs the ``ui`` extra (ipywidgets, plotly).
"""

from toolsearch_lab.ui.eviction_view import EvictionSimulator
from toolsearch_lab.ui.index_explorer import IndexExplorer
from toolsearch_lab.ui.stepper import IterationStepper
from toolsearch_lab.ui.tokens_dashboard import TokenDashboard

__all__ = ["EvictionSimulator", "IndexExplorer", "IterationStepper", "TokenDashboard"]
