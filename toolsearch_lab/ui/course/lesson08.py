"""Notebook 08 (scaling): a query that lucene still ranks first among 10,000 look-alike tools."""

from __future__ import annotations

import re
from typing import Any

from toolsearch_lab.index.factory import make_index
from toolsearch_lab.model import SearchRequest
from toolsearch_lab.ui.course.base import Exercise, Judgement, repeats_words, stems

LARGEST = 1000  # the check must run among look-alikes: a query that wins among ten tools proves nothing


def judge(query: Any, *, catalogs: dict, sizes: list, **_: Any) -> Judgement:
    target = "currentTime"
    if not isinstance(query, str):
        return False, f"my_query should be a string of words, not {query!r}"
    if not query.strip():
        return False, "my_query is blank: type the words a user would search with"
    size = max(sizes)
    if size < LARGEST:
        return False, f"the largest catalog has {size:,} tools: keep SIZES up to 10,000 (look-alikes)"
    if re.search(rf"(?<![a-z]){target.lower()}(?![a-z])", query.lower()):
        return False, f"the query uses the tool's own name ({target}): a user does not know it"
    said, name_words = stems(query), stems(target)
    if not said:
        return False, f"{query!r} has no words a search can match: say what the user wants"
    if repeats_words(query):
        return False, f"{query!r} repeats its words: a user types each word once; say what they want"
    if said <= name_words:
        return False, "those are only the tool's name words: the generic query the table shows slipping"
    description = next(tool.description for tool in catalogs[size] if tool.name == target)
    if len(said & stems(description)) >= 0.8 * len(stems(description)):
        return False, "that pastes the description: pick a few of its words that few other tools use"
    lucene = make_index("lucene")
    lucene.index_tools("check", catalogs[size])
    found = lucene.search(SearchRequest("check", query, 10)).tool_names
    if found[:1] == [target]:
        return True, f"{query!r} ranks {target} first among {size:,} tools"
    if not found:
        return False, (
            f"at {size:,} tools lucene finds nothing for {query!r}: use words of {target}'s description"
        )
    return False, (
        f"at {size:,} tools lucene ranks {found[0]} first for {query!r}, not {target}: which of your words "
        f"does {found[0]}'s description share, and which of {target}'s words do few other tools use?"
    )


def solution() -> str:
    my_query = "current date and time for a location"
    return my_query


EXERCISES = (
    Exercise(
        key="08",
        notebook="08_scaling",
        answer_cell="c10",
        hint="use words from currentTime's description that few other tools use.",
        solve=solution,
        wrong='my_query = "what time is it"',
        why="'date' and 'location' together are rarer than 'current time', so BM25 keeps currentTime first.",
        judge=judge,
    ),
)
