"""Record a real run: every model call an ``openai`` or ``anthropic`` client makes, as the transcript file
``toolsearch-lab replay`` reads.

The recorder sits under the SDK as its HTTP transport, so it sees each call as it went over the wire:

    recorder = Recorder("run.jsonl")
    client = openai.OpenAI(http_client=recorder.http_client())   # or anthropic.Anthropic(...)
    client = record_client(openai.OpenAI(), "run.jsonl")         # the same, on a client you have
    OpenAIChatModel(record_to="run.jsonl")                       # the lab's own clients

Each call to a model endpoint (a ``POST`` to ``…/messages``, ``…/chat/completions`` or ``…/responses``)
becomes one line of the file, written when its answer has been read to the end: ``{"request": {"method",
"url", "body"}, "response": {"status", "body"}, "elapsed_ms"}``, the HTTP-wrapped exchange the replay reads
(:mod:`toolsearch_lab.replay.exchanges`). A streamed answer (server-sent events) is assembled into the body
the same call returns unstreamed (:mod:`.sse`), so a streamed run and an unstreamed one record alike; a stream
that cannot be assembled is kept as its text, and the replay says why it cannot read it.

Never written: any header (the API key travels in one), the URL's query string and credentials (the URL
keeps scheme, host and path). Every body is kept as the server sent it: what it holds is the run's.
Lines are appended one whole line per write (:func:`toolsearch_lab.atomic.append_line`); a recorder starts
its file empty unless ``append=True``. Calls to other endpoints (``GET /models``, uploads) pass unrecorded.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2

from toolsearch_lab.atomic import append_line, write_text
from toolsearch_lab.models.sse import StreamError, assemble, is_event_stream

__all__ = ["MODEL_ENDPOINTS", "Recorder", "record_client"]

MODEL_ENDPOINTS = ("/messages", "/chat/completions", "/responses")


class Recorder:
    """Writes the model calls that pass through its transports to ``path`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str], *, append: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.exchanges = 0
        if not append or not self.path.exists():
            write_text(self.path, "")

    def transport(self, inner: httpx2.BaseTransport | None = None) -> httpx2.BaseTransport:
        """A transport that records, around ``inner`` (default: an ordinary HTTP transport)."""
        return RecordingTransport(self, inner or httpx2.HTTPTransport())

    def async_transport(self, inner: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncBaseTransport:
        return AsyncRecordingTransport(self, inner or httpx2.AsyncHTTPTransport())

    def http_client(self, **options: Any) -> httpx2.Client:
        """An HTTP client for an SDK's ``http_client=``; ``options`` go to ``httpx2.Client``."""
        return httpx2.Client(transport=self.transport(), **options)

    def async_http_client(self, **options: Any) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=self.async_transport(), **options)

    def records(self, request: httpx2.Request) -> bool:
        return request.method == "POST" and request.url.path.rstrip("/").endswith(MODEL_ENDPOINTS)

    def write(
        self, request: httpx2.Request, sent: bytes, response: httpx2.Response, raw: bytes, ms: float
    ) -> None:
        """One exchange, appended: the request's body, the answer's status and body (assembled when it was
        streamed), how long it took; never a header, a query string or URL credentials."""
        url = request.url
        record = {
            "request": {
                "method": request.method,
                "url": f"{url.scheme}://{url.host}{f':{url.port}' if url.port else ''}{url.path}",
                "body": _body(sent),
            },
            "response": {"status": response.status_code, "body": _answer(response, raw)},
            "elapsed_ms": round(ms, 1),
        }
        try:
            line = json.dumps(record, ensure_ascii=False)
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a body (valid JSON escape): escape everything
            line = json.dumps(record, ensure_ascii=True)
        with self._lock:
            append_line(self.path, line)
            self.exchanges += 1


def record_client(client: Any, path: str | os.PathLike[str], *, append: bool = False) -> Any:
    """A copy of an ``openai``/``anthropic`` client (sync or async) whose model calls are recorded to
    ``path``. It gets a new HTTP client: options set on the old one's (a proxy, auth) are not carried over."""
    recorder = Recorder(path, append=append)
    asynchronous = type(client).__name__.startswith("Async")
    http = recorder.async_http_client() if asynchronous else recorder.http_client()
    return client.with_options(http_client=http)


def _body(sent: bytes) -> Any:
    text = sent.decode("utf-8", errors="replace")
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return text


def _answer(response: httpx2.Response, raw: bytes) -> Any:
    """The answer's body: decoded as the client decodes it (gzip...), JSON parsed, a stream assembled."""
    decoded = httpx2.Response(response.status_code, headers=response.headers, content=raw).read()
    text = decoded.decode("utf-8", errors="replace")
    streamed = "text/event-stream" in response.headers.get("content-type", "")
    if streamed or is_event_stream(text):
        try:
            return assemble(text)
        except StreamError:
            return text  # kept whole: the replay names what is wrong with it
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class RecordingTransport(httpx2.BaseTransport):
    def __init__(self, recorder: Recorder, inner: httpx2.BaseTransport) -> None:
        self.recorder, self.inner = recorder, inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        started = time.perf_counter()
        response = self.inner.handle_request(request)
        if not self.recorder.records(request):
            return response
        sent = request.read()

        def done(raw: bytes) -> None:
            self.recorder.write(request, sent, response, raw, (time.perf_counter() - started) * 1000)

        stream = _Tee(response.stream, done)  # type: ignore[arg-type]
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
        )

    def close(self) -> None:
        self.inner.close()


class _Tee(httpx2.SyncByteStream):
    """The answer's bytes as they pass to the client; ``done`` gets them all when the client closes it."""

    def __init__(self, inner: Iterator[bytes] | httpx2.SyncByteStream, done: Callable[[bytes], None]) -> None:
        self.inner, self.done, self.finished = inner, done, False
        self.chunks: list[bytes] = []

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            self.chunks.append(chunk)
            yield chunk

    def close(self) -> None:
        if self.finished:
            return
        self.finished = True
        try:
            closer = getattr(self.inner, "close", None)
            if closer is not None:
                closer()
        finally:
            self.done(b"".join(self.chunks))


class AsyncRecordingTransport(httpx2.AsyncBaseTransport):
    def __init__(self, recorder: Recorder, inner: httpx2.AsyncBaseTransport) -> None:
        self.recorder, self.inner = recorder, inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        started = time.perf_counter()
        response = await self.inner.handle_async_request(request)
        if not self.recorder.records(request):
            return response
        sent = await request.aread()

        def done(raw: bytes) -> None:
            self.recorder.write(request, sent, response, raw, (time.perf_counter() - started) * 1000)

        stream = _AsyncTee(response.stream, done)  # type: ignore[arg-type]
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _AsyncTee(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, done: Callable[[bytes], None]) -> None:
        self.inner, self.done, self.finished = inner, done, False
        self.chunks: list[bytes] = []

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.chunks.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        if self.finished:
            return
        self.finished = True
        try:
            await self.inner.aclose()
        finally:
            self.done(b"".join(self.chunks))
