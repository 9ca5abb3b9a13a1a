"""The advisor loop (Spring's ToolSearchToolCallingAdvisor on top of ToolCallingAdvisor, spec §7).

Per user request: evict what the eviction strategy says, fingerprint the registered tools and re-index the
session only when the fingerprint changed, append the suffix to the system message. Per iteration: expose
``toolSearchTool`` plus the registered tools named in earlier search results, call the model, run its tool
calls, repeat until it answers without tool calls or a limit is reached. Every step goes into the trace.

Deliberate deviations from Spring, each an option:
- a call to a tool that is not exposed is answered with an error result telling the model to search first
  (``strict=True`` raises like Spring's "No ToolCallback found for tool name");
- a search result that is not a JSON array (our error results) is skipped, not a request failure;
- exposed tools come in a deterministic order: toolSearchTool first, then discovery order;
- the same search repeated ``max_repeated_searches`` times gets an error result (runaway-loop guard);
- tool results longer than ``max_tool_result_chars`` are cut, with a marker saying so.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.loop.search_tool import (
    TOOL_SEARCH_TOOL_NAME,
    TOOL_SEARCH_TOOL_SESSION_ID_KEY,
    ToolSearchTool,
    error_result,
    parse_arguments,
)
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.session.eviction import EvictionStrategy, LruEviction
from toolsearch_lab.session.fingerprint import fingerprint
from toolsearch_lab.trace import (
    Iteration,
    IterationTokens,
    RunTrace,
    SearchRecord,
    SessionEvent,
    TokenCount,
    ToolCallRecord,
)

DEFAULT_SESSION_ID_KEY = "chat_memory_conversation_id"
DEFAULT_SYSTEM_MESSAGE_SUFFIX = (
    "\nYou can discover tools on demand with a special tool named toolSearchTool. Most tools are not "
    "loaded yet: when you need to act and none of the tools you have fits, call toolSearchTool with a short "
    "description of the capability you need, then call the tools it finds."
)
DEFAULT_MAX_CALLS_PER_TOOL = 40
DEFAULT_MAX_TOTAL_TOOL_CALLS = 150


class ToolNotFoundError(RuntimeError):
    """Raised only with ``strict=True``: Spring fails the whole request when the model calls a tool that is
    not exposed."""


@dataclass
class RunResult:
    trace: RunTrace
    messages: list[dict]
    answer: str | None

    @property
    def stop_reason(self) -> str:
        return self.trace.stop_reason


@dataclass
class _SessionState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    fingerprint: str | None = None


class ToolSearchAdvisor:
    """Runs the tool-search loop. Keep one instance per application: it remembers each session's fingerprint
    so an unchanged catalog is not re-indexed (Spring loses this when Boot rebuilds the advisor per request).
    """

    def __init__(
        self,
        index,
        max_results: int | None = None,
        system_message_suffix: str = DEFAULT_SYSTEM_MESSAGE_SUFFIX,
        reference_tool_name_accumulation: bool = True,
        session_id_key: str = DEFAULT_SESSION_ID_KEY,
        eviction: EvictionStrategy | None = None,
        max_calls_per_tool: int = DEFAULT_MAX_CALLS_PER_TOOL,
        max_total_tool_calls: int = DEFAULT_MAX_TOTAL_TOOL_CALLS,
        strict: bool = False,
        max_repeated_searches: int = 3,
        max_tool_result_chars: int = 100_000,
        token_counter=None,
        index_name: str | None = None,
    ) -> None:
        if index is None:
            raise ValueError("ToolSearchAdvisor: index is required (a RegexToolIndex, BM25ToolIndex, ...)")
        if not isinstance(system_message_suffix, str) or not system_message_suffix.strip():
            raise ValueError("ToolSearchAdvisor: system_message_suffix must be non-blank text")
        if not isinstance(session_id_key, str) or not session_id_key.strip():
            raise ValueError("ToolSearchAdvisor: session_id_key must be non-blank text")
        for label, value in (
            ("max_calls_per_tool", max_calls_per_tool),
            ("max_total_tool_calls", max_total_tool_calls),
            ("max_repeated_searches", max_repeated_searches),
            ("max_tool_result_chars", max_tool_result_chars),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ToolSearchAdvisor: {label} must be a positive integer, got {value!r}")
        self.index = index
        self.index_name = index_name or type(index).__name__
        self.search_tool = ToolSearchTool(index, max_results)
        self.max_results = max_results
        self.system_message_suffix = system_message_suffix
        self.accumulation = reference_tool_name_accumulation
        self.session_id_key = session_id_key
        self.eviction = eviction if eviction is not None else LruEviction(1000)
        if not hasattr(self.eviction, "on_access") or not hasattr(self.eviction, "on_removed"):
            raise ValueError(f"ToolSearchAdvisor: eviction {self.eviction!r} has no on_access/on_removed")
        self.max_calls_per_tool = max_calls_per_tool
        self.max_total_tool_calls = max_total_tool_calls
        self.strict = strict
        self.max_repeated_searches = max_repeated_searches
        self.max_tool_result_chars = max_tool_result_chars
        self._token_counter = token_counter
        self._sessions: dict[str, _SessionState] = {}
        self._sessions_lock = threading.Lock()

    # ---- sessions -------------------------------------------------------------------------------------
    def _state(self, session_id: str) -> _SessionState:
        with self._sessions_lock:
            return self._sessions.setdefault(session_id, _SessionState())

    def fingerprint_of(self, session_id: str) -> str | None:
        with self._sessions_lock:
            state = self._sessions.get(session_id)
        return state.fingerprint if state else None

    def evict_session(self, session_id: str) -> SessionEvent:
        """Clear the session's index and fingerprint (call it on logout). The next request re-indexes."""
        state = self._state(session_id)
        with state.lock:
            self.index.clear_index(session_id)
            state.fingerprint = None
        with self._sessions_lock:
            self._sessions.pop(session_id, None)
        self.eviction.on_removed(session_id)
        return SessionEvent("evicted", session_id, detail="evict_session")

    def initialize_session(self, session_id: str, tools: list[Tool]) -> list[SessionEvent]:
        """Spring's initializeSession: eviction, then fingerprint compare-and-reindex (atomic per session)."""
        events = []
        for evicted in sorted(self.eviction.on_access(session_id)):
            event = self.evict_session(evicted)
            event.detail = f"evicted by {self.eviction!r}"
            events.append(event)
        current = fingerprint(tools)
        state = self._state(session_id)
        with state.lock:
            if state.fingerprint != current:
                previous = state.fingerprint
                self.index.clear_index(session_id)
                self.index.index_tools(session_id, list(tools))
                state.fingerprint = current
                why = "first request" if previous is None else "catalog changed"
                events.append(SessionEvent("indexed", session_id, current, len(tools), why))
            else:
                events.append(
                    SessionEvent("reused", session_id, current, len(tools), "fingerprint unchanged")
                )
        return events

    # ---- the loop ---------------------------------------------------------------------------------------
    def run(
        self,
        model: ChatModel,
        messages: list[dict],
        tools: Iterable[Tool],
        context: dict | None = None,
    ) -> RunResult:
        """One user request through the loop. Limits end the run with a stop reason, they do not raise."""
        context = dict(context or {})
        session_id = context.get(self.session_id_key)
        if session_id is None or (isinstance(session_id, str) and not session_id.strip()):
            raise ValueError(f"context must contain a non-null value for {self.session_id_key!r}")
        session_id = str(session_id)
        tools = list(tools)
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"tools must be Tool objects, got {type(t).__name__}: {t!r:.80}")
        registered: dict[str, Tool] = {}
        for t in tools:
            registered.setdefault(t.name, t)  # first registration wins, like Spring's putIfAbsent
        if TOOL_SEARCH_TOOL_NAME in registered:
            raise ValueError(
                f"a registered tool may not be named {TOOL_SEARCH_TOOL_NAME!r}: it is the meta-tool"
            )

        counter = self._counter()
        original = [dict(m) for m in messages]
        conversation = self._with_suffix(original)
        user_request = next(
            (m.get("content") or "" for m in reversed(original) if m.get("role") == "user"), ""
        )
        trace = RunTrace(
            session_id=session_id,
            model=getattr(model, "name", type(model).__name__),
            index=self.index_name,
            user_request=user_request if isinstance(user_request, str) else json.dumps(user_request),
            catalog_size=len(registered),
            config=self.config_summary(),
            encoding=counter.encoding_name,
        )
        trace.session_events = self.initialize_session(session_id, tools)

        all_definitions = [t.definition() for t in registered.values()]
        search_definition = self.search_tool.definition()
        calls_per_tool: dict[str, int] = {}
        total_calls = 0
        search_counts: dict[str, int] = {}
        exposed_before: list[str] = []
        discovered_order: list[str] = []

        while True:
            started = time.perf_counter()
            exposed_names = self._exposed(conversation, registered)
            for name in exposed_names:
                if name not in discovered_order:
                    discovered_order.append(name)
            iteration = Iteration(
                index=len(trace.iterations),
                exposed_tools=[TOOL_SEARCH_TOOL_NAME] + exposed_names,
                newly_exposed=[n for n in exposed_names if n not in exposed_before],
                accumulated=list(discovered_order),
            )
            exposed_before = exposed_names
            definitions = [search_definition] + [registered[n].definition() for n in exposed_names]
            iteration.tokens = IterationTokens(
                tool_search=_token_count(counter.count_request(_wire(conversation), definitions)),
                baseline=_token_count(
                    counter.count_request(_wire(self._baseline(conversation, original)), all_definitions)
                ),
            )
            trace.iterations.append(iteration)

            model_started = time.perf_counter()
            try:
                turn = model.complete([dict(m) for m in conversation], definitions)
            except Exception as exc:
                iteration.model_ms = (time.perf_counter() - model_started) * 1000
                message = f"model call failed: {type(exc).__name__}: {exc}"
                iteration.errors.append(message)
                trace.errors.append(message)
                trace.stop_reason = "error"
                iteration.duration_ms = (time.perf_counter() - started) * 1000
                return RunResult(trace, conversation, None)
            iteration.model_ms = (time.perf_counter() - model_started) * 1000
            if not isinstance(turn, AssistantTurn):
                raise TypeError(
                    f"{trace.model}: complete() must return an AssistantTurn, got {type(turn).__name__}"
                )
            iteration.assistant_content = turn.content
            iteration.tokens.completion = counter.count_completion(
                turn.content, [c.to_dict() for c in turn.tool_calls]
            ).total
            iteration.tokens.api_usage = turn.usage.to_dict() if turn.usage else None
            conversation.append(turn.to_message())

            if not turn.tool_calls:
                trace.final_answer = turn.content
                trace.stop_reason = "answered"
                iteration.duration_ms = (time.perf_counter() - started) * 1000
                return RunResult(trace, conversation, turn.content)

            # Spring's tool manager checks the limits before running a turn's calls and, on a breach,
            # returns to the caller without calling the model again.
            breach = None
            for call in turn.tool_calls:
                calls_per_tool[call.name] = calls_per_tool.get(call.name, 0) + 1
                total_calls += 1
                if calls_per_tool[call.name] > self.max_calls_per_tool:
                    breach = (
                        "max_calls_per_tool",
                        f"tool {call.name!r} called more than {self.max_calls_per_tool} times",
                    )
                elif total_calls > self.max_total_tool_calls:
                    breach = (
                        "max_total_tool_calls",
                        f"more than {self.max_total_tool_calls} tool calls in this request",
                    )
            if breach:
                reason, message = breach
                trace.stop_reason = reason
                trace.errors.append(f"limit reached: {message}")
                iteration.errors.append(f"limit reached: {message}")
                for call in turn.tool_calls:
                    iteration.tool_calls.append(
                        ToolCallRecord(
                            call.id, call.name, call.arguments, "rejected", "", f"limit reached: {message}"
                        )
                    )
                trace.final_answer = None
                iteration.duration_ms = (time.perf_counter() - started) * 1000
                return RunResult(trace, conversation, None)

            exposed_set = set(exposed_names)
            for call in turn.tool_calls:
                record, content, search = self._execute(
                    call, exposed_set, registered, session_id, context, search_counts
                )
                iteration.tool_calls.append(record)
                if search is not None:
                    iteration.searches.append(search)
                    for name in search.names:
                        if (
                            name in registered
                            and name not in discovered_order
                            and name not in iteration.discovered
                        ):
                            iteration.discovered.append(name)
                if record.error:
                    iteration.errors.append(f"{call.name}: {record.error}")
                conversation.append(
                    {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
                )
            iteration.duration_ms = (time.perf_counter() - started) * 1000

    # ---- helpers ----------------------------------------------------------------------------------------
    def _execute(self, call, exposed: set[str], registered, session_id, context, search_counts):
        """Run one tool call; returns (record, tool-message content, search record or None). Never raises
        unless ``strict``. Everything stays local: one advisor serves many sessions on many threads."""
        started = time.perf_counter()

        def done(kind: str, content: str, error: str | None = None, search: SearchRecord | None = None):
            ms = (time.perf_counter() - started) * 1000
            return (
                ToolCallRecord(call.id, call.name, call.arguments, kind, content, error, ms),
                content,
                search,
            )

        if call.name == TOOL_SEARCH_TOOL_NAME:
            args, _ = parse_arguments(call.arguments)
            key = args.get("query").strip().casefold() if isinstance(args.get("query"), str) else None
            if key is not None:
                search_counts[key] = search_counts.get(key, 0) + 1
                if search_counts[key] > self.max_repeated_searches:
                    message = (
                        f"you already searched for {args['query']!r} {self.max_repeated_searches} times and the "
                        "results will not change; call one of the tools found, search for something different, "
                        "or answer"
                    )
                    refused = SearchRecord(call.id, args["query"], None, error=message)
                    return done("search", error_result(message), message, refused)
            outcome = self.search_tool.call(call.arguments, session_id, call.id)
            return done("search", outcome.result, outcome.record.error, outcome.record)

        if call.name not in exposed:
            if self.strict:
                raise ToolNotFoundError(f"No ToolCallback found for tool name: {call.name}")
            known = "registered but not discovered yet" if call.name in registered else "not a known tool"
            message = (
                f"tool {call.name!r} is not available ({known}). Call {TOOL_SEARCH_TOOL_NAME} first to "
                "discover the tools you need, then call one of the names it returns."
            )
            return done("rejected", error_result(message), message)

        tool = registered[call.name]
        args, problem = parse_arguments(call.arguments)
        if problem:
            message = f"{call.name}: {problem}"
            return done("rejected", error_result(message), message)
        if tool.function is None:
            message = f"tool {call.name!r} has no implementation in this catalog, so it cannot be run"
            return done("rejected", error_result(message), message)
        try:
            value = _invoke(tool.function, args, {**context, TOOL_SEARCH_TOOL_SESSION_ID_KEY: session_id})
        except Exception as exc:
            message = f"{call.name} raised {type(exc).__name__}: {exc}"
            return done("tool", error_result(message), message)
        content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        if len(content) > self.max_tool_result_chars:
            cut = len(content) - self.max_tool_result_chars
            content = (
                content[: self.max_tool_result_chars] + f"\n[... {cut} more characters cut by the advisor]"
            )
            return done("tool", content, f"result cut to {self.max_tool_result_chars} characters ({cut} cut)")
        return done("tool", content)

    def _exposed(self, conversation: list[dict], registered: dict[str, Tool]) -> list[str]:
        """Registered tools named by earlier search results, in discovery order (spec §7.4–7.5).

        Tool messages answering one assistant turn form one group (Spring: one tool-response message per
        turn). Accumulation on: all groups; off: the last group that holds a search response, including all
        its parallel searches. Unknown names are dropped silently, as Spring does.
        """
        groups: list[list[str]] = []
        current: list[str] | None = None
        for message in conversation:
            role = message.get("role")
            if role == "assistant":
                current = None
            elif role == "tool" and str(message.get("name", "")).lower() == TOOL_SEARCH_TOOL_NAME.lower():
                if current is None:
                    current = []
                    groups.append(current)
                current.extend(_names_from_result(message.get("content"), self.strict))
        groups = [g for g in groups if g]
        selected = groups if self.accumulation else groups[-1:]
        names: list[str] = []
        for group in selected:
            for name in group:
                if name in registered and name not in names:
                    names.append(name)
        return names

    def _with_suffix(self, messages: list[dict]) -> list[dict]:
        out = [dict(m) for m in messages]
        for m in out:
            if m.get("role") == "system":
                m["content"] = (m.get("content") or "") + self.system_message_suffix
                return out
        return [{"role": "system", "content": self.system_message_suffix}] + out

    @staticmethod
    def _baseline(conversation: list[dict], original: list[dict]) -> list[dict]:
        """The same conversation as a no-search request would carry: the original system message."""
        original_system = next((m for m in original if m.get("role") == "system"), None)
        out = []
        replaced = False
        for m in conversation:
            if m.get("role") == "system" and not replaced:
                replaced = True
                if original_system is not None:
                    out.append(original_system)
                continue
            out.append(m)
        return out

    def _counter(self):
        if self._token_counter is None:
            from toolsearch_lab.tokens import TokenCounter

            self._token_counter = TokenCounter()
        return self._token_counter

    def config_summary(self) -> dict:
        return {
            "index": self.index_name,
            "max_results": self.max_results,
            "reference_tool_name_accumulation": self.accumulation,
            "session_id_key": self.session_id_key,
            "eviction": repr(self.eviction),
            "max_calls_per_tool": self.max_calls_per_tool,
            "max_total_tool_calls": self.max_total_tool_calls,
            "strict": self.strict,
            "max_repeated_searches": self.max_repeated_searches,
            # Fix (issue 6): the fourth loop limit was missing, so a trace with a cut result did not say
            # which limit cut it.
            "max_tool_result_chars": self.max_tool_result_chars,
        }


def _names_from_result(content: Any, strict: bool) -> list[str]:
    try:
        value = json.loads(content) if isinstance(content, str) else content
    except json.JSONDecodeError:
        value = None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    if strict:
        raise ValueError(f"toolSearchTool result is not a JSON array of names: {str(content)[:200]!r}")
    return []  # our own error results are JSON objects: nothing discovered


def _invoke(function, args: dict, tool_context: dict):
    """Call a tool's function with the model's arguments; pass ``tool_context`` only if it asks for it."""
    try:
        accepts_context = "tool_context" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        accepts_context = False
    if accepts_context:
        return function(**args, tool_context=tool_context)
    return function(**args)


def _wire(messages: list[dict]) -> list[dict]:
    """Messages as an OpenAI-compatible API receives them: our tool messages carry the tool's ``name`` for
    the loop's own bookkeeping, which is not sent, so it is not counted either."""
    return [{k: v for k, v in m.items() if k != "name"} if m.get("role") == "tool" else m for m in messages]


def _token_count(request_tokens) -> TokenCount:
    return TokenCount(
        system=request_tokens.system,
        messages=request_tokens.messages,
        tools=request_tokens.tools,
        framing=request_tokens.framing,
        total=request_tokens.total,
    )
