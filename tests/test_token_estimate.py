"""Token estimates that count what a provider's renderer shows the model (issue 30, finding 1): local
``$ref`` s resolved, ``$defs`` nobody uses counted nothing, recursive refs counted once and named, titles
and defaults counted; checked against an independent count, OpenAI's own renderer of its tool format
(``openai-harmony``, loaded offline from the rank file the package ships), on real servers' schemas
(tests/fixtures/mcp_servers) and on schemas of our own. The exact size of the JSON as sent
(``count_json``) is reported beside it."""

from __future__ import annotations

import gzip
import json
import os
from importlib import resources
from pathlib import Path

import pytest

from toolsearch_lab.catalog.container import load_catalog, tools_from_json
from toolsearch_lab.model import Tool
from toolsearch_lab.schema import MAX_RESOLVED_NODES, resolve_local_refs
from toolsearch_lab.tokens import TokenCounter

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "mcp_servers"
TOLERANCE = 0.10  # the acceptance: within 10 % of an independent count


@pytest.fixture(scope="module")
def harmony(tmp_path_factory):
    """A function counting what openai-harmony renders for a list of tools (their ``$ref`` s resolved: harmony
    itself does not resolve them and would show the model ``any``), minus an empty developer message."""
    h = pytest.importorskip("openai_harmony", reason="openai-harmony is in the test extra")
    folder = tmp_path_factory.mktemp("encodings")
    shipped = resources.files("toolsearch_lab").joinpath("resources/tiktoken/o200k_base.tiktoken.gz")
    (folder / "o200k_base.tiktoken").write_bytes(gzip.decompress(shipped.read_bytes()))
    saved = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)  # no download: the file the package verifies
    try:
        encoding = h.load_harmony_encoding(h.HarmonyEncodingName.HARMONY_GPT_OSS)
    finally:
        if saved is None:
            os.environ.pop("TIKTOKEN_ENCODINGS_BASE", None)
        else:
            os.environ["TIKTOKEN_ENCODINGS_BASE"] = saved

    def render(tools: list[Tool]) -> int:
        developer = h.DeveloperContent.new()
        if tools:
            developer = developer.with_function_tools(
                [
                    h.ToolDescription.new(
                        t.name, t.description, parameters=resolve_local_refs(t.parameters).schema
                    )
                    for t in tools
                ]
            )
        message = h.Message.from_role_and_content(h.Role.DEVELOPER, developer)
        return len(encoding.render_conversation(h.Conversation.from_messages([message])))

    return lambda tools: render(tools) - render([])


def _fixture(name: str) -> list[Tool]:
    records = json.loads((FIXTURES / f"{name}.tools.json").read_text(encoding="utf-8"))["tools"]
    catalog = tools_from_json(records, format="mcp", strict=False)
    assert not catalog.report.problems, catalog.report
    return list(catalog)


@pytest.mark.parametrize(
    "name",
    [
        "excel-mcp-server",  # 13 tools with $defs (65 refs): the "4,849 vs 13,501"
        "pagerduty-mcp",  # 38 tools with $defs (380 refs)
        "office-word-mcp-server",
        "mcp-server-git",
        "mcp-server-time",
        "mcp-server-fetch",
        "github-mcp",  # the shipped catalog
    ],
)
def test_the_estimate_is_within_ten_percent_of_openais_renderer_on_real_schemas(name, harmony):
    tools = list(load_catalog("github-mcp")) if name == "github-mcp" else _fixture(name)
    counter = TokenCounter()
    estimate, independent = counter.tools_tokens(tools), harmony(tools)
    assert abs(estimate / independent - 1) <= TOLERANCE, (name, estimate, independent)
    print(f"{name}: estimate {estimate:,}, harmony {independent:,}, ratio {estimate / independent:.3f}")


def test_defs_are_counted_where_they_are_used_and_the_exact_json_is_reported_beside():
    counter = TokenCounter()
    chart = next(t for t in _fixture("excel-mcp-server") if t.name == "create_chart")
    cost = counter.definition_cost(chart)
    assert cost.refs == 11 and cost.recursive == () and cost.unresolved == ()
    assert cost.estimate == counter.tool_tokens(chart) > 1_500  # 386 when $defs counted nothing
    assert cost.json == counter.count_json(chart) == 1_889


# Held-out schemas of our own: a calendar API with nested $defs, a recursive tree, a chain of refs.
_ATTENDEE = {
    "type": "object",
    "title": "Attendee",
    "properties": {
        "email": {"type": "string", "description": "Where the invitation goes"},
        "role": {"type": "string", "enum": ["required", "optional", "chair"], "default": "required"},
    },
    "required": ["email"],
}
HELD_OUT = [
    Tool(
        "create_event",
        "Create a calendar event and invite people to it.",
        {
            "type": "object",
            "$defs": {
                "Attendee": _ATTENDEE,
                "Recurrence": {
                    "type": "object",
                    "properties": {
                        "frequency": {"type": "string", "enum": ["daily", "weekly", "monthly", "yearly"]},
                        "count": {"type": "integer", "title": "Occurrences", "default": 10},
                        "until": {"type": "string", "description": "Last day (ISO 8601 date)"},
                    },
                },
                "Unused": {
                    "type": "object",
                    "properties": {"x" * 40: {"type": "string", "description": "y" * 400}},
                },
            },
            "properties": {
                "title": {"type": "string", "description": "What the event is called", "title": "Title"},
                "start": {"type": "string", "description": "Start time, ISO 8601"},
                "attendees": {"type": "array", "items": {"$ref": "#/$defs/Attendee"}},
                "organiser": {"$ref": "#/$defs/Attendee", "description": "Who owns the event"},
                "repeat": {"$ref": "#/$defs/Recurrence"},
            },
            "required": ["title", "start"],
        },
    ),
    Tool(
        "update_event",
        "Change an existing calendar event: its time, its people or how it repeats.",
        {
            "type": "object",
            "definitions": {
                "Attendee": _ATTENDEE,
                "People": {"type": "array", "items": {"$ref": "#/definitions/Attendee"}},
            },
            "properties": {
                "event_id": {"type": "string", "description": "The event to change"},
                "add": {"$ref": "#/definitions/People"},
                "remove": {"$ref": "#/definitions/People"},
                "notify": {
                    "type": "boolean",
                    "default": True,
                    "description": "Email everyone about the change",
                },
            },
            "required": ["event_id"],
        },
    ),
]


def test_the_estimate_holds_on_schemas_of_our_own(harmony):
    counter = TokenCounter()
    estimate, independent = counter.tools_tokens(HELD_OUT), harmony(HELD_OUT)
    assert abs(estimate / independent - 1) <= TOLERANCE, (estimate, independent)
    # the unused $defs entry (440 characters) costs nothing in the estimate, everything in the JSON sent
    without_unused = dict(
        HELD_OUT[0].parameters,
        **{"$defs": {k: v for k, v in HELD_OUT[0].parameters["$defs"].items() if k != "Unused"}},
    )
    lean = Tool("create_event", HELD_OUT[0].description, without_unused)
    assert counter.tool_tokens(lean) == counter.tool_tokens(HELD_OUT[0])
    assert counter.count_json(lean) < counter.count_json(HELD_OUT[0]) - 80


def test_a_recursive_ref_is_counted_once_and_named_and_resolution_is_bounded():
    tree = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "elsewhere": {"$ref": "https://example.com/schema.json"},
        },
    }
    resolved = resolve_local_refs(tree)
    assert resolved.recursive == ["#/$defs/Node"] and resolved.unresolved == [
        "https://example.com/schema.json"
    ]
    root = resolved.schema["properties"]["root"]
    assert root["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}  # once: not expanded again
    counter = TokenCounter()
    cost = counter.definition_cost(Tool("walk_tree", "Walk a tree", tree))
    assert cost.recursive == ("#/$defs/Node",) and cost.estimate > counter.tool_tokens(
        Tool("walk_tree", "Walk a tree")
    )
    # refs used many times inside refs used many times: exponential when expanded, bounded here
    defs = {
        f"L{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/L{i + 1}"}, "b": {"$ref": f"#/$defs/L{i + 1}"}},
        }
        for i in range(30)
    }
    defs["L30"] = {"type": "string"}
    bomb = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/L0"}}}
    blown = resolve_local_refs(bomb)
    assert blown.truncated and blown.refs <= MAX_RESOLVED_NODES
    assert counter.tool_tokens(Tool("bomb", "expands", bomb)) > 0
