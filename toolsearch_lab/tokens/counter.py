"""Exact, offline token counts for chat-completions requests, with and without tool search.

Two layers, kept apart on purpose:

* **Exact**: the token count of any text (``TokenCounter.count``) and of the compact JSON of a ``tools``
  array (``count_json``, "what you send"). These come from tiktoken with OpenAI's own BPE rank files, shipped
  gzipped in ``resources/tiktoken`` and verified by sha256, so nothing is ever downloaded.
* **Estimated**: what a request costs in *prompt* tokens (``count_request``). OpenAI does not send your JSON
  to the model: it re-renders messages with hidden framing tokens and tool definitions in a hidden compact
  format. We follow the OpenAI cookbook "How to count tokens with tiktoken"
  (https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb),
  sections 6 (``num_tokens_from_messages``) and 7 (``num_tokens_for_tools``). The cookbook's own checks
  against the API: 124 (gpt-4o) / 129 (gpt-4) prompt tokens for its messages example, 101 (gpt-4o) / 105
  (gpt-4) for its weather-tool example; ``tests/test_tokens.py`` reproduces all four. Beyond those flat
  examples (nested objects, arrays, ``anyOf``, non-string enums, tool calls and tool results in the history)
  the numbers are our extension of the recipe: local ``$ref`` s are resolved first (each use site counts
  what it points at; ``$defs`` nobody uses count nothing) and each property's ``title`` and ``default`` are
  counted, as OpenAI's reference renderer of its tool format (``openai-harmony``) writes them.
  ``tests/test_token_estimate.py`` checks the estimate against that renderer on real servers' schemas
  (within 10 %; figures in docs/tokens.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from toolsearch_lab.model import Tool
from toolsearch_lab.schema import resolve_local_refs
from toolsearch_lab.tokens.encodings import DEFAULT_ENCODING, encoding_for_model, get_encoding, pre_tokenizer
from toolsearch_lab.tokens.long_text import count_text
from toolsearch_lab.trace import RequestTokens


@dataclass(frozen=True)
class ToolFormatConstants:
    """Hidden tokens OpenAI adds around tool definitions, from the cookbook's ``num_tokens_for_tools``.
    ``func_end`` is added once per request that has any tools, the others per function/property/enum."""

    func_init: int
    prop_init: int
    prop_key: int
    enum_init: int
    enum_item: int
    func_end: int


# Cookbook section 7: gpt-4o/gpt-4o-mini (o200k) use func_init=7; gpt-3.5-turbo/gpt-4 (cl100k) use 10.
TOOL_FORMAT: dict[str, ToolFormatConstants] = {
    "o200k_base": ToolFormatConstants(7, 3, 3, -3, 3, 12),
    "cl100k_base": ToolFormatConstants(10, 3, 3, -3, 3, 12),
}

# Cookbook section 6: every message is wrapped as <|start|>{role/name}\n{content}<|end|>\n (3 tokens), a name
# costs 1 more, and every reply is primed with <|start|>assistant<|message|> (3 tokens).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3

_SYSTEM_ROLES = ("system", "developer")
# A text this long is counted once per counter: a replayed run sends its history again with every request.
REMEMBERED_TEXT_CHARS = 2_000
_MAX_REMEMBERED_TEXTS = 65_536
_MAX_SCHEMA_DEPTH = 32  # plain JSON cannot be cyclic; this only bounds absurd nesting
# What OpenAI's reference renderer (openai-harmony) writes around a property's title ("// Title" on a line
# of its own) and default (" // default: 5000") beyond the tokens of the text itself.
TITLE_FRAME = 2
DEFAULT_FRAME = 2


@dataclass(frozen=True)
class DefinitionCost:
    """What one tool definition costs (:meth:`TokenCounter.definition_cost`): ``estimate`` is the
    estimated prompt tokens (:meth:`TokenCounter.tool_tokens`), ``json`` the exact tokens of its compact
    JSON as sent (``$defs`` included). ``refs``: local ``$ref`` use sites resolved for the estimate;
    ``recursive``: refs that point back into themselves, counted once; ``unresolved``: refs counted as
    ``any``; ``truncated``: resolution stopped at its bound (the estimate is then a lower bound)."""

    name: str
    estimate: int
    json: int
    refs: int = 0
    recursive: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    truncated: bool = False


@dataclass(frozen=True)
class CompletionTokens:
    """Tokens the model generated: the text content and the function names + arguments of its tool calls.
    A lower bound of ``usage.completion_tokens``: hidden tool-call framing and reasoning tokens are not
    seen."""

    content: int
    tool_calls: int
    total: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def _as_plain(obj: Any) -> Any:
    """Accept SDK objects (pydantic models from the openai package) wherever a dict is expected."""
    dump = getattr(obj, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else obj


def _tool_definition(tool: Any) -> dict:
    if isinstance(tool, Tool):
        return tool.definition()
    tool = _as_plain(tool)
    if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
        return dict(tool)
    raise TypeError(
        "expected a Tool or an OpenAI tools entry {'type': 'function', 'function': {...}}, "
        f"got {type(tool).__name__}: {tool!r:.80}"
    )


def _strip_one_period(text: str) -> str:
    # The cookbook drops one trailing period from descriptions; OpenAI's renderer apparently does too.
    return text.removesuffix(".")


class TokenCounter:
    """Counts tokens with one encoding (``o200k_base`` by default, ``cl100k_base`` available).

    Special-token text such as ``<|endoftext|>`` inside a description is counted as ordinary text, as the API
    does for user-supplied strings.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self.encoding_name = encoding
        self.encoding = get_encoding(encoding)
        self.tool_format = TOOL_FORMAT[encoding]
        # A run counts the same Tool objects in every request: id -> (tool, tokens), checked by identity so
        # a reused id never answers for another object. Tools are frozen dataclasses.
        self._tool_cache: dict[int, tuple[Tool, int]] = {}
        self._pattern = pre_tokenizer(encoding)
        self._text_cache: dict[str, int] = {}  # long texts -> their count (REMEMBERED_TEXT_CHARS)

    @classmethod
    def for_model(cls, model_name: str) -> TokenCounter:
        return cls(encoding_for_model(model_name))

    def __repr__(self) -> str:
        return f"TokenCounter({self.encoding_name!r})"

    # -- exact ---------------------------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return self.encoding.encode_ordinary(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return self.encoding.decode(list(tokens))

    def count(self, text: str) -> int:
        """Exact number of tokens of ``text``, whatever its length, in time linear in it
        (:mod:`toolsearch_lab.tokens.long_text`)."""
        if len(text) < REMEMBERED_TEXT_CHARS:
            return len(self.encoding.encode_ordinary(text)) if text else 0
        known = self._text_cache.get(text)
        if known is None:
            known = count_text(self.encoding, self._pattern, text)
            if len(self._text_cache) >= _MAX_REMEMBERED_TEXTS:
                self._text_cache.clear()
            self._text_cache[text] = known
        return known

    def count_json(self, obj: Any) -> int:
        """Exact tokens of ``obj`` as compact JSON (``Tool`` objects become their OpenAI definitions).

        For a ``tools`` array this is "what you send": a fully exact, model-independent size measure. The
        model sees a re-rendered, usually smaller form; ``count_request`` estimates that. Non-ASCII text is
        kept as is (``ensure_ascii=False``) because ``\\uXXXX`` escapes would inflate the count several-fold.
        """
        if isinstance(obj, Tool):
            obj = obj.definition()
        elif isinstance(obj, (list, tuple)):
            obj = [t.definition() if isinstance(t, Tool) else t for t in obj]
        return self.count(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))

    # -- estimated: tool definitions -------------------------------------------------------------------------
    def tool_tokens(self, tool: Tool | Mapping) -> int:
        """Estimated prompt tokens one tool definition adds to a request that already has tools.

        The cookbook recipe: ``func_init`` + tokens of ``"name:description"``; if there are properties,
        ``prop_init`` and per property ``prop_key`` + tokens of ``"key:type:description"`` (+ ``enum_init``
        and per enum value ``enum_item`` + its tokens). The recipe only knows flat schemas; our extension
        resolves local ``$ref`` s first (:func:`~toolsearch_lab.schema.resolve_local_refs`), applies the
        same per-property rule recursively to nested object properties, array ``items`` and
        ``anyOf``/``oneOf``/``allOf`` branches, renders a list ``type`` as ``"a | b"`` and a missing one as
        ``"any"``, and counts a property's ``title`` and ``default`` (+ :data:`TITLE_FRAME` /
        :data:`DEFAULT_FRAME`). Other keywords (``minimum``, ``pattern``, ``additionalProperties``...) are
        not counted, as in the recipe.
        """
        if isinstance(tool, Tool):
            cached = self._tool_cache.get(id(tool))
            if cached is not None and cached[0] is tool:
                return cached[1]
            n = self._definition_tokens(_tool_definition(tool)["function"])
            self._tool_cache[id(tool)] = (tool, n)
            return n
        return self._definition_tokens(_tool_definition(tool)["function"])

    def definition_cost(self, tool: Tool | Mapping) -> DefinitionCost:
        """The estimate and the exact JSON size of one tool, and what resolving its ``$ref`` s found."""
        fn = _tool_definition(tool)["function"]
        parameters = fn.get("parameters")
        resolved = resolve_local_refs(dict(parameters)) if isinstance(parameters, Mapping) else None
        return DefinitionCost(
            str(fn.get("name", "")),
            self.tool_tokens(tool),
            self.count_json(tool if isinstance(tool, Tool) else dict(_as_plain(tool))),
            resolved.refs if resolved else 0,
            tuple(resolved.recursive) if resolved else (),
            tuple(resolved.unresolved) if resolved else (),
            resolved.truncated if resolved else False,
        )

    def _definition_tokens(self, fn: Mapping) -> int:
        fmt = self.tool_format
        description = fn.get("description") or ""
        n = fmt.func_init + self.count(f"{fn.get('name', '')}:{_strip_one_period(str(description))}")
        parameters = fn.get("parameters")
        if isinstance(parameters, Mapping):
            schema = resolve_local_refs(dict(parameters)).schema
            n += self._properties_tokens(schema.get("properties"), 0)
        return n

    def _properties_tokens(self, properties: Any, depth: int) -> int:
        if not isinstance(properties, Mapping) or not properties or depth > _MAX_SCHEMA_DEPTH:
            return 0
        fmt = self.tool_format
        n = fmt.prop_init
        for key, schema in properties.items():
            schema = schema if isinstance(schema, Mapping) else {}
            n += fmt.prop_key
            n += self._enum_tokens(schema.get("enum"))
            description = _strip_one_period(str(schema.get("description") or ""))
            n += self.count(f"{key}:{_type_label(schema)}:{description}")
            if isinstance(schema.get("title"), str) and schema["title"]:
                n += TITLE_FRAME + self.count(schema["title"])
            if "default" in schema:
                n += DEFAULT_FRAME + self.count(_value_text(schema["default"]))
            n += self._nested_tokens(schema, depth + 1)
        return n

    def _nested_tokens(self, schema: Mapping, depth: int) -> int:
        """Sub-schemas of a property (our extension of the recipe, see ``tool_tokens``)."""
        if depth > _MAX_SCHEMA_DEPTH:
            return 0
        n = self._properties_tokens(schema.get("properties"), depth)
        items = schema.get("items")
        if isinstance(items, Mapping):
            n += self._enum_tokens(items.get("enum"))
            n += self._nested_tokens(items, depth + 1)
        for keyword in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(keyword) or ():
                if isinstance(branch, Mapping):
                    n += self._enum_tokens(branch.get("enum"))
                    n += self._nested_tokens(branch, depth + 1)
        return n

    def _enum_tokens(self, values: Any) -> int:
        if not isinstance(values, list) or not values:
            return 0
        fmt = self.tool_format
        n = fmt.enum_init
        for value in values:
            n += fmt.enum_item + self.count(_value_text(value))
        return n

    def tools_tokens(self, tools: Iterable[Tool | Mapping]) -> int:
        """Estimated prompt tokens of a whole ``tools`` array: per-tool costs + ``func_end`` once (0 if
        empty)."""
        costs = [self.tool_tokens(t) for t in tools]
        return sum(costs) + self.tool_format.func_end if costs else 0

    def catalog_tokens(self, tools: Iterable[Tool | Mapping]) -> tuple[list[tuple[str, int]], int]:
        """Per-tool estimated costs, most expensive first, and the total for sending them all.

        The total is ``tools_tokens``: the sum of the rows plus ``func_end`` (12) once for the tools block.
        """
        rows = []
        for tool in tools:
            rows.append((str(_tool_definition(tool)["function"].get("name", "")), self.tool_tokens(tool)))
        rows.sort(key=lambda row: (-row[1], row[0]))
        total = sum(cost for _, cost in rows) + (self.tool_format.func_end if rows else 0)
        return rows, total

    # -- estimated: whole requests ---------------------------------------------------------------------------
    def _content_tokens(self, content: Any) -> int:
        if content is None:
            return 0
        if isinstance(content, str):
            return self.count(content)
        if isinstance(content, list):  # content parts; only text has a tiktoken count
            n = 0
            for part in content:
                part = _as_plain(part)
                if isinstance(part, str):
                    n += self.count(part)
                elif isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
                    n += self.count(str(part.get("text", "")))
                elif isinstance(part, Mapping) and part.get("type") == "refusal":
                    n += self.count(str(part.get("refusal", "")))
                else:
                    kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
                    raise ValueError(f"cannot count tokens of a {kind!r} content part (only text parts)")
            return n
        raise ValueError(
            f"message content must be a string, a list of parts or None, got {type(content).__name__}"
        )

    def _tool_calls_tokens(self, tool_calls: Any) -> int:
        n = 0
        for call in tool_calls or ():
            call = _as_plain(call)
            fn = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(fn, Mapping):
                # ValueError, not TypeError: a malformed message is bad input data, and the CLI says so
                raise ValueError(f"tool call without a 'function' object: {call!r:.80}")  # noqa: TRY004
            arguments = fn.get("arguments") or ""
            if not isinstance(arguments, str):  # some callers keep parsed arguments; the wire form is JSON
                arguments = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
            n += self.count(str(fn.get("name", ""))) + self.count(arguments)
        return n

    def message_tokens(self, message: Mapping) -> int:
        """Tokens of one message's text, framing excluded: role, name, content, and for assistant messages the
        names and arguments of its tool calls. ``tool_call_id`` is not counted (the model never sees ids)."""
        message = _as_plain(message)
        if not isinstance(message, Mapping) or "role" not in message:
            raise ValueError(f"a message must be a mapping with a 'role', got {message!r:.80}")
        n = self.count(str(message["role"])) + self._content_tokens(message.get("content"))
        if message.get("name"):
            n += self.count(str(message["name"]))
        return n + self._tool_calls_tokens(message.get("tool_calls"))

    def count_request(
        self, messages: Iterable[Mapping], tools: Iterable[Tool | Mapping] | None = None
    ) -> RequestTokens:
        """Estimated prompt tokens of a chat-completions request ``{messages, tools}``.

        Exact: the token count of every piece of text. Estimated: the framing constants (cookbook section 6,
        confirmed there against the API for plain messages) and the hidden format of tool definitions
        (cookbook section 7, see ``tool_tokens``), of tool calls and of tool results.
        """
        system = other = framing = 0
        for message in messages:
            message = _as_plain(message)
            tokens = self.message_tokens(message)
            if message["role"] in _SYSTEM_ROLES:
                system += tokens
            else:
                other += tokens
            framing += TOKENS_PER_MESSAGE + (TOKENS_PER_NAME if message.get("name") else 0)
        framing += REPLY_PRIMING
        tools_cost = self.tools_tokens(tools or ())
        return RequestTokens(system, other, tools_cost, framing, system + other + tools_cost + framing)

    def count_completion(
        self, content: str | None = None, tool_calls: Iterable[Any] | None = None
    ) -> CompletionTokens:
        """Tokens of a model reply: its text plus each tool call's function name and JSON arguments (exact
        text counts; the hidden per-call framing OpenAI also bills is not included)."""
        content_tokens = self._content_tokens(content)
        call_tokens = self._tool_calls_tokens(tool_calls)
        return CompletionTokens(content_tokens, call_tokens, content_tokens + call_tokens)


def _value_text(value: Any) -> str:
    """A JSON value as a renderer writes it: a string as itself, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _type_label(schema: Mapping) -> str:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return " | ".join(_type_label(b) if isinstance(b, Mapping) else "any" for b in branches)
    return "any"
