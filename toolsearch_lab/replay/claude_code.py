"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``), one API call per iteration.

No official specification of the file exists; this reads what the parsers that handle real sessions rely on
(ccusage, claude-code-log and others; see docs/trace.md):

* one API call is written as several ``assistant`` lines, one content block each, sharing ``message.id``
  (and ``requestId`` and ``usage``); a streaming partial may come first with fewer output tokens. Lines of
  one call are one iteration, and its usage is the line with the most output tokens, counted once;
* deferred tools are announced by ``attachment`` records of type ``deferred_tools_delta`` (``addedNames``,
  ``removedNames``, cumulative), in older versions by a meta user message holding
  ``<available-deferred-tools>``;
* ``ToolSearch`` loads them: its ``tool_result`` holds ``tool_reference`` blocks (or, with no match, text),
  and ``toolUseResult.matches`` lists the names. Any tool whose result holds references is read as a search.

The file holds neither the system prompt nor the ``tools`` array Claude Code sent, so a replay shows the
deferred list and what searches loaded, not the whole request; our token count covers the conversation in
the file, plus the loaded tools' definitions when a catalog supplies them (``catalog=``).

Bookkeeping records (summary, file-history-snapshot, system, ...) are skipped silently; a record type not
known here is named in ``RunTrace.errors`` and skipped (the product adds new ones often); sub-agent lines
inside the session file (``isSidechain``, older versions) are counted and skipped. A sub-agent that wrote its
own file (``<session>/subagents/agent-<id>.jsonl``, with an ``agent-<id>.meta.json`` beside it naming its
``agentType``; the layout daintreehq/daintree issue #11949 describes) is read like a session, and its calls
join the run's, labelled (``ReplaySettings.sub_agents``), in timestamp order. Refused by name: a line that
is not JSON (except a cut last line), an assistant line without id or usage, a tool result answering no
call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolsearch_lab.model import Tool
from toolsearch_lab.replay.anthropic_api import (
    SEARCH_TOOL_NOT_DEFERRED,
    SERVER_RESULT_BLOCKS,
    anthropic_usage,
)
from toolsearch_lab.replay.common import (
    ChatRequest,
    Recording,
    Request,
    TranscriptError,
    arguments_text,
    clip,
    content_text,
    deferred_search_tool,
    expect,
    ordered,
    orphan,
    result_text,
    search_record,
    unknown,
)
from toolsearch_lab.trace import (
    ANSWERED,
    FailureKind,
    ReplaySettings,
    SearchRecord,
    SearchTool,
    SubAgent,
    ToolCallRecord,
)

__all__ = ["KNOWN_RECORDS", "SEARCH_TOOL", "read_session"]

SEARCH_TOOL = "ToolSearch"
KNOWN_SKIPPED = (
    "summary",
    "file-history-snapshot",
    "system",
    "queue-operation",
    "last-prompt",
    "permission-mode",
    "cost-state",
    "custom-title",
    "agent-name",
    "tag",
)
KNOWN_RECORDS = ("user", "assistant", "attachment", *KNOWN_SKIPPED)
_DEFERRED_BLOCK = re.compile(r"<available-deferred-tools>\s*(.*?)\s*</available-deferred-tools>", re.S)


@dataclass
class _Call:
    """One API call being gathered from its lines."""

    first_line: int
    in_context: list[str]
    deferred: list[str]
    chat: list[dict[str, Any]]
    timestamp: str | None = None  # of its first line: orders a session's calls among its sub-agents'
    usage: Mapping[str, Any] | None = None
    usage_line: int = 0
    stop: str | None = None
    text: list[str] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    searches: list[SearchRecord] = field(default_factory=list)


class _Session:
    def __init__(self, where: str, tools: list[Tool] | None, agent: str | None = None) -> None:
        self.where = where
        self.agent = agent  # a sub-agent's file: its lines are all sidechain lines, and read
        self.catalog = _by_name(tools)
        self.deferred: list[str] = []
        self.loaded: list[str] = []
        self.searched = False  # a ToolSearch call was seen
        self.calls: dict[str, _Call] = {}  # message id -> call, in order
        self.by_tool_use: dict[str, tuple[_Call, ToolCallRecord, Any]] = {}
        self.chat: list[dict[str, Any]] = []
        self.prompts: list[str] = []
        self.notes: list[str] = []
        self.session_id = ""
        self.model = ""
        self.sidechain = 0

    # ---- records --------------------------------------------------------------------------------------
    def read(self, number: int, record: Any) -> None:
        at = f"{self.where}: line {number}"
        record = expect(record, Mapping, at, "a JSON object (one record per line)")
        kind = record.get("type")
        if isinstance(record.get("sessionId"), str) and not self.session_id:
            self.session_id = record["sessionId"]
        if record.get("isSidechain") is True and self.agent is None:
            self.sidechain += 1
        elif kind == "assistant":
            self._assistant(number, record, at)
        elif kind == "user":
            self._user(record, at)
        elif kind == "attachment":
            self._attachment(record.get("attachment"), at)
        elif kind not in KNOWN_SKIPPED:
            self.notes.append(f"skipped line {number}: record type {str(kind)[:60]!r} is not known")

    def _attachment(self, attachment: Any, at: str) -> None:
        if isinstance(attachment, Mapping) and attachment.get("type") == "deferred_tools_delta":
            names = {}
            for key in ("addedNames", "removedNames"):
                value = expect(
                    attachment.get(key) or [], list, f"{at}, attachment.{key}", "a list of tool names"
                )
                names[key] = [str(n) for n in value]
            removed, added = set(names["removedNames"]), names["addedNames"]
            self.deferred = ordered([n for n in self.deferred if n not in removed] + added)

    def _assistant(self, number: int, record: Mapping[str, Any], at: str) -> None:
        message = expect(record.get("message"), Mapping, f"{at}, message", "the API message")
        if message.get("model") == "<synthetic>":
            self.notes.append(f"skipped line {number}: a synthetic assistant message (not an API call)")
            return
        message_id = message.get("id")
        if not isinstance(message_id, str):
            raise TranscriptError(
                f"{at}: assistant message without id (message.id), so its API call is unknown"
            )
        if not isinstance(message.get("usage"), Mapping):
            raise TranscriptError(f"{at}: assistant message without usage (message.usage)")
        self.model = str(message.get("model") or self.model)
        call = self.calls.get(message_id)
        if call is None:
            in_context = ([SEARCH_TOOL] if self.deferred or self.searched else []) + self.loaded
            pending = [n for n in self.deferred if n not in self.loaded]
            when = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
            call = _Call(number, in_context, pending, list(self.chat), when)
            self.calls[message_id] = call
        outputs = message["usage"].get("output_tokens")
        best = call.usage.get("output_tokens") if call.usage is not None else None
        if call.usage is None or (isinstance(outputs, int) and isinstance(best, int) and outputs > best):
            call.usage, call.usage_line = message["usage"], number
        call.stop = message.get("stop_reason") or call.stop
        content = message.get("content")
        blocks = (
            [content]
            if isinstance(content, str)
            else expect(content, list, f"{at}, message.content", "a list of content blocks")
        )
        for j, block in enumerate(blocks):
            self._block(call, block, f"{at}, message.content[{j}]")

    def _block(self, call: _Call, block: Any, at: str) -> None:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        block = expect(block, Mapping, at, "a content block")
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text") or "")
            if text and text not in call.text:
                call.text.append(text)
                self.chat.append({"role": "assistant", "content": text})
        elif kind in ("tool_use", "server_tool_use"):
            call_id = expect(block.get("id"), str, f"{at}.id", "the call's id")
            if call_id in self.by_tool_use:
                return  # the same block written again (a partial line, a resumed session)
            name = expect(block.get("name"), str, f"{at}.name", "the tool's name")
            arguments = block.get("input")
            record = ToolCallRecord(call_id, name, arguments_text(arguments), "tool")
            if name == SEARCH_TOOL:
                self.searched = True
                record.kind = "search"
                call.searches.append(search_record(call_id, arguments, [], None))
            call.calls.append(record)
            self.by_tool_use[call_id] = (call, record, arguments)
            text = json.dumps(arguments, ensure_ascii=False)
            tool_call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
            self.chat.append({"role": "assistant", "content": None, "tool_calls": [tool_call]})
        elif kind not in ("thinking", "redacted_thinking", *SERVER_RESULT_BLOCKS):
            raise unknown(at, "content block type", kind, ("text", "thinking", "tool_use", "server_tool_use"))

    def _user(self, record: Mapping[str, Any], at: str) -> None:
        message = expect(record.get("message"), Mapping, f"{at}, message", "the user message")
        content = message.get("content")
        if isinstance(content, str):
            self._prompt(content, record.get("isMeta") is True)
            return
        blocks = expect(content, list, f"{at}, message.content", "text or a list of content blocks")
        for j, block in enumerate(blocks):
            where = f"{at}, message.content[{j}]"
            block = expect(block, Mapping, where, "a content block")
            if block.get("type") == "tool_result":
                self._result(block, record.get("toolUseResult"), where)
            elif block.get("type") == "text":
                self._prompt(str(block.get("text") or ""), record.get("isMeta") is True)

    def _prompt(self, text: str, meta: bool) -> None:
        found = _DEFERRED_BLOCK.search(text)
        if found:
            self.deferred = ordered(
                self.deferred + [n.strip() for n in found.group(1).splitlines() if n.strip()]
            )
            return
        if not meta and text.strip():
            self.prompts.append(text)
            self.chat.append({"role": "user", "content": text})

    def _result(self, block: Mapping[str, Any], extra: Any, at: str) -> None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or call_id not in self.by_tool_use:
            raise orphan(at, "tool_result", call_id, "tool_use")
        call, record, arguments = self.by_tool_use[call_id]
        content = block.get("content")
        references = (
            [
                b["tool_name"]
                for b in content or []
                if isinstance(b, Mapping)
                and b.get("type") == "tool_reference"
                and isinstance(b.get("tool_name"), str)
            ]
            if isinstance(content, list)
            else []
        )
        if not references and record.kind == "search" and isinstance(extra, Mapping):
            references = [
                m if isinstance(m, str) else str(m.get("tool_name"))
                for m in extra.get("matches") or []
                if isinstance(m, str | Mapping)
            ]
        record.result = result_text(content)
        record.error = "the tool reported an error" if block.get("is_error") else None
        if references and record.kind != "search":
            record.kind = "search"
            call.searches.append(search_record(record.call_id, arguments, [], None))
        failed = FailureKind.SEARCH_FAILED if record.kind == "search" else FailureKind.TOOL_ERROR
        record.failure = failed if record.error else None
        if record.kind == "search":
            search = next(s for s in call.searches if s.call_id == record.call_id)
            search.hits = search_record(record.call_id, arguments, references, None).hits
            search.error = clip(record.result, 300) if record.error else None
            self.loaded = ordered(self.loaded + references)
        shown = (
            json.dumps([self._definition(n) for n in references if self._definition(n)])
            if references
            else content_text(content)
        )
        self.chat.append({"role": "tool", "tool_call_id": str(call_id), "content": shown})

    def _definition(self, name: str) -> dict[str, Any] | None:
        tool = self.catalog.get(name) or self.catalog.get(
            name.split("__", 2)[-1] if name.startswith("mcp__") else name
        )
        return tool.definition() if tool is not None else None

    # ---- the result -----------------------------------------------------------------------------------
    def requests(self) -> list[Request]:
        out = []
        for call in self.calls.values():
            every = [d for d in (self._definition(n) for n in ordered(self.deferred_ever())) if d]
            out.append(
                Request(
                    in_context=call.in_context,
                    deferred=call.deferred,
                    searches=call.searches,
                    calls=call.calls,
                    text=clip("\n".join(call.text)) if call.text else None,
                    usage=anthropic_usage(
                        call.usage, f"{self.where}: line {call.usage_line}, message.usage", "claude-code"
                    ),
                    stop=call.stop,
                    chat=ChatRequest(
                        call.chat, [], every
                    ),  # loaded tools: inline, where the API expands them
                    agent=self.agent,
                )
            )
        return out

    def definitions(self) -> dict[str, dict[str, Any]]:
        """The catalog's definition of every tool the session deferred, by the session's name for it."""
        return {n: d for n in self.deferred_ever() if (d := self._definition(n)) is not None}

    def deferred_ever(self) -> list[str]:
        return ordered([n for call in self.calls.values() for n in call.deferred] + self.loaded)


def _by_name(tools: list[Tool] | None) -> dict[str, Tool]:
    return {t.name: t for t in tools or ()}


def read_session(
    lines: list[tuple[int, Any]],
    where: str,
    tools: list[Tool] | None,
    sub_agents: Sequence[tuple[str, str, list[tuple[int, Any]]]] = (),
) -> Recording:
    """A Claude Code session file's lines (``(line number, record)``) as one :class:`Request` per API call,
    with the calls of each sub-agent file (``(label, file name, lines)``) among them, labelled, in the order
    of their timestamps (when every call has one; else the session's first)."""
    session = _read(lines, where, tools, None)
    if not session.calls:
        raise TranscriptError(f"{where}: no assistant message, so the session made no API call to replay")
    if session.sidechain:
        session.notes.append(
            f"skipped {session.sidechain} sub-agent (isSidechain) line(s): their context is their own"
        )
    own = session.requests()
    timed = list(zip([c.timestamp for c in session.calls.values()], own, strict=True))
    followed = []
    for label, name, agent_lines in sub_agents:
        agent = _read(agent_lines, name, tools, label)
        session.notes += [f"sub-agent {label}: {note}" for note in agent.notes]
        if not agent.calls:
            session.notes.append(f"sub-agent file {name}: no assistant message, so no API call to show")
            continue
        timed += zip([c.timestamp for c in agent.calls.values()], agent.requests(), strict=True)
        followed.append(SubAgent(label, name))
    if all(when is not None for when, _ in timed):
        timed.sort(key=lambda pair: str(pair[0]))  # stable: a session's calls keep their order
    last = list(session.calls.values())[-1]
    answered = last.stop == "end_turn"
    return Recording(
        requests=[request for _, request in timed],
        model=session.model or "unknown",
        user_request=clip(session.prompts[0]) if session.prompts else "",
        session_id=session.session_id,
        index=f"claude-code:{SEARCH_TOOL}",
        catalog_size=len(session.deferred_ever()),
        final_answer=own[-1].text if answered else None,
        stop_reason=ANSWERED if answered else "unfinished",
        notes=session.notes + _unknown_to_catalog(session, tools) + _search_tool_deferred(session),
        definitions=session.definitions(),
        settings=ReplaySettings(
            format="claude-code-session",
            search_tools=[SearchTool(SEARCH_TOOL, "client")],
            deferred_tools=session.deferred_ever(),
            user_prompts=len(session.prompts),
            counts_definitions=bool(tools),
            sub_agents=followed,
        ),
    )


def _read(lines: list[tuple[int, Any]], where: str, tools: list[Tool] | None, agent: str | None) -> _Session:
    session = _Session(where, tools, agent)
    # ToolSearch is in the context from the first call when the session uses it at all (older sessions
    # announce no deferred tools before their first search).
    session.searched = any(
        SEARCH_TOOL in json.dumps(r.get("message", {}).get("content", ""))
        for _, r in lines
        if isinstance(r, Mapping) and r.get("type") == "assistant" and isinstance(r.get("message"), Mapping)
    )
    for number, record in lines:
        session.read(number, record)
    return session


def _search_tool_deferred(session: _Session) -> list[str]:
    """A note when the session announces ToolSearch itself among its deferred tools."""
    number = next((i for i, c in enumerate(session.calls.values(), 1) if SEARCH_TOOL in c.deferred), None)
    return [] if number is None else [deferred_search_tool(number, SEARCH_TOOL, SEARCH_TOOL_NOT_DEFERRED)]


def _unknown_to_catalog(session: _Session, tools: list[Tool] | None) -> list[str]:
    """A note naming the deferred tools the catalog given holds no definition of (their tokens are not in
    our count)."""
    if not tools:
        return []
    missing = [n for n in session.deferred_ever() if session._definition(n) is None]
    if not missing:
        return []
    shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
    return [f"the catalog given defines none of {len(missing)} deferred tool(s), not in our count: {shown}"]
