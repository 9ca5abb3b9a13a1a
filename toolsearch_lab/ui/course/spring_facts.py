"""Spring's facts the course states, each once: the spec's words, the section of the specification they come
from (``spec/spring-tool-search.md``, Spring AI 2.0.1), where in Spring's own source (or page) they are, and
the words the notebooks, the quiz and the docs use for them.

``tests/test_spring_facts.py`` finds every statement of each fact in the notebooks' Markdown, the README and
``docs/`` (``finds``, a pattern for any way of saying it) and fails unless the statement uses these words
(``words``); it also checks that the package behaves as each fact says. A fact stated differently in two
places (Spring's threshold as "about 10", "a few dozen" and "10-20 tools") is what this module prevents.

``source`` names the class and method (with approximate lines) of spring-projects/spring-ai at
:data:`SPRING_AI_COMMIT` the fact was read in, or the page it comes from; ``checked`` says how it was
checked: read there (:data:`READ_IN_SOURCE`), or why it could not be (a figure from a blog, an issue's
report that was not run in Java), which the course then labels so.
"""

from __future__ import annotations

from dataclasses import dataclass

SPRING_AI_COMMIT = "fd3fd6ec700340b90c3d516be57c6e6c87dd7df1"  # spring-projects/spring-ai main, 2026-08-21
READ_IN_SOURCE = "read in the source"


@dataclass(frozen=True)
class SpringFact:
    key: str
    section: str  # where the specification says it
    spec: str  # the specification's words
    words: str  # how the course states it: every statement of the fact contains these words
    finds: str  # a regular expression that finds a statement of the fact, however it is worded
    source: str  # where in Spring's source (class, method, ~lines at SPRING_AI_COMMIT) or which page
    checked: str = READ_IN_SOURCE  # or: "not checked: <why>"


FACTS = (
    SpringFact(
        key="when-to-use",
        section="12 (Spring AI's API documentation, 'When to use')",
        spec="≥ 10 tools or > 10K tokens of definitions",
        words="from 10 tools or 10K tokens of tool definitions",
        finds=r"Spring(?:'s| AI's)? (?:own )?(?:docs|documentation|guidance)[^.]*?(?:recommend|suggest|use)",
        source="spring-ai-docs .../pages/api/tools/tool-search-tool.adoc, 'When to use'",
        checked="not checked: documentation prose, quoted by the specification",
    ),
    SpringFact(
        key="ttl-inclusive",
        section="9 (TtlEvictionStrategy)",
        spec="every other id with now − last ≥ ttl (inclusive)",
        words="idle for at least the TTL",
        finds=r"idle (?:for )?(?:longer than|more than|over|at least|beyond)(?: the)? TTL",
        source="TtlEvictionStrategy.onAccess, ~l. 60-66: Duration.between(ts, now).compareTo(ttl) >= 0",
    ),
    SpringFact(
        key="lucene-min-score",
        section="4 (LuceneToolIndex) and 10.2 (lucene.min-score-threshold)",
        spec="minScoreThreshold = 0.25f",
        words="0.25",
        finds=r"(?:min(?:imum)?[- _]?score(?:[- ]?threshold)?|raw-score threshold)`?\s*(?:of|is|=|:)?\s*"
        r"\(?\s*\d+\.\d+",
        source="LuceneToolIndex(), ~l. 97-99: this(0.25f)",
    ),
    SpringFact(
        key="search-result",
        section="6 (toolSearchTool, return value)",
        spec="a list of tool-name strings only, in the index's rank order ... Scores and summaries are not "
        "shown to the model",
        words="JSON array of tool names",
        finds=r"JSON array of (?:tool )?names",
        source="ToolSearchTool.toolSearchTool, ~l. 48-65: returns List<String> of the references' tool names",
    ),
    SpringFact(
        key="undiscovered-call",
        section="7.7 (error behaviour)",
        spec='Error "No ToolCallback found for tool name: X" ... the whole call fails',
        words="No ToolCallback found for tool name",
        finds=r"No ?Tool ?Callback (?:found|for)",
        source="DefaultToolCallingManager.executeToolCalls, ~l. 296: IllegalStateException, not caught",
    ),
    SpringFact(
        key="lru-default",
        section="9 (LruEvictionStrategy) and 10.2 (eviction.lru-max-sessions)",
        spec="LruEvictionStrategy(maxSessions), default, maxSessions = 1000",
        words="1,000 sessions",
        finds=r"(?:default|Spring's)[^.]{0,30}LRU[^.]{0,40}?\b\d[\d,]* sessions",
        source="ToolSearchToolCallingAdvisor.Builder, ~l. 387: new LruEvictionStrategy(1000)",
    ),
    SpringFact(
        key="blog-savings",
        section="12 (benchmark figures, 'preliminary benchmarks with 28 tools')",
        spec="34–64% token reduction",
        words="34–64 %",
        finds=r"\b\d+ ?[–-] ?\d+ ?% (?:fewer|token|saving|reduction)",
        source="the Spring AI blog's preliminary benchmarks with 28 tools (spec §12)",
        checked="not checked: a blog's measurement, not re-run here",
    ),
    # ---- conversations: where memory sits, what the scan reads, #7034 (spec §7.1, §7.5, §7.7, §13) --------
    SpringFact(
        key="tool-loop-order",
        section="7.1 (identity and construction)",
        spec="Default order: HIGHEST_PRECEDENCE + 300",
        words="+300",
        finds=r"DEFAULT_ORDER|order of the tool loop|tool loop's order",
        source="ToolCallingAdvisor.DEFAULT_ORDER, ~l. 75: Ordered.HIGHEST_PRECEDENCE + 300",
    ),
    SpringFact(
        key="inside-order",
        section="7.1 (identity and construction)",
        spec="The ITs place MessageChatMemoryAdvisor at HIGHEST+1000 to run it inside every iteration, "
        "together with disableInternalConversationHistory()",
        words="+1000",
        finds=r"inside[^.\n]{0,40}?\+\d{3,4}\b",
        source="AbstractToolSearchToolCallingAdvisorIT, ~l. 145: MessageChatMemoryAdvisor "
        ".order(Ordered.HIGHEST_PRECEDENCE + 1000)",
    ),
    SpringFact(
        key="memory-default-order",
        section="7.1 and 7.5 (Across user turns, Default)",
        spec="MessageChatMemoryAdvisor at DEFAULT_CHAT_MEMORY_PRECEDENCE_ORDER = +200 ... memory wraps the "
        "tool loop",
        words="+200",
        finds=r"(?:memory advisor|MessageChatMemoryAdvisor)`?[^.\n]{0,60}?default order",
        source="Advisor.DEFAULT_CHAT_MEMORY_PRECEDENCE_ORDER, ~l. 39 (commit 933bfbbce3, 2026-06-05, 'place "
        "memory advisors outside ToolCallingAdvisor by default'); MessageChatMemoryAdvisor.Builder, ~l. 171",
    ),
    SpringFact(
        key="memory-outside-stores",
        section="7.5 (Across user turns, Default)",
        spec="Its before runs once per call and stores only the user message; its after stores the final "
        "assistant message. No tool response is stored",
        words="stores only the user message and the final answer",
        finds=r"stores? only (?:the )?user",
        source="MessageChatMemoryAdvisor.before, ~l. 102-104 (getLastUserOrToolResponseMessage) and after, "
        "~l. 136-148 (the response's generations), run once around the loop at +200",
    ),
    SpringFact(
        key="memory-reads-first",
        section="7.5 (MessageChatMemoryAdvisor.before)",
        spec="reads the memory first, then stores the new message: a request carries up to N stored messages "
        "plus the new one",
        words="reads memory first, then stores",
        finds=r"reads? (?:its |the )?memory (?:first|before)|before (?:it )?stores",
        source="MessageChatMemoryAdvisor.before, ~l. 77-104: chatMemory.get, then chatMemory.add",
    ),
    SpringFact(
        key="window-per-add",
        section="7.5 (MessageWindowChatMemory)",
        spec="trims on each add ... adding a turn's messages one at a time and all at once do not always "
        "give the same window",
        words="do not always give the same window",
        finds=r"at a time[^.\n]{0,80}at once|at once[^.\n]{0,80}at a time",
        source="MessageWindowChatMemory.add and process, ~l. 58-130 (the cut snapped to a user message)",
    ),
    SpringFact(
        key="window-default",
        section="7.5 (MessageWindowChatMemory)",
        spec="N = maxMessages, default 20",
        words="20 messages",
        finds=r"MessageWindowChatMemory`?[^.\n]{0,40}?(?:default|by default)",
        source="MessageWindowChatMemory.DEFAULT_MAX_MESSAGES, ~l. 45: 20",
    ),
    SpringFact(
        key="scan-own-instructions",
        section="7.5 (Which history is scanned)",
        spec="The scan runs in prepareIteration on chatClientRequest.prompt().getInstructions(): the "
        "messages the tool-search advisor itself holds",
        words="the messages the advisor holds",
        finds=r"extractToolNameReferences|prepareIteration",
        source="ToolSearchToolCallingAdvisor.prepareIteration, ~l. 245-272: "
        "extractToolNameReferences(chatClientRequest.prompt().getInstructions())",
    ),
    SpringFact(
        key="history-off-inside",
        section="7.5 (Across user turns, Memory inside the loop) and 7.9",
        spec="The auto-registered advisor gets conversationHistoryEnabled(!hasDownstreamMemoryAdvisor)",
        words="conversationHistoryEnabled(!hasDownstreamMemoryAdvisor)",
        finds=r"autoRegisterToolCallingAdvisor|hasDownstreamMemoryAdvisor",
        source="DefaultChatClient.autoRegisterToolCallingAdvisor, ~l. 1217-1237",
    ),
    SpringFact(
        key="last-message-only",
        section="7.5 (Memory inside the loop)",
        spec="the next iteration's instructions are [system, last history message]",
        words="[system, last message]",
        finds=r"doGetNextInstructionsForToolCall|\[system, last",
        source="ToolCallingAdvisor.doGetNextInstructionsForToolCall, ~l. 222-234",
    ),
    SpringFact(
        key="7034-in-turn",
        section="13 (#7034) and 7.5",
        spec="a discovered tool is missing from the next request after it executes. The model has to search "
        "again, for example to retry after a validation error",
        words="within the turn",
        finds=r"(?:#|spring-ai\W?|issue )7034",
        source="spring-ai issue #7034 (open, 2026-09-23); its cause read in "
        "ToolCallingAdvisor.doGetNextInstructionsForToolCall, ~l. 222-234",
        checked="not checked: the issue's Java reproduction was not run here (its cause was read in the "
        "source)",
    ),
)

BY_KEY = {fact.key: fact for fact in FACTS}


def spring_fact(key: str) -> str:
    """The words the course uses for Spring's fact ``key``."""
    if key not in BY_KEY:
        raise KeyError(f"no Spring fact {key!r}; known: {sorted(BY_KEY)}")
    return BY_KEY[key].words
