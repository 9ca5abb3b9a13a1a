"""The places where toolsearch_lab reads or changes another library's internals, all in one module.

Each patch is one function saying which internal it relies on, the versions it was checked against and why
it is needed; tests/test_compat.py has one test per patch that fails when the library changes that shape.
Nothing heavy is imported here: each function imports its library when called, or takes its objects as
arguments, so this module sits on the ground floor and costs nothing to import.

* :func:`patch_mcp_stdio_parser`: the MCP SDK's stdio line parser (``mcp.client.stdio._parse_line``).
* :func:`mcp_request_sender`: an MCP ``ClientSession``'s dispatcher (``session._dispatcher``).
* :func:`stamp_mcp_request`: an MCP ``ClientSession``'s request stamp (``session._stamp``).
* :func:`set_mcp_output_schemas`: an MCP ``ClientSession``'s table of output schemas
  (``session._tool_output_schemas``).
* :func:`defer_iri_grammar`: a stand-in for ``rfc3987_syntax`` in ``sys.modules``.
* :func:`resync_figure_widget`: plotly ``FigureWidget``'s synced fields ``_widget_data``/``_widget_layout``.
* :func:`wrapped_std_streams`: ``sys.stdout`` and ``sys.stderr`` replaced for the length of a block.
* :func:`bpe_of_bytes`: tiktoken's byte pair encoding of one piece (``Encoding._encode_single_piece``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import sys
import types
from collections.abc import Awaitable, Callable, Iterator, Mapping
from copy import deepcopy
from typing import Any, TextIO

__all__ = [
    "bpe_of_bytes",
    "defer_iri_grammar",
    "mcp_request_sender",
    "patch_mcp_stdio_parser",
    "resync_figure_widget",
    "set_mcp_output_schemas",
    "stamp_mcp_request",
    "wrapped_std_streams",
]

LineParser = Callable[[str], Any]
# send(method, params, options) -> the result as the server sent it (parsed JSON, not validated)
RawSender = Callable[[str, "dict[str, Any] | None", "dict[str, Any]"], Awaitable[Any]]


def patch_mcp_stdio_parser(route: Callable[[str, LineParser], Any]) -> bool:
    """Send every line the MCP SDK reads from a stdio server's stdout through ``route(line, original)``,
    which returns what the SDK's reader passes on (a ``SessionMessage`` or an exception), usually by calling
    ``original(line)``. False, and nothing changed, when the SDK has no such parser.

    Relies on: ``mcp.client.stdio._parse_line(line: str) -> SessionMessage | Exception``, a module-level
    function that ``stdio_client``'s reader task looks up by name for each line. Checked: mcp 2.3.0 (the
    one installed; pyproject allows 2.x).
    Why: the SDK logs a traceback for every stdout line that is not JSON-RPC and drops an answer nested
    deeper than its parser goes, leaving the request to time out; the catalog's wire log
    (:mod:`toolsearch_lab.catalog.mcp_wire`) counts the first and fails the request by name for the second.
    The SDK has no public hook for either. Call it once: each call wraps the parser again."""
    from mcp.client import stdio

    original: LineParser | None = getattr(stdio, "_parse_line", None)
    if original is None:
        return False

    @functools.wraps(original)
    def parse_line(line: str) -> Any:
        return route(line, original)

    stdio._parse_line = parse_line  # type: ignore[attr-defined]  # private: the SDK's stub does not export it
    return True


def mcp_request_sender(session: Any) -> RawSender | None:
    """The function an MCP ``ClientSession`` hands a request to once it is stamped:
    ``send(method, params, options)`` returns the result as the server sent it, parsed JSON not yet
    validated against the protocol's types. None when the session has no such seam.

    Relies on: ``ClientSession._dispatcher.send_raw_request(method, params, opts)``, the step
    ``send_request`` takes after stamping the request (:func:`stamp_mcp_request`) and before validating
    the result. Checked: mcp 2.3.0.
    Why: ``send_request``, and so ``list_tools``, validates the whole result first: one malformed tool
    record costs every tool of the page. The catalog reads a ``tools/list`` page unvalidated and names
    the malformed record (:func:`toolsearch_lab.catalog.mcp_wire.raw_request`)."""
    send = getattr(getattr(session, "_dispatcher", None), "send_raw_request", None)
    return send if callable(send) else None


def stamp_mcp_request(
    session: Any, method: str, params: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(params, options)`` of a ``method`` request as an MCP ``ClientSession``'s ``send_request`` hands
    them to its dispatcher: stamped with what the negotiated protocol version asks for (its header,
    ``_meta``, whether an abandoned request is cancelled). ``params`` as given, and no options, when the
    session has no stamp.

    Relies on: ``ClientSession._stamp(data, opts)``, which ``send_request`` calls on the request's
    ``{"method": ..., "params": ...}`` and an empty options dict, changing both in place, before sending
    ``data["params"]`` with ``opts``; the handshake replaces it. Checked: mcp 2.3.0.
    Why: a request sent through :func:`mcp_request_sender` skips ``send_request``, and with it the stamp
    that a server of a newer protocol version expects on every request."""
    data: dict[str, Any] = {"method": method, **({"params": params} if params else {})}
    options: dict[str, Any] = {}
    stamp = getattr(session, "_stamp", None)
    if not callable(stamp):
        return params, options
    stamp(data, options)
    return data.get("params"), options


def set_mcp_output_schemas(session: Any, schemas: Mapping[str, dict[str, Any] | None]) -> bool:
    """Tell an MCP ``ClientSession`` the output schema of each tool (``{name: outputSchema or None}``), as
    its own ``list_tools`` does. False, and nothing changed, when the session keeps no such table.

    Relies on: ``ClientSession._tool_output_schemas``, the ``{name: schema}`` table ``call_tool`` checks a
    structured result against (a name missing from it makes ``call_tool`` list the tools again first),
    and ``_tool_output_validators``, the validators compiled from it, one of which must go when its
    schema changes. Checked: mcp 2.3.0.
    Why: the catalog lists tools without ``list_tools`` (:func:`mcp_request_sender`); without the table the
    session would list them again on the first call, validated all or nothing, so one malformed record
    would fail every call."""
    table = getattr(session, "_tool_output_schemas", None)
    if not isinstance(table, dict):
        return False
    compiled = getattr(session, "_tool_output_validators", None)
    for name, schema in schemas.items():
        if isinstance(compiled, dict) and name in compiled and table.get(name) != schema:
            del compiled[name]
        table[name] = schema
    return True


_IRI_PACKAGE = "rfc3987_syntax"


def _real_iri_package() -> types.ModuleType:
    current = sys.modules.get(_IRI_PACKAGE)
    if current is not None and not isinstance(current, _DeferredIriPackage):
        return current  # loaded already: importing it again would make a new module object per check
    stand_in = sys.modules.pop(_IRI_PACKAGE, None)
    try:
        module = importlib.import_module(_IRI_PACKAGE)
    except BaseException:
        if stand_in is not None:
            sys.modules[_IRI_PACKAGE] = stand_in
        raise
    return module


def _is_valid_syntax(term: str, value: str) -> bool:
    return bool(_real_iri_package().is_valid_syntax(term, value))


class _DeferredIriPackage(types.ModuleType):
    is_valid_syntax = staticmethod(_is_valid_syntax)  # what jsonschema imports: reading it loads nothing

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system probes __path__ and friends: not a use
            raise AttributeError(name)
        return getattr(_real_iri_package(), name)


def defer_iri_grammar() -> None:
    """Put a stand-in module under ``sys.modules["rfc3987_syntax"]`` whose ``is_valid_syntax`` (and any
    other attribute) imports the real package on first use and hands over to it, so an IRI check still
    gives the real answer; a no-op when the package is already imported or is not installed.

    Relies on: jsonschema's format checkers doing ``from rfc3987_syntax import is_valid_syntax`` at import
    and calling it as ``is_valid_syntax(term, value)`` with term ``"iri"`` or ``"iri_reference"``; the
    package compiling its grammar when imported. Checked: jsonschema 4.26.0, rfc3987-syntax 1.1.0.
    Why: plotly's ``FigureWidget`` imports nbformat, which imports jsonschema, and Jupyter's server
    installs rfc3987-syntax, whose Earley grammar for IRIs takes about 1.7 s to compile: 2 s of a 5 s
    notebook start, for a check (``"format": "iri"``) no notebook of ours asks for. The UI front door
    calls this before any widget module imports plotly."""
    if _IRI_PACKAGE in sys.modules or importlib.util.find_spec(_IRI_PACKAGE) is None:
        return
    stand_in = _DeferredIriPackage(
        _IRI_PACKAGE, "rfc3987_syntax, loaded on first use (toolsearch_lab.compat)"
    )
    sys.modules[_IRI_PACKAGE] = stand_in


def resync_figure_widget(fig: Any) -> None:
    """Copy a plotly ``FigureWidget``'s current data and layout into the fields a newly attached view
    renders from.

    Relies on: ``FigureWidget._widget_data`` and ``_widget_layout``, traitlets synced to the browser,
    and the figure's own state in ``fig._data`` and ``fig._layout_obj._props``. Checked: plotly 7.1.0.
    Why: plotly sets the two fields only at construction and at display; later edits reach an open view
    as deltas, so a view that attaches afterwards (a page reload, Voila) would draw the first state, not
    the current one. The UI calls this after every update; it can go when plotly keeps them current."""
    fig._widget_layout = deepcopy(fig._layout_obj._props)
    fig._widget_data = deepcopy(fig._data)


@contextlib.contextmanager
def wrapped_std_streams(
    wrap_stdout: Callable[[TextIO], TextIO], wrap_stderr: Callable[[TextIO], TextIO]
) -> Iterator[None]:
    """While the block runs, ``sys.stdout`` is ``wrap_stdout(the stdout before)`` and ``sys.stderr``
    likewise; both are put back afterwards, also when the block raises.

    Relies on: every printer writing through ``sys.stdout``/``sys.stderr`` as they are when it prints:
    ``print``, ``warnings``, argparse's errors, ``logging``'s last-resort handler. Checked:
    CPython 3.11. Why: the CLI shows text that servers, catalogs and transcripts supply, and every one of its
    printers must neutralise terminal controls and hide secrets (:mod:`toolsearch_lab.cli.terminal`);
    replacing the two streams covers them all, including ones we do not write."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = wrap_stdout(saved[0]), wrap_stderr(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def bpe_of_bytes(encoding: Any, data: bytes) -> list[int]:
    """The tokens ``encoding`` (a ``tiktoken.Encoding``) gives ``data`` as one pre-tokenizer piece: byte
    pair merges only, no regex split, no special tokens.

    Relies on: ``tiktoken.Encoding._encode_single_piece(bytes) -> list[int]``, the method tiktoken's own
    docstring shows for exactly this, over ``CoreBPE.encode_single_piece``. Checked: tiktoken 0.14.0 (the
    one installed; pyproject allows >=0.7).
    Why: counting a long piece a window at a time (:mod:`toolsearch_lab.tokens.long_text`) needs the
    encoding of bytes that are not a whole text; the public ``encode_ordinary`` would split them again."""
    tokens: list[int] = encoding._encode_single_piece(data)
    return tokens
