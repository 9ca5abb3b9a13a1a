"""A ``ChatModel`` backed by any OpenAI-compatible chat-completions API (OpenAI, Ollama, vLLM, LM Studio).

Configuration comes from arguments or, when they are not given, from ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``
and ``OPENAI_MODEL``. A local server (a ``base_url`` whose host is not openai.com) needs no key: the client
then sends the placeholder ``"not-needed"``, because the SDK refuses to start without some key.

The API key is kept in one private attribute and never appears in ``repr``/``str`` or in our exceptions
(server messages are scrubbed, and SDK exceptions, which carry the request and its Authorization header,
are not chained).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall, Usage

DEFAULT_MODEL = "gpt-4o-mini"
LOCAL_PLACEHOLDER_KEY = "not-needed"
RECORDING_FORMAT = "toolsearch-lab/recorded-turns"

# Keys the chat-completions API accepts per message role. Our loop adds bookkeeping keys (a tool message
# carries the tool's "name"); OpenAI rejects unknown keys on some roles, so we send only these.
_ALLOWED_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}


class ModelError(RuntimeError):
    """A model call failed. ``status_code`` is the HTTP status when the server answered, else None."""

    def __init__(self, message: str, status_code: int | None = None, request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.request_id = request_id


class ModelTimeout(ModelError):
    """No (complete) answer within the configured timeout, retries included."""


class ModelConnectionError(ModelError):
    """The server could not be reached or dropped the connection (is the local server running?)."""


class ModelNotConfigured(ModelError):
    """Neither an API key nor a base URL was given, so there is nothing to call."""


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def _is_openai_host(base_url: str | None) -> bool:
    if base_url is None:
        return True  # the SDK's default is api.openai.com
    host = (urlparse(base_url).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


class OpenAIChatModel:
    """``ChatModel`` over the ``openai`` SDK. The SDK client is built on the first call, so constructing
    one in a notebook never fails; the first ``complete()`` raises ``ModelNotConfigured`` if nothing is set.

    ``record=True`` keeps every returned turn in ``recording``; ``save_recording(path)`` writes them as JSON
    and ``load_recording(path)`` replays them as a ``ScriptedModel`` (no network, no key).
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float | None = None,
        extra_body: dict | None = None,
        record: bool = False,
    ) -> None:
        self.model = model or _env("OPENAI_MODEL") or DEFAULT_MODEL
        self.base_url = (base_url or _env("OPENAI_BASE_URL") or "").rstrip("/") or None
        self._api_key = api_key or _env("OPENAI_API_KEY")
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.extra_body = dict(extra_body) if extra_body else None
        self.name = f"openai:{self.model}"
        self.record = record
        self.recording: list[dict] = []
        self._client = None

    @classmethod
    def from_env(cls, **overrides: Any) -> OpenAIChatModel:
        """Like the constructor, but raises ``ModelNotConfigured`` right away instead of on the first call."""
        model = cls(**overrides)
        model._check_configured()
        return model

    @staticmethod
    def is_configured() -> bool:
        """True when OPENAI_API_KEY or OPENAI_BASE_URL is set: notebooks use it to skip live cells."""
        return bool(_env("OPENAI_API_KEY") or _env("OPENAI_BASE_URL"))

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (
            f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url or 'https://api.openai.com/v1'!r}, "
            f"api_key={key})"
        )

    __str__ = __repr__

    # ---- client -------------------------------------------------------------------------------------------

    def _check_configured(self) -> str:
        """Return the key to send, or raise a message that says exactly what to set."""
        if self._api_key:
            return self._api_key
        if self.base_url and not _is_openai_host(self.base_url):
            return LOCAL_PLACEHOLDER_KEY  # Ollama / vLLM / LM Studio ignore the key; the SDK needs one
        raise ModelNotConfigured(
            "No chat model configured. For OpenAI set OPENAI_API_KEY (and optionally OPENAI_MODEL, default "
            f"{DEFAULT_MODEL!r}). For a local OpenAI-compatible server set OPENAI_BASE_URL, e.g. "
            "http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM) or http://localhost:1234/v1 "
            "(LM Studio), and OPENAI_MODEL to a model it serves. Or pass model=, base_url=, api_key= to "
            "OpenAIChatModel."
        )

    @property
    def client(self):
        if self._client is None:
            key = self._check_configured()
            import openai  # imported here so the package imports without paying for the SDK

            # The SDK does the retrying (429, 408, 409, 5xx, connection errors) with backoff and honours
            # Retry-After / retry-after-ms; a float timeout bounds each attempt.
            self._client = openai.OpenAI(
                api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries
            )
        return self._client

    # ---- the call -----------------------------------------------------------------------------------------

    def request_body(self, messages: list[dict], tools: list[dict]) -> dict:
        """The keyword arguments sent to ``chat.completions.create`` (visible for tests and teaching)."""
        body: dict[str, Any] = {"model": self.model, "messages": [_api_message(m) for m in messages]}
        if tools:  # an empty "tools" array, or tool_choice without tools, is rejected by OpenAI
            body["tools"] = list(tools)
            body["tool_choice"] = "auto"
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.extra_body:
            body["extra_body"] = self.extra_body
        return body

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        import openai

        body = self.request_body(messages, tools)
        client = self.client
        error: ModelError | None = None
        try:
            completion = client.chat.completions.create(**body)
        except openai.APITimeoutError:
            error = ModelTimeout(
                f"{self._where()}: no answer within {self.timeout:g} s "
                f"(tried {self.max_retries + 1} time(s)); raise timeout= or check the server"
            )
        except openai.APIConnectionError as exc:
            error = ModelConnectionError(
                f"{self._where()}: connection failed after {self.max_retries + 1} attempt(s): "
                f"{self._scrub(str(exc.__cause__ or exc))}"
            )
        except openai.APIStatusError as exc:
            error = self._status_error(exc)
        except (openai.APIResponseValidationError, ValueError) as exc:  # ValueError: a body that is not JSON
            error = ModelError(f"{self._where()}: unreadable response: {self._scrub(str(exc))}")
        if error is not None:
            # Raised outside the except blocks so neither __cause__ nor __context__ holds the SDK exception,
            # whose request object carries the Authorization header.
            raise error
        turn = self._parse(completion)
        if self.record:
            self.recording.append(_turn_to_record(turn))
        return turn

    def _where(self) -> str:
        return f"{self.name} at {self.base_url or 'api.openai.com'}"

    def _scrub(self, text: str) -> str:
        """Remove the key (and any bearer token) from text that came from the server or the SDK."""
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return re.sub(r"(?i)bearer\s+\S+", "Bearer ***", text)

    def _status_error(self, exc) -> ModelError:
        status = exc.status_code
        detail = exc.message
        if isinstance(exc.body, dict):  # the SDK may pass just the inner "error" object
            err = exc.body.get("error", exc.body)
            if isinstance(err, dict) and err.get("message"):
                detail = str(err["message"])
        hint = {
            401: " Check OPENAI_API_KEY.",
            403: " The key lacks access to this model or endpoint.",
            404: " Check the model name (OPENAI_MODEL) and that base_url ends with /v1.",
            429: f" Rate limited; gave up after {self.max_retries} retries.",
        }.get(status, f" Gave up after {self.max_retries} retries." if status >= 500 else "")
        request_id = exc.response.headers.get("x-request-id") if exc.response is not None else None
        return ModelError(f"{self._where()}: HTTP {status}: {self._scrub(detail)}.{hint}", status, request_id)

    def _parse(self, completion) -> AssistantTurn:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ModelError(f"{self._where()}: response has no choices (got {type(completion).__name__})")
        message = choices[0].message
        calls = []
        for raw in message.tool_calls or []:
            function = getattr(raw, "function", None)
            if function is None:
                raise ModelError(
                    f"{self._where()}: unsupported tool call type {getattr(raw, 'type', None)!r}"
                )
            args = function.arguments
            if args is None:
                args = "{}"  # some local servers omit arguments for tools without parameters
            elif not isinstance(args, str):
                args = json.dumps(args)  # non-compliant servers send an object instead of a JSON string
            # Some local servers omit ids; the loop needs one to pair the tool result with the call.
            calls.append(ToolCall(raw.id or f"call_{uuid.uuid4().hex[:12]}", function.name, args))
        usage = None
        u = getattr(completion, "usage", None)
        if u is not None and u.prompt_tokens is not None:
            completion_tokens = u.completion_tokens or 0
            total = u.total_tokens if u.total_tokens is not None else u.prompt_tokens + completion_tokens
            usage = Usage(u.prompt_tokens, completion_tokens, total)
        return AssistantTurn(message.content, calls, usage)

    # ---- recording ----------------------------------------------------------------------------------------

    def save_recording(self, path: str | Path) -> Path:
        """Write the recorded turns as JSON (the model name and turns; never the key or base URL)."""
        path = Path(path)
        data = {"format": RECORDING_FORMAT, "model": self.name, "turns": self.recording}
        text = json.dumps(data, indent=2, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # Fix (issue 6): a recorded turn may hold a lone surrogate (valid JSON escape from the server);
            # escape everything then, instead of failing to write and losing the recording.
            text = json.dumps(data, indent=2, ensure_ascii=True)
        path.write_text(text + "\n", encoding="utf-8")
        return path


def _api_message(message: dict) -> dict:
    role = message.get("role")
    allowed = _ALLOWED_KEYS.get(role)
    if allowed is None:
        raise ValueError(f"unsupported message role {role!r} (expected one of {sorted(_ALLOWED_KEYS)})")
    out = {k: v for k, v in message.items() if k in allowed}
    if out.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
            }
            for c in out["tool_calls"]
        ]
    elif "tool_calls" in out:
        del out["tool_calls"]  # an empty list is rejected by OpenAI
    return out


def _turn_to_record(turn: AssistantTurn) -> dict:
    record = turn.to_message()
    if turn.usage is not None:
        record["usage"] = turn.usage.to_dict()
    return record


def load_recording(path: str | Path, name: str | None = None) -> ScriptedModel:
    """Replay turns saved by ``save_recording`` (or a plain JSON list of assistant messages), usage kept."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    turns_data = data["turns"] if isinstance(data, dict) else data
    turns = []
    for message in turns_data:
        turn = AssistantTurn.from_message(message)
        if message.get("usage"):
            turn = replace(turn, usage=Usage(**message["usage"]))
        turns.append(turn)
    model_name = name or (
        f"replay:{data['model']}" if isinstance(data, dict) and "model" in data else "replay"
    )
    return ScriptedModel(turns, name=model_name)
