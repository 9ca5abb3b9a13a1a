"""toolsearch-lab: explore and teach the tool search tool pattern (RAG over tools).

The front door: every public name a notebook or the README uses is importable from here (widgets and the
notebooks' exercises from ``toolsearch_lab.ui``). Each name loads its module on first use, so importing the
package (or starting the CLI) costs no scikit-learn, tiktoken, onnxruntime or plotly until a name needs them.
The names are listed once, in ``__init__.pyi`` beside this file: type checkers read it, and
:func:`toolsearch_lab.lazy.attach_stub` builds ``__all__`` and the lazy loading from it.
"""

from toolsearch_lab.lazy import attach_stub
from toolsearch_lab.version import __version__ as __version__

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__, globals())
