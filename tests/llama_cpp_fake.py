"""A loopback stand-in for llama-cpp-python's OpenAI-compatible server, answering with its recorded wire
format.

Building llama-cpp-python takes 5-20 minutes (PyPI has no wheel for this platform), so the default suite talks
to this fake instead. It behaves as the recordings in ``tests/llama_cpp_wire/`` show the real server does
(0.3.36, ``--chat_format chatml-function-calling``):

* ``GET /v1/models`` lists the model file, as ``llama_cpp.server.app.get_models`` does;
* an assistant message whose ``content`` is null or missing is refused with HTTP 500 and the recorded error
  body (request validation / the chat template), wherever it sits in the conversation;
* otherwise each chat request gets the next recorded answer (``content: null``, ``tool_calls`` with ids of
  the form ``call__0_<name>_cmpl-<uuid>``, the legacy ``function_call`` beside them, usage without
  ``prompt_tokens_details``); ``tool_format=False`` plays the server started without a chat format: text only.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from openai_fake_server import FakeOpenAIServer, RecordedRequest, Reply

WIRE = Path(__file__).resolve().parent / "llama_cpp_wire"
MODEL_FILE = "models/gemma-3-270m-q4_k_m.gguf"
# The answers of a run whose first request searches, then calls the tool found, then calls it again.
TOOL_ANSWERS = ("probe_auto.out", "probe_auto2_empty.out", "probe_auto3.out")


def recorded(name: str) -> Any:
    return json.loads((WIRE / name).read_text(encoding="utf-8"))


class LlamaCppFake(FakeOpenAIServer):
    def __init__(self, answers: tuple[str, ...] = TOOL_ANSWERS, tool_format: bool = True) -> None:
        super().__init__(default=self._respond)
        self.answers = answers if tool_format else ("probe_default.out",)
        self.chats = 0

    def _respond(self, request: RecordedRequest) -> Reply:
        if request.method == "GET" and request.path.endswith("/models"):
            return Reply(
                json={
                    "object": "list",
                    "data": [{"id": MODEL_FILE, "object": "model", "owned_by": "me", "permissions": []}],
                }
            )
        for message in (request.json or {}).get("messages", []):
            if message.get("role") == "assistant" and "content" not in message:
                return Reply(status=500, json=recorded("probe_auto2_omit.out"))
            if message.get("role") == "assistant" and message["content"] is None:
                return Reply(status=500, json=recorded("probe_auto2.out"))
        answer = recorded(self.answers[min(self.chats, len(self.answers) - 1)])
        self.chats += 1
        answer["id"] = f"chatcmpl-{uuid.uuid4()}"
        for call in answer["choices"][0]["message"].get("tool_calls") or []:
            call["id"] = f"call__0_{call['function']['name']}_cmpl-{uuid.uuid4()}"
        return Reply(json=answer)
