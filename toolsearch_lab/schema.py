"""Structural checks of a tool's JSON Schema: wrongly typed keywords, NaN/Infinity, nesting too deep, and
``$ref`` values that do not resolve or loop. Run when a catalog is loaded (any format), again when tools
are exported, and by the advisor on tools handed to it in code. Also :func:`resolve_local_refs`: the schema
with its local ``$ref`` s replaced by what they point at, which the token estimate counts."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, find_non_finite, shown

__all__ = [
    "MAX_CATALOG_DEPTH",
    "MAX_RESOLVED_NODES",
    "ResolvedSchema",
    "resolve_local_refs",
    "schema_problems",
    "validate_schema_refs",
]

# Keys whose values are data, not sub-schemas: a "$ref" inside them is a literal, not a reference.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "example"})
# Deepest nesting of arrays/objects accepted in a catalog file and in one tool record. Real tool schemas
# nest well under 20 levels; Python's JSON parser fails near 1,000 and every check here walks the record.
MAX_CATALOG_DEPTH = 100
# Schema keywords whose value is one sub-schema, a list of them, or a name -> sub-schema map.
_SUBSCHEMA = ("additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def _follow_pointer(root: Any, ref: str) -> tuple[Any, str | None]:
    """(the node a local ``$ref`` points at, None) or (None, why it does not resolve). A plain-name
    fragment (``#foo``, an ``$anchor``) resolves to ``None, None``: it exists, but is not followed."""
    fragment = urllib.parse.unquote(ref[1:])
    if fragment == "":
        return root, None
    if not fragment.startswith("/"):
        # A plain-name fragment ("#foo") points at an "$anchor" (or draft-07 "$id": "#foo") in the schema.
        return None, (None if _has_anchor(root, fragment) else f'no "$anchor": {fragment!r} in the schema')
    node = root
    walked = "#"
    for raw_token in fragment[1:].split("/"):
        token = raw_token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None, f"{walked} has no {token!r}"
        walked += "/" + raw_token
    return node, None


def _resolve_pointer(root: Any, ref: str) -> str | None:
    """None if the local ``$ref`` resolves inside ``root``, else why not."""
    return _follow_pointer(root, ref)[1]


def _ref_cycle(root: dict, start: dict) -> list[str] | None:
    """The refs of a ``$ref`` chain from ``start`` that comes back to a schema already on it (``"$ref":
    "#"`` on the root, or ``a -> b -> a``), else None. Such a schema has no content at all; recursion
    through a keyword (``"items": {"$ref": "#"}``) is fine and is not a cycle."""
    seen = [id(start)]
    chain: list[str] = []
    node: Any = start
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#"):
        chain.append(node["$ref"])
        node, _ = _follow_pointer(root, node["$ref"])
        if id(node) in seen:
            return chain
        seen.append(id(node))
    return None


def _schema_children(node: dict, path: str) -> list[tuple[Any, str]]:
    """The sub-schemas of one schema object, with their paths."""
    children: list[tuple[Any, str]] = []
    for key in _SUBSCHEMA:
        if isinstance(node.get(key), dict):
            children.append((node[key], f"{path}.{key}"))
    for key in ("items", *_SUBSCHEMA_LISTS):
        if isinstance(node.get(key), list):
            children += [(v, f"{path}.{key}[{i}]") for i, v in enumerate(node[key])]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            children += [(v, f"{path}.{key}.{name}") for name, v in node[key].items()]
    return children


def _keyword_problem(node: dict, path: str) -> str | None:
    """A wrongly typed keyword of one schema object (the ones providers and our token counter read)."""
    for key in _SUBSCHEMA_MAPS:
        value = node.get(key, {})
        if not isinstance(value, dict):
            kind = type(value).__name__
            return f"{path}.{key} must be an object of named schemas, got {kind} {shown(value, 40)}"
        for name, sub in value.items():
            if not isinstance(sub, (dict, bool)):
                kind = type(sub).__name__
                return f"{path}.{key}.{name} must be a schema object, got {kind} {shown(sub, 40)}"
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return f"{path}.required must be a list of property names, got {shown(required, 60)}"
    for key in _SUBSCHEMA_LISTS:
        if key in node and not isinstance(node[key], list):
            return f"{path}.{key} must be a list of schemas, got {type(node[key]).__name__}"
    return None


def schema_problems(schema: dict, where: str = "parameters") -> list[str]:
    """What is structurally wrong with a tool's JSON Schema, as messages naming the field: nesting deeper
    than :data:`MAX_CATALOG_DEPTH` or circular, NaN/Infinity (not JSON), ``properties``/``required`` (and
    the other sub-schema keywords) of the wrong type, and ``$ref`` chains that loop. Checked when a catalog
    is loaded and again when tools are exported; ``Tool(...)`` itself only checks ``"type": "object"``."""
    try:
        non_finite = find_non_finite(schema, where, MAX_CATALOG_DEPTH)
    except JsonLimitError as exc:
        return [f"{where}: {exc}"]
    problems = [non_finite] if non_finite else []
    stack: list[tuple[Any, str]] = [(schema, where)]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        problem = _keyword_problem(node, path)
        if problem:
            problems.append(problem)
            continue
        cycle = _ref_cycle(schema, node)
        if cycle:
            problems.append(
                f"{path}: $ref chain {' -> '.join(cycle)} loops back to itself (no schema to use)"
            )
        stack.extend(reversed(_schema_children(node, path)))
    return problems


def _has_anchor(node: Any, name: str) -> bool:
    if isinstance(node, dict):
        if node.get("$anchor") == name or node.get("$id") == "#" + name:
            return True
        return any(_has_anchor(v, name) for k, v in node.items() if k not in _DATA_KEYWORDS)
    if isinstance(node, list):
        return any(_has_anchor(v, name) for v in node)
    return False


def validate_schema_refs(schema: dict, where: str = "parameters") -> list[str]:
    """Every ``$ref`` in ``schema`` that does not resolve, as messages. Local refs (``#/...``, including
    ``$defs``/``definitions``) are resolved against the tool's own schema. Remote refs are reported too:
    providers do not fetch them, so the model would see a dangling name."""
    problems: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref.startswith("#"):
                    why = _resolve_pointer(schema, ref)
                    if why:
                        problems.append(f"{path}: $ref {ref!r} does not resolve ({why})")
                else:
                    problems.append(
                        f"{path}: $ref {ref!r} is not local; only '#/...' refs into the tool's own "
                        "schema can be resolved (inline it or move it under $defs)"
                    )
            for k, v in node.items():
                if k not in _DATA_KEYWORDS:
                    walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(schema, where)
    return problems


# Most schema objects one resolution may build: refs used many times inside refs used many times grow
# exponentially (each use site gets its own copy), so past this the rest stay unresolved ("truncated").
MAX_RESOLVED_NODES = 50_000


@dataclass
class ResolvedSchema:
    """A schema with its local ``$ref`` s resolved (:func:`resolve_local_refs`). ``refs``: how many use
    sites were replaced; ``recursive``: the refs that point back into themselves, each expanded once on a
    path and left as ``{"$ref": ...}`` (any) inside itself; ``unresolved``: refs that point nowhere or are
    not local; ``truncated``: :data:`MAX_RESOLVED_NODES` was reached."""

    schema: dict
    refs: int = 0
    recursive: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    truncated: bool = False


def resolve_local_refs(schema: dict) -> ResolvedSchema:
    """``schema`` with every local ``$ref`` (``#/$defs/X``, ``#/definitions/X``, any ``#/...`` pointer)
    replaced by its target, each use site by its own copy, and the root's ``$defs``/``definitions``
    dropped: the schema a renderer that dereferences shows the model. Keywords beside a ``$ref`` are kept
    over the target's (2020-12: they apply alongside). Data (``enum``, ``default``...) is copied as is.
    Bounded: a ref met again inside its own expansion is not expanded again (named in ``recursive``), and
    at most :data:`MAX_RESOLVED_NODES` objects are built."""
    out = ResolvedSchema({})
    nodes = 0

    def walk(node: Any, path: tuple[str, ...], depth: int) -> Any:
        nonlocal nodes
        if isinstance(node, list):
            return [walk(v, path, depth + 1) for v in node]
        if not isinstance(node, dict) or depth > MAX_CATALOG_DEPTH:
            return node if not isinstance(node, dict) else {}
        nodes += 1
        merged: dict = {}
        ref = node.get("$ref")
        target = _target(ref, path) if isinstance(ref, str) else None
        if target is not None:
            out.refs += 1
            merged.update(walk(target, (*path, str(ref)), depth + 1))
        for key, value in node.items():
            if key == "$ref" and target is not None:
                continue  # resolved: the target's keywords stand in for it
            if depth == 0 and key in ("$defs", "definitions"):
                continue
            merged[key] = value if key in _DATA_KEYWORDS else walk(value, path, depth + 1)
        return merged

    def _target(ref: str, path: tuple[str, ...]) -> dict | None:
        if not ref.startswith("#"):
            _note(out.unresolved, ref)
            return None
        if ref in path:
            _note(out.recursive, ref)
            return None
        if nodes >= MAX_RESOLVED_NODES:
            out.truncated = True
            return None
        target, why = _follow_pointer(schema, ref)
        if why is not None or not isinstance(target, dict):
            if why is not None:
                _note(out.unresolved, ref)
            return None
        return target

    out.schema = walk(schema, (), 0)
    return out


def _note(found: list[str], ref: str) -> None:
    if ref not in found:
        found.append(ref)
