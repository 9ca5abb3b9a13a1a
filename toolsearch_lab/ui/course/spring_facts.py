"""Spring's facts the course states, each once: the spec's words, the section of the specification they come
from (``spec/spring-tool-search.md``, Spring AI 2.0.1), and the words the notebooks, the quiz and the docs
use for them.

``tests/test_spring_facts.py`` finds every statement of each fact in the notebooks' Markdown, the README and
``docs/`` (``finds``, a pattern for any way of saying it) and fails unless the statement uses these words
(``words``); it also checks that the package behaves as each fact says. A fact stated differently in two
places (Spring's threshold as "about 10", "a few dozen" and "10-20 tools") is what this module prevents.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SpringFact:
    key: str
    section: str  # where the specification says it
    spec: str  # the specification's words
    words: str  # how the course states it: every statement of the fact contains these words
    finds: str  # a regular expression that finds a statement of the fact, however it is worded


FACTS = (
    SpringFact(
        key="when-to-use",
        section="12 (Spring AI's API documentation, 'When to use')",
        spec="≥ 10 tools or > 10K tokens of definitions",
        words="from 10 tools or 10K tokens of tool definitions",
        finds=r"Spring(?:'s| AI's)? (?:own )?(?:docs|documentation|guidance)[^.]*?(?:recommend|suggest|use)",
    ),
    SpringFact(
        key="ttl-inclusive",
        section="9 (TtlEvictionStrategy)",
        spec="every other id with now − last ≥ ttl (inclusive)",
        words="idle for at least the TTL",
        finds=r"idle (?:for )?(?:longer than|more than|over|at least|beyond)(?: the)? TTL",
    ),
    SpringFact(
        key="lucene-min-score",
        section="4 (LuceneToolIndex) and 10.2 (lucene.min-score-threshold)",
        spec="minScoreThreshold = 0.25f",
        words="0.25",
        finds=r"(?:min(?:imum)?[- _]?score(?:[- ]?threshold)?|raw-score threshold)`?\s*(?:of|is|=|:)?\s*"
        r"\(?\s*\d+\.\d+",
    ),
    SpringFact(
        key="search-result",
        section="6 (toolSearchTool, return value)",
        spec="a list of tool-name strings only, in the index's rank order ... Scores and summaries are not "
        "shown to the model",
        words="JSON array of tool names",
        finds=r"JSON array of (?:tool )?names",
    ),
    SpringFact(
        key="undiscovered-call",
        section="7.7 (error behaviour)",
        spec='Error "No ToolCallback found for tool name: X" ... the whole call fails',
        words="No ToolCallback found for tool name",
        finds=r"No ?Tool ?Callback (?:found|for)",
    ),
    SpringFact(
        key="lru-default",
        section="9 (LruEvictionStrategy) and 10.2 (eviction.lru-max-sessions)",
        spec="LruEvictionStrategy(maxSessions), default, maxSessions = 1000",
        words="1,000 sessions",
        finds=r"(?:default|Spring's)[^.]{0,30}LRU[^.]{0,40}?\b\d[\d,]* sessions",
    ),
    SpringFact(
        key="blog-savings",
        section="12 (benchmark figures, 'preliminary benchmarks with 28 tools')",
        spec="34–64% token reduction",
        words="34–64 %",
        finds=r"\b\d+ ?[–-] ?\d+ ?% (?:fewer|token|saving|reduction)",
    ),
)

BY_KEY = {fact.key: fact for fact in FACTS}


def spring_fact(key: str) -> str:
    """The words the course uses for Spring's fact ``key``."""
    if key not in BY_KEY:
        raise KeyError(f"no Spring fact {key!r}; known: {sorted(BY_KEY)}")
    return BY_KEY[key].words
