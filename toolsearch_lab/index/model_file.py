"""Reading a model an index ships as plain JSON (the learned ranker, the abstention model): one place that
turns every way a file can be unreadable into the model's own error, naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, loads_checked

__all__ = ["read_model_json"]


def read_model_json(path: Path, where: str, error: type[ValueError], max_depth: int) -> Any:
    """The parsed JSON of ``path``, or ``error`` starting with ``where``: missing, not UTF-8, unreadable,
    not JSON, or nested deeper than ``max_depth``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (at byte offset {exc.start})") from None
    except OSError as exc:
        raise error(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        return loads_checked(text, where, max_depth)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON: {exc}") from None
    except JsonLimitError as exc:
        raise error(str(exc)) from None
