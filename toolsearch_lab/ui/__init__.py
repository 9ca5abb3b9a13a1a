"""Notebook UIs for toolsearch-lab: each class owns its widgets and figures and displays as its ``.widget``.

The core package never imports this one. ipywidgets, plotly and anywidget are default dependencies of
toolsearch-lab; an environment that lacks them (``pip install --no-deps``, a trimmed image) gets one error
that says what to install instead of a bare ``ModuleNotFoundError`` from deep inside a widget module.
"""

import importlib.util

_WIDGET_PACKAGES = ("ipywidgets", "plotly", "anywidget")
_missing = [name for name in _WIDGET_PACKAGES if importlib.util.find_spec(name) is None]
if _missing:
    raise ImportError(
        f"toolsearch_lab.ui needs {', '.join(_missing)}, which are missing from this environment. "
        "Install them with `pip install toolsearch-lab` (they are default dependencies) or "
        f"`pip install {' '.join(_missing)}`; for a full local JupyterLab add the extra: "
        "`pip install 'toolsearch-lab[lab]'`."
    )

# The imports follow the dependency check on purpose, hence E402.
from toolsearch_lab.ui.catalog_view import CatalogView  # noqa: E402
from toolsearch_lab.ui.doctor import CatalogDoctor  # noqa: E402
from toolsearch_lab.ui.eviction_view import EvictionSimulator  # noqa: E402
from toolsearch_lab.ui.index_explorer import IndexExplorer  # noqa: E402
from toolsearch_lab.ui.retrieval_explorer import RetrievalExplorer  # noqa: E402
from toolsearch_lab.ui.stepper import IterationStepper  # noqa: E402
from toolsearch_lab.ui.strategy_lab import StrategyLab  # noqa: E402
from toolsearch_lab.ui.tokens_dashboard import TokenDashboard  # noqa: E402
from toolsearch_lab.ui.trace_viewer import TraceViewer  # noqa: E402

__all__ = [
    "CatalogDoctor",
    "CatalogView",
    "EvictionSimulator",
    "IndexExplorer",
    "IterationStepper",
    "RetrievalExplorer",
    "StrategyLab",
    "TokenDashboard",
    "TraceViewer",
]
