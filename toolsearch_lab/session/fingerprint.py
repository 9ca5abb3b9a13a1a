"""The catalog fingerprint Spring uses to decide whether a session must be re-indexed (spec §8)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from toolsearch_lab.model import Tool, ToolReference
from toolsearch_lab.text.java import java_order_key


def _name_desc(item: Tool | ToolReference | tuple[str, str]) -> tuple[str, str]:
    if isinstance(item, Tool):
        return item.name, item.description
    if isinstance(item, ToolReference):
        return item.tool_name, item.summary
    if isinstance(item, tuple) and len(item) == 2:
        return item[0], item[1]
    raise TypeError(f"fingerprint: expected Tool, ToolReference or (name, description), got {item!r:.80}")


def fingerprint(tools: Iterable[Tool | ToolReference | tuple[str, str]]) -> str:
    """SHA-256 over name, 0x00, description, 0x01 for each tool sorted by name; lower-case hex.

    Only names and descriptions count: a schema-only change keeps the fingerprint (Spring parity).
    Sorting uses UTF-16 code units like Java's ``String.compareTo`` so the hash is bit-exact with Spring
    even when names mix astral and high-BMP characters; ``sorted`` is stable like Java's sort.
    """
    pairs = [_name_desc(t) for t in tools]
    pairs.sort(key=lambda p: java_order_key(p[0]))
    digest = hashlib.sha256()
    for name, description in pairs:
        digest.update(name.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
        digest.update(description.encode("utf-8", "surrogatepass"))
        digest.update(b"\x01")
    return digest.hexdigest()
