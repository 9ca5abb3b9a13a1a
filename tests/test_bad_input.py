"""Bad catalogs, datasets, traces and advisor arguments (issue 6): clear errors naming the entry, and with
``strict=False`` a report that lists every problem, not just the first."""

from __future__ import annotations

import json
import time

import pytest

from toolsearch_lab.catalog.container import CatalogError, load_catalog, tools_from_json
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall
from toolsearch_lab.trace import RunTrace

MB = 1_000_000
OK = {"name": "ok_tool", "description": "A fine tool", "parameters": {"type": "object", "properties": {}}}
# (record, text the error must contain) -- each one is bad in exactly one way
BAD_RECORDS = [
    ({"description": "no name"}, "missing 'name'"),
    ({"name": "no_desc", "parameters": {"type": "object"}}, "missing 'description'"),
    ({"name": "list_schema", "description": "d", "parameters": []}, "must be a JSON Schema object, got list"),
    (
        {"name": "str_schema", "description": "d", "parameters": "object"},
        "must be a JSON Schema object, got str",
    ),
    (
        {"name": "array_schema", "description": "d", "parameters": {"type": "array"}},
        'must have "type": "object"',
    ),
    (
        {
            "name": "bad_ref",
            "description": "d",
            "parameters": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}},
        },
        "does not resolve",
    ),
    (
        {
            "name": "remote_ref",
            "description": "d",
            "parameters": {
                "type": "object",
                "properties": {"x": {"$ref": "https://example.com/schema.json"}},
            },
        },
        "is not local",
    ),
    ({"name": "bad name!", "description": "d"}, "must match"),
    ({"name": 42, "description": "d"}, "'name' must be a string"),
    ({"name": "num_desc", "description": 3.5}, "'description' must be a string"),
    ({"name": "surrogate", "description": "bad \ud800 text"}, "lone surrogate U+D800"),
    ("just a string", "expected a JSON object"),
    ({"name": "ok_tool", "description": "duplicate of #0"}, "duplicate name (first defined at #0)"),
]


def test_each_bad_record_fails_strictly_with_a_message_naming_it():
    for i, (record, expected) in enumerate(BAD_RECORDS):
        with pytest.raises(CatalogError) as info:
            tools_from_json([OK, record], format="dataset", source="cat.json")
        message = str(info.value)
        assert expected in message, (i, message)
        assert message.startswith("cat.json: tool ")
        name = record.get("name") if isinstance(record, dict) else None
        assert (repr(name) in message) if isinstance(name, str) else "#1" in message, message


def test_strict_false_reports_every_problem_and_keeps_the_good_tools():
    records = [OK] + [r for r, _ in BAD_RECORDS] + [{"name": "also_ok", "description": "fine"}]
    catalog = tools_from_json(records, format="dataset", strict=False)
    assert catalog.names == ["ok_tool", "also_ok"]
    problems = catalog.report.problems
    assert len(problems) == len(BAD_RECORDS)  # every problem, not just the first
    for problem, (_, expected) in zip(problems, BAD_RECORDS, strict=False):
        assert expected in problem.message
    assert [p.tool for p in problems][:2] == ["#1", "'no_desc' (#2)"]
    text = str(catalog.report)
    assert text.startswith(f"{len(BAD_RECORDS)} problem(s)") and "'bad_ref' (#6)" in text


def test_bad_utf8_file_is_reported_with_its_offset(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'[{"name": "t", "description": "caf\xe9 \xff"}]')
    with pytest.raises(CatalogError, match=r"not valid UTF-8 at byte offset 34 \(line 1\): bytes e9"):
        load_catalog(path)
    with pytest.raises(CatalogError, match="not valid UTF-8"):
        load_catalog(path, strict=False)  # the whole document is unreadable: no partial catalog


def test_invalid_json_file_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"name": "t",\n "description": }]', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"invalid JSON at line 2 column 17"):
        load_catalog(path)


@pytest.mark.parametrize("content", ["[]", '{"tools": []}'])
def test_empty_catalog_file_is_an_error_not_a_silent_empty_search(tmp_path, content):
    path = tmp_path / "empty.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CatalogError, match="no tools found: the catalog is empty"):
        load_catalog(path)
    catalog = load_catalog(path, strict=False)
    assert len(catalog) == 0 and [p.message for p in catalog.report.problems] == [
        "no tools found: the catalog is empty"
    ]


def test_all_tools_invalid_with_strict_false_lists_them_without_the_empty_note(tmp_path):
    path = tmp_path / "allbad.json"
    path.write_text(json.dumps([{"name": "x"}, {"description": "y"}]), encoding="utf-8")
    catalog = load_catalog(path, strict=False)
    assert len(catalog) == 0 and len(catalog.report.problems) == 2


def test_one_megabyte_description_loads_and_every_index_answers_in_bounded_time(tmp_path):
    big = ("weather forecast data " * (MB // 22 + 1))[:MB]
    path = tmp_path / "big.json"
    path.write_text(
        json.dumps([{"name": "huge", "description": big}, {"name": "small", "description": "time"}]),
        encoding="utf-8",
    )
    catalog = load_catalog(path)
    assert len(catalog.get("huge").description) == MB
    for index in (RegexToolIndex(), RegexToolIndex("pattern"), BM25ToolIndex()):
        started = time.perf_counter()
        index.index_tools("s", catalog.tools)
        try:
            names = index.search(SearchRequest("s", "weather", 5)).tool_names
        except ValueError as exc:  # pattern mode may run out of its time budget on 1 MB of text
            names = None
            assert "took longer" in str(exc)
        elapsed = time.perf_counter() - started
        assert elapsed < 10, f"{type(index).__name__}: {elapsed:.1f} s"
        assert names is None or names[0] == "huge"


# ---------------------------------------------------------------------------------------------- datasets


def _dataset(**overrides):
    doc = {
        "tools": [{"name": "a", "description": "tool a"}, {"name": "b", "description": "tool b"}],
        "queries": [
            {"id": "q1", "query": "use a", "relevant_tools": ["a"]},
            {"id": "q2", "query": "use ghost", "relevant_tools": ["ghost", "b"]},
            {"id": "q3", "query": "use phantom", "relevant_tools": ["phantom"]},
            {"id": "q4", "query": "", "relevant_tools": ["a"]},
            {"id": "q5", "query": "no labels"},
        ],
    }
    doc.update(overrides)
    return doc


def test_dataset_unknown_relevant_tools_are_named_with_the_query():
    from toolsearch_lab.eval.datasets import DatasetError, parse_dataset

    with pytest.raises(DatasetError, match=r"queries\[1\] \(id 'q2'\): unknown relevant tool\(s\) 'ghost'"):
        parse_dataset(_dataset(), name="mini")
    ds = parse_dataset(_dataset(), name="mini", strict=False)
    assert [q.id for q in ds.queries] == ["q1"]
    assert len(ds.problems) == 4  # every bad query listed
    assert any("queries[2] (id 'q3'): unknown relevant tool(s) 'phantom'" in p for p in ds.problems)
    assert any("queries[3] (id 'q4'): 'query' must be a non-empty string" in p for p in ds.problems)
    assert any("queries[4] (id 'q5'): missing field 'relevant_tools'" in p for p in ds.problems)


def test_dataset_bad_tools_duplicates_and_empty():
    from toolsearch_lab.eval.datasets import DatasetError, parse_dataset

    tools = [{"name": "a", "description": "x"}, {"name": "a", "description": "y"}, {"name": "c"}]
    ds = parse_dataset(_dataset(tools=tools, queries=[{"query": "q", "relevant_tools": ["a"]}]), strict=False)
    assert ds.tool_names == ["a"]
    assert any("tools[1] 'a': duplicate tool name (first defined at tools[0])" in p for p in ds.problems)
    assert any("tools[2] 'c': missing 'description'" in p for p in ds.problems)
    with pytest.raises(DatasetError, match="no usable tools"):
        parse_dataset({"tools": [], "queries": []}, name="empty")
    with pytest.raises(DatasetError, match="missing top-level field 'queries'"):
        parse_dataset({"tools": []})


def test_dataset_file_with_bad_utf8_is_a_dataset_error(tmp_path):
    from toolsearch_lab.eval.datasets import DatasetError, load_dataset

    path = tmp_path / "normalized.json"
    path.write_bytes(b'{"tools": [{"name": "a", "description": "\xff"}], "queries": []}')
    with pytest.raises(DatasetError, match="not (valid )?UTF-8"):
        load_dataset(path)


# ---------------------------------------------------------------------------------------------- traces


def _trace_with(text: str) -> RunTrace:
    model = ScriptedModel(
        [
            AssistantTurn(None, [ToolCall("c1", "toolSearchTool", json.dumps({"query": text}))]),
            AssistantTurn(text),
        ]
    )
    return (
        ToolSearchAdvisor(RegexToolIndex())
        .run(
            model,
            [{"role": "user", "content": text}],
            [Tool("t", "weather")],
            {"chat_memory_conversation_id": "s"},
        )
        .trace
    )


def test_trace_with_a_lone_surrogate_can_still_be_saved_and_loaded(tmp_path):
    trace = _trace_with("weather \ud800 \udfff \U0001f600 \x00")
    path = tmp_path / "trace.json"
    path.write_text(trace.to_json(), encoding="utf-8")  # used to raise UnicodeEncodeError: trace lost
    assert RunTrace.from_json(path.read_text(encoding="utf-8")) == trace
    plain = _trace_with("café ☀")
    assert "café ☀" in plain.to_json()  # ordinary text stays readable (not \\u-escaped)


def test_recording_with_a_lone_surrogate_can_be_saved(tmp_path):
    from toolsearch_lab.models.openai import OpenAIChatModel, load_recording

    model = OpenAIChatModel(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", record=True)
    model.recording.append(
        AssistantTurn(None, [ToolCall("c", "toolSearchTool", '{"query": "\ud800"}')]).to_message()
    )
    path = model.save_recording(tmp_path / "rec.json")
    replay = load_recording(path)
    assert replay.turns[0].tool_calls[0].arguments == '{"query": "\ud800"}'


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "not valid JSON"),
        ("[]", "expected an object"),
        ('{"session_id": "s"}', "missing"),
        ('{"bogus": 1}', "unknown field"),
    ],
)
def test_trace_from_bad_json_is_a_value_error(text, message):
    with pytest.raises(ValueError, match=message):
        RunTrace.from_json(text)


# ---------------------------------------------------------------------------------------------- advisor


@pytest.mark.parametrize(
    "context", [{}, {"chat_memory_conversation_id": None}, {"chat_memory_conversation_id": "  "}]
)
def test_advisor_without_a_session_id_says_which_key(context):
    with pytest.raises(
        ValueError, match="context must contain a non-null value for 'chat_memory_conversation_id'"
    ):
        ToolSearchAdvisor(RegexToolIndex()).run(ScriptedModel([]), [], [], context)


def test_advisor_rejects_bad_tools_and_limits_clearly():
    advisor = ToolSearchAdvisor(RegexToolIndex())
    ctx = {"chat_memory_conversation_id": "s"}
    with pytest.raises(TypeError, match="tools must be Tool objects, got dict"):
        advisor.run(ScriptedModel([]), [], [{"name": "x"}], ctx)
    with pytest.raises(ValueError, match="may not be named 'toolSearchTool'"):
        advisor.run(ScriptedModel([]), [], [Tool("toolSearchTool", "mine")], ctx)
    for bad in (0, -1, True, 1.5, None):
        with pytest.raises(ValueError, match="max_calls_per_tool must be a positive integer"):
            ToolSearchAdvisor(RegexToolIndex(), max_calls_per_tool=bad)
    with pytest.raises(ValueError, match="index is required"):
        ToolSearchAdvisor(None)


def test_trace_json_nested_too_deep_is_a_clear_error_not_a_recursion_error():
    with pytest.raises(
        ValueError, match="RunTrace.from_json: the text is nested 5000 levels deep; the limit is 64"
    ):
        RunTrace.from_json("[" * 5000 + "]" * 5000)
    with pytest.raises(ValueError, match="expected JSON text, got int"):
        RunTrace.from_json(5)


def test_the_two_edge_checks_name_the_field_and_refuse_bools():
    from toolsearch_lab.model import check_positive_int, session_key

    class Sid(str):
        pass

    plain = session_key(Sid("conv-1"))
    assert plain == "conv-1" and type(plain) is str
    for bad in (None, "", "  ", 1, b"conv-1", True):
        with pytest.raises(ValueError, match=r"context\['k'\] must be a non-blank string"):
            session_key(bad, what="context['k']")
    assert check_positive_int(3, "limit") == 3 and check_positive_int(0, "n", allow_zero=True) == 0
    for bad in (0, -1, True, 1.0, "3", None):
        with pytest.raises(ValueError, match="limit must be a positive integer"):
            check_positive_int(bad, "limit")
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        check_positive_int(-1, "n", allow_zero=True)
