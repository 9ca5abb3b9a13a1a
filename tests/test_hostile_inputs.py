"""A generated set of hostile inputs (nesting, cycles, wrong types, huge sizes, bad encodings) through the
three public edges of the core: ``ToolSearchAdvisor.run``, ``load_catalog`` and ``Tool(...)``.

Every case must end in one of three documented ways:
- answered: the run finished, and a hostile tool call, argument or result got an error result the model
  reads (loop side: never an exception);
- a clear error: ``ValueError``/``TypeError`` (``CatalogError`` for catalogs) whose message names the input
  (the message index, the context key, the tool field, the file);
- accepted: the input was valid after all (a string session id with a surrogate is still a string).

Anything else (another exception, or a clear error type that does not name its input) fails. Run with
``-s`` to print the counts. The cases are generated from a fixed seed, so the counts are reproducible.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolsearch_lab.catalog.container import CatalogError, load_catalog
from toolsearch_lab.catalog.mcp import McpToolError
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.trace import RunTrace

SEED = 11
KEY = "chat_memory_conversation_id"
COUNTS: Counter = Counter()


# ---- the generator ---------------------------------------------------------------------------------------
def _deep_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"k": value}
    return value


def _cycles() -> list[tuple[str, Any]]:
    own_list: list = [1]
    own_list.append(own_list)
    own_dict: dict = {"a": 1}
    own_dict["self"] = own_dict
    a: dict = {}
    b: dict = {"a": a}
    a["b"] = b
    return [("list containing itself", own_list), ("dict containing itself", own_dict), ("a<->b", a)]


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__


def hostile_values(rng: random.Random) -> list[tuple[str, Any]]:
    """(label, value) pairs: fixed classics plus random nestings of random hostile leaves."""
    leaves: list[tuple[str, Any]] = [
        ("int", 42),
        ("huge int", 2**200),
        ("negative", -1),
        ("float", 2.5),
        ("nan", float("nan")),
        ("inf", float("inf")),
        ("-inf", float("-inf")),
        ("bool", True),
        ("None", None),
        ("empty", ""),
        ("blank", "   "),
        ("NUL", "\x00"),
        ("lone surrogate", "\ud800"),
        ("low surrogate", "a\udfffb"),
        ("RTL override", "\u202eevil"),
        ("newline name", "get_weather\n"),
        ("1 MB of words", "lorem ipsum dolor " * 58_000),
        # One 150 KB run of one letter: tiktoken's BPE is quadratic on such runs (1 MB takes ~7 s to count).
        ("150 KB of one letter", "x" * 150_000),
        ("bytes", b"\xff\xfe"),
        ("bytearray", bytearray(b"abc")),
        ("object", object()),
        ("set", {1, 2}),
        ("tuple", (1, "a")),
        ("complex", complex(1, 2)),
        ("tuple key", {("a", "b"): 1}),
        ("None key", {None: 1}),
        ("unprintable", _Unprintable()),
    ]
    values = list(leaves)
    values += [(f"list nested {d}", _deep_list(d)) for d in (63, 64, 65, 100, 1_000, 3_000, 10_000)]
    values += [(f"dict nested {d}", _deep_dict(d)) for d in (64, 65, 1_000, 5_000)]
    values += _cycles()
    for i in range(120):
        label, leaf = rng.choice(leaves)
        depth = rng.choice([1, 2, 5, 30, 70, 200, 2_000])
        value: Any = leaf
        for _ in range(depth):
            value = [value] if rng.random() < 0.5 else {rng.choice(["q", "query", "\ud800", ""]): value}
        values.append((f"random #{i}: {label} under {depth} levels", value))
    return values


def _as_argument_text(value: Any) -> str | None:
    try:
        return json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return None


# ---- the classifier --------------------------------------------------------------------------------------
def _clear(
    exc: BaseException, names: tuple[str, ...], kinds: tuple[type, ...] = (ValueError, TypeError)
) -> None:
    """``exc`` must be a documented error whose message names the input (one of ``names``)."""
    assert isinstance(exc, kinds), f"undocumented {type(exc).__name__}: {exc!r:.300}"
    message = str(exc)
    assert any(n in message for n in names), (
        f"{type(exc).__name__} does not name its input {names}: {message:.300}"
    )


def _tools() -> list[Tool]:
    return [
        Tool("get_weather", "Get the weather for a city", function=lambda **kw: "sunny"),
        Tool("echo", "Echo the arguments back", function=lambda **kw: kw),
    ]


def _run(advisor, turns, messages=None, context=None, tools=None):
    return advisor.run(
        ScriptedModel(turns),
        messages if messages is not None else [{"role": "user", "content": "weather?"}],
        tools if tools is not None else _tools(),
        context if context is not None else {KEY: "hostile"},
    )


def _search(call_id: str = "s") -> ToolCall:
    return ToolCall(call_id, "toolSearchTool", '{"query": "weather echo arguments", "maxResults": 5}')


# ---- advisor.run: model side (must be error results) -------------------------------------------------------
@pytest.mark.slow
def test_hostile_tool_calls_arguments_and_results_become_error_results():
    rng = random.Random(SEED)
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_repeated_searches=1000)
    for label, value in hostile_values(rng):
        text = _as_argument_text({"query": value}) or "[" * 5_000
        hostile_tool = Tool("hostile", "Returns the hostile value", function=lambda v=value: v)
        turns = [
            AssistantTurn(None, [_search(), ToolCall("s2", "toolSearchTool", "hostile value")]),
            AssistantTurn(
                None,
                [
                    ToolCall("a1", "toolSearchTool", text),  # hostile arguments to the meta-tool
                    ToolCall("a2", "echo", text.replace('"query"', '"x"', 1)),  # and to a real tool
                    ToolCall("a3", "hostile", "{}"),  # a tool returning the hostile value
                    ToolCall("a4", str(value)[:200] if isinstance(value, str) else "nope", "{}"),  # odd names
                ],
            ),
            AssistantTurn("done"),
        ]
        result = _run(advisor, turns, tools=_tools() + [hostile_tool])
        COUNTS["advisor model-side cases"] += 1
        assert result.trace.stop_reason == "answered", (label, result.trace.errors)
        second = result.trace.iterations[1].tool_calls
        COUNTS["answered as error results"] += sum(1 for c in second if c.error)
        assert RunTrace.from_json(result.trace.to_json()) == result.trace, label


def test_hostile_turns_from_a_custom_chat_model_end_the_run_with_an_error_not_an_exception():
    rng = random.Random(SEED + 1)
    advisor = ToolSearchAdvisor(RegexToolIndex())
    for label, value in hostile_values(rng)[:60]:
        turns = [
            AssistantTurn(None, [ToolCall("c", "echo", value)]),  # arguments that are not a string
            AssistantTurn(value if not isinstance(value, str) else None, []),
        ]
        for turn in turns:
            result = _run_raw(advisor, turn)
            COUNTS["advisor model-side cases"] += 1
            if result.trace.stop_reason == "error":
                COUNTS["answered as error results"] += 1
                assert "complete() returned" in result.trace.errors[0], (label, result.trace.errors)
            else:
                COUNTS["accepted"] += 1


class _OneTurn:
    """A custom ChatModel that answers ``turn`` (anything at all) once, then a plain answer."""

    name = "one-turn"

    def __init__(self, turn: Any) -> None:
        self.turns = [turn, AssistantTurn("done")]

    def complete(self, messages, tools):
        return self.turns.pop(0)


def _run_raw(advisor, turn):
    return advisor.run(_OneTurn(turn), [{"role": "user", "content": "x"}], _tools(), {KEY: "raw"})


# ---- advisor.run: caller side (must be clear errors naming the input) -----------------------------------
def test_hostile_messages_session_ids_contexts_and_tool_lists_raise_clear_errors():
    rng = random.Random(SEED + 2)
    advisor = ToolSearchAdvisor(RegexToolIndex())
    for label, value in hostile_values(rng):
        cases = [
            ("messages", dict(messages=value), ("messages",)),
            ("message", dict(messages=[{"role": "user", "content": "x"}, value]), ("messages[1]",)),
            ("content", dict(messages=[{"role": "user", "content": value}]), ("messages[0]",)),
            ("role", dict(messages=[{"role": value, "content": "x"}]), ("messages[0]",)),
            ("session id", dict(context={KEY: value}), (KEY,)),
            ("context", dict(context=value if value is not None else 5), ("context",)),
            ("tools", dict(tools=value), ("tools",)),
            ("tool", dict(tools=[*_tools(), value]), ("tools",)),
        ]
        for where, kwargs, names in cases:
            COUNTS["advisor caller-side cases"] += 1
            try:
                result = _run(advisor, [AssistantTurn("ok")] * 2, **kwargs)
            except Exception as exc:
                _clear(exc, names)
                COUNTS["raised clear errors"] += 1
            else:
                COUNTS["accepted"] += 1
                assert result.trace.stop_reason == "answered", (label, where, result.trace.errors)


# ---- issue 23: failures inside tools, forged session ids, NaN in schemas -----------------------------------
class _HostileBase(BaseException):
    pass


class _HostileExit(SystemExit):
    pass


def hostile_failures(rng: random.Random) -> list[tuple[str, BaseException]]:
    """(label, exception) pairs a tool may raise: huge messages of several kinds and BaseException
    subclasses, plus random combinations of the two."""
    texts = [
        ("3 MB ascii", "x" * 3_000_000),
        ("1 MB quotes", '"' * 1_000_000),
        ("500 KB control characters", "\x07" * 500_000),
        ("1 MB surrogates", "\ud800" * 1_000_000),
        ("empty", ""),
    ]
    classes: list[type[BaseException]] = [
        RuntimeError,
        ValueError,
        SystemExit,
        GeneratorExit,
        _HostileBase,
        _HostileExit,
        McpToolError,
    ]
    failures: list[tuple[str, BaseException]] = [
        (f"{cls.__name__}({label})", cls(text)) for cls in classes for label, text in texts[:2]
    ]
    failures += [("SystemExit(code 3)", SystemExit(3)), ("unprintable", _UnprintableError())]
    for i in range(30):
        cls = rng.choice(classes)
        label, text = rng.choice(texts)
        failures.append((f"random #{i}: {cls.__name__}({label})", cls(text)))
    return failures


class _UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


@pytest.mark.slow
def test_hostile_failures_inside_tools_become_bounded_error_results():
    rng = random.Random(SEED + 5)
    limit = 2_000
    advisor = ToolSearchAdvisor(RegexToolIndex(), max_tool_result_chars=limit)
    for label, failure in hostile_failures(rng):

        def fail(failure=failure, **_):
            raise failure

        tool = Tool("failing_tool", "A tool that fails", function=fail)
        turns = [
            AssistantTurn(None, [ToolCall("s", "toolSearchTool", '{"query": "failing tool"}')]),
            AssistantTurn(None, [ToolCall("f", "failing_tool", "{}")]),
            AssistantTurn("done"),
        ]
        COUNTS["advisor failure cases"] += 1
        result = _run(advisor, turns, tools=[tool])
        assert result.trace.stop_reason == "answered", (label, result.trace.errors)
        record = result.trace.iterations[1].tool_calls[0]
        assert len(record.result) <= limit + 60, (label, len(record.result))
        assert record.error.startswith(f"failing_tool raised {type(failure).__name__}"), label
        COUNTS["answered as error results"] += 1


class _ForgedId(str):
    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return True

    def __str__(self) -> str:
        return "someone-else"

    def strip(self, *args: Any) -> str:
        return "x"


class _PlainSubclass(str):
    pass


def test_str_subclass_session_ids_become_plain_strings():
    rng = random.Random(SEED + 6)
    advisor = ToolSearchAdvisor(RegexToolIndex())
    for cls in (_ForgedId, _PlainSubclass):
        for text in ["alice", "bob", "\ud800", "x" * 1_000, "  ", ""] + [
            str(rng.random()) for _ in range(10)
        ]:
            for where in ("session_id", "context"):
                COUNTS["advisor caller-side cases"] += 1
                value = cls(text)
                kwargs: dict[str, Any] = (
                    {"session_id": value} if where == "session_id" else {"context": {KEY: value}}
                )
                try:
                    result = advisor.run(
                        ScriptedModel([AssistantTurn("ok")]),
                        [{"role": "user", "content": "x"}],
                        _tools(),
                        kwargs.get("context"),
                        session_id=kwargs.get("session_id"),
                    )
                except ValueError as exc:
                    assert not text.strip(), (cls.__name__, text[:20])  # only blank ids are refused
                    _clear(exc, ("session_id", KEY))
                    COUNTS["raised clear errors"] += 1
                else:
                    assert type(result.trace.session_id) is str and result.trace.session_id == text
                    COUNTS["accepted"] += 1


def test_non_finite_numbers_in_schemas_are_refused_naming_the_tool_and_field():
    rng = random.Random(SEED + 7)
    advisor = ToolSearchAdvisor(RegexToolIndex())
    for i in range(40):
        bad = rng.choice([float("nan"), float("inf"), float("-inf")])
        path = [rng.choice(["minimum", "maximum", "default", "multipleOf"])]
        schema: dict = {"type": "number", path[0]: bad}
        for _ in range(rng.randrange(4)):
            name = rng.choice(["a", "b", "nested"])
            schema = {"type": "object", "properties": {name: schema}}
            path = ["properties", name, *path]
        parameters = {"type": "object", "properties": {"p": schema}}
        field = "parameters.properties.p." + ".".join(path)
        COUNTS["advisor caller-side cases"] += 1
        try:  # such a Tool cannot even be built, so no advisor ever sees one
            tool = Tool(f"nan_tool_{i}", "d", parameters)
            _run(advisor, [AssistantTurn("ok")], tools=[*_tools(), tool])
        except ValueError as exc:
            _clear(exc, (f"tool 'nan_tool_{i}': {field} is {bad!r}",))
            COUNTS["raised clear errors"] += 1
        else:
            raise AssertionError(f"a schema with {bad!r} at {field} was accepted")


# ---- load_catalog ------------------------------------------------------------------------------------------
def _catalog_texts(rng: random.Random) -> list[tuple[str, bytes]]:
    texts: list[tuple[str, bytes]] = [
        ("deep 3000", b'{"tools": [' + b"[" * 3000 + b"]" * 3000 + b"]}"),
        (
            "deep 200 in a schema",
            b'[{"name": "a", "description": "", "parameters": ' + b"[" * 200 + b"]" * 200 + b"}]",
        ),
        ("NaN", b'[{"name": "a", "description": "", "parameters": {"type": "object", "maximum": NaN}}]'),
        ("Infinity", b'[{"name": "a", "description": "", "parameters": {"type": "object", "x": -Infinity}}]'),
        ("bad UTF-8", b'[{"name": "a", "description": "\xff\xfe"}]'),
        ("UTF-16", '[{"name": "a", "description": "b"}]'.encode("utf-16")),
        ("lone surrogate escape", b'[{"name": "a", "description": "\\ud800"}]'),
        ("NUL", b'[{"name": "a\\u0000", "description": "b"}]'),
        ("empty", b""),
        ("not JSON", b"{tools: [}"),
        ("truncated", b'[{"name": "a", "descr'),
        ("10 MB description", b'[{"name": "a", "description": "' + b"x" * 10_000_000 + b'"}]'),
    ]
    fields = ("name", "description", "parameters", "category")
    for label, value in hostile_values(rng):
        text = _as_argument_text(value)
        if text is None:
            continue
        for field in fields:
            record = {"name": "t", "description": "d", "parameters": {"type": "object"}}
            record[field] = "__VALUE__"
            body = json.dumps([record]).replace('"__VALUE__"', text)
            texts.append((f"{field} = {label}", body.encode("utf-8", "surrogatepass")))
        body = json.dumps(
            [{"name": "t", "description": "d", "parameters": {"type": "object", "properties": "__V__"}}]
        )
        texts.append(
            (f"properties = {label}", body.replace('"__V__"', text).encode("utf-8", "surrogatepass"))
        )
    return texts


def test_hostile_catalog_files_load_or_raise_a_catalog_error_naming_the_file(tmp_path: Path):
    rng = random.Random(SEED + 3)
    for i, (label, data) in enumerate(_catalog_texts(rng)):
        path = tmp_path / f"hostile_{i}.json"
        path.write_bytes(data)
        COUNTS["load_catalog cases"] += 1
        try:
            catalog = load_catalog(path)
        except Exception as exc:
            _clear(exc, (path.name,), (CatalogError,))
            COUNTS["raised clear errors"] += 1
        else:
            COUNTS["accepted"] += 1
            assert all(json.dumps(t.parameters, allow_nan=False) for t in catalog), label
        path.unlink()
    for _label, value in hostile_values(rng)[:40]:
        COUNTS["load_catalog cases"] += 1
        try:
            load_catalog(value)
        except Exception as exc:
            _clear(exc, ("load_catalog expects", "not a usable path", "unknown catalog"), (CatalogError,))
            COUNTS["raised clear errors"] += 1


# ---- Tool(...) ---------------------------------------------------------------------------------------------
def test_hostile_tool_fields_raise_a_value_error_naming_the_field():
    rng = random.Random(SEED + 4)
    for _label, value in hostile_values(rng):
        for field in ("name", "description", "parameters", "category"):
            kwargs: dict[str, Any] = {"name": "t", "description": "d"}
            kwargs[field] = value
            COUNTS["Tool cases"] += 1
            try:
                Tool(**kwargs)
            except Exception as exc:
                _clear(exc, (f"field '{field}'",), (ValueError,))
                COUNTS["raised clear errors"] += 1
            else:
                COUNTS["accepted"] += 1


@pytest.fixture(scope="module", autouse=True)
def print_counts():
    yield
    cases = sum(v for k, v in COUNTS.items() if k.endswith("cases"))
    per_edge = ", ".join(f"{k}: {v:,}" for k, v in sorted(COUNTS.items()) if k.endswith("cases"))
    print(
        f"\nhostile inputs: {cases:,} cases generated ({per_edge}); "
        f"model side: every run ended with a stop reason, {COUNTS['answered as error results']:,} hostile "
        f"calls/turns answered as error results; caller side: {COUNTS['raised clear errors']:,} raised clear "
        f"errors naming the input, {COUNTS['accepted']:,} accepted as valid; 0 uncaught"
    )
