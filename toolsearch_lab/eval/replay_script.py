"""A logged run as a script the advisor loop can run again under another strategy.

:func:`read_script` turns a transcript's :class:`~toolsearch_lab.replay.common.Recording` into what the model
did, response by response: its searches (the query as written, what the logged search returned) and its tool
calls (the arguments and the result exactly as logged), grouped by user turn; the run's catalog (every tool
its requests declared, the search tools left out) and the tools it kept loaded. :class:`LoggedModel` plays
the model's part again in :class:`~toolsearch_lab.loop.advisor.ToolSearchAdvisor`: each request gets the next
logged move, whatever the strategy exposed, and each tool answers with its logged result. So a re-run keeps
the model's calls as logged; only what the strategy puts into each request changes. :class:`LoggedIndex` is
the index whose searches return what the logged search returned.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from toolsearch_lab.index.base import BaseToolIndex, KeyedRequest
from toolsearch_lab.loop.anthropic_native import pattern_of
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, SearchResponse, Tool
from toolsearch_lab.models.base import AssistantTurn, ToolCall
from toolsearch_lab.replay.common import Recording, Request
from toolsearch_lab.trace import SearchVariant

__all__ = [
    "LoggedCall",
    "LoggedIndex",
    "LoggedModel",
    "LoggedResponse",
    "LoggedSearch",
    "Script",
    "ScriptEnded",
    "read_script",
]

SELECT_PREFIX = "select:"  # Claude Code's ToolSearch loads the tools a "select:a,b" query names


@dataclass(frozen=True)
class LoggedSearch:
    """A search the model made: its query as written, how many results it asked for, what came back."""

    call_id: str
    tool: str  # the log's search tool
    variant: SearchVariant
    query: str
    max_results: int | None
    names: tuple[str, ...]

    @property
    def is_pattern(self) -> bool:
        """The query is a regular expression: it went to Anthropic's regex search."""
        return self.variant == "regex"

    @property
    def is_select(self) -> bool:
        """Claude Code's ``select:`` form: it names the tools to load, it does not search for them."""
        return self.query.lstrip().lower().startswith(SELECT_PREFIX)


@dataclass(frozen=True)
class LoggedCall:
    """A tool call the model made, with its arguments and result exactly as logged."""

    call_id: str
    name: str
    arguments: str
    result: str


Move = LoggedSearch | LoggedCall


@dataclass(frozen=True)
class LoggedResponse:
    """One logged response: the request it answered (1-based), its text, its moves in order, and the
    output tokens the API billed for it."""

    number: int
    text: str | None
    moves: tuple[Move, ...]
    output_tokens: int


@dataclass(frozen=True)
class Turn:
    """One user turn: the user messages that opened it (for the first, every message of the first request)
    and the responses that answered it."""

    opening: tuple[dict[str, Any], ...]
    responses: tuple[LoggedResponse, ...]


@dataclass
class Script:
    """A logged run, read for re-running: its turns, its catalog (``tools``; the log's search tools are
    not in it), the tools the log kept loaded (``kept``: in the model's context without a search, never
    deferred; for Claude Code also the built-in tools it called, which no file declares), the tools its
    searches searched (``searchable``), OpenAI namespaces, and what could not be read as logged
    (``notes``)."""

    turns: list[Turn]
    tools: list[Tool]
    kept: list[str]
    searchable: list[str]
    namespaces: dict[str, list[str]] = field(default_factory=dict)
    namespace_descriptions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def responses(self) -> list[LoggedResponse]:
        return [r for turn in self.turns for r in turn.responses]

    def searches(self) -> list[LoggedSearch]:
        return [m for r in self.responses for m in r.moves if isinstance(m, LoggedSearch)]

    def calls(self) -> list[LoggedCall]:
        return [m for r in self.responses for m in r.moves if isinstance(m, LoggedCall)]

    def tools_for(self, model: LoggedModel) -> list[Tool]:
        """The catalog with each tool answering as logged, through ``model`` (which knows which call is
        being answered)."""
        return [replace(t, function=model.answer_for(t.name)) for t in self.tools]


def read_script(recording: Recording) -> Script:
    """The script of a recording (see the module docstring)."""
    settings = recording.settings
    variants = {s.name: s.variant for s in settings.search_tools}
    arguments, results = _exchanged(recording.requests)
    turns: list[Turn] = []
    opening: list[dict[str, Any]] = []
    responses: list[LoggedResponse] = []
    users_before = 0
    for number, request in enumerate(recording.requests, start=1):
        messages = request.chat.messages if request.chat is not None else []
        users = [m for m in messages if m.get("role") == "user"]
        if number == 1:
            opening = [dict(m) for m in messages]
        elif len(users) > users_before:  # new user messages: the log's next turn
            turns.append(Turn(tuple(opening), tuple(responses)))
            opening, responses = [dict(m) for m in users[users_before:]], []
        users_before = max(users_before, len(users))
        responses.append(_response(number, request, variants, arguments, results))
    turns.append(Turn(tuple(opening), tuple(responses)))
    notes: list[str] = []
    tools = _catalog(recording, set(variants), notes)
    declared = {t.name for t in tools}
    in_context = {n for r in recording.requests for n in r.in_context}
    deferred = set(settings.deferred_tools)
    undeclared = [c.name for t in turns for r in t.responses for c in r.moves if isinstance(c, LoggedCall)]
    undeclared = list(dict.fromkeys(n for n in undeclared if n not in declared and n not in variants))
    tools += [Tool(n, "") for n in undeclared if _usable_name(n, notes)]
    kept = [t.name for t in tools if t.name in in_context and t.name not in deferred] + undeclared
    searchable = [t.name for t in tools if t.name in deferred] or [
        t.name for t in tools if t.name not in kept
    ]
    return Script(
        turns,
        tools,
        [n for n in dict.fromkeys(kept) if n in {t.name for t in tools}],
        searchable,
        _namespaces(searchable, settings.namespaces),
        dict(recording.namespace_descriptions),
        notes,
    )


def _exchanged(requests: Iterable[Request]) -> tuple[dict[str, str], dict[str, str]]:
    """Every call's arguments and every result, by call id, in full, from the requests that carried them
    (the records of a response keep them cut to a display length)."""
    arguments: dict[str, str] = {}
    results: dict[str, str] = {}
    for request in requests:
        for message in request.chat.messages if request.chat is not None else []:
            if message.get("role") == "assistant":
                for call in message.get("tool_calls") or []:
                    value = (call.get("function") or {}).get("arguments")
                    arguments.setdefault(str(call.get("id")), _text(value))
            elif message.get("role") == "tool":
                results.setdefault(str(message.get("tool_call_id")), _text(message.get("content")))
    return arguments, results


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _response(
    number: int,
    request: Request,
    variants: Mapping[str, SearchVariant],
    arguments: Mapping[str, str],
    results: Mapping[str, str],
) -> LoggedResponse:
    searches = {s.call_id: s for s in request.searches}
    moves: list[Move] = []
    for call in request.calls:
        if call.kind == "search":
            search = searches.get(call.call_id)
            moves.append(
                LoggedSearch(
                    call.call_id or f"search-{number}-{len(moves) + 1}",
                    call.name,
                    variants.get(call.name, "client"),
                    (search.query if search is not None else None) or "",
                    search.max_results if search is not None else None,
                    tuple(search.names) if search is not None else (),
                )
            )
        else:
            moves.append(
                LoggedCall(
                    call.call_id,
                    call.name,
                    arguments.get(call.call_id, call.arguments),
                    results.get(call.call_id, call.result),
                )
            )
    output = (request.usage or {}).get("completion_tokens")
    return LoggedResponse(number, request.text, tuple(moves), output if isinstance(output, int) else 0)


def _catalog(recording: Recording, search_tools: set[str], notes: list[str]) -> list[Tool]:
    """A Tool per declared tool (search tools left out); a definition a Tool cannot hold is kept as the
    name and description alone, and said so."""
    tools = []
    for name, definition in recording.definitions.items():
        if name in search_tools or not _usable_name(name, notes):
            continue
        function = definition.get("function") or {}
        text = function.get("description")
        description = text if isinstance(text, str) else ""
        try:
            tools.append(Tool(name, description, dict(function.get("parameters") or {"type": "object"})))
        except ValueError as exc:
            notes.append(f"{name}: its parameters cannot be re-sent ({exc}); counted as name and description")
            tools.append(Tool(name, description))
    names = {t.name for t in tools}
    missing = [n for n in recording.settings.deferred_tools if n not in names and n not in search_tools]
    if missing:
        notes.append(
            f"{len(missing)} deferred tools have no definition in the log (a Claude Code session holds none; "
            "pass a catalog): each is counted as its name alone"
        )
        tools += [Tool(n, "") for n in missing if _usable_name(n, notes)]
    return tools


def _usable_name(name: str, notes: list[str]) -> bool:
    try:
        Tool(name, "")
    except ValueError as exc:
        notes.append(f"left out of the re-runs: {exc}")
        return False
    return True


def _namespaces(searchable: list[str], logged: list[str]) -> dict[str, list[str]]:
    """The log's OpenAI namespaces and their functions (``namespace.function``)."""
    out: dict[str, list[str]] = {}
    for name in searchable:
        space = name.split(".", 1)[0] if "." in name else None
        if space in logged:
            out.setdefault(space, []).append(name)
    return out


class ScriptEnded(RuntimeError):
    """The loop asked the logged model for a move after the log's last one (it ends the re-run)."""


class LoggedModel:
    """The model of a logged run, playing its moves again (see the module docstring). Each request gets the
    next logged move: consecutive searches of one response together, then its consecutive calls together;
    searches are skipped when the request offers no search tool, and a response with no move left is not
    made. ``regex_queries``: queries that were not written as patterns are sent as the pattern
    :func:`~toolsearch_lab.loop.anthropic_native.pattern_of` makes of their words (Anthropic's regex search
    takes patterns). :attr:`requests` holds what each request the log answers received; :attr:`outputs`
    the logged output tokens each is billed (a response's tokens go to the first request it answers)."""

    name = "the logged model"

    def __init__(self, script: Script, regex_queries: bool = False) -> None:
        self.regex_queries = regex_queries
        self._turns = [list(t.responses) for t in script.turns]
        self._turn = 0
        self._response = 0
        self._move = 0
        self._billed: set[int] = set()
        self._pending: dict[str, deque[str]] = {}
        self.requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        self.outputs: list[int] = []

    def next_turn(self) -> None:
        """The loop finished a user turn: the next request starts the next one."""
        self._turn, self._response, self._move = self._turn + 1, 0, 0

    def answer_for(self, name: str) -> Callable[..., str]:
        def answer(**_arguments: Any) -> str:
            waiting = self._pending.get(name)
            return waiting.popleft() if waiting else ""

        return answer

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        self._pending.clear()  # results of calls the loop refused are never asked for
        searching = any(t["function"]["name"] == TOOL_SEARCH_TOOL_NAME for t in tools)
        responses = self._turns[self._turn] if self._turn < len(self._turns) else []
        while self._response < len(responses):
            response = responses[self._response]
            moves = self._next_moves(response, searching)
            first = response.number not in self._billed
            if moves or (not response.moves and first):
                self._billed.add(response.number)
                self.requests.append(([dict(m) for m in messages], [dict(t) for t in tools]))
                self.outputs.append(response.output_tokens if first else 0)
                return AssistantTurn(response.text if first else None, [self._call(m) for m in moves])
            self._response, self._move = self._response + 1, 0
        raise ScriptEnded("the log has no further move for this request")

    def _next_moves(self, response: LoggedResponse, searching: bool) -> list[Move]:
        """The next group of moves of ``response`` this request can make (the position moves past them)."""
        moves = response.moves
        while self._move < len(moves) and isinstance(moves[self._move], LoggedSearch) and not searching:
            self._move += 1
        if self._move >= len(moves):
            return []
        kind = type(moves[self._move])
        group = []
        while self._move < len(moves) and isinstance(moves[self._move], kind):
            group.append(moves[self._move])
            self._move += 1
        return group

    def _call(self, move: Move) -> ToolCall:
        if isinstance(move, LoggedCall):
            self._pending.setdefault(move.name, deque()).append(move.result)
            return ToolCall(move.call_id, move.name, move.arguments)
        query = pattern_of(move.query) if self.regex_queries and not move.is_pattern else move.query
        arguments: dict[str, Any] = {"query": query}
        if move.max_results is not None:
            arguments["maxResults"] = move.max_results
        return ToolCall(move.call_id, TOOL_SEARCH_TOOL_NAME, json.dumps(arguments, ensure_ascii=False))


class LoggedIndex(BaseToolIndex):
    """An index that answers each query with what the logged search returned for it (the same query asked
    again: the next logged answer, then the last), in the logged order, among the session's tools."""

    def __init__(self, searches: Iterable[LoggedSearch]) -> None:
        answers: dict[str, list[tuple[str, ...]]] = {}
        for search in searches:
            answers.setdefault(search.query, []).append(search.names)
        longest = max((len(a) for many in answers.values() for a in many), default=1)
        super().__init__(max(longest, 1))
        self._answers = answers
        self._asked: dict[str, int] = {}
        self._tools: dict[str, list[Tool]] = {}

    def _index(self, session: str, tools: list[Tool]) -> None:
        self._tools.setdefault(session, []).extend(tools)

    def _clear(self, session: str) -> None:
        self._tools.pop(session, None)

    def _search(self, request: KeyedRequest, limit: int) -> SearchResponse:
        query = request.query or ""
        answers = self._answers.get(query) or [()]
        asked = self._asked.get(query, 0)
        self._asked[query] = asked + 1
        names = answers[min(asked, len(answers) - 1)]
        tools = self._tools.get(request.session_id, [])
        rank = {n: len(names) - i for i, n in enumerate(names)}
        scores = np.array([float(rank.get(t.name, 0)) for t in tools])
        return self.ranked(request, tools, scores, limit, matched_only=True).response
