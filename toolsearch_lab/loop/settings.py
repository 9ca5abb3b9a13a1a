"""The advisor's settings: one frozen value, checked once when it is made and trusted from then on.

:class:`AdvisorSettings` holds every setting of :class:`~toolsearch_lab.loop.advisor.ToolSearchAdvisor` that
is a plain value; the objects the advisor works with (the index, the eviction strategy, the strategy, the
token counter) are its other arguments. The constructor checks each field (scikit-learn's rule: validate
once, where the value comes in) and a bad one is a :class:`SettingError` naming it. The advisor, the
``toolSearchTool`` meta-tool and the loop's parts read the fields and never check them again.

``ToolSearchAdvisor(index, max_results=3)`` makes one from its keywords; ``ToolSearchAdvisor(index,
settings=...)`` takes one made before, such as a :class:`~toolsearch_lab.loop.config.ToolSearchConfig` (a
subclass: the same settings plus what Spring Boot wires around the advisor, readable from its properties).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, get_args

from toolsearch_lab.jsonlimits import shown
from toolsearch_lab.loop.policy import DESTRUCTIVE_POLICIES, DestructivePolicy
from toolsearch_lab.model import positive_int_problem

__all__ = [
    "ACCUMULATION_SOURCES",
    "DEFAULT_MAX_CALLS_PER_TOOL",
    "DEFAULT_MAX_REPEATED_SEARCHES",
    "DEFAULT_MAX_TOOL_RESULT_CHARS",
    "DEFAULT_MAX_TOTAL_TOOL_CALLS",
    "DEFAULT_SESSION_ID_KEY",
    "DEFAULT_SETTINGS",
    "DEFAULT_SYSTEM_MESSAGE_SUFFIX",
    "DEFAULT_TOOL_TIMEOUT_S",
    "AccumulationSource",
    "AdvisorSettings",
    "SettingError",
    "settings_from",
]

# Where a conversation's found tools come from (:mod:`toolsearch_lab.loop.conversation`).
AccumulationSource = Literal["session", "history"]
ACCUMULATION_SOURCES: tuple[AccumulationSource, ...] = get_args(AccumulationSource)

DEFAULT_SESSION_ID_KEY = "chat_memory_conversation_id"  # Spring's ChatMemory.CONVERSATION_ID
DEFAULT_SYSTEM_MESSAGE_SUFFIX = (
    "\nYou can discover tools on demand with a special tool named toolSearchTool. Most tools are not "
    "loaded yet: when you need to act and none of the tools you have fits, call toolSearchTool with a short "
    "description of the capability you need, then call the tools it finds."
)
DEFAULT_MAX_CALLS_PER_TOOL = 40
DEFAULT_MAX_TOTAL_TOOL_CALLS = 150
DEFAULT_MAX_REPEATED_SEARCHES = 3
DEFAULT_MAX_TOOL_RESULT_CHARS = 100_000
# How long one tool call may take before the run goes on without it (:mod:`toolsearch_lab.loop.execution`).
DEFAULT_TOOL_TIMEOUT_S = 60.0


class SettingError(ValueError):
    """A setting that cannot be used: ``setting`` is its field name, ``problem`` what is wrong (e.g. "must be
    a positive integer, got 0"). The message names it as ``owner.setting``; a reader of another spelling
    (Spring Boot properties) can name it its own way."""

    def __init__(self, owner: str, setting: str, problem: str) -> None:
        super().__init__(f"{owner}.{setting} {problem}")
        self.setting = setting
        self.problem = problem


@dataclass(frozen=True)
class AdvisorSettings:
    """Every plain-value setting of the advisor, checked once (see the module docstring).

    Spring's settings: ``max_results`` (toolSearchTool's default when the model sends no ``maxResults``; None:
    the index's own), ``system_message_suffix``, ``reference_tool_name_accumulation`` (None: the strategy's,
    on for Spring's loop), ``session_id_key`` (the context key of the session id), ``max_calls_per_tool``,
    ``max_total_tool_calls``, ``strict``. The others are this project's deviations, each described in
    :mod:`toolsearch_lab.loop.advisor`."""

    max_results: int | None = None
    system_message_suffix: str = DEFAULT_SYSTEM_MESSAGE_SUFFIX
    reference_tool_name_accumulation: bool | None = None
    session_id_key: str = DEFAULT_SESSION_ID_KEY
    max_calls_per_tool: int = DEFAULT_MAX_CALLS_PER_TOOL
    max_total_tool_calls: int = DEFAULT_MAX_TOTAL_TOOL_CALLS
    strict: bool = False
    max_repeated_searches: int = DEFAULT_MAX_REPEATED_SEARCHES
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS
    enforce_max_results_range: bool = False
    protect_running_sessions: bool = True
    # Spring's behaviour. The CLI defaults to "ask" on a terminal, else "exclude"; in Python,
    # connect_mcp_config / connect_mcp_stdio say once which live tools this default will run.
    destructive: DestructivePolicy = "include"
    accumulation_source: AccumulationSource = "session"
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT_S

    def __post_init__(self) -> None:
        for setting in _ADVISOR_FIELDS:
            problem = _PROBLEMS[setting](getattr(self, setting))
            if problem is not None:
                raise SettingError(type(self).__name__, setting, problem)
        # One spelling from here on: the choices' own str (not an equal subclass), seconds as a float.
        for setting, choices in _CHOICES.items():
            object.__setattr__(self, setting, choices[choices.index(getattr(self, setting))])
        if self.tool_timeout is not None:
            object.__setattr__(self, "tool_timeout", float(self.tool_timeout))

    def trace_config(self, index: str, accumulation: bool, eviction: str) -> dict[str, Any]:
        """The settings as a trace's ``config`` records them, with the index's name, the accumulation in
        effect and the eviction strategy: Spring's settings and the limits always, the other deviations only
        when they are not the default (so a trace of Spring's behaviour holds Spring's settings)."""
        summary: dict[str, Any] = {
            "index": index,
            "max_results": self.max_results,
            "reference_tool_name_accumulation": accumulation,
            "session_id_key": self.session_id_key,
            "eviction": eviction,
            "max_calls_per_tool": self.max_calls_per_tool,
            "max_total_tool_calls": self.max_total_tool_calls,
            "strict": self.strict,
            "max_repeated_searches": self.max_repeated_searches,
            "max_tool_result_chars": self.max_tool_result_chars,
            "tool_timeout_s": self.tool_timeout,
        }
        if not self.protect_running_sessions:
            summary["protect_running_sessions"] = False
        if self.enforce_max_results_range:
            summary["enforce_max_results_range"] = True
        if self.destructive != "include":
            summary["destructive"] = self.destructive
        return summary


Problem = Callable[[Any], str | None]  # what is wrong with a value, or None


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return None
    return f"must be non-blank text, got {shown(value, 60)}"


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"must be True or False, got {shown(value, 40)}"


def _or_none(problem: Problem, expected: str) -> Problem:
    def check(value: Any) -> str | None:
        if value is None or problem(value) is None:
            return None
        return f"must be {expected} or None, got {shown(value, 40)}"

    return check


def _one_of(choices: tuple[str, ...], meaning: str = "") -> Problem:
    def check(value: Any) -> str | None:
        if isinstance(value, str) and value in choices:
            return None
        return f"must be one of {', '.join(map(repr, choices))}, got {shown(value, 40)}{meaning}"

    return check


def _seconds(value: Any) -> str | None:
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if value is None or (number and value > 0 and math.isfinite(value)):
        return None
    return f"must be seconds > 0 or None, got {shown(value, 40)}"


_PROBLEMS: dict[str, Problem] = {
    "max_results": _or_none(positive_int_problem, "a positive integer"),
    "system_message_suffix": _text,
    "reference_tool_name_accumulation": _or_none(_flag, "True, False"),
    "session_id_key": _text,
    "max_calls_per_tool": positive_int_problem,
    "max_total_tool_calls": positive_int_problem,
    "strict": _flag,
    "max_repeated_searches": positive_int_problem,
    "max_tool_result_chars": positive_int_problem,
    "enforce_max_results_range": _flag,
    "protect_running_sessions": _flag,
    "destructive": _one_of(DESTRUCTIVE_POLICIES),
    "accumulation_source": _one_of(
        ACCUMULATION_SOURCES,
        ": 'session' keeps found tools in the advisor per session, 'history' reads them back from the "
        "messages the advisor holds",
    ),
    "tool_timeout": _seconds,
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "destructive": DESTRUCTIVE_POLICIES,
    "accumulation_source": ACCUMULATION_SOURCES,
}
_ADVISOR_FIELDS = tuple(f.name for f in fields(AdvisorSettings))
DEFAULT_SETTINGS = AdvisorSettings()


def settings_from(settings: AdvisorSettings | None, owner: str, **keywords: Any) -> AdvisorSettings:
    """The settings of ``owner`` (a class taking both ways): ``settings`` as made (and checked) before, or new
    ones from ``keywords``. Keywords that differ from the defaults beside ``settings`` are refused: one of
    the two would be silently dropped."""
    if settings is None:
        return AdvisorSettings(**keywords)
    if not isinstance(settings, AdvisorSettings):
        kind = type(settings).__name__
        raise TypeError(f"{owner}: settings must be an AdvisorSettings (or None), got {kind}")
    defaults = {f.name: f.default for f in fields(AdvisorSettings) if f.default is not MISSING}
    given = sorted(name for name, value in keywords.items() if value != defaults[name])
    if given:
        raise ValueError(f"{owner}: give settings= or the settings {given} as keywords, not both")
    return settings
