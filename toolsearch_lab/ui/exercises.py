"""The notebooks' "Try this" exercises: blank answers, self-checks that explain, and hidden solutions.

A student's cell sets one or more variables to ``...``. The self-check cell calls
``check("04", my_prediction, **context)``, which returns a :class:`Verdict` shown as the cell's output:

- "not answered yet" while an answer is ``...`` or ``None`` (no exception, so Run All keeps going);
- "not quite, because …" for a wrong answer;
- "✓ …" for a right one.

Every judge computes the right answer from the package at run time, from the objects the notebook built.
A facilitator reveals solutions with ``reveal("04")`` (prints the code to paste) or for the whole room with
``TOOLSEARCH_LAB_SOLUTIONS=1`` (a blank answer is then replaced by the solution inside ``check``).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolsearch_lab import (
    ENGLISH_STOP_WORDS,
    LruEviction,
    ToolCatalog,
    keyword_tokens,
    load_catalog,
    porter_stem,
)
from toolsearch_lab.eval.datasets import load_dataset
from toolsearch_lab.eval.metrics import recall_at_k, reciprocal_rank
from toolsearch_lab.eval.scenarios import load_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.models.base import ScriptedModel
from toolsearch_lab.models.glossary import default_glossary, glossary_words
from toolsearch_lab.models.simulated import fold
from toolsearch_lab.models.simulated import words as simulated_words
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.doctor import judge_description_fixes
from toolsearch_lab.ui.stepper_demos import rejected_calls, remembering_runs
from toolsearch_lab.ui.strategy_lab import judge_cheapest
from toolsearch_lab.ui.wording_view import glossary_runs, run_with_glossary

SOLUTIONS_ENV = "TOOLSEARCH_LAB_SOLUTIONS"
NOT_ANSWERED = "not answered yet"
NOT_QUITE = "not quite, because"

Judgement = tuple[bool, str]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one self-check: ``status`` is "blank", "wrong" or "right"."""

    exercise: str
    status: str
    message: str

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        colour = {"right": t.GOOD, "wrong": t.BAD}.get(self.status, t.MUTED)
        body = html.escape(self.message).replace("\n", "<br>")
        return t.panel(f'<div style="border-left:4px solid {colour};padding-left:10px">{body}</div>')


@dataclass(frozen=True)
class Exercise:
    """One "Try this": the student's cell (by id), its blank form, a solution and a typical wrong answer."""

    key: str
    notebook: str
    answer_cell: str  # the id of the student's cell in the notebook
    names: tuple[str, ...]  # the variables that cell sets, in the order check() receives them
    hint: str
    solution: str  # code for the student's cell; may use the names check() receives as context
    wrong: str  # a plausible wrong answer: its check must say "not quite"
    why: str  # the reasoning behind the solution, printed by reveal()
    judge: Callable[..., Judgement]


def _blank(value: Any) -> bool:
    return value is ... or value is None


def solutions_enabled() -> bool:
    return os.environ.get(SOLUTIONS_ENV, "").strip().lower() in ("1", "true", "yes")


def check(key: str, *answers: Any, **context: Any) -> Verdict:
    """Judge the student's answers to exercise ``key``; see the module docstring."""
    exercise = _exercise(key)
    if len(answers) != len(exercise.names):
        raise TypeError(
            f"check({key!r}) expects {len(exercise.names)} answer(s) ({', '.join(exercise.names)}), "
            f"got {len(answers)}"
        )
    prefix = ""
    if any(_blank(a) for a in answers):
        if not solutions_enabled():
            return Verdict(
                key, "blank", f"… {NOT_ANSWERED}: set {', '.join(exercise.names)}. Hint: {exercise.hint}"
            )
        namespace = dict(context)
        exec(exercise.solution, namespace)  # the package's own solution text, run on the notebook's objects
        answers = tuple(namespace[name] for name in exercise.names)
        prefix = f"(solution revealed by {SOLUTIONS_ENV}=1)\n{exercise.solution}\n"
    right, because = exercise.judge(*answers, **context)
    if right:
        return Verdict(key, "right", f"{prefix}✓ {because}")
    return Verdict(key, "wrong", f"{prefix}✗ {NOT_QUITE} {because}")


def reveal(notebook: str) -> None:
    """Print the solution of every exercise of ``notebook`` ("04", "4" or "04_the_loop_and_accumulation")."""
    number = notebook.strip()[:2].rstrip("_").zfill(2)
    found = [e for e in EXERCISES.values() if e.notebook.startswith(number)]
    if not found:
        raise ValueError(f"no exercises for notebook {notebook!r}; known: {sorted(EXERCISES)}")
    for exercise in found:
        print(f"# Try this ({exercise.notebook}): paste into the answer cell\n{exercise.solution}")
        print(f"# why: {exercise.why}\n")


def _exercise(key: str) -> Exercise:
    if key not in EXERCISES:
        raise KeyError(f"unknown exercise {key!r}; known: {sorted(EXERCISES)}")
    return EXERCISES[key]


def _off_by(answer: float, actual: float) -> str:
    return f"{abs(answer - actual) / actual:.0%} too {'low' if answer < actual else 'high'}"


# ---- judges: each recomputes the right answer from the objects the notebook built ------------------------
def _judge_01(requests: Any, *, head: Any, **_: Any) -> Judgement:
    if isinstance(requests, bool) or not isinstance(requests, int):
        return False, f"my_requests should be a whole number of model requests, not {requests!r}"
    actual = len(head.all_tools.costs)
    searched = len(head.tool_search.costs)
    steps = len(head.tool_search.run.steps)
    if requests == actual:
        return True, (
            f"the real all-tools run made {actual} requests for {steps} steps (a call per step, then the "
            f"answer); tool search made {searched}, because every search is a model request of its own"
        )
    if requests == searched:
        return False, "that is the tool-search run; an agent that holds every tool never searches"
    if requests <= 1:
        return False, "each tool call is a model request of its own, and the answer needs one more"
    if requests == steps:
        return (
            False,
            "one request per step, yes; then the model needs one more to read the last result and answer",
        )
    return False, f"your figure is {_off_by(requests, actual)}: count a call per step, then the answer"


def error_requests_02(script: list, tools: list) -> tuple[list[int], list[int], list[int]]:
    """(requests whose call got an error result, requests that searched, requests that called a tool) when
    ``script`` runs through Spring's advisor with accumulation off, as in notebook 02."""
    advisor = ToolSearchAdvisor(make_index("lucene"), reference_tool_name_accumulation=False)
    trace = advisor.run(
        ScriptedModel(script), [{"role": "user", "content": "check"}], tools, session_id="02"
    ).trace
    kinds = [(it.number, {c.kind for c in it.tool_calls}) for it in trace.iterations]
    return (
        [n for n, k in kinds if "rejected" in k],
        [n for n, k in kinds if "search" in k],
        [n for n, k in kinds if k - {"search"}],
    )


def _judge_02(turns: Any, *, script: list, tools: list, **_: Any) -> Judgement:
    if isinstance(turns, int) and not isinstance(turns, bool):
        turns = [turns]
    if not isinstance(turns, list | tuple | set) or not all(
        isinstance(n, int) and not isinstance(n, bool) for n in turns
    ):
        return False, f"my_error_requests should be a list of request numbers, e.g. [2, 5], not {turns!r}"
    outside = sorted(n for n in set(turns) if not 1 <= n <= len(script))
    if outside:
        return False, f"the script has {len(script)} turns, numbered 1 to {len(script)}; {outside} is not one"
    errors, searches, calls = error_requests_02(script, tools)
    chosen = sorted(set(turns))
    if chosen == errors:
        return True, (
            f"requests {errors} call a tool that the latest search did not return, so the loop answers them "
            "with an error result; every other call names a tool the latest search exposed"
        )
    if not chosen:
        return (
            False,
            "some calls name a tool that no search has returned yet, or that a later search replaced",
        )
    refused_searches = sorted(set(chosen) & set(searches))
    if refused_searches:
        return False, f"request {refused_searches} is a toolSearchTool call: the meta-tool is always exposed"
    if set(chosen) >= set(calls):
        return False, "not every call fails: a tool that the latest search returned is exposed, and it runs"
    missed = sorted(set(errors) - set(chosen))
    if missed:
        return False, f"request {missed} also calls a tool the latest search did not return"
    return (
        False,
        f"request {sorted(set(chosen) - set(errors))} calls a tool the latest search returned: it runs",
    )


CATALOG_03 = "github-mcp"
MIN_QUERY_WORDS_03 = 3


@lru_cache(maxsize=2)
def _indexes_03(kinds: tuple[str, ...] = ("lucene", "hybrid")) -> dict[str, Any]:
    """Fresh indexes with their defaults over the whole GitHub catalog: the check never depends on what
    the explorer shows (another catalog, another maxResults)."""
    tools = load_catalog(CATALOG_03).tools
    built = {}
    for kind in kinds:
        built[kind] = make_index(kind)
        built[kind].index_tools("check-03", tools)
    return built


def _judge_03(target: Any, query: Any, *, explorer: Any, **_: Any) -> Judgement:
    names = [tool.name for tool in load_catalog(CATALOG_03).tools]
    if not isinstance(target, str) or target.strip() not in names:
        return (
            False,
            f"my_target should be the name of one of the {len(names)} {CATALOG_03} tools, not {target!r}",
        )
    target = target.strip()
    if not isinstance(query, str):
        return False, f"my_query should be text: what the tool does, in your words, not {query!r}"
    if not query.strip():
        return False, "my_query is blank: say in a few words what the tool does"
    words = keyword_tokens(query)
    if len(words) < MIN_QUERY_WORDS_03:
        return False, f"a paraphrase says what the tool does in at least {MIN_QUERY_WORDS_03} words"
    own = {porter_stem(w) for w in keyword_tokens(target)}
    used = sorted({w for w in words if porter_stem(w) in own})
    if used:
        return (
            False,
            f"{', '.join(used)} is a word of the name {target}: describe it without its name's words",
        )
    explorer.catalog_dropdown.value = CATALOG_03
    if explorer.query_box.value == query:
        explorer.search()
    else:
        explorer.query_box.value = query  # the explorer above redraws too
    first = {
        kind: index.search(SearchRequest("check-03", query, 5)).tool_names[:1]
        for kind, index in _indexes_03().items()
    }
    if first["hybrid"] != [target]:
        return False, f"hybrid ranks {(first['hybrid'] or ['nothing'])[0]} first for {query!r}, not {target}"
    if first["lucene"] == [target]:
        return False, f"lucene ranks {target} first too: the query still shares its words; paraphrase more"
    return True, f"{query!r}: hybrid → {target}, lucene → {(first['lucene'] or ['nothing'])[0]}"


REMEMBERED_04 = ("weather", "clothing", "currentTime")  # what the remembering model calls in request 4


def _judge_04(rejected: Any, **_: Any) -> Judgement:
    if isinstance(rejected, str):
        rejected = [rejected]
    if not isinstance(rejected, list | tuple | set) or not all(isinstance(n, str) for n in rejected):
        return False, f"my_rejected should be a list of tool names, not {type(rejected).__name__}"
    unknown = sorted(set(rejected) - set(REMEMBERED_04))
    if unknown:
        return False, f"the model called only {', '.join(REMEMBERED_04)}; {', '.join(unknown)} was not called"
    runs = remembering_runs()
    truth = rejected_calls(runs["accumulation off"])
    latest = sorted(set(REMEMBERED_04) - set(truth))
    if sorted(set(rejected)) == truth:
        return True, (
            f"request 4 exposed only {', '.join(latest)} (the latest search's result): "
            f"{', '.join(truth)} were found by earlier searches and are gone"
        )
    if not rejected:
        return False, "with accumulation off a request exposes only the latest search's results"
    kept = sorted(set(rejected) & set(latest))
    if kept:
        return False, f"{', '.join(kept)} came from the latest search, which stays exposed"
    missed = sorted(set(truth) - set(rejected))
    return False, f"{', '.join(missed)} was also found before the latest search: it is not exposed either"


TASK_05 = "spring-demo-market-day-user"
STEP_05 = 1  # "a customer wants to know if we carry Santal 33": the semantic agent picks a shoe tool
FAMILY_05 = ("spring-demo-user", "spring-demo-market-day-user", "spring-demo-shop-user")
MAX_PHRASE_WORDS_05 = 3
INDEX_05 = "hybrid"
FUNCTION_WORDS_05 = frozenset(
    ("a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "it", "by", "with", "at", "from")
)


def _split_camel(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_", " ", name)


def _entry_words(value: Any, name: str) -> tuple[list[str] | None, str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return None, f"{name} should be a list of words (strings), not {type(value).__name__}"
    found = glossary_words(" ".join(value))
    return (found, "") if found else (None, f"{name} has no words in it")


def _judge_05(phrase: Any, meaning: Any, **_: Any) -> Judgement:
    phrase_words, problem = _entry_words(phrase, "my_words")
    meaning_words, problem_meaning = _entry_words(meaning, "my_meaning")
    if phrase_words is None or meaning_words is None:
        return False, problem or problem_meaning
    step = load_scenario(TASK_05).steps[STEP_05 - 1]
    target = step.expected_tools[0]
    need = glossary_words(step.need)
    if len(phrase_words) > MAX_PHRASE_WORDS_05:
        return False, (
            f"a glossary entry is a word or a short expression (at most {MAX_PHRASE_WORDS_05} words) that "
            "users say in many requests; a longer phrase only fits this one request"
        )
    n = len(phrase_words)
    if not any(need[i : i + n] == phrase_words for i in range(len(need) - n + 1)):
        return False, f"my_words must be words the user wrote in that step: {step.need!r}"
    name_words = {w for w in simulated_words(target, split_camel=True) if len(w) > 2}
    if name_words <= set(simulated_words(" ".join(meaning_words))):
        return False, (
            f"that writes the tool's name ({target}) into the glossary: say what the user's word means, "
            "and let the agent choose the tool"
        )
    task = load_scenario(TASK_05)
    vocabulary = {
        w for tool in task.tools for w in glossary_words(f"{_split_camel(tool.name)} {tool.description}")
    }
    strange = [w for w in meaning_words if w not in vocabulary and fold(w) not in map(fold, vocabulary)]
    if strange:
        return False, (
            f"{', '.join(strange)} {'is' if len(strange) == 1 else 'are'} not among the catalog's words: a "
            "glossary entry says what the user's word means in the words of the tools' names and descriptions"
        )
    if all(w in FUNCTION_WORDS_05 for w in meaning_words):
        return False, "my_meaning has only little words (the, of, by...): say what the user's word means"
    entry = [(phrase_words, meaning_words)]
    glossary = default_glossary().extended(entry)
    after = {TASK_05: run_with_glossary(TASK_05, glossary, INDEX_05)}
    fixed = after[TASK_05].steps[STEP_05 - 1]
    if not fixed.success:
        return False, (
            f"with {' '.join(phrase_words)!r} → {' '.join(meaning_words)!r} the agent still ran "
            f"{fixed.called or 'nothing'} for that step, not {target}"
        )
    # Only an entry that fixes the step is run on the whole family, against the shipped glossary.
    after |= {n: run_with_glossary(n, glossary, INDEX_05) for n in FAMILY_05 if n != TASK_05}
    before = {n: glossary_runs(n, [], index=INDEX_05)["shipped glossary"] for n in FAMILY_05}
    for name in FAMILY_05:
        for number, (old, new) in enumerate(zip(before[name].steps, after[name].steps, strict=True), start=1):
            if old.success and not new.success:
                return (
                    False,
                    f"your entry breaks step {number} of {name} ({new.need!r}): it now runs {new.called}",
                )
    gained = sum(r.grade.steps_succeeded for r in after.values()) - sum(
        r.grade.steps_succeeded for r in before.values()
    )
    return True, (
        f"{' '.join(phrase_words)!r} → {' '.join(meaning_words)!r}: step {STEP_05} now runs {target}, and "
        f"no step of the {len(FAMILY_05)} shop tasks in users' words got worse ({gained:+d} steps in all)"
    )


REQUESTS_06 = ("A", "B", "A", "C", "B", "A")  # the sessions of six requests, in order, all with one catalog
LRU_MAX_06 = 2


def index_builds_06() -> tuple[int, list[str]]:
    """How often the advisor (LruEviction(2)) indexed a catalog over :data:`REQUESTS_06`, and its events."""
    tools = load_scenario("spring-demo").tools
    advisor = ToolSearchAdvisor(make_index("regex"), eviction=LruEviction(max_sessions=LRU_MAX_06))
    events = [e for session in REQUESTS_06 for e in advisor.initialize_session(session, tools)]
    builds = sum(e.kind == "indexed" for e in events)
    return builds, [f"{e.kind} {e.session_id}" for e in events]


def _judge_06(builds: Any, **_: Any) -> Judgement:
    if isinstance(builds, bool) or not isinstance(builds, int):
        return False, f"my_index_builds should be a whole number, not {builds!r}"
    actual, events = index_builds_06()
    sessions = len(set(REQUESTS_06))
    if builds == actual:
        return True, f"{actual} builds for {len(REQUESTS_06)} requests: " + "; ".join(events)
    if builds == sessions:
        return False, (
            f"that is one build per session; LruEviction({LRU_MAX_06}) holds only {LRU_MAX_06} indexes, "
            f"so a {LRU_MAX_06 + 1}rd session evicts the least recently used one"
        )
    if builds == len(REQUESTS_06):
        return False, "that is a build on every request (AlwaysEvict); LRU keeps a session used recently"
    if builds < sessions:
        return False, f"each of the {sessions} sessions is indexed at least once, on its first request"
    return False, "walk the requests and keep the LRU list: most recent last, at most two entries"


def _fraction_problem(name: str, value: Any) -> str | None:
    """Why ``value`` is not a share between 0 and 1 (None when it is one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{name} should be a number between 0 and 1, not {value!r}"
    if 1 < value <= 100:
        return f"{name} is a share between 0 and 1 (e.g. 0.5), not a percentage"
    if not 0 <= value <= 1:
        return f"{name} is a share between 0 and 1, not {value}"
    return None


def _judge_07(recall: Any, rr: Any, *, task_ranking: Any, **_: Any) -> Judgement:
    for name, value in (("my_recall_at_5", recall), ("my_rr", rr)):
        problem = _fraction_problem(name, value)
        if problem:
            return False, problem
    ranked, needed, k = task_ranking.ranked, task_ranking.relevant, 5
    want_recall, want_rr = recall_at_k(ranked, needed, k), reciprocal_rank(ranked, needed)
    ranks = [r for r in task_ranking.ranks.values() if r is not None]
    in_top = sum(1 for r in ranks if r <= k)

    def near(a: float, b: float) -> bool:
        return abs(a - b) <= 0.01

    if near(recall, want_recall) and near(rr, want_rr):
        first = f"1/{min(ranks)}" if ranks else "0 (none returned)"
        return True, (
            f"recall@{k} = {in_top} of {len(needed)} needed tools in the top {k} = {want_recall:.2f}; "
            f"reciprocal rank = {first} = {want_rr:.2f}: only the best-ranked needed tool counts"
        )
    if near(recall, want_rr) and near(rr, want_recall) and not near(want_recall, want_rr):
        return False, "the two answers are swapped: recall@5 first, then the reciprocal rank"
    if not near(recall, want_recall):
        if recall in (0, 1):
            share = "none" if recall == 0 else "all"
            return False, f"{recall} would mean {share} of the needed tools rank in the top {k}: count the ✓"
        if near(recall, in_top / k):
            return False, f"recall divides by the number of tools the task needs ({len(needed)}), not by k"
        if near(recall, recall_at_k(ranked, needed, len(ranked))):
            return False, f"that counts every rank shown; recall@{k} counts only ranks 1-{k}"
        return False, f"count the needed tools ranked 1-{k} and divide by the {len(needed)} the task needs"
    listed_first = next((r for r in task_ranking.ranks.values() if r is not None), None)
    if listed_first is not None and listed_first != min(ranks) and near(rr, 1 / listed_first):
        return False, (
            "that is the rank of the first tool in the task's list; the reciprocal rank uses the needed tool "
            "the index ranked highest (the first ✓ from the top)"
        )
    if rr in (0, 1):
        return False, "the reciprocal rank is 1 only when a needed tool is #1 and 0 when none is returned"
    return False, "the reciprocal rank is 1 / (rank of the first needed tool in the ranking)"


LARGEST_08 = 1000  # the check must run among look-alikes: a query that wins among ten tools proves nothing


def _judge_08(query: Any, *, catalogs: dict, sizes: list, **_: Any) -> Judgement:
    target = "currentTime"
    if not isinstance(query, str):
        return False, f"my_query should be a string of words, not {query!r}"
    if not query.strip():
        return False, "my_query is blank: type the words a user would search with"
    size = max(sizes)
    if size < LARGEST_08:
        return False, f"the largest catalog has {size:,} tools: keep SIZES up to 10,000 (look-alikes)"
    if re.search(rf"(?<![a-z]){target.lower()}(?![a-z])", query.lower()):
        return False, f"the query uses the tool's own name ({target}): a user does not know it"
    said, name_words = _stems(query), _stems(target)
    if not said:
        return False, f"{query!r} has no words a search can match: say what the user wants"
    if said <= name_words:
        return False, "those are only the tool's name words: the generic query the table shows slipping"
    description = next(tool.description for tool in catalogs[size] if tool.name == target)
    if len(said & _stems(description)) >= 0.8 * len(_stems(description)):
        return False, "that pastes the description: pick a few of its words that few other tools use"
    lucene = make_index("lucene")
    lucene.index_tools("check", catalogs[size])
    found = lucene.search(SearchRequest("check", query, 10)).tool_names
    if found[:1] == [target]:
        return True, f"{query!r} ranks {target} first among {size:,} tools"
    rank = f"#{found.index(target) + 1}" if target in found else "not in the top 10"
    first = found[0] if found else "nothing"
    return False, f"at {size:,} tools lucene ranks {first} first for {query!r}; {target} is {rank}"


def _judge_09(saving: Any, *, offline: Any, **_: Any) -> Judgement:
    totals = offline.trace.tokens_total()
    expected = round(100 * (1 - totals["prompt_tool_search"] / totals["prompt_baseline"]))
    if isinstance(saving, bool) or not isinstance(saving, int | float):
        return False, f"my_saving_pct should be a number, not {saving!r}"
    if abs(saving - expected) <= 1:
        return True, f"offline, tool search saved {expected}% of prompt tokens"
    if abs(saving - (100 - expected)) <= 1:
        return False, "that is the share tool search still sent; the saving is the rest"
    if 0 < saving < 1:
        return False, "give a percentage (e.g. 40), not a fraction"
    if saving in (0, 100):
        sent = "as much as sending every tool" if saving == 0 else "nothing at all"
        return False, f"{saving:g}% would mean tool search sent {sent}: read the two prompt totals"
    return False, "compare prompt_tool_search with prompt_baseline in offline.trace.tokens_total()"


MIN_DESCRIPTION_WORDS_10 = 4
MIN_QUERY_WORDS_10 = 3
DISTRACTORS_10 = "livemcpbench"  # a catalog of hundreds of unrelated tools: a lucky query in 7 tools fails
TOP_K_10 = 3


def _stems(text: str) -> set[str]:
    """Content-word stems: what "uses the same words" means for these checks (plurals and -ing folded)."""
    return {porter_stem(w) for w in keyword_tokens(text, ENGLISH_STOP_WORDS) if len(w) > 1}


def _judge_10(new_tool: Any, query: Any, *, my_tools: list, **_: Any) -> Judgement:
    if not isinstance(new_tool, dict) or not {"name", "description"} <= set(new_tool):
        return False, 'my_new_tool should be a dict with "name" and "description"'
    name, description = new_tool["name"], new_tool["description"]
    if not isinstance(name, str) or not name.strip():
        return False, "my_new_tool needs a name (a string such as change_delivery_address)"
    existing = {spec["function"]["name"] for spec in my_tools}
    if name in existing:
        return False, f"{name!r} is already in my_tools: add a seventh tool of your own"
    if not isinstance(description, str) or len(description.split()) < MIN_DESCRIPTION_WORDS_10:
        return False, (
            f"the description {description!r} is too short to be found: write at least "
            f"{MIN_DESCRIPTION_WORDS_10} words saying what the tool does and to what"
        )
    if not _stems(description):
        return False, f"the description {description!r} says nothing a search could match: name the task"
    copied = [
        s["function"]["name"] for s in my_tools if _stems(s["function"]["description"]) == _stems(description)
    ]
    if copied:
        return False, f"that is {copied[0]}'s description: describe what your new tool does"
    if not isinstance(query, str) or not query.strip():
        return False, "my_tool_query should be a request in words, as a customer would type it"
    shared = sorted(_stems(query) & _stems(name))
    if shared:
        return False, (
            f"the query uses the words of the tool's name ({', '.join(shared)}): a customer does not know "
            "your tool names, so say what they want in other words"
        )
    if len(query.split()) < MIN_QUERY_WORDS_10:
        return False, (
            f"my_tool_query {query!r} is too vague: ask in at least {MIN_QUERY_WORDS_10} words, as a "
            "customer would"
        )
    said = _stems(query)
    if said and len(said & _stems(description)) >= 0.8 * len(said):
        return False, "the query repeats the description's words: write it the way a customer would ask"
    spec = {"name": name, "description": description}
    spec["parameters"] = new_tool.get("parameters", {"type": "object", "properties": {}})
    try:
        tools = ToolCatalog.from_json([*my_tools, {"type": "function", "function": spec}]).tools
    except ValueError as exc:  # the catalog's own validation: a name with spaces, a malformed schema, ...
        return False, f"my_new_tool is not a valid tool definition: {exc}"
    vector = make_index("vector")
    vector.index_tools("check", tools)
    first = vector.search(SearchRequest("check", query, 3)).tool_names[:1]
    if first != [name]:
        return False, f"the vector index ranked {first or 'nothing'} first for {query!r}, not {name}"
    # A query that only wins among a handful of tools: add hundreds of unrelated ones and search again.
    crowd = [*tools, *load_dataset(DISTRACTORS_10).tools]
    vector.index_tools("crowd", crowd)
    found = vector.search(SearchRequest("crowd", query, TOP_K_10)).tool_names
    if name not in found:
        return False, (
            f"{name} is first among your {len(tools)} tools, but with {len(crowd) - len(tools)} "
            f"{DISTRACTORS_10} tools added it drops out of the top {TOP_K_10} "
            f"({', '.join(found) or 'nothing'}): the query and the description do not say the same thing "
            "clearly enough"
        )
    return True, (
        f"{query!r} → {name}: first among your {len(tools)} tools, and #{found.index(name) + 1} with "
        f"{len(crowd) - len(tools)} {DISTRACTORS_10} tools added (vector index)"
    )


NEW_TOOL_10 = (
    'my_new_tool = {"name": "change_delivery_address",\n'
    '               "description": "Change the delivery address of an order that has not shipped yet."}\n'
)

EXERCISES: dict[str, Exercise] = {
    e.key: e
    for e in (
        Exercise(
            "01",
            "01_why_tool_search",
            "c11",
            ("my_requests",),
            "the agent calls one tool per step, and each call is a model request; what comes after the last "
            "tool result?",
            "my_requests = len(run.steps) + 1  # one tool call per step, then the answer",
            "my_requests = len(run.trace.iterations)",
            "an agent that holds every tool never searches: it makes one request per step plus one to "
            "answer, so fewer requests than a tool-search run, which spends requests on searching.",
            _judge_01,
        ),
        Exercise(
            "02",
            "02_build_it_yourself",
            "c07",
            ("my_error_requests",),
            "walk the script: after each search only the tools it returned are exposed; a call to any other "
            "tool gets an error result.",
            "my_error_requests = [1, 6]  # weather before any search; currentTime after the weather search",
            "my_error_requests = [1]",
            "the loop exposes only what the latest search returned (accumulation off): request 1 calls "
            "weather before any search, request 6 calls currentTime after the weather search replaced it.",
            _judge_02,
        ),
        Exercise(
            "03",
            "03_three_indexes",
            "c15",
            ("my_target", "my_query"),
            "pick a GitHub tool (e.g. list_tags) and describe what it does in three or more words, none of "
            "them a word of its name.",
            'my_target = "get_commit"\nmy_query = "show what changed in one revision"',
            'my_target = "create_pull_request"\nmy_query = "open a new pull request"',
            "none of the query's words is in get_commit's name, so BM25 matches other tools' descriptions; "
            "the embedding in the hybrid index matches the meaning.",
            _judge_03,
        ),
        Exercise(
            "04",
            "04_the_loop_and_accumulation",
            "c09",
            ("my_rejected",),
            "with accumulation off a request exposes toolSearchTool and the latest search's results only.",
            'my_rejected = ["weather", "clothing"]',
            'my_rejected = ["weather"]',
            "the third search (current time) returned only currentTime; with accumulation off, request 4 "
            "exposes just that, so the tools of the first two searches are refused.",
            _judge_04,
        ),
        Exercise(
            "05",
            "05_words_agents_and_misses",
            "gl-answer",
            ("my_words", "my_meaning"),
            "which word of the request does the agent misread? Map it to the catalog's words for what the "
            "customer wants (looking a product up by its name), without writing the tool's name.",
            'my_words = ["carry"]\nmy_meaning = ["get", "by", "name"]',
            'my_words = ["customer"]\nmy_meaning = ["get"]',
            'in a shop, "do we carry X" asks whether X is on the list: look it up by name. The agent\'s '
            "embedding does not know that sense of carry; the glossary tells it, in every request saying it.",
            _judge_05,
        ),
        Exercise(
            "06",
            "06_fingerprint_and_eviction",
            "c09",
            ("my_index_builds",),
            "keep the LRU list as you go: a request to a session not in it indexes, and a third session "
            "pushes out the least recently used one.",
            "my_index_builds = 5",
            "my_index_builds = 3",
            "A, B: built; A: reused; C evicts B, built; B evicts A, built; A evicts C, built. Five builds, "
            "one reuse: LRU(2) is too small for three sessions taking turns.",
            _judge_06,
        ),
        Exercise(
            "07",
            "07_measuring_retrieval",
            "c09",
            ("my_recall_at_5", "my_rr"),
            "recall@5 = needed tools in ranks 1-5 / tools the task needs; the reciprocal rank is "
            "1 / the rank of the highest ✓.",
            "ranks = [r for r in task_ranking.ranks.values() if r is not None]  # each needed tool's rank\n"
            "my_recall_at_5 = sum(1 for r in ranks if r <= 5) / len(task_ranking.relevant)\n"
            "my_rr = 1 / min(ranks)",
            "my_recall_at_5 = 2 / 10  # two needed tools among ten results\nmy_rr = 1 / 4",
            "recall asks how many of the needed tools the model would see; the reciprocal rank only looks at "
            "how far down the first useful tool is.",
            _judge_07,
        ),
        Exercise(
            "08",
            "08_scaling",
            "c10",
            ("my_query",),
            "use words from currentTime's description that few other tools use.",
            'my_query = "current date and time for a location"',
            'my_query = "what time is it"',
            "'date' and 'location' together are rarer than 'current time', so BM25 keeps currentTime first.",
            _judge_08,
        ),
        Exercise(
            "09",
            "09_real_models",
            "c09",
            ("my_saving_pct",),
            "offline.trace.tokens_total() has prompt_tool_search and prompt_baseline.",
            "totals = offline.trace.tokens_total()\n"
            'my_saving_pct = 100 * (1 - totals["prompt_tool_search"] / totals["prompt_baseline"])',
            "totals = offline.trace.tokens_total()\n"
            'my_saving_pct = 100 * totals["prompt_tool_search"] / totals["prompt_baseline"]',
            "the saving is one minus the ratio of what tool search sent to what sending every tool sends.",
            _judge_09,
        ),
        Exercise(
            "10",
            "10_bring_your_own_tools",
            "c11",
            ("my_new_tool", "my_tool_query"),
            'my_new_tool = {"name": ..., "description": ...}: say plainly what it does; ask for it as a '
            "customer would, in words that are not in the tool's name.",
            NEW_TOOL_10 + 'my_tool_query = "I moved house; can my order still be sent to my new home?"',
            NEW_TOOL_10 + 'my_tool_query = "give me my money back"',
            "a description that names the task in plain words gives the embedding something to match, and "
            "a query in a customer's words (none of the name's) still finds it among hundreds of tools.",
            _judge_10,
        ),
        Exercise(
            "11",
            "11_choosing_a_strategy",
            "c11",
            ("my_cheapest",),
            "the cost column prices cached tokens at the cache-read rate; a run that fails does not count.",
            'my_cheapest = min((r for r in rows if r["success"]), key=lambda r: r["cost_usd"])["strategy"]',
            'my_cheapest = "all-tools"',
            "caching makes a repeated prefix cheaper, not free: all tools still pays for every definition in "
            "every request, while the search strategies send a few, and only a run that completes the task "
            "counts.",
            judge_cheapest,
        ),
        Exercise(
            "10-doctor",
            "10_bring_your_own_tools",
            "doc-answer",
            ("my_fixes",),
            "the first description findings in the table name the two tools; say what each does, to what, "
            "and what it returns, in the words a user would search with.",
            "my_fixes = {\n"
            '    "refund_order": "Refund a customer\'s paid order and email them the receipt.",\n'
            '    "get_ticket": "Open a support ticket by its number: status, messages and assignee.",\n'
            "}",
            'my_fixes = {"refund_order": "Refund an order."}',
            "a blank or generic description gives neither BM25 nor the embedding any words to match; one "
            "sentence in a user's words lets the tool's own queries find it.",
            judge_description_fixes,
        ),
    )
}
