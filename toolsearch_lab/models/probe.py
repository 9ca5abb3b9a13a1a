"""Which chat model endpoints answer, and whether they can call tools: the ``toolsearch-lab models`` check.

For each OpenAI-compatible endpoint (``OPENAI_BASE_URL`` or OpenAI itself when configured, else the local
defaults of Ollama, ``http://127.0.0.1:11434/v1``, and llama.cpp's own server, ``http://127.0.0.1:8080/v1``
(``python -m toolsearch_lab.models.llama_server`` over the prebuilt ``xllamacpp`` wheel), plus any URL given)
and for Anthropic when ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL`` is set, the check does what a run does,
through the same client a run uses:

1. lists the models (``GET /models``): "answers", or nothing listening, or the HTTP error;
2. sends one request with one tool and a user message that needs it: "returns tool calls", or "text only"
   (the model or the server has no tool support: llama.cpp reads tool calls only in the formats of chat
   templates it knows, llama-cpp-python needs ``--chat_format chatml-function-calling``, Ollama a model
   tagged "tools");
3. sends the conversation back with the tool's result, as the loop's second request does, which catches
   servers that refuse the assistant turn (llama-cpp-python refused ``content: null`` until this project's
   client sent ``""``).

A model that answers but does not follow the instruction shows as "text only": the check reports what came
back, it does not judge the model.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.models.http import ModelConnectionError, ModelError, ModelTimeout
from toolsearch_lab.models.openai import LOCAL_PLACEHOLDER_KEY

__all__ = ["LOCAL_ENDPOINTS", "ModelCheck", "check_endpoint", "check_models", "endpoints_to_check"]

LOCAL_ENDPOINTS = (
    ("http://127.0.0.1:11434/v1", "Ollama's default"),
    ("http://127.0.0.1:8080/v1", "llama.cpp server's default"),
)
LIST_TIMEOUT_S = 5.0
PROBE_MAX_TOKENS = 64  # enough for one tool call; a server with no tool format rambles no longer than this
WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    },
}
PROBE = [
    {"role": "system", "content": "You are a helpful assistant. Use the tools when a tool fits."},
    {"role": "user", "content": "What is the weather in Paris right now? Call the weather tool."},
]


@dataclass
class ModelCheck:
    """What one endpoint did. ``tools``: "returns tool calls", "text only" or None (not tried);
    ``round_trip``: "ok", the error of the second request, or None (not tried)."""

    endpoint: str  # credentials hidden
    source: str  # where the endpoint came from
    answers: bool = False
    listed: list[str] = field(default_factory=list)
    model: str | None = None
    tools: str | None = None
    round_trip: str | None = None
    problem: str | None = None
    seconds: float = 0.0

    @property
    def supports_tools(self) -> bool:
        return self.tools == "returns tool calls" and self.round_trip == "ok"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "supports_tools": self.supports_tools}


def endpoints_to_check(
    env: Mapping[str, str] | None = None, urls: Sequence[str] = ()
) -> list[tuple[str | None, str]]:
    """(base URL or None for OpenAI itself, where it came from): the configured endpoint, else the local
    defaults, then ``urls``."""
    env = os.environ if env is None else env
    found: list[tuple[str | None, str]] = []
    configured = (env.get("OPENAI_BASE_URL") or "").strip()
    if configured:
        found.append((configured, "OPENAI_BASE_URL"))
    elif (env.get("OPENAI_API_KEY") or "").strip():
        found.append((None, "OPENAI_API_KEY"))
    else:
        found += LOCAL_ENDPOINTS
    found += [(u, "--url") for u in urls if u not in {f for f, _ in found}]
    return found


def check_endpoint(
    base_url: str | None,
    source: str,
    model: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
) -> ModelCheck:
    """Probe one OpenAI-compatible endpoint (see the module docstring); never raises for what the server
    does: every outcome is in the returned :class:`ModelCheck`."""
    from toolsearch_lab.models.openai import OpenAIChatModel

    started = time.perf_counter()
    local = base_url is not None and "openai.com" not in base_url
    client = OpenAIChatModel(
        model=model or "probe",
        base_url=base_url or "https://api.openai.com/v1",
        api_key=api_key,
        timeout=timeout,
        max_retries=0,
        temperature=0.0,
        extra_body={"max_tokens": PROBE_MAX_TOKENS} if local else None,
    )
    check = ModelCheck(client.shown_url(), source)
    try:
        listing = client.client.with_options(timeout=LIST_TIMEOUT_S).models.list()
        check.listed = [str(m.id) for m in getattr(listing, "data", None) or []][:20]
        check.answers = True
    except Exception as exc:  # noqa: BLE001 - every failure is an outcome to report
        check.problem = _listing_problem(exc, client)
        check.answers = not _nothing_listening(exc)
        if not check.answers:
            return _timed(check, started)
    check.model = model or (check.listed[0] if check.listed else None)
    if check.model is None:
        check.problem = check.problem or "it lists no model; pass --model"
        return _timed(check, started)
    client.model, client.name = check.model, f"openai:{check.model}"
    _probe_tools(check, client)
    return _timed(check, started)


def check_anthropic(model: str | None = None, timeout: float = 120.0) -> ModelCheck:
    """Probe the Anthropic endpoint configured by ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``."""
    from toolsearch_lab.models.anthropic import AnthropicChatModel

    started = time.perf_counter()
    client = AnthropicChatModel(model=model, timeout=timeout, max_retries=0, max_tokens=PROBE_MAX_TOKENS)
    check = ModelCheck(client.shown_url(), "ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL", model=client.model)
    _probe_tools(check, client)
    check.answers = check.tools is not None
    return _timed(check, started)


def _probe_tools(check: ModelCheck, client: ChatModel) -> None:
    try:
        turn = client.complete([dict(m) for m in PROBE], [WEATHER])
    except ModelError as exc:
        check.problem = _short(exc)
        return
    check.answers = True
    if not turn.tool_calls:
        check.tools = "text only"
        return
    check.tools = "returns tool calls"
    call = turn.tool_calls[0]
    conversation = [*PROBE, turn.to_message()]
    conversation.append(
        {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": '{"temp_c": 18}'}
    )
    try:
        second: AssistantTurn = client.complete(conversation, [WEATHER])
    except ModelError as exc:
        check.round_trip = f"refused the conversation sent back: {_short(exc)}"
        return
    check.round_trip = "ok" if second is not None else "no answer"


def _nothing_listening(exc: Exception) -> bool:
    import openai

    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def _listing_problem(exc: Exception, client: Any) -> str:
    import openai

    if _nothing_listening(exc):
        return "nothing listening"
    if isinstance(exc, openai.APIStatusError):
        return f"GET /models: HTTP {exc.status_code} (not an OpenAI-compatible /v1 URL?)"
    if isinstance(exc, openai.APITimeoutError):
        return f"GET /models: no answer within {LIST_TIMEOUT_S:g} s"
    return f"GET /models: {client._scrub(str(exc))[:200]}"


def _short(exc: ModelError) -> str:
    if isinstance(exc, ModelTimeout):
        return "no answer in time (a CPU model can take a minute: raise --timeout)"
    if isinstance(exc, ModelConnectionError):
        return "connection failed"
    return exc.message.split(": ", 1)[-1][:200]


def _timed(check: ModelCheck, started: float) -> ModelCheck:
    check.seconds = round(time.perf_counter() - started, 2)
    return check


def check_models(
    urls: Sequence[str] = (),
    model: str | None = None,
    timeout: float = 120.0,
    env: Mapping[str, str] | None = None,
) -> list[ModelCheck]:
    """Every endpoint of :func:`endpoints_to_check` probed, and Anthropic when it is configured."""
    env = os.environ if env is None else env
    configured_model = (env.get("OPENAI_MODEL") or "").strip() or None
    checks = []
    for url, source in endpoints_to_check(env, urls):
        configured = source.startswith("OPENAI")
        # The configured key goes only where the configuration sends it, never to a URL given to the check.
        key = None if configured else LOCAL_PLACEHOLDER_KEY
        checks.append(
            check_endpoint(url, source, model or (configured_model if configured else None), key, timeout)
        )
    if (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_BASE_URL") or "").strip():
        checks.append(check_anthropic(None, timeout))
    return checks
