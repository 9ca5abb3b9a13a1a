"""Spring's facts are stated one way everywhere, in the words of toolsearch_lab/ui/course/spring_facts.py, and
the package behaves as each says.

Every statement of a fact (found by the fact's pattern) in the notebooks' Markdown, the README and docs/
must use the fact's words; each fact is stated somewhere (a fact nobody states is dead weight here).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import nbformat
import pytest

from toolsearch_lab.ui.course.spring_facts import BY_KEY, FACTS

ROOT = Path(__file__).resolve().parent.parent


def _texts() -> list[tuple[str, str]]:
    """(where, text) of every place the course states things: Markdown cells, the README, docs/."""
    out = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                out.append((f"{path.name} cell {i}", cell.source))
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        prose = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)  # not code
        out.append((path.relative_to(ROOT).as_posix(), prose))
    return out


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence (or list item) around ``text[start:end]``, on one line."""
    before = max(text.rfind(". ", 0, start), text.rfind("\n- ", 0, start), text.rfind("\n\n", 0, start))
    stops = [i for i in (text.find(". ", end), text.find("\n- ", end), text.find("\n\n", end)) if i != -1]
    return re.sub(r"\s+", " ", text[before + 1 : min(stops, default=len(text))]).strip()


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.key)
def test_every_statement_of_a_spring_fact_uses_its_words(fact):
    stated, wrong = [], []
    for where, text in _texts():
        for match in re.finditer(fact.finds, text, flags=re.I):
            sentence = _sentence(text, match.start(), match.end())
            flat = re.sub(r"\s+", " ", sentence)
            (stated if fact.words in flat else wrong).append(f"{where}: {sentence[:200]}")
    assert not wrong, f"{fact.key} stated otherwise than '{fact.words}' (spec {fact.section}):\n" + "\n".join(
        wrong
    )
    assert stated, f"{fact.key} is stated nowhere; drop it from spring_facts.py or state it"


def test_the_package_behaves_as_the_facts_say():
    """The facts the code implements, checked against the code: a fact and its implementation cannot
    drift apart."""
    from toolsearch_lab import BM25ToolIndex, LruEviction, SearchRequest, Tool, ToolSearchTool, TtlEviction

    assert BM25ToolIndex().min_score_threshold == float(BY_KEY["lucene-min-score"].words)
    assert LruEviction().max_sessions == int(BY_KEY["lru-default"].words.split()[0].replace(",", ""))
    # TTL: a session idle exactly the TTL is evicted (Spring's check is now - last >= ttl).
    now = [0.0]
    ttl = TtlEviction(timedelta(seconds=10), clock=lambda: now[0])
    ttl.on_access("a")
    now[0] = 10.0
    assert ttl.on_access("b") == {"a"}, "TTL evicts a session idle for exactly the TTL"
    # The search result is a JSON array of the names, in rank order, and nothing else.
    index = BM25ToolIndex(min_score_threshold=0.0)
    index.index_tools("s", [Tool("weather", "weather forecast"), Tool("clothing", "weather clothing shops")])
    result = ToolSearchTool(index).call({"query": "weather", "maxResults": 2}, "s").result
    assert (
        json.loads(result)
        == index.search(SearchRequest("s", "weather", 2)).tool_names
        == ["weather", "clothing"]
    )
