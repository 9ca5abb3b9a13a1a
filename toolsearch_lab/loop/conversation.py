"""A conversation: several user turns in one session, on a ``ToolSearchAdvisor``, with chat memory where
Spring's application would put it.

The conversation is the application's side, as in Spring (a ``ChatClient`` with the tool-search advisor and,
perhaps, a memory advisor): ``Conversation(advisor, model, tools, session_id=..., memory=...,
memory_advisor=...)``, then ``send(text)`` per user turn, or ``send_all(texts)``. Each turn goes through the
advisor's public turn API (``advisor.run(..., turn=reading, downstream=...)``) and is recorded in one trace
(``RunTrace.turns``; iterations numbered across the conversation, each with its ``turn``).

Where memory sits, ``memory_advisor`` (:mod:`toolsearch_lab.loop.chain` has Spring's orders and what each
placement does, read from its source):

- ``"none"`` (the default): no memory advisor; the application keeps the transcript in its ``memory`` and
  resends it. Each turn it adds the previous turn's messages and the new user message in one ``add`` and
  sends the system message plus what memory holds, so a window bounds the whole request.
- ``"outside"`` (Spring's default order, +200): ``MessageChatMemoryAdvisor`` around the tool loop. Its
  ``before`` reads memory, then stores the user message; its ``after`` stores the final answer. No tool
  message is stored, so each turn after the first starts with ``toolSearchTool`` alone and searches again.
- ``"inside"`` (+1000): the memory advisor inside the loop, with the loop's own history off as Boot sets it.
  Memory stores every message and the model sees them all, but the advisor scans only [system, last
  message]: a found tool is gone once it has run, within the turn (spring-ai #7034), and earlier turns'
  tools are visible to the model yet not attached. Compaction is refused here: it rewrites whole turns,
  between user turns, not the turn the loop is working on.

Where the tools found before come from, ``accumulation_source`` (an advisor setting):

- ``"history"`` - Spring's rule: the names in the toolSearchTool results of the messages the advisor holds
  (``extractToolNameReferences`` in ``prepareIteration``). What the placement and memory leave out is gone.
- ``"session"`` (the default; a deviation from Spring) - the advisor records the search groups of every turn
  of the session and reads them back, plus the current turn's whole history; neither placement nor memory
  matters. The record belongs to the session: evicting the session (the eviction strategy,
  ``evict_session``) forgets it with the index, and the next turn starts with ``toolSearchTool`` alone.

Either way the accumulation rule (``reference_tool_name_accumulation``) applies on top: every group, or the
latest one only. Each turn's record says which tools its first request exposed (``first_request_tools``),
which found tools it carried from earlier turns (``carried``) and which tools found earlier in the
conversation or the turn, by the same rule, a request of it lacked (``lost``).

With ``strict=True`` a call to a tool the request did not attach fails the request as in Spring ("No
ToolCallback found for tool name: X"): the turn is recorded with stop reason "error" and that error, and
the conversation goes on with the next message, as an application that catches the failed request would.
Without it the call gets an error result telling the model to search (the lab's documented deviation),
recorded as a refused call (``FailureKind.NOT_EXPOSED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.chain import (
    MemoryAdvisor,
    MemoryPlacement,
    check_memory_placement,
    check_placement,
    conversation_history_enabled,
)
from toolsearch_lab.loop.memory import ChatMemory, MemoryUpdate, describe_message, parse_memory
from toolsearch_lab.loop.run import RunResult, ToolNotFoundError, TurnReading
from toolsearch_lab.loop.strategy import pick_found, search_groups
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import ChatModel
from toolsearch_lab.trace import ANSWERED, MemoryRecord, RunTrace, TurnRecord

__all__ = ["Conversation", "memory_record"]


class Conversation:
    """User turns in one session, each a turn of ``advisor`` (``advisor.run(..., turn=...)``, its public API).
    ``send(text)`` runs one turn and returns its :class:`RunResult` (its own trace); :attr:`trace` is the
    whole conversation's. ``context`` and ``session_id`` are ``run``'s. ``memory``: ``full`` (default),
    ``window:N``, ``compact:N`` or a ChatMemory; ``memory_advisor``: where it sits, ``"none"`` (default: the
    application resends its transcript), ``"outside"`` or ``"inside"`` (module docstring); ``system``: the
    system message sent with every turn (none by default)."""

    def __init__(
        self,
        advisor: ToolSearchAdvisor,
        model: ChatModel,
        tools: Iterable[Tool],
        *,
        context: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        memory: ChatMemory | str | None = None,
        system: str | None = None,
        memory_advisor: MemoryPlacement = "none",
    ) -> None:
        if system is not None and not isinstance(system, str):
            raise ValueError(f"Conversation: system must be text or None, got {type(system).__name__}")
        self.placement: MemoryPlacement = check_placement(memory_advisor, "Conversation")
        self.memory = parse_memory(memory)
        check_memory_placement(self.memory, self.placement)
        self.advisor = advisor
        self.model = model
        self.tools = list(tools)
        self.context = dict(context or {})
        self.session_id = session_id
        self.system = system
        self.source = advisor.settings.accumulation_source
        self.chain = None if self.placement == "none" else MemoryAdvisor(self.memory, self.placement)
        self.stored: list[dict[str, Any]] = []  # "none": the transcript the application keeps
        self._pending: list[dict[str, Any]] = []  # "none": the last turn's messages, added at the next turn
        self.trace: RunTrace | None = None
        self.results: list[RunResult] = []

    @property
    def reading(self) -> TurnReading:
        return TurnReading.of(self.source, conversation_history_enabled(self.placement))

    @property
    def held(self) -> list[dict[str, Any]]:
        """What memory holds now (the application's transcript, or the memory advisor's)."""
        return list(self.stored if self.chain is None else self.chain.stored)

    def send(self, text: str) -> RunResult:
        """One user turn: memory where it sits, the advisor loop, the record of what was carried and lost.
        The result's trace is the turn's part of :attr:`trace` (iterations numbered as in the whole
        conversation)."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"Conversation.send: the user message must be non-blank text, got {text!r:.60}")
        number = len(self.results) + 1
        prompt = [{"role": "system", "content": self.system}] if self.system else []
        prompt.append({"role": "user", "content": text})
        held, log = len(self.held), len(self.chain.log) if self.chain is not None else 0
        if self.chain is None:
            update = self.memory.add(self.stored, [*self._pending, prompt[-1]])
            self.stored = update.messages
            messages, updates = prompt[:-1] + self.stored, [(len(self._pending) + 1, update)]
        else:
            messages = self.chain.before(prompt) if self.placement == "outside" else prompt
        found_before = [group for earlier in self.results for group in earlier.found]
        downstream = self.chain if self.placement == "inside" else None
        run = partial(self.advisor.run, session_id=self.session_id, turn=self.reading, downstream=downstream)
        try:
            result = run(self.model, messages, self.tools, self.context)
        except ToolNotFoundError as exc:  # strict: the request failed as in Spring; the turn records it
            if exc.result is None:
                raise
            result = exc.result
        if self.chain is None:
            last_user = max(i for i, m in enumerate(result.messages) if m.get("role") == "user")
            self._pending = [dict(m) for m in result.messages[last_user + 1 :]]
        else:
            answered = result.stop_reason != "error" and result.messages[-1].get("role") == "assistant"
            if self.placement == "outside" and answered:  # Spring's after(): the reply that came back
                self.chain.after(result.messages[-1])
            updates = self.chain.log[log:]
        self.results.append(result)
        self._merge(number, text, result, memory_record(self.memory, updates, held))
        self._record_tools(found_before, result)
        return result

    def send_all(self, texts: Sequence[str]) -> RunResult:
        """Every message of ``texts`` in turn: the conversation's trace, the last turn's messages, answer."""
        if isinstance(texts, str) or not texts:
            raise ValueError(
                "Conversation.send_all: texts must be a non-empty list of messages (one per turn)"
            )
        for text in texts:
            last = self.send(text)
        assert self.trace is not None
        found = tuple(group for result in self.results for group in result.found)
        exposed = tuple(request for result in self.results for request in result.exposed)
        return RunResult(self.trace, last.messages, last.answer, found, exposed)

    def _merge(self, number: int, text: str, result: RunResult, memory: MemoryRecord) -> None:
        """Add the turn's trace to the conversation's: iterations renumbered, each marked with the turn."""
        part = result.trace
        if self.trace is None:
            self.trace = RunTrace(
                session_id=part.session_id,
                model=part.model,
                index=part.index,
                user_request=text,
                catalog_size=part.catalog_size,
                config={
                    **part.config,
                    "memory": self.memory.describe(),
                    "memory_advisor": self.placement,
                    "accumulation_source": self.source,
                },
                encoding=part.encoding,
            )
        offset = len(self.trace.iterations)
        for it in part.iterations:
            it.number += offset
            it.turn = number
        for event in part.session_events:
            event.turn = number
            if event.iteration is not None:
                event.iteration += offset
        self.trace.iterations += part.iterations
        self.trace.session_events += part.session_events
        self.trace.errors += part.errors
        self.trace.turns.append(
            TurnRecord(number, text, memory, stop_reason=part.stop_reason, answer=result.answer)
        )
        self.trace.final_answer = part.final_answer
        stops = [t.stop_reason for t in self.trace.turns if t.stop_reason != ANSWERED]
        self.trace.stop_reason = stops[0] if stops else ANSWERED

    def _record_tools(self, found_before: Sequence[Sequence[str]], result: RunResult) -> None:
        """The turn's record of found tools: the first request's tools array; the found tools it carried
        from earlier turns; and every tool that the same accumulation rule, over everything found before a
        request (earlier turns, then the turn's own searches), would expose but that request lacked."""
        assert self.trace is not None
        record = self.trace.turns[-1]
        iterations = [it for it in self.trace.iterations if it.turn == record.number]
        registered = {t.name: t for t in self.tools}
        earlier = {n for g in found_before for n in g}
        record.first_request_tools = list(iterations[0].exposed_tools) if iterations else []
        record.carried = [n for n in (result.exposed[0] if result.exposed else ()) if n in earlier]
        groups = [list(g) for g in found_before]
        lost: list[str] = []
        for iteration, exposed in zip(iterations, result.exposed, strict=False):
            expected = pick_found(groups, registered, self.advisor.accumulation)
            lost += [n for n in expected if n not in exposed and n not in lost]
            group = [n for search in iteration.searches for n in search.names]
            if group:
                groups.append(group)
        record.lost = lost


def memory_record(memory: ChatMemory, updates: Sequence[tuple[int, MemoryUpdate]], held: int) -> MemoryRecord:
    """The trace's account of what memory did during one turn: ``updates`` are its ``add`` calls (how many
    messages each was given, and what memory did), ``held`` the messages it held before them."""
    removed = [m for _, update in updates for m in update.removed]
    summaries = [update.summary for _, update in updates if update.summary is not None]
    removed_searches = [name for group in search_groups(removed) for name in group]
    return MemoryRecord(
        memory=memory.describe(),
        given=held + sum(count for count, _ in updates),
        kept=len(updates[-1][1].messages) if updates else held,
        dropped=[describe_message(m) for _, update in updates for m in update.dropped],
        summarised=[describe_message(m) for _, update in updates for m in update.summarised],
        summary=str(summaries[-1].get("content")) if summaries else None,
        search_results_removed=list(dict.fromkeys(removed_searches)),
    )
