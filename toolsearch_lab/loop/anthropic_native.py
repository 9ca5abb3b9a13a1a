"""Anthropic's native tool search as a strategy that runs: ``anthropic-regex`` and ``anthropic-bm25``.

What Anthropic documents ("Tool search tool", platform.claude.com, read in its 2025 and 2026 versions), and
how the loop reproduces it:

* every searchable tool is sent with ``defer_loading: true`` and stays out of the prompt; at least one tool is
  not deferred. Here the ``tools`` array is the search tool alone, in every request, so the cached prefix
  never changes (as :class:`~toolsearch_lab.loop.strategies.InlineReferences`, which is its pattern);
* the search tool matches the tool name, description, argument names and argument descriptions. The regex
  variant takes "Python ``re.search()``" patterns of at most 200 characters, case-sensitive unless the pattern
  says ``(?i)`` ("searches are case-sensitive by default"): ``AnthropicRegexIndex``. The BM25 variant
  takes natural language; its scoring is not documented, so this is this project's BM25 over the same
  fields, identifiers split (``list_issues`` is "list issues"), no score threshold;
* a search "returns 3-5 most relevant tool_reference blocks": at most :data:`MAX_RESULTS` (5) here, whatever
  the model asks (Anthropic's tool takes only a query); no match is an empty list, not an error;
* each reference is expanded into the full definition in place, in the conversation, and stays usable for the
  rest of it: the search result carries the definitions (``tool_reference`` expansion in place);
* a bad or over-long pattern is an in-band error, not a failed request. The SDK's code is
  ``invalid_tool_input`` (the docs list ``invalid_pattern`` and ``pattern_too_long``): the error result names
  both. The indexes are in :mod:`toolsearch_lab.index.anthropic`.

A server-side search is one API call with an internal continuation; the loop makes it two requests (the
search, then the continuation), which is what the documented client-side path (your own search tool answering
with ``tool_reference`` blocks) costs. ``docs/compare.md`` says how that changes the bill.

The simulated agents write their words as a search query. A model reading Anthropic's regex tool writes a
pattern (``(?i)list.*pull.?request``); :class:`RegexQueries` gives the simulated agents that policy, by
writing their words as ``(?i)(word|word|...)``, so ``anthropic-regex`` can run offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, get_args

from toolsearch_lab.loop.strategy import RequestPlan, RequestView, Strategy, found_tools
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool
from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.wire import encode_inline_result

if TYPE_CHECKING:
    from toolsearch_lab.index.base import BaseToolIndex

__all__ = ["ANTHROPIC_VARIANTS", "MAX_RESULTS", "AnthropicNative", "RegexQueries", "pattern_of"]

AnthropicVariant = Literal["regex", "bm25"]
ANTHROPIC_VARIANTS: tuple[AnthropicVariant, ...] = get_args(AnthropicVariant)
MAX_RESULTS = 5  # "The API returns 3-5 most relevant tool_reference blocks"


def _suffix(variant: AnthropicVariant) -> str:
    if variant == "bm25":
        return (
            "\nMost tools are not loaded yet. To find one, call toolSearchTool with a natural-language query "
            f"for the capability you need; up to {MAX_RESULTS} matching tools are loaded into the "
            "conversation; call them directly."
        )
    from toolsearch_lab.index.anthropic import MAX_PATTERN_CHARS

    return (
        "\nMost tools are not loaded yet. To find one, call toolSearchTool with a Python regular expression "
        f"(at most {MAX_PATTERN_CHARS} characters) as the query; it is matched against tool names, "
        "descriptions and argument names and descriptions, case-sensitively unless it starts with (?i). "
        f"Up to {MAX_RESULTS} matching tools are loaded into the conversation; call them directly."
    )


class AnthropicNative(Strategy):
    """Anthropic's server-side tool search (``variant`` "regex" or "bm25"): the tools array never changes,
    searches return at most 5 tools, found definitions are expanded in place. Run it with its own index
    (:meth:`make_index`); ``compare`` and the strategy lab do."""

    def search_result(self, names: list[str], result: str, registered: Mapping[str, Tool]) -> str:
        return encode_inline_result(registered[n].definition() for n in names if n in registered)

    def plan(self, view: RequestView) -> RequestPlan:
        found = found_tools(view.conversation, view.registered, True, view.strict)
        return RequestPlan([], True, found, found)

    def __init__(self, variant: AnthropicVariant = "regex") -> None:
        if variant not in ANTHROPIC_VARIANTS:
            raise ValueError(
                f"AnthropicNative: variant must be one of {ANTHROPIC_VARIANTS}, got {variant!r:.40}"
            )
        self.variant = variant
        self.name = f"anthropic-{variant}"

    @property
    def index_label(self) -> str:
        return self.name

    def make_index(self) -> BaseToolIndex:
        from toolsearch_lab.index.anthropic import (
            anthropic_index,
        )  # the indexes load only when a run needs them

        return anthropic_index(self.variant, MAX_RESULTS)

    def system_suffix(self, default: str, registered: Mapping[str, Tool]) -> str:
        return _suffix(self.variant)

    def search_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        return {**args, "maxResults": MAX_RESULTS}  # the server decides how many; the model cannot ask

    def model_for(self, model: ChatModel) -> ChatModel:
        """``model`` as it meets this strategy: a simulated agent writes patterns for the regex variant."""
        from toolsearch_lab.models.simulated import SimulatedAgent

        if self.variant == "regex" and isinstance(model, SimulatedAgent):
            return RegexQueries(model)
        return model

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "variant": self.variant, "max_results": MAX_RESULTS}


class RegexQueries:
    """A simulated agent that writes its search words as the regular expression a model writes for a regex
    search tool: ``(?i)(word|word|...)``, the agent's words as written (escaped), any one of them a match,
    cut to the pattern limit by dropping trailing words. The agent reads its own earlier searches back as the
    words it wrote, so its rules (never send the same query twice for a step) hold."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = f"{inner.name}+regex-queries"
        self._words: dict[str, str] = {}  # pattern arguments -> the agent's own arguments

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        turn = self.inner.complete([self._as_written(m) for m in messages], tools)
        calls = [
            replace(c, arguments=self._as_pattern(c.arguments)) if c.name == TOOL_SEARCH_TOOL_NAME else c
            for c in turn.tool_calls
        ]
        return replace(turn, tool_calls=calls)

    def _as_pattern(self, arguments: str) -> str:
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
        query = str(args.get("query") or "") if isinstance(args, dict) else ""
        if not query.split():
            return arguments
        written = json.dumps({**args, "query": pattern_of(query)})
        self._words[written] = arguments
        return written

    def _as_written(self, message: dict[str, Any]) -> dict[str, Any]:
        calls = message.get("tool_calls")
        if message.get("role") != "assistant" or not calls:
            return message
        restored = []
        for call in calls:
            fn = call.get("function") or {}
            original = self._words.get(str(fn.get("arguments")))
            restored.append({**call, "function": {**fn, "arguments": original}} if original else call)
        return {**message, "tool_calls": restored}


def pattern_of(query: str) -> str:
    """The regular expression a model writes for a regex search tool from the words of ``query``:
    ``(?i)(word|word|...)``, each word as written (escaped), any one of them a match, cut to the pattern
    limit by dropping trailing words."""
    from toolsearch_lab.index.anthropic import MAX_PATTERN_CHARS

    words = query.split()
    while len(words) > 1 and len(_pattern(words)) > MAX_PATTERN_CHARS:
        words.pop()
    return _pattern(words)


def _pattern(words: list[str]) -> str:
    return "(?i)(" + "|".join(re.escape(w) for w in words) + ")"
