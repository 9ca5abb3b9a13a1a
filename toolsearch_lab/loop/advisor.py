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
- ``destructive="exclude"`` or ``"ask"`` holds tools that may be destructive (MCP's reading of their
  annotations) back from search results (always, or unless the query asks for them:
  :mod:`toolsearch_lab.loop.policy`). ``"include"``, the default, is Spring's behaviour; a tool call a
  person declines (:class:`~toolsearch_lab.loop.policy.ToolCallRefused`) stops the run ("refused");
- in a conversation (each turn a ``run(..., turn=...)``; a
  :class:`~toolsearch_lab.loop.conversation.Conversation` holds one, with chat memory where Spring's
  application would put it: :mod:`toolsearch_lab.loop.chain`), the advisor keeps the tools each session's
  turns found, and ``accumulation_source="session"`` (the default) reads them back with the turn's whole
  history, so neither memory nor its placement takes them away; ``"history"`` is Spring's rule, the names
  read back from the toolSearchTool results in the messages the advisor holds, which a memory outside the
  loop never stores, a window or a compaction removes, and the loop's own history turned off drops after
  each tool call (spring-ai #7034). A session's record goes when the session is evicted
  (:mod:`toolsearch_lab.loop.conversation`).

Every setting that is a plain value is a field of :class:`~toolsearch_lab.loop.settings.AdvisorSettings`,
checked once when it is made.
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from toolsearch_lab.loop.calls import execute_call, search_session
from toolsearch_lab.loop.chain import Downstream
from toolsearch_lab.loop.checks import check_context, check_messages, check_tools, session_of, usable_turn
from toolsearch_lab.loop.execution import MAX_RESULT_DEPTH, describe_exception
from toolsearch_lab.loop.limits import limit_breach
from toolsearch_lab.loop.messages import api_messages, baseline_messages, with_suffix
from toolsearch_lab.loop.policy import DestructivePolicy
from toolsearch_lab.loop.run import RunResult, RunState, ToolNotFoundError, TurnReading, reject_all
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.loop.sessions import IndexedSessions
from toolsearch_lab.loop.settings import (
    DEFAULT_MAX_CALLS_PER_TOOL,
    DEFAULT_MAX_REPEATED_SEARCHES,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
    DEFAULT_MAX_TOTAL_TOOL_CALLS,
    DEFAULT_SESSION_ID_KEY,
    DEFAULT_SYSTEM_MESSAGE_SUFFIX,
    DEFAULT_TOOL_TIMEOUT_S,
    AccumulationSource,
    AdvisorSettings,
    settings_from,
)
from toolsearch_lab.loop.strategies import resolve_strategy
from toolsearch_lab.loop.strategy import RequestView, Strategy
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME, Tool, ToolIndex, session_key
from toolsearch_lab.models.base import AssistantTurn, ChatModel
from toolsearch_lab.session.eviction import EvictionStrategy, LruEviction
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import (
    ANSWERED,
    REFUSALS,
    FailureKind,
    Iteration,
    IterationTokens,
    RunTrace,
    SessionEvent,
    ToolCallRecord,
)

__all__ = ["MAX_RESULT_DEPTH", "RunResult", "ToolNotFoundError", "ToolSearchAdvisor", "TurnReading"]


class ToolSearchAdvisor:
    """Runs the tool-search loop. Keep one instance per application: it remembers each session's fingerprint
    so an unchanged catalog is not re-indexed (Spring loses this when Boot rebuilds the advisor per request).

    The keyword settings are :class:`~toolsearch_lab.loop.settings.AdvisorSettings`' fields, checked once,
    into :attr:`settings`; or pass ``settings=`` made before (a ``ToolSearchConfig`` is one) and leave them
    at their defaults. ``strategy`` decides what each request exposes; the default is Spring's loop,
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
        max_repeated_searches: int = DEFAULT_MAX_REPEATED_SEARCHES,
        max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
        token_counter: TokenCounter | None = None,
        index_name: str | None = None,
        strategy: Strategy | None = None,
        enforce_max_results_range: bool = False,
        protect_running_sessions: bool = True,
        destructive: DestructivePolicy = "include",
        accumulation_source: AccumulationSource = "session",
        tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT_S,
        settings: AdvisorSettings | None = None,
    ) -> None:
        if index is None:
            raise ValueError("ToolSearchAdvisor: index is required (a RegexToolIndex, BM25ToolIndex, ...)")
        self.settings: AdvisorSettings = settings_from(
            settings,
            "ToolSearchAdvisor",
            max_results=max_results,
            system_message_suffix=system_message_suffix,
            reference_tool_name_accumulation=reference_tool_name_accumulation,
            session_id_key=session_id_key,
            max_calls_per_tool=max_calls_per_tool,
            max_total_tool_calls=max_total_tool_calls,
            strict=strict,
            max_repeated_searches=max_repeated_searches,
            max_tool_result_chars=max_tool_result_chars,
            enforce_max_results_range=enforce_max_results_range,
            protect_running_sessions=protect_running_sessions,
            destructive=destructive,
            accumulation_source=accumulation_source,
            tool_timeout=tool_timeout,
        )
        self.index = index
        self.index_name = index_name or type(index).__name__
        self.search_tool = ToolSearchTool(index, self.settings)
        self.strategy, self._strategy_chosen = resolve_strategy(
            strategy, self.settings.reference_tool_name_accumulation
        )
        self.eviction = eviction if eviction is not None else LruEviction(1000)
        if not hasattr(self.eviction, "on_access") or not hasattr(self.eviction, "on_removed"):
            raise ValueError(f"ToolSearchAdvisor: eviction {self.eviction!r} has no on_access/on_removed")
        self._token_counter = token_counter
        self.sessions = IndexedSessions(index, self.eviction)
        self._schema_checked: weakref.WeakValueDictionary[int, Tool] = weakref.WeakValueDictionary()

    @property
    def accumulation(self) -> bool:
        """Spring's ``referenceToolNameAccumulation`` in effect: the strategy's (it lives there only)."""
        return self.strategy.accumulation

    # ---- sessions -------------------------------------------------------------------------------------
    def fingerprint_of(self, session_id: str) -> str | None:
        return self.sessions.fingerprint_of(session_key(session_id))

    def evict_session(self, session_id: str) -> SessionEvent:
        """Clear the session's index, fingerprint and record of found tools (call it on logout). The next
        request re-indexes."""
        return self.sessions.evict(session_key(session_id))

    def initialize_session(self, session_id: str, tools: list[Tool]) -> list[SessionEvent]:
        """Spring's initializeSession: eviction, then fingerprint compare-and-reindex (atomic per session)."""
        return self.sessions.initialize(session_key(session_id), tools)

    def found_groups(self, session_id: str) -> list[tuple[str, ...]]:
        """The session's record: the search groups its turns found (``run(..., turn=...)``), oldest first;
        empty after the session was evicted."""
        return self.sessions.found_groups(session_key(session_id))

    # ---- requests ------------------------------------------------------------------------------------
    def run(
        self,
        model: ChatModel,
        messages: list[dict[str, Any]],
        tools: Iterable[Tool],
        context: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        turn: TurnReading | None = None,
        downstream: Downstream | None = None,
    ) -> RunResult:
        """One user request through the loop. The session id is ``session_id``, or Spring's way, the
        ``context`` value under ``session_id_key`` (both: they must agree). Bad arguments raise a
        ``ValueError``/``TypeError`` naming the input; once the run has started, limits and failures end it
        with a stop reason, never raise (except ``strict=True``'s ``ToolNotFoundError``).

        Without ``turn``, Spring's request: the tools found before are read from ``messages``. With one, the
        request is a turn of a conversation its caller holds (a
        :class:`~toolsearch_lab.loop.conversation.Conversation`, or the application itself): ``messages``
        are exactly what this advisor receives for the turn, whoever chose them, and ``turn`` says how the
        tools found before are read from them and from the session's record
        (:class:`~toolsearch_lab.loop.run.TurnReading`; ``TurnReading.of`` gives an
        ``accumulation_source``'s). A turn's searches (``RunResult.found``) are added to the session's record
        (:meth:`found_groups`).

        ``downstream``: what runs between this advisor and the model on every request, as Spring's advisors
        of higher order do (a :class:`~toolsearch_lab.loop.chain.MemoryAdvisor` inside the loop): the model
        receives ``downstream.before(messages)``, and ``downstream.after`` gets each reply. What it adds is
        never scanned for found tools; the trace counts the tokens of what the model received. A
        ``downstream`` that raises ends the run with stop reason "error"."""
        if turn is not None and not isinstance(turn, TurnReading):
            raise TypeError(f"run: turn must be a TurnReading or None, got {type(turn).__name__}")
        if downstream is not None and not all(
            callable(getattr(downstream, hook, None)) for hook in ("before", "after")
        ):
            kind = type(downstream).__name__
            raise TypeError(f"run: downstream must have before(messages) and after(message), got {kind}")
        context = check_context(context)
        session = session_of(context, session_id, self.settings.session_id_key)
        context[self.settings.session_id_key] = session
        original = check_messages(messages, self._counter())
        registered = check_tools(tools, self._schema_checked)
        if self.settings.protect_running_sessions:
            self.sessions.pin(session)
        try:
            result = self._loop(self._start(model, session, context, original, registered, turn, downstream))
        finally:
            if self.settings.protect_running_sessions:
                self.sessions.unpin(session)
        if turn is not None:
            self.sessions.record_found(session, result.found)
        return result

    # ---- the loop ---------------------------------------------------------------------------------------
    def _loop(self, run: RunState) -> RunResult:
        while True:
            iteration = self._next_iteration(run)
            turn = self._call_model(run, iteration)
            if turn is None:
                return run.finish(iteration, "error")
            if not turn.tool_calls:
                run.trace.final_answer = turn.content
                return run.finish(iteration, ANSWERED, turn.content)
            limits = self.settings.max_calls_per_tool, self.settings.max_total_tool_calls
            breach, run.total_calls = limit_breach(turn, run.calls_per_tool, run.total_calls, *limits)
            if breach is not None:
                reject_all(run, iteration, turn, breach)
                return run.finish(iteration, breach[0])
            self._execute_calls(run, iteration, turn)
            if any(call.failure in REFUSALS for call in iteration.tool_calls):
                return run.finish(iteration, "refused")  # a person withheld their yes: stop there
            iteration.duration_ms = (time.perf_counter() - run.iteration_started) * 1000

    def _start(
        self,
        model: ChatModel,
        session_id: str,
        context: dict[str, Any],
        original: list[dict[str, Any]],
        registered: dict[str, Tool],
        turn: TurnReading | None = None,
        downstream: Downstream | None = None,
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
        suffix = self.strategy.system_suffix(self.settings.system_message_suffix, registered)
        conversation = with_suffix(original, suffix)
        run = RunState(
            model=model,
            session_id=session_id,
            context=context,
            registered=registered,
            original=original,
            conversation=conversation,
            trace=trace,
            counter=counter,
            all_definitions=[t.definition() for t in registered.values()],
            search_definition=self.search_tool.definition(),
            generation=generation,
            opened=len(conversation),
            reading=turn,
            downstream=downstream,
        )
        if turn is not None and turn.session_record:  # after initialize: an eviction there empties it
            run.kept = tuple(self.sessions.found_groups(session_id))
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
            RequestView(
                run.conversation,
                run.registered,
                run.prebound,
                self.settings.strict,
                run.kept,
                run.scan_from(),
            )
        )
        exposed = run.plan.callable
        run.exposed.append(tuple(exposed))
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
        run.trace.iterations.append(iteration)
        sent = self._down_the_chain(run, iteration)
        baseline = baseline_messages(sent, run.original)
        iteration.tokens = IterationTokens(
            tool_search=run.counter.count_request(api_messages(sent), run.definitions),
            baseline=run.counter.count_request(api_messages(baseline), run.all_definitions),
        )
        return iteration

    def _down_the_chain(self, run: RunState, iteration: Iteration) -> list[dict[str, Any]]:
        """The messages the model receives: the advisor's instructions, through ``downstream`` if there is
        one. A downstream that fails leaves ``run.sent`` empty, and the run ends there."""
        instructions = run.instructions()
        if run.downstream is None:
            run.sent = instructions
            return instructions
        try:
            run.sent = run.downstream.before([dict(m) for m in instructions])
            check_messages(run.sent, run.counter)
        except Exception as exc:  # noqa: BLE001  (the caller's downstream: its failure ends the run)
            run.fail(
                iteration, f"downstream {type(run.downstream).__name__} failed: {describe_exception(exc)}"
            )
            run.sent = []
            return instructions
        return run.sent

    def _call_model(self, run: RunState, iteration: Iteration) -> AssistantTurn | None:
        """One model call; a failure (or a turn the loop cannot use) is recorded, with the retries before
        it, and gives None."""
        if not run.sent:  # the downstream failed (see _down_the_chain)
            return None
        started = time.perf_counter()
        try:
            turn = run.model.complete([dict(m) for m in run.sent], run.definitions)
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
        if run.downstream is not None:
            try:
                run.downstream.after(turn.to_message())
            except Exception as exc:  # noqa: BLE001  (as in _down_the_chain)
                failed = describe_exception(exc)
                run.fail(iteration, f"downstream {type(run.downstream).__name__} failed: {failed}")
                return None
        return turn

    def _execute_calls(self, run: RunState, iteration: Iteration, turn: AssistantTurn) -> None:
        """Run every call of the turn and append one tool message per call."""
        exposed = set(run.plan.callable)
        for call in turn.tool_calls:
            try:
                record, content, search = execute_call(self, call, exposed, run)
            except ToolNotFoundError as exc:  # strict: Spring fails the whole request; the trace says so
                message = str(exc)
                iteration.tool_calls.append(
                    ToolCallRecord(
                        call.id,
                        call.name,
                        call.arguments,
                        "rejected",
                        "",
                        message,
                        failure=FailureKind.NOT_EXPOSED,
                    )
                )
                run.fail(iteration, message)
                raise ToolNotFoundError(message, run.finish(iteration, "error")) from None
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
        summary = self.settings.trace_config(self.index_name, self.accumulation, repr(self.eviction))
        setting = getattr(self.index, "abstention_setting", None)
        if isinstance(setting, str):  # an index that can judge that no tool fits (not Spring's)
            summary["abstention"] = setting
        if self._strategy_chosen:  # Spring's default loop leaves the config as Spring's settings alone
            summary["strategy"] = self.strategy.describe()
        return summary
