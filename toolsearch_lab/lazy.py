"""Names a package exports without importing their modules until first use (PEP 562), listed once.

Each front door (``toolsearch_lab`` and ``toolsearch_lab.ui``) has a stub beside it, ``__init__.pyi``, whose
relative imports are the one list of its public names (the layout of scientific Python's SPEC 1 and
``lazy_loader.attach_stub``): type checkers and IDEs read the stub as the package's interface, and
:func:`attach_stub` reads the same file to build the package's ``__getattr__``, ``__dir__`` and ``__all__``.
Importing the package then costs nothing; a name's module loads the first time the name is read, after
which the value is cached in the package's namespace so the hook is not called again.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def stub_exports(stub: str | Path) -> tuple[dict[str, str], frozenset[str]]:
    """``(name -> submodule, submodules exported as themselves)`` from a stub's relative imports: ``from
    .a.b import x as x`` exports ``x`` from ``a.b``; ``from . import m as m`` exports submodule ``m``. Any
    other statement but the docstring is refused, so the stub stays a plain list."""
    path = Path(stub)
    names: dict[str, str] = {}
    modules: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if not isinstance(node, ast.ImportFrom) or node.level != 1:
            raise ValueError(f"{path}:{node.lineno}: only relative imports (from .x import y as y) go here")
        for alias in node.names:
            if alias.asname != alias.name:
                raise ValueError(f"{path}:{node.lineno}: write '{alias.name} as {alias.name}' to export it")
            if node.module is None:
                modules.add(alias.name)
            else:
                names[alias.name] = node.module
    return names, frozenset(modules)


def attach_stub(
    package: str,
    init_file: str,
    namespace: dict[str, Any],
    before: Callable[[], None] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The package's ``(__getattr__, __dir__, __all__)`` from the ``__init__.pyi`` beside ``init_file``;
    ``before`` runs ahead of any load."""
    names, modules = stub_exports(Path(init_file).with_suffix(".pyi"))

    def __getattr__(name: str) -> Any:
        if before is not None:
            before()
        if name in modules:
            return importlib.import_module(f".{name}", package)  # the import binds it on the package
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names, *modules})

    exported = sorted(name for name in [*names, *modules] if not name.startswith("__"))
    return __getattr__, __dir__, exported
