"""Notebook UIs for toolsearch-lab: each class owns its widgets and figures and displays as its ``.widget``.

The core package never imports this one; it needs the ``ui`` extra (ipywidgets, plotly).
"""

from .eviction_view import EvictionSimulator
from .index_explorer import IndexExplorer
from .stepper import IterationStepper
from .tokens_dashboard import TokenDashboard

__all__ = ["EvictionSimulator", "IndexExplorer", "IterationStepper", "TokenDashboard"]
