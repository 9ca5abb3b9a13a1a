"""Each lesson's claim words ("cheapest", "fewer", "most", "saves", "best", ...) against the figures they
rest on.

A lesson's code cells run here in this process, as a learner runs them (exercises left blank), and each test
reads the claim from the lesson's own text and the figure from what its cells computed: the same data the
notebook shows, never a copy of its output. When a claim's sentence changes, its test fails on the missing
sentence, so the claim and its check are revisited together. Notebook 02 makes no claim of this kind (it
builds the loop); 07's test waits for its corrected prose (branch p49-retrieval, issue #49).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytestmark = pytest.mark.slow  # each lesson runs its cells: seconds to a minute

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


class Lesson:
    """A notebook run cell by cell up to ``until`` (a cell id): its namespace, each cell's last value (what
    the notebook displays), and its text (Markdown cells and the Prose its cells printed)."""

    def __init__(self, name: str, until: str | None = None, path: Path | None = None) -> None:
        self.nb = nbformat.read(path or next(NOTEBOOKS.glob(f"{name}_*.ipynb")), as_version=4)
        self.ns: dict[str, Any] = {"display": self._shown}
        self.out: dict[str, Any] = {}
        self.shown: list[Any] = []
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                self.out[cell.id] = self._run(cell.source, f"{name}:{cell.id}")
            if cell.id == until:
                break

    def _shown(self, *values: Any) -> None:
        self.shown.extend(values)

    def _run(self, source: str, where: str) -> Any:
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, where, "exec"), self.ns)
        if last is None:
            return None
        return eval(compile(ast.Expression(last.value), where, "eval"), self.ns)

    def markdown(self, cell_id: str) -> str:
        [cell] = [c for c in self.nb.cells if c.id == cell_id]
        return " ".join(cell.source.split())

    def prose(self, cell_id: str) -> str:
        return " ".join(self.out[cell_id].text.split())


@functools.cache
def lesson(name: str, until: str | None = None) -> Lesson:
    return Lesson(name, until)


def says(text: str, claim: str) -> None:
    assert claim in text, f"the lesson no longer says {claim!r}: revisit this claim's test"


# ---- 01: the honest headline -------------------------------------------------------------------------------
def test_01_tool_definitions_are_most_of_the_prompt_and_the_per_request_figure_flatters():
    nb = lesson("01")
    says(nb.markdown("c00"), "the tool list is most of the prompt")
    everything = nb.ns["requests"][f"all {len(nb.ns['github_tools'])} tools"]
    assert everything.tools > everything.total / 2
    says(nb.markdown("c00"), "see why it is fewer than a tool-search run makes")
    says(nb.markdown("c18"), "The per-request counterfactual is larger")
    for head in nb.ns["heads"].values():
        assert len(head.all_tools.costs) < len(head.tool_search.costs)  # fewer requests without searching
        assert head.counterfactual_saved_pct > head.saved_pct  # the per-request figure flatters
    spring = nb.ns["spring"]
    says(nb.markdown("c16"), "Tool search still sends fewer prompt tokens there")
    says(nb.markdown("c18"), "makes Spring's loop cost more than sending every tool")
    assert spring.prompt < spring.all_tools_prompt and spring.cost_usd > spring.all_tools_cost_usd


# ---- 03: what each index finds for a paraphrase ------------------------------------------------------------
def test_03_embeddings_rank_the_paraphrased_tool_first_where_keywords_do_not():
    nb = lesson("03", until="c13")
    right = {"is it going to rain in Amsterdam": "weather", "where can I buy a jacket nearby": "clothing"}
    assert list(right) == nb.ns["paraphrases"]
    ranked = {
        (kind, query): [
            h.tool_name for h in index.search(nb.ns["SearchRequest"]("demo", query, 3)).tool_references
        ]
        for kind, index in nb.ns["indexes"].items()
        for query in right
    }
    text = nb.markdown("c11")
    says(text, "**regex** finds nothing")
    assert all(not ranked["regex", q] for q in right)
    says(text, "**lucene** misses both")
    assert all(ranked["lucene", q][:1] != [tool] for q, tool in right.items())
    says(text, "the rain query returns only noise tools")
    assert not {"weather", "clothing"} & set(ranked["lucene", "is it going to rain in Amsterdam"])
    says(text, "the jacket query ranks `weather` above `clothing`")
    jacket = ranked["lucene", "where can I buy a jacket nearby"]
    assert jacket.index("weather") < jacket.index("clothing")
    says(text, "ranks the right tool first for each")
    for kind in ("vector", "hybrid"):
        assert all(ranked[kind, q][:1] == [tool] for q, tool in right.items()), kind
    says(nb.markdown("c17"), "here each paraphrase, with none of its tool's words, still found it")
    assert all(ranked["vector", q][:1] == [tool] for q, tool in right.items())
    says(nb.prose("c08"), "The wrong tool wins")
    assert [row[0] for row in nb.out["c07"].rows] == ["get-time", "get_weather"]  # the table above it
    says(nb.prose("c13"), "the default returns **nothing**")
    (_, default_found, _), (_, unfloored, _) = nb.ns["rows"]
    assert default_found == 0 and unfloored == len(nb.ns["stream_tools"])


# ---- 04: accumulation, maxResults, and the stepper's headline ----------------------------------------------
def test_04_accumulation_claims_and_the_stepper_leads_with_the_real_run():
    from toolsearch_lab import headline

    nb = lesson("04", until="mr-run")
    says(nb.markdown("c08"), "The simulated agent searches again for every step, so it never notices")
    stepper = nb.ns["stepper"]
    graded = {}
    for on in (True, False):
        stepper.accumulation.value = on
        graded[on] = (stepper.run.grade.success, stepper.run.grade.steps_succeeded)
    assert graded[True] == graded[False] and graded[True][0]
    says(nb.markdown("c11"), "With accumulation **on**, the exposed set only grows")
    exposed = [set(it.exposed_tools) for it in nb.ns["runs"]["accumulation on"].iterations]
    assert all(a <= b for a, b in zip(exposed, exposed[1:], strict=False))
    says(nb.markdown("c11"), "which is larger than the default Spring's tool description states")
    assert nb.ns["cases"][0].returned > nb.ns["SPRING_DESCRIBED_DEFAULT"]
    stepper.accumulation.value = True
    status = re.sub(r"<[^>]+>", "", stepper.status.value)
    real = headline("spring-demo", accumulation=True)
    lead = f"{real.saved_pct:.1f}% saved"
    assert lead in status and status.index(lead) < status.index("per-request counterfactual")


# ---- 05: words the catalog does not use --------------------------------------------------------------------
def test_05_users_words_drop_the_index_figure_and_example_requests_lift_it():
    from toolsearch_lab import TokenCounter, load_scenario
    from toolsearch_lab.ui.wording_view import descriptions_label

    nb = lesson("05", until="w12")
    plain, user, user_ex = (nb.ns[k] for k in ("plain", "user", "user_ex"))
    says(nb.markdown("w13"), "Words that the catalog does not use drop that figure sharply")
    assert plain["index_top5"] - user["index_top5"] >= 0.10
    says(nb.prose("w04"), "example requests in the descriptions lift it")
    assert user_ex["index_top5"] > user["index_top5"]
    says(nb.markdown("w15"), "fewer tools never returned, and fewer returned but not chosen")
    rows = {row[0]: row for row in nb.out["w12"].rows}
    shipped, examples = rows[descriptions_label(False)], rows[descriptions_label(True)]
    assert examples[3] < shipped[3] and examples[4] < shipped[4]
    says(nb.markdown("w15"), "sending every tool becomes dearer")
    counter = TokenCounter()
    assert counter.tools_tokens(load_scenario("github", examples=True).tools) > counter.tools_tokens(
        load_scenario("github").tools
    )


# ---- 06: the fingerprint -----------------------------------------------------------------------------------
def test_06_a_schema_only_edit_keeps_the_fingerprint_and_a_rebuilt_advisor_indexes_every_request():
    nb = lesson("06", until="rebuild-run")
    fingerprint, tools, edits = nb.ns["fingerprint"], nb.ns["tools"], nb.ns["edits"]
    says(nb.markdown("c04"), "The schema-only edit keeps the fingerprint")
    assert fingerprint(edits["schema-only edit of weather"]) == fingerprint(tools)
    assert fingerprint(edits["description edit of weather"]) != fingerprint(tools)
    says(nb.prose("rebuild-run"), "once per request")
    assert (nb.ns["kept"], nb.ns["rebuilt"]) == (1, len(next(iter(nb.ns["runs"].values()))))


# ---- 08: look-alikes ---------------------------------------------------------------------------------------
def test_08_a_short_query_sinks_among_look_alikes_and_tool_search_stays_flat():
    nb = lesson("08", until="c07")
    sizes, table = nb.ns["SIZES"], nb.ns["table"]
    says(nb.markdown("c09"), "*current time* slips down lucene's ranking as look-alikes arrive")
    first, last = (table["lucene", size]["ranks"]["currentTime"] for size in (sizes[0], sizes[-1]))
    assert first == 1 and (last is None or last > 1)
    says(nb.markdown("c12"), "Sending all tools grows linearly with the catalog")
    costs = nb.ns["all_cost"]
    assert all(a < b for a, b in zip(costs, costs[1:], strict=False))
    assert costs[-1] > 100 * nb.ns["search_cost"]


# ---- 09: when a found tool becomes usable ------------------------------------------------------------------
def test_09_a_found_tool_is_in_the_context_from_the_next_request_on_and_leaves_the_deferred_list():
    nb = lesson("09", until="c01")
    says(nb.markdown("c04"), "a tool found in one response is in the context of every later request")
    says(nb.markdown("c04"), "the deferred list shrinks by what was found")
    says(nb.markdown("c17"), "it is in the context of the requests sent after the search's result came back")
    for name in ("anthropic", "responses", "session"):
        its = nb.ns[name].iterations
        found = [(k, n) for k, it in enumerate(its) for s in it.searches for n in s.names]
        assert found, f"{name}: the run searches"
        for k, tool in found:
            assert tool not in its[k].exposed_tools, (
                name,
                tool,
            )  # not in the request whose response searched
            for later in its[k + 1 :]:
                assert tool in later.exposed_tools and tool not in later.deferred, (name, tool, later.number)


# ---- 10: the catalog it points back to ---------------------------------------------------------------------
def test_10_github_is_where_tool_search_saves_most_of_the_prompt():
    from toolsearch_lab import headline

    text = " ".join(c.source for c in lesson("10", until="c00").nb.cells if c.cell_type == "markdown")
    says(" ".join(text.split()), "Notebook 01 shows the GitHub catalog, where it saves most of the prompt")
    assert headline("github").saved_pct > 50


# ---- 11: what a run sends, and what the cache serves -------------------------------------------------------
def test_11_the_cheapest_completed_run_sends_the_fewest_tokens_and_is_not_the_most_cached():
    nb = lesson("11", until="c21")
    ok = [r for r in nb.ns["rows"] if r["success"]]
    cheapest = min(ok, key=lambda r: r["cost_usd"])
    from toolsearch_lab.ui.strategy_lab import cheapest_successful

    assert cheapest is cheapest_successful(nb.ns["rows"])  # the row the table stars
    says(nb.prose("c21"), f"Cheapest run that completed the task (`lucene`): **{cheapest['strategy']}**")
    says(
        nb.markdown("c22"),
        "the cheapest run that completed this task was not the most cached one, it sent the fewest prompt "
        "tokens",
    )
    assert cheapest["prompt_tokens"] == min(r["prompt_tokens"] for r in ok)
    assert cheapest["cached_share"] < max(r["cached_share"] for r in ok)
    says(nb.prose("c06b"), f"**{cheapest['strategy']}**, is not the most cached")
    says(nb.markdown("c22"), "still costs many times the cheapest strategy")
    every = next(r for r in ok if r["strategy"] == "all-tools")
    assert every["cost_usd"] >= 3 * cheapest["cost_usd"] and every["cached_share"] > cheapest["cached_share"]


# ---- 12: placements, the window, the pins ------------------------------------------------------------------
def test_12_placements_the_window_and_pins_measured_elsewhere():
    nb = lesson("12", until="c23")
    ns = nb.ns
    says(nb.markdown("c05"), "more requests than with the session record, and fewer prompt tokens")
    outside, kept = ns["outside"].row(), ns["by_setting"]["none", "session"].row()
    assert outside["requests"] > kept["requests"] and outside["prompt_tokens"] < kept["prompt_tokens"]
    says(nb.markdown("c08"), "a second search in turn 1")
    turn_searches = {run: len(ns[run].trace.turn_trace(1).searches()) for run in ("inside", "kept")}
    assert turn_searches == {"inside": 2, "kept": 1}
    says(nb.markdown("c10"), "it lands on a look-alike")
    failed = [s for s in ns["history_run"].steps if not s.success]
    assert failed and all(set(s.called).isdisjoint(s.expected) for s in failed)
    text = nb.prose("c23")
    says(text, "They do not save turn 4")
    measured, history, by_hand = ns["measured"].row(), ns["history"].row(), ns["by_hand"].row()
    assert measured["steps_succeeded"] < measured["steps"]  # the measured pins fail this conversation
    assert by_hand["steps_succeeded"] == by_hand["steps"]
    assert measured["cost_usd"] > history["cost_usd"]  # and only add to the bill
    usage = {a.tool: a for a in ns["advice"].advice}
    lost = {name for s in failed for name in s.expected}
    assert all(name not in usage or usage[name].share < 0.5 for name in lost)  # too rarely used to pin
    says(
        nb.markdown("c26"),
        "they fixed nothing here, because the tool this conversation lost was rarely used there",
    )


# ---- 07: after #49 -----------------------------------------------------------------------------------------
NOTEBOOK_07 = next(NOTEBOOKS.glob("07_*.ipynb"))


@pytest.mark.skipif(
    "' (tied)'" not in NOTEBOOK_07.read_text(encoding="utf-8"),
    reason="07 names one index best on paraphrases even when others tie; #49 (branch p49-retrieval) fixes it",
)
def test_07_the_best_index_on_paraphrases_is_every_index_with_the_top_recall():
    nb = Lesson("07", until="w3", path=NOTEBOOK_07)
    recall, kinds = nb.ns["recall"], nb.ns["KINDS"]
    named = re.search(r"The best on paraphrases: \*\*(.+?)\*\*", nb.prose("w3"))
    assert named, "07 no longer names the best index on paraphrases: revisit this claim's test"
    top = max(recall[kind, "paraphrased"] for kind in kinds)
    assert named.group(1).split(" and ") == [k for k in kinds if recall[k, "paraphrased"] == top]
    falls = all(recall[k, "paraphrased"] < recall[k, "exact"] for k in kinds)
    assert ("falls for every index" in nb.prose("w3")) == falls
