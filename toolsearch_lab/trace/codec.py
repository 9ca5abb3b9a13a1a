"""A trace as JSON and back: strict JSON text out, and the dataclass tree rebuilt from a parsed document, from
the field types themselves, so a field added to a record is read back with no table to keep in step. Traces
of earlier versions are brought to the current shape first (:func:`upgrade`): a saved trace is its owner's
data, and loads for as long as its version is known.
"""

from __future__ import annotations

import json
import types
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any, Union, get_args, get_origin, get_type_hints

from toolsearch_lab.jsonlimits import non_finite_as_null
from toolsearch_lab.trace.turns import StopReason

__all__ = ["MAX_TRACE_DEPTH", "TRACE_VERSION", "decode", "dumps", "upgrade"]

# 2: Iteration.number (1-based) replaces index; Iteration.retries. 3: turns (RunTrace.turns, Iteration.turn,
# StepOutcome.turn, SessionEvent.turn). 4: Iteration.deferred. 5: RunTrace.source and RunTrace.replay (a
# replay's settings, which were keys of config), ToolCallRecord.failure, a closed set of stop reasons.
TRACE_VERSION = 5
# A trace nests about 6 levels (trace, iterations, tool calls, tokens, api usage); deeper text is not ours.
MAX_TRACE_DEPTH = 64
# The keys a version-4 replay kept in config and the ReplaySettings field each became (None: see its note).
_V4_REPLAY_KEYS = {
    "format": "format",
    "endpoint": "endpoint",
    "exchanges": "exchanges",
    "served_model": "served_model",
    "counts_definitions": "counts_definitions",
    "user_prompts": "user_prompts",
    "file": "file",
    "sha256": "sha256",
    "provenance": "provenance",
    "source": None,  # now RunTrace.source
    "search_tools": None,  # now SearchTool records, with how each searched
    "our_count": None,  # now ReplaySettings.our_count, from the format and counts_definitions
}
_ANTHROPIC_SERVER_SEARCH = {"tool_search_tool_regex": "regex", "tool_search_tool_bm25": "bm25"}


def dumps(data: dict[str, Any], indent: int | None) -> str:
    """``data`` (a trace's dict) as strict JSON text: a float that is not finite is written as ``null``
    (``NaN`` and ``Infinity`` are not JSON), and text that cannot be written as UTF-8 (a lone surrogate a
    model sent) makes the whole text ASCII-escaped, so it still round-trips."""
    try:
        text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere
        data = non_finite_as_null(data, MAX_TRACE_DEPTH)
        text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False)
    return text


def decode(cls: type, data: Any, where: str) -> Any:
    """An instance of dataclass ``cls`` from a parsed JSON object: nested records (a field typed as a
    dataclass, a list of them, or either or None) are rebuilt the same way; a field the class does not have,
    or a missing one, is a ``ValueError`` naming the place. The classes' own checks (``__post_init__``) judge
    the values."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object for {cls.__name__}, got {type(data).__name__}")
    nested = _nested(cls)
    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)} for {cls.__name__}")
    kwargs = {}
    for name, value in data.items():
        if name not in nested or (value is None and nested[name][2]):
            kwargs[name] = value
            continue
        sub, many, _ = nested[name]
        if not many:
            kwargs[name] = decode(sub, value, f"{where}.{name}")
        elif isinstance(value, list):
            kwargs[name] = [decode(sub, v, f"{where}.{name}[{i}]") for i, v in enumerate(value)]
        else:
            raise ValueError(f"{where}.{name}: expected a list of {sub.__name__}, got {type(value).__name__}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None


@cache
def _nested(cls: type) -> dict[str, tuple[type, bool, bool]]:
    """``cls``'s fields that hold records: name -> (the record's class, a list of them, may be null)."""
    out = {}
    for name, hint in get_type_hints(cls).items():
        optional = get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)
        if optional:
            hint = next(a for a in get_args(hint) if a is not type(None))
        many = get_origin(hint) is list
        inner = get_args(hint)[0] if many else hint
        if isinstance(inner, type) and is_dataclass(inner):
            out[name] = (inner, many, optional)
    return out


def upgrade(data: Any) -> Any:
    """A trace document of an earlier version in the current shape (other input is left as it is).
    Version 1: a 0-based ``Iteration.index`` becomes ``number``. Versions 1-4: a replay's settings leave
    ``config`` for ``source`` and ``replay`` (:func:`_replay_of`), and a stop reason outside
    :data:`StopReason` (a replayed provider's own word) becomes "unknown", the word kept in ``errors``.
    What later versions added and older traces lack takes its default (no turns, no deferred tools)."""
    if not isinstance(data, dict) or not isinstance(data.get("version", 1), int):
        return data
    version = data.get("version", 1)
    if version >= TRACE_VERSION:
        return data
    data = dict(data)
    if version == 1 and isinstance(data.get("iterations"), list):
        data["iterations"] = [_numbered(it) for it in data["iterations"]]
    config = data.get("config")
    if isinstance(config, dict) and config.get("source") == "replay":
        data["config"] = {k: v for k, v in config.items() if k not in _V4_REPLAY_KEYS}
        data["source"], data["replay"] = "replay", _replay_of(config, data)
    stop = data.get("stop_reason")
    if isinstance(stop, str) and stop not in get_args(StopReason):
        data["stop_reason"] = "unknown"
        note = f"the run's stop reason was {stop[:60]!r} (trace version {version})"
        errors = data.get("errors", [])
        if isinstance(errors, list):
            data["errors"] = [*errors, note]
    data["version"] = TRACE_VERSION
    return data


def _numbered(it: Any) -> Any:
    if isinstance(it, dict) and "index" in it and "number" not in it and isinstance(it["index"], int):
        return {**{k: v for k, v in it.items() if k != "index"}, "number": it["index"] + 1}
    return it


def _replay_of(config: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The ``replay`` field of a version-4 replay, from its config. How each search tool searched was not
    recorded; it is what the version-4 reader knew: OpenAI's from the index name it wrote ("(client)" or
    "(hosted)"), Claude Code's ToolSearch a client search, Anthropic's the server tools by the names the
    API gives them and every other a client search. The deferred tools are those the requests sent
    deferred; namespaces were not recorded."""
    settings = {new: config[old] for old, new in _V4_REPLAY_KEYS.items() if new and old in config}
    fmt, index = config.get("format"), str(data.get("index", ""))
    listed = config.get("search_tools")
    names: list[Any] = listed if isinstance(listed, list) else []
    if fmt == "openai-responses":
        variants = ["client" if index.endswith("(client)") else "hosted"] * len(names)
    elif fmt == "claude-code-session":
        variants = ["client"] * len(names)
    else:
        variants = [_ANTHROPIC_SERVER_SEARCH.get(str(n), "client") for n in names]
    settings["search_tools"] = [{"name": n, "variant": v} for n, v in zip(names, variants, strict=True)]
    iterations = data.get("iterations")
    deferred = [
        n for it in (iterations if isinstance(iterations, list) else []) for n in _field(it, "deferred")
    ]
    settings["deferred_tools"] = list(dict.fromkeys(deferred))
    return settings


def _field(record: Any, name: str) -> list[Any]:
    value = record.get(name) if isinstance(record, dict) else None
    return value if isinstance(value, list) else []
