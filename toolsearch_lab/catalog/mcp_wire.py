"""What a server puts on the wire that the MCP SDK does not tell us: lines on stdout that are not JSON-RPC,
answers nested too deep to parse, keys named twice, and HTTP status codes. :class:`WireLog` collects them
for one :class:`~toolsearch_lab.catalog.mcp.McpConnection`, which turns them into named errors and notes.

Three seams, each checked by tests/test_mcp_isolation.py against the SDK version installed:

* stdio: the SDK parses each line of the server's stdout in ``mcp.client.stdio._parse_line``, logging a
  traceback for each line that is not JSON (a server printing "Loading configuration…" filled the terminal
  with them). :func:`install_stdio_hook` wraps that function once (the patch itself lives in
  :mod:`toolsearch_lab.compat`, with the others); for a connection of ours (a
  :data:`_WATCHED` context variable, which the SDK's reader task inherits from ours) the line is parsed
  here: noise is counted and dropped without a traceback, an answer nested deeper than the parser takes
  fails its request at once with a named reason (the SDK would drop it and wait for the timeout), and a
  ``tools/list`` answer that names a key twice is noted. Other users of the SDK in the process are served
  by the original function.
* HTTP: a response hook on the SDK's HTTP client records the status of a refused request (401, 403,
  404…) with its ``WWW-Authenticate`` header, and checks JSON answers for keys named twice.
* logs: the SDK's own error log lines for a connection of ours are lowered to DEBUG, since each becomes
  a named error or note of ours; they stay visible to anyone logging at DEBUG.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.compat import (
    mcp_request_sender,
    patch_mcp_stdio_parser,
    set_mcp_output_schemas,
    stamp_mcp_request,
)
from toolsearch_lab.jsonlimits import duplicate_key_path, text_depth
from toolsearch_lab.secrets import scrub

__all__ = [
    "MAX_LIST_CHARS",
    "MAX_LIST_PAGES",
    "MAX_LIST_TOOLS",
    "MAX_WIRE_DEPTH",
    "SDK_JSON_DEPTH",
    "ToolListing",
    "WireLog",
    "exception_leaves",
    "http_streams",
    "install_stdio_hook",
    "listing_bound",
    "quiet_sdk_logs",
    "raw_request",
    "remember_output_schemas",
    "result_to_text",
    "watched_http_client",
]

# Tools/list answers are checked for repeated keys up to this size (bigger ones are parsed by the SDK only).
_MAX_CHECKED_CHARS = 20_000_000
# Deepest answer parsed here when the SDK's parser gives up (Python's own parser recurses once per level
# and fails near 1,000); the catalog loader then refuses records deeper than its MAX_CATALOG_DEPTH by name.
MAX_WIRE_DEPTH = 600
# Deepest nesting (jsonlimits.text_depth) the SDK's JSON parser, pydantic-core's, takes: 200 levels of
# objects, 201 of arrays in pydantic-core 2.50 (tests/test_mcp_isolation.py checks it). Its error names no
# cause by type, so a refused line is taken as too deep by its measured depth, never by the error's words.
SDK_JSON_DEPTH = 200
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_HTTP_REASONS = {
    401: "401 Unauthorized: the server wants credentials it did not get or did not accept; check the "
    "Authorization header (or token) in the config",
    403: "403 Forbidden: the credentials were accepted but may not use this endpoint",
    404: "404 Not Found: nothing answers MCP at this URL; check its path (often /mcp, or /sse for SSE)",
    405: "405 Method Not Allowed: this URL does not take MCP requests; check the transport (http or sse)",
}
# Bounds of one tools/list: pages, characters of JSON (all pages) and tool records. A real server sends
# one page of well under 1 MB; these stop one that pages forever or sends megabytes of padding.
MAX_LIST_PAGES = 100
MAX_LIST_CHARS = 20_000_000
MAX_LIST_TOOLS = 10_000

_WATCHED: contextvars.ContextVar[WireLog | None] = contextvars.ContextVar("mcp_wire", default=None)


@dataclass
class ToolListing:
    """One ``tools/list`` as the server sent it (:meth:`McpConnection.listing`): ``records`` in order, each
    as sent (a malformed one too: the catalog loader names and drops it), ``duplicates`` (record index ->
    the key it names twice), ``undescribed`` (names without a description; ``""`` is used), ``problems``
    (the listing stopped early, and why) and ``notes`` (stdout noise)."""

    records: list[Any]
    pages: int = 1
    duplicates: dict[int, str] = field(default_factory=dict)
    undescribed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class WireLog:
    """What one connection's server sent that the SDK does not report (see the module docstring)."""

    noise_lines: int = 0
    first_noise: str = ""
    listing_duplicates: list[str] = field(default_factory=list)  # "tools[3].description", newest listing
    http_status: int | None = None
    www_authenticate: str = ""

    def watch(self) -> contextvars.Token[WireLog | None]:
        """Mark the calling task (and the tasks it starts) as this connection's."""
        return _WATCHED.set(self)

    def noise_note(self) -> str | None:
        """A note for the report when the server printed lines that are not JSON-RPC, or None."""
        if not self.noise_lines:
            return None
        return (
            f"the server printed {self.noise_lines} line(s) on stdout that are not JSON-RPC (ignored; "
            f"stdout is the protocol channel, logs belong on stderr); first: {self.first_noise!r}"
        )

    def http_reason(self) -> str | None:
        """``HTTP 401 Unauthorized: …`` for the last refused HTTP request, or None."""
        if self.http_status is None:
            return None
        reason = _HTTP_REASONS.get(self.http_status, f"{self.http_status}: the server refused the request")
        challenge = f" (WWW-Authenticate: {self.www_authenticate})" if self.www_authenticate else ""
        return f"HTTP {reason}{challenge}"

    # -- stdio ---------------------------------------------------------------------------------------------
    def parse_line(self, line: str, original: Callable[[str], Any]) -> Any:
        """One stdout line of our server: what the SDK's reader passes on (a message or an exception)."""
        text = line.strip()
        if not text.startswith(("{", "[")):
            if text:
                self.noise_lines += 1
                self.first_noise = self.first_noise or scrub(text[:120])
            return ValueError("a line on stdout that is not JSON-RPC (counted, ignored)")
        try:
            message = _validate(text)
        except ValueError as exc:
            return self._unparsable(text, exc)
        if '"tools"' in text and len(text) <= _MAX_CHECKED_CHARS:
            self._check_listing(text)
        return message

    def _unparsable(self, text: str, exc: ValueError) -> Any:
        """A JSON-looking line the SDK's parser refused. Nested deeper than that parser goes
        (:data:`SDK_JSON_DEPTH`) but within :data:`MAX_WIRE_DEPTH`, it is parsed here instead, so the one
        deep record is refused by name later and the rest of the page loads. Otherwise its request is
        answered with a named error now, when its id can be read, instead of being left to time out."""
        from mcp.shared.message import SessionMessage
        from mcp.types import ErrorData, JSONRPCError, jsonrpc_message_adapter

        depth = text_depth(text)
        refused: BaseException = exc
        if SDK_JSON_DEPTH < depth <= MAX_WIRE_DEPTH:
            try:
                value = json.loads(text)
                return SessionMessage(jsonrpc_message_adapter.validate_python(value, by_name=False))
            except (ValueError, RecursionError) as own:
                refused = own  # what is wrong with it, now that depth is not
        found = _ID.search(text[:500])
        if found is None:
            return exc
        why = (
            f"the server's answer is nested {depth} levels deep, more than the {MAX_WIRE_DEPTH} this client "
            "parses (MAX_WIRE_DEPTH)"
            if depth > MAX_WIRE_DEPTH
            else f"the server's answer is not valid JSON-RPC ({_first_line(refused)})"
        )
        error = ErrorData(code=-32700, message=why)
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=json.loads(found.group(1)), error=error))

    def _check_listing(self, text: str) -> None:
        try:
            path = duplicate_key_path(text)
        except (ValueError, RecursionError):
            return
        if path is not None and path.startswith("result.tools["):
            self.listing_duplicates.append(path.removeprefix("result."))

    # -- HTTP ----------------------------------------------------------------------------------------------
    async def on_response(self, response: Any) -> None:
        """httpx response hook: remember a refusal's status, check a JSON tools/list answer."""
        status = response.status_code
        if status >= 400:
            self.http_status = status
            self.www_authenticate = scrub(response.headers.get("www-authenticate", ""))[:200]
            return
        if not response.headers.get("content-type", "").lower().startswith("application/json"):
            return
        body = await response.aread()
        if b'"tools"' in body and len(body) <= _MAX_CHECKED_CHARS:
            self._check_listing(body.decode("utf-8", errors="replace"))


def _validate(text: str) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    return SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False))


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[1] if len(lines) > 1 else (lines[0] if lines else type(exc).__name__)


_HOOKED = False


def install_stdio_hook() -> None:
    """Route the SDK's stdio line parser through :func:`_route_line` once (see the module docstring and
    :func:`~toolsearch_lab.compat.patch_mcp_stdio_parser`); an SDK without that parser keeps its own
    parsing, and the wire log stays empty."""
    global _HOOKED
    if not _HOOKED:
        patch_mcp_stdio_parser(_route_line)
        _HOOKED = True


def _route_line(line: str, original: Callable[[str], Any]) -> Any:
    log = _WATCHED.get()
    return original(line) if log is None else log.parse_line(line, original)


def watched_http_client(log: WireLog) -> Callable[..., Any]:
    """A factory for the SDK's HTTP client (``create_mcp_http_client``'s arguments) whose responses
    ``log`` sees."""
    from mcp.shared._httpx_utils import create_mcp_http_client  # where the SDK defines and exports it

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks = {**client.event_hooks, "response": [log.on_response]}
        return client

    return factory


class _LowerWatched(logging.Filter):
    """Lowers the SDK's WARNING and ERROR records made for a connection of ours to DEBUG: each is reported
    as a named error or note of ours instead (a traceback per stdout line helps nobody)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _WATCHED.get() is not None and record.levelno > logging.DEBUG:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


_LOWER = _LowerWatched()


def quiet_sdk_logs() -> None:
    """Attach :class:`_LowerWatched` to the SDK's loggers (every ``mcp.*`` logger that exists; call it
    after importing the SDK). Idempotent."""
    names = [n for n in list(logging.root.manager.loggerDict) if n == "mcp" or n.startswith("mcp.")]
    for name in names:
        logger = logging.getLogger(name)
        if _LOWER not in logger.filters:
            logger.addFilter(_LOWER)


async def raw_request(session: Any, method: str, params: dict[str, Any] | None) -> Any:
    """A request's result as the server sent it (parsed JSON, not validated by the SDK). ``send_request``
    would validate the whole result against the protocol's types first, so one bad tool record would cost
    every tool; this stamps the request as ``send_request`` does and hands it to the session's dispatcher
    (the SDK's own next step; both seams in :mod:`toolsearch_lab.compat`). Timeouts: the caller's
    ``anyio.fail_after``."""
    send = mcp_request_sender(session)
    if send is None:  # an SDK without the seam: its validated listing (all or nothing) is what we get
        result = await session.list_tools(params=None if params is None else _paginated(params))
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    stamped, options = stamp_mcp_request(session, method, params)
    return await send(method, stamped, options)


def _paginated(params: dict[str, Any]) -> Any:
    from mcp.types import PaginatedRequestParams

    return PaginatedRequestParams(**params)


def listing_bound(listing: ToolListing, chars: int) -> str | None:
    """Why a listing must stop here (a bound of the module docstring reached), or None."""
    if listing.pages >= MAX_LIST_PAGES:
        return f"listing stopped after {MAX_LIST_PAGES} pages (MAX_LIST_PAGES): the server pages on and on"
    if chars > MAX_LIST_CHARS:
        return f"listing stopped after {chars:,} characters of JSON (MAX_LIST_CHARS = {MAX_LIST_CHARS:,})"
    if len(listing.records) > MAX_LIST_TOOLS:
        return f"listing stopped after {len(listing.records):,} tools (MAX_LIST_TOOLS = {MAX_LIST_TOOLS:,})"
    return None


def remember_output_schemas(session: Any, records: list[Any]) -> None:
    """Tell the session each listed tool's output schema, as its own ``list_tools`` would (it checks
    structured results against it, and without it would list the tools again, all or nothing, on the first
    call): :func:`~toolsearch_lab.compat.set_mcp_output_schemas`."""
    schemas: dict[str, dict[str, Any] | None] = {}
    for record in records:
        if isinstance(record, dict) and isinstance(record.get("name"), str):
            schema = record.get("outputSchema")
            schemas[record["name"]] = schema if isinstance(schema, dict) else None
    set_mcp_output_schemas(session, schemas)


def exception_leaves(exc: BaseException) -> list[BaseException]:
    """The real errors inside (nested) exception groups, which anyio task groups wrap everything in."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for e in inner for leaf in exception_leaves(e)]
    return [exc]


@contextlib.asynccontextmanager
async def http_streams(
    url: str, headers: Mapping[str, str], client_factory: Callable[..., Any]
) -> AsyncIterator[Any]:
    """Streamable HTTP with our headers: the SDK takes them on the HTTP client it is given. Yields the
    SDK's ``(read, write)`` streams."""
    from mcp.client.streamable_http import streamable_http_client

    async with (
        client_factory(headers=dict(headers) or None) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def result_to_text(result: Any) -> str:
    """A ``CallToolResult``'s content as the text a model gets (see the module docstring)."""
    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(
                f"[{kind} content: {getattr(block, 'mime_type', '?')}, {len(block.data or '')} base64 chars]"
            )
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.uri}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[embedded resource: {resource.uri}]")
        else:
            parts.append(f"[{kind} content]")
    text = "\n".join(parts)
    if not text and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return text
