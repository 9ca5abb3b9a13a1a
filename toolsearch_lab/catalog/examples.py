"""Example requests: tool descriptions that also say how users ask for the tool.

The "better descriptions" fix for wording. A description says what a tool does in the catalog's words
("Get information about a specific issue"); users ask in theirs ("pull up #42"). Toolshed (Lumer et al.,
arXiv:2410.14594) adds synthetic questions to each tool document; here they are written into the
description itself, after an ``Example requests:`` heading, so every index, every model and the token bill
see the same text: what the examples buy in search and choice, and what they cost in tokens, are measured
on one definition.

The shipped files ``data/examples/<tool set>.json`` give five requests per tool for each tool set the
scenarios use (a shipped catalog, or the tools of a scenario that carries its own). They were written
blind, from the tools' names, descriptions and parameters only (``data/examples/PROVENANCE.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from toolsearch_lab.datafiles import data_dir, data_path
from toolsearch_lab.model import Tool
from toolsearch_lab.text.tool_text import with_example_requests


def shipped_example_sets() -> list[str]:
    """The tool sets with shipped example requests (``github-mcp``, ``livemcpbench``, ``spring-demo``)."""
    folder = data_dir() / "examples"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def load_example_requests(source: str | Path) -> dict[str, tuple[str, ...]]:
    """The example requests of a shipped tool set (by name) or of a JSON file (by path): an object mapping
    each tool name to a non-empty list of requests."""
    path = Path(source)
    if not path.is_file():
        if str(source) not in shipped_example_sets():
            raise ValueError(
                f"no example requests for {str(source)!r}: shipped tool sets are {shipped_example_sets()}, "
                "or give the path of a JSON file"
            )
        path = data_path("examples", f"{source}.json")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"example requests {path}: not valid UTF-8 JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ValueError(
            f"example requests {path}: expected an object {{tool name: [requests]}}, got {type(raw).__name__}"
        )
    out = {}
    for name, requests in raw.items():
        if (
            not isinstance(requests, list)
            or not requests
            or not all(isinstance(r, str) and r.strip() for r in requests)
        ):
            raise ValueError(
                f"example requests {path}: tool {name!r} must map to a non-empty list of non-blank strings, "
                f"got {requests!r:.120}"
            )
        out[name] = tuple(" ".join(r.split()) for r in requests)
    return out


def with_examples(
    tools: Iterable[Tool], examples: Mapping[str, Sequence[str]], where: str = "example requests"
) -> list[Tool]:
    """``tools`` with each one's example requests written after its description; a tool without examples
    is kept as it is. An example for a tool that is not in ``tools`` is an error (a misspelt name would
    otherwise drop its examples without a word)."""
    tools = list(tools)
    unknown = sorted(set(examples) - {t.name for t in tools})
    if unknown:
        raise ValueError(f"{where}: {len(unknown)} name(s) are not tools of this set: {unknown[:10]}")
    return [
        replace(t, description=with_example_requests(t.description, examples[t.name]))
        if t.name in examples
        else t
        for t in tools
    ]
