"""Issue 23 (Reliability III), the loop side: one size limit on every tool message, BaseExceptions from
tools, evictions a run can see (and is protected from), strict-JSON traces, config and identity checks.

Run with ``-s`` to see the measured figures (docs/reliability.md quotes them).
"""

from __future__ import annotations

import json
import math
import sys
import threading
from datetime import timedelta

import pytest

from toolsearch_lab.catalog.mcp import McpToolError
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.config import PREFIX, ToolSearchConfig, parse_duration
from toolsearch_lab.loop.execution import bounded_error, cut_marker
from toolsearch_lab.loop.sessions import IndexedSessions
from toolsearch_lab.model import SearchRequest, Tool, session_key
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.session.eviction import (
    AlwaysEvict,
    CompositeEviction,
    LruEviction,
    NeverEvict,
    TtlEviction,
)
from toolsearch_lab.trace import RunTrace, SearchHit, SearchRecord

LIMIT = 1000
MARKER_ROOM = len(cut_marker(10**9)) + 1  # + 1: the marker's newline is two characters in JSON


def _search(query: str, call_id: str = "s1") -> ToolCall:
    return ToolCall(call_id, "toolSearchTool", json.dumps({"query": query}))


def _call(name: str, call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, name, "{}")


def _run_one(function, *, limit: int = LIMIT, name: str = "flakyTool"):
    tool = Tool(name, "a flaky tool", function=function)
    turns = [
        AssistantTurn(None, [_search("flaky")]),
        AssistantTurn(None, [_call(name)]),
        AssistantTurn("done"),
    ]
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_tool_result_chars=limit)
    result = advisor.run(ScriptedModel(turns), [{"role": "user", "content": "go"}], [tool], session_id="s")
    message = [m for m in result.messages if m["role"] == "tool"][-1]
    return result, message, result.trace.iterations[1].tool_calls[0]


# ---- 1. one size limit on every path to the model ------------------------------------------------------
HUGE_TEXTS = {
    "ascii": "x" * 3_000_000,
    "quotes and backslashes": '"\\' * 1_500_000,  # JSON escaping doubles every character
    "control characters": "\x01" * 600_000,  # each one becomes a 6-character \\u0001
    "non-ascii": "é" * 3_000_000,
}


@pytest.mark.parametrize("kind", sorted(HUGE_TEXTS))
@pytest.mark.parametrize("error_class", [RuntimeError, McpToolError])
def test_a_huge_exception_is_cut_to_the_result_limit_and_stays_valid_json(kind, error_class):
    text = HUGE_TEXTS[kind]

    def explode(**_):
        raise error_class(text)

    result, message, record = _run_one(explode)
    content = message["content"]
    assert len(content) <= LIMIT + MARKER_ROOM, len(content)
    error = json.loads(content)["error"]  # still an error result the model (and the loop) can read
    assert error.startswith(f"flakyTool raised {error_class.__name__}: ")
    assert "more characters cut by the advisor]" in error
    assert record.result == content and record.error == error  # the trace keeps the cut text too
    assert len(result.trace.to_json()) < 20 * LIMIT
    assert result.stop_reason == "answered"
    print(f"tool message for a 3 MB {error_class.__name__} ({kind}): {len(content):,} characters")


def test_every_error_path_goes_through_the_same_limit():
    # A model-made tool name of 1 MB lands in a "not available" error; a returned object whose str()
    # raises a huge error lands in the conversion error.
    class Hostile:
        def __str__(self):
            raise ValueError("y" * 1_000_000)

    advisor = ToolSearchAdvisor(RegexToolIndex(), max_tool_result_chars=LIMIT)
    tool = Tool("hostileTool", "returns a hostile object", function=lambda: {"v": Hostile()})
    turns = [
        AssistantTurn(None, [_call("n" * 1_000_000, "c0")]),
        AssistantTurn(None, [_search("hostile")]),
        AssistantTurn(None, [_call("hostileTool")]),
        AssistantTurn("done"),
    ]
    result = advisor.run(ScriptedModel(turns), [{"role": "user", "content": "go"}], [tool], session_id="s")
    contents = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert all(len(c) <= LIMIT + MARKER_ROOM for c in contents), [len(c) for c in contents]
    assert "is not available" in json.loads(contents[0])["error"]
    assert (
        "hostileTool returned a dict (it holds a Hostile), which is not JSON"
        in json.loads(contents[2])["error"]
    )
    assert all(len(e) < 2 * LIMIT for it in result.trace.iterations for e in it.errors)


def test_an_exception_whose_str_raises_is_reported_by_its_type():
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no")

    def tool(**_):
        raise Unprintable()

    _, message, _ = _run_one(tool)
    assert (
        json.loads(message["content"])["error"]
        == "flakyTool raised Unprintable: <str() of the exception failed>"
    )


def test_bounded_error_fits_for_any_limit():
    for limit in (1, 2, 10, 57, 1000):
        for text in HUGE_TEXTS.values():
            content, message = bounded_error(text[:50_000], limit)
            assert message.startswith(text[: min(limit, 50_000) // 6 - 13]) or limit < 100
            assert len(content) <= max(limit, len('{"error": ""}')) + MARKER_ROOM
            assert json.loads(content)["error"] == message


# ---- 2. BaseExceptions from a tool -------------------------------------------------------------------------
class CustomBase(BaseException):
    pass


@pytest.mark.parametrize(
    "raiser, expected",
    [
        (lambda: sys.exit(3), "flakyTool raised SystemExit: 3"),
        (lambda: sys.exit(), "flakyTool raised SystemExit"),
        (lambda: (_ for _ in ()).throw(GeneratorExit("stop")), "flakyTool raised GeneratorExit: stop"),
        (lambda: (_ for _ in ()).throw(CustomBase("x" * 10_000)), "flakyTool raised CustomBase: xxx"),
    ],
    ids=["sys.exit(3)", "sys.exit()", "GeneratorExit", "custom BaseException"],
)
def test_base_exceptions_from_a_tool_become_error_results_and_the_run_goes_on(raiser, expected):
    def tool(**_):
        raiser()

    result, message, record = _run_one(tool)
    assert result.stop_reason == "answered" and result.answer == "done"
    assert json.loads(message["content"])["error"].startswith(expected)
    assert record.kind == "tool" and record.error.startswith(expected)
    assert any(e.startswith("flakyTool: " + expected) for e in result.trace.iterations[1].errors)


def test_keyboard_interrupt_still_stops_the_run():
    def tool(**_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run_one(tool)


# ---- 3. evictions during a run -----------------------------------------------------------------------------
class GatedModel:
    """Asks for a search, then waits (``entered`` set, ``release`` awaited) before its next turn, so the test
    decides what happens to the session between the run's start and its search."""

    name = "gated"

    def __init__(self, query: str = "weather") -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        self.query = query

    def complete(self, messages, tools):
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            assert self.release.wait(30)
            return AssistantTurn(None, [_search(self.query)])
        return AssistantTurn("done")


def _weather_tools():
    return [Tool("get_weather", "current weather for a city"), Tool("send_email", "send an email")]


def _run_gated(advisor, session, interfere):
    """Start a gated run of ``session``, call ``interfere()`` while it waits on the model, then finish it."""
    model = GatedModel()
    out: dict = {}

    def go():
        out["result"] = advisor.run(
            model, [{"role": "user", "content": "weather?"}], _weather_tools(), session_id=session
        )

    thread = threading.Thread(target=go)
    thread.start()
    assert model.entered.wait(30)
    interfere()
    model.release.set()
    thread.join(30)
    return out["result"].trace


def _others(advisor, count):
    for i in range(count):
        advisor.run(
            ScriptedModel([AssistantTurn("ok")]),
            [{"role": "user", "content": "hi"}],
            _weather_tools(),
            session_id=f"other-{i}",
        )


def test_lru_does_not_evict_a_running_session_for_other_sessions():
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=LruEviction(2))
    trace = _run_gated(advisor, "live", lambda: _others(advisor, 10))
    assert trace.searches()[0].names == ["get_weather"]
    assert [e.kind for e in trace.session_events] == ["indexed"]  # nothing happened to it
    assert advisor.eviction.pinned() == 0  # the pin went with the run
    _others(advisor, 3)  # unpinned, it is evicted like any other session
    assert "live" not in advisor.eviction.tracked()


def test_spring_behaviour_is_an_option_and_the_trace_still_says_what_happened():
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=LruEviction(2), protect_running_sessions=False)
    trace = _run_gated(advisor, "live", lambda: _others(advisor, 10))
    assert trace.searches()[0].names == []  # Spring: the search of an evicted session finds nothing
    event = trace.session_events[-1]
    assert event.kind == "evicted_during_run" and event.iteration == 1
    assert "evicted by LruEviction(max_sessions=2) during the run" in event.detail
    assert trace.config["protect_running_sessions"] is False


@pytest.mark.parametrize("how", ["evict_session", "AlwaysEvict from a second request"])
def test_a_session_evicted_during_its_run_is_reindexed_before_the_search(how):
    eviction = AlwaysEvict() if how != "evict_session" else NeverEvict()
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=eviction)

    def interfere():
        if how == "evict_session":
            advisor.evict_session("live")
        else:  # the second request evicts and re-indexes the session with other tools
            advisor.run(
                ScriptedModel([AssistantTurn("ok")]),
                [{"role": "user", "content": "hi"}],
                [Tool("other_tool", "something else")],
                session_id="live",
            )

    trace = _run_gated(advisor, "live", interfere)
    assert trace.searches()[0].names == ["get_weather"]
    event = trace.session_events[-1]
    assert event.kind == "reindexed" and event.tool_count == 2 and event.iteration == 1
    assert "re-indexed before the next search" in event.detail


def test_ttl_does_not_count_a_running_session_as_idle():
    now = [0.0]
    ttl = TtlEviction(10, clock=lambda: now[0])
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=CompositeEviction(LruEviction(100), ttl))

    def later():
        now[0] = 100.0
        _others(advisor, 1)

    trace = _run_gated(advisor, "live", later)
    assert trace.searches()[0].names == ["get_weather"]
    assert [e.kind for e in trace.session_events] == ["indexed"]
    now[0] = 105.0  # idle from its unpin at 100: not expired yet
    assert ttl.on_access("other-0") == set()


class SlowModel:
    """Searches, then answers; sleeps between (the slow thread of the issue: others arrive meanwhile)."""

    name = "slow"

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self.calls = 0

    def complete(self, messages, tools):
        self.calls += 1
        if self.calls == 1:
            threading.Event().wait(self.pause)
            return AssistantTurn(None, [_search("weather")])
        return AssistantTurn("done")


def _stress(protect: bool, threads: int = 16, sessions_per_thread: int = 25, lru: int = 4):
    """16 threads, each running its own sessions one after another, against an LRU far smaller than the
    number of live sessions; thread 0 is slow. Returns (runs, runs whose search lost the tools, runs whose
    trace says it was evicted mid-run)."""
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=LruEviction(lru), protect_running_sessions=protect)
    traces: list[RunTrace] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for s in range(sessions_per_thread):
                model = SlowModel(0.004 if t == 0 else 0.0005)
                result = advisor.run(
                    model,
                    [{"role": "user", "content": "weather?"}],
                    _weather_tools(),
                    session_id=f"t{t}-s{s}",
                )
                with lock:
                    traces.append(result.trace)
        except BaseException as exc:  # noqa: BLE001  (reported by the test)
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(120)
    assert not errors, errors
    lost = [t for t in traces if t.searches()[0].names != ["get_weather"]]
    explained = [
        t for t in lost if any(e.kind in ("evicted_during_run", "reindexed") for e in t.session_events)
    ]
    return len(traces), len(lost), len(explained)


def test_sixteen_threads_no_run_loses_its_tools_silently():
    runs, lost, _ = _stress(protect=True)
    assert runs == 16 * 25 and lost == 0
    runs_spring, lost_spring, explained_spring = _stress(protect=False)
    assert runs_spring == 16 * 25
    assert lost_spring == explained_spring  # Spring's behaviour may lose tools, but never silently
    print(f"16 threads x 25 sessions, LRU(4), protected: {lost}/{runs} runs lost their tools")
    print(
        f"same, protect_running_sessions=False (Spring): {lost_spring}/{runs_spring} lost, "
        f"{explained_spring} of them with an evicted_during_run event"
    )


def test_an_eviction_right_after_indexing_is_reported_to_the_run():
    # The run holds the generation its own indexing made, so an eviction landing before its first search
    # (from another thread, under load) is told apart from "never indexed" and reaches the trace.
    sessions = IndexedSessions(RegexToolIndex(), LruEviction(4))
    events, generation = sessions.initialize_run("live", _weather_tools())
    assert [e.kind for e in events] == ["indexed"] and generation > 0
    sessions.evict("live", "eviction_strategy", "evicted by another thread")
    held, event = sessions.restore("live", _weather_tools(), generation, reindex=False)
    assert held == 0 and event is not None and event.kind == "evicted_during_run"
    assert "evicted by another thread during the run" in event.detail


# ---- 4. traces with NaN scores, schemas with NaN -----------------------------------------------------------
def _strict_loads(text: str):
    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_a_trace_with_nan_and_infinite_scores_is_written_as_strict_json_and_round_trips():
    trace = RunTrace("s", "m", "regex", "q", 1)
    trace.session_events = []
    from toolsearch_lab.trace import Iteration

    iteration = Iteration(1, [], [], [])
    iteration.searches.append(
        SearchRecord(
            "c", "q", 3, hits=[SearchHit("a", math.nan), SearchHit("b", math.inf), SearchHit("c", 0.5)]
        )
    )
    iteration.model_ms = -math.inf
    trace.iterations.append(iteration)
    text = trace.to_json()
    data = _strict_loads(text)
    assert [h["score"] for h in data["iterations"][0]["searches"][0]["hits"]] == [None, None, 0.5]
    again = RunTrace.from_json(text)
    assert again.to_json() == text and again.iterations[0].searches[0].hits[2].score == 0.5
    clean = RunTrace.from_json(text)
    assert RunTrace.from_json(clean.to_json()) == clean  # finite traces round-trip exactly


def test_a_nan_in_a_schema_is_refused_naming_the_tool_and_the_field():
    # refused when the Tool is built, so no advisor (or export) ever meets one
    with pytest.raises(ValueError, match=r"tool 'bad_tool': parameters\.properties\.n\.maximum is nan"):
        Tool(
            "bad_tool", "d", {"type": "object", "properties": {"n": {"type": "number", "maximum": math.nan}}}
        )


# ---- 5. config and identity --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, value, fragment",
    [
        ("eviction.ttl", "999999999999d", "eviction.ttl='999999999999d' is longer than the longest duration"),
        ("eviction.ttl", "P999999999999D", "is longer than the longest duration"),
        ("eviction.ttl", "9" * 40 + "s", "must be a duration like"),
        ("session-id-key-name", None, "session-id-key-name must be non-blank text, got None"),
        ("session-id-key-name", 5, "session-id-key-name must be non-blank text, got 5"),
        ("session-id-key-name", "  ", "session-id-key-name must be non-blank text"),
        ("max-results", "1e20", "max-results must be an integer, got '1e20'"),
        ("max-results", 1e20, "max-results must be an integer, got 1e+20"),
        ("max-results", "100000000000000000000", "max-results must be an integer from 1 to 2,147,483,647"),
        ("max-results", "9" * 5000, "max-results must be an integer from 1 to"),
        ("max-results", "1_000", "max-results must be an integer"),
        ("max-results", "0", "max-results must be a positive integer or None, got 0"),
        ("max-results", "-3", "max-results must be a positive integer or None, got -3"),
        ("eviction.lru-max-sessions", str(2**31), "lru-max-sessions must be an integer from 1 to"),
    ],
)
def test_bad_spring_properties_are_refused_naming_the_property(name, value, fragment):
    with pytest.raises(ValueError) as info:
        ToolSearchConfig.from_spring_properties({PREFIX + name: value})
    assert fragment in str(info.value)
    assert PREFIX + name in str(info.value) or name in str(info.value)


def test_the_longest_supported_ttl_still_works():
    assert parse_duration("999999999d") == timedelta(days=999_999_999)
    with pytest.raises(ValueError, match="ToolSearchConfig.session_id_key must be non-blank text, got None"):
        ToolSearchConfig(session_id_key=None)  # type: ignore[arg-type]


class ForgedId(str):
    """A session id that claims to equal, and hash like, any other session's id."""

    def __hash__(self):
        return hash("victim")

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __str__(self):
        return "victim"

    def strip(self, *args):
        return "not blank"


def test_a_forged_str_session_id_becomes_a_plain_str_at_every_edge():
    plain = session_key(ForgedId("attacker"))
    assert type(plain) is str and plain == "attacker" and plain != "victim"

    index = RegexToolIndex()
    advisor = ToolSearchAdvisor(index)
    advisor.run(
        ScriptedModel([AssistantTurn("ok")]),
        [{"role": "user", "content": "x"}],
        [Tool("victim_secret_tool", "weather for the victim")],
        session_id="victim",
    )
    turns = [AssistantTurn(None, [_search("weather")]), AssistantTurn("done")]
    for how in ("session_id", "context"):
        kwargs = (
            {"session_id": ForgedId("attacker")}
            if how == "session_id"
            else {"context": {"chat_memory_conversation_id": ForgedId("attacker")}}
        )
        result = advisor.run(
            ScriptedModel(list(turns)),
            [{"role": "user", "content": "x"}],
            [Tool("attacker_tool", "weather for the attacker")],
            **kwargs,
        )
        assert type(result.trace.session_id) is str and result.trace.session_id == "attacker"
        assert result.trace.searches()[0].names == ["attacker_tool"]
    assert advisor.fingerprint_of(ForgedId("victim")) == advisor.fingerprint_of("victim")
    assert index.search(SearchRequest("victim", "weather")).tool_names == ["victim_secret_tool"]
    # A request carrying the forged id is keyed by the index, so it reaches the attacker's session only.
    assert index.search(SearchRequest(ForgedId("attacker"), "weather")).tool_names == ["attacker_tool"]


def test_a_registered_tool_named_like_the_meta_tool_or_twice_is_refused_naming_positions():
    advisor = ToolSearchAdvisor(RegexToolIndex())

    def go(tools):
        return advisor.run(
            ScriptedModel([AssistantTurn("ok")]), [{"role": "user", "content": "x"}], tools, session_id="s"
        )

    with pytest.raises(ValueError, match=r"tools\[1\] may not be named 'toolSearchTool'"):
        go([Tool("a", "d"), Tool("toolSearchTool", "mine")])
    with pytest.raises(ValueError, match=r"tools\[0\] and tools\[2\] are both named 'dup'"):
        go([Tool("dup", "first"), Tool("b", "d"), Tool("dup", "second")])
    with pytest.raises(ValueError, match=r"tools\[0\] and tools\[1\] are both named 'dup'"):
        go([Tool("dup", "same", function=print), Tool("dup", "same", function=len)])
    same = Tool("dup", "same")
    assert go([same, same]).trace.catalog_size == 1  # one tool listed twice is still one tool


# ---- 6. the embedder's retries reach the trace -------------------------------------------------------------
def test_the_embedders_429_retries_are_in_the_search_record_and_the_trace(httpserver):
    from werkzeug import Response

    from toolsearch_lab.embed.openai import OpenAIEmbedder
    from toolsearch_lab.index.vector import VectorToolIndex

    def reply(request):
        body = json.loads(request.data)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 1.0, 2.0]}
            for i, t in enumerate(body["input"])
        ]
        return Response(
            json.dumps({"object": "list", "data": data, "model": "m"}), content_type="application/json"
        )

    limited = Response(
        json.dumps({"error": {"message": "slow down"}}),
        status=429,
        headers={"retry-after-ms": "10"},
        content_type="application/json",
    )
    httpserver.expect_ordered_request("/v1/embeddings").respond_with_handler(reply)  # the tools
    httpserver.expect_ordered_request("/v1/embeddings").respond_with_response(limited)  # the query, twice
    httpserver.expect_ordered_request("/v1/embeddings").respond_with_response(limited)
    httpserver.expect_ordered_request("/v1/embeddings").respond_with_handler(reply)
    embedder = OpenAIEmbedder(
        "m", base_url=httpserver.url_for("/v1"), api_key="sk-embed-secret", max_retries=3
    )
    advisor = ToolSearchAdvisor(VectorToolIndex(embedder, min_score_threshold=0.0))
    turns = [AssistantTurn(None, [_search("weather in a city")]), AssistantTurn("done")]
    result = advisor.run(
        ScriptedModel(turns), [{"role": "user", "content": "x"}], _weather_tools(), session_id="s"
    )
    httpserver.check_assertions()
    record = result.trace.searches()[0]
    assert record.names and record.error is None
    assert [(r.attempt, r.status, r.error) for r in record.retries] == [
        (1, 429, "HTTP 429"),
        (2, 429, "HTTP 429"),
    ]
    assert all("answered HTTP 429 (retry-after 10)" in r.message for r in record.retries)
    assert all(r.wait_s >= 0 for r in record.retries) and embedder.retried == 2
    assert result.trace.summary()["retries"] == 2 and "sk-embed-secret" not in result.trace.to_json()
    again = RunTrace.from_json(result.trace.to_json())
    assert again.searches()[0].retries == record.retries


def test_the_config_carries_the_spring_eviction_option():
    assert ToolSearchConfig().build_advisor().settings.protect_running_sessions is True
    advisor = ToolSearchConfig(protect_running_sessions=False).build_advisor()
    assert advisor.settings.protect_running_sessions is False
    assert advisor.config_summary()["protect_running_sessions"] is False


def test_a_huge_search_error_is_cut_once_and_stays_valid_json():
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_tool_result_chars=LIMIT)
    turns = [
        AssistantTurn(None, [ToolCall("s1", "toolSearchTool", json.dumps({"query": 5, "q" * 5000: 1}))]),
        AssistantTurn("done"),
    ]
    result = advisor.run(
        ScriptedModel(turns), [{"role": "user", "content": "x"}], _weather_tools(), session_id="s"
    )
    content = [m["content"] for m in result.messages if m["role"] == "tool"][0]
    assert LIMIT < len(content) <= LIMIT + MARKER_ROOM
    error = json.loads(content)["error"]
    assert error.startswith("toolSearchTool: unknown argument(s)") and error.endswith("cut by the advisor]")
    assert result.trace.searches()[0].error == error == result.trace.iterations[0].tool_calls[0].error
