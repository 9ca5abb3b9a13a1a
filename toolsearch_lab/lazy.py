"""Names a package exports without importing their modules until first use (PEP 562).

Both front doors (``toolsearch_lab`` and ``toolsearch_lab.ui``) list ``name -> submodule``; importing the
package then costs nothing, and a name's module loads the first time the name is read, after which the
value is cached in the package's namespace so the hook is not called again.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping
from typing import Any


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    names: Mapping[str, str],
    modules: Collection[str] = (),
    before: Callable[[], None] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``(__getattr__, __dir__)``: ``names`` maps an exported name to its submodule (relative
    to ``package``), ``modules`` are submodules exported as themselves, ``before`` runs ahead of any load."""

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

    return __getattr__, __dir__
