"""Bounded JSON: depth and size checks for untrusted JSON text and Python values, and a safe ``dumps``.

Python's ``json`` recurses once per nesting level, so about 1,000 levels of ``[[[…]]]`` (2 KB of text) raise
``RecursionError`` from inside the parser, and ``json.dumps`` of a circular object raises ``ValueError``.
The loop and the catalog loader check first, with explicit limits, and turn a violation into an error that
names the input and the limit. Every check here is iterative, so none of them can hit the recursion limit
itself.

This module is a bottom layer: it imports nothing from the package.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "DuplicateKeyError",
    "JsonLimitError",
    "duplicate_key_path",
    "dumps_checked",
    "find_non_finite",
    "loads_checked",
    "loads_unique",
    "non_finite_as_null",
    "shown",
    "text_depth",
    "value_depth",
]

# A JSON string literal (atomic and possessive, so an unterminated one cannot make it backtrack).
_JSON_STRING = re.compile(r'"(?>[^"\\]++|\\.)*+"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


class JsonLimitError(ValueError):
    """JSON (text or value) is nested too deep, too large, circular or not representable as JSON.
    ``not_json``: the type name of the object that is not JSON data, when that is why (``strict``
    :func:`dumps_checked`), so callers need not read it out of the message."""

    def __init__(self, message: str, not_json: str | None = None) -> None:
        super().__init__(message)
        self.not_json = not_json


class _NotJsonData(TypeError):
    """An object ``json.dumps`` cannot write, met by a strict :func:`dumps_checked`: json's own message,
    and the object's type name beside it."""

    def __init__(self, value: Any) -> None:
        self.type_name = value.__class__.__name__
        super().__init__(f"Object of type {self.type_name} is not JSON serializable")


def _refuse(value: Any) -> Any:
    raise _NotJsonData(value)


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice. Python's parser keeps the last value silently; we refuse, since
    the first (hidden) value may be the one a person reviewed. ``path`` names the key (``mcpServers.git``)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def duplicate_key_path(text: str) -> str | None:
    """Where JSON ``text`` first names a key twice (``tools[0].description``), or None. The text must
    parse (``json.JSONDecodeError`` otherwise) and be bounded by the caller (see :func:`loads_checked`)."""
    repeated: dict[int, str] = {}
    keep: list[dict] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict:
        made: dict = {}
        for key, value in pairs:
            if key in made and id(made) not in repeated:
                repeated[id(made)] = key
            made[key] = value
        keep.append(made)
        return made

    document = json.loads(text, object_pairs_hook=hook)
    if not repeated:
        return None
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:  # the first in document order: depth first, children in order
        node, path = stack.pop()
        if isinstance(node, dict):
            if id(node) in repeated:
                key = repeated[id(node)]
                return f"{path}.{key}" if path else key
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return None


def loads_unique(text: str, what: str, max_depth: int, max_chars: int | None = None) -> Any:
    """:func:`loads_checked`, and a :class:`DuplicateKeyError` naming the key's path when an object names
    one key twice."""
    value = loads_checked(text, what, max_depth, max_chars)
    path = duplicate_key_path(text)
    if path is not None:
        raise DuplicateKeyError(
            f"{what} names {path.rsplit('.', 1)[-1]!r} twice (at {path}); JSON keeps only the last, so "
            "remove the one you do not mean",
            path,
        )
    return value


def text_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON ``text``, brackets inside strings not counted. Linear in
    the text; it does not parse it, so malformed text gets a number too."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def loads_checked(text: str, what: str, max_depth: int, max_chars: int | None = None) -> Any:
    """``json.loads(text)`` after checking size and depth. Raises :class:`JsonLimitError` naming ``what``
    and the limit, or ``json.JSONDecodeError`` for malformed text (callers report it with its position)."""
    if max_chars is not None and len(text) > max_chars:
        raise JsonLimitError(f"{what} is {len(text):,} characters long; the limit is {max_chars:,}")
    depth = text_depth(text)
    if depth > max_depth:
        raise JsonLimitError(f"{what} is nested {depth} levels deep; the limit is {max_depth}")
    return json.loads(text)


def value_depth(value: Any, max_depth: int) -> int:
    """The nesting depth of dicts/lists/tuples in ``value`` (a scalar is 0). Raises
    :class:`JsonLimitError` when it exceeds ``max_depth`` or ``value`` contains itself (a cycle). Shared
    sub-objects are measured once, so a value that repeats one list many times stays cheap."""
    heights: dict[int, int] = {}  # id -> height of an already finished container
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    keep_alive: list[Any] = []  # ids stay valid while we hold the objects
    while stack:
        node, leaving = stack.pop()
        if not isinstance(node, (dict, list, tuple)):
            continue
        key = id(node)
        if leaving:
            children = node.values() if isinstance(node, dict) else node
            heights[key] = 1 + max(
                (heights.get(id(c), 0) for c in children if isinstance(c, (dict, list, tuple))), default=0
            )
            on_path.discard(key)
            continue
        if key in heights:
            continue
        if key in on_path:
            raise JsonLimitError("it contains itself (a circular reference)")
        if len(on_path) >= max_depth:
            raise JsonLimitError(f"it is nested more than {max_depth} levels deep")
        on_path.add(key)
        keep_alive.append(node)
        stack.append((node, True))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, False) for c in children if isinstance(c, (dict, list, tuple)))
    return heights.get(id(value), 0)


def find_non_finite(value: Any, where: str, max_depth: int) -> str | None:
    """The path of the first NaN or ±Infinity in ``value`` (JSON has neither; ``json.dumps`` would write
    the invalid tokens ``NaN``/``Infinity``), or None. ``value`` must be acyclic (see :func:`value_depth`)."""
    value_depth(value, max_depth)
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return f"{path} is {node!r}, which is not a JSON number"
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}") for k, v in reversed(list(node.items())))
        elif isinstance(node, (list, tuple)):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return None


def non_finite_as_null(value: Any, max_depth: int) -> Any:
    """A copy of ``value`` (dicts, lists and tuples, as lists) with every NaN and ±Infinity replaced by
    ``None``, so it can be written as strict JSON; other leaves are kept as they are. ``value`` must be
    acyclic and at most ``max_depth`` deep (see :func:`value_depth`)."""
    value_depth(value, max_depth)

    def leaf(node: Any) -> Any:
        return None if isinstance(node, float) and not math.isfinite(node) else node

    def container(node: Any) -> Any:
        return {} if isinstance(node, dict) else []

    if not isinstance(value, (dict, list, tuple)):
        return leaf(value)
    root = container(value)
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in items:
            copied = container(child) if isinstance(child, (dict, list, tuple)) else leaf(child)
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
            if isinstance(child, (dict, list, tuple)):
                stack.append((child, copied))
    return root


def dumps_checked(value: Any, max_depth: int, *, strict: bool = False) -> str:
    """``value`` as strict JSON text (no NaN/Infinity; other objects through ``str``, or refused with
    ``strict=True``). Raises :class:`JsonLimitError` saying why it cannot be JSON: circular, too deep, a
    key that is not a string or number, an object that is not JSON data (``strict``), or a ``str()`` that
    fails."""
    value_depth(value, max_depth)
    try:
        return json.dumps(value, ensure_ascii=False, default=_refuse if strict else str, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        name = "TypeError" if isinstance(exc, _NotJsonData) else type(exc).__name__
        not_json = exc.type_name if isinstance(exc, _NotJsonData) else None
        raise JsonLimitError(f"it cannot be written as JSON ({name}: {exc})", not_json) from None


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages about untrusted input: an object
    whose ``repr`` raises (or is huge) must not turn the error about it into a different error."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  (any repr failure: describe the object by its type instead)
        return f"<{type(value).__name__} whose repr() failed>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
