"""Where deferral does not save billed tokens, or fails: read off the tools as a request sends them (a tools
array or a request body, in Anthropic's Messages or OpenAI's Responses shape), since a loaded catalog keeps
no ``defer_loading`` flags.

- OpenAI: a function with ``defer_loading: true`` outside a namespace (provider fact
  ``openai-flat-billed``): the deferral saves nothing on the bill; namespaces do.
- Anthropic: ``defer_loading`` and ``cache_control`` on the same tool (``anthropic-defer-cache-control``):
  the request is refused.

Each finding cites its fact's rule and source (:mod:`toolsearch_lab.eval.provider_facts`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolsearch_lab.catalog.errors import CatalogError
from toolsearch_lab.catalog.formats import read_json_file
from toolsearch_lab.eval.doctor.report import Finding, plural
from toolsearch_lab.eval.provider_facts import BY_KEY, ProviderFact

__all__ = ["DEFERRAL_KINDS", "deferral_findings", "sent_document"]

DEFERRAL_KINDS = ("deferred-billed-in-full", "deferred-with-cache-control")


def sent_document(catalog: Any) -> Any | None:
    """The tools as sent, when ``catalog`` is them: parsed JSON, or the path of a JSON file (None for a
    shipped name, a directory, tools built in code, or a file that does not parse: the loader reports
    that)."""
    if isinstance(catalog, Mapping) or (
        isinstance(catalog, list) and any(isinstance(c, dict) for c in catalog)
    ):
        return catalog
    if isinstance(catalog, str | os.PathLike) and Path(catalog).is_file():
        try:
            return read_json_file(catalog)
        except CatalogError:
            return None
    return None


def deferral_findings(documents: Iterable[Any]) -> list[Finding]:
    """The deferral findings of each sent document (see the module docstring)."""
    flat: list[str] = []
    cached: list[str] = []
    for document in documents:
        for tool in _tools(document):
            deferred = tool.get("defer_loading") is True
            name = str(tool.get("name") or (tool.get("function") or {}).get("name") or "")
            if deferred and "cache_control" in tool:
                cached.append(name)
            elif deferred and tool.get("type") == "function":
                flat.append(name)
    out = []
    if flat:
        out.append(
            _finding(
                "warning",
                "deferred-billed-in-full",
                flat,
                BY_KEY["openai-flat-billed"],
                f"{plural(len(flat), 'function')} deferred outside a namespace ({', '.join(flat[:8])}"
                f"{', …' if len(flat) > 8 else ''}): on OpenAI, ",
                "put them in namespaces of fewer than 10 related functions (each with a description of what "
                "its functions do), or send them without defer_loading",
            )
        )
    for name in cached:
        out.append(
            _finding(
                "error",
                "deferred-with-cache-control",
                [name],
                BY_KEY["anthropic-defer-cache-control"],
                f"{name} has both defer_loading and cache_control: on Anthropic, ",
                "put the cache_control breakpoint on a tool that is not deferred (or on the system prompt)",
            )
        )
    return out


def _finding(severity: str, kind: str, tools: list[str], fact: ProviderFact, lead: str, fix: str) -> Finding:
    return Finding(
        severity,
        kind,
        tools[0],
        f"{lead}{fact.rule} ({fact.sources[0]})",
        fix,
        1.0 if severity == "error" else 0.5,
        tools,
        {"fact": fact.key, "sources": list(fact.sources)},
    )


def _tools(document: Any) -> list[Mapping[str, Any]]:
    """Every tool entry of a tools array or request body, a namespace's functions with their own flag."""
    tools = document.get("tools") if isinstance(document, Mapping) else document
    out: list[Mapping[str, Any]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "namespace":
            members = tool.get("tools")
            out += [
                {**m, "type": "namespaced"}
                for m in (members if isinstance(members, list) else [])
                if isinstance(m, Mapping)
            ]
        else:
            out.append(tool)
    return out
