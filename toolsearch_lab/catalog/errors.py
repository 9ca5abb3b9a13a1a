"""What can go wrong while loading a catalog: :class:`CatalogError` (strict loading stops) and the
:class:`CatalogReport` of :class:`CatalogProblem` lines (``strict=False`` keeps going and lists them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = ["CatalogError", "CatalogProblem", "CatalogReport", "NoteKind", "ServerFailure"]


class CatalogError(ValueError):
    """A tool definition (or a whole catalog file) is unusable. The message names the tool and the problem;
    ``tool`` and ``problem`` hold the two parts separately when the error is about one tool."""

    def __init__(self, message: str, *, tool: str | None = None, problem: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.problem = problem if problem is not None else message


class ServerFailure(str, Enum):
    """How a server of an MCP config failed, so that none of its tools is in the catalog."""

    CONFIG = "config"  # its config entry is malformed or cannot be resolved, so it was not started
    START = "start"  # it did not start, or did not answer the MCP handshake
    LISTING = "listing"  # it started, but listing its tools failed


class NoteKind(str, Enum):
    """What a note of a :class:`CatalogReport` is about, set where the note is made: the CLI's lines on
    stderr and the doctor's findings branch on it, never on the note's words."""

    NORMALISED = "normalised"  # a value was normalised: a null or missing description, control characters
    RENAMED = "renamed"  # a name providers refuse was renamed (``catalog.origins`` keeps the server's name)
    SHARED = "shared"  # merge_catalogs qualified a name several servers define as <server>__<tool>
    # merge_catalogs qualified a name otherwise: every name (namespace="always"), or with a hash suffix
    # because <server>__<tool> was taken
    QUALIFIED = "qualified"
    KEPT_FIRST = "kept-first"  # a name on several servers of a dataset: the first kept, the others left out
    SERVER = "server"  # about a server itself: its slug, a config key ignored, lines it printed on stdout


@dataclass(frozen=True)
class CatalogProblem:
    """One line of a :class:`CatalogReport`. ``tool`` is ``"'name' (#index)"`` or ``"#index"`` when the
    record has no usable name, ``"server 'name'"`` for a server, or ``""`` for problems about the whole
    document. ``failure`` says how a server failed (None: the line is not about a failed server); ``kind``
    what a note is about (None for a problem)."""

    tool: str
    message: str
    level: str = "error"  # "error": the tool was left out; "note": kept, but something was normalised
    failure: ServerFailure | None = None
    kind: NoteKind | None = None

    def __str__(self) -> str:
        where = f"tool {self.tool}: " if self.tool else ""
        return f"{self.level}: {where}{self.message}"


@dataclass
class CatalogReport:
    """What ``strict=False`` found: ``problems`` (tools left out) and ``notes`` (tools kept, normalised).
    A catalog of live MCP servers also names the servers that did not start in ``failed_servers``
    (``{server: why}``), which :func:`~toolsearch_lab.catalog.merge.merge_catalogs` keeps."""

    problems: list[CatalogProblem] = field(default_factory=list)
    notes: list[CatalogProblem] = field(default_factory=list)
    failed_servers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add_problem(self, tool: str, message: str, failure: ServerFailure | None = None) -> None:
        self.problems.append(CatalogProblem(tool, message, "error", failure))

    def add_note(self, tool: str, message: str, kind: NoteKind) -> None:
        self.notes.append(CatalogProblem(tool, message, "note", kind=kind))

    def __str__(self) -> str:
        lines = [f"{len(self.problems)} problem(s), {len(self.notes)} note(s)"]
        lines += [f"  {p}" for p in self.problems + self.notes]
        return "\n".join(lines)
