"""A small hand-made RunTrace: shows every UI without running anything, and gives tests a known run.

Five model requests: search for the time and the weather, call currentTime, search again, call clothing,
answer. ``accumulation=False`` drops earlier discoveries the way Spring's non-accumulating mode does.
Some text deliberately contains HTML, to prove the views escape it.
"""

from __future__ import annotations

from toolsearch_lab.loop.search_tool import TOOL_SEARCH_TOOL_NAME as TST
from toolsearch_lab.trace import (
    ANSWERED,
    Iteration,
    IterationTokens,
    RunTrace,
    SearchHit,
    SearchRecord,
    SessionEvent,
    TokenCount,
    ToolCallRecord,
)

SAMPLE_COSTS = {TST: 150, "currentTime": 40, "weather": 60, "clothing": 55}
FUNC_END = 12
SYSTEM, USER = 120, 30
BASELINE_TOOLS = 1_900  # 26 tools


def _tokens(exposed: list[str], messages: int, completion: int) -> IterationTokens:
    framing = 3 * (2 + messages // 40) + 3
    tools = sum(SAMPLE_COSTS[n] for n in exposed) + FUNC_END
    ts = TokenCount(SYSTEM, USER + messages, tools, framing, SYSTEM + USER + messages + tools + framing)
    base = TokenCount(
        SYSTEM - 40,
        USER + messages,
        BASELINE_TOOLS,
        framing,
        SYSTEM - 40 + USER + messages + BASELINE_TOOLS + framing,
    )
    return IterationTokens(ts, base, completion)


def sample_trace(accumulation: bool = True) -> RunTrace:
    exposed = [TST, "currentTime", "weather", "clothing"] if accumulation else [TST, "clothing"]
    return RunTrace(
        session_id="sample",
        model="hand-made",
        index="lucene",
        user_request="What should I wear in Landsmeer right now? <i>thanks</i>",
        catalog_size=26,
        config={"reference_tool_name_accumulation": accumulation},
        session_events=[
            SessionEvent("indexed", "sample", "0" * 64, 26, "first request", reason="first_request")
        ],
        iterations=[*_discovery_iterations(), *_answer_iterations(exposed)],
        final_answer="Wear a coat. <script>alert('answer')</script>",
        stop_reason=ANSWERED,
    )


def _discovery_iterations() -> list[Iteration]:
    """Requests 1-3: search for the time and the weather, call currentTime, search for what to wear."""
    q1 = "current time weather"
    q2 = "what to wear <script>alert('q')</script>"
    return [
        Iteration(
            1,
            [TST],
            [],
            [],
            None,
            [
                ToolCallRecord(
                    "c0", TST, f'{{"query": "{q1}", "maxResults": 3}}', "search", '["currentTime", "weather"]'
                )
            ],
            [SearchRecord("c0", q1, 3, None, [SearchHit("currentTime", 5.63), SearchHit("weather", 2.10)])],
            ["currentTime", "weather"],
            tokens=_tokens([TST], 0, 20),
        ),
        Iteration(
            2,
            [TST, "currentTime", "weather"],
            ["currentTime", "weather"],
            ["currentTime", "weather"],
            None,
            [ToolCallRecord("c1", "currentTime", '{"location": "Landsmeer"}', "tool", "2026-11-30T15:00")],
            tokens=_tokens([TST, "currentTime", "weather"], 60, 15),
        ),
        Iteration(
            3,
            [TST, "currentTime", "weather"],
            [],
            ["currentTime", "weather"],
            None,
            [ToolCallRecord("c2", TST, '{"query": "what to wear"}', "search", '["clothing"]')],
            [SearchRecord("c2", q2, None, None, [SearchHit("clothing", 3.02)])],
            ["clothing"],
            tokens=_tokens([TST, "currentTime", "weather"], 100, 18),
        ),
    ]


def _answer_iterations(exposed: list[str]) -> list[Iteration]:
    """Requests 4-5 with ``exposed`` sent: call clothing (its result contains HTML), then answer."""
    return [
        Iteration(
            4,
            exposed,
            ["clothing"],
            ["currentTime", "weather", "clothing"],
            None,
            [
                ToolCallRecord(
                    "c3",
                    "clothing",
                    '{"weather": "rain"}',
                    "tool",
                    "<b>coat</b> and <img src=x onerror=alert(1)>",
                )
            ],
            tokens=_tokens(exposed, 150, 14),
        ),
        Iteration(
            5,
            exposed,
            [],
            ["currentTime", "weather", "clothing"],
            "Wear a coat. <script>alert('answer')</script>",
            [],
            tokens=_tokens(exposed, 200, 12),
        ),
    ]
