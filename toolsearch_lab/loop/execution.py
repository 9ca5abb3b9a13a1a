"""Running one registered tool for the advisor: call its function, and turn what it returns (or raises)
into the text the model reads. Nothing here raises: every failure becomes an error result naming the tool.

Everything the loop sends back to the model as a tool message goes through :func:`bounded_content` (a result)
or :func:`bounded_error` (an error result), so ``max_tool_result_chars`` is one limit on every path: a 3 MB
exception text is cut like a 3 MB result.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from toolsearch_lab.jsonlimits import JsonLimitError, dumps_checked
from toolsearch_lab.loop.search_tool import MAX_ARGUMENT_DEPTH
from toolsearch_lab.model import Tool
from toolsearch_lab.wire import error_result

__all__ = [
    "MAX_RESULT_DEPTH",
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
) -> tuple[str, str | None]:
    """Call ``function`` (``tool``'s) and return (the content the model reads, error or None). Content,
    error results included, longer than ``max_chars`` is cut, with a marker saying so.

    Any ``BaseException`` but ``KeyboardInterrupt`` from the tool becomes an error result: ``sys.exit()``
    (``SystemExit``), a stray ``GeneratorExit`` or a custom ``BaseException`` subclass inside one tool must
    not end the caller's process or escape the run without a trace. Ctrl-C still stops the run."""
    try:
        value = invoke(function, args, tool_context)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001  (see the docstring: every tool failure is a result)
        return bounded_error(f"{tool.name} raised {describe_exception(exc)}", max_chars)
    try:
        content = value if isinstance(value, str) else dumps_checked(value, MAX_RESULT_DEPTH)
    except KeyboardInterrupt:
        raise
    except JsonLimitError as exc:
        kind = type(value).__name__
        return bounded_error(f"{tool.name} returned a {kind} the model cannot read: {exc}", max_chars)
    except BaseException as exc:  # noqa: BLE001  (a str() of some returned object raised or exited)
        kind = type(value).__name__
        message = f"{tool.name} returned a {kind} that cannot be converted to text: {describe_exception(exc)}"
        return bounded_error(message, max_chars)
    content, cut = bounded_content(content, max_chars)
    if not cut:
        return content, None
    return content, f"result cut to {max_chars} characters ({cut} cut)"
