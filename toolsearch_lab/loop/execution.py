"""Running one registered tool for the advisor: call its function, and turn what it returns (or raises)
into the text the model reads. Nothing here raises: every failure becomes an error result naming the tool.

Everything the loop sends back to the model as a tool message goes through :func:`bounded_content` (a result)
or :func:`bounded_error` (an error result), so ``max_tool_result_chars`` is one limit on every path: a 3 MB
exception text is cut like a 3 MB result.

A tool runs in a worker thread with a deadline (``AdvisorSettings.tool_timeout``, 60 s by default): one that
gives no answer in time becomes an error result saying so, and the run goes on. Python cannot stop a
thread, so the late call finishes (or hangs) in the background, its result dropped. A result must be text
or JSON data (dict, list, str, number, bool, None): bytes, sets, generators and other objects are refused
by name rather than sent as a ``repr`` with a memory address. The model is a reader like a person: every
result and error it reads has the registered secrets hidden (:mod:`toolsearch_lab.secrets`), before the cut
so that no part of a secret survives it, and flagged ``secret-hidden`` where one was (an error that hid its
own, :class:`~toolsearch_lab.secrets.RedactedError`, too); each is checked for text that looks like
injected instructions (:mod:`~toolsearch_lab.loop.result_flags`).
"""

from __future__ import annotations

import contextvars
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, dumps_checked
from toolsearch_lab.loop.policy import ToolCallRefused
from toolsearch_lab.loop.result_flags import SECRET_HIDDEN, injection_flags
from toolsearch_lab.loop.search_tool import MAX_ARGUMENT_DEPTH
from toolsearch_lab.model import Tool
from toolsearch_lab.secrets import RedactedError, scrub
from toolsearch_lab.trace import FailureKind
from toolsearch_lab.wire import error_result

__all__ = [
    "MAX_RESULT_DEPTH",
    "ToolOutcome",
    "bounded_content",
    "bounded_error",
    "cut_marker",
    "describe_exception",
    "invoke",
    "run_tool",
]

# Deepest nesting accepted in a tool's return value (same reason and size as the arguments limit: JSON
# encoding recurses per level).
MAX_RESULT_DEPTH = MAX_ARGUMENT_DEPTH


@dataclass
class ToolOutcome:
    """What one tool call gave the model: ``content`` (bounded, secrets hidden), ``error`` (None, or why it
    is an error result or was cut), ``failure`` (why it is an error result; None: it is the tool's result) and
    ``flags`` (:mod:`~toolsearch_lab.loop.result_flags`)."""

    content: str
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    failure: FailureKind | None = None


class _NoAnswer(Exception):
    """The tool's deadline passed."""


def cut_marker(cut: int) -> str:
    """The text appended where the advisor cut ``cut`` characters off (the model reads it)."""
    return f"\n[... {cut} more characters cut by the advisor]"


def bounded_content(content: str, max_chars: int) -> tuple[str, int]:
    """``content`` cut to ``max_chars`` characters plus the marker; (text, characters cut)."""
    if len(content) <= max_chars:
        return content, 0
    cut = len(content) - max_chars
    return content[:max_chars] + cut_marker(cut), cut


def bounded_error(message: str, max_chars: int) -> tuple[str, str]:
    """(the error result the model reads, the message the trace keeps) for ``message``. An error result
    longer than ``max_chars`` is cut like a result: to ``max_chars`` characters plus the marker (as JSON
    text; never less than the empty error result). The message is cut before it is wrapped, so the error
    result stays valid JSON; JSON escaping can make the wrapped text longer than the message, so the cut
    is tightened until the whole result fits."""
    content = error_result(message)
    if len(content) <= max_chars:
        return content, message
    wrapper = len(error_result(""))
    keep = min(len(message), max_chars)
    while True:
        marker = cut_marker(len(message) - keep)
        short = message[:keep] + marker
        content = error_result(short)
        room = max_chars - wrapper  # for the kept text, as JSON
        kept_as_json = len(content) - len(error_result(marker))
        if kept_as_json <= room or keep == 0:
            return content, short
        # Shrink in proportion to the escaping seen so far (6 characters per control character...).
        keep = min(keep - 1, max(0, keep * room // kept_as_json))


def describe_exception(exc: BaseException) -> str:
    """``TypeName: text`` for an exception from untrusted code; an exception whose ``str()`` itself raises
    is described by its type (the loop must not fail while reporting a failure)."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001  (a hostile __str__: report the type alone)
        text = "<str() of the exception failed>"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def invoke(function: Callable[..., Any], args: dict[str, Any], tool_context: dict[str, Any]) -> Any:
    """Call a tool's function with the model's arguments; pass ``tool_context`` only if it asks for it."""
    try:
        accepts_context = "tool_context" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        accepts_context = False
    if accepts_context:
        return function(**args, tool_context=tool_context)
    return function(**args)


def run_tool(
    tool: Tool,
    function: Callable[..., Any],
    args: dict[str, Any],
    tool_context: dict[str, Any],
    max_chars: int,
    timeout: float | None,
) -> ToolOutcome:
    """Call ``function`` (``tool``'s) within ``timeout`` seconds (None: no deadline) and return what the
    model reads (see the module docstring). Content, error results included, longer than ``max_chars`` is
    cut, with a marker saying so.

    Any ``BaseException`` but ``KeyboardInterrupt`` from the tool becomes an error result: ``sys.exit()``
    (``SystemExit``), a stray ``GeneratorExit`` or a custom ``BaseException`` subclass inside one tool must
    not end the caller's process or escape the run without a trace. Ctrl-C still stops the run."""
    try:
        value = _call(lambda: invoke(function, args, tool_context), timeout, tool.name)
    except KeyboardInterrupt:
        raise
    except ToolCallRefused as exc:  # not run: a person said no, or there was no one to ask
        return _outcome(f"{tool.name} was not run: {describe_exception(exc)}", max_chars, exc.failure)
    except _NoAnswer:
        message = (
            f"{tool.name} gave no answer within {timeout:g} s (tool_timeout); the run went on without it "
            "(the call may still finish in the background, its result unused)"
        )
        return _outcome(message, max_chars, FailureKind.TOOL_TIMEOUT)
    except BaseException as exc:  # noqa: BLE001  (see the docstring: every tool failure is a result)
        hid = isinstance(exc, RedactedError) and exc.secret_hidden
        message = f"{tool.name} raised {describe_exception(exc)}"
        return _outcome(message, max_chars, FailureKind.TOOL_RAISED, secret_hidden=hid)
    try:
        content = value if isinstance(value, str) else dumps_checked(value, MAX_RESULT_DEPTH, strict=True)
    except KeyboardInterrupt:
        raise
    except JsonLimitError as exc:
        return _outcome(_not_json(tool.name, value, exc), max_chars, FailureKind.BAD_RESULT)
    except BaseException as exc:  # noqa: BLE001  (a str() of some returned object raised or exited)
        kind = type(value).__name__
        message = f"{tool.name} returned a {kind} that cannot be converted to text: {describe_exception(exc)}"
        return _outcome(message, max_chars, FailureKind.BAD_RESULT)
    return _outcome(content, max_chars)


def _call(thunk: Callable[[], Any], timeout: float | None, name: str) -> Any:
    """``thunk()`` in a worker thread (with the caller's context variables), waiting at most ``timeout``."""
    if timeout is None:
        return thunk()
    box: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            box["value"] = context.run(thunk)
        except BaseException as exc:  # noqa: BLE001  (handed to the caller's thread)
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name=f"tool:{name[:40]}", daemon=True).start()
    if not done.wait(timeout):
        raise _NoAnswer
    if "error" in box:
        raise box["error"]
    return box["value"]


def _not_json(name: str, value: Any, exc: JsonLimitError) -> str:
    """The error result for a value the model cannot read as JSON, naming what it was."""
    kind = type(value).__name__
    if exc.not_json is not None:
        where = f" (it holds a {exc.not_json})" if exc.not_json != kind else ""
        return (
            f"{name} returned a {kind}{where}, which is not JSON data; a tool returns a str or JSON data "
            "(dict, list, str, number, bool, None)"
        )
    return f"{name} returned a {kind} the model cannot read: {exc}"


def _outcome(
    text: str, max_chars: int, failure: FailureKind | None = None, *, secret_hidden: bool = False
) -> ToolOutcome:
    """Scrub, flag and bound ``text`` (a result, or the message of a ``failure``); ``secret_hidden``: a
    secret was hidden from it already."""
    clean = scrub(text)
    flags = ([SECRET_HIDDEN] if secret_hidden or clean != text else []) + injection_flags(clean)
    if failure is not None:
        content, message = bounded_error(clean, max_chars)
        return ToolOutcome(content, message, flags, failure)
    content, cut = bounded_content(clean, max_chars)
    return ToolOutcome(content, f"result cut to {max_chars} characters ({cut} cut)" if cut else None, flags)
