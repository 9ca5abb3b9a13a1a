"""The exchanges of an API transcript: each ``{"request": ..., "response": ...}`` unwrapped to its two
bodies, whether they were logged bare or HTTP-wrapped (``{"method", "url", "headers", "body"}`` /
``{"status", "headers", "body"}``), as JSON or as JSON text; a streamed answer logged as its server-sent
events is assembled into the body the call returns unstreamed. Headers are dropped unread and a URL keeps
only its host, so no credential a logger stored can reach a trace; a failed call is named and left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from toolsearch_lab.models.sse import StreamError, assemble, is_event_stream
from toolsearch_lab.replay.common import TranscriptError, expect

__all__ = ["Exchange", "exchanges", "text_body"]

REQUEST_WRAPPER_KEYS = frozenset({"method", "url", "path", "headers", "body", "query"})
RESPONSE_WRAPPER_KEYS = frozenset({"status", "status_code", "headers", "body", "reason"})
EXCHANGE_META_KEYS = frozenset(
    {"elapsed_ms", "duration_ms", "latency_ms", "timestamp", "time", "id", "status_code", "meta", "metadata"}
)


class Exchange:
    """One request/response pair of an API transcript, unwrapped: the two bodies, the HTTP status, the host
    it went to (never the URL's credentials or the headers) and where it sits in the file."""

    def __init__(
        self, number: int, request: dict[str, Any], response: dict[str, Any], status: int, host: str | None
    ) -> None:
        self.number = number
        self.request = request
        self.response = response
        self.status = status
        self.host = host

    @property
    def where(self) -> str:
        return f"exchange {self.number}"


def exchanges(records: list[Any], where: str, notes: list[str]) -> list[Exchange]:
    """Every exchange unwrapped; a failed call (an HTTP error, an error body) is named in ``notes`` and left
    out, since the request it answered is sent again by the next exchange."""
    out: list[Exchange] = []
    for number, record in enumerate(records, start=1):
        at = f"{where}: exchange {number}"
        record = expect(record, Mapping, at, "an object with 'request' and 'response'")
        for key in ("request", "response"):
            if key not in record:
                raise TranscriptError(
                    f"{at}: no {key!r} (an exchange is {{'request': ..., 'response': ...}})"
                )
        unknown = sorted(
            str(k) for k in record if k not in ("request", "response") and k not in EXCHANGE_META_KEYS
        )
        if unknown:
            notes.append(f"exchange {number}: keys {unknown} are not read")
        request, _, host = _unwrap(record["request"], REQUEST_WRAPPER_KEYS, f"{at}, request")
        response, status, _ = _unwrap(record["response"], RESPONSE_WRAPPER_KEYS, f"{at}, response")
        if not 200 <= status < 300 or _is_error_body(response):
            notes.append(
                f"exchange {number}: the call failed (HTTP {status}{_error_kind(response)}); left out"
            )
            continue
        out.append(Exchange(number, request, response, status, host))
    if not out:
        raise TranscriptError(f"{where}: no exchange succeeded, so there is nothing to replay")
    return out


def _unwrap(value: Any, wrapper_keys: frozenset[str], where: str) -> tuple[dict[str, Any], int, str | None]:
    """(body, HTTP status, host): the body itself, or the ``body`` of an HTTP-wrapped record."""
    if isinstance(value, str):  # a bare body logged as its text (JSON, or a stream's events)
        value = expect(text_body(value, where), Mapping, where, "a JSON object")
    value = expect(value, Mapping, where, "an object")
    status, host = 200, None
    if "body" in value and set(value) & (wrapper_keys - {"body"}):
        raw_status = value.get("status", value.get("status_code", 200))
        status = raw_status if isinstance(raw_status, int) and not isinstance(raw_status, bool) else 200
        url = value.get("url")
        host = (urlparse(url).hostname or None) if isinstance(url, str) else None
        value = value["body"]
        if isinstance(value, str):
            value = text_body(value, f"{where}.body")
        value = expect(value, Mapping, f"{where}.body", "a JSON object")
    return dict(value), status, host


def text_body(text: str, where: str) -> Any:
    """A body logged as text: its JSON, or, for a streamed answer, the server-sent events assembled into the
    body the call returns unstreamed (:mod:`toolsearch_lab.models.sse`)."""
    if is_event_stream(text):
        try:
            return assemble(text)
        except StreamError as exc:
            raise TranscriptError(f"{where}: a streamed body that cannot be read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise TranscriptError(f"{where}: a text body that is neither JSON nor server-sent events") from None


def _is_error_body(body: Mapping[str, Any]) -> bool:
    return body.get("type") == "error" or ("error" in body and isinstance(body.get("error"), Mapping))


def _error_kind(body: Mapping[str, Any]) -> str:
    error = body.get("error")
    kind = error.get("type") or error.get("code") if isinstance(error, Mapping) else None
    return f", {kind}" if isinstance(kind, str) and kind.replace("_", "").isalnum() else ""
