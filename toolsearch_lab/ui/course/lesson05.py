"""Notebook 05 (words, agents and misses): one glossary entry that fixes a step and breaks none."""

from __future__ import annotations

import functools
import re
from typing import Any

from toolsearch_lab.eval.scenarios import load_scenario
from toolsearch_lab.models.fit import fold, words as simulated_words
from toolsearch_lab.models.glossary import default_glossary, glossary_words
from toolsearch_lab.ui.course.base import Exercise, Judgement
from toolsearch_lab.ui.wording_view import run_with_glossary

TASK = "spring-demo-market-day-user"
STEP = 1  # "a customer wants to know if we carry Santal 33": the semantic agent picks a shoe tool
FAMILY = ("spring-demo-user", "spring-demo-market-day-user", "spring-demo-shop-user")
MAX_PHRASE_WORDS = 3
INDEX = "hybrid"
FUNCTION_WORDS = frozenset(
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


@functools.lru_cache(maxsize=8)
def _shipped_run(name: str) -> Any:
    # Runs are deterministic; every entry a learner tries is compared with the same shipped-glossary run.
    return run_with_glossary(name, default_glossary(), INDEX)


def judge(phrase: Any, meaning: Any, **_: Any) -> Judgement:
    phrase_words, problem = _entry_words(phrase, "my_words")
    meaning_words, problem_meaning = _entry_words(meaning, "my_meaning")
    if phrase_words is None or meaning_words is None:
        return False, problem or problem_meaning
    step = load_scenario(TASK).steps[STEP - 1]
    target = step.expected_tools[0]
    need = glossary_words(step.need)
    if len(phrase_words) > MAX_PHRASE_WORDS:
        return False, (
            f"a glossary entry is a word or a short expression (at most {MAX_PHRASE_WORDS} words) that "
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
    task = load_scenario(TASK)
    vocabulary = {
        w for tool in task.tools for w in glossary_words(f"{_split_camel(tool.name)} {tool.description}")
    }
    strange = [w for w in meaning_words if w not in vocabulary and fold(w) not in map(fold, vocabulary)]
    if strange:
        return False, (
            f"{', '.join(strange)} {'is' if len(strange) == 1 else 'are'} not among the catalog's words: a "
            "glossary entry says what the user's word means in the words of the tools' names and descriptions"
        )
    if all(w in FUNCTION_WORDS for w in meaning_words):
        return False, "my_meaning has only little words (the, of, by...): say what the user's word means"
    if len(set(meaning_words)) < len(meaning_words):
        return False, "my_meaning repeats a word: the agent reads each word once, so say each once"
    # The verbs the catalog uses: the first word of each tool's name and of its description.
    actions = {glossary_words(_split_camel(t.name))[0] for t in task.tools} | {
        glossary_words(t.description)[0] for t in task.tools if glossary_words(t.description)
    }
    objects = set(glossary_words(_split_camel(target))) - actions - FUNCTION_WORDS - {"name", "id"}
    told = sorted(set(meaning_words) & objects)
    if told:
        return False, (
            f"{', '.join(told)} names what the tool handles, which the request never says: the entry would "
            "pick the tool for the agent. Say what the user's word means: what they want done"
        )
    if not set(meaning_words) & actions:
        return False, (
            "my_meaning says what the request is about, not what the user wants done: use an action in the "
            "catalog's words (the verbs the tools' names start with)"
        )
    entry = [(phrase_words, meaning_words)]
    glossary = default_glossary().extended(entry)
    after = {TASK: run_with_glossary(TASK, glossary, INDEX)}
    fixed = after[TASK].steps[STEP - 1]
    if not fixed.success:
        return False, (
            f"with {' '.join(phrase_words)!r} → {' '.join(meaning_words)!r} the agent still ran "
            f"{fixed.called or 'nothing'} for that step, not {target}"
        )
    # Only an entry that fixes the step is run on the whole family, against the shipped glossary.
    after |= {n: run_with_glossary(n, glossary, INDEX) for n in FAMILY if n != TASK}
    before = {n: _shipped_run(n) for n in FAMILY}
    for name in FAMILY:
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
        f"{' '.join(phrase_words)!r} → {' '.join(meaning_words)!r}: step {STEP} now runs {target}, and "
        f"no step of the {len(FAMILY)} shop tasks in users' words got worse ({gained:+d} steps in all)"
    )


def solution() -> tuple[list[str], list[str]]:
    my_words = ["carry"]
    my_meaning = ["get", "by", "name"]
    return my_words, my_meaning


EXERCISES = (
    Exercise(
        key="05",
        notebook="05_words_agents_and_misses",
        answer_cell="gl-answer",
        hint="which word of the request does the agent misread? Map it to the catalog's words for what the "
        "customer wants (looking a product up by its name), without writing the tool's name.",
        solve=solution,
        wrong='my_words = ["customer"]\nmy_meaning = ["get"]',
        why='in a shop, "do we carry X" asks whether X is on the list: look it up by name. The agent\'s '
        "embedding does not know that sense of carry; the glossary tells it, in every request saying it.",
        judge=judge,
    ),
)
