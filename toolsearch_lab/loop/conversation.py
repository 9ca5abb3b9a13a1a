"""A conversation: several user turns in one session, through chat memory, on a ``ToolSearchAdvisor``.

The conversation is the application's side, as in Spring (a ``ChatClient`` with a memory advisor around the
tool-search advisor): ``Conversation(advisor, model, tools, session_id=..., memory=...)``, then ``send(text)``
per user turn, or ``send_all(texts)``. Each turn, :class:`Conversation` gives its
:mod:`~toolsearch_lab.loop.memory` the previous turn's messages and the new user message, sends the system
message plus what memory kept through the advisor's public turn API (``advisor.run(..., turn=reading)``: the
messages the advisor receives, and a :class:`~toolsearch_lab.loop.run.TurnReading`), and records the turn in
one trace (``RunTrace.turns``; iterations numbered across the conversation, each with its ``turn``). What
earlier turns found it reads from their results (``RunResult.found``); the advisor keeps the session's record
of them.

Where the tools found in earlier turns come from, ``accumulation_source`` (an advisor setting):

- ``"history"`` - Spring's rule: the names in the toolSearchTool results of the messages sent
  (``extractToolNameReferences`` over the prompt, spec §7.5). What memory drops or summarises is gone, so a
  message window or a compaction takes found tools away (spring-ai #7034 is this class: there the advisor
  reads only ``[system, last message]`` because ``conversationHistoryEnabled`` is off when a memory advisor
  sits inside the loop; ``conversation_history=False`` reproduces that reading too).
- ``"session"`` (the default; a deviation from Spring) - the advisor records the search groups of every turn
  of the session and reads them back, plus the current turn's messages; chat memory no longer matters. The
  record belongs to the session: evicting the session (the eviction strategy, ``evict_session``) forgets it
  with the index, and the next turn starts with ``toolSearchTool`` alone, whatever memory still holds.

Either way the accumulation rule (``reference_tool_name_accumulation``) applies on top: every group, or the
latest one only. ``run`` without ``turn`` (one user request with the history you pass) reads the messages it
is given, and only them.

Spring's own placements of a memory advisor, for comparison: at its default order (+200, outside the tool
loop) it stores only user messages and final answers, so no found tool reaches the next turn at all; inside
the loop (+1000, with internal history disabled) it stores every message but the advisor reads only the last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.memory import ChatMemory, MemoryUpdate, describe_message, parse_memory
from toolsearch_lab.loop.run import RunResult, TurnReading
from toolsearch_lab.loop.strategy import pick_found, search_groups
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import ChatModel
from toolsearch_lab.trace import ANSWERED, MemoryRecord, RunTrace, TurnRecord

__all__ = ["Conversation", "memory_record"]


class Conversation:
    """User turns in one session, each a turn of ``advisor`` (``advisor.run(..., turn=...)``, its public API).
    ``send(text)`` runs one turn and returns its :class:`RunResult` (its own trace); :attr:`trace` is the
    whole conversation's. ``context`` and ``session_id`` are ``run``'s. ``memory``: ``full`` (default),
    ``window:N``, ``compact:N`` or a ChatMemory; ``system``: the system message sent with every turn (none
    by default); ``conversation_history=False``: Spring's ``conversationHistoryEnabled=false`` reading
    (history source)."""

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
        conversation_history: bool = True,
    ) -> None:
        if system is not None and not isinstance(system, str):
            raise ValueError(f"Conversation: system must be text or None, got {type(system).__name__}")
        if not isinstance(conversation_history, bool):
            raise ValueError("Conversation: conversation_history must be True or False")
        self.advisor = advisor
        self.model = model
        self.tools = list(tools)
        self.context = dict(context or {})
        self.session_id = session_id
        self.memory = parse_memory(memory)
        self.system = system
        self.source = advisor.settings.accumulation_source
        self.conversation_history = conversation_history
        self.stored: list[dict[str, Any]] = []  # what memory holds
        self._pending: list[dict[str, Any]] = []  # the last turn's messages, given to memory at the next turn
        self.trace: RunTrace | None = None
        self.results: list[RunResult] = []

    @property
    def reading(self) -> TurnReading:
        return TurnReading.of(self.source, self.conversation_history)

    def send(self, text: str) -> RunResult:
        """One user turn: memory, the advisor loop, the record of what was carried and lost. The result's
        trace is the turn's part of :attr:`trace` (iterations numbered as in the whole conversation)."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"Conversation.send: the user message must be non-blank text, got {text!r:.60}")
        number = len(self.results) + 1
        user = {"role": "user", "content": text}
        given = len(self.stored) + len(self._pending) + 1
        update = self.memory.add(self.stored, [*self._pending, user])
        self.stored = update.messages
        messages = ([{"role": "system", "content": self.system}] if self.system else []) + self.stored
        found_before = [group for earlier in self.results for group in earlier.found]
        result = self.advisor.run(
            self.model, messages, self.tools, self.context, session_id=self.session_id, turn=self.reading
        )
        last_user = max(i for i, m in enumerate(result.messages) if m.get("role") == "user")
        self._pending = [dict(m) for m in result.messages[last_user + 1 :]]
        self.results.append(result)
        self._merge(number, text, result, memory_record(self.memory, update, given))
        self._record_carried(found_before)
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
        return RunResult(self.trace, last.messages, last.answer, found)

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
                    "accumulation_source": self.source,
                    **({} if self.conversation_history else {"conversation_history": False}),
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

    def _record_carried(self, found_before: Sequence[Sequence[str]]) -> None:
        """Which found tools the turn started with, and which the whole record would have carried but it
        did not have (the ones memory took away under the history source, or an eviction under session)."""
        assert self.trace is not None
        record = self.trace.turns[-1]
        first = next((it for it in self.trace.iterations if it.turn == record.number), None)
        callable_at_start = first.accumulated if first is not None else []
        registered = {t.name: t for t in self.tools}
        expected = pick_found(found_before, registered, self.advisor.accumulation)
        earlier = {n for g in found_before for n in g}
        record.carried = [n for n in callable_at_start if n in earlier]
        record.lost = [n for n in expected if n not in callable_at_start]


def memory_record(memory: ChatMemory, update: MemoryUpdate, given: int) -> MemoryRecord:
    """The trace's account of one memory update: what it was given, kept, dropped and summarised."""
    removed_searches = [name for group in search_groups(update.removed) for name in group]
    return MemoryRecord(
        memory=memory.describe(),
        given=given,
        kept=len(update.messages),
        dropped=[describe_message(m) for m in update.dropped],
        summarised=[describe_message(m) for m in update.summarised],
        summary=None if update.summary is None else str(update.summary.get("content")),
        search_results_removed=list(dict.fromkeys(removed_searches)),
    )
