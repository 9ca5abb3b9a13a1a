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
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolsearch_lab.catalog.container import schema_problems
from toolsearch_lab.jsonlimits import JsonLimitError, dumps_checked, shown
from toolsearch_lab.loop.search_tool import (
    MAX_ARGUMENT_DEPTH,
    TOOL_SEARCH_TOOL_SESSION_ID_KEY,
    ToolSearchTool,
    error_result,
    parse_arguments,
)
from toolsearch_lab.loop.strategy import RequestPlan, RequestView, Strategy, found_tools
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, BaseToolIndex, Tool
from toolsearch_lab.models.base import AssistantTurn, ChatModel, ToolCall
from toolsearch_lab.session.eviction import EvictionStrategy, LruEviction
from toolsearch_lab.session.fingerprint import fingerprint
from toolsearch_lab.tokens import TokenCounter
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
# Deepest nesting accepted in a tool's return value and in the caller's messages (same reason and size as
# the arguments limit: JSON encoding recurses per level).
MAX_RESULT_DEPTH = MAX_ARGUMENT_DEPTH
MAX_MESSAGE_DEPTH = MAX_ARGUMENT_DEPTH


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


@dataclass
class _Run:
    """The state of one request. It lives on the stack of ``run``, not on the advisor: one advisor serves
    many sessions on many threads."""

    model: ChatModel
    session_id: str
    context: dict
    registered: dict[str, Tool]
    original: list[dict]
    conversation: list[dict]
    trace: RunTrace
    counter: Any
    all_definitions: list[dict]
    search_definition: dict
    definitions: list[dict] = field(default_factory=list)
    calls_per_tool: dict[str, int] = field(default_factory=dict)
    total_calls: int = 0
    search_counts: dict[str, int] = field(default_factory=dict)
    exposed_before: list[str] = field(default_factory=list)
    discovered_order: list[str] = field(default_factory=list)
    iteration_started: float = 0.0
    prebound: list[str] = field(default_factory=list)  # a strategy's pre-retrieval results
    pre_search: SearchRecord | None = None
    plan: RequestPlan | None = None  # the strategy's plan for the current request

    def fail(self, iteration: Iteration, message: str) -> None:
        iteration.errors.append(message)
        self.trace.errors.append(message)

    def finish(self, iteration: Iteration, stop_reason: str, answer: str | None = None) -> RunResult:
        self.trace.stop_reason = stop_reason
        iteration.duration_ms = (time.perf_counter() - self.iteration_started) * 1000
        return RunResult(self.trace, self.conversation, answer)


def _check_context(context: Any) -> dict:
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise ValueError(f"context must be a dict (with the session id), got {type(context).__name__}")
    return dict(context)


def _usable_turn(turn: Any) -> tuple[AssistantTurn | None, str | None]:
    """(turn, None) when the loop can use it, with dict arguments turned into the JSON text ``ToolCall``
    promises; else (None, what is wrong). A custom ``ChatModel`` may hand back anything."""
    if not isinstance(turn, AssistantTurn):
        return None, f"a {type(turn).__name__}, not an AssistantTurn"
    if turn.content is not None and not isinstance(turn.content, str):
        return None, f"content of type {type(turn.content).__name__}; expected str or None"
    if isinstance(turn.tool_calls, (str, bytes)) or not isinstance(turn.tool_calls, (list, tuple)):
        return None, f"tool_calls of type {type(turn.tool_calls).__name__}; expected a list of ToolCall"
    calls = []
    for i, call in enumerate(turn.tool_calls):
        if not isinstance(call, ToolCall) or not isinstance(call.id, str) or not isinstance(call.name, str):
            return None, f"tool_calls[{i}] that is not a ToolCall with a string id and name: {shown(call)}"
        if not isinstance(call.arguments, str):
            try:
                call = ToolCall(call.id, call.name, dumps_checked(call.arguments, MAX_ARGUMENT_DEPTH))
            except Exception as exc:  # JsonLimitError, or a str() of some argument object that raised
                return None, f"tool_calls[{i}] ({call.name!r:.60}) with arguments that are not JSON: {exc}"
        calls.append(call)
    return (turn if calls == list(turn.tool_calls) else replace(turn, tool_calls=calls)), None


def _check_messages(messages: Any, counter: Any) -> list[dict]:
    """A copy of ``messages`` after checking each is a JSON-representable dict with a string ``role`` whose
    tokens can be counted (what every request of the run will need)."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise ValueError(
            f"messages must be a list of message dicts like {{'role': 'user', 'content': '...'}}, "
            f"got {type(messages).__name__}"
        )
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(
                f"messages[{i}] must be a dict like {{'role': 'user', 'content': '...'}}, "
                f"got {type(message).__name__}: {shown(message, 60)}"
            )
        if not isinstance(message.get("role"), str):
            raise ValueError(f"messages[{i}] needs a string 'role' (system, user, assistant or tool)")
        try:
            dumps_checked(dict(message), MAX_MESSAGE_DEPTH)
        except Exception as exc:  # JsonLimitError, or a str() of some content object that raised
            raise ValueError(f"messages[{i}] ({message['role']:.20}) cannot be sent as JSON: {exc}") from None
        try:
            counter.message_tokens(message)
        except ValueError as exc:
            raise ValueError(f"messages[{i}] ({message['role']:.20}): {exc}") from None
        checked.append(dict(message))
    return checked


def _check_limits(**limits: Any) -> None:
    for label, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"ToolSearchAdvisor: {label} must be a positive integer, got {shown(value, 40)}")


def _check_tools(tools: Any, checked: weakref.WeakValueDictionary) -> dict[str, Tool]:
    """Registered tools by name; the first registration wins, like Spring's putIfAbsent. Each schema is
    checked once per Tool object (``checked`` remembers them): a schema that is circular, not JSON or
    malformed would otherwise break token counting or the request in the middle of a run."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise TypeError(f"tools must be an iterable of Tool objects, got {type(tools).__name__}")
    registered: dict[str, Tool] = {}
    for i, t in enumerate(tools):
        if not isinstance(t, Tool):
            raise TypeError(f"tools must be Tool objects, got {type(t).__name__}: {shown(t)}")
        if checked.get(id(t)) is not t:
            problems = schema_problems(t.parameters)
            if problems:
                raise ValueError(f"tools[{i}] {t.name!r}: {problems[0]}")
            checked[id(t)] = t
        registered.setdefault(t.name, t)
    if TOOL_SEARCH_TOOL_NAME in registered:
        raise ValueError(f"a registered tool may not be named {TOOL_SEARCH_TOOL_NAME!r}: it is the meta-tool")
    return registered


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
        strategy: Strategy | None = None,
    ) -> None:
        if index is None:
            raise ValueError("ToolSearchAdvisor: index is required (a RegexToolIndex, BM25ToolIndex, ...)")
        if not isinstance(system_message_suffix, str) or not system_message_suffix.strip():
            raise ValueError("ToolSearchAdvisor: system_message_suffix must be non-blank text")
        if not isinstance(session_id_key, str) or not session_id_key.strip():
            raise ValueError("ToolSearchAdvisor: session_id_key must be non-blank text")
        _check_limits(
            max_calls_per_tool=max_calls_per_tool,
            max_total_tool_calls=max_total_tool_calls,
            max_repeated_searches=max_repeated_searches,
            max_tool_result_chars=max_tool_result_chars,
        )
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
        if strategy is not None and not isinstance(strategy, Strategy):
            raise ValueError(f"ToolSearchAdvisor: strategy must be a Strategy or None, got {strategy!r:.80}")
        self.strategy = strategy  # None: Spring's behaviour, exactly
        self._sessions: dict[str, _SessionState] = {}
        self._sessions_lock = threading.Lock()
        self._schema_checked: weakref.WeakValueDictionary[int, Tool] = weakref.WeakValueDictionary()

    # ---- sessions -------------------------------------------------------------------------------------
    def _state(self, session_id: str) -> _SessionState:
        BaseToolIndex.check_session_id(session_id)  # a str: 1 and "1" must stay two sessions
        with self._sessions_lock:
            return self._sessions.setdefault(session_id, _SessionState())

    def fingerprint_of(self, session_id: str) -> str | None:
        BaseToolIndex.check_session_id(session_id)
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
        BaseToolIndex.check_session_id(session_id)
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
        context: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """One user request through the loop. Bad arguments raise a ``ValueError``/``TypeError`` naming
        the input; once the run has started, limits and failures end it with a stop reason, never raise
        (except ``strict=True``'s ``ToolNotFoundError``)."""
        context = _check_context(context)
        session_id = self._session_id_from(context)
        original = _check_messages(messages, self._counter())
        registered = _check_tools(tools, self._schema_checked)
        run = self._start(model, session_id, context, original, registered)
        while True:
            iteration, exposed = self._next_iteration(run)
            turn = self._call_model(run, iteration)
            if turn is None:
                return run.finish(iteration, "error")
            if not turn.tool_calls:
                run.trace.final_answer = turn.content
                return run.finish(iteration, "answered", turn.content)
            breach = self._limit_breach(run, turn)
            if breach is not None:
                self._reject_all(run, iteration, turn, breach)
                return run.finish(iteration, breach[0])
            self._execute_calls(run, iteration, turn, exposed)
            iteration.duration_ms = (time.perf_counter() - run.iteration_started) * 1000

    def _session_id_from(self, context: Mapping[str, Any]) -> str:
        """The session id under ``session_id_key``: a non-blank string. Other types are refused rather than
        converted, so ``1`` and ``"1"`` can never silently become the same session."""
        session_id = context.get(self.session_id_key)
        if session_id is None or (isinstance(session_id, str) and not session_id.strip()):
            raise ValueError(f"context must contain a non-null value for {self.session_id_key!r}")
        if not isinstance(session_id, str):
            raise ValueError(
                f"context[{self.session_id_key!r}] must be a string session id, got "
                f"{type(session_id).__name__} {shown(session_id, 40)}; convert it yourself (e.g. str(...)) "
                "if ids that print alike really are the same session"
            )
        return session_id

    def _start(
        self,
        model: ChatModel,
        session_id: str,
        context: dict,
        original: list[dict],
        registered: dict[str, Tool],
    ) -> _Run:
        counter = self._counter()
        user_request = next(
            (m.get("content") or "" for m in reversed(original) if m.get("role") == "user"), ""
        )
        trace = RunTrace(
            session_id=session_id,
            model=str(getattr(model, "name", type(model).__name__)),
            index=self.index_name,
            user_request=user_request if isinstance(user_request, str) else json.dumps(user_request),
            catalog_size=len(registered),
            config=self.config_summary(),
            encoding=counter.encoding_name,
        )
        trace.session_events = self.initialize_session(session_id, list(registered.values()))
        suffix = (
            None
            if self.strategy is None
            else self.strategy.system_suffix(self.system_message_suffix, registered)
        )
        run = _Run(
            model=model,
            session_id=session_id,
            context=context,
            registered=registered,
            original=original,
            conversation=self._with_suffix(original, suffix),
            trace=trace,
            counter=counter,
            all_definitions=[t.definition() for t in registered.values()],
            search_definition=self.search_tool.definition(),
        )
        k = None if self.strategy is None else self.strategy.pre_retrieval()
        if k is not None:
            outcome = self.search_tool.call_parsed(
                {"query": trace.user_request, "maxResults": k}, None, session_id
            )
            run.pre_search = outcome.record
            run.prebound = [n for n in outcome.record.names if n in registered]
        return run

    def _next_iteration(self, run: _Run) -> tuple[Iteration, list[str]]:
        """Work out what the model may see this step, count its tokens, and open the trace's iteration."""
        run.iteration_started = time.perf_counter()
        if self.strategy is not None:
            run.plan = self.strategy.plan(RequestView(run.conversation, run.registered, run.prebound))
            exposed = run.plan.callable
            array = ([TOOL_SEARCH_TOOL_NAME] if run.plan.offers_search else []) + run.plan.tools_array
        else:
            exposed = self._exposed(run.conversation, run.registered)
            array = [TOOL_SEARCH_TOOL_NAME] + exposed
        for name in exposed:
            if name not in run.discovered_order:
                run.discovered_order.append(name)
        iteration = Iteration(
            number=len(run.trace.iterations) + 1,
            exposed_tools=array,
            newly_exposed=[n for n in exposed if n not in run.exposed_before],
            accumulated=list(run.discovered_order),
        )
        if run.pre_search is not None and iteration.number == 1:
            iteration.searches.append(run.pre_search)
            iteration.discovered = list(run.prebound)
        run.exposed_before = exposed
        run.definitions = [
            run.search_definition if n == TOOL_SEARCH_TOOL_NAME else run.registered[n].definition()
            for n in array
        ]
        baseline = self._baseline(run.conversation, run.original)
        iteration.tokens = IterationTokens(
            tool_search=_token_count(run.counter.count_request(_wire(run.conversation), run.definitions)),
            baseline=_token_count(run.counter.count_request(_wire(baseline), run.all_definitions)),
        )
        run.trace.iterations.append(iteration)
        return iteration, exposed

    def _call_model(self, run: _Run, iteration: Iteration) -> AssistantTurn | None:
        """One model call; a failure (or a turn the loop cannot use) is recorded, with the retries before
        it, and gives None."""
        started = time.perf_counter()
        try:
            turn = run.model.complete([dict(m) for m in run.conversation], run.definitions)
        except Exception as exc:
            iteration.model_ms = (time.perf_counter() - started) * 1000
            iteration.retries = list(getattr(exc, "retries", None) or [])
            run.fail(iteration, f"model call failed: {type(exc).__name__}: {exc}")
            return None
        iteration.model_ms = (time.perf_counter() - started) * 1000
        usable, problem = _usable_turn(turn)
        if usable is None:
            run.fail(iteration, f"{run.trace.model}: complete() returned {problem}")
            return None
        turn = usable
        iteration.retries = list(turn.retries)
        iteration.assistant_content = turn.content
        try:
            iteration.tokens.completion = run.counter.count_completion(
                turn.content, [c.to_dict() for c in turn.tool_calls]
            ).total
        except ValueError as exc:
            run.fail(
                iteration, f"{run.trace.model}: complete() returned a turn that cannot be counted: {exc}"
            )
            return None
        iteration.tokens.api_usage = turn.usage.to_dict() if turn.usage else None
        run.conversation.append(turn.to_message())
        return turn

    def _limit_breach(self, run: _Run, turn: AssistantTurn) -> tuple[str, str] | None:
        """Spring's tool manager checks the limits before running a turn's calls and, on a breach, returns
        to the caller without calling the model again. Gives (stop reason, message) or None."""
        breach = None
        for call in turn.tool_calls:
            run.calls_per_tool[call.name] = run.calls_per_tool.get(call.name, 0) + 1
            run.total_calls += 1
            if run.calls_per_tool[call.name] > self.max_calls_per_tool:
                breach = (
                    "max_calls_per_tool",
                    f"tool {call.name!r} called more than {self.max_calls_per_tool} times",
                )
            elif run.total_calls > self.max_total_tool_calls:
                breach = (
                    "max_total_tool_calls",
                    f"more than {self.max_total_tool_calls} tool calls in this request",
                )
        return breach

    @staticmethod
    def _reject_all(run: _Run, iteration: Iteration, turn: AssistantTurn, breach: tuple[str, str]) -> None:
        message = f"limit reached: {breach[1]}"
        run.trace.errors.append(message)
        iteration.errors.append(message)
        for call in turn.tool_calls:
            iteration.tool_calls.append(
                ToolCallRecord(call.id, call.name, call.arguments, "rejected", "", message)
            )

    def _execute_calls(
        self, run: _Run, iteration: Iteration, turn: AssistantTurn, exposed: list[str]
    ) -> None:
        """Run every call of the turn and append one tool message per call."""
        exposed_set = set(exposed)
        for call in turn.tool_calls:
            record, content, search = self._execute(call, exposed_set, run)
            iteration.tool_calls.append(record)
            if search is not None:
                iteration.searches.append(search)
                for name in search.names:
                    if name in run.registered and name not in run.discovered_order + iteration.discovered:
                        iteration.discovered.append(name)
            if record.error:
                iteration.errors.append(f"{call.name}: {record.error}")
            run.conversation.append(
                {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
            )

    # ---- helpers ----------------------------------------------------------------------------------------
    def _execute(
        self, call: ToolCall, exposed: set[str], run: _Run
    ) -> tuple[ToolCallRecord, str, SearchRecord | None]:
        """Run one tool call; returns (record, tool-message content, search record or None). Never raises
        unless ``strict``. Everything stays local: one advisor serves many sessions on many threads."""
        started = time.perf_counter()

        def done(
            kind: str, content: str, error: str | None = None, search: SearchRecord | None = None
        ) -> tuple[ToolCallRecord, str, SearchRecord | None]:
            ms = (time.perf_counter() - started) * 1000
            return (
                ToolCallRecord(call.id, call.name, call.arguments, kind, content, error, ms),
                content,
                search,
            )

        args, problem = parse_arguments(call.arguments)
        searchable = run.plan is None or run.plan.offers_search
        if call.name == TOOL_SEARCH_TOOL_NAME and searchable:
            result, record = self._search_call(call, args, problem, run)
            return done("search", result, record.error, record)
        if call.name not in exposed:
            if self.strict:
                raise ToolNotFoundError(f"No ToolCallback found for tool name: {call.name}")
            known = "registered but not discovered yet" if call.name in run.registered else "not a known tool"
            then = (
                f"Call {TOOL_SEARCH_TOOL_NAME} first to discover the tools you need, then call one of the "
                "names it returns."
                if searchable
                else "Use one of the tools you were given, or answer."
            )
            message = f"tool {call.name!r} is not available ({known}). {then}"
            return done("rejected", error_result(message), message)
        tool = run.registered[call.name]
        if problem or tool.function is None:
            message = (
                f"{call.name}: {problem}"
                if problem
                else f"tool {call.name!r} has no implementation in this catalog, so it cannot be run"
            )
            return done("rejected", error_result(message), message)
        content, error = self._run_tool(tool, args, run)
        return done("tool", content, error)

    def _search_call(
        self, call: ToolCall, args: dict, problem: str | None, run: _Run
    ) -> tuple[str, SearchRecord]:
        """One toolSearchTool call with its parsed arguments: (the result text, the trace's record)."""
        refused = self._repeated_search(args, call.id, run.search_counts)
        if refused is not None:
            return error_result(refused.error or ""), refused
        if self.strategy is not None and not problem:
            args = self.strategy.search_arguments(args)
        outcome = self.search_tool.call_parsed(args, problem, run.session_id, call.id)
        result = outcome.result
        if self.strategy is not None and not outcome.is_error:
            result = self.strategy.search_result(outcome.record.names, result, run.registered)
        return result, outcome.record

    def _repeated_search(
        self, args: dict, call_id: str, search_counts: dict[str, int]
    ) -> SearchRecord | None:
        """The runaway-loop guard: a refusal record once the same query was searched too often, else None."""
        query = args.get("query")
        if not isinstance(query, str):
            return None
        key = query.strip().casefold()
        search_counts[key] = search_counts.get(key, 0) + 1
        if search_counts[key] <= self.max_repeated_searches:
            return None
        message = (
            f"you already searched for {query!r} {self.max_repeated_searches} times and the results will not "
            "change; call one of the tools found, search for something different, or answer"
        )
        return SearchRecord(call_id, query, None, error=message)

    def _run_tool(self, tool: Tool, args: dict, run: _Run) -> tuple[str, str | None]:
        """Call the tool and turn its value into the text the model reads: (content, error or None)."""
        tool_context = {**run.context, TOOL_SEARCH_TOOL_SESSION_ID_KEY: run.session_id}
        try:
            value = _invoke(tool.function, args, tool_context)
        except Exception as exc:
            message = f"{tool.name} raised {type(exc).__name__}: {exc}"
            return error_result(message), message
        try:
            content = value if isinstance(value, str) else dumps_checked(value, MAX_RESULT_DEPTH)
        except JsonLimitError as exc:
            message = f"{tool.name} returned a {type(value).__name__} the model cannot read: {exc}"
            return error_result(message), message
        except Exception as exc:  # a str() of some returned object raised
            kind = type(value).__name__
            message = f"{tool.name} returned a {kind} that cannot be converted to text: {exc!r:.200}"
            return error_result(message), message
        if len(content) <= self.max_tool_result_chars:
            return content, None
        cut = len(content) - self.max_tool_result_chars
        content = content[: self.max_tool_result_chars] + f"\n[... {cut} more characters cut by the advisor]"
        return content, f"result cut to {self.max_tool_result_chars} characters ({cut} cut)"

    def _exposed(self, conversation: list[dict], registered: dict[str, Tool]) -> list[str]:
        """Registered tools named by earlier search results, in discovery order (see ``found_tools``)."""
        return found_tools(conversation, registered, self.accumulation, self.strict)

    def _with_suffix(self, messages: list[dict], suffix: str | None = None) -> list[dict]:
        """The messages with ``suffix`` (default: the advisor's) appended to the system message; a strategy
        without the meta-tool passes "" and the messages go out unchanged."""
        suffix = self.system_message_suffix if suffix is None else suffix
        out = [dict(m) for m in messages]
        if not suffix:
            return out
        for m in out:
            if m.get("role") == "system":
                m["content"] = (m.get("content") or "") + suffix
                return out
        return [{"role": "system", "content": suffix}] + out

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

    def _counter(self) -> Any:
        if self._token_counter is None:
            self._token_counter = TokenCounter()
        return self._token_counter

    def config_summary(self) -> dict:
        summary: dict[str, Any] = {
            "index": self.index_name,
            "max_results": self.max_results,
            "reference_tool_name_accumulation": self.accumulation,
            "session_id_key": self.session_id_key,
            "eviction": repr(self.eviction),
            "max_calls_per_tool": self.max_calls_per_tool,
            "max_total_tool_calls": self.max_total_tool_calls,
            "strict": self.strict,
            "max_repeated_searches": self.max_repeated_searches,
            "max_tool_result_chars": self.max_tool_result_chars,
        }
        if self.strategy is not None:
            summary["strategy"] = self.strategy.describe()
        return summary


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
