"""Notebook 03 (three indexes): a paraphrase that the hybrid index ranks first and lucene does not."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.text.normalise import keyword_tokens, porter_stem
from toolsearch_lab.ui.course.base import Exercise, Judgement, repeats_words

CATALOG = "github-mcp"
MIN_QUERY_WORDS = 3


@lru_cache(maxsize=2)
def _indexes(kinds: tuple[str, ...] = ("lucene", "hybrid")) -> dict[str, Any]:
    """Fresh indexes with their defaults over the whole GitHub catalog: the check never depends on what
    the explorer shows (another catalog, another maxResults)."""
    tools = load_catalog(CATALOG).tools
    built = {}
    for kind in kinds:
        built[kind] = make_index(kind)
        built[kind].index_tools("check-03", tools)
    return built


def judge(target: Any, query: Any, *, explorer: Any, **_: Any) -> Judgement:
    names = [tool.name for tool in load_catalog(CATALOG).tools]
    if not isinstance(target, str) or target.strip() not in names:
        return (
            False,
            f"my_target should be the name of one of the {len(names)} {CATALOG} tools, not {target!r}",
        )
    target = target.strip()
    if not isinstance(query, str):
        return False, f"my_query should be text: what the tool does, in your words, not {query!r}"
    if not query.strip():
        return False, "my_query is blank: say in a few words what the tool does"
    words = keyword_tokens(query)
    if len(set(words)) < MIN_QUERY_WORDS:
        return False, f"a paraphrase says what the tool does in at least {MIN_QUERY_WORDS} different words"
    if repeats_words(query):
        return False, f"{query!r} repeats its words: a search matches a word once; say what the tool does"
    own = {porter_stem(w) for w in keyword_tokens(target)}
    used = sorted({w for w in words if porter_stem(w) in own})
    if used:
        return (
            False,
            f"{', '.join(used)} is a word of the name {target}: describe it without its name's words",
        )
    explorer.catalog_dropdown.value = CATALOG
    if explorer.query_box.value == query:
        explorer.search()
    else:
        explorer.query_box.value = query  # the explorer above redraws too
    first = {
        kind: index.search(SearchRequest("check-03", query, 5)).tool_names[:1]
        for kind, index in _indexes().items()
    }
    if first["hybrid"] != [target]:
        return False, (
            f"hybrid does not rank {target} first for {query!r}: say more plainly what {target} does, in the "
            "words a user would type"
        )
    if first["lucene"] == [target]:
        return False, f"lucene ranks {target} first too: the query still shares its words; paraphrase more"
    return True, f"{query!r}: hybrid → {target}, lucene → {(first['lucene'] or ['nothing'])[0]}"


def solution() -> tuple[str, str]:
    my_target = "get_commit"
    my_query = "show what changed in one revision"
    return my_target, my_query


EXERCISES = (
    Exercise(
        key="03",
        notebook="03_three_indexes",
        answer_cell="c15",
        hint="pick a GitHub tool (e.g. list_tags) and describe what it does in three or more words, none of "
        "them a word of its name.",
        solve=solution,
        wrong='my_target = "create_pull_request"\nmy_query = "open a new pull request"',
        why="none of the query's words is in get_commit's name, so BM25 matches other tools' descriptions; "
        "the embedding in the hybrid index matches the meaning.",
        judge=judge,
    ),
)
