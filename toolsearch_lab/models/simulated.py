"""An offline, deterministic stand-in for a chat model, so workshops run with no API key.

Policy (documented so a class can predict it):
1. The task is a list of steps, each a natural-language need plus the data it mentions (a city, a repo...).
   The agent never sees which tool a step is expected to use.
2. The current step is the number of real tool calls it has made since the user's message.
3. It scores every exposed tool (except toolSearchTool) against the step's need by word overlap: words of
   the need that appear in the tool's name count double, in its description once; identifiers are split
   (``get_weather`` → get, weather), stop words dropped, plurals folded. Score = weighted overlap / number of
   need words, times (1 + name words the need explains) / (1 + name words), so narrower tools whose names
   say more than the need lose. A tool already used for an earlier step counts at half that score.
4. If the best tool scores at least ``pick_threshold`` it calls that tool, filling arguments from the
   step's data by parameter name. It can pick wrong; the trace shows it.
5. Otherwise it calls toolSearchTool with a query it writes from the need (its content words as written,
   at most six; a second attempt leaves out the words of the step's data), asking for ``max_results``. If
   ``max_searches_per_step`` searches found nothing that fits, it gives up and answers, saying so.
6. After the last step it answers with a summary of the results.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from toolsearch_lab.loop.search_tool import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import AssistantTurn, ToolCall

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "can",
        "need",
        "to",
        "of",
        "in",
        "for",
        "on",
        "with",
        "at",
        "by",
        "from",
        "as",
        "into",
        "through",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "that",
        "this",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "it",
        "its",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "all",
        "any",
        "each",
        "some",
        "no",
        "not",
        "only",
        "just",
        "also",
        "very",
        "too",
        "please",
        "now",
        "use",
        "using",
        "get",
        "find",
        "tell",
        "show",
        "give",
        "want",
        "let",
        "up",
        "out",
        "about",
        "there",
        "here",
        "given",
    ]
)


def surface_words(text: str, split_camel: bool = False) -> list[str]:
    """Lower-cased content words as written (stop words dropped); camelCase split only for identifiers."""
    if split_camel:
        text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
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


def tool_fit(need: str, tool_definition: dict) -> float:
    """How well a tool fits a need: weighted coverage of the need's words (name words count double,
    description words once), scaled by how much of the tool's name the need explains, so a narrower tool
    (``issue_dependency_read``) loses to the plain one (``issue_read``) for "read an issue"."""
    fn = tool_definition["function"]
    need_words = list(dict.fromkeys(words(need)))
    if not need_words:
        return 0.0
    name_words = set(words(fn["name"], split_camel=True))
    description_words = set(words(fn.get("description") or "", split_camel=True))
    coverage = sum(2.0 if w in name_words else 1.0 if w in description_words else 0.0 for w in need_words)
    name_precision = (1 + len(name_words & set(need_words))) / (1 + len(name_words))
    return coverage / len(need_words) * name_precision


class SimulatedAgent:
    name = "simulated"

    def __init__(
        self,
        steps: list[Step],
        max_results: int | None = 5,
        pick_threshold: float = 0.8,
        max_searches_per_step: int = 2,
        query_words: int = 6,
    ) -> None:
        if not steps:
            raise ValueError("SimulatedAgent: at least one step is required")
        self.steps = [s if isinstance(s, Step) else Step(s["need"], dict(s.get("data") or {})) for s in steps]
        self.max_results = max_results
        self.pick_threshold = pick_threshold
        self.max_searches_per_step = max_searches_per_step
        self.query_words = query_words

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        step_index, searches, results = self._progress(messages)
        turn_id = sum(1 for m in messages if m.get("role") == "assistant")
        if step_index >= len(self.steps):
            return AssistantTurn(self._summary(results))
        step = self.steps[step_index]
        used = {name for name, _ in results}
        candidates = [t for t in tools if t["function"]["name"] != TOOL_SEARCH_TOOL_NAME]
        fit = {t["function"]["name"]: self._fit(step, t, used) for t in candidates}
        ranked = sorted(
            candidates, key=lambda t: -fit[t["function"]["name"]]
        )  # stable: exposure order breaks ties
        if ranked and fit[ranked[0]["function"]["name"]] >= self.pick_threshold:
            chosen = ranked[0]["function"]
            arguments = fill_arguments(chosen.get("parameters") or {}, step.data)
            return AssistantTurn(None, [ToolCall(f"call_{turn_id}_0", chosen["name"], json.dumps(arguments))])
        if searches < self.max_searches_per_step:
            return AssistantTurn(
                None,
                [ToolCall(f"call_{turn_id}_0", TOOL_SEARCH_TOOL_NAME, self._search_args(step, searches))],
            )
        return AssistantTurn(
            f"I could not find a tool for step {step_index + 1} ({step.need!r}) after {searches} searches, "
            f"so I stopped.\n" + self._summary(results)
        )

    # ---- internals ------------------------------------------------------------------------------------
    @staticmethod
    def _fit(step: Step, tool: dict, used: set[str]) -> float:
        # A tool that already served an earlier step is judged at half weight: a new step usually needs a
        # new capability, and without this "current time" in a weather step would re-pick currentTime.
        score = tool_fit(step.need, tool)
        return score / 2 if tool["function"]["name"] in used else score

    def _search_args(self, step: Step, attempt: int) -> str:
        # The query keeps the need's words as written: keyword indexes do no stemming.
        content = list(dict.fromkeys(surface_words(step.need)))
        # A second attempt drops the data words (names, places) that rarely appear in tool descriptions.
        if attempt > 0:
            data_words = {w for v in step.data.values() for w in surface_words(str(v))}
            content = [w for w in content if w not in data_words] or content
        args: dict = {"query": " ".join(content[: self.query_words]) or step.need}
        if self.max_results is not None:
            args["maxResults"] = self.max_results
        return json.dumps(args)

    def _progress(self, messages: list[dict]) -> tuple[int, int, list[tuple[str, str]]]:
        """(current step, searches made for it, [(tool, result)]) derived from the conversation alone, so
        the agent has no hidden state and replays identically."""
        start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        step = searches = 0
        results: list[tuple[str, str]] = []
        names_by_id: dict[str, str] = {}
        for message in messages[start + 1 :]:
            if message.get("role") == "assistant":
                for call in message.get("tool_calls") or []:
                    names_by_id[call["id"]] = call["function"]["name"]
            elif message.get("role") == "tool":
                name = names_by_id.get(message.get("tool_call_id"), message.get("name", ""))
                if name == TOOL_SEARCH_TOOL_NAME:
                    searches += 1
                else:
                    results.append((name, str(message.get("content", ""))))
                    step += 1
                    searches = 0
        return step, searches, results

    def _summary(self, results: list[tuple[str, str]]) -> str:
        if not results:
            return "I did not call any tool."
        lines = [f"Done. I used {len(results)} tool(s):"]
        for (name, content), step in zip(results, self.steps, strict=False):
            short = content if len(content) <= 160 else content[:157] + "..."
            lines.append(f"- {step.need} → {name}: {short}")
        return "\n".join(lines)


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
