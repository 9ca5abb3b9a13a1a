"""How the offline agents judge (:mod:`toolsearch_lab.models.simulated`): the words of a need, and how well
a tool fits it, by shared words (the literal agent) or by meaning (the semantic agent); and what they read
from the conversation: search results, definitions expanded inline, arguments filled from a step's data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolsearch_lab.embed.base import Embedder
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.text.identifiers import spaced_identifiers, split_identifiers
from toolsearch_lab.text.stopwords import AGENT_STOP_WORDS
from toolsearch_lab.text.tool_text import example_requests
from toolsearch_lab.wire import decode_search_items, is_error_result, is_no_match

OVERLAP_WEIGHT = 0.25
STOP_WORDS = AGENT_STOP_WORDS


def surface_words(text: str, split_camel: bool = False) -> list[str]:
    """Lower-cased content words as written (stop words dropped); camelCase split only for identifiers."""
    if split_camel:
        text = " ".join(split_identifiers(text or "", separators="", acronyms=False))
    return [
        w for w in re.split(r"[^A-Za-z0-9]+", (text or "").lower()) if len(w) >= 2 and w not in STOP_WORDS
    ]


def fold(word: str) -> str:
    """Fold a plural -s so 'issues' matches 'issue' when the agent judges fit."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def words(text: str, split_camel: bool = False) -> list[str]:
    return [fold(w) for w in surface_words(text, split_camel)]


@dataclass(frozen=True)
class Step:
    need: str
    data: dict = field(default_factory=dict)


def as_step(raw: Step | Mapping[str, Any]) -> Step:
    return raw if isinstance(raw, Step) else Step(raw["need"], dict(raw.get("data") or {}))


def turn_steps(turns: Sequence[Mapping[str, Any]]) -> dict[str, list[Step]]:
    """{user message: its steps}, checked: each turn has non-blank text of its own and at least one step."""
    out: dict[str, list[Step]] = {}
    for i, turn in enumerate(turns):
        text = turn.get("user") if isinstance(turn, Mapping) else None
        steps = turn.get("steps") if isinstance(turn, Mapping) else None
        if not isinstance(text, str) or not text.strip() or not steps:
            raise ValueError(f"simulated agent: turns[{i}] must be {{'user': <message>, 'steps': [...]}}")
        if text.strip() in out:
            raise ValueError(
                f"simulated agent: turns[{i}] repeats an earlier user message; each needs its own"
            )
        out[text.strip()] = [as_step(s) for s in steps]
    return out


def tool_fit(need: str, tool_definition: dict, examples: bool = False) -> float:
    """How well a tool fits a need by shared words: weighted coverage of the need's words (name words count
    double, description words once), scaled by how much of the tool's name the need explains, so a narrower
    tool (``issue_dependency_read``) loses to the plain one (``issue_read``) for "read an issue". The
    example requests a description lists count as description words only with ``examples``: they say how
    other people asked, not what the tool does."""
    fn = tool_definition["function"]
    need_words = list(dict.fromkeys(words(need)))
    if not need_words:
        return 0.0
    name_words = set(words(fn["name"], split_camel=True))
    description = fn.get("description") or ""
    if not examples:
        description = example_requests(description)[0]
    description_words = set(words(description, split_camel=True))
    coverage = sum(2.0 if w in name_words else 1.0 if w in description_words else 0.0 for w in need_words)
    name_precision = (1 + len(name_words & set(need_words))) / (1 + len(name_words))
    return coverage / len(need_words) * name_precision


def semantic_fit(need: str, tool_definition: dict, embedder: Embedder, reading: str | None = None) -> float:
    """How well a tool fits a need by meaning: the best cosine between the need (as written, or as the
    agent reads it through its glossary) and the tool (its split name, its description, or one of the
    example requests the description lists), plus ``OVERLAP_WEIGHT`` x the word-overlap fit of the
    reading, examples included (capped at 1). Roughly 0.6-1.2 for the right tool in the catalog's own
    words, 0.1-0.5 for everyday words the glossary does not know."""
    fn = tool_definition["function"]
    reading = reading or need
    description, examples = example_requests(fn.get("description") or "")
    vectors = np.asarray(
        embedder.embed([need, reading, spaced_identifiers(fn["name"]), description or fn["name"], *examples])
    )
    cosine = float((vectors[:2] @ vectors[2:].T).max())
    return cosine + OVERLAP_WEIGHT * min(tool_fit(reading, tool_definition, examples=True), 1.0)


def word_fit(step: Step, tool: dict) -> float:
    return tool_fit(step.need, tool)


def data_words(step: Step, several: bool = False) -> set[str]:
    """The words of a step's data values (names, numbers, places): not what the step asks for. With
    ``several``, only values of several words ("fix-issue-42"): the names the glossary must not read, as a
    one-word value ("squash") may well be the request's own verb."""
    parts = [surface_words(str(v)) for v in step.data.values()]
    return {w for words in parts if len(words) > 1 or not several for w in words}


def query_of(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError:
        return ""
    return str(parsed.get("query") or "") if isinstance(parsed, dict) else ""


def names_in(content: str) -> list[str]:
    """Tool names in a toolSearchTool result: a JSON list of names, or of definitions expanded inline
    (the loop's inline-references strategy); an error result has none. As a model reads it, items that
    are neither are passed over rather than spoiling the rest."""
    return [
        item if isinstance(item, str) else item["function"]["name"] for item in decode_search_items(content)
    ]


def inline_definitions(messages: list[dict], sent: set[str]) -> list[dict]:
    """Tool definitions that search results expanded inside the conversation and the tools array does not
    carry: the model can read and call them like the ones it was sent."""
    found: dict[str, dict] = {}
    searches = {  # over HTTP a tool message has no name: its call id says which tool it answers
        call.get("id")
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
        if (call.get("function") or {}).get("name") == TOOL_SEARCH_TOOL_NAME
    }
    for message in messages:
        is_search = message.get("name") == TOOL_SEARCH_TOOL_NAME or message.get("tool_call_id") in searches
        if message.get("role") == "tool" and is_search:
            for item in decode_search_items(str(message.get("content", ""))):
                if isinstance(item, dict) and item["function"]["name"] not in sent:
                    found.setdefault(item["function"]["name"], item)
    return list(found.values())


def fill_arguments(schema: dict, data: dict) -> dict:
    """Arguments for a tool from the step's data, matched by parameter name (case, '_' and '-' ignored)."""
    properties = schema.get("properties") or {}
    normalised = {re.sub(r"[^a-z0-9]", "", k.lower()): v for k, v in data.items()}
    out = {}
    for name in properties:
        key = re.sub(r"[^a-z0-9]", "", name.lower())
        if key in normalised:
            out[name] = normalised[key]
    return out


# ---- where an agent is, read from the conversation ------------------------------------------------------
SKIP_NOTE = re.compile(r"^Skipping step (\d+)\b", re.MULTILINE)
ANSWER_LINE = re.compile(r"^- .*? → ([A-Za-z0-9_.-]+): ", re.MULTILINE)  # a summary line of the agents'


@dataclass
class Progress:
    """Where a simulated agent is in its task, read from the conversation (:func:`read_progress`)."""

    step: int = 0
    searches: int = 0
    queries: list[str] = field(default_factory=list)  # queries sent for the current step
    last_found: list[str] = field(default_factory=list)  # tool names the last search returned
    found: dict[str, float] = field(default_factory=dict)  # tool -> searches of this step that returned it
    results: list[tuple[int, str, str]] = field(default_factory=list)  # (step, tool, result)
    skipped: list[int] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)  # the steps of the current turn
    turn_searches: int = 0  # searches made since the user's message
    retry: str | None = None  # a tool whose call for this step got an error result, to call once more
    retried: bool = False  # this step has had its one retry
    first_no_match: int = 0  # which search of this step first came back "no tool matches" (1-based; 0: none)

    def next_step(self) -> None:
        self.step, self.searches, self.queries, self.last_found, self.found = self.step + 1, 0, [], [], {}
        self.retry, self.retried = None, False
        self.first_no_match = 0


def read_progress(messages: list[dict]) -> Progress:
    """Where the agent is, derived from the conversation since the last user message alone."""
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    state = Progress()
    calls: dict[str, tuple[str, str]] = {}
    for message in messages[start + 1 :]:
        if message.get("role") == "assistant":
            for _ in SKIP_NOTE.finditer(message.get("content") or ""):
                state.skipped.append(state.step)
                state.next_step()
            for call in message.get("tool_calls") or []:
                calls[call["id"]] = (call["function"]["name"], call["function"].get("arguments") or "")
        elif message.get("role") == "tool":
            name, arguments = calls.get(message.get("tool_call_id") or "", (message.get("name", ""), ""))
            content = str(message.get("content", ""))
            if name == TOOL_SEARCH_TOOL_NAME:
                state.searches += 1
                state.turn_searches += 1
                state.queries.append(query_of(arguments))
                state.last_found = names_in(content)
                if is_no_match(content) and not state.first_no_match:
                    state.first_no_match = state.searches
                for name in dict.fromkeys(state.last_found):
                    state.found[name] = state.found.get(name, 0.0) + 1.0
            elif is_error_result(content) and not state.retried:  # its input refused: one more try
                state.retry, state.retried = name, True
            else:
                state.results.append((state.step, name, content))
                state.next_step()
    return state


def final_summary(state: Progress) -> str:
    """The agents' final answer: one line per tool result (``- need → tool: result``, the lines
    :data:`ANSWER_LINE` reads back), then the steps skipped."""
    if not state.results:
        lines = ["I did not call any tool."]
    else:
        lines = [f"Done. I used {len(state.results)} tool(s):"]
        for step_index, name, content in state.results:
            short = content if len(content) <= 160 else content[:157] + "..."
            need = state.steps[step_index].need if step_index < len(state.steps) else "?"
            lines.append(f"- {need} → {name}: {short}")
    if state.skipped:
        lines.append("Skipped: " + "; ".join(f"step {k + 1} ({state.steps[k].need})" for k in state.skipped))
    return "\n".join(lines)


def tools_used_before(messages: list[dict]) -> list[str]:
    """The tools the assistant used in earlier turns, as far as the conversation still shows them: the
    calls of its messages before the last user message, and the tools its own earlier answers name (the
    simulated agents' summary lines, ``- need → tool: result``). Newest first, once each."""
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    names: list[str] = []
    for message in messages[:start]:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            names.append(str((call.get("function") or {}).get("name", "")))
        names += ANSWER_LINE.findall(str(message.get("content") or ""))
    return [n for n in dict.fromkeys(reversed(names)) if n and n != TOOL_SEARCH_TOOL_NAME]


def retry_call(step: Step, state: Progress, candidates: list[dict]) -> tuple[str, str] | None:
    """(tool, arguments) of the one retry a step gets after a tool refused its input (an error result): the
    same tool, with the step's data converted to the types its schema declares. None when there is nothing
    to retry, or when the request no longer offers the tool: then the agent looks for it again (searches),
    as spring-ai #7034 says a model must once a found tool has left the request."""
    if state.retry is None:
        return None
    tool = next((c["function"] for c in candidates if c["function"]["name"] == state.retry), None)
    if tool is None:
        return None
    schema = tool.get("parameters") or {}
    return tool["name"], json.dumps(typed_arguments(schema, fill_arguments(schema, step.data)))


def recalled_query(
    rate: Callable[[dict], float], threshold: float, state: Progress, candidates: list[dict], used: list[str]
) -> str | None:
    """A query for a tool used in an earlier turn (``used``: :func:`tools_used_before`) that the request
    does not offer, before the step's first search: the best such tool by ``rate`` (given a definition
    holding its name alone), searched for by its name's words when its rating reaches ``threshold``, as a
    model looks up a tool it remembers using. None: no such tool, or the step has searched already."""
    if state.searches or not used:
        return None
    offered = {c["function"]["name"] for c in candidates}
    rated = [(rate({"function": {"name": n, "description": ""}}), n) for n in used if n not in offered]
    confidence, name = max(rated, default=(0.0, ""))
    query = " ".join(surface_words(name, split_camel=True))
    return query if confidence >= threshold and query and query not in state.queries else None


def typed_arguments(schema: dict, arguments: dict) -> dict:
    """``arguments`` with each value that the schema types otherwise, and that reads as that type, converted
    (the text "48213" for an integer parameter becomes 48213), as a model re-reads the schema after its
    input was refused."""
    properties = schema.get("properties") or {}
    return {k: _as_type(v, (properties.get(k) or {}).get("type")) for k, v in arguments.items()}


def _as_type(value: Any, kind: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if kind == "integer" and re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        if kind == "number" and re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", text):
            return float(text)
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
    elif kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value
