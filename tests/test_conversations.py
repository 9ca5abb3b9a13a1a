"""Conversations: chat memory (Spring's MessageWindowChatMemory rule, compaction), where found tools live
(history vs session), the trace's turns, conversation scenarios graded turn by turn, and pinning."""

from __future__ import annotations

import json

import pytest
from chat_support import a, s, u

from toolsearch_lab.eval.compare import compare, comparison_rows, run_strategy
from toolsearch_lab.eval.pins import recommend_pins
from toolsearch_lab.eval.requests import turn_costs
from toolsearch_lab.eval.scenarios import load_scenario, run_scenario, scenario_from_dict
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.conversation import Conversation
from toolsearch_lab.loop.memory import (
    SUMMARY_HEADER,
    Compaction,
    FullHistory,
    MessageWindow,
    parse_memory,
)
from toolsearch_lab.loop.pinning import Pinned
from toolsearch_lab.loop.run import TurnReading
from toolsearch_lab.loop.strategies import SearchOnly, make_strategy
from toolsearch_lab.loop.strategy import RequestView
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.models.simulated import SimulatedAgent
from toolsearch_lab.session.eviction import LruEviction
from toolsearch_lab.trace import RunTrace


# ---- Spring's MessageWindowChatMemory, its own tests (MessageWindowChatMemoryTests.java) -----------------
def test_window_keeps_whole_turns_as_springs_tests_say():
    window = MessageWindow(2)
    five = [u("Message 1"), a("Response 1"), u("Message 2"), a("Response 2"), u("Message 3")]
    assert window.add([], five).messages == [u("Message 3")]  # customMaxMessages: the cut snaps to a user
    first = window.add([], [u("Message 1"), a("Response 1")]).messages
    assert window.add(first, [u("Message 2"), a("Response 2")]).messages == [u("Message 2"), a("Response 2")]
    six = [u("Question 1"), a("Answer 1"), u("Question 2"), a("Answer 2"), u("Question 3"), a("Answer 3")]
    assert MessageWindow(3).add([], six).messages == [u("Question 3"), a("Answer 3")]
    assert MessageWindow(4).add([], six).messages == six[2:]  # the raw cut lands on a user: no snapping
    steps = [u("Question 1"), a("Step 1"), a("Step 2"), a("Final answer"), u("Question 2"), a("Answer 2")]
    assert MessageWindow(4).add([], steps).messages == [u("Question 2"), a("Answer 2")]


def test_window_system_messages_as_springs_tests_say():
    kept = MessageWindow(3).add(
        [s("System instruction"), u("Message 1"), a("Response 1")], [u("M2"), a("R2")]
    )
    assert kept.messages == [s("System instruction"), u("M2"), a("R2")]
    assert [m["role"] for m in kept.dropped] == ["user", "assistant"]
    two = [s("S1"), s("S2")]
    # Two system messages take 2 of 3 slots and one slot cannot hold a turn: every non-system message goes.
    assert MessageWindow(3).add([*two, u("M1"), a("R1")], [u("M2"), a("R2")]).messages == two
    assert MessageWindow(2).add(two, [u("Hello"), a("Hi"), u("Again")]).messages == two  # no exception
    assert MessageWindow(2).add(two, [s("S3")]).messages == [s("S3")]  # a new system message replaces them
    assert MessageWindow(2).add(two, [u("Message 1"), a("Response 1")]).messages == two
    assert MessageWindow().max_messages == 20  # DEFAULT_MAX_MESSAGES


def test_memory_specs_and_their_errors_name_what_is_wrong():
    assert isinstance(parse_memory(None), FullHistory) and parse_memory("full").describe() == "full"
    assert parse_memory("window").describe() == "window:20"
    assert (
        parse_memory(" window:6 ").describe() == "window:6"
        and parse_memory("compact:8").describe() == "compact:8"
    )
    for bad, match in [
        ("window:0", "N must be a whole number"),
        ("window:-2", "N must be a whole number"),
        ("window:six", "N must be a whole number"),
        ("sliding:3", "unknown kind 'sliding'"),
        ("full:3", "takes no number"),
        ("compact", "give the number of messages"),
        ("compact:1", "at least 2"),
        (6, "must be 'full', 'window:N' or 'compact:N'"),
    ]:
        with pytest.raises(ValueError, match=match):
            parse_memory(bad)
    with pytest.raises(ValueError, match="max_messages must be a positive integer"):
        MessageWindow(0)


def _search_turn(user, query, found, tool, result="ok"):
    return [
        u(user),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("s1", "toolSearchTool", {"query": query})],
        },
        {"role": "tool", "tool_call_id": "s1", "name": "toolSearchTool", "content": json.dumps(found)},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", tool, {"issue_number": 42})]},
        {"role": "tool", "tool_call_id": "c1", "name": tool, "content": result},
        a(f"Done with {tool}."),
    ]


def _call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_compaction_summarises_older_turns_into_one_message_without_their_search_results():
    turn1 = _search_turn("Read issue 42", "read issue", ["issue_read", "list_issues"], "issue_read")
    turn2 = _search_turn("Comment on it", "add comment", ["add_issue_comment"], "add_issue_comment")
    update = Compaction(4).add([*turn1, *turn2], [u("Same for 57")])
    summary = update.summary["content"]
    assert update.messages[0] == update.summary and update.messages[-1] == u("Same for 57")
    assert summary.startswith(SUMMARY_HEADER)
    assert '"Read issue 42"' in summary and "issue_read(issue_number=42)" in summary
    assert '"Comment on it"' in summary and "add_issue_comment(issue_number=42)" in summary
    assert not any(m.get("role") == "tool" for m in update.messages)  # no search result left to read back
    assert len(update.messages) == 2 and update.summarised == [*turn1, *turn2]
    # The next compaction carries the earlier summary's lines over instead of summarising the summary.
    again = Compaction(3).add(update.messages, [a("ok"), u("And close it")])
    assert '"Read issue 42"' in again.summary["content"] and again.messages[-1] == u("And close it")
    # Under the limit nothing changes.
    assert Compaction(20).add(turn1, [u("x")]).summary is None


# ---- history vs session, the loss on screen -------------------------------------------------------------
@pytest.fixture(scope="module")
def support():
    return load_scenario("support-conversation")


def test_the_judged_run_history_loses_the_tool_turn_3_found_and_session_keeps_it(support):
    history = run_scenario(support, accumulation=False, memory="window:6", accumulation_source="history")
    session = run_scenario(support, accumulation=False, memory="window:6", accumulation_source="session")
    assert [o.success for o in history.steps] == [True, True, True, False, True]
    assert all(o.success for o in session.steps) and session.grade.success
    fourth = history.trace.turns[3]
    assert "add_issue_comment" in fourth.lost and fourth.carried == []
    assert "add_issue_comment" in fourth.memory.search_results_removed
    assert fourth.memory.kept == 1 and fourth.memory.given == 7  # the window kept only the new message
    assert session.trace.turns[3].lost == [] and "add_issue_comment" in session.trace.turns[3].carried
    # Session mode picks the comment tool it holds without searching; history searched and found a look-alike.
    assert history.trace.turn_trace(4).called_tools() != ["add_issue_comment"]
    assert session.trace.turn_trace(4).called_tools() == ["add_issue_comment"]
    assert not session.trace.turn_trace(4).searches()


def test_with_full_memory_both_sources_send_the_same_requests(support):
    history = run_scenario(support, memory="full", accumulation_source="history")
    session = run_scenario(support, memory="full", accumulation_source="session")
    assert history.trace.tokens_total() == session.trace.tokens_total()
    assert [it.exposed_tools for it in history.trace.iterations] == [
        it.exposed_tools for it in session.trace.iterations
    ]


def test_an_evicted_session_forgets_its_record_and_the_next_turn_says_what_it_lost(support):
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=LruEviction(1))
    agent = SimulatedAgent(turns=support.agent_turns())
    chat = Conversation(
        advisor, agent, support.tools, session_id="mine", memory="window:6", system=support.system
    )
    messages = support.user_messages()
    chat.send(messages[0])
    assert advisor.found_groups("mine") == list(chat.results[0].found) != []
    advisor.run(ScriptedModel([AssistantTurn("hi")]), [u("hello")], support.tools, session_id="another")
    assert advisor.found_groups("mine") == []  # LRU(1) evicted it, record and index together
    chat.send(messages[1])
    second = chat.trace.turns[1]
    assert second.lost and second.carried == []
    events = [(e.kind, e.reason) for e in chat.trace.session_events if e.turn == 2 and e.session_id == "mine"]
    assert events == [("indexed", "after_eviction")]


def test_bad_chat_arguments_are_refused_before_anything_runs(support):
    advisor = ToolSearchAdvisor(RegexToolIndex())
    agent = SimulatedAgent(turns=support.agent_turns())
    with pytest.raises(ValueError, match="non-empty list of messages"):
        Conversation(advisor, agent, support.tools, session_id="x").send_all("one string")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-blank text"):
        Conversation(advisor, agent, support.tools, session_id="x").send_all(["  "])
    with pytest.raises(ValueError, match="unknown kind 'tiny'"):
        Conversation(advisor, agent, support.tools, session_id="x", memory="tiny:2")
    with pytest.raises(ValueError, match="accumulation_source must be one of"):
        ToolSearchAdvisor(RegexToolIndex(), accumulation_source="memory")
    with pytest.raises(ValueError, match="memory apply to conversation scenarios"):
        run_scenario("github", memory="window:6")
    with pytest.raises(ValueError, match="memory_advisor apply to conversation scenarios"):
        run_scenario("github", memory_advisor="outside")
    with pytest.raises(ValueError, match="memory_advisor must be one of"):
        Conversation(advisor, agent, support.tools, memory_advisor="middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="compaction rewrites whole turns"):
        Conversation(advisor, agent, support.tools, memory="compact:6", memory_advisor="inside")


# ---- the turn API ------------------------------------------------------------------------------------------
def test_a_turn_records_what_it_found_and_the_session_reading_brings_it_back():
    tools = [Tool("weatherTool", "Get the weather for a city", function=lambda **_: "sunny")]
    search = ToolCall("s1", "toolSearchTool", json.dumps({"query": "weather"}))
    call = ToolCall("c1", "weatherTool", "{}")
    advisor = ToolSearchAdvisor(RegexToolIndex())
    session = TurnReading.of("session")
    assert (session, TurnReading.of("history", False)) == (
        TurnReading("turn", True),
        TurnReading("all", history=False),
    )
    model = ScriptedModel([AssistantTurn(None, [search]), AssistantTurn("found it")])
    first = advisor.run(model, [u("weather?")], tools, session_id="s", turn=session)
    assert first.found == (("weatherTool",),) and advisor.found_groups("s") == [("weatherTool",)]
    kinds = {}
    for reading in (session, TurnReading.of("history")):
        model = ScriptedModel([AssistantTurn(None, [call]), AssistantTurn("sunny")])
        second = advisor.run(model, [u("and now?")], tools, session_id="s", turn=reading)
        kinds[reading.session_record] = second.trace.iterations[0].tool_calls[0].kind
        assert second.found == ()
    assert kinds == {True: "tool", False: "rejected"}  # only the record holds the first turn's search
    assert advisor.found_groups("s") == [("weatherTool",)]  # recorded once, by the turn that found it
    with pytest.raises(ValueError, match="TurnReading.scan must be one of"):
        TurnReading("everything")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="turn must be a TurnReading or None, got str"):
        advisor.run(ScriptedModel([]), [u("x")], tools, session_id="s", turn="turn")  # type: ignore[arg-type]


def test_a_plain_run_reads_its_messages_only_and_leaves_the_record_alone():
    advisor = ToolSearchAdvisor(RegexToolIndex())
    search = ToolCall("s1", "toolSearchTool", json.dumps({"query": "weather"}))
    tools = [Tool("weatherTool", "Get the weather for a city")]
    result = advisor.run(
        ScriptedModel([AssistantTurn(None, [search]), AssistantTurn("ok")]), [u("w")], tools, session_id="s"
    )
    assert result.found == (("weatherTool",),) and advisor.found_groups("s") == []


# ---- the trace --------------------------------------------------------------------------------------------
def test_a_conversation_trace_round_trips_and_older_traces_still_load(support):
    trace = run_scenario(support, memory="compact:6", accumulation_source="history").trace
    assert [it.number for it in trace.iterations] == list(range(1, len(trace.iterations) + 1))
    assert {it.turn for it in trace.iterations} == {1, 2, 3, 4, 5}
    assert [s.turn for s in trace.steps] == [1, 2, 3, 4, 5]
    again = RunTrace.from_json(trace.to_json())
    assert again == trace and again.turns[3].memory.summary.startswith(SUMMARY_HEADER)
    part = trace.turn_trace(4)
    assert part.user_request == support.turns[3].user and all(it.turn == 4 for it in part.iterations)
    assert [t["turn"] for t in trace.summary()["turns"]] == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="has no turn 9"):
        trace.turn_trace(9)
    old = json.loads(run_scenario("spring-demo").trace.to_json())
    old["version"] = 2
    for it in old["iterations"]:
        del it["turn"]
    for key in ("turns",):
        del old[key]
    loaded = RunTrace.from_dict(old)
    assert loaded.turns == [] and all(it.turn is None for it in loaded.iterations)
    bad = json.loads(trace.to_json())
    bad["turns"][0]["memory"]["given"] = None
    bad["turns"][0]["color"] = "red"
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['color'\] for TurnRecord"):
        RunTrace.from_dict(bad)


# ---- scenarios and the agents -----------------------------------------------------------------------------
def _conversation(**changes):
    raw = {
        "name": "mini",
        "catalog": "github-mcp",
        "turns": [
            {
                "user": "Read issue 42",
                "steps": [{"need": "read information about issue 42", "expected_tools": ["issue_read"]}],
            },
            {
                "user": "Comment on it",
                "steps": [{"need": "add a comment to an issue", "expected_tools": ["add_issue_comment"]}],
            },
        ],
    }
    raw.update(changes)
    return raw


def test_conversation_scenario_format_checks_name_the_fault():
    sc = scenario_from_dict(_conversation())
    assert sc.is_conversation and sc.user_messages() == ["Read issue 42", "Comment on it"]
    assert sc.user_request == "Read issue 42" and [s.need for s in sc.steps] == [
        t.steps[0].need for t in sc.turns
    ]
    assert sc.agent_turns()[1] == {
        "user": "Comment on it",
        "steps": [{"need": "add a comment to an issue", "data": {}}],
    }
    cases = [
        ({"steps": []}, r"has 'turns' instead of \['steps'\]"),
        ({"turns": []}, "needs at least one turn"),
        ({"turns": [{"user": "x", "steps": []}]}, r"turns\[0\]: needs at least one step"),
        ({"turns": [{"user": " ", "steps": [{"need": "n", "expected_tools": []}]}]}, "non-blank text"),
        ({"turns": [{"user": "x", "steps": [{"need": "n", "expected_tools": []}]}] * 2}, "no other turn has"),
        (
            {"turns": [{"user": "x", "steps": [{"need": "n", "expected_tools": ["nope"]}]}]},
            r"\['nope'\] are not in",
        ),
        ({"turns": ["x"]}, r"turns\[0\]: expected an object"),
    ]
    for change, match in cases:
        with pytest.raises(ValueError, match=match):
            scenario_from_dict(_conversation(**change))


def test_grading_is_per_turn_a_later_call_does_not_do_an_earlier_turns_step():
    sc = scenario_from_dict(_conversation())
    script = [
        AssistantTurn("I will not read it."),  # turn 1: no tool at all
        AssistantTurn(None, [ToolCall("c", "issue_read", "{}")]),  # turn 2 calls turn 1's tool
        AssistantTurn("done"),
    ]
    advisor = ToolSearchAdvisor(RegexToolIndex())
    run = run_scenario(sc, model=ScriptedModel(script), advisor=advisor)
    assert [o.success for o in run.steps] == [False, False] and [o.turn for o in run.steps] == [1, 2]
    assert run.grade.missing == ["issue_read", "add_issue_comment"]


def test_a_conversation_agent_answers_a_message_it_has_no_turn_for_and_needs_turns_or_steps():
    agent = SimulatedAgent(turns=[{"user": "hi", "steps": [{"need": "say hi"}]}])
    assert "no task for this message" in agent.complete([u("something else")], []).content
    with pytest.raises(ValueError, match="repeats an earlier user message"):
        SimulatedAgent(
            turns=[{"user": "a", "steps": [{"need": "x"}]}, {"user": "a", "steps": [{"need": "y"}]}]
        )
    with pytest.raises(ValueError, match="at least one step"):
        SimulatedAgent(turns=[])
    with pytest.raises(ValueError, match="steps .one request. or turns, not both"):
        SimulatedAgent([{"need": "x"}], turns=[{"user": "a", "steps": [{"need": "y"}]}])


# ---- pinning ----------------------------------------------------------------------------------------------
def test_pinned_tools_lead_every_tools_array_and_an_unknown_pin_is_refused(support):
    run = run_strategy(
        support, "pinned", pinned=["add_issue_comment"], memory="window:6", accumulation_source="history"
    )
    assert all(it.exposed_tools[:2] == ["toolSearchTool", "add_issue_comment"] for it in run.trace.iterations)
    assert run.run.grade.success  # always loaded, so the window cannot take it away
    with pytest.raises(ValueError, match=r"\['no_such_tool'\] are not in the catalog"):
        run_strategy(support, "pinned", pinned=["no_such_tool"])
    with pytest.raises(ValueError, match="needs pinned="):
        make_strategy("pinned")
    with pytest.raises(ValueError, match="only it takes them"):
        make_strategy("search-only", pinned=["issue_read"])
    with pytest.raises(ValueError, match="distinct non-blank"):
        Pinned(SearchOnly(), ["a", "a"])
    with pytest.raises(ValueError, match="offers search"):
        Pinned(make_strategy("all-tools"), ["a"])
    search = {"role": "tool", "name": "toolSearchTool", "content": json.dumps(["issue_read"])}
    view = RequestView([u("read 42"), a("searching"), search], {t.name: t for t in support.tools})
    assert Pinned(SearchOnly(), []).plan(view) == SearchOnly().plan(view)  # no pins: the inner strategy
    assert Pinned(SearchOnly(), ["list_issues"]).plan(view).tools_array == ["list_issues", "issue_read"]


def test_recommend_pins_pins_what_most_sessions_used_and_says_why():
    runs = [run_scenario(n, accumulation=True) for n in ("github", "github-user", "github-bugfix-week")]
    tools = load_scenario("github").tools
    advice = recommend_pins([r.trace for r in runs], tools, cached_ratio=0.25)
    by_tool = {a.tool: a for a in advice.advice}
    assert advice.pinned and len(advice.pinned) <= 5
    for name in advice.pinned:
        assert by_tool[name].share >= 0.5 and by_tool[name].net > 0 and by_tool[name].why.startswith("pin:")
    rare = [a for a in advice.advice if a.share < 0.5]
    assert rare and all(not a.pin and "only called in" in a.why for a in rare)
    costly = recommend_pins([r.trace for r in runs], tools, cached_ratio=1.0, max_pins=1)
    assert len(costly.pinned) <= 1
    for bad, match in [
        ({"max_pins": 0}, "max_pins must be a positive integer"),
        ({"min_share": 0}, r"min_share must be in \(0, 1\]"),
        ({"cached_ratio": 2}, r"cached_ratio must be in \[0, 1\]"),
    ]:
        with pytest.raises(ValueError, match=match):
            recommend_pins([r.trace for r in runs], tools, **bad)
    with pytest.raises(ValueError, match="at least one trace"):
        recommend_pins([], tools)


# ---- compare: the memory dimension, per-turn bills ------------------------------------------------------
def test_compare_adds_memory_and_source_rows_for_a_conversation_and_bills_each_turn(support):
    runs = compare(
        support, ["search-only-no-accumulation"], memories=["window:6"], sources=["history", "session"]
    )
    rows = comparison_rows(runs)
    assert [(r["memory"], r["accumulation_source"], r["steps_succeeded"]) for r in rows] == [
        ("window:6", "history", 4),
        ("window:6", "session", 5),
    ]
    bills = turn_costs(runs[0].trace, runs[0].costs)
    assert [b["turn"] for b in bills] == [1, 2, 3, 4, 5]
    assert sum(b["cost_usd"] for b in bills) == pytest.approx(rows[0]["cost_usd"])
    assert sum(b["prompt_tokens"] for b in bills) == rows[0]["prompt_tokens"]
    assert bills[3]["steps_succeeded"] == 0 and "add_issue_comment" in bills[3]["lost"]
    with pytest.raises(ValueError, match="one user request"):
        compare("spring-demo", ["all-tools"], memories=["full"])
    with pytest.raises(ValueError, match="unknown kind"):
        compare(support, ["all-tools"], memories=["half"])
