"""``load_transcript(path)``: a real run, as an API or an agent logged it, turned into a :class:`RunTrace`.

Four formats, told apart by their structure (never by the file name):

* **Anthropic Messages** (``anthropic-messages``): a JSON list of ``{"request": ..., "response": ...}``
  exchanges, each the body of one ``POST /v1/messages`` and its answer (a message); or the HTTP-wrapped
  form ``{"request": {"method", "url", "headers", "body"}, "response": {"status", "headers", "body"}}``.
  One exchange per line (JSONL) is read the same way.
* **OpenAI Responses** (``openai-responses``): the same two shapes around ``POST /v1/responses`` (the
  response an ``"object": "response"``), full input replayed or chained by ``previous_response_id``.
* **OpenAI Chat Completions** (``openai-chat-completions``): the same two shapes around ``POST
  /v1/chat/completions`` (the response an ``"object": "chat.completion"``): what this lab's own
  ``OpenAIChatModel`` and any OpenAI-compatible server (llama.cpp, Ollama, vLLM) speak.
* **Claude Code session** (``claude-code-session``): the JSONL file Claude Code writes under
  ``~/.claude/projects/<project>/<session>.jsonl``.

A response logged as its stream (server-sent events, as text) is assembled into the answer first. A file
``toolsearch_lab.models.recorder`` wrote is one exchange per line, HTTP-wrapped.

Headers are read only to be dropped: nothing from them reaches the trace, not even their names, and URLs
keep only their host. The shipped transcripts (hand-written from the published formats; see
``data/transcripts/PROVENANCE.md``) load by name: ``load_transcript("anthropic-messages")``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from toolsearch_lab.catalog.container import ToolCatalog, load_catalog
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.jsonlimits import JsonLimitError, loads_checked
from toolsearch_lab.model import Tool
from toolsearch_lab.replay.common import Recording, TranscriptError, TranscriptFormat, build_trace, expect
from toolsearch_lab.replay.exchanges import text_body
from toolsearch_lab.tokens import TokenCounter
from toolsearch_lab.trace import RunTrace

__all__ = [
    "SHIPPED_TRANSCRIPTS",
    "TRANSCRIPT_FORMATS",
    "TranscriptError",
    "detect_format",
    "load_transcript",
    "read_recording",
    "read_transcript",
]

TRANSCRIPT_FORMATS: tuple[TranscriptFormat, ...] = get_args(TranscriptFormat)
# What an exchange's response body says it is ("type" of a message, else "object").
RESPONSE_KINDS: dict[str, TranscriptFormat] = {
    "message": "anthropic-messages",
    "response": "openai-responses",
    "chat.completion": "openai-chat-completions",
}
SHIPPED_TRANSCRIPTS = {
    "anthropic-messages": "anthropic_github_regex.json",
    "openai-responses": "openai_github_hosted.json",
    "claude-code-session": "claude_code_session.jsonl",
}
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
# Tool schemas nest deep inside a request (body, messages, content, input schema...); far deeper is not a log.
MAX_TRANSCRIPT_DEPTH = 200


def load_transcript(
    path: str | os.PathLike[str],
    *,
    format: TranscriptFormat | None = None,
    catalog: str | os.PathLike[str] | ToolCatalog | list[Tool] | None = None,
    encoding: str = "o200k_base",
) -> RunTrace:
    """The :class:`RunTrace` of a transcript file (or of a shipped one, by its format name).

    ``format`` insists on one format (a file of another is refused); by default it is detected.
    ``catalog`` gives a Claude Code session the tool definitions its file does not hold (a catalog name,
    file or tools), so our token count can include them; the API formats carry their own.
    A file that cannot be replayed raises :class:`TranscriptError` naming the place and the fault."""
    file = _resolve(path)
    recording = read_recording(file, format=format, catalog=catalog)
    try:
        return build_trace(recording, TokenCounter(encoding))
    except TranscriptError as exc:  # a request that cannot be counted: say which file
        raise TranscriptError(f"{file}: {exc}") from None


def read_recording(
    path: str | os.PathLike[str],
    *,
    format: TranscriptFormat | None = None,
    catalog: str | os.PathLike[str] | ToolCatalog | list[Tool] | None = None,
) -> Recording:
    """What :func:`load_transcript` reads before it counts anything: the transcript's requests as its
    reader understood them, each with the request in the chat-completions shape (``Request.chat``), and
    the run's catalog (``Recording.definitions``). For a counterfactual of the run
    (:func:`~toolsearch_lab.eval.replay_compare.compare_replay`), which needs the requests themselves."""
    file = _resolve(path)
    data, kind = read_transcript(file)
    notes = []
    if kind == "jsonl":
        notes = [r.note + "; left out" for _, r in data if isinstance(r, _CutLine)]
        data = [(n, r) for n, r in data if not isinstance(r, _CutLine)]
    fmt = detect_format(data, kind, str(file))
    if format is not None and format != fmt:
        if format not in TRANSCRIPT_FORMATS:
            raise TranscriptError(
                f"unknown transcript format {format!r}; expected one of {TRANSCRIPT_FORMATS}"
            )
        raise TranscriptError(f"{file}: format={format!r} was asked for, but the file is {fmt!r}")
    recording = _read(fmt, data, kind, str(file), _tools_of(catalog), _sub_agents(file, fmt, notes))
    recording.notes[:0] = notes
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    settings = recording.settings
    settings.file, settings.sha256, settings.provenance = file.name, digest, _provenance(file)
    recording.session_id = recording.session_id or f"replay-{digest[:12]}"
    return recording


def _resolve(path: str | os.PathLike[str]) -> Path:
    if isinstance(path, str) and path in SHIPPED_TRANSCRIPTS and not Path(path).exists():
        return data_path("transcripts", SHIPPED_TRANSCRIPTS[path])
    if not isinstance(path, str | os.PathLike):
        raise TranscriptError(f"load_transcript expects a path, got {type(path).__name__}")
    file = Path(path).expanduser()
    if not file.is_file():
        shipped = ", ".join(SHIPPED_TRANSCRIPTS)
        raise TranscriptError(f"no transcript file at {str(file)!r} (shipped transcripts: {shipped})")
    return file


def read_transcript(file: Path) -> tuple[Any, str]:
    """The file's records: (a JSON value, "json") or (a list of (line number, record), "jsonl")."""
    size = file.stat().st_size
    if size > MAX_TRANSCRIPT_BYTES:
        raise TranscriptError(
            f"{file}: {size:,} bytes; transcripts larger than {MAX_TRANSCRIPT_BYTES:,} are refused"
        )
    raw = file.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            f"{file}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
    if not text.strip():
        raise TranscriptError(f"{file}: the file is empty")
    try:
        return loads_checked(text, str(file), MAX_TRANSCRIPT_DEPTH), "json"
    except JsonLimitError as exc:
        raise TranscriptError(str(exc)) from None
    except json.JSONDecodeError as exc:
        whole = f"{file}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if text.lstrip().startswith("["):  # one JSON document, broken
        raise TranscriptError(whole)
    return _json_lines(file, text, whole), "jsonl"


def _json_lines(file: Path, text: str, whole: str) -> list[tuple[int, Any]]:
    """One JSON value per line. A broken line is refused, except the very last one, which a program still
    writing the file leaves cut (it is then left out, and the trace says so). When the first line is not
    JSON either, the file is one broken document, and ``whole`` (its parse error) says where."""
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    records: list[tuple[int, Any]] = []
    for position, (number, line) in enumerate(numbered):
        try:
            records.append((number, loads_checked(line, f"{file}: line {number}", MAX_TRANSCRIPT_DEPTH)))
        except JsonLimitError as exc:
            raise TranscriptError(str(exc)) from None
        except json.JSONDecodeError as exc:
            if position == 0:
                raise TranscriptError(whole) from None
            problem = f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})"
            if position == len(numbered) - 1:
                records.append(
                    (number, _CutLine(f"{problem}; the last line is cut (a file still being written?)"))
                )
                continue
            raise TranscriptError(f"{file}: {problem}") from None
    return records


class _CutLine:
    """The last line of a JSONL file that is not JSON (a file still being written)."""

    def __init__(self, note: str) -> None:
        self.note = note


def detect_format(data: Any, kind: str, where: str = "transcript") -> TranscriptFormat:
    """Which of :data:`TRANSCRIPT_FORMATS` the records are, from their structure; anything else is refused
    with what was found and what is accepted."""
    accepted = (
        "expected a JSON list of {request, response} exchanges (Anthropic Messages, OpenAI Responses or Chat "
        "Completions) or a Claude Code session JSONL"
    )
    records = [r for _, r in data] if kind == "jsonl" else data
    if isinstance(records, Mapping):
        if "iterations" in records and "session_id" in records:
            raise TranscriptError(
                f"{where}: this is a saved RunTrace, not a transcript; open it with RunTrace.from_json"
            )
        records = [records]
    if not isinstance(records, list) or not records:
        raise TranscriptError(
            f"{where}: {accepted}; got {'an empty list' if records == [] else 'a JSON value of another kind'}"
        )
    first = next((r for r in records if isinstance(r, Mapping)), None)
    if first is None:
        raise TranscriptError(f"{where}: {accepted}; no record is a JSON object")
    if "request" in first and "response" in first:
        return _api_format(records, where)
    if (
        "session_id" in first
        and "sessionId" not in first
        and first.get("type") in ("system", "assistant", "user", "result")
    ):
        raise TranscriptError(
            f"{where}: this is `claude -p --output-format stream-json` output (it has session_id, not "
            "sessionId), not a Claude Code session file; replay the session's JSONL from ~/.claude/projects"
        )
    if any(
        isinstance(r, Mapping) and ("sessionId" in r or "uuid" in r) and isinstance(r.get("type"), str)
        for r in records
    ):
        return "claude-code-session"
    keys = sorted(str(k) for k in first)[:8]
    raise TranscriptError(f"{where}: {accepted}; the first record has keys {keys}")


def _api_format(records: list[Any], where: str) -> TranscriptFormat:
    found: set[TranscriptFormat] = set()
    unreadable: list[TranscriptError] = []
    for number, record in enumerate(records, start=1):
        response = record.get("response") if isinstance(record, Mapping) else None
        body = response.get("body") if isinstance(response, Mapping) and "body" in response else response
        if isinstance(body, str):  # a body logged as text: JSON, or a stream's events
            try:
                body = text_body(body, f"{where}: exchange {number}, response")
            except TranscriptError as exc:
                unreadable.append(exc)  # refused by name when the exchange is read, or below
                continue
        kind = RESPONSE_KINDS.get(
            str(body.get("type") if "type" in body else body.get("object"))
            if isinstance(body, Mapping)
            else ""
        )
        if kind is not None:
            found.add(kind)
    if len(found) == 1:
        return found.pop()
    if not found and unreadable:
        raise unreadable[0]
    if not found:
        raise TranscriptError(
            f'{where}: no exchange\'s response is an Anthropic message ("type": "message"), an OpenAI '
            'response ("object": "response") or a chat completion ("object": "chat.completion")'
        )
    raise TranscriptError(f"{where}: the exchanges mix {' and '.join(sorted(found))} answers")


def _read(
    fmt: TranscriptFormat,
    data: Any,
    kind: str,
    where: str,
    tools: list[Tool] | None,
    sub_agents: list[tuple[str, str, list[tuple[int, Any]]]],
) -> Recording:
    # Imported here: each reader is only needed for its own format.
    if fmt == "claude-code-session":
        from toolsearch_lab.replay.claude_code import read_session

        lines = data if kind == "jsonl" else [(1, data)]
        return read_session(lines, where, tools, sub_agents)
    records = [r for _, r in data] if kind == "jsonl" else data
    if isinstance(records, Mapping):
        records = [records]
    if fmt == "anthropic-messages":
        from toolsearch_lab.replay.anthropic import read_messages

        return read_messages(records, where)
    if fmt == "openai-chat-completions":
        from toolsearch_lab.replay.chat_completions import read_chat_completions

        return read_chat_completions(records, where)
    from toolsearch_lab.replay.responses import read_responses

    return read_responses(records, where)


def _sub_agents(
    file: Path, fmt: TranscriptFormat, notes: list[str]
) -> list[tuple[str, str, list[tuple[int, Any]]]]:
    """(label, file name, lines) of each sub-agent file of a Claude Code session: ``<session>/subagents/
    *.jsonl`` beside the session file, labelled by the ``agentType`` of its ``.meta.json`` and its id."""
    folder = file.parent / file.stem / "subagents"
    if fmt != "claude-code-session" or not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        data, kind = read_transcript(path)
        lines = data if kind == "jsonl" else [(1, data)]
        notes += [f"{path.name}: {r.note}; left out" for _, r in lines if isinstance(r, _CutLine)]
        lines = [(n, r) for n, r in lines if not isinstance(r, _CutLine)]
        found.append((_agent_label(path), f"{file.stem}/subagents/{path.name}", lines))
    return found


def _agent_label(path: Path) -> str:
    """ "Explore a2ea5ba327db80df8": the sub-agent's type (from its ``.meta.json``, when readable) and id."""
    ident = path.stem.removeprefix("agent-")
    meta = path.with_name(f"{path.stem}.meta.json")
    try:
        kind = json.loads(meta.read_text(encoding="utf-8")).get("agentType") if meta.is_file() else None
    except (OSError, ValueError, AttributeError):
        kind = None  # an unreadable sidecar only costs the label its type
    return f"{kind} {ident}" if isinstance(kind, str) and kind else f"agent {ident}"


def _tools_of(catalog: Any) -> list[Tool] | None:
    if catalog is None:
        return None
    if isinstance(catalog, ToolCatalog):
        return list(catalog.tools)
    if isinstance(catalog, list):
        return [expect(t, Tool, "catalog", "Tool objects") for t in catalog]
    return list(load_catalog(catalog).tools)


def _provenance(file: Path) -> str | None:
    """The paragraph of a PROVENANCE.md beside the file that names it, if there is one."""
    sidecar = file.parent / "PROVENANCE.md"
    if sidecar.is_file():
        for paragraph in sidecar.read_text(encoding="utf-8", errors="replace").split("\n\n"):
            if file.name in paragraph and not paragraph.lstrip().startswith("|"):
                return " ".join(paragraph.split())[:600]
    return None
