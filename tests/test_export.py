"""Provider export shapes, pinned by golden files (tests/golden/*.json, exact JSON incl. key order).

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/test_export.py``; review the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolsearch_lab.catalog.container import tools_from_json
from toolsearch_lab.catalog.export import (
    DEFAULT_SEARCH_PARAMETERS,
    anthropic_tool_reference_result,
    openai_tool_search_output,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_responses_tools,
    to_openai_tools,
)
from toolsearch_lab.model import Tool

GOLDEN = Path(__file__).parent / "golden"

WEATHER = Tool(
    "get_weather",
    "Current weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
    },
    category="weather",
)
CURRENCY = Tool(
    "convert_currency",
    "Convert an amount between currencies.",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "from": {"type": "string"},
            "to": {"type": "string"},
        },
        "required": ["amount", "from", "to"],
    },
)
SEARCH = Tool(
    "toolSearchTool",
    "Search the tool registry for tools that fit the task.",
    {
        "type": "object",
        "properties": {"query": {"type": "string"}, "maxResults": {"type": "integer"}},
        "required": ["query"],
        "additionalProperties": False,
    },
)


def check_golden(name: str, value) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from {path}"


def test_openai_chat_completions_tools():
    check_golden("openai_chat_tools", to_openai_tools([WEATHER, CURRENCY]))


def test_anthropic_tools_defer_everything_but_the_search_tool():
    out = to_anthropic_tools([SEARCH, WEATHER, CURRENCY], search_tool=SEARCH)
    check_golden("anthropic_tools", out)
    assert [t.get("defer_loading", False) for t in out] == [False, True, True]


def test_anthropic_server_search_tool_is_passed_through():
    server = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    out = to_anthropic_tools([WEATHER], search_tool=server)
    assert out == [
        server,
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": WEATHER.parameters,
            "defer_loading": True,
        },
    ]


def test_anthropic_tool_reference_result():
    check_golden(
        "anthropic_tool_reference_result",
        anthropic_tool_reference_result("toolu_01A", ["get_weather", "convert_currency", "get_weather"]),
    )
    empty = anthropic_tool_reference_result("toolu_01B", [])
    assert empty == {
        "type": "tool_result",
        "tool_use_id": "toolu_01B",
        "content": [{"type": "text", "text": "No matching tools found."}],
    }
    with pytest.raises(TypeError, match="not one string"):
        anthropic_tool_reference_result("toolu_01C", "get_weather")
    with pytest.raises(ValueError, match="tool_use_id"):
        anthropic_tool_reference_result("", ["x"])


def test_openai_responses_client_tool_search_request_tools():
    check_golden("openai_responses_tools", to_openai_responses_tools([WEATHER, CURRENCY], search_tool=SEARCH))
    default = to_openai_responses_tools([WEATHER])
    assert default[0]["type"] == "tool_search" and default[0]["execution"] == "client"
    assert default[0]["parameters"] == DEFAULT_SEARCH_PARAMETERS


def test_openai_tool_search_output_item():
    check_golden("openai_tool_search_output", openai_tool_search_output("call_tsc_1", [WEATHER]))
    with pytest.raises(ValueError, match="call_id"):
        openai_tool_search_output("", [WEATHER])


def test_openai_shapes_match_the_sdk_typed_params():
    # The SDK's TypedDicts name every key a request may carry; a typo in ours would show up here.
    from openai.types.responses.function_tool_param import FunctionToolParam
    from openai.types.responses.response_tool_search_output_item_param_param import (
        ResponseToolSearchOutputItemParamParam,
    )
    from openai.types.responses.tool_search_tool_param import ToolSearchToolParam

    search_entry, *functions = to_openai_responses_tools([WEATHER, CURRENCY])
    assert set(search_entry) <= set(ToolSearchToolParam.__annotations__)
    for f in functions:
        assert set(f) <= set(FunctionToolParam.__annotations__)
    output = openai_tool_search_output("call_1", [WEATHER])
    assert set(output) <= set(ResponseToolSearchOutputItemParamParam.__annotations__)


def test_exports_round_trip_through_the_catalog_reader():
    tools = [WEATHER, CURRENCY]
    plain = [
        Tool(t.name, t.description, t.parameters) for t in tools
    ]  # formats other than ours drop category
    assert list(tools_from_json(to_openai_tools(tools))) == plain
    assert list(tools_from_json(to_anthropic_tools(tools))) == plain
    assert list(tools_from_json(to_mcp_tools(tools))) == plain
    assert list(tools_from_json(to_openai_responses_tools(tools)[1:])) == plain


def test_duplicates_and_non_tools_are_rejected():
    with pytest.raises(ValueError, match=r"tools\[1\]: duplicate tool name 'get_weather'"):
        to_openai_tools([WEATHER, WEATHER])
    with pytest.raises(TypeError, match=r"tools\[0\]: expected a Tool, got dict"):
        to_anthropic_tools([{"name": "x"}])


@pytest.mark.parametrize(
    "parameters, fragment",
    [
        ({"type": "object", "properties": 5}, "parameters.properties must be an object of named schemas"),
        ({"type": "object", "$ref": "#"}, r"parameters: \$ref chain # loops back to itself"),
    ],
)
def test_a_tool_built_in_code_with_a_bad_schema_is_never_exported(parameters, fragment):
    """Tool(...) checks "type": "object" and refuses NaN/Infinity; the export edge checks the rest, so no
    export ever holds a schema a provider would reject."""
    bad = Tool("hot", "Too hot to export", parameters)
    for export in (to_openai_tools, to_mcp_tools, to_anthropic_tools, to_openai_responses_tools):
        with pytest.raises(ValueError, match=rf"tools\[1\] 'hot': {fragment}.*cannot be exported"):
            export([Tool("fine", "ok"), bad])
    json.dumps(to_openai_tools([Tool("fine", "ok")]), allow_nan=False)


DROP = Tool(
    "drop_table",
    "Drop a table from the database.",
    {"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"]},
    title="Drop a table",
    annotations={"title": "Drop table", "destructiveHint": True, "readOnlyHint": False, "x-vendor": {"a": 1}},
    output_schema={"type": "object", "properties": {"dropped": {"type": "string"}}, "required": ["dropped"]},
)
MCP_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta")


def test_mcp_export_carries_title_annotations_and_output_schema_losslessly():
    record = {
        "name": "drop_table",
        "title": "Drop a table",
        "description": "Drop a table from the database.",
        "inputSchema": DROP.parameters,
        "outputSchema": DROP.output_schema,
        "annotations": DROP.annotations,
    }
    # MCP JSON -> catalog -> MCP JSON gives back the same record, key order included.
    catalog = tools_from_json({"tools": [record]})
    assert list(catalog) == [DROP]
    exported = to_mcp_tools(catalog)
    assert json.dumps(exported) == json.dumps({"tools": [record]})
    assert list(tools_from_json(exported)) == [DROP]
    # A tool without them exports without the keys.
    assert list(to_mcp_tools([WEATHER])["tools"][0]) == ["name", "description", "inputSchema"]


def test_shipped_mcp_snapshots_round_trip_through_the_mcp_export():
    from toolsearch_lab.catalog.container import load_catalog
    from toolsearch_lab.datafiles import data_path

    folder = data_path("mcp_catalogs", "github-mcp-server", "toolsnaps")
    snaps = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.snap"))]
    exported = to_mcp_tools(load_catalog("github-mcp"))["tools"]
    # icons are not part of the tool model; every field it keeps (_meta included) comes back unchanged.
    assert exported == [{k: s[k] for k in MCP_KEYS if k in s} for s in snaps]
    assert sum("_meta" in r for r in exported) == sum("_meta" in s for s in snaps) > 0
    assert sum("annotations" in r for r in exported) == 117


def test_openai_and_anthropic_shapes_and_their_token_counts_ignore_mcps_fields():
    from toolsearch_lab.tokens import TokenCounter

    bare = Tool(DROP.name, DROP.description, DROP.parameters)
    for export in (to_openai_tools, to_anthropic_tools, lambda t: to_openai_responses_tools(t)[1:]):
        assert export([DROP]) == export([bare])
        assert "annotations" not in json.dumps(export([DROP]))
    assert openai_tool_search_output("c", [DROP]) == openai_tool_search_output("c", [bare])
    counter = TokenCounter()
    assert counter.tool_tokens(DROP) == counter.tool_tokens(bare)
    assert counter.count_json([DROP]) == counter.count_json([bare])


@pytest.mark.parametrize(
    "fields, path",
    [
        ({"parameters": {"type": "object", "properties": {"t": {"maximum": float("inf")}}}}, "parameters"),
        (
            {"output_schema": {"type": "object", "properties": {"t": {"maximum": float("nan")}}}},
            "output_schema",
        ),
        ({"annotations": {"x-score": float("-inf")}}, "annotations"),
        ({"meta": {"vendor/weight": [1.0, float("nan")]}}, "meta"),
    ],
)
def test_a_tool_with_nan_or_infinity_cannot_exist_so_no_export_writes_invalid_json(fields, path):
    """JSON has no NaN or Infinity: a Tool holding one could be neither sent nor exported, so building it
    is the error, naming where the number sits."""
    with pytest.raises(
        ValueError, match=rf"tool 'hot': {path}\S* is -?(inf|nan), which is not a JSON number"
    ):
        Tool("hot", "x", **fields)
