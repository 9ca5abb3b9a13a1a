"""Exact, offline token counts: :mod:`.counter` (:class:`TokenCounter`: texts, tool definitions and the
estimated prompt tokens of a request) and :mod:`.encodings` (the tiktoken encodings, built from the rank
files shipped with the package, and which one an OpenAI model uses)."""

from toolsearch_lab.tokens.counter import (
    DEFAULT_FRAME,
    REPLY_PRIMING,
    TITLE_FRAME,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
    TOOL_FORMAT,
    CompletionTokens,
    DefinitionCost,
    TokenCounter,
    ToolFormatConstants,
)
from toolsearch_lab.tokens.encodings import DEFAULT_ENCODING, ENCODINGS, encoding_for_model, get_encoding

__all__ = [
    "DEFAULT_ENCODING",
    "DEFAULT_FRAME",
    "ENCODINGS",
    "REPLY_PRIMING",
    "TITLE_FRAME",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOOL_FORMAT",
    "CompletionTokens",
    "DefinitionCost",
    "TokenCounter",
    "ToolFormatConstants",
    "encoding_for_model",
    "get_encoding",
]
