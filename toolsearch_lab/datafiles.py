"""Where the shipped data lives: ``data/`` in a source checkout, ``toolsearch_lab/_data`` in a wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir() -> Path:
    for candidate in (_PACKAGE / "_data", _PACKAGE.parent / "data"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"toolsearch-lab: shipped data not found in {_PACKAGE / '_data'} or {_PACKAGE.parent / 'data'}; "
        "reinstall the package"
    )


def data_path(*parts: str) -> Path:
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"toolsearch-lab: shipped data file {'/'.join(parts)} is missing ({path})")
    return path
