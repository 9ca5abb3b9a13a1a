"""What every transcript format comes down to, and the one mapping from it to a :class:`RunTrace`.

Each format reader (:mod:`.anthropic`, :mod:`.responses`, :mod:`.claude_code`) turns one API call of the
file into a :class:`Request`: the tools in the model's context when it was sent, the tools sent deferred,
the searches and calls its response made, the API's own usage, and the request in the chat-completions shape
this project counts exactly. :func:`build_trace` turns the list into the trace the widgets read, so the
mapping (which tools were new, which were discovered, how usage and our count sit side by side) lives once.

A reader never guesses: a record it does not understand is a :class:`TranscriptError` naming the file, the
place and what was expected, or (for record kinds a product adds often, such as Claude Code's bookkeeping
lines) a line in ``RunTrace.errors`` saying what was skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import (
    Iteration,
    IterationTokens,
    ReplaySettings,
    RequestTokens,
    RunTrace,
    SearchHit,
    SearchRecord,
    StopReason,
    ToolCallRecord,
    TranscriptFormat,
)

__all__ = [
    "ChatRequest",
    "orphan",
    "undeclared",
    "unknown",
    "Recording",
    "Request",
    "TranscriptError",
    "TranscriptFormat",
    "build_trace",
    "check_count",
    "content_text",
    "deferred_search_tool",
    "expect",
    "first_declared",
    "function_definition",
    "result_text",
]

# What a call's or a message's text may take of the trace (a tool result can be megabytes); our token count
# reads every text whole (content_text).
MAX_TEXT_CHARS = 4_000


class TranscriptError(ValueError):
    """A transcript that cannot be replayed: the message names the file, where in it and what was expected."""


@dataclass
class ChatRequest:
    """One request in the chat-completions shape :meth:`TokenCounter.count_request` counts: the messages,
    the definitions in the model's context (``tools``) and every definition the request named, deferred
    ones included (``all_tools``, the no-search baseline)."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    all_tools: list[dict[str, Any]]


@dataclass
class Request:
    """One API call of a transcript, as a reader understood it."""

    in_context: list[str]  # tools in the model's context when the request was sent, first appearance order
    deferred: list[str]  # tools sent deferred and not loaded yet
    searches: list[SearchRecord] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)  # searches too, kind "search"
    text: str | None = None  # what the model said
    usage: dict[str, Any] | None = None  # the API's usage, normalised (see the readers' usage functions)
    stop: str | None = None  # the response's own stop reason, as written
    chat: ChatRequest | None = None  # None: nothing to count (the file holds no request)
    agent: str | None = None  # the sub-agent that made it (ReplaySettings.sub_agents); None: the run's own


@dataclass
class Recording:
    """A whole transcript as a reader understood it, before it becomes a trace: its requests, how the run
    ended, and what the log says about how the provider was set up (``settings``; the file's name and digest
    are added by :func:`~toolsearch_lab.replay.load.load_transcript`)."""

    requests: list[Request]
    model: str
    user_request: str
    session_id: str
    index: str  # e.g. "anthropic:tool_search_tool_regex"
    catalog_size: int  # distinct tools the requests named
    final_answer: str | None
    stop_reason: StopReason
    settings: ReplaySettings
    notes: list[str] = field(default_factory=list)  # skipped records, warnings: named, never silent
    # Every tool the requests declared (search tools too), by the name the trace gives it (OpenAI's
    # ``namespace.function``), in the chat-completions shape, first declaration kept: the run's catalog.
    definitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    namespace_descriptions: dict[str, str] = field(default_factory=dict)  # OpenAI namespace -> description


def build_trace(recording: Recording, counter: TokenCounter) -> RunTrace:
    """The :class:`RunTrace` of a recording: one iteration per request, tools that entered the context
    marked new, the tools each iteration's searches loaded first marked discovered, the API's usage beside
    our own count."""
    trace = RunTrace(
        session_id=recording.session_id,
        model=recording.model,
        index=recording.index,
        user_request=recording.user_request,
        catalog_size=recording.catalog_size,
        source="replay",
        replay=recording.settings,
        final_answer=recording.final_answer,
        stop_reason=recording.stop_reason,
        errors=list(recording.notes),
        encoding=counter.encoding_name,
    )
    before: dict[str | None, list[str]] = {}  # each agent's previous request: "new" is new to that agent
    accumulated: list[str] = []
    known: set[str] = set()
    agents = {a.label: a for a in recording.settings.sub_agents}
    for number, request in enumerate(recording.requests, start=1):
        for name in request.in_context:
            if name not in accumulated:
                accumulated.append(name)
        if request.agent is not None:
            agents[request.agent].requests.append(number)
        iteration = Iteration(
            number=number,
            exposed_tools=list(request.in_context),
            newly_exposed=[n for n in request.in_context if n not in before.get(request.agent, [])],
            accumulated=list(accumulated),
            assistant_content=request.text,
            tool_calls=list(request.calls),
            searches=list(request.searches),
            tokens=_tokens(request, counter, number),
            deferred=list(request.deferred),
        )
        known.update(request.in_context)
        for search in request.searches:
            for name in search.names:
                if name not in known:
                    known.add(name)
                    iteration.discovered.append(name)
        iteration.errors = [f"{c.name}: {c.error}" for c in request.calls if c.error]
        trace.iterations.append(iteration)
        before[request.agent] = request.in_context
    return trace


def _tokens(request: Request, counter: TokenCounter, number: int) -> IterationTokens:
    usage = request.usage
    completion = usage.get("completion_tokens", 0) if usage else 0
    if request.chat is None:
        return IterationTokens(RequestTokens(), RequestTokens(), completion, usage)
    chat = request.chat
    try:
        ours, baseline = (counter.count_request(chat.messages, t) for t in (chat.tools, chat.all_tools))
    except (TypeError, ValueError, RecursionError) as exc:  # a tool schema no API would have taken
        raise TranscriptError(f"request {number}: its tools or messages cannot be counted ({exc})") from None
    return IterationTokens(tool_search=ours, baseline=baseline, completion=completion, api_usage=usage)


# ---- the refusals every format shares ----------------------------------------------------------------------
def unknown(where: str, what: str, kind: Any, known: Sequence[str] = ()) -> TranscriptError:
    """A record of a kind this reader does not know: named, never guessed."""
    listed = f" (known: {', '.join(known)})" if known else ""
    return TranscriptError(f"{where}: unknown {what} {str(kind)[:60]!r}{listed}")


def orphan(where: str, kind: str, call_id: Any, call: str, key: str = "tool_use_id") -> TranscriptError:
    """A result that answers no call made before it."""
    return TranscriptError(
        f"{where}: {kind} refers to {key} {str(call_id)[:60]!r} but no {call} with that id comes before it"
    )


def undeclared(where: str, name: str) -> TranscriptError:
    """A reference to a tool the request does not declare: the API refuses such a request."""
    return TranscriptError(
        f"{where}: tool_reference {name[:80]!r} is not among the request's tools (the API would have "
        "answered 400)"
    )


def deferred_search_tool(request: int, name: str, source: str) -> str:
    """The note on a request that sends its search tool itself deferred: the model sees only tools that are
    not deferred, so it could never call the search that loads the rest, and the APIs refuse such a request
    (issue #47's report; the refusal itself was not checked against an API here)."""
    return (
        f"request {request}: the search tool {name[:80]!r} is itself sent deferred (defer_loading), so the "
        f"model could never call it; the API refuses such a request ({source}; the refusal not checked here)"
    )


# ---- small readers every format uses -----------------------------------------------------------------------
def expect(value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    """``value`` if it is of ``kind``, else a :class:`TranscriptError` saying what was expected at ``where``
    (and what was found, by type: the value itself may be a secret or huge)."""
    if isinstance(value, kind) and not isinstance(value, bool):
        return value
    found = "nothing" if value is None else f"a {_json_type(value)}"
    raise TranscriptError(f"{where}: expected {what}, got {found}")


def check_count(usage: Mapping[str, Any], key: str, where: str, required: bool = True) -> int:
    """A token count of a usage object: an integer >= 0 (absent and not ``required``: 0)."""
    value = usage.get(key)
    if value is None and not required:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = "nothing" if value is None else json.dumps(value)[:40]
        raise TranscriptError(f"{where}.{key}: expected an integer >= 0, got {shown}")
    return value


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "list"
    if isinstance(value, int | float):
        return f"number ({json.dumps(value)[:30]})"
    return "string" if isinstance(value, str) else type(value).__name__


def result_text(content: Any) -> str:
    """:func:`content_text` cut to :data:`MAX_TEXT_CHARS`: what the trace keeps of a tool result."""
    return clip(content_text(content))


def content_text(content: Any) -> str:
    """The whole text of a tool result's content (a string, or blocks whose text parts are joined), as our
    count reads it; blocks that carry no text (images, tool references) are named instead."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, Mapping) and block.get("type") == "tool_reference":
                parts.append(f"[tool_reference {block.get('tool_name')}]")
            elif isinstance(block, Mapping):
                parts.append(f"[{block.get('type', 'block')}]")
        text = "\n".join(parts)
    elif content is None:
        text = ""
    else:
        text = json.dumps(content, ensure_ascii=False)
    return text


def clip(text: str | None, limit: int = MAX_TEXT_CHARS) -> str:
    text = text or ""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def function_definition(name: str, description: Any = "", parameters: Any = None) -> dict[str, Any]:
    """A tool in the chat-completions shape our counter reads (missing pieces as empty)."""
    schema = parameters if isinstance(parameters, Mapping) else {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description if isinstance(description, str) else "",
            "parameters": dict(schema),
        },
    }


def search_query(arguments: Any) -> str | None:
    """What a search asked for: its ``query`` when it has one, else its arguments as JSON."""
    query = arguments.get("query") if isinstance(arguments, Mapping) else None
    if isinstance(query, str):
        return query
    if arguments is None:
        return None
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def search_record(call_id: str, arguments: Any, references: list[str], error: str | None) -> SearchRecord:
    """A search as the trace keeps it; a transcript carries no scores, so hits have none."""
    limit = arguments.get("max_results") or arguments.get("limit") if isinstance(arguments, Mapping) else None
    return SearchRecord(
        call_id=call_id,
        query=search_query(arguments),
        max_results=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        hits=[SearchHit(name, None) for name in references],
        error=error,
    )


def text_or_none(value: Any) -> str | None:
    """A value the log gives as text (a model's name), as text: None stays None, anything else is written
    as it reads (``str``), never dropped."""
    return None if value is None else str(value)


def arguments_text(arguments: Any) -> str:
    """A call's arguments as the JSON text the trace keeps."""
    if isinstance(arguments, str):
        return clip(arguments)
    return clip(json.dumps(arguments, ensure_ascii=False))


def first_declared(maps: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Every key of ``maps`` with the value the first map that has it gives (a tool declared again later,
    differently, keeps its first declaration)."""
    out: dict[str, Any] = {}
    for each in maps:
        for key, value in each.items():
            out.setdefault(key, value)
    return out


def ordered(names: Sequence[str]) -> list[str]:
    """``names`` without repeats, first appearance kept."""
    return list(dict.fromkeys(names))
