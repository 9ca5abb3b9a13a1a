"""Notebook UIs for toolsearch-lab: each class owns its widgets and figures and displays as its ``.widget``.

The front door for notebooks' widgets, exercises (``check``/``reveal``), the ``theme``, charts and the
strategy lab's helpers. The core package never imports this one. Names load their modules on first use, so
``import toolsearch_lab.ui`` does not import plotly or ipywidgets until a name needs them. The names are
listed once, in ``__init__.pyi`` beside this file (see :mod:`toolsearch_lab.lazy`).

ipywidgets, plotly and anywidget are default dependencies of toolsearch-lab; an environment that lacks them
(``pip install --no-deps``, a trimmed image) gets one error that says what to install instead of a bare
``ModuleNotFoundError`` from deep inside a widget module.
"""

from __future__ import annotations

import importlib.util

from toolsearch_lab.compat import defer_iri_grammar
from toolsearch_lab.lazy import attach_stub

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

# defer_iri_grammar runs before any widget module imports plotly (see toolsearch_lab.compat).
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__, globals(), before=defer_iri_grammar)
