"""The indexes Anthropic's server-side tool search is reproduced with (the ``anthropic-regex`` and
``anthropic-bm25`` strategies, :mod:`toolsearch_lab.loop.anthropic_native`).

Anthropic documents ("Tool search tool", platform.claude.com): both variants match the tool name,
description, argument names and argument descriptions; the regex variant takes "Python ``re.search()``"
patterns of at most 200 characters, case-sensitive unless the pattern says ``(?i)``; the BM25 variant takes
natural language (its scoring is not documented); a search returns "3-5 most relevant" tools. Bad patterns
come back as an error whose SDK code is ``invalid_tool_input`` (the docs name ``invalid_pattern`` and
``pattern_too_long``).
"""

from __future__ import annotations

from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import MAX_PATTERN_LENGTH, PatternError, PatternProblem, RegexToolIndex
from toolsearch_lab.model import SearchResponse

__all__ = ["MAX_PATTERN_CHARS", "AnthropicRegexIndex", "anthropic_index"]

MAX_PATTERN_CHARS = MAX_PATTERN_LENGTH  # "Maximum query length: 200 characters", the pattern mode's own limit


class AnthropicRegexIndex(RegexToolIndex):
    """Pattern mode as Anthropic's regex search: case-sensitive unless ``(?i)``, at most 200 characters, at
    most ``max_results`` results (the strategy's cap), problems reported with Anthropic's error code."""

    def __init__(self, max_results: int) -> None:
        super().__init__("pattern", case_sensitive=True, default_max_results=max_results)

    def _search(self, request: KeyedRequest, limit: int) -> SearchResponse:
        try:
            return super()._search(request, min(limit, self.default_max_results))
        except PatternError as exc:
            code = "pattern_too_long" if exc.kind is PatternProblem.TOO_LONG else "invalid_pattern"
            problem = f"invalid_tool_input ({code}): {exc.problem}"
            raise PatternError(exc.pattern, problem, exc.kind) from None


def anthropic_index(variant: str, max_results: int) -> BaseToolIndex:
    """The index Anthropic's server-side search of ``variant`` ("regex" or "bm25") is reproduced with."""
    if variant == "regex":
        return AnthropicRegexIndex(max_results)
    if variant == "bm25":
        return BM25ToolIndex(
            min_score_threshold=0.0,
            split_identifiers=True,
            include_parameters=True,
            default_max_results=max_results,
        )
    raise ValueError(f"anthropic_index: variant must be 'regex' or 'bm25', got {variant!r:.40}")
