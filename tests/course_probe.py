"""What tests/test_notebooks.py runs inside a lesson's own kernel, after the lesson ran with its solution:
every exercise's self-check fed answers that did no work, the held-out bank of tests/course_bank.py, and then
second guesses read off each rejection; it also records what in a rejection a learner could bisect on
(:func:`figures`, :func:`moving_numbers`).

A second guess is what a student types after reading "not quite, because …": a name, a number or a quoted
text that the message mentions, put in place of the answer (for a list: added to it, taken out of it, or on
its own). None may pass: a rejection explains why, it never names the answer. The probe also records, for
each rejection, the parts of the solution the message names that the student did not give ("leaks").

Imported by the kernel (the test puts this folder on ``sys.path``), so it uses nothing but the standard
library and the names the notebook defined.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Answers that did no work: blanks, filler, trivial numbers, wrong types. The solution's own strings (a
# target tool's name typed as the query), in other spellings and word by word, are added per exercise.
FILLER = ["", "   ", "\t\n", "tool", "search", "x", "the", "anything", "find a tool", "?", "asdf qwer zxcv"]
TRIVIAL = [0, 1, -1, 0.0, 100, 10**9, True, False, [], {}]
IDENTIFIER = re.compile(r"(?<![\w-])[A-Za-z_][\w-]*\w(?![\w-])")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
QUOTED = re.compile(r"'([^']{2,200})'|\"([^\"]{2,200})\"")


def words(text: str) -> list[str]:
    return [w for w in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", text) if w]


def spelled_alike(a: Any, b: Any) -> bool:
    """The same answer in another spelling: another case or separator, or one word for a one-word list."""
    if isinstance(a, str) and isinstance(b, list) and len(b) == 1:
        b = b[0]
    return isinstance(a, str) and isinstance(b, str) and words(a.lower()) == words(b.lower())


def same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def cheap_values(solution: Any) -> list[Any]:
    """The generic bank for one answer variable whose solution is ``solution``."""
    bank: list[Any] = list(FILLER)
    if isinstance(solution, str):
        bank += [solution.upper(), solution.replace("_", " "), " ".join(words(solution)), *words(solution)]
    if isinstance(solution, list):
        bank += [s for s in solution if isinstance(s, str)] + [solution[:1]]
    return bank + TRIVIAL


def atoms(solution: Any) -> list[str]:
    """The parts of a solution a message could name: a one-word string, the one-word strings of a list."""
    items = solution if isinstance(solution, list) else [solution]
    return [s for s in items if isinstance(s, str) and s.strip() and not re.search(r"\s", s.strip())]


def without_echo(given: Any, message: str) -> str:
    """``message`` without the student's own answer quoted back in it (that names nothing new)."""
    items = given if isinstance(given, list | tuple | set) else [given]
    for text in sorted(
        {str(given), repr(given), *map(str, items), *map(repr, items)} - {""}, key=len, reverse=True
    ):
        message = message.replace(text, " ")
    return message


def leaks(values: dict[str, Any], solution: dict[str, Any], message: str) -> list[str]:
    """Parts of the solution that ``message`` names although the student's answer does not contain them."""
    found = []
    for name, right in solution.items():
        given = values.get(name)
        given_items = given if isinstance(given, list | tuple | set) else [given]
        echoed = without_echo(given, message)
        for atom in atoms(right):
            if any(isinstance(g, str) and g == atom for g in given_items):
                continue
            if re.search(rf"(?<![\w-]){re.escape(atom)}(?![\w-])", echoed):
                found.append(f"{name}: {atom}")
    return found


# What a rejection may not say, since a learner could home in on the answer with it: a share or percentage,
# a direction to move the answer in, a rank, or a count of how far off ("9 of your 10 pins", "2 other
# runs"). Where to look ("request 3", "step(s) [2]") and how many items the learner's own answer holds ("…
# (26 in all)") are not such figures: they name a place or quote the answer, not a distance.
FIGURES = re.compile(
    r"\d\s*%|\bper ?cent\b|\d\s*points?\b"
    r"|\btoo (?:high|low|large|small|big|many|few)\b"
    r"|\b(?:raise|lower|increase|decrease|reduce) (?:it|your|the (?:threshold|number|answer))\b"
    r"|\b(?:higher|lower|larger|smaller|bigger) (?:threshold|number|value|one)\b"
    r"|\b(?:above|below) the (?:answer|solution)\b|\bcloser\b|\b(?:is|at|ranks?|ranked) #\d"
    r"|\b\d+ (?:of (?:your|the|its|them)|others? (?:runs?|pins?|answers?|strateg\w*)|more|fewer|less)\b",
    re.IGNORECASE,
)
WHERE = re.compile(r"\b(?:requests?|steps?(?:\(s\))?) \[?\d[\d, ]*\]?|\(\d+ in all\)")
ANY_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")


def figures(message: str) -> list[str]:
    """The parts of a rejection a learner could bisect on (:data:`FIGURES`)."""
    return [m.group(0) for m in FIGURES.finditer(message)]


def moving_numbers(rejections: list[tuple[Any, str]]) -> list[str]:
    """Rejections, (answer given, message), whose numbers move with the answer: the same sentence with other
    numbers for another answer, once the answer quoted back and the places pointed at are left out. A number
    that moves with the answer is derived from it, and a learner can home in on the answer with it."""
    seen: dict[str, set[tuple[str, ...]]] = {}
    for given, message in rejections:
        text = WHERE.sub("<where>", _unquoted(given, message))
        seen.setdefault(ANY_NUMBER.sub("<n>", text), set()).add(tuple(ANY_NUMBER.findall(text)))
    return [sentence for sentence, numbers in seen.items() if len(numbers) > 1]


def _unquoted(given: Any, message: str) -> str:
    """``message`` without the answer quoted back as whole words ("not 0.5", "'list_tags'")."""
    items = given if isinstance(given, list | tuple | set) else [given]
    texts = {str(given), repr(given), *map(str, items), *map(repr, items)} - {""}
    for text in sorted(texts, key=len, reverse=True):
        message = re.sub(rf"(?<![\w.]){re.escape(text)}(?![\w])", " ", message)
    return message


def guesses(given: Any, solution: Any, message: str) -> list[Any]:
    """Answers for one variable that a student could read off ``message``, typed like ``solution``."""
    if callable(solution) or isinstance(solution, dict):
        return []
    message = without_echo(given, message)
    quoted = [a or b for a, b in QUOTED.findall(message)]
    if isinstance(solution, bool):
        return []
    if isinstance(solution, int):
        return [int(n) for n in NUMBER.findall(message) if "." not in n]
    if isinstance(solution, float):
        return [float(n) for n in NUMBER.findall(message)]
    if isinstance(solution, str):
        one_word = not re.search(r"\s", solution.strip())
        return quoted + (IDENTIFIER.findall(message) if one_word else [])
    if isinstance(solution, list):
        names = list(dict.fromkeys(IDENTIFIER.findall(message)))
        base = list(given) if isinstance(given, list | tuple | set) else []
        out: list[Any] = []
        for name in names:
            out += [[name], sorted({*base, name}), [b for b in base if b != name]]
        mentioned = [n for n in names if n in atoms(solution) or n in base]
        if mentioned:
            out += [sorted(set(mentioned)), sorted({*base, *mentioned})]
        return out
    return []


def probe(
    key: str,
    names: list[str],
    solution_code: str,
    check_call: str,
    held_out: list[str],
    ns: dict[str, Any],
    second_guesses: bool = True,
) -> str:
    """Run the whole bank through ``check_call`` (the notebook's own self-check line) in ``ns``, the
    kernel's globals; returns JSON: the solution's values and one record per judged answer."""
    exec(solution_code, ns)
    solution = {n: ns[n] for n in names}
    records: list[dict[str, Any]] = []
    wrong: list[tuple[str, dict[str, Any], str]] = []
    judged: set[str] = set()
    rejections: list[tuple[Any, str]] = []

    def judge(label: str, kind: str, values: dict[str, Any]) -> None:
        if all(same(values[n], solution[n]) or spelled_alike(values[n], solution[n]) for n in names):
            return  # the solution itself, spelled another way
        seen = repr(sorted((n, repr(v)) for n, v in values.items()))
        if seen in judged:
            return
        judged.add(seen)
        ns.update(values)
        try:
            verdict = eval(check_call, ns)
            status, message = verdict.status, verdict.message
        except Exception as exc:  # noqa: BLE001 - reported by the test
            status, message = "error", f"{type(exc).__name__}: {exc}"
        record = {"label": label, "kind": kind, "status": status, "message": message}
        if status == "wrong":
            record["leaks"] = leaks(values, solution, message)
            record["figures"] = figures(message)
            rejections.append((tuple(values.values()), message))
            if kind != "second guess":
                wrong.append((label, values, message))
        records.append(record)

    for name in names:
        for value in cheap_values(solution[name]):
            judge(f"{name} = {value!r}", "cheap", {**solution, name: value})
    for code in held_out:
        ns.update(solution)
        exec(code, ns)
        judge(code, "held out", {n: ns[n] for n in names})
    for label, values, message in list(wrong) if second_guesses else []:
        for name in names:
            for guess in guesses(values[name], solution[name], message):
                judge(
                    f"after {label!r} said {message!r}: {name} = {guess!r}",
                    "second guess",
                    {**values, name: guess},
                )
    ns.update(solution)
    shown = {n: (repr(v) if callable(v) else v) for n, v in solution.items()}
    moving = moving_numbers(rejections)
    return json.dumps({"key": key, "solution": shown, "records": records, "moving": moving}, default=repr)
