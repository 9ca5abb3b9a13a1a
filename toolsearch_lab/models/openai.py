"""A ``ChatModel`` backed by any OpenAI-compatible chat-completions API (OpenAI, Ollama, vLLM, LM Studio).

Configuration comes from arguments or, when they are not given, from ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``
and ``OPENAI_MODEL``. A local server (a ``base_url`` whose host is not openai.com) needs no key: the client
then sends the placeholder ``"not-needed"``, because the SDK refuses to start without some key.

The API key is kept in a :class:`~toolsearch_lab.secrets.Secret` and never appears in ``repr``/``str``,
``vars()``, log lines or our exceptions (server messages are scrubbed, and SDK exceptions, which carry the
request and its Authorization header, are not chained). Credentials inside the base URL
(``http://user:KEY@host/v1``) are taken out of it: the URL the SDK sees, logs and shows is
``http://host/v1``, and the user/password go on the wire as HTTP Basic auth, exactly as the HTTP client
would have sent them from the URL. A key in the query string (``…/v1?api-key=KEY``) is sent as a default
query parameter on every request and shown as ``api-key=***``; a fragment, never sent, shows as ``#***``.

Retries are ours, not the SDK's (it gets ``max_retries=0``): :mod:`toolsearch_lab.models.http` retries
408, 409, 429, 5xx, timeouts and dropped connections and records each as a
:class:`~toolsearch_lab.trace.RetryRecord` on the returned turn (``turn.retries``) or, when the call finally
fails, on the error (``error.retries``), so the trace shows them.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from toolsearch_lab.atomic import write_text
from toolsearch_lab.jsonlimits import JsonLimitError, loads_checked
from toolsearch_lab.model import check_positive_int
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall, Usage
from toolsearch_lab.models.http import (  # the errors and retry settings are this client's public names too
    DEFAULT_MAX_RETRIES as DEFAULT_MAX_RETRIES,
    MAX_RETRY_AFTER_S as MAX_RETRY_AFTER_S,
    Endpoint,
    HttpChatModel,
    ModelConnectionError as ModelConnectionError,
    ModelError as ModelError,
    ModelNotConfigured as ModelNotConfigured,
    ModelTimeout as ModelTimeout,
    backoff_seconds as backoff_seconds,
    env_value,
    with_retries,
)
from toolsearch_lab.secrets import (
    install_log_redaction,
)

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


def _is_openai_host(base_url: str | None) -> bool:
    if base_url is None:
        return True  # the SDK's default is api.openai.com
    host = (urlparse(base_url).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


class OpenAIChatModel(HttpChatModel):
    """``ChatModel`` over the ``openai`` SDK. The SDK client is built on the first call, so constructing
    one in a notebook never fails; the first ``complete()`` raises ``ModelNotConfigured`` if nothing is set.

    ``record=True`` keeps every returned turn in ``recording``; ``save_recording(path)`` writes them as JSON
    and ``load_recording(path)`` replays them as a ``ScriptedModel`` (no network, no key).
    ``record_to=PATH`` writes every call, request and answer, to a transcript ``toolsearch-lab replay`` reads
    (:mod:`toolsearch_lab.models.recorder`; never a header or the key).
    """

    DEFAULT_URL = "https://api.openai.com/v1"
    URL_VAR, KEY_VAR = "OPENAI_BASE_URL", "OPENAI_API_KEY"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = DEFAULT_MAX_RETRIES,
        temperature: float | None = None,
        extra_body: dict | None = None,
        record: bool = False,
        record_to: str | Path | None = None,
    ) -> None:
        check_positive_int(max_retries, "OpenAIChatModel: max_retries", allow_zero=True)
        self.model = model or env_value("OPENAI_MODEL") or DEFAULT_MODEL
        # The SDK appends "/chat/completions" to the base URL as text: BaseUrl takes credentials, query and
        # fragment out of what it gets; the client gets _url.wire and its query.
        self._configure(base_url, api_key, record_to)
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.extra_body = dict(extra_body) if extra_body else None
        self.name = f"openai:{self.model}"
        self.record = record
        self.recording: list[dict] = []

    # ---- client -------------------------------------------------------------------------------------------

    def _key(self) -> str:
        """Return the key to send, or raise a message that says exactly what to set."""
        if self._api_key:
            return self._api_key.reveal()
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
    def client(self) -> Any:
        if self._client is None:
            key = self._key()
            # Imported here so the package imports without paying for the SDK (about 0.5 s).
            import openai

            install_log_redaction()
            # max_retries=0: complete() retries itself, so every retry is visible in the trace.
            self._client = openai.OpenAI(
                api_key=key,
                base_url=self._url.wire if self._url is not None else None,
                default_query=self._url.default_query() if self._url is not None else None,
                timeout=self.timeout,
                max_retries=0,
                http_client=self._http_client(openai),
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
        body = self.request_body(messages, tools)
        client = self.client
        import openai  # for its exception classes; loaded by ``client`` already, kept off the module import

        endpoint = Endpoint(self._where(), self.timeout, self._scrub, _HINTS, self.max_retries)
        completion, retries = with_retries(
            openai, lambda: client.chat.completions.create(**body), endpoint, self._sleep
        )
        try:
            turn = self._parse(completion)
        except ModelError as exc:
            exc.retries = retries
            raise
        turn = replace(turn, retries=retries)
        if self.record:
            self.recording.append(_turn_to_record(turn))
        return turn

    def _where(self) -> str:
        return f"{self.name} at {self.base_url or 'api.openai.com'}"

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
            details = getattr(u, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None)
            cached = cached if isinstance(cached, int) else None
            usage = Usage(u.prompt_tokens, completion_tokens, total, cached)
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
            # A recorded turn may hold a lone surrogate (a valid JSON escape from the server); escape
            # everything then, instead of failing to write and losing the recording.
            text = json.dumps(data, indent=2, ensure_ascii=True)
        write_text(path, text + "\n")  # atomic: a killed save keeps the previous recording whole
        return path


_HINTS = {
    401: " Check OPENAI_API_KEY.",
    403: " The key lacks access to this model or endpoint.",
    404: " Check the model name (OPENAI_MODEL) and that base_url ends with /v1.",
}


def _api_message(message: dict) -> dict:
    role = message.get("role")
    allowed = _ALLOWED_KEYS.get(role) if isinstance(role, str) else None
    if allowed is None:
        raise ValueError(f"unsupported message role {role!r} (expected one of {sorted(_ALLOWED_KEYS)})")
    out = {k: v for k, v in message.items() if k in allowed}
    if role == "assistant" and out.get("content") is None:
        # An assistant turn that only called tools has no text. OpenAI accepts null here, but
        # llama-cpp-python's server (0.3.x) answers HTTP 500 to null and to a missing content: "" is valid
        # everywhere the chat-completions types are (tests/llama_cpp_wire/ has the recorded refusals).
        out["content"] = ""
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


class RecordingError(ValueError):
    """A recording file cannot be replayed; the message names the file and what is wrong in it."""


# A recording nests message -> tool_calls -> call -> function; anything much deeper is not one.
_MAX_RECORDING_DEPTH = 32


def load_recording(path: str | Path, name: str | None = None) -> ScriptedModel:
    """Replay turns saved by ``save_recording`` (or a plain JSON list of assistant messages), usage kept.
    A file that is not such a recording raises :class:`RecordingError` naming the file and the fault."""
    path = Path(path)
    where = f"recording {path}"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecordingError(f"{where}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordingError(
            f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
    try:
        data = loads_checked(text, where, _MAX_RECORDING_DEPTH)
    except json.JSONDecodeError as exc:
        raise RecordingError(
            f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except JsonLimitError as exc:
        raise RecordingError(str(exc)) from None
    if isinstance(data, dict):
        if data.get("format", RECORDING_FORMAT) != RECORDING_FORMAT:
            raise RecordingError(f"{where}: format is {data['format']!r:.60}, expected {RECORDING_FORMAT!r}")
        if "turns" not in data:
            raise RecordingError(f"{where}: no 'turns' key (a recording is {{'format', 'model', 'turns'}})")
        turns_data = data["turns"]
        recorded_name = data.get("model")
        if recorded_name is not None and not isinstance(recorded_name, str):
            raise RecordingError(f"{where}: 'model' must be a string, got {type(recorded_name).__name__}")
    elif isinstance(data, list):
        turns_data, recorded_name = data, None
    else:
        raise RecordingError(
            f"{where}: expected an object with 'turns' or a list of assistant messages, "
            f"got a JSON {type(data).__name__}"
        )
    if not isinstance(turns_data, list):
        raise RecordingError(f"{where}: 'turns' must be a list, got {type(turns_data).__name__}")
    turns = []
    for i, message in enumerate(turns_data):
        try:
            turn = AssistantTurn.from_message(message)
            if isinstance(message, dict) and message.get("usage") is not None:
                turn = replace(turn, usage=Usage.from_dict(message["usage"]))
        except ValueError as exc:
            raise RecordingError(f"{where}: turn {i}: {exc}") from None
        turns.append(turn)
    model_name = name or (f"replay:{recorded_name}" if recorded_name is not None else "replay")
    return ScriptedModel(turns, name=model_name)
