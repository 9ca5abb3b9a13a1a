"""The text of a ``toolSearchTool`` result on the wire: search results and error results.

Both the loop (which writes and reads them) and the models (which read them, as a real model would) need
the same answer to "which tools did this search find?", so the encoding and the decoding live here, once.

- A search result is a JSON array of tool names, best match first (Spring's form), or of full OpenAI tool
  definitions (the inline-references strategy expands them inside the conversation).
- "No tool matches" is the empty array, :data:`NO_MATCH_RESULT` (Spring's own answer when its index finds
  nothing). An index that abstains (the hybrid, when it judges that no tool fits) answers the same way:
  a text message instead would break a client that parses every search result as an array of names, as
  Spring's advisor does. The meta-tool's description tells the model what the empty array means; the
  trace records the index's confidence and its reason.
- An error result is a JSON object ``{"error": message}``. It is never an array, so a reader cannot
  mistake it for search results.

This module is a bottom layer: it imports only the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "NO_MATCH_RESULT",
    "decode_search_items",
    "decode_search_result",
    "encode_inline_result",
    "encode_search_result",
    "error_message",
    "error_result",
    "is_error_result",
    "is_no_match",
]

NO_MATCH_RESULT = "[]"


def encode_search_result(names: Iterable[str]) -> str:
    """The result text for a search that found ``names`` (in rank order): a JSON array of names."""
    return json.dumps(list(names), ensure_ascii=False)


def is_no_match(content: Any) -> bool:
    """True when ``content`` (text or an already parsed value) is the answer "no tool matches": ``[]``."""
    return decode_search_result(content) == []


def encode_inline_result(definitions: Iterable[Mapping[str, Any]]) -> str:
    """The result text for a search whose found tools are expanded inline: a JSON array of definitions."""
    return json.dumps(list(definitions), ensure_ascii=False)


def error_result(message: str) -> str:
    """A model-readable error: a JSON object, never an array, so it is not mistaken for search results."""
    return json.dumps({"error": message}, ensure_ascii=False)


def _parsed(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return None


def is_error_result(content: Any) -> bool:
    """True when ``content`` (text or an already parsed value) is an error result."""
    value = _parsed(content)
    return isinstance(value, Mapping) and "error" in value


def error_message(content: Any) -> str | None:
    """The message of an error result, or None when ``content`` is not one."""
    value = _parsed(content)
    if isinstance(value, Mapping) and "error" in value:
        return str(value["error"])
    return None


def _item_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping) and isinstance(item.get("function"), Mapping):
        name = item["function"].get("name")
        if isinstance(name, str):
            return name
    return None


def decode_search_result(content: Any, *, strict: bool = False) -> list[str] | None:
    """The tool names in a search result (text or an already parsed value), in order; None when
    ``content`` is not a search result (an error result, other JSON, or not JSON at all). An array with
    one item that is neither a name nor a definition is not a search result either. ``strict`` raises
    ``ValueError`` instead of returning None, as Spring fails a request whose search result is not an array
    of names."""
    value = _parsed(content)
    names: list[str] = []
    for item in value if isinstance(value, list) else [None]:
        name = _item_name(item)
        if name is None:
            if strict:
                shown = str(content)[:200]
                raise ValueError(f"toolSearchTool result is not a JSON array of names: {shown!r}")
            return None
        names.append(name)
    return names


def decode_search_items(content: Any) -> list[str | dict]:
    """The items of a search result that a reader can use: names (``str``) and inline definitions (OpenAI
    tool dicts whose ``function.name`` is a string), skipping anything else; [] for an error result or
    anything that is not a JSON array."""
    value = _parsed(content)
    if not isinstance(value, list):
        return []
    return [item for item in value if _item_name(item) is not None]
