"""Properties (issue 6): session isolation under concurrency, fingerprint invariants, and generated advisor
runs whose traces round-trip through JSON and whose loops always end within their limits."""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.session.eviction import LruEviction, NeverEvict
from toolsearch_lab.session.fingerprint import fingerprint
from toolsearch_lab.trace import FailureKind, RunTrace

# The slow tier (`make test-slow`): long generated runs and contended threads.
pytestmark = pytest.mark.slow


def prop_settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ================================================================ session isolation (8 threads)


class HashEmbedder:
    """Deterministic bag-of-words hashing embedder: cheap, so isolation runs do not wait on a model."""

    name = "hash-test-embedder"
    dim = 64

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in str(text).lower().split():
                out[i, int(hashlib.md5(word.encode("utf-8", "replace")).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


def _vector_index():
    from toolsearch_lab.index.vector import VectorToolIndex

    return VectorToolIndex(HashEmbedder(), min_score_threshold=-1.0)


def _hybrid_index():
    from toolsearch_lab.index.hybrid import HybridToolIndex

    return HybridToolIndex(embedder=HashEmbedder())


ISOLATION_INDEXES = {
    "regex-keywords": lambda: RegexToolIndex("keywords"),
    "regex-pattern": lambda: RegexToolIndex("pattern"),
    "bm25": lambda: BM25ToolIndex(min_score_threshold=0.0),
    "bm25-split-params": lambda: BM25ToolIndex(
        min_score_threshold=0.0, split_identifiers=True, include_parameters=True
    ),
    "vector-hash": _vector_index,
    "hybrid-hash": _hybrid_index,
}
N_SESSIONS = 12
WORDS = ["weather", "time", "search", "notify", "calendar", "github", "file", "email"]
QUERIES = {
    "keywords": ["weather", "time search", "", "github file email", "tool", "s3"],
    "pattern": ["weather|time", "s\\d+_", ".", "file", "tool"],
}


def _session_tools(session: int, version: int) -> list[Tool]:
    """Tool names encode their session: s<session>_<word>_<version>."""
    return [
        Tool(
            f"s{session}_{w}_{version}",
            f"tool {w} for session s{session} ({w} things)",
            {"type": "object", "properties": {w: {"type": "string", "description": f"{w} input"}}},
        )
        for w in WORDS
    ]


def _run_isolation(index, seed: int, n_threads: int = 8, ops_per_thread: int = 60) -> dict:
    advisor = ToolSearchAdvisor(index, eviction=LruEviction(5))
    meta = ToolSearchTool(index)
    mode = "pattern" if getattr(index, "mode", None) == "pattern" else "keywords"
    violations: list[str] = []
    errors: list[BaseException] = []
    counts = {"index": 0, "search": 0, "clear": 0, "evict": 0, "init": 0, "hits": 0}
    lock = threading.Lock()
    barrier = threading.Barrier(n_threads)

    def worker(worker_id: int) -> None:
        rng = random.Random(seed * 1000 + worker_id)
        local = dict.fromkeys(counts, 0)
        try:
            barrier.wait()
            for _ in range(ops_per_thread):
                s = rng.randrange(N_SESSIONS)
                sid = f"session-{s}"
                op = rng.choices(["index", "search", "clear", "evict", "init", "meta"], [3, 6, 1, 1, 2, 2])[0]
                if op == "index":
                    index.index_tools(sid, rng.sample(_session_tools(s, rng.randrange(3)), 3))
                elif op == "clear":
                    index.clear_index(sid)
                elif op == "evict":
                    advisor.evict_session(sid)
                elif op == "init":  # the advisor's own path: eviction of LRU sessions + fingerprint re-index
                    advisor.initialize_session(sid, _session_tools(s, rng.randrange(3)))
                else:
                    query = rng.choice(QUERIES[mode])
                    if op == "meta":
                        outcome = meta.call(json.dumps({"query": query, "maxResults": 10}), sid)
                        names = [] if outcome.is_error else json.loads(outcome.result)
                    else:
                        names = index.search(SearchRequest(sid, query, rng.choice([None, 3, 50]))).tool_names
                    local["hits"] += len(names)
                    bad = [n for n in names if not n.startswith(f"s{s}_")]
                    if bad:
                        with lock:
                            violations.append(f"{sid} query {query!r} returned {bad}")
                    op = "search"
                local[op] += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        with lock:
            for k, v in local.items():
                counts[k] += v

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "an isolation worker hung"
    assert not violations, violations[:5]  # checked first: a leak matters more than a crash
    counts["errors"] = errors
    return counts


ISOLATION_TOTALS: dict[str, dict] = {}


@pytest.mark.parametrize("name", list(ISOLATION_INDEXES))
def test_session_isolation_under_8_threads(name):
    try:
        index = ISOLATION_INDEXES[name]()
    except Exception as exc:  # noqa: BLE001 - vector/hybrid are another engineer's modules
        pytest.skip(f"{name} not constructible: {type(exc).__name__}: {exc}")
    n_examples = 15 if name.startswith(("regex", "bm25")) else 6

    race_errors: list[BaseException] = []

    @prop_settings(n_examples)
    @given(seed=st.integers(0, 2**32 - 1))
    def run(seed):
        counts = _run_isolation(index, seed)
        errors = counts.pop("errors")
        race_errors.extend(errors)
        assert not errors, f"worker raised: {errors[0]!r}"
        total = ISOLATION_TOTALS.setdefault(name, dict.fromkeys(counts, 0))
        for k, v in counts.items():
            total[k] += v

    run()
    totals = ISOLATION_TOTALS[name]
    print(f"\nisolation {name}: {totals}, worker errors: {len(race_errors)}")
    assert totals["search"] > 0 and totals["hits"] > 0  # the searches really found (own-session) tools


def _hybrid_with_session():
    try:
        index = _hybrid_index()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"HybridToolIndex not constructible: {exc!r}")
    index.index_tools("s", _session_tools(1, 0))
    return index


def test_hybrid_search_racing_a_clear_answers_empty():
    """A clear between reading the tool list and scoring the components must answer empty, not raise: a
    deterministic reproducer of the race seen on 8 threads."""
    index = _hybrid_with_session()
    original = index.score_matrix

    def clear_then_score(session_id, queries):
        index.clear_index(session_id)  # what another thread's clear/evict does at this moment
        return original(session_id, queries)

    index.score_matrix = clear_then_score
    assert index.search(SearchRequest("s", "weather", 5)).tool_names == []


# ================================================================ fingerprint

names_st = st.from_regex(r"[A-Za-z0-9_.:-]{1,12}", fullmatch=True)
desc_st = st.text(max_size=40)
schema_st = st.fixed_dictionaries(
    {
        "type": st.just("object"),
        "properties": st.dictionaries(st.text(max_size=5), st.just({"type": "string"}), max_size=3),
    }
)
catalogs = st.lists(st.tuples(names_st, desc_st, schema_st), min_size=1, max_size=8, unique_by=lambda t: t[0])


def _tools(rows):
    return [Tool(n, d, s) for n, d, s in rows]


@prop_settings(300)
@given(rows=catalogs, data=st.data())
def test_fingerprint_ignores_registration_order(rows, data):
    shuffled = data.draw(st.permutations(rows))
    assert fingerprint(_tools(rows)) == fingerprint(_tools(shuffled))
    assert fingerprint(_tools(rows)) == fingerprint([(n, d) for n, d, _ in shuffled])


@prop_settings(300)
@given(rows=catalogs, data=st.data())
def test_fingerprint_changes_with_any_name_or_description(rows, data):
    i = data.draw(st.integers(0, len(rows) - 1))
    name, desc, schema = rows[i]
    if data.draw(st.booleans()):
        new_name = data.draw(names_st.filter(lambda n: n not in {r[0] for r in rows}))
        changed = rows[:i] + [(new_name, desc, schema)] + rows[i + 1 :]
    else:
        new_desc = data.draw(desc_st.filter(lambda d: d != desc))
        changed = rows[:i] + [(name, new_desc, schema)] + rows[i + 1 :]
    assert fingerprint(_tools(rows)) != fingerprint(_tools(changed))


@prop_settings(300)
@given(rows=catalogs, data=st.data())
def test_fingerprint_ignores_schema_only_edits(rows, data):
    edited = [(n, d, data.draw(schema_st)) for n, d, _ in rows]
    assert fingerprint(_tools(rows)) == fingerprint(_tools(edited))


def test_fingerprint_schema_only_edit_reuses_the_index_but_exposes_the_new_schema():
    """Spring parity, documented: a schema-only edit keeps the fingerprint (no re-index), yet the model gets
    the new schema because definitions come from the registered tools of each request."""
    advisor = ToolSearchAdvisor(RegexToolIndex(), eviction=NeverEvict())
    v1 = [
        Tool("get_weather", "Get the weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    ]
    v2 = [
        Tool("get_weather", "Get the weather", {"type": "object", "properties": {"town": {"type": "string"}}})
    ]
    script = [
        AssistantTurn(None, [ToolCall("c1", "toolSearchTool", '{"query": "weather"}')]),
        AssistantTurn("ok"),
    ]
    first = advisor.run(
        ScriptedModel(script), [{"role": "user", "content": "hi"}], v1, {"chat_memory_conversation_id": "s"}
    )
    model = ScriptedModel(script)
    second = advisor.run(model, [{"role": "user", "content": "hi"}], v2, {"chat_memory_conversation_id": "s"})
    assert [e.kind for e in first.trace.session_events] == ["indexed"]
    assert [e.kind for e in second.trace.session_events] == ["reused"]
    assert first.trace.session_events[0].fingerprint == second.trace.session_events[0].fingerprint


# ================================================================ generated advisor runs


REGISTERED = ["get_weather", "currentTime", "boom", "big", "echo"]


def _registered_tools(big_size: int) -> list[Tool]:
    def boom(**kwargs):
        raise RuntimeError("tool exploded \ud800 with odd text")

    return [
        Tool(
            "get_weather",
            "Get the weather for a city",
            {"type": "object", "properties": {"city": {"type": "string"}}},
            function=lambda city="?", **kw: f"sunny in {city}",
        ),
        Tool(
            "currentTime", "Current time for a location", function=lambda **kw: {"time": "15:00", "args": kw}
        ),
        Tool("boom", "A tool whose implementation raises", function=boom),
        Tool("big", "Returns a very large result", function=lambda **kw: "x" * big_size),
        Tool("echo", "Echo the arguments back", function=lambda **kw: kw),
    ]


call_names = st.one_of(
    st.sampled_from(["toolSearchTool"] * 3 + REGISTERED + ["nope", "TOOLSEARCHTOOL", ""]), st.text(max_size=8)
)
json_args = st.one_of(
    st.sampled_from(
        [
            '{"query": "weather"}',
            '{"query": "time"}',
            '{"query": "WEATHER "}',
            '{"query": ""}',
            '{"query": "weather", "maxResults": 0}',
            '{"query": "weather", "maxResults": 99}',
            '{"query": "a", "maxResults": 2.0}',
            '{"city": "Paris"}',
            '{"query": null}',
            "{}",
        ]
    ),
    st.dictionaries(
        st.sampled_from(["query", "city", "maxResults", "categoryFilter", "x"]),
        st.one_of(st.text(max_size=12), st.integers(), st.none(), st.booleans()),
        max_size=3,
    ).map(lambda d: json.dumps(d, ensure_ascii=False)),
    st.sampled_from(
        [
            "",
            "{",
            '{"query": "weather"',
            "[1, 2]",
            "null",
            "not json at all",
            '"str"',
            "1e999",
            '{"query": "\\ud800"}',
            "\x00",
        ]
    ),
    st.text(max_size=30),
)
tool_calls_st = st.lists(st.builds(lambda n, a: (n, a), call_names, json_args), max_size=4)
turns_st = st.lists(st.one_of(tool_calls_st, st.just(None)), min_size=1, max_size=14)


def _script(spec) -> list[AssistantTurn]:
    turns = []
    for i, calls in enumerate(spec):
        if calls is None or not calls:
            turns.append(AssistantTurn(f"answer {i}" if calls is None else None))
        else:
            turns.append(
                AssistantTurn(None, [ToolCall(f"call_{i}_{j}", n, a) for j, (n, a) in enumerate(calls)])
            )
    return turns


RUN_STATS = {"runs": 0, "stop_reasons": {}}


@prop_settings(400)
@given(
    spec=turns_st,
    per_tool=st.integers(1, 6),
    total=st.integers(1, 12),
    repeats=st.integers(1, 3),
    result_chars=st.integers(1, 200),
    big_size=st.integers(0, 400),
    accumulate=st.booleans(),
)
def test_generated_runs_terminate_within_limits_and_traces_round_trip(
    spec, per_tool, total, repeats, result_chars, big_size, accumulate
):
    advisor = ToolSearchAdvisor(
        RegexToolIndex(),
        max_calls_per_tool=per_tool,
        max_total_tool_calls=total,
        max_repeated_searches=repeats,
        max_tool_result_chars=result_chars,
        reference_tool_name_accumulation=accumulate,
    )
    model = ScriptedModel(_script(spec))
    started = time.perf_counter()
    result = advisor.run(
        model,
        [{"role": "system", "content": "sys"}, {"role": "user", "content": "help \x00 me"}],
        _registered_tools(big_size),
        {"chat_memory_conversation_id": "gen"},
    )
    elapsed = time.perf_counter() - started
    trace = result.trace
    RUN_STATS["runs"] += 1
    RUN_STATS["stop_reasons"][trace.stop_reason] = RUN_STATS["stop_reasons"].get(trace.stop_reason, 0) + 1

    # terminates, within the limits, with the reason recorded
    assert elapsed < 10
    assert trace.stop_reason in {"answered", "max_calls_per_tool", "max_total_tool_calls", "error"}
    # one iteration per model call (+1 when the call raised: the script ran out), never more than scripted
    assert len(model.calls) <= len(trace.iterations) <= len(model.calls) + 1 <= len(spec) + 1
    executed = [
        c for it in trace.iterations for c in it.tool_calls if c.failure is not FailureKind.LIMIT_REACHED
    ]
    assert len(executed) <= total
    for name in {c.name for c in executed}:
        assert sum(c.name == name for c in executed) <= per_tool
    if trace.stop_reason.startswith("max_"):
        assert any(e.startswith("limit reached") for e in trace.errors)
        assert trace.config[trace.stop_reason] in (per_tool, total)
    if trace.stop_reason == "error":  # the script ran out: ScriptedModel raised, the loop recorded it
        assert "no scripted turn left" in trace.errors[-1]
    # every tool call got an answer the model can read, and only exposed tools ever ran
    for it in trace.iterations:
        for c in it.tool_calls:
            if c.kind == "tool":
                assert c.name in it.exposed_tools
                assert len(c.result) <= result_chars + 60
            if c.kind == "rejected":  # every rejected call says why, and its result says it to the model
                assert c.failure is not None
            if c.kind == "rejected" and c.failure is not FailureKind.LIMIT_REACHED:
                assert "error" in json.loads(c.result)
    # the trace round-trips through JSON text and through UTF-8 bytes (what a file holds)
    text = trace.to_json()
    assert RunTrace.from_json(text) == trace
    assert RunTrace.from_json(text.encode("utf-8").decode("utf-8")) == trace
    assert RunTrace.from_json(trace.to_json(indent=2)) == trace
    json.dumps(trace.summary())


def test_zz_generated_run_stats():
    print(f"\ngenerated advisor runs: {RUN_STATS}")
    if RUN_STATS["runs"]:
        assert len(RUN_STATS["stop_reasons"]) >= 3  # the generator reaches answers, limits and errors


# ================================================================ pattern timeouts under CPU contention


def _contended_pattern_searches(call_timeout_s: float, n_threads: int = 8, searches: int = 150) -> list[str]:
    index = RegexToolIndex("pattern", pattern_call_timeout_s=call_timeout_s)
    for s in range(4):
        index.index_tools(f"session-{s}", _session_tools(s, 0))
    failures: list[str] = []
    barrier = threading.Barrier(n_threads)

    def worker(i: int) -> None:
        barrier.wait()
        for k in range(searches):
            try:
                index.search(SearchRequest(f"session-{k % 4}", rng_patterns[(i + k) % len(rng_patterns)], 5))
            except Exception as exc:  # noqa: BLE001
                failures.append(repr(exc))

    rng_patterns = ["s\\d+_", "weather|time", "file", "tool .* for", "^s[0-3]_"]
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    return failures


def test_simple_patterns_are_not_refused_as_backtracking_when_threads_compete():
    """The per-call timeout is wall-clock, so with 8 threads on 2 cores a trivial pattern could be refused
    as 'catastrophic backtracking' when its thread was merely descheduled. A 2 ms per-call timeout makes
    that near-certain without the retries (a waiting try gets the rest of the budget; a busy-looking one,
    which on a shared VM can be the host's preemption, two more at 4 and 8 ms)."""
    failures = _contended_pattern_searches(0.002)
    assert failures == [], f"{len(failures)} spurious refusals, e.g. {failures[0]}"
