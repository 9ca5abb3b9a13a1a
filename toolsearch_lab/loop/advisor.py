"""The advisor loop (Spring's ToolSearchToolCallingAdvisor on top of ToolCallingAdvisor, spec §7).

Per user request: evict what the eviction strategy says, fingerprint the registered tools and re-index the
session only when the fingerprint changed, append the suffix to the system message. Per iteration: ask the
strategy what to expose (Spring's loop, :class:`~toolsearch_lab.loop.strategy.SearchOnly`, by default:
``toolSearchTool`` plus the registered tools named in earlier search results), call the model, run its tool
calls, repeat until it answers without tool calls or a limit is reached. Every step goes into the trace.

Deliberate deviations from Spring, each an option:
- a call to a tool that is not exposed is answered with an error result telling the model to search first
  (``strict=True`` raises like Spring's "No ToolCallback found for tool name");
- a search result that is not a JSON array (our error results) is skipped, not a request failure
  (``strict=True`` fails the request, as Spring does);
- exposed tools come in a deterministic order: toolSearchTool first, then discovery order;
- the same search repeated ``max_repeated_searches`` times gets an error result (runaway-loop guard);
- everything sent back to the model as a tool message (results, error results, exception text) longer
  than ``max_tool_result_chars`` is cut, with a marker saying so;
- any ``BaseException`` but ``KeyboardInterrupt`` from a tool (``sys.exit()`` included) is an error result,
  and so is a call that takes longer than ``tool_timeout`` seconds (60; None: no deadline) or returns
  something that is not text or JSON data; results are scrubbed of registered secrets and flagged when they
  look like injected instructions (``ToolCallRecord.flags``);
- two different tools with one name are refused (Spring keeps the first silently);
- ``protect_running_sessions=True`` pins a session while its run is in progress, so the eviction
  strategies of this package do not evict it for other sessions' requests; a session evicted anyway
  (``AlwaysEvict`` from another request of the session, ``evict_session``, a strategy without pins) is
  re-indexed before the run's next search, and the trace gets a ``SessionEvent`` saying so. ``False`` is
  Spring's behaviour: no pins, and an evicted session's searches find nothing (the trace still records an
  ``evicted_during_run`` event);
- ``enforce_max_results_range=True`` refuses a ``maxResults`` outside 1-10 and puts that range into the
  meta-tool's schema. Off by default, as in Spring: 0 gives no results, 20 gives up to 20, a negative
  number is an error result;
- ``destructive="exclude"`` or ``"ask"`` holds tools whose MCP annotations declare them destructive back
  from search results (always, or unless the query asks for them: :mod:`toolsearch_lab.loop.policy`).
  ``"include"``, the default, is Spring's behaviour;
- in a conversation (:meth:`ToolSearchAdvisor.chat`), ``accumulation_source="session"`` (the default) keeps
  the tools each session's turns found in the advisor, so chat memory that drops or summarises old messages
  does not take them away; ``"history"`` is Spring's rule, the names read back from the toolSearchTool
  results in the messages sent, which a message window or a compaction removes (spring-ai #7034). A
  session's record goes when the session is evicted (:mod:`toolsearch_lab.loop.conversation`).
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolsearch_lab.loop.calls import execute_call, search_session
from toolsearch_lab.loop.checks import check_context, check_messages, check_tools, usable_turn
from toolsearch_lab.loop.conversation import (
    ACCUMULATION_SOURCES,
    AccumulationSource,
    Conversation,
    check_source,
)
from toolsearch_lab.loop.execution import (
    DEFAULT_TOOL_TIMEOUT_S,
    MAX_RESULT_DEPTH,
    describe_exception,
)
from toolsearch_lab.loop.limits import limit_breach
from toolsearch_lab.loop.memory import ChatMemory
from toolsearch_lab.loop.messages import api_messages, baseline_messages, with_suffix
from toolsearch_lab.loop.policy import DestructivePolicy
from toolsearch_lab.loop.run import RunResult, RunState, ToolNotFoundError, TurnReading, reject_all
from toolsearch_lab.loop.search_tool import (
    ToolSearchTool,
)
from toolsearch_lab.loop.sessions import IndexedSessions
from toolsearch_lab.loop.strategies import resolve_strategy
from toolsearch_lab.loop.strategy import RequestView, Strategy
from toolsearch_lab.model import (
    TOOL_SEARCH_TOOL_NAME,
    Tool,
    ToolIndex,
    check_positive_int,
    session_key,
)
from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.session.eviction import EvictionStrategy, LruEviction
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import (
    ANSWERED,
    Iteration,
    IterationTokens,
    RunTrace,
    SessionEvent,
)

__all__ = [
    "ACCUMULATION_SOURCES",
    "DEFAULT_MAX_CALLS_PER_TOOL",
    "DEFAULT_MAX_TOTAL_TOOL_CALLS",
    "DEFAULT_SESSION_ID_KEY",
    "DEFAULT_SYSTEM_MESSAGE_SUFFIX",
    "MAX_RESULT_DEPTH",
    "RunResult",
    "ToolNotFoundError",
    "ToolSearchAdvisor",
]

DEFAULT_SESSION_ID_KEY = "chat_memory_conversation_id"
DEFAULT_SYSTEM_MESSAGE_SUFFIX = (
    "\nYou can discover tools on demand with a special tool named toolSearchTool. Most tools are not "
    "loaded yet: when you need to act and none of the tools you have fits, call toolSearchTool with a short "
    "description of the capability you need, then call the tools it finds."
)
DEFAULT_MAX_CALLS_PER_TOOL = 40
DEFAULT_MAX_TOTAL_TOOL_CALLS = 150


class ToolSearchAdvisor:
    """Runs the tool-search loop. Keep one instance per application: it remembers each session's fingerprint
    so an unchanged catalog is not re-indexed (Spring loses this when Boot rebuilds the advisor per request).

    ``strategy`` decides what each request exposes; the default is Spring's loop,
    ``SearchOnly(reference_tool_name_accumulation)``. Accumulation is the strategy's setting: pass
    ``reference_tool_name_accumulation`` only without a strategy (or agreeing with it).
    """

    def __init__(
        self,
        index: ToolIndex,
        *,
        max_results: int | None = None,
        system_message_suffix: str = DEFAULT_SYSTEM_MESSAGE_SUFFIX,
        reference_tool_name_accumulation: bool | None = None,
        session_id_key: str = DEFAULT_SESSION_ID_KEY,
        eviction: EvictionStrategy | None = None,
        max_calls_per_tool: int = DEFAULT_MAX_CALLS_PER_TOOL,
        max_total_tool_calls: int = DEFAULT_MAX_TOTAL_TOOL_CALLS,
        strict: bool = False,
        max_repeated_searches: int = 3,
        max_tool_result_chars: int = 100_000,
        token_counter: TokenCounter | None = None,
        index_name: str | None = None,
        strategy: Strategy | None = None,
        enforce_max_results_range: bool = False,
        protect_running_sessions: bool = True,
        destructive: DestructivePolicy = "include",
        accumulation_source: AccumulationSource = "session",
        tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT_S,
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
            check_positive_int(value, f"ToolSearchAdvisor: {label}")
        self.index = index
        self.index_name = index_name or type(index).__name__
        self.search_tool = ToolSearchTool(
            index, max_results, enforce_max_results_range=enforce_max_results_range, destructive=destructive
        )
        self.system_message_suffix = system_message_suffix
        self.strategy, self._strategy_chosen = resolve_strategy(strategy, reference_tool_name_accumulation)
        self.session_id_key = session_id_key
        self.eviction = eviction if eviction is not None else LruEviction(1000)
        if not hasattr(self.eviction, "on_access") or not hasattr(self.eviction, "on_removed"):
            raise ValueError(f"ToolSearchAdvisor: eviction {self.eviction!r} has no on_access/on_removed")
        self.max_calls_per_tool = max_calls_per_tool
        self.max_total_tool_calls = max_total_tool_calls
        self.strict = strict
        self.max_repeated_searches = max_repeated_searches
        self.max_tool_result_chars = max_tool_result_chars
        self.protect_running_sessions = bool(protect_running_sessions)
        self.accumulation_source: AccumulationSource = check_source(accumulation_source)
        self.tool_timeout = _check_timeout(tool_timeout)
        self._token_counter = token_counter
        self.sessions = IndexedSessions(index, self.eviction)
        self._schema_checked: weakref.WeakValueDictionary[int, Tool] = weakref.WeakValueDictionary()

    @property
    def accumulation(self) -> bool:
        """Spring's ``referenceToolNameAccumulation``: the strategy's setting (it lives there only)."""
        return self.strategy.accumulation

    @property
    def max_results(self) -> int | None:
        """The advisor's default ``maxResults``: the meta-tool's setting (it lives there only)."""
        return self.search_tool.max_results

    @property
    def enforce_max_results_range(self) -> bool:
        return self.search_tool.enforce_max_results_range

    # ---- sessions -------------------------------------------------------------------------------------
    def fingerprint_of(self, session_id: str) -> str | None:
        return self.sessions.fingerprint_of(session_key(session_id))

    def evict_session(self, session_id: str) -> SessionEvent:
        """Clear the session's index and fingerprint (call it on logout). The next request re-indexes."""
        return self.sessions.evict(session_key(session_id))

    def initialize_session(self, session_id: str, tools: list[Tool]) -> list[SessionEvent]:
        """Spring's initializeSession: eviction, then fingerprint compare-and-reindex (atomic per session)."""
        return self.sessions.initialize(session_key(session_id), tools)

    # ---- the loop ---------------------------------------------------------------------------------------
    def run(
        self,
        model: ChatModel,
        messages: list[dict[str, Any]],
        tools: Iterable[Tool],
        context: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> RunResult:
        """One user request through the loop. The session id is ``session_id``, or Spring's way, the
        ``context`` value under ``session_id_key`` (both: they must agree). Bad arguments raise a
        ``ValueError``/``TypeError`` naming the input; once the run has started, limits and failures end it
        with a stop reason, never raise (except ``strict=True``'s ``ToolNotFoundError``)."""
        return self._run(model, messages, tools, context, session_id, None)

    def chat(
        self,
        model: ChatModel,
        user_messages: Sequence[str],
        tools: Iterable[Tool],
        context: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> RunResult:
        """A conversation: each of ``user_messages`` in turn, in one session, through chat memory; ``options``
        are :meth:`conversation`'s (``session_id``, ``memory``: ``full``, ``window:N``, ``compact:N`` or a
        :class:`~toolsearch_lab.loop.memory.ChatMemory`, ``system``, ``conversation_history``). The result's
        trace covers every turn (``trace.turns``); its messages and answer are the last turn's."""
        return self.conversation(model, tools, context, **options).send_all(user_messages)

    def conversation(
        self,
        model: ChatModel,
        tools: Iterable[Tool],
        context: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        memory: ChatMemory | str | None = None,
        system: str | None = None,
        conversation_history: bool = True,
    ) -> Conversation:
        """A conversation to hold turn by turn (``send``); :meth:`chat` runs a list of messages."""
        return Conversation(
            self,
            model,
            list(tools),
            context=context,
            session_id=session_id,
            memory=memory,
            system=system,
            conversation_history=conversation_history,
        )

    def _run(
        self,
        model: ChatModel,
        messages: list[dict[str, Any]],
        tools: Iterable[Tool],
        context: Mapping[str, Any] | None,
        session_id: str | None,
        turn: TurnReading | None,
    ) -> RunResult:
        """``run``, or one turn of a conversation (``turn`` says how it reads the tools found before it)."""
        context = check_context(context)
        session = self._session_id(context, session_id)
        context[self.session_id_key] = session
        original = check_messages(messages, self._counter())
        registered = check_tools(tools, self._schema_checked)
        if self.protect_running_sessions:
            self.sessions.pin(session)
        try:
            return self._loop(self._start(model, session, context, original, registered, turn))
        finally:
            if self.protect_running_sessions:
                self.sessions.unpin(session)

    def _loop(self, run: RunState) -> RunResult:
        while True:
            iteration = self._next_iteration(run)
            turn = self._call_model(run, iteration)
            if turn is None:
                return run.finish(iteration, "error")
            if not turn.tool_calls:
                run.trace.final_answer = turn.content
                return run.finish(iteration, ANSWERED, turn.content)
            breach, run.total_calls = limit_breach(
                turn, run.calls_per_tool, run.total_calls, self.max_calls_per_tool, self.max_total_tool_calls
            )
            if breach is not None:
                reject_all(run, iteration, turn, breach)
                return run.finish(iteration, breach[0])
            self._execute_calls(run, iteration, turn)
            iteration.duration_ms = (time.perf_counter() - run.iteration_started) * 1000

    def _session_id(self, context: Mapping[str, Any], session_id: Any) -> str:
        """The run's session id, checked once here and a plain ``str`` from then on."""
        key = self.session_id_key
        in_context = context.get(key)
        if session_id is not None:
            plain = session_key(session_id)
            if in_context is not None and in_context != plain:
                raise ValueError(
                    f"session_id={plain!r:.60} and context[{key!r}]={in_context!r:.60} disagree; "
                    "pass the session id one way"
                )
            return plain
        try:
            return session_key(in_context, what=f"context[{key!r}]")
        except ValueError:
            if in_context is None or isinstance(in_context, str):  # missing or blank: Spring's message
                raise ValueError(
                    f"context must contain a non-null value for {key!r} (or pass session_id=...)"
                ) from None
            raise

    def _start(
        self,
        model: ChatModel,
        session_id: str,
        context: dict[str, Any],
        original: list[dict[str, Any]],
        registered: dict[str, Tool],
        turn: TurnReading | None = None,
    ) -> RunState:
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
        trace.session_events, generation = self.sessions.initialize_run(session_id, list(registered.values()))
        run = RunState(
            model=model,
            session_id=session_id,
            context=context,
            registered=registered,
            original=original,
            conversation=with_suffix(
                original, self.strategy.system_suffix(self.system_message_suffix, registered)
            ),
            trace=trace,
            counter=counter,
            all_definitions=[t.definition() for t in registered.values()],
            search_definition=self.search_tool.definition(),
            generation=generation,
        )
        if turn is not None:  # read after initialize: an eviction there empties the session's record
            run.kept = tuple(self.sessions.found_groups(session_id)) if turn.session_record else ()
            run.scan_from = turn.scan_from(run.conversation)
        count = self.strategy.pre_retrieval()
        if count is not None:
            outcome = search_session(self, run, {"query": trace.user_request, "maxResults": count}, None, "")
            run.pre_search = outcome.record
            run.prebound = [n for n in outcome.record.names if n in registered]
        return run

    def _next_iteration(self, run: RunState) -> Iteration:
        """Work out what the model may see this step, count its tokens, and open the trace's iteration."""
        run.iteration_started = time.perf_counter()
        run.plan = self.strategy.plan(
            RequestView(run.conversation, run.registered, run.prebound, self.strict, run.kept, run.scan_from)
        )
        exposed = run.plan.callable
        array = ([TOOL_SEARCH_TOOL_NAME] if run.plan.offers_search else []) + run.plan.tools_array
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
        baseline = baseline_messages(run.conversation, run.original)
        iteration.tokens = IterationTokens(
            tool_search=run.counter.count_request(api_messages(run.conversation), run.definitions),
            baseline=run.counter.count_request(api_messages(baseline), run.all_definitions),
        )
        run.trace.iterations.append(iteration)
        return iteration

    def _call_model(self, run: RunState, iteration: Iteration) -> AssistantTurn | None:
        """One model call; a failure (or a turn the loop cannot use) is recorded, with the retries before
        it, and gives None."""
        started = time.perf_counter()
        try:
            turn = run.model.complete([dict(m) for m in run.conversation], run.definitions)
        except Exception as exc:
            iteration.model_ms = (time.perf_counter() - started) * 1000
            iteration.retries = list(getattr(exc, "retries", None) or [])
            run.fail(iteration, f"model call failed: {describe_exception(exc)}")
            return None
        iteration.model_ms = (time.perf_counter() - started) * 1000
        usable, problem = usable_turn(turn)
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

    def _execute_calls(self, run: RunState, iteration: Iteration, turn: AssistantTurn) -> None:
        """Run every call of the turn and append one tool message per call."""
        exposed = set(run.plan.callable)
        for call in turn.tool_calls:
            record, content, search = execute_call(self, call, exposed, run)
            iteration.tool_calls.append(record)
            if search is not None:
                iteration.searches.append(search)
                for name in search.names:
                    if name in run.registered and name not in run.discovered_order + iteration.discovered:
                        iteration.discovered.append(name)
            if record.error:
                iteration.errors.append(f"{call.name:.200}: {record.error}")
            run.conversation.append(
                {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
            )

    def _counter(self) -> TokenCounter:
        if self._token_counter is None:
            self._token_counter = TokenCounter()
        return self._token_counter

    def config_summary(self) -> dict[str, Any]:
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
            "tool_timeout_s": self.tool_timeout,
        }
        if not self.protect_running_sessions:
            summary["protect_running_sessions"] = False
        if self.enforce_max_results_range:
            summary["enforce_max_results_range"] = True
        if self.search_tool.destructive != "include":
            summary["destructive"] = self.search_tool.destructive
        setting = getattr(self.index, "abstention_setting", None)
        if isinstance(setting, str):  # an index that can judge that no tool fits (not Spring's)
            summary["abstention"] = setting
        if self._strategy_chosen:  # Spring's default loop leaves the config as Spring's settings alone
            summary["strategy"] = self.strategy.describe()
        return summary


def _check_timeout(value: object) -> float | None:
    """``tool_timeout``: seconds > 0 (a finite number), or None for no deadline."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ValueError(f"ToolSearchAdvisor: tool_timeout must be seconds > 0 or None, got {value!r:.40}")
    return float(value)
