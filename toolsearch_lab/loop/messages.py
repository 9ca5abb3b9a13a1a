"""The messages each model request carries, and the ones its no-search baseline would carry."""

from __future__ import annotations

from typing import Any

__all__ = ["api_messages", "baseline_messages", "with_suffix"]


def with_suffix(messages: list[dict[str, Any]], suffix: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``suffix`` appended to the system message (one is added when there is
    none); a strategy without the meta-tool passes "" and the messages go out unchanged."""
    out = [dict(m) for m in messages]
    if not suffix:
        return out
    for m in out:
        if m.get("role") == "system":
            m["content"] = (m.get("content") or "") + suffix
            return out
    return [{"role": "system", "content": suffix}] + out


def baseline_messages(
    conversation: list[dict[str, Any]], original: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The same conversation as a no-search request would carry: the original system message."""
    original_system = next((m for m in original if m.get("role") == "system"), None)
    out = []
    replaced = False
    for m in conversation:
        if m.get("role") == "system" and not replaced:
            replaced = True
            if original_system is not None:
                out.append(original_system)
            continue
        out.append(m)
    return out


def api_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as an OpenAI-compatible API receives them: our tool messages carry the tool's ``name`` for
    the loop's own bookkeeping, which is not sent, so it is not counted either."""
    return [{k: v for k, v in m.items() if k != "name"} if m.get("role") == "tool" else m for m in messages]
