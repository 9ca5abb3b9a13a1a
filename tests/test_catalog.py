"""Catalog loading: shipped catalogs, format detection, and validation (strict and collecting)."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from toolsearch_lab.catalog.container import (
    MAX_CATALOG_DEPTH,
    CatalogError,
    ToolCatalog,
    detect_format,
    load_catalog,
    tool_from_record,
    tools_from_json,
    validate_schema_refs,
)
from toolsearch_lab.catalog.errors import NoteKind
from toolsearch_lab.datafiles import data_path
from toolsearch_lab.model import Tool

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"],
}


# --- shipped catalogs -------------------------------------------------------------------------------------


def test_github_mcp_is_117_snaps_sorted_by_file_name_with_input_schema_as_parameters():
    catalog = load_catalog("github-mcp")
    folder = data_path("mcp_catalogs", "github-mcp-server", "toolsnaps")
    files = sorted(folder.glob("*.snap"))
    assert len(catalog) == 117 == len(files)
    first = json.loads(files[0].read_text(encoding="utf-8"))
    assert catalog[0].name == first["name"]
    assert catalog[0].parameters == first["inputSchema"]
    assert catalog[0].description == first["description"]
    assert catalog.names == [json.loads(f.read_text(encoding="utf-8"))["name"] for f in files]
    assert catalog.source == "github-mcp" and catalog.report.ok


def test_livemcpbench_keeps_first_occurrence_and_records_every_duplicate_and_null_description():
    catalog = load_catalog("livemcpbench")
    normalized = json.loads(data_path("livemcpbench", "normalized.json").read_text(encoding="utf-8"))
    assert len(catalog) == 510
    assert catalog.names == [t["name"] for t in normalized["tools"]]
    for got, want in zip(catalog, normalized["tools"], strict=False):
        assert (got.description, got.parameters) == (want["description"], want["parameters"])
    # category is the server's category
    assert catalog.get("bing_search").category == "Discovery"
    assert catalog.get("get_price_history").category == "Finance"
    dup_notes = [n for n in catalog.report.notes if "kept the first occurrence" in n.message]
    null_notes = [n for n in catalog.report.notes if "description is null" in n.message]
    assert len(dup_notes) == 527 - 510
    assert len({n.tool for n in dup_notes}) == 13
    assert len(null_notes) == 15
    assert {n.kind for n in dup_notes} == {NoteKind.KEPT_FIRST}  # what the doctor reads them by
    assert {n.kind for n in null_notes} == {NoteKind.NORMALISED}
    assert catalog.report.ok  # notes only, no problems


def test_metatool_has_199_tools_and_renames_the_invalid_name():
    catalog = load_catalog("metatool")
    assert len(catalog) == 199
    assert catalog.renames == {"PDF&URLTool": "PDF_URLTool"}
    assert "PDF_URLTool" in catalog
    (note,) = [n for n in catalog.report.notes if "renamed from 'PDF&URLTool'" in n.message]
    assert note.kind is NoteKind.RENAMED


def test_a_name_the_tool_refuses_is_named_once_whatever_it_holds():
    with pytest.raises(CatalogError) as info:
        tool_from_record({"name": "get: weather", "description": "Get the weather"}, "mcp")
    assert info.value.problem.startswith("field 'name' must match")  # not cut at the name's own ": "
    assert str(info.value).startswith("tool 'get: weather': field 'name' must match")


def test_merge_notes_are_told_apart_by_kind_whatever_the_server_names_spell(capsys):
    from toolsearch_lab.catalog.merge import merge_catalogs
    from toolsearch_lab.cli.live_servers import report_dropped
    from toolsearch_lab.eval.doctor.inputs import resolve

    shared = Tool("status", "Show the status")
    # Server names that spell the words of other notes: "was taken", "renamed".
    parts = {
        "was taken": ToolCatalog([shared]),
        "x renamed": ToolCatalog([shared]),
        "git alpha": ToolCatalog([Tool("log", "Show the log")]),
        "git_alpha": ToolCatalog([Tool("diff", "Show a diff")]),
    }
    merged = merge_catalogs(parts)
    kinds = [n.kind for n in merged.report.notes]
    assert sorted(kinds) == sorted([NoteKind.SERVER, NoteKind.SHARED, NoteKind.SHARED])
    report_dropped(merged.report, "tokens")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "toolsearch-lab tokens: 2 tool name(s) several servers share are qualified as <server>__<tool> "
        "(--namespace)"
    )
    assert len(err) == 2 and "qualifies its tools as 'git_alpha_2'" in err[1]  # the server's own note
    findings = resolve(merged).findings
    assert sorted(f.kind for f in findings) == ["load-note", "name-collision"]


def test_a_catalog_is_a_value_its_constructor_sets_whole():
    """Copies and a pickle round trip equal the catalog with everything that describes it; nothing can be
    assigned afterwards, and ``origins`` may only name the catalog's own tools."""
    metatool = load_catalog("metatool")
    for twin in (copy.copy(metatool), copy.deepcopy(metatool), pickle.loads(pickle.dumps(metatool))):
        assert twin == metatool and twin is not metatool
        assert (twin.source, twin.report, twin.renames) == (
            metatool.source,
            metatool.report,
            metatool.renames,
        )
    with pytest.raises(AttributeError):
        metatool.renames = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        metatool.failures = {}  # type: ignore[attr-defined]
    tools = [Tool("status", "Shows the status")]
    assert ToolCatalog(tools, origins={"status": ("git", "git_status")}).origins["status"] == (
        "git",
        "git_status",
    )
    with pytest.raises(CatalogError, match="origins name 'ghost', which is not a tool of this catalog"):
        ToolCatalog(tools, origins={"ghost": ("git", "ghost")})


def test_unknown_catalog_name_lists_the_shipped_names():
    with pytest.raises(CatalogError) as err:
        load_catalog("no-such-catalog")
    message = str(err.value)
    for name in ("github-mcp", "livemcpbench", "metatool"):
        assert name in message
    assert "no-such-catalog" in message


# --- formats --------------------------------------------------------------------------------------------


def test_openai_chat_completions_tools():
    doc = [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "Weather", "parameters": WEATHER_SCHEMA},
        }
    ]
    assert detect_format(doc) == "openai"
    (tool,) = tools_from_json(doc)
    assert tool == Tool("get_weather", "Weather", WEATHER_SCHEMA)
    assert tool.definition() == doc[0]


def test_openai_responses_flat_function_tools():
    doc = {
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Weather",
                "parameters": WEATHER_SCHEMA,
            }
        ]
    }
    assert tools_from_json(doc)[0] == Tool("get_weather", "Weather", WEATHER_SCHEMA)


def test_anthropic_tools_ignore_extra_keys():
    doc = [
        {
            "name": "get_weather",
            "description": "Weather",
            "input_schema": WEATHER_SCHEMA,
            "defer_loading": True,
        }
    ]
    assert detect_format(doc) == "anthropic"
    assert tools_from_json(doc)[0] == Tool("get_weather", "Weather", WEATHER_SCHEMA)


def test_anthropic_server_tool_is_reported():
    doc = [{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex", "input_schema": {}}]
    with pytest.raises(CatalogError, match="server tool"):
        tools_from_json(doc)


@pytest.mark.parametrize("wrap", ["result", "bare", "jsonrpc"])
def test_mcp_tools_list_result_bare_list_and_jsonrpc(wrap):
    tools = [
        {"name": "get_weather", "description": "Weather", "inputSchema": WEATHER_SCHEMA, "annotations": {}}
    ]
    doc = {
        "result": {"tools": tools},
        "bare": tools,
        "jsonrpc": {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}},
    }[wrap]
    assert detect_format(doc) == "mcp"
    # MCP's own fields are kept, an empty annotations object too (the MCP export writes it back).
    assert tools_from_json(doc)[0] == Tool("get_weather", "Weather", WEATHER_SCHEMA, annotations={})


def test_dataset_format_keeps_category_and_fills_missing_parameters():
    doc = {
        "tools": [{"name": "a", "description": "A", "category": "x"}, {"name": "b", "description": "B"}],
        "queries": [{"query": "q", "relevant_tools": ["a"]}],
    }
    assert detect_format(doc) == "dataset"
    a, b = tools_from_json(doc)
    assert a.category == "x"
    assert a.parameters == b.parameters == {"type": "object", "properties": {}}


def test_format_can_be_forced_and_unknown_format_is_an_error():
    doc = [{"name": "t", "description": "d", "input_schema": WEATHER_SCHEMA}]
    # forced "mcp" looks for inputSchema (or input_schema), so this reads the same
    assert tools_from_json(doc, format="mcp")[0].parameters == WEATHER_SCHEMA
    # forced "dataset" reads "parameters": absent -> no arguments
    assert tools_from_json(doc, format="dataset")[0].parameters == {"type": "object", "properties": {}}
    with pytest.raises(CatalogError, match="unknown format 'yaml'"):
        tools_from_json(doc, format="yaml")


def test_mixed_formats_are_an_error_naming_both():
    doc = [
        {"name": "a", "description": "A", "inputSchema": WEATHER_SCHEMA},
        {"name": "b", "description": "B", "input_schema": WEATHER_SCHEMA},
    ]
    with pytest.raises(CatalogError, match=r"mix formats: mcp \(first at #0\), anthropic \(first at #1\)"):
        tools_from_json(doc)


def test_unrecognised_document():
    with pytest.raises(CatalogError, match="cannot find tools"):
        tools_from_json({"servers": []})


def test_tool_from_record_is_reusable():
    tool = tool_from_record({"name": "x", "description": "d", "parameters": None, "category": "c"}, "dataset")
    assert tool == Tool("x", "d", {"type": "object", "properties": {}}, "c")


# --- validation -----------------------------------------------------------------------------------------


def _mcp(name="t", description="d", schema=None):
    out = {"name": name, "description": description}
    if schema is not None:
        out["inputSchema"] = schema
    return out


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"description": "d", "inputSchema": WEATHER_SCHEMA}, r"tool #0: missing 'name'"),
        (_mcp(name="bad name!"), r"tool 'bad name!' \(#0\): field 'name' must match"),
        ({"name": "t", "inputSchema": WEATHER_SCHEMA}, r"tool 't' \(#0\): missing 'description'"),
        (_mcp(description=None), r"tool 't' \(#0\): 'description' must be a string, got NoneType"),
        (_mcp(description=3), r"'description' must be a string, got int"),
        (_mcp(schema=[1]), r"tool 't' \(#0\): 'inputSchema' must be a JSON Schema object, got list"),
        (_mcp(schema={"type": "string"}), r"'inputSchema' must have \"type\": \"object\".*got 'string'"),
        (_mcp(schema={"properties": {}}), r"must have \"type\": \"object\".*got None"),
        ("just a string", r"tool #0: expected a JSON object, got str"),
    ],
)
def test_invalid_records_name_the_tool_and_the_problem(record, message):
    with pytest.raises(CatalogError, match=message):
        tools_from_json([record], format="mcp")


def test_catalog_error_is_a_value_error_with_parts():
    with pytest.raises(ValueError) as err:
        tools_from_json([_mcp(description=None)], source="mine.json")
    assert str(err.value).startswith("mine.json: tool 't' (#0): ")
    assert err.value.tool == "'t' (#0)"
    assert err.value.problem == "'description' must be a string, got NoneType"


def test_duplicate_names_strict_and_collected():
    doc = [_mcp("a"), _mcp("b"), _mcp("a", description="other")]
    with pytest.raises(CatalogError, match=r"tool 'a' \(#2\): duplicate name \(first defined at #0\)"):
        tools_from_json(doc)
    catalog = tools_from_json(doc, strict=False)
    assert catalog.names == ["a", "b"]
    assert catalog.get("a").description == "d"  # first wins
    assert [(p.tool, p.message) for p in catalog.report.problems] == [
        ("'a' (#2)", "duplicate name (first defined at #0)")
    ]


REF_SCHEMA = {
    "type": "object",
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
    "definitions": {"a/b": {"type": "string"}},
    "properties": {
        "p": {"$ref": "#/$defs/Point"},
        "q": {"$ref": "#/definitions/a~1b"},
        "r": {"$ref": "#/properties/p"},
        "s": {"$ref": "#"},
        "t": {"$anchor": "tee", "type": "string"},
        "u": {"$ref": "#tee"},
        "v": {"type": "string", "default": {"$ref": "#/nowhere"}},  # data, not a reference
        "w": {"type": "array", "items": [{"$ref": "#/properties/w/items/1"}, {"type": "string"}]},
    },
}


def test_local_refs_resolve_against_the_tools_own_schema():
    assert validate_schema_refs(REF_SCHEMA) == []
    assert tools_from_json([_mcp(schema=REF_SCHEMA)])[0].parameters == REF_SCHEMA


def test_shipped_refs_resolve():
    # LiveMCPBench's chart tools use refs such as "#/properties/data/items".
    assert load_catalog("livemcpbench").report.ok


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("#/$defs/Missing", r"'#/\$defs/Missing' does not resolve \(#/\$defs has no 'Missing'\)"),
        ("#/definitions/Point", r"\(# has no 'definitions'\)"),
        ("#nope", r"no \"\$anchor\": 'nope'"),
        ("https://example.com/s.json", r"is not local"),
    ],
)
def test_unresolvable_refs_name_tool_path_and_ref(ref, why):
    schema = {"type": "object", "$defs": {"Point": {"type": "object"}}, "properties": {"p": {"$ref": ref}}}
    with pytest.raises(CatalogError, match=r"tool 't' \(#0\): inputSchema\.properties\.p: \$ref .*" + why):
        tools_from_json([_mcp(schema=schema)])


def test_lone_surrogates_are_reported_with_their_place():
    doc = json.loads('[{"name": "t", "description": "bad \\ud800 text", "inputSchema": {"type": "object"}}]')
    with pytest.raises(
        CatalogError, match=r"tool 't' \(#0\): description: lone surrogate U\+D800 at character 4"
    ):
        tools_from_json(doc)
    nested = json.loads(
        '[{"name": "t", "description": "d", "inputSchema": '
        '{"type": "object", "properties": {"x": {"description": "\\udfff"}}}}]'
    )
    with pytest.raises(
        CatalogError, match=r"inputSchema\.properties\.x\.description: lone surrogate U\+DFFF"
    ):
        tools_from_json(nested)


def test_non_utf8_file_reports_the_byte_offset(tmp_path):
    path = tmp_path / "tools.json"
    prefix = b'[{"name": "t", "description": "caf'
    path.write_bytes(prefix + b'\xe9"}]')  # Latin-1 e-acute
    with pytest.raises(
        CatalogError, match=rf"not valid UTF-8 at byte offset {len(prefix)} \(line 1\): bytes e9"
    ):
        load_catalog(path)


def test_bom_is_tolerated_and_invalid_json_is_located(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(b"\xef\xbb\xbf" + json.dumps([_mcp()]).encode())
    assert load_catalog(good).names == ["t"]
    bad = tmp_path / "bad.json"
    bad.write_text('[{"name": "t",\n  oops}]', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"bad.json: invalid JSON at line 2 column 3"):
        load_catalog(bad)


def test_non_strict_collects_every_problem_and_keeps_valid_tools(tmp_path):
    doc = {
        "tools": [
            _mcp("ok1"),
            {"name": "nodesc", "inputSchema": {"type": "object"}},
            _mcp("badref", schema={"type": "object", "properties": {"a": {"$ref": "#/$defs/X"}}}),
            _mcp("ok2", schema=WEATHER_SCHEMA),
            _mcp("ok1"),
            7,
        ]
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"mcp.json: tool 'nodesc' \(#1\): missing 'description'"):
        load_catalog(path)
    catalog = load_catalog(path, strict=False)
    assert catalog.names == ["ok1", "ok2"]
    assert [p.tool for p in catalog.report.problems] == ["'nodesc' (#1)", "'badref' (#2)", "'ok1' (#4)", "#5"]
    assert not catalog.report.ok
    assert "4 problem(s)" in str(catalog.report)


def test_directory_of_tool_files(tmp_path):
    (tmp_path / "b.snap").write_text(json.dumps(_mcp("b")), encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps([_mcp("a1"), _mcp("a2")]), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    assert load_catalog(tmp_path).names == ["a1", "a2", "b"]


# --- ToolCatalog ----------------------------------------------------------------------------------------


def test_tool_catalog_sequence_protocol_and_lookup():
    a, b = Tool("alpha", "A"), Tool("beta", "B")
    catalog = ToolCatalog([a, b], source="mem")
    assert len(catalog) == 2 and list(catalog) == [a, b] and catalog[1] is b
    assert catalog.tools == [a, b] and catalog.names == ["alpha", "beta"]
    assert "alpha" in catalog and a in catalog and "gamma" not in catalog
    assert catalog.get("beta") is b
    assert catalog.get("gamma", None) is None
    assert isinstance(catalog[:1], ToolCatalog) and catalog[:1].names == ["alpha"]
    with pytest.raises(
        KeyError, match=r"no tool named 'alpah' in catalog 'mem' \(2 tools\); did you mean 'alpha'"
    ):
        catalog.get("alpah")
    assert catalog.definitions() == [a.definition(), b.definition()]


def test_tool_catalog_rejects_duplicates_and_non_tools():
    with pytest.raises(CatalogError, match=r"tool 'a' \(#1\): duplicate name \(first defined at #0\)"):
        ToolCatalog([Tool("a", "x"), Tool("a", "y")])
    with pytest.raises(CatalogError, match=r"catalog item #0: expected a Tool, got dict"):
        ToolCatalog([{"name": "a"}])


# ---- hardening II: depth, schema structure, names --------------------------------------------------------
def test_catalog_file_nested_3000_levels_is_a_catalog_error_naming_file_and_limit(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(
        '{"tools": [{"name": "x", "description": "d", "parameters": ' + "[" * 3000 + "]" * 3000 + "}]}"
    )
    with pytest.raises(
        CatalogError, match=rf"deep.json: JSON nested 3003 levels deep; the limit is {MAX_CATALOG_DEPTH}"
    ):
        load_catalog(path)


def test_a_record_nested_past_the_limit_or_circular_is_named():
    deep: dict = {"type": "object"}
    node = deep
    for _ in range(MAX_CATALOG_DEPTH + 5):
        node["properties"] = {"p": {"type": "object"}}
        node = node["properties"]["p"]
    with pytest.raises(
        CatalogError, match=r"tool 'deep' \(#0\): the record is unusable: it is nested more than 100"
    ):
        tools_from_json([{"name": "deep", "description": "", "parameters": deep}])
    loop: dict = {"type": "object", "properties": {}}
    loop["properties"]["me"] = loop
    with pytest.raises(CatalogError, match=r"tool 'loop' \(#0\): the record is unusable: it contains itself"):
        tools_from_json([{"name": "loop", "description": "", "parameters": loop}])


@pytest.mark.parametrize(
    "parameters, message",
    [
        (
            {"type": "object", "properties": 5},
            r"parameters.properties must be an object of named schemas, got int 5",
        ),
        (
            {"type": "object", "properties": {"a": 3}},
            r"parameters.properties.a must be a schema object, got int",
        ),
        ({"type": "object", "required": 7}, r"parameters.required must be a list of property names, got 7"),
        ({"type": "object", "required": ["a", 1]}, r"parameters.required must be a list of property names"),
        ({"type": "object", "anyOf": {"type": "string"}}, r"parameters.anyOf must be a list of schemas"),
        ({"type": "object", "$ref": "#"}, r"parameters: \$ref chain # loops back to itself"),
        (
            {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
            r"parameters.\$defs.a: \$ref chain #/\$defs/b -> #/\$defs/a loops back",
        ),
        (
            {"type": "object", "properties": {"t": {"maximum": float("nan")}}},
            r"parameters.properties.t.maximum is nan",
        ),
        (
            {"type": "object", "properties": {"t": {"minimum": float("-inf")}}},
            r"parameters.properties.t.minimum is -inf",
        ),
        (
            {
                "type": "object",
                "properties": {"q": {"type": "object", "properties": {"r": {"required": "r"}}}},
            },
            r"parameters.properties.q.properties.r.required must be a list",
        ),
    ],
)
def test_malformed_schemas_name_the_tool_and_the_field(parameters, message):
    with pytest.raises(CatalogError, match=r"tool 'bad' \(#0\): " + message):
        tools_from_json([{"name": "bad", "description": "d", "parameters": parameters}])


def test_recursive_schemas_and_properties_named_like_keywords_are_fine():
    tree = {
        "type": "object",
        "properties": {
            "children": {"type": "array", "items": {"$ref": "#"}},
            "properties": {"type": "string"},
            "required": {"type": "boolean"},
        },
        "required": ["children"],
    }
    assert tools_from_json([{"name": "tree", "description": "d", "parameters": tree}]).names == ["tree"]


def test_nan_in_a_catalog_file_is_reported_not_exported(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text('[{"name": "t", "description": "d", "parameters": {"type": "object", "x-limit": NaN}}]')
    with pytest.raises(
        CatalogError, match=r"tool 't' \(#0\): parameters.x-limit is nan, which is not a JSON number"
    ):
        load_catalog(path)


@pytest.mark.parametrize("name", ["get_weather\n", "get_weather\r\n", "\nget_weather", "get weather"])
def test_names_with_a_trailing_newline_or_whitespace_are_rejected(name):
    with pytest.raises(ValueError, match="field 'name' must match"):
        Tool(name, "Get the weather")
    with pytest.raises(CatalogError, match="field 'name' must match"):
        tools_from_json([{"name": name, "description": "Get the weather"}])


# --- MCP's own fields: title, annotations, outputSchema ---------------------------------------------------

DROP_RECORD = {
    "name": "drop_table",
    "title": "Drop a table",
    "description": "Drop a table from the database.",
    "inputSchema": {"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"]},
    "outputSchema": {
        "type": "object",
        "properties": {"dropped": {"$ref": "#/$defs/name"}},
        "$defs": {"name": {"type": "string"}},
    },
    "annotations": {"title": "Drop table", "destructiveHint": True, "readOnlyHint": False, "x-vendor": [1]},
}


def test_mcp_records_keep_title_annotations_and_output_schema():
    t = tools_from_json({"tools": [DROP_RECORD]})[0]
    assert t.title == "Drop a table"
    assert t.annotations == DROP_RECORD["annotations"]  # the unknown key is kept as it is
    assert t.output_schema == DROP_RECORD["outputSchema"]
    assert t.destructive and not t.read_only
    # Part of the definition: equality sees them.
    assert t != Tool(t.name, t.description, t.parameters)
    # A record with only MCP's own fields and no inputSchema is still read as MCP.
    bare = {"name": "x", "description": "X", "annotations": {"readOnlyHint": True}}
    assert detect_format([bare]) == "mcp"
    assert tools_from_json([bare])[0].read_only


def test_other_formats_carry_none_of_mcps_fields():
    openai = {"type": "function", "function": {"name": "a", "description": "A"}, "annotations": {"x": 1}}
    dataset = {"name": "b", "description": "B", "parameters": EMPTY_OBJECT, "title": "B!"}
    assert tools_from_json([openai])[0].annotations is None
    assert tools_from_json([dataset])[0].title is None


EMPTY_OBJECT = {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"annotations": {"destructiveHint": "yes"}},
            "'annotations': 'destructiveHint' must be true or false",
        ),
        ({"annotations": {"title": 3}}, "'annotations': 'title' must be a string"),
        ({"annotations": [True]}, "'annotations': must be a JSON object"),
        ({"annotations": {"x": float("nan")}}, r"annotations.x is nan"),
        ({"title": 7}, "'title' must be a string, got int"),
        ({"outputSchema": {"type": "string"}}, "'outputSchema' must be a JSON Schema object"),
        (
            {"outputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/b"}}}},
            r"\$ref '#/\$defs/b'",
        ),
    ],
)
def test_bad_mcp_fields_name_the_tool_and_the_field(change, message):
    record = {**DROP_RECORD, **change}
    with pytest.raises(CatalogError, match=r"tool 'drop_table'.*" + message):
        tools_from_json([record], format="mcp")
    loose = tools_from_json(
        [record, {"name": "ok", "description": "fine", "inputSchema": EMPTY_OBJECT}],
        format="mcp",
        strict=False,
    )
    assert loose.names == ["ok"] and len(loose.report.problems) == 1


def test_tool_checks_mcp_fields_when_built_in_code():
    with pytest.raises(
        ValueError, match=r"tool 'a': field 'annotations': 'readOnlyHint' must be true or false"
    ):
        Tool("a", "A", annotations={"readOnlyHint": 1})
    with pytest.raises(ValueError, match=r"field 'output_schema' must be None or a JSON Schema object"):
        Tool("a", "A", output_schema={"type": "array"})
    with pytest.raises(ValueError, match=r"field 'title' must be a string or None, got int"):
        Tool("a", "A", title=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("annotations", "destructive"),
    [
        (None, False),  # MCP assumes "may be destructive"; only a declaration counts
        ({}, False),
        ({"destructiveHint": True}, True),
        ({"destructiveHint": True, "readOnlyHint": True}, False),  # the hint means nothing when read-only
        ({"destructiveHint": False, "readOnlyHint": False}, False),
    ],
)
def test_destructive_means_declared_destructive(annotations, destructive):
    assert Tool("a", "A", annotations=annotations).destructive is destructive


def test_shipped_github_catalog_keeps_its_annotations():
    catalog = load_catalog("github-mcp")
    declared = sorted(t.name for t in catalog if t.destructive)
    assert "delete_repository" in declared and "delete_file" in declared and len(declared) == 10
    assert catalog.get("actions_get").read_only
