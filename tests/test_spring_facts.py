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

from toolsearch_lab.ui.course.spring_facts import BY_KEY, FACTS, READ_IN_SOURCE

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


def statements(finds: str, words: str, code_marks: bool = True) -> tuple[list[str], list[str]]:
    """Every sentence of the course that ``finds`` matches, split into those that use ``words`` word for word
    and those that do not, each as "where: sentence" (``code_marks=False``: backticks ignored)."""
    stated, wrong = [], []
    for where, text in _texts():
        for match in re.finditer(finds, text, flags=re.I):
            sentence = _sentence(text, match.start(), match.end())
            flat = sentence if code_marks else sentence.replace("`", "")
            (stated if words in flat else wrong).append(f"{where}: {flat[:200]}")
    return stated, wrong


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.key)
def test_every_statement_of_a_spring_fact_uses_its_words(fact):
    stated, wrong = statements(fact.finds, fact.words)
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


@pytest.mark.parametrize("fact", FACTS, ids=lambda f: f.key)
def test_every_fact_names_where_in_spring_it_is_and_how_it_was_checked(fact):
    assert fact.source.strip(), f"{fact.key}: no source"
    assert fact.checked == READ_IN_SOURCE or fact.checked.startswith("not checked: "), fact.checked
    if fact.checked == READ_IN_SOURCE:  # read in a class: its name and approximate lines
        assert re.search(r"[A-Z]\w+[.(]", fact.source) and re.search(r"~l\. \d+", fact.source), fact.source


CONVERSATION_FACTS = [f for f in FACTS if f.section.startswith(("7.1", "7.5", "13"))]


def test_the_conversation_lesson_and_the_loop_page_state_the_facts_of_conversations():
    """Notebook 12 and docs/loop.md tell the story of conversations: each of its facts is stated in one of
    them, in the fact's words (the test above holds every statement to them)."""
    texts = [t for where, t in _texts() if where.startswith(("12_conversations", "docs/loop.md"))]
    missing = [f.key for f in CONVERSATION_FACTS if not any(re.search(f.finds, t, flags=re.I) for t in texts)]
    assert len(CONVERSATION_FACTS) >= 10 and not missing, missing


def test_the_package_places_memory_as_the_facts_say():
    from toolsearch_lab.eval.scenarios import run_scenario
    from toolsearch_lab.loop.chain import (
        DEFAULT_CHAT_MEMORY_ORDER,
        HIGHEST_PRECEDENCE,
        INSIDE_MEMORY_ORDER,
        TOOL_SEARCH_ADVISOR_ORDER,
        MemoryAdvisor,
    )
    from toolsearch_lab.loop.memory import MessageWindow

    assert int(BY_KEY["tool-loop-order"].words) == TOOL_SEARCH_ADVISOR_ORDER - HIGHEST_PRECEDENCE
    assert int(BY_KEY["memory-default-order"].words) == DEFAULT_CHAT_MEMORY_ORDER - HIGHEST_PRECEDENCE
    assert MessageWindow().max_messages == int(BY_KEY["window-default"].words.split()[0])
    assert int(BY_KEY["inside-order"].words) == INSIDE_MEMORY_ORDER - HIGHEST_PRECEDENCE
    chain = MemoryAdvisor(MessageWindow(1), "outside")
    chain.stored = [{"role": "user", "content": "before"}]
    sent = chain.before([{"role": "user", "content": "now"}])
    assert [m["content"] for m in sent] == ["before", "now"]  # read first, then stored
    outside = run_scenario("spring-7034", memory_advisor="outside", accumulation_source="history")
    roles = [m["role"] for m in outside.messages if m["role"] != "system"]
    assert roles[:3] == ["user", "assistant", "user"]  # turn 2 received the stored user message and answer
    inside = run_scenario("spring-7034", memory_advisor="inside", accumulation_source="history")
    assert "lookupShipment" in inside.trace.turns[0].lost  # within the turn
