"""A ``ChatModel`` over Anthropic's Messages API (or any server that speaks it), through Anthropic's own SDK.

Why the SDK and not plain HTTP: it is built on the same transport as the ``openai`` SDK this package
already uses (``httpx2``, ``anyio``, ``pydantic``), so the extra is small (``pip install
'toolsearch-lab[anthropic]'``); its errors have the same shape, so :mod:`toolsearch_lab.models.http` retries
both clients one way; and its types carry every tool-search block (``tool_reference``, ``defer_loading``) this
client sends. It is imported only when a request is made.

Configuration comes from arguments or ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` (the server's root,
without ``/v1``) and ``ANTHROPIC_MODEL``. The key is a :class:`~toolsearch_lab.secrets.Secret`: never in a
repr, a log line or an error. The loop speaks chat completions; :func:`messages_request` turns a request into
a Messages one: system messages become ``system``, tool calls ``tool_use`` blocks, tool results
``tool_result`` blocks in user turns (an error result with ``is_error``).

``tool_references=True`` sends what the Anthropic-native strategy expands inline the way Anthropic's API takes
it (the documented client-side search path): a ``toolSearchTool`` result that lists tool definitions becomes
``tool_reference`` blocks, and every such tool (and every one of ``deferred_tools``, so the ``tools`` array
never changes) is declared with ``defer_loading: true``. No tool ever carries ``cache_control`` with
``defer_loading`` (the API refuses that), and a request whose tools would all be deferred is refused here
before it is sent, as the API would refuse it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, check_positive_int
from toolsearch_lab.models.base import AssistantTurn, ToolCall, Usage
from toolsearch_lab.models.http import (
    DEFAULT_MAX_RETRIES,
    Endpoint,
    HttpChatModel,
    ModelError,
    ModelNotConfigured,
    env_value,
    with_retries,
)
from toolsearch_lab.secrets import install_log_redaction
from toolsearch_lab.wire import decode_search_items, is_error_result

__all__ = ["DEFAULT_MODEL", "AnthropicChatModel", "messages_request"]

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_MAX_TOKENS = 1024
LOCAL_PLACEHOLDER_KEY = "not-needed"
_HINTS = {
    401: " Check ANTHROPIC_API_KEY.",
    403: " The key lacks access to this model.",
    404: " Check the model name (ANTHROPIC_MODEL) and that the base URL is the server's root, without /v1.",
}


class AnthropicChatModel(HttpChatModel):
    """``ChatModel`` over the ``anthropic`` SDK (see the module docstring). Constructing one never fails; the
    first ``complete()`` raises :class:`~toolsearch_lab.models.http.ModelNotConfigured` if nothing is set.
    ``record_to=PATH`` writes every call to a transcript ``toolsearch-lab replay`` reads
    (:mod:`toolsearch_lab.models.recorder`)."""

    DEFAULT_URL = "https://api.anthropic.com"
    URL_VAR, KEY_VAR = "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
        tool_references: bool = False,
        deferred_tools: Iterable[Mapping[str, Any]] = (),
        record_to: str | os.PathLike[str] | None = None,
    ) -> None:
        check_positive_int(max_retries, "AnthropicChatModel: max_retries", allow_zero=True)
        check_positive_int(max_tokens, "AnthropicChatModel: max_tokens")
        self.model = model or env_value("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self._configure(base_url, api_key, record_to)
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.tool_references = bool(tool_references)
        self.deferred_tools = [dict(d) for d in deferred_tools]
        self.name = f"anthropic:{self.model}"

    def _key(self) -> str:
        if self._api_key:
            return self._api_key.reveal()
        if self.base_url and "anthropic.com" not in self.base_url:
            return LOCAL_PLACEHOLDER_KEY  # a local Messages-compatible server; the SDK needs some key
        raise ModelNotConfigured(
            "No Anthropic model configured. Set ANTHROPIC_API_KEY (and optionally ANTHROPIC_MODEL, default "
            f"{DEFAULT_MODEL!r}), or ANTHROPIC_BASE_URL for a Messages-compatible server (its root, without "
            "/v1); or pass model=, base_url=, api_key= to AnthropicChatModel."
        )

    @property
    def client(self) -> Any:
        if self._client is None:
            key = self._key()
            try:
                import anthropic
            except ImportError:
                raise ModelNotConfigured(
                    "AnthropicChatModel needs the anthropic SDK: pip install 'toolsearch-lab[anthropic]'"
                ) from None
            install_log_redaction(("anthropic", "anthropic._base_client"))
            self._client = anthropic.Anthropic(
                api_key=key,
                base_url=self._url.wire if self._url is not None else None,
                default_query=self._url.default_query() if self._url is not None else None,
                timeout=self.timeout,
                max_retries=0,  # ours retry, so every retry reaches the trace
                http_client=self._http_client(anthropic),
            )
        return self._client

    # ---- the call ---------------------------------------------------------------------------------------
    def request_body(self, messages: list[dict], tools: list[dict]) -> dict[str, Any]:
        """The keyword arguments sent to ``messages.create`` (visible for tests and teaching)."""
        deferred = self.deferred_tools if self.tool_references else None
        body = messages_request(messages, tools, deferred)
        body.update(model=self.model, max_tokens=self.max_tokens)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        body = self.request_body(messages, tools)
        client = self.client
        import anthropic  # its exception classes; loaded by ``client`` already

        endpoint = Endpoint(
            f"{self.name} at {self.shown_url()}", self.timeout, self._scrub, _HINTS, self.max_retries
        )
        message, retries = with_retries(
            anthropic, lambda: client.messages.create(**body), endpoint, self._sleep
        )
        try:
            turn = self._parse(message)
        except ModelError as exc:
            exc.retries = retries
            raise
        return replace(turn, retries=retries)

    def _parse(self, message: Any) -> AssistantTurn:
        text, calls = [], []
        for block in getattr(message, "content", None) or []:
            kind = getattr(block, "type", None)
            if kind == "text":
                text.append(block.text)
            elif kind == "tool_use":
                calls.append(ToolCall(block.id, block.name, json.dumps(block.input, ensure_ascii=False)))
            elif kind not in ("thinking", "redacted_thinking"):
                raise ModelError(
                    f"{self.name}: the answer holds a {kind!r} block; this loop runs client tools only "
                    "(send no server tools)"
                )
        usage = None
        u = getattr(message, "usage", None)
        if u is not None:
            written = getattr(u, "cache_creation_input_tokens", None) or 0
            read = getattr(u, "cache_read_input_tokens", None) or 0
            prompt = u.input_tokens + written + read
            usage = Usage(prompt, u.output_tokens, prompt + u.output_tokens, read, written)
        return AssistantTurn("\n".join(text) or None, calls, usage)


def messages_request(
    messages: Iterable[Mapping[str, Any]],
    tools: Iterable[Mapping[str, Any]],
    deferred: list[dict] | None = None,
) -> dict[str, Any]:
    """A chat-completions request (``messages``, ``tools``) as a Messages API body (``system``,
    ``messages``, ``tools``). ``deferred`` (a list, possibly empty) turns on tool references: see the
    module docstring."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    declared = [_anthropic_tool(t) for t in tools]
    late: dict[str, dict] = {d["function"]["name"]: d for d in deferred or ()}

    def add(role: str, blocks: list[dict]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        elif blocks:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role in ("system", "developer"):
            system.append(str(content or ""))
        elif role == "user":
            add("user", [{"type": "text", "text": str(content)}] if content else [])
        elif role == "assistant":
            blocks = [{"type": "text", "text": str(content)}] if content else []
            for call in message.get("tool_calls") or []:
                blocks.append(_tool_use(call))
            add("assistant", blocks)
        elif role == "tool":
            add("user", [_tool_result(message, late if deferred is not None else None)])
    body: dict[str, Any] = {"messages": out}
    if system:
        body["system"] = "\n\n".join(system)
    names = {t["name"] for t in declared}
    declared += [{**_anthropic_tool(d), "defer_loading": True} for n, d in late.items() if n not in names]
    if declared:
        if all(t.get("defer_loading") for t in declared):
            raise ValueError(
                "every tool would be sent with defer_loading; Anthropic needs at least one that is not"
            )
        body["tools"] = declared
    return body


def _anthropic_tool(definition: Mapping[str, Any]) -> dict[str, Any]:
    fn = definition.get("function") or {}
    schema = fn.get("parameters") or {"type": "object", "properties": {}}
    return {"name": fn.get("name"), "description": fn.get("description") or "", "input_schema": schema}


def _tool_use(call: Mapping[str, Any]) -> dict[str, Any]:
    fn = call.get("function") or {}
    try:
        arguments = json.loads(fn.get("arguments") or "{}")
    except json.JSONDecodeError:
        arguments = None
    # The API takes an object; the loop already answered unreadable arguments with an error result.
    return {
        "type": "tool_use",
        "id": call.get("id"),
        "name": fn.get("name"),
        "input": arguments if isinstance(arguments, dict) else {},
    }


def _tool_result(message: Mapping[str, Any], late: dict[str, dict] | None) -> dict[str, Any]:
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("tool_call_id")}
    items = (
        decode_search_items(text) if late is not None and message.get("name") == TOOL_SEARCH_TOOL_NAME else []
    )
    definitions = [item for item in items if isinstance(item, dict)]
    if definitions and len(definitions) == len(items):
        assert late is not None
        for definition in definitions:
            late.setdefault(definition["function"]["name"], definition)
        result["content"] = [
            {"type": "tool_reference", "tool_name": d["function"]["name"]} for d in definitions
        ]
        return result
    result["content"] = text
    if is_error_result(text):
        result["is_error"] = True
    return result
