"""Tools from a live MCP server (stdio, streamable HTTP or legacy SSE), callable from synchronous code.

The official ``mcp`` SDK is async and its session must live in one task for its whole life. The advisor
loop and notebooks are synchronous, so :class:`McpConnection` owns a background thread running an event loop
that holds the session; sync callers submit coroutines to it and wait with a deadline. Every wait is
bounded: the session's ``read_timeout_seconds`` (an alive-but-stuck server) plus a wall-clock limit here (in
case the SDK itself never answers). A server that exits makes the SDK fail pending and later calls with
"Connection closed" at once; we turn that into :class:`McpToolError` with the tail of the server's stderr.

Tool results become text (what a model reads): the text blocks joined with newlines; when there is no text,
``structured_content`` as JSON; other blocks (images, audio, resources) as a one-line placeholder.
``is_error=True`` results (unknown tool, bad arguments, the tool raised) **raise** :class:`McpToolError`
carrying the server's message; the advisor turns a raised exception into an error tool result for the model.

Start-up has its own, generous deadline (``startup_timeout``, 30 s: a cold Python server on a busy machine
takes seconds to import its SDK), separate from the per-request ``timeout``; the catalog loaders hold the
first listing to what is left of it (:meth:`McpConnection.listing` takes a deadline). An error the server
sends is named by its JSON-RPC code and message; a server that exits gets one restart, counted once however
many calls fail with it. A server process that exits
during start-up is noticed at once (its stdout closes), so a broken command fails fast either way. An HTTP
server that refuses us is named with its status (``HTTP 401 Unauthorized: …``).

``tools/list`` is read as sent (:meth:`McpConnection.tool_records`), not through the SDK's all-or-nothing
validation of the whole page: each record is checked on its own by the catalog loader, so one malformed
record costs only itself. The listing is bounded (:data:`MAX_LIST_PAGES` pages, :data:`MAX_LIST_CHARS`
characters, a cursor the server repeats ends it); what the server printed on stdout that is not JSON-RPC
is counted and named instead of filling the terminal (:mod:`toolsearch_lab.catalog.mcp_wire`).

Secrets: every ``env`` and ``headers`` value and the URL are held in a
:class:`~toolsearch_lab.secrets.Secret`, so the connection keeps no plain copy (``vars()`` shows ``'***'``).
What is registered, and so hidden from every message, stderr tail and log line, is what is a secret
(:mod:`toolsearch_lab.secrets.keys`): header values, URL userinfo, an ``env`` value whose name says so or that
is key-shaped (a ``Secret`` passed in ``env``, or a value in ``secrets``, is one whatever its name), and the
secret values written in ``args``. A tool's result is returned as the server sent it: the loop hides secrets
from what the model reads.

This module knows nothing of catalogs: :mod:`toolsearch_lab.catalog.live` (``connect_mcp_stdio``,
``connect_mcp_config``, ``catalog_from_connection``) turns a connection's :meth:`McpConnection.tool_records`
into a catalog and keeps the connections beside it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import jsonschema  # noqa: F401  (the mcp client imports it lazily on the first call_tool: ~1 s; pay it here)
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from toolsearch_lab.catalog.mcp_wire import (
    MAX_LIST_CHARS,
    MAX_LIST_PAGES,
    ToolListing,
    WireLog,
    exception_leaves,
    http_streams,
    install_stdio_hook,
    listing_bound,
    quiet_sdk_logs,
    raw_request,
    remember_output_schemas,
    result_to_text,
    watched_http_client,
)
from toolsearch_lab.jsonlimits import shown
from toolsearch_lab.secrets import (
    RedactedError,
    Secret,
    argument_secrets,
    header_secret,
    install_log_redaction,
    redact_url,
    scrub,
    setting_secret,
    shown_arguments,
    url_secret,
)

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT_S",
    "MAX_LIST_CHARS",
    "MAX_LIST_PAGES",
    "TRANSPORTS",
    "McpConnection",
    "McpToolError",
    "ToolListing",
    "result_to_text",
]

TRANSPORTS = ("stdio", "http", "sse")

DEFAULT_STARTUP_TIMEOUT_S = 30.0
# The SDK's parser hook, the quieting of its log lines for our connections and the redaction of secrets
# from its (and httpx's) log lines: installed once, when this module is imported.
install_stdio_hook()
quiet_sdk_logs()
install_log_redaction()

# Extra wall-clock allowance on top of the SDK's own read timeout before a sync wait gives up.
_GRACE_SECONDS = 5.0
# How long the ping that tells a closed connection from a server's error answer may take (_mcp_error).
_PING_SECONDS = 5.0
_T = TypeVar("_T")  # what a request run on the connection's loop returns


class McpToolError(RedactedError):
    """An MCP server could not be started, reached, or it reported a tool error. The message says which
    server (command) and which tool, with secrets hidden (``secret_hidden`` says whether one was)."""


class McpConnection:
    """A running MCP server process and an initialised client session, usable from synchronous code.

    ``timeout`` bounds each request (seconds), ``startup_timeout`` the spawn + initialize. Use it as a
    context manager or call :meth:`close`; closing twice is fine. The server's stderr is kept in a temporary
    file (its last lines appear in error messages) instead of mixing into the notebook output.
    """

    def __init__(
        self,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str | Secret] | None = None,
        *,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: str | None = None,
        name: str | None = None,
        secrets: Sequence[str | Secret] = (),
        timeout: float = 30.0,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT_S,
        max_restarts: int = 1,
    ) -> None:
        if timeout <= 0 or startup_timeout <= 0:
            raise ValueError(
                f"timeouts must be > 0, got timeout={timeout}, startup_timeout={startup_timeout}"
            )
        transport = transport or ("stdio" if url is None else "http")
        if transport not in TRANSPORTS:
            raise ValueError(f"MCP transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        if (transport == "stdio") != (command is not None) or (transport != "stdio") != (url is not None):
            raise ValueError(
                f"an MCP {transport} server needs {'a command' if transport == 'stdio' else 'a url'}"
            )
        self.command = command
        self.args = list(args)
        self.transport = transport
        self.url = redact_url(url)
        self.timeout = float(timeout)
        self.startup_timeout = float(startup_timeout)
        # Header values, env values, the URL and what the caller marks are held as Secrets, those that are
        # secrets registered (see the module docstring); no plain copy is kept: the SDK's parameters are
        # built when the transport opens.
        self._headers = {str(k): header_secret(str(k), str(v)) for k, v in (headers or {}).items()}
        self._env = {
            str(k): setting_secret(str(k), v if isinstance(v, Secret) else str(v))
            for k, v in (env or {}).items()
        }
        self._cwd = cwd
        self._secrets = [
            *(s if isinstance(s, Secret) else Secret(str(s)) for s in secrets),
            *(Secret(v) for v in argument_secrets(self.args)),
        ]
        where = " ".join(shown_arguments([command, *self.args])) if command is not None else str(self.url)
        where = self._scrub(where)
        self.name = name
        self.label = where if name is None else f"{name} ({where})"
        self.server_info: Any = None
        self._url = url_secret(url) if url is not None else None
        self._wire = WireLog()
        self.last_listing: ToolListing | None = None
        # Lives as long as the connection (closed in close()), so no context manager.
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._session: ClientSession | None = None
        self._closed = False
        self._server_gone = False  # set when a call finds the server process gone ("Connection closed")
        self._serve_future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"mcp:{where}", daemon=True)
        self._thread.start()
        self._stop: asyncio.Event | None = None
        self.max_restarts = max_restarts
        self.restarts: list[str] = []  # why each restart happened, in order
        self._restart_lock = threading.Lock()
        self._generation = 0  # which start of the server the session belongs to; a restart adds one
        self._start()

    def _start(self) -> None:
        """Spawn (or reach) the server and initialise a session, within ``startup_timeout``."""
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._server_gone = False
        self._serve_future = asyncio.run_coroutine_threadsafe(self._serve(), self._loop)
        if not self._ready.wait(self.startup_timeout):
            tail = self._stderr_tail()
            self.close()
            message = f"MCP server {self.label!r} did not start within {self.startup_timeout:g} s"
            raise McpToolError(message + tail)
        if self._startup_error is not None:
            tail = self._stderr_tail()
            self.close()
            reasons = self._wire.http_reason() or "; ".join(
                f"{type(e).__name__}: {e}" for e in exception_leaves(self._startup_error)
            )
            message = f"MCP server {self.label!r} failed to start: {reasons}{tail}"
            raise McpToolError(message) from None

    def _restart(self, why: str, generation: int) -> str:
        """Start the server again after it died (at most ``max_restarts`` times): what to tell the caller.
        ``generation`` is the start of the server the failed call used, so calls that fail together (on
        several threads) restart it once and the count stays exact."""
        with self._restart_lock:
            if self._generation != generation:
                done = f"{len(self.restarts)} of {self.max_restarts}"
                return f"; the server was restarted by another call ({done}): call again"
            if len(self.restarts) >= self.max_restarts:
                return f"; it was restarted {len(self.restarts)} time(s) already, so it stays down"
            if self._stop is not None:
                self._loop.call_soon_threadsafe(self._stop.set)
            with contextlib.suppress(Exception):
                self._serve_future.result(_GRACE_SECONDS)
            self.restarts.append(why)
            self._generation += 1
            try:
                self._start()
            except McpToolError as exc:
                return f"; restarting it failed: {exc}"
            return f"; the server was restarted ({len(self.restarts)} of {self.max_restarts}): call again"

    def _scrub(self, message: str) -> str:
        return scrub(message, self._secrets)

    def _open_transport(self) -> Any:
        """The SDK's transport context manager, yielding ``(read, write)`` streams."""
        if self.command is not None:
            env = {k: v.reveal() for k, v in self._env.items()} or None
            params = StdioServerParameters(command=self.command, args=self.args, env=env, cwd=self._cwd)
            return stdio_client(params, errlog=self._stderr)
        assert self._url is not None
        headers = {k: v.reveal() for k, v in self._headers.items()}
        factory = watched_http_client(self._wire)
        if self.transport == "sse":
            return sse_client(
                self._url.reveal(),
                headers=headers or None,
                timeout=self.startup_timeout,
                httpx_client_factory=factory,
            )
        return http_streams(self._url.reveal(), headers, factory)

    async def _serve(self) -> None:
        """Holds the transport and session open (they must be entered and left in one task) until close."""
        self._stop = asyncio.Event()
        self._wire.watch()  # this task and the transport's tasks it starts are this connection's
        try:
            # The session's default read timeout covers only initialize (spawn + SDK import on the server
            # side); every later request passes or enforces self.timeout.
            async with (
                self._open_transport() as streams,
                ClientSession(streams[0], streams[1], read_timeout_seconds=self.startup_timeout) as session,
            ):
                initialized = await session.initialize()
                self.server_info = initialized.server_info
                self._session = session
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001  (reported to the waiting caller, never lost)
            if not self._ready.is_set():
                self._startup_error = exc
        finally:
            self._session = None
            self._ready.set()

    # -- sync API ----------------------------------------------------------------------------------------
    def _run(
        self,
        coro_factory: Callable[[ClientSession], Coroutine[Any, Any, _T]],
        what: str,
        timeout: float | None = None,
        limit: str = "timeout",
    ) -> _T:
        """``coro_factory(session)`` on the connection's loop, waited for ``timeout`` seconds (default
        ``self.timeout``, named ``limit`` in the error) plus a grace period."""
        if self._closed:
            raise McpToolError(f"MCP server {self.label!r}: connection is closed ({what})")
        generation = self._generation  # read before the session: a restart replaces the session after it
        session = self._session
        if session is None:
            raise McpToolError(f"MCP server {self.label!r} is not connected ({what}){self._stderr_tail()}")
        seconds = self.timeout if timeout is None else timeout
        started = time.monotonic()
        future = asyncio.run_coroutine_threadsafe(coro_factory(session), self._loop)
        try:
            return future.result(seconds + _GRACE_SECONDS)
        # concurrent.futures.TimeoutError is the builtin TimeoutError on 3.11+, its own class on 3.10.
        except (concurrent.futures.TimeoutError, TimeoutError):
            if not future.done():
                future.cancel()
                waited = seconds + _GRACE_SECONDS
                raise McpToolError(
                    f"MCP server {self.label!r}: {what} gave no answer within {waited:g} s"
                ) from None
            # anyio.fail_after inside the request raised TimeoutError: the request's own deadline.
            raise McpToolError(
                f"MCP server {self.label!r}: {what} failed: no answer within the {seconds:.3g} s {limit}"
            ) from None
        except MCPError as exc:
            message = self._mcp_error(exc, what, session, generation, time.monotonic() - started)
            raise McpToolError(message) from None
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
            raise McpToolError(
                f"MCP server {self.label!r}: {what} failed: {problem}{self._stderr_tail()}"
            ) from None

    def _mcp_error(
        self, exc: MCPError, what: str, session: ClientSession, generation: int, waited: float
    ) -> str:
        """What to say of an ``MCPError``: the SDK's own "connection closed" (the server exited: it gets
        one restart) and "timed out", or an error answer the server sent, named by its JSON-RPC code and
        message. The SDK's codes are in JSON-RPC's range for servers, so a server may send them too: a
        closed connection is told apart by a ping (:meth:`_gone`), the SDK's timeout by the time waited
        (never less than the shortest of the connection's timeouts)."""
        code = exc.error.code
        if code == CONNECTION_CLOSED and self._gone(session):
            reason = "the server closed the connection (did it exit?)"
            self._server_gone = True  # ``alive`` stops saying True, and it gets one restart
            restarted = self._restart(f"{what}: {reason}", generation)
            return f"MCP server {self.label!r}: {what} failed: {reason}{self._stderr_tail()}{restarted}"
        if code == REQUEST_TIMEOUT and waited >= min(self.timeout, self.startup_timeout):
            reason = f"no answer within the {self.timeout:g} s timeout"
        else:
            http = self._wire.http_reason()
            reason = (
                http or f"the server answered with JSON-RPC error {code}: {shown(exc.error.message, 300)}"
            )
        return f"MCP server {self.label!r}: {what} failed: {reason}{self._stderr_tail()}"

    def _gone(self, session: ClientSession) -> bool:
        """The server is gone: a ping gets no answer (the SDK refuses it at once with its "connection
        closed" when the connection is). Any answer, an error answer included, means it is there."""
        ping = asyncio.run_coroutine_threadsafe(session.send_ping(), self._loop)
        try:
            ping.result(min(self.timeout, _PING_SECONDS))
        except MCPError as exc:
            return exc.error.code == CONNECTION_CLOSED
        except Exception:  # noqa: BLE001  (no answer in time, or the transport failed: as good as gone)
            ping.cancel()
            return True
        return False

    def listing(self, timeout: float | None = None, limit: str = "timeout") -> ToolListing:
        """Every ``tools/list`` page as the server sent it, following cursors within the bounds of the
        module docstring (see :class:`ToolListing`), all pages within ``timeout`` seconds (default
        ``self.timeout``; ``limit`` names it in the error). The SDK's validation of the whole page is
        bypassed on purpose: it refuses every tool for one malformed record."""
        seconds = self.timeout if timeout is None else timeout
        wire = self._wire

        async def list_all(session: ClientSession) -> ToolListing:
            listing = ToolListing([], pages=0)
            sent: str | None = None
            chars = 0
            with anyio.fail_after(seconds):  # the whole listing, every page
                while True:
                    wire.listing_duplicates.clear()
                    page = await raw_request(session, "tools/list", {"cursor": sent} if sent else None)
                    listing.pages += 1
                    chars += len(json.dumps(page, default=str))
                    tools = page.get("tools") if isinstance(page, dict) else None
                    if not isinstance(tools, list):
                        kind = type(tools).__name__ if isinstance(page, dict) else type(page).__name__
                        raise McpToolError(f"its tools/list answer has no 'tools' list (got {kind})")
                    cursor = page.get("nextCursor")
                    if sent is not None and cursor == sent:
                        listing.problems.append(
                            f"the server answered cursor {str(sent)[:40]!r} with the same cursor again; "
                            f"listing stopped after {listing.pages - 1} page(s)"
                        )
                        break
                    for path in wire.listing_duplicates:
                        index = int(path[len("tools[") : path.index("]")])
                        listing.duplicates[len(listing.records) + index] = path.split(".", 1)[-1]
                    listing.records.extend(tools)
                    stop = listing_bound(listing, chars)
                    if stop:
                        listing.problems.append(stop)
                        break
                    if not isinstance(cursor, str) or not cursor:
                        break
                    sent = cursor
            remember_output_schemas(session, listing.records)
            return listing

        listing = self._run(list_all, "tools/list", seconds, limit)
        note = wire.noise_note()
        if note:
            listing.notes.append(self._scrub(note))
        for i, record in enumerate(listing.records):
            if isinstance(record, dict) and record.get("description") is None and "name" in record:
                listing.records[i] = {**record, "description": ""}
                listing.undescribed.append(str(record["name"]))
        self.last_listing = listing
        return listing

    def tool_records(self) -> tuple[list[Any], list[str]]:
        """The server's ``tools/list`` records as sent (:meth:`listing`), and the names of those without a
        description (optional in MCP; they get ``""``)."""
        listing = self.listing()
        return listing.records, listing.undescribed

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call ``name`` and return its result as text; raise :class:`McpToolError` on ``is_error``, a dead
        or silent server, or a closed connection."""
        args = dict(arguments or {})
        result = self._run(
            lambda s: s.call_tool(name, args, read_timeout_seconds=self.timeout), f"tool {name!r}"
        )
        # The result as the server sent it (data); its error message is shown, so McpToolError hides secrets.
        text = result_to_text(result)
        if result.is_error:
            raise McpToolError(f"MCP tool {name!r} reported an error: {text or '(no message)'}")
        return text

    def tool_function(self, name: str) -> Callable[..., str]:
        """A plain function ``f(**arguments) -> str`` calling tool ``name`` (what ``Tool.function`` holds)."""

        def call(**arguments: Any) -> str:
            return self.call_tool(name, arguments)

        call.__name__ = call.__qualname__ = name if name.isidentifier() else "mcp_tool"
        call.__doc__ = f"Calls MCP tool {name!r} on {self.label!r}."
        return call

    @property
    def alive(self) -> bool:
        return (
            not self._closed
            and not self._server_gone
            and self._session is not None
            and not self._serve_future.done()
        )

    def close(self) -> None:
        """Ends the session and the server process (the SDK closes stdin, then terminates it), bounded."""
        if self._closed:
            return
        self._closed = True
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        try:
            self._serve_future.result(_GRACE_SECONDS + 5)
        except Exception:  # noqa: BLE001  (a shutdown problem must not hide the caller's own error)
            self._serve_future.cancel()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_GRACE_SECONDS)
        if not self._thread.is_alive():
            self._loop.close()
        self._stderr.close()

    def __enter__(self) -> McpConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"McpConnection({self.label!r}, {'alive' if self.alive else 'closed'})"

    def _stderr_tail(self, lines: int = 8) -> str:
        """The last lines the server wrote on stderr, for an :class:`McpToolError`'s message, which hides any
        secret in them (a server may print its own token)."""
        if self.command is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            tail = self._stderr.read().strip().splitlines()[-lines:]
        except (OSError, ValueError):
            return ""
        return "\nserver stderr (last lines):\n  " + "\n  ".join(tail) if tail else ""
