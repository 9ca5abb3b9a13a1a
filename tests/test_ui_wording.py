"""Notebook 05's views: the wording browser, the tables read from the shipped wording tables, and a glossary
entry that flips a step."""

from toolsearch_lab.eval.scenarios import list_scenarios, load_scenario
from toolsearch_lab.eval.wording_matrix import load_wording_matrix
from toolsearch_lab.ui.wording_view import (
    TOP_K,
    WordingBrowser,
    ceiling_shares,
    ceiling_table,
    glossary_runs,
    matrix_table,
)


def test_the_browser_shows_the_chosen_task_in_both_wordings():
    browser = WordingBrowser("github")
    assert list(browser.dropdown.options) == list_scenarios("plain")
    browser.dropdown.set_state({"index": list(browser.dropdown.options).index("spring-demo")})
    user = load_scenario("spring-demo", wording="user")
    assert all(step.need.replace("'", "&#x27;") in browser.table.value for step in user.steps)


def test_ceiling_table_leads_with_the_index_and_matches_the_shipped_ranks():
    tables = load_wording_matrix()
    shares = ceiling_shares(tables)
    user = [r for r in tables["ceiling"] if r["wording"] == "user" and not r["examples"]]
    in_top = sum(r["index_rank"] <= TOP_K for r in user) / len(user)
    assert shares["user", False]["index_top5"] == in_top
    table = ceiling_table(tables)
    assert table.columns[1].startswith("index: right tool in its top")
    assert len(table.rows) == len(shares)
    assert len(matrix_table(tables).rows) == len(tables["indexes"])


def test_one_glossary_entry_flips_the_step_it_explains():
    runs = glossary_runs("github-user", [(["know"], ["comment"])], index="lucene")
    shipped, extended = runs["shipped glossary"], runs["+ your entry"]
    flipped = [
        i for i, (a, b) in enumerate(zip(shipped.steps, extended.steps, strict=True)) if b.success > a.success
    ]
    assert [shipped.steps[i].expected for i in flipped] == [["add_issue_comment"]]
