"""An offline, deterministic stand-in for a chat model, so workshops run with no API key.

Two agents, :class:`LiteralAgent` and :class:`SemanticAgent`, share the :class:`SimulatedAgent` base;
``SimulatedAgent(steps, mode=...)`` builds either. Both follow rules simple enough for a class to predict.

Common rules
1. The task is a list of steps, each a natural-language need plus the data it mentions (a city, a repo...).
   The agent never sees which tool a step is expected to use.
2. Everything it knows comes from the conversation (no hidden state), so a replay is identical: the
   current step is the number of real tool calls made since the user's message, plus the steps it said it
   skipped.
3. A chosen tool is called with arguments filled from the step's data by parameter name. The agent can
   pick wrong; the trace shows it. After the last step it answers with a summary of the results.
4. The first search for a step asks toolSearchTool for the need's content words as written (stop words
   dropped, at most six), with ``maxResults`` = ``max_results``.
5. After a search comes back empty ("no tool matches": Spring's empty array, whichever index said it), the
   step gets at most one more search, in other words, as the meta-tool's description invites; then the
   agent calls what that search gave it if it fits, or does without a tool for the step, as when nothing
   fits (below).

``LiteralAgent`` (``mode="literal"``) - judges fit by shared words only
* Fit (:func:`.fit.tool_fit`): words of the need that appear in the tool's name count double, in its
  description once (not in the example requests a description may list: they say how other people
  asked, not what the tool does); identifiers are split (``get_weather`` -> get, weather), plurals
  folded. Score = weighted overlap / number of need words, times (1 + name words the need explains) /
  (1 + name words), so narrower tools whose names say more than the need lose. A tool already used for an
  earlier step counts at half that score.
* It calls the best exposed tool when its fit reaches ``pick_threshold`` (0.8); otherwise it searches.
  The second search leaves out the words of the step's data. After ``max_searches_per_step`` (2) searches
  with nothing that fits it gives up and answers, saying so: one missed step ends the task.

``SemanticAgent`` (``mode="semantic"``) - reads everyday words and judges fit by meaning, as a model would
* It reads a need through a glossary of everyday words (:mod:`toolsearch_lab.models.glossary`; the shipped
  ``data/agent/glossary.json``, written without seeing the scenarios): each phrase it knows is replaced by
  the catalogs' words for it ("pull up ticket #42" -> "get list issue 42"), longest phrase first.
  Words of a data value of several words (the branch "fix-issue-42") are left as written. ``glossary=
  Glossary()`` reads nothing (the "semantic-no-glossary" agent of :data:`AGENT_NAMES`).
* Fit (:func:`.fit.semantic_fit`): the best cosine similarity between the need (as written, or as read) and
  the tool (its split name, its description, or any example request the description lists -
  :mod:`toolsearch_lab.catalog.examples`), embedded with the default MiniLM embedder (the vectors of the
  shipped catalogs are precomputed), plus ``OVERLAP_WEIGHT`` (0.25) x the literal fit of the reading
  (here counting the example requests' words as description words), capped at 1. A tool already used for
  an earlier step counts at half.
* Confidence in a tool that this step's searches returned = fit + ``VOTE_WEIGHT`` (0.3) x the share of
  the step's ``max_searches_per_step`` (3) searches that returned it: a tool that keeps coming back for
  differently worded queries is probably the one.
* Before searching for a step it calls an exposed tool only when the words say so plainly (literal fit
  >= ``pick_threshold``, 0.8, as the literal agent). After each search it calls the most promising tool
  when its confidence reaches ``sure_threshold`` (0.8); otherwise it reformulates:
    - search 2 - the core of the need as read: the reading's content words without the step's data words
      (names, numbers, places);
    - search 3 - the core plus the catalog's vocabulary: up to three name words of the most promising tool
      so far (if its confidence reaches ``hint_threshold``, 0.2), as a model reuses the words the results
      showed it ("close ticket" -> "close ticket update issue state").
  A query identical to an earlier one for the step is not sent again; the next rule is used.
* Searches after the first ask for twice ``max_results``, as a model widens a search that missed.
* After its last search it settles for the most promising tool when its confidence reaches
  ``settle_threshold`` (0.5). If none does, it skips the step, says so in its reply ("Skipping step N
  ..."), and carries on with the next step; the final answer lists the skipped steps.
* Sent no ``toolSearchTool`` (every tool, or pre-retrieved ones), it never calls it: it rates the tools it
  was sent as if one search had returned each and settles for the best at ``settle_threshold`` (the literal
  agent only on its word rule), else skips the step.
* The thresholds are round numbers, set while watching both wordings run; the scenario wordings were
  written before and never changed to suit the agent or the indexes.

In a conversation (``turns=[{"user": message, "steps": [...]}, ...]``): the task is the steps of the turn
whose user message (exact text) is the last one sent, numbered per turn. Tools in hand first (semantic agent):
before its first search of a turn it rates each tool it already holds (kept from earlier turns, or pinned) as
it rates search results, counting the tool as returned by one search (confidence = fit + ``VOTE_WEIGHT`` / 3),
and calls the best when that reaches ``sure_threshold``; picking among the tools in front of it is easier than
finding one among hundreds (Claude Code: a deferred tool used in 2 of 6 sessions, 6 of 6 when loaded). The
literal agent's rule for exposed tools (``pick_threshold``) already covers tools in hand. Tools used before
(semantic agent): one used in an earlier turn that the conversation still shows, not offered now, is rated by
name alone the same way, and when sure searched for by name (:func:`.fit.recalled_query`). A retry (both
agents): a call answered with an error result is made once more for the step, its data converted to the
schema's types; if the request no longer offers the tool, it searches again (:func:`.fit.retry_call`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar, cast

from toolsearch_lab.embed.base import Embedder
from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.model import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.models.base import AssistantTurn, ToolCall
from toolsearch_lab.models.fit import (
    Progress,
    Step,
    as_step,
    data_words,
    fill_arguments,
    final_summary,
    inline_definitions,
    read_progress,
    recalled_query,
    retry_call,
    semantic_fit,
    surface_words,
    tools_used_before,
    turn_steps,
    word_fit,
)
from toolsearch_lab.models.glossary import Glossary, default_glossary

AGENT_MODES = ("literal", "semantic")
# The simulated agents by name: the two modes, and the semantic agent without its glossary, which shows
# what knowing everyday words ("ticket" is an issue) is worth.
AGENT_NAMES = ("literal", "semantic-no-glossary", "semantic")
# The demos' default: with it a failed step means search did not surface the tool, so the lesson is about
# wording and indexes; the literal agent also fails when search did surface it.
DEFAULT_MODE = "semantic"
VOTE_WEIGHT = 0.3
_Agent = TypeVar("_Agent", bound="SimulatedAgent")


class SimulatedAgent(ABC):
    """The rules both agents share (see the module docstring): the step it is on, read from the
    conversation; calling a tool the words plainly name; searching; the summary. Subclasses judge fit and
    decide what to do when nothing fits. ``SimulatedAgent(steps, mode=...)`` builds the agent of ``mode``
    (default :data:`DEFAULT_MODE`): :class:`LiteralAgent` or :class:`SemanticAgent`."""

    mode: ClassVar[str]
    default_name: ClassVar[str]
    default_searches_per_step: ClassVar[int]

    def __new__(cls: type[_Agent], *args: Any, mode: str | None = None, **options: Any) -> _Agent:
        chosen: type[SimulatedAgent] = cls
        if cls is SimulatedAgent:
            wanted = DEFAULT_MODE if mode is None else mode
            if wanted not in _AGENTS:
                raise ValueError(
                    f"SimulatedAgent: unknown mode {wanted!r}; expected one of {list(AGENT_MODES)}"
                )
            chosen = _AGENTS[wanted]
        return cast(_Agent, object.__new__(chosen))

    def __init__(
        self,
        steps: Sequence[Step | dict] = (),
        max_results: int | None = 5,
        pick_threshold: float | None = None,
        max_searches_per_step: int | None = None,
        query_words: int = 6,
        mode: str | None = None,
        turns: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        if mode is not None and mode != self.mode:
            raise ValueError(f"{type(self).__name__}: mode is {self.mode!r}, got mode={mode!r}")
        if turns is not None and steps:
            raise ValueError(f"{type(self).__name__}: give steps (one request) or turns, not both")
        self.turns: dict[str, list[Step]] | None = None if turns is None else turn_steps(turns)
        self.steps = [as_step(s) for s in steps] or [s for t in (self.turns or {}).values() for s in t]
        if not self.steps:
            raise ValueError("SimulatedAgent: at least one step is required")
        self.name = self.default_name
        self.max_results = max_results
        self.pick_threshold = pick_threshold if pick_threshold is not None else 0.8
        self.max_searches_per_step = max_searches_per_step or self.default_searches_per_step
        self.query_words = query_words
        self._fit_cache: dict[tuple[str, str, str, str], float] = {}

    def reading(self, step: Step) -> str:
        """The need as this agent understands it (the literal agent: as written)."""
        return step.need

    def complete(self, messages: list[dict], tools: list[dict]) -> AssistantTurn:
        steps = self._task(messages)
        if steps is None:
            return AssistantTurn("I have no task for this message (a simulated agent knows only its turns).")
        state = read_progress(messages)
        state.steps = steps
        turn_id = sum(1 for m in messages if m.get("role") == "assistant")
        notes: list[str] = []
        candidates = [t for t in tools if t["function"]["name"] != TOOL_SEARCH_TOOL_NAME]
        can_search = len(candidates) < len(tools)  # all-tools and pre-retrieval send no toolSearchTool
        candidates += inline_definitions(messages, {t["function"]["name"] for t in tools})
        remembered = tools_used_before(messages) if self.turns is not None else []

        def call(name: str, arguments: str) -> AssistantTurn:
            return AssistantTurn("\n".join(notes) or None, [ToolCall(f"call_{turn_id}_0", name, arguments)])

        def use(tool: dict) -> AssistantTurn:
            return call(tool["name"], json.dumps(fill_arguments(tool.get("parameters") or {}, step.data)))

        while state.step < len(steps):
            step = steps[state.step]
            again = retry_call(step, state, candidates)
            if again is not None:
                return call(*again)
            recalled = self._recalled(step, state, candidates, remembered) if can_search else None
            if recalled is not None:
                return call(TOOL_SEARCH_TOOL_NAME, self._search_args(recalled, state.searches))
            chosen = self._choose(step, candidates, state)
            if chosen is not None:
                return use(chosen)
            searching = can_search and self._may_search_again(state)
            query = self._next_query(step, state, candidates) if searching else None
            if query is not None:
                return call(TOOL_SEARCH_TOOL_NAME, self._search_args(query, state.searches))
            settled = (
                self._settle(step, candidates, state)
                if can_search
                else self._pick_unsearched(step, candidates, state)
            )
            if settled is not None:
                return use(settled)
            gave_up = self._nothing_fits(step, state, notes)
            if gave_up is not None:
                return gave_up
        return AssistantTurn("\n".join([*notes, final_summary(state)]))

    def _task(self, messages: list[dict]) -> list[Step] | None:
        """The steps to do now: all of them (one request), or those of the turn whose user message is the
        last one sent (None: no turn has that message)."""
        if self.turns is None:
            return self.steps
        last = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
        return self.turns.get(last.strip()) if isinstance(last, str) else None

    def _recalled(self, step: Step, state: Progress, candidates: list[dict], used: list[str]) -> str | None:
        """A query for a tool used in an earlier turn (none here; see :meth:`SemanticAgent._recalled`)."""
        return None

    @abstractmethod
    def _nothing_fits(self, step: Step, state: Progress, notes: list[str]) -> AssistantTurn | None:
        """No tool fits ``step`` after its last search: the answer that ends the run, or None to carry on
        with the next step (having said so in ``notes``)."""

    # ---- judging fit ----------------------------------------------------------------------------------
    def fit(self, step: Step, tool: dict, used: set[str] | None = None) -> float:
        """This agent's judgement of ``tool`` for ``step``; a tool that already served an earlier step is
        judged at half weight (a new step usually needs a new capability)."""
        score = self._cached("judged", step, tool, self._judge)
        return score / 2 if used and tool["function"]["name"] in used else score

    @abstractmethod
    def _judge(self, step: Step, tool: dict) -> float:
        """This agent's fit of ``tool`` for ``step``, before the half weight of a used tool."""

    def _cached(self, kind: str, step: Step, tool: dict, score: Callable[[Step, dict], float]) -> float:
        """``score(step, tool)``, computed once per ``kind`` of fit, need and tool."""
        fn = tool["function"]
        key = (kind, step.need, fn["name"], fn.get("description") or "")
        if key not in self._fit_cache:
            self._fit_cache[key] = score(step, tool)
        return self._fit_cache[key]

    def _plainly_named(self, step: Step, tools: list[dict], used: set[str]) -> dict | None:
        """The best of ``tools`` by shared words when its fit reaches ``pick_threshold``; ties go to the
        tool exposed first."""
        best_score, best_tool = float("-inf"), None
        for tool in tools:
            score = self._cached("words", step, tool, word_fit)
            score = score / 2 if tool["function"]["name"] in used else score
            if score > best_score:
                best_score, best_tool = score, tool["function"]
        return best_tool if best_tool is not None and best_score >= self.pick_threshold else None

    def _choose(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """A tool to call now, if one is clearly right: the words say so (literal fit >= pick_threshold)."""
        return self._plainly_named(step, candidates, {name for _, name, _ in state.results})

    def _settle(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """A tool to call after the step's last search although none was clearly right (none here)."""
        return None

    def _pick_unsearched(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """A tool to call when no search can be made (no ``toolSearchTool`` sent) and none was clearly
        right: none here, the step is skipped. Calling the absent search tool would only earn an error."""
        return None

    # ---- searching ------------------------------------------------------------------------------------
    def _may_search_again(self, state: Progress) -> bool:
        """Whether the step may have another search. After one came back "no tool matches" (the empty
        array), one more, in other words, as the meta-tool's description invites; after that the agent
        does without a tool for the step, as a model told that nothing fits does."""
        return not state.first_no_match or state.searches <= state.first_no_match

    def _next_query(self, step: Step, state: Progress, candidates: list[dict]) -> str | None:
        if state.searches >= self.max_searches_per_step:
            return None
        return self._query(step, state.searches, state, candidates)

    def _query(self, step: Step, attempt: int, state: Progress, candidates: list[dict]) -> str:
        """Search 1: the need's content words as written; later searches: its core, without data words."""
        if attempt == 0:
            return " ".join(list(dict.fromkeys(surface_words(step.need)))[: self.query_words]) or step.need
        return " ".join(self._core(step)[: self.query_words])

    def _core(self, step: Step) -> list[str]:
        """The content words of the need as read, without the step's data words (unless that is all)."""
        content = list(dict.fromkeys(surface_words(self.reading(step))))
        data = data_words(step)
        return [w for w in content if w not in data] or content

    def _max_results(self, attempt: int) -> int | None:
        """The ``maxResults`` of search ``attempt`` (0-based) for a step."""
        return self.max_results

    def _search_args(self, query: str, attempt: int = 0) -> str:
        args: dict = {"query": query}
        max_results = self._max_results(attempt)
        if max_results is not None:
            args["maxResults"] = max_results
        return json.dumps(args)


class LiteralAgent(SimulatedAgent):
    """Judges fit by shared words only (:func:`.fit.tool_fit`), and stops at the first step nothing fits (see
    the module docstring)."""

    mode = "literal"
    default_name = "simulated"
    default_searches_per_step = 2

    def _judge(self, step: Step, tool: dict) -> float:
        return word_fit(step, tool)

    def _nothing_fits(self, step: Step, state: Progress, notes: list[str]) -> AssistantTurn | None:
        return AssistantTurn(
            f"I could not find a tool for step {state.step + 1} ({step.need!r}) after "
            f"{state.searches} searches, so I stopped.\n" + final_summary(state)
        )


class SemanticAgent(SimulatedAgent):
    """Reads needs through a glossary, judges fit by meaning (:func:`.fit.semantic_fit`), reformulates, and
    skips a step nothing fits (see the module docstring). ``embedder`` defaults to the shared MiniLM,
    ``glossary`` to the shipped one (``Glossary()`` for none)."""

    mode = "semantic"
    default_name = "simulated-semantic"
    default_searches_per_step = 3

    def __init__(
        self,
        steps: Sequence[Step | dict] = (),
        max_results: int | None = 5,
        pick_threshold: float | None = None,
        max_searches_per_step: int | None = None,
        query_words: int = 6,
        mode: str | None = None,
        turns: Sequence[Mapping[str, Any]] | None = None,
        embedder: Embedder | None = None,
        glossary: Glossary | None = None,
        sure_threshold: float = 0.8,
        settle_threshold: float = 0.5,
        hint_threshold: float = 0.2,
    ) -> None:
        super().__init__(steps, max_results, pick_threshold, max_searches_per_step, query_words, mode, turns)
        self.sure_threshold = sure_threshold
        self.settle_threshold = settle_threshold
        self.hint_threshold = hint_threshold
        self._embedder: Embedder | None = embedder
        self._glossary = glossary
        self._readings: dict[str, str] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            # The shared cached MiniLM; its read-only ``name`` property does not match the protocol's.
            self._embedder = cast(Embedder, default_embedder())
        return self._embedder

    @property
    def glossary(self) -> Glossary:
        """The everyday-words glossary the agent reads needs through (the shipped one by default;
        ``Glossary()`` for none)."""
        if self._glossary is None:
            self._glossary = default_glossary()
        return self._glossary

    def reading(self, step: Step) -> str:
        """The need as this agent understands it: through the glossary."""
        if step.need not in self._readings:
            self._readings[step.need] = self.glossary.read(step.need, keep=data_words(step, several=True))
        return self._readings[step.need]

    def _judge(self, step: Step, tool: dict) -> float:
        return semantic_fit(step.need, tool, self.embedder, self.reading(step))

    def _in_hand(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """Tools in hand first (module docstring): the held tool rated as if one search had returned it."""
        if self.turns is None or state.turn_searches:
            return None
        return self._best_held(step, candidates, state, self.sure_threshold)

    def _pick_unsearched(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """No search to make (every tool sent, or pre-retrieved ones): the held tools are all it will see,
        each rated as if one search had returned it, and the best taken at ``settle_threshold``."""
        return self._best_held(step, candidates, state, self.settle_threshold)

    def _best_held(
        self, step: Step, candidates: list[dict], state: Progress, threshold: float
    ) -> dict | None:
        if not candidates:
            return None
        used = {name for _, name, _ in state.results}
        vote = VOTE_WEIGHT / self.max_searches_per_step
        fit, tool = max(
            ((self.fit(step, c, used) + vote, c["function"]) for c in candidates), key=lambda p: p[0]
        )
        return tool if fit >= threshold else None

    def _recalled(self, step: Step, state: Progress, candidates: list[dict], used: list[str]) -> str | None:
        """Tools used before, recalled (:func:`.fit.recalled_query`): each rated by its name alone, as a held
        tool is rated, and searched for by name when that reaches ``sure_threshold``."""
        vote = VOTE_WEIGHT / self.max_searches_per_step
        rate = lambda tool: self.fit(step, tool) + vote  # noqa: E731
        return recalled_query(rate, self.sure_threshold, state, candidates, used)

    def _nothing_fits(self, step: Step, state: Progress, notes: list[str]) -> AssistantTurn | None:
        notes.append(
            f"Skipping step {state.step + 1} ({step.need!r}): no tool fits after {state.searches} "
            "searches; carrying on."
        )
        state.skipped.append(state.step)
        state.next_step()
        return None

    def _choose(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """As the literal agent; in a conversation before the turn's first search, a tool in hand it is sure
        of; once it has searched for the step, a tool those searches returned whose confidence reaches
        ``sure_threshold``."""
        plain = super()._choose(step, candidates, state) or self._in_hand(step, candidates, state)
        if plain is not None:
            return plain
        confidence, tool = self._most_promising(step, candidates, state)
        return tool if tool is not None and confidence >= self.sure_threshold else None

    def _settle(self, step: Step, candidates: list[dict], state: Progress) -> dict | None:
        """After its last search: the most promising tool when its confidence reaches ``settle_threshold``."""
        confidence, tool = self._most_promising(step, candidates, state)
        return tool if tool is not None and confidence >= self.settle_threshold else None

    def _most_promising(
        self, step: Step, candidates: list[dict], state: Progress
    ) -> tuple[float, dict | None]:
        """(confidence, tool) over the exposed tools this step's searches returned: confidence = semantic
        fit + ``VOTE_WEIGHT`` x the share of this step's searches that returned the tool."""
        used = {name for _, name, _ in state.results}
        best_score, best_tool = float("-inf"), None
        for tool in candidates:
            votes = state.found.get(tool["function"]["name"], 0.0)
            if votes:
                score = self.fit(step, tool, used) + VOTE_WEIGHT * votes / self.max_searches_per_step
                if score > best_score:
                    best_score, best_tool = score, tool["function"]
        return best_score, best_tool

    def _next_query(self, step: Step, state: Progress, candidates: list[dict]) -> str | None:
        """The next search rule whose query is not empty and was not sent for the step yet."""
        for attempt in range(state.searches, self.max_searches_per_step):
            query = self._query(step, attempt, state, candidates)
            if query and query not in state.queries:
                return query
        return None

    def _query(self, step: Step, attempt: int, state: Progress, candidates: list[dict]) -> str:
        """Searches 1 and 2 as the literal agent's (the core as read); search 3 adds the catalog's words."""
        if attempt < 2:
            return super()._query(step, attempt, state, candidates)
        core = self._core(step)
        borrowed = self._borrowed_words(step, state, candidates)
        return " ".join(dict.fromkeys([*core[: self.query_words - len(borrowed)], *borrowed]))

    def _borrowed_words(self, step: Step, state: Progress, candidates: list[dict]) -> list[str]:
        """Name words of the most promising tool so far, if its confidence reaches ``hint_threshold``."""
        confidence, tool = self._most_promising(step, candidates, state)
        if tool is None or confidence < self.hint_threshold:
            return []
        return surface_words(tool["name"], split_camel=True)[:3]

    def _max_results(self, attempt: int) -> int | None:
        """After a miss it asks for twice as many results, as a model widens a search."""
        if self.max_results is None:
            return None
        return self.max_results * 2 if attempt > 0 else self.max_results


_AGENTS: dict[str, type[SimulatedAgent]] = {"literal": LiteralAgent, "semantic": SemanticAgent}


def simulated_agent(name: str, steps: Sequence[Step | dict] = (), **options: Any) -> SimulatedAgent:
    """The simulated agent called ``name`` (one of :data:`AGENT_NAMES`) for ``steps`` (or ``turns=``)."""
    if name not in AGENT_NAMES:
        raise ValueError(f"unknown simulated agent {name!r}; expected one of {list(AGENT_NAMES)}")
    if name == "semantic-no-glossary":
        agent = SemanticAgent(steps, glossary=Glossary(), **options)
        agent.name = "simulated-semantic-no-glossary"
        return agent
    return _AGENTS[name](steps, **options)
