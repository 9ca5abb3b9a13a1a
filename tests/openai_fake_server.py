"""A loopback fake of an OpenAI-compatible HTTP API, for tests that drive the real ``openai`` client.

It binds 127.0.0.1 on a free port, records every request, and answers each one from a queue of scripted
replies. A queue entry is a ``Reply``, a plain dict (sent as a 200 JSON body), or a callable
``(RecordedRequest) -> Reply | dict`` so a test can branch on what the client actually sent. When the queue
is empty the ``default`` responder answers, or the server returns a 500 that names the problem (the test then
sees a ``ModelError`` that says "no scripted reply" instead of hanging).

    with FakeOpenAIServer() as server:
        server.enqueue(rate_limited(retry_after_ms=5), chat_response("hi", usage=(3, 1)))
        model = OpenAIChatModel(base_url=server.base_url, api_key="test-key", model="fake")
        ...
        assert len(server.requests) == 2

Fault injection: ``Reply(status=..., headers=...)``, ``truncated(...)`` (promises more bytes than it sends,
then drops the connection), ``invalid_json()``, and ``Reply(delay=...)`` / ``slow(...)`` for timeouts.
Every POST path shares the one queue (chat completions, embeddings, ...); ``RecordedRequest.path`` tells
them apart.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float = field(default_factory=time.monotonic)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    # Conveniences for chat-completions bodies.
    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in (self.json or {}).get("tools", [])]

    @property
    def messages(self) -> list[dict]:
        return (self.json or {}).get("messages", [])


@dataclass
class Reply:
    """One scripted HTTP answer.

    ``json`` is serialised as the body unless ``body`` (raw bytes) is given. ``delay`` seconds pass before the
    status line is sent (a read timeout on the client side). ``truncate`` sends a Content-Length larger than
    the body and closes the connection, so the client sees an incomplete response.
    """

    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False

    def payload(self) -> bytes:
        if self.body is not None:
            return self.body
        return b"" if self.json is None else json.dumps(self.json).encode()


Responder = Reply | dict | Callable[[RecordedRequest], Reply | dict]


# ---- reply builders -------------------------------------------------------------------------------------


def tool_call(name: str, arguments: str | dict = "{}", id: str | None = None) -> dict:
    """A chat-completions tool call entry. A str ``arguments`` is sent verbatim (it may be malformed)."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {
        "id": id or f"call_fake_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def chat_response(
    content: str | None = None,
    tool_calls: list[dict] | None = None,
    usage: tuple[int, int] | dict | None = (10, 5),
    model: str = "fake-model",
) -> Reply:
    """A spec-shaped 200 chat completion. ``usage``: (prompt, completion) tokens, a dict, or None to omit."""
    message: dict = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict = {
        "id": f"chatcmpl-fake-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}
        ],
    }
    if isinstance(usage, tuple):
        prompt, completion = usage
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    if usage is not None:
        body["usage"] = usage
    return Reply(json=body)


def error_response(status: int, message: str = "error", type: str = "server_error", headers=None) -> Reply:
    """An OpenAI-shaped error body with the given status."""
    return Reply(
        status=status,
        json={"error": {"message": message, "type": type, "param": None, "code": None}},
        headers=dict(headers or {}),
    )


def rate_limited(retry_after_ms: int = 5, message: str = "Rate limit reached") -> Reply:
    # retry-after-ms keeps SDK retries fast; a plain Retry-After would be in whole seconds.
    return error_response(429, message, "rate_limit_exceeded", {"retry-after-ms": str(retry_after_ms)})


def invalid_json(status: int = 200) -> Reply:
    return Reply(status=status, body=b'{"id": "chatcmpl-broken", "choices": [', headers=_JSON)


def truncated(reply: Reply | None = None, keep: int = 20) -> Reply:
    """``reply`` (default: a normal answer) cut after ``keep`` bytes, the full Content-Length promised."""
    reply = reply or chat_response("this answer never arrives whole")
    return Reply(status=reply.status, body=reply.payload()[:keep], headers=_JSON, truncate=True)


def slow(reply: Reply | dict, seconds: float) -> Reply:
    reply = reply if isinstance(reply, Reply) else Reply(json=reply)
    return Reply(reply.status, reply.json, reply.body, dict(reply.headers), seconds, reply.truncate)


_JSON = {"Content-Type": "application/json"}


# ---- the server -----------------------------------------------------------------------------------------


class FakeOpenAIServer:
    """Threaded loopback server. Use as a context manager, or call ``start()`` / ``stop()``."""

    def __init__(self, default: Responder | None = None) -> None:
        self.requests: list[RecordedRequest] = []
        self.default = default
        self._queue: deque[Responder] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()  # wakes handlers sleeping in a ``delay`` when the server stops
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting --
    def enqueue(self, *responders: Responder) -> FakeOpenAIServer:
        with self._lock:
            self._queue.extend(responders)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not used yet (a test can assert the client made every expected request)."""
        with self._lock:
            return len(self._queue)

    def bodies(self) -> list[Any]:
        """The JSON bodies of all requests so far, in order."""
        return [r.json for r in self.requests]

    # -- lifecycle --
    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` to an OpenAI client."""
        return self.url + "/v1"

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do; the client reuses connections

            def do_POST(self) -> None:
                server._handle(self)

            do_GET = do_POST

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler stuck in a long delay must not block stop()
        # A short poll interval keeps stop() (and so each test teardown) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --
    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            responder = self._queue.popleft() if self._queue else self.default
        if responder is None:
            return error_response(
                500, f"FakeOpenAIServer: no scripted reply left for request #{len(self.requests)}"
            )
        if callable(responder):
            responder = responder(request)
        return responder if isinstance(responder, Reply) else Reply(json=responder)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        # Header names lower-cased: HTTP names are case-insensitive and clients differ in how they send them.
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request = RecordedRequest(handler.command, handler.path, headers, body)
        try:
            reply = self._next_reply(request)
        except Exception as exc:  # noqa: BLE001
            # A broken test responder should surface as a readable 500, not a hang.
            reply = error_response(500, f"FakeOpenAIServer: responder raised {exc!r}")
        if reply.delay and self._stopping.wait(reply.delay):
            return
        payload = reply.payload()
        try:
            handler.send_response(reply.status)
            headers = {**_JSON, **reply.headers} if reply.json is not None else dict(reply.headers)
            for key, value in headers.items():
                handler.send_header(key, value)
            declared = len(payload) + (100 if reply.truncate else 0)
            handler.send_header("Content-Length", str(declared))
            if reply.truncate:
                handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(payload)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (timeout); nothing to answer
        if reply.truncate:
            handler.close_connection = True
