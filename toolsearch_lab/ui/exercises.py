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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolsearch_lab.catalog.container import ToolCatalog
from toolsearch_lab.eval.eviction_simulation import simulate
from toolsearch_lab.eval.scenarios import run_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.ui import theme as t
from toolsearch_lab.ui.doctor import judge_description_fixes
from toolsearch_lab.ui.strategy_lab import judge_cheapest

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
    """Print the solution of every exercise of ``notebook`` ("03", "3" or "04_the_loop_and_accumulation.ipynb")."""
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
def _judge_01(prediction: Any, *, run: Any, with_all: Any, **_: Any) -> Judgement:
    actual = sum(it.tokens.baseline.tools for it in run.trace.iterations)
    calls = len(run.trace.iterations)
    if not isinstance(prediction, int | float):
        return False, f"my_prediction should be a number of tokens, not {type(prediction).__name__}"
    if abs(prediction - actual) <= 0.02 * actual:
        return True, f"the trace agrees: {actual:,} tokens of tool definitions over {calls} calls"
    if abs(prediction - with_all.tools) <= 0.02 * with_all.tools:
        return False, f"that is one request's tool list; the loop made {calls} model calls"
    return False, f"your figure is {_off_by(prediction, actual)}: every call carries the whole tool list"


def _judge_02(target: Any, query: Any, *, explorer: Any, **_: Any) -> Judgement:
    if explorer.query_box.value == str(query):
        explorer.search()
    else:
        explorer.query_box.value = str(query)  # the explorer above redraws too
    first = {kind: [name for name, _ in hits[:1]] for kind, hits in explorer.results.items()}
    if [target] != first.get("hybrid"):
        return False, f"hybrid ranked {first.get('hybrid')} first for {query!r}, not {target!r}"
    if first.get("lucene") == [target]:
        return False, f"lucene ranks {target!r} first too: the query shares its words; paraphrase more"
    return True, f"{query!r}: hybrid → {target}, lucene → {(first.get('lucene') or ['nothing'])[0]}"


def _judge_03(prediction: Any, **_: Any) -> Judgement:
    last = run_scenario("github", index="lucene", accumulation=False).trace.iterations[-1]
    exposed = len(last.exposed_tools)
    if prediction == exposed:
        return True, f"the last request exposed {exposed} tools: {last.exposed_tools}"
    if prediction == exposed - 1:
        return False, "toolSearchTool is exposed in every request, on top of the search results"
    if isinstance(prediction, int) and prediction > exposed:
        return False, "with accumulation off only the latest search's results stay exposed"
    return False, "count the tools one search returns (maxResults), plus the meta-tool itself"


WORKLOAD_04: dict[str, Any] = {
    "sessions": 6,
    "requests": 80,
    "rate": 1.0,
    "catalog_change": 0.05,
    "lru_max": 3,
    "ttl": 4.0,
}


def _judge_04(choice: Any, **_: Any) -> Judgement:
    if choice not in ("LRU", "TTL"):
        return False, f'my_choice must be "LRU" or "TTL", not {choice!r}'
    runs = {s: simulate(strategy=s, seed=0, **WORKLOAD_04) for s in ("LRU", "TTL")}
    reuse = {s: r.reuse_rate() for s, r in runs.items()}
    best = max(reuse, key=lambda s: reuse[s])
    rates = ", ".join(f"{s} reuses {r:.0%}" for s, r in reuse.items())
    peak = ", ".join(f"{s} {r.counts()['peak_resident']}" for s, r in runs.items())
    if choice == best:
        return True, f"{rates}. The price: peak indexes held in memory {peak}"
    return False, f"{rates}: with 6 sessions, LRU(3) keeps evicting sessions that come back"


def _judge_05(family: Any, *, results: dict, dataset: str, kinds: tuple, **_: Any) -> Judgement:
    if family not in ("keyword", "embedding"):
        return False, f'my_family must be "keyword" or "embedding", not {family!r}'
    ndcg = {kind: results[dataset, kind].metrics["ndcg@10"] for kind in kinds}
    winner = max(ndcg, key=lambda k: ndcg[k])
    truth = "embedding" if winner in ("vector", "hybrid") else "keyword"
    table = ", ".join(f"{k} {v:.3f}" for k, v in ndcg.items())
    if family == truth:
        return True, f"best nDCG@10 on {dataset}: {winner} ({table})"
    return False, f"nDCG@10 on {dataset} is {table}"


def _judge_06(query: Any, *, catalogs: dict, sizes: list, **_: Any) -> Judgement:
    if not isinstance(query, str) or not query.strip():
        return False, "my_query should be a non-empty string"
    size = sizes[-1]
    lucene = make_index("lucene")
    lucene.index_tools("check", catalogs[size])
    found = lucene.search(SearchRequest("check", query, 10)).tool_names
    if found[:1] == ["currentTime"]:
        return True, f"{query!r} ranks currentTime first among {size:,} tools"
    rank = f"#{found.index('currentTime') + 1}" if "currentTime" in found else "not in the top 10"
    first = found[0] if found else "nothing"
    return False, f"at {size:,} tools lucene ranks {first} first for {query!r}; currentTime is {rank}"


def _judge_07(saving: Any, *, offline: Any, **_: Any) -> Judgement:
    totals = offline.trace.tokens_total()
    expected = round(100 * (1 - totals["prompt_tool_search"] / totals["prompt_baseline"]))
    if not isinstance(saving, int | float):
        return False, f"my_saving_pct should be a number, not {type(saving).__name__}"
    if abs(saving - expected) <= 1:
        return True, f"offline, tool search saved {expected}% of prompt tokens"
    if abs(saving - (100 - expected)) <= 1:
        return False, "that is the share tool search still sent; the saving is the rest"
    if 0 < saving < 1:
        return False, "give a percentage (e.g. 40), not a fraction"
    return False, "compare prompt_tool_search with prompt_baseline in offline.trace.tokens_total()"


def _judge_08(new_tool: Any, query: Any, *, my_tools: list, **_: Any) -> Judgement:
    if not isinstance(new_tool, dict) or not {"name", "description"} <= set(new_tool):
        return False, 'my_new_tool should be a dict with "name" and "description"'
    existing = {spec["function"]["name"] for spec in my_tools}
    if new_tool["name"] in existing:
        return False, f"{new_tool['name']!r} is already in my_tools: add a seventh tool of your own"
    spec = {"name": new_tool["name"], "description": new_tool["description"]}
    spec["parameters"] = new_tool.get("parameters", {"type": "object", "properties": {}})
    tools = ToolCatalog.from_json([*my_tools, {"type": "function", "function": spec}]).tools
    vector = make_index("vector")
    vector.index_tools("check", tools)
    first = vector.search(SearchRequest("check", str(query), 3)).tool_names[:1]
    if first == [new_tool["name"]]:
        return True, f"{query!r} → {new_tool['name']} (vector index, {len(tools)} tools)"
    return False, f"the vector index ranked {first or 'nothing'} first for {query!r}"


NEW_TOOL_08 = (
    'my_new_tool = {"name": "change_delivery_address",\n'
    '               "description": "Change the delivery address of an order that has not shipped yet."}\n'
)

EXERCISES: dict[str, Exercise] = {
    e.key: e
    for e in (
        Exercise(
            "01",
            "01_why_tool_search",
            "c09",
            ("my_prediction",),
            "one request's tool list costs with_all.tools tokens; how many requests did the run make?",
            "calls = len(run.trace.iterations)\nmy_prediction = calls * with_all.tools",
            "my_prediction = with_all.tools",
            "without tool search the full tool list is part of every model call: it is paid once per call.",
            _judge_01,
        ),
        Exercise(
            "03",
            "03_three_indexes",
            "c15",
            ("my_target", "my_query"),
            "pick a GitHub tool (e.g. get_commit) and describe what it does without its name's words.",
            'my_target = "get_commit"\nmy_query = "what changed in the last commit"',
            'my_target = "create_pull_request"\nmy_query = "create a pull request"',
            "'changed' and 'last' are not in get_commit's name, so BM25 matches noise; the embedding "
            "does not need shared words.",
            _judge_02,
        ),
        Exercise(
            "04",
            "04_the_loop_and_accumulation",
            "c09",
            ("my_prediction",),
            "the simulated agent asks for maxResults=5; what else is in every request?",
            "my_prediction = 5 + 1  # the latest search's 5 results, plus toolSearchTool",
            "my_prediction = 5",
            "with accumulation off, a request exposes toolSearchTool and only the latest search's results.",
            _judge_03,
        ),
        Exercise(
            "06",
            "06_fingerprint_and_eviction",
            "c09",
            ("my_choice",),
            "6 sessions take turns; LRU keeps 3 of them, TTL keeps every session used in the last 4 s.",
            'my_choice = "TTL"',
            'my_choice = "LRU"',
            "at 1 request/s over 6 sessions a session comes back after ~6 requests; LRU(3) has evicted it by "
            "then, while TTL keeps many of them (at the price of more indexes in memory).",
            _judge_04,
        ),
        Exercise(
            "07",
            "07_measuring_retrieval",
            "c09",
            ("my_family",),
            'compare the ndcg@10 column of the table above; "keyword" = regex/lucene, "embedding" = '
            "vector/hybrid.",
            'my_family = "embedding"',
            'my_family = "keyword"',
            "MetaTool queries paraphrase the plugin descriptions, which favours meaning over shared words.",
            _judge_05,
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
            _judge_06,
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
            _judge_07,
        ),
        Exercise(
            "10",
            "10_bring_your_own_tools",
            "c11",
            ("my_new_tool", "my_tool_query"),
            'my_new_tool = {"name": ..., "description": ...}; ask for it in words a customer would use.',
            NEW_TOOL_08 + 'my_tool_query = "I moved, please send my order to my new address"',
            NEW_TOOL_08 + 'my_tool_query = "give me my money back"',
            "a description that names the task in plain words gives the embedding something to match.",
            _judge_08,
        ),
        Exercise(
            "11",
            "11_choosing_a_strategy",
            "c11",
            ("my_cheapest",),
            "the cost column prices cached tokens at the cache-read rate; a run that fails does not count.",
            'my_cheapest = min((r for r in rows if r["success"]), key=lambda r: r["cost_usd"])["strategy"]',
            'my_cheapest = "all-tools"',
            "caching makes a repeated prefix cheaper, not free: all tools still pays for 510 definitions per "
            "request, while the search strategies send a few, and only a run that completes the task counts.",
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
