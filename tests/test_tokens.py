"""TokenCounter: exact offline tiktoken counts and the cookbook's request/tool estimates."""

from __future__ import annotations

import gzip
import json
import threading

import pytest
import tiktoken

from toolsearch_lab import tokens
from toolsearch_lab.model import Tool
from toolsearch_lab.tokens import (
    ENCODINGS,
    TOOL_FORMAT,
    TokenCounter,
    encoding_for_model,
    encodings,
    get_encoding,
)
from toolsearch_lab.trace import RequestTokens


@pytest.fixture(scope="module")
def o200k() -> TokenCounter:
    return TokenCounter("o200k_base")


@pytest.fixture(scope="module")
def cl100k() -> TokenCounter:
    return TokenCounter("cl100k_base")


def weather_tool() -> Tool:
    return Tool(
        "get_current_weather",
        "Get the current weather in a given location",
        {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {
                    "type": "string",
                    "description": "The unit of temperature to return",
                    "enum": ["celsius", "fahrenheit"],
                },
            },
            "required": ["location"],
        },
    )


# ---------------------------------------------------------------------------------------------- exact counts
@pytest.mark.parametrize(
    "encoding, text, ids",
    [
        ("o200k_base", "hello world", [24912, 2375]),
        ("cl100k_base", "hello world", [15339, 1917]),
        # cookbook section 3 shows these cl100k ids; the o200k ids were checked by decoding them one by one
        ("cl100k_base", "tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
        ("o200k_base", "tiktoken is great!", [83, 8251, 2488, 382, 2212, 0]),
        # cookbook section 5 shows both encodings for this string (9 vs 8 tokens)
        ("cl100k_base", "お誕生日おめでとう", [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699]),
        ("o200k_base", "お誕生日おめでとう", [8930, 9697, 243, 128225, 8930, 17693, 4344, 48669]),
    ],
)
def test_known_token_ids(encoding, text, ids):
    counter = TokenCounter(encoding)
    assert counter.encode(text) == ids
    assert counter.count(text) == len(ids)
    assert counter.decode(ids) == text


def test_o200k_token_pieces_of_tiktoken_is_great(o200k):
    pieces = [o200k.encoding.decode_single_token_bytes(t) for t in o200k.encode("tiktoken is great!")]
    assert pieces == [b"t", b"ikt", b"oken", b" is", b" great", b"!"]  # cl100k splits "ik" + "token"


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    "text",
    [
        "",
        "naïve café",
        "Straße ΣΊΣΥΦΟΣ",
        "日本語のテキスト",
        "emoji 👩‍💻🚀 mixed",
        "مرحبا بالعالم",
        "e\u0301 combining",
        "\n\t  x",
    ],
)
def test_unicode_round_trip(encoding, text):
    counter = TokenCounter(encoding)
    assert counter.decode(counter.encode(text)) == text


def test_special_token_text_is_counted_as_plain_text(o200k):
    # user-supplied text never becomes a control token, and must not raise as tiktoken's encode() would
    assert o200k.count("<|endoftext|>") > 1


def test_empty_text_is_zero(o200k):
    assert o200k.count("") == 0


def test_unknown_encoding_lists_valid_ones():
    with pytest.raises(ValueError, match="o200k_base, cl100k_base"):
        TokenCounter("p50k_base")
    with pytest.raises(ValueError, match="valid encodings"):
        get_encoding("nope")


def test_pattern_and_special_tokens_match_installed_tiktoken(monkeypatch):
    # call tiktoken's own constructors with their download replaced, to compare the structure we copied
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    for name in ENCODINGS:
        expected = openai_public.ENCODING_CONSTRUCTORS[name]()
        assert get_encoding(name)._pat_str == expected["pat_str"]
        assert get_encoding(name)._special_tokens == expected["special_tokens"]


# ----------------------------------------------------------------------------------- loading, offline, cache
def _block_downloads(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("tiktoken download/cache path used")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken.load, "load_tiktoken_bpe", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)


def test_builds_encodings_without_tiktoken_downloads(monkeypatch):
    _block_downloads(monkeypatch)
    monkeypatch.setattr(encodings, "_ENCODINGS", {})
    for name in ENCODINGS:
        counter = TokenCounter(name)
        assert counter.encoding.name == name
        assert counter.count("hello world") == 2


def test_tampered_rank_file_raises(monkeypatch):
    raw = bytearray(gzip.decompress(encodings._rank_file_bytes("cl100k_base")))
    raw[1000] = ord("A") if raw[1000] != ord("A") else ord("B")  # one changed byte inside a base64 token
    monkeypatch.setattr(encodings, "_rank_file_bytes", lambda name: gzip.compress(bytes(raw)))
    monkeypatch.setattr(encodings, "_ENCODINGS", {})
    with pytest.raises(RuntimeError, match="integrity check.*expected 223921b7"):
        get_encoding("cl100k_base")
    assert "cl100k_base" not in encodings._ENCODINGS  # a failed load is not cached


def test_unreadable_rank_file_raises(monkeypatch):
    monkeypatch.setattr(encodings, "_rank_file_bytes", lambda name: b"not gzip")
    monkeypatch.setattr(encodings, "_ENCODINGS", {})
    with pytest.raises(RuntimeError, match="unreadable"):
        get_encoding("o200k_base")


def test_encoding_is_built_once_across_threads(monkeypatch):
    monkeypatch.setattr(encodings, "_ENCODINGS", {})
    calls = []
    real_load = encodings._load_encoding
    monkeypatch.setattr(encodings, "_load_encoding", lambda name: calls.append(name) or real_load(name))
    results = []
    threads = [threading.Thread(target=lambda: results.append(get_encoding("cl100k_base"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["cl100k_base"]
    assert len(results) == 8 and all(r is results[0] for r in results)


@pytest.mark.parametrize(
    "model, encoding",
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("openai/gpt-4.1-nano", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o1", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("ft:gpt-4o-mini:acme::abc", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo-0125", "cl100k_base"),
    ],
)
def test_encoding_for_model(model, encoding):
    assert encoding_for_model(model) == encoding


def test_unknown_model_falls_back_to_o200k_with_a_warning():
    with pytest.warns(UserWarning, match="unknown model 'llama3'"):
        assert encoding_for_model("llama3") == "o200k_base"
    with pytest.warns(UserWarning):
        assert TokenCounter.for_model("mystery").encoding_name == "o200k_base"


# ------------------------------------------------------------------------------ cookbook reproductions
COOKBOOK_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
        "into plain English.",
    },
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities for "
        "increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client deliverable.",
    },
]

COOKBOOK_WEATHER_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful assistant that can answer to questions about the weather.",
    },
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]


@pytest.mark.parametrize("encoding, expected", [("o200k_base", 124), ("cl100k_base", 129)])
def test_cookbook_messages_example(encoding, expected):
    # cookbook section 6: gpt-4o 124, gpt-4 129 prompt tokens, both confirmed there against the API
    result = TokenCounter(encoding).count_request(COOKBOOK_MESSAGES)
    assert result.total == expected
    assert result.framing == 6 * 3 + 4 * 1 + 3
    assert result.tools == 0


@pytest.mark.parametrize("encoding, expected", [("o200k_base", 101), ("cl100k_base", 105)])
def test_cookbook_tools_example(encoding, expected):
    # cookbook section 7: gpt-4o 101, gpt-4 105 prompt tokens, both confirmed there against the API
    counter = TokenCounter(encoding)
    assert counter.count_request(COOKBOOK_WEATHER_MESSAGES, [weather_tool()]).total == expected
    # the raw OpenAI dict form gives the same answer as the Tool object
    assert counter.count_request(COOKBOOK_WEATHER_MESSAGES, [weather_tool().definition()]).total == expected


# ---------------------------------------------------------------------------------------- request counting
def test_message_framing_constants(o200k):
    hi = o200k.count("user") + o200k.count("hi")
    plain = o200k.count_request([{"role": "user", "content": "hi"}])
    assert plain == RequestTokens(system=0, messages=hi, tools=0, framing=3 + 3, total=hi + 6)
    named = o200k.count_request([{"role": "user", "name": "bob", "content": "hi"}])
    assert named.framing == 3 + 1 + 3
    assert named.messages == hi + o200k.count("bob")
    assert tokens.TOKENS_PER_MESSAGE == 3 and tokens.TOKENS_PER_NAME == 1 and tokens.REPLY_PRIMING == 3


def test_system_and_developer_messages_are_counted_as_system(o200k):
    result = o200k.count_request(
        [
            {"role": "developer", "content": "be brief"},
            {"role": "system", "content": "x"},
            {"role": "user", "content": "y"},
        ]
    )
    assert result.system == o200k.count("developer") + o200k.count("be brief") + o200k.count("system") + 1
    assert result.messages == o200k.count("user") + 1
    assert result.total == result.system + result.messages + result.tools + result.framing


def test_adding_a_tool_adds_exactly_its_cost(o200k):
    extra = Tool(
        "search_tools",
        "Search the tool catalog.",
        {"type": "object", "properties": {"query": {"type": "string"}}},
    )
    one = o200k.count_request(COOKBOOK_WEATHER_MESSAGES, [weather_tool()])
    two = o200k.count_request(COOKBOOK_WEATHER_MESSAGES, [weather_tool(), extra])
    assert two.tools - one.tools == o200k.tool_tokens(extra)
    assert two.total - one.total == o200k.tool_tokens(extra)
    assert (two.system, two.messages, two.framing) == (one.system, one.messages, one.framing)
    # the first tool also opens the tools block: func_end once per request
    none = o200k.count_request(COOKBOOK_WEATHER_MESSAGES, [])
    assert one.tools - none.tools == o200k.tool_tokens(weather_tool()) + TOOL_FORMAT["o200k_base"].func_end


def test_tool_tokens_follow_the_recipe(o200k):
    f = TOOL_FORMAT["o200k_base"]
    expected = (
        f.func_init
        + o200k.count("get_current_weather:Get the current weather in a given location")
        + f.prop_init
        + f.prop_key
        + o200k.count("location:string:The city and state, e.g. San Francisco, CA")
        + f.prop_key
        + f.enum_init
        + 2 * f.enum_item
        + o200k.count("celsius")
        + o200k.count("fahrenheit")
        + o200k.count("unit:string:The unit of temperature to return")
    )
    assert o200k.tool_tokens(weather_tool()) == expected


def test_nested_schemas_are_counted(o200k):
    f = TOOL_FORMAT["o200k_base"]
    flat = Tool(
        "t", "d", {"type": "object", "properties": {"filter": {"type": "object", "description": "F"}}}
    )
    nested = Tool(
        "t",
        "d",
        {
            "type": "object",
            "properties": {
                "filter": {
                    "type": "object",
                    "description": "F",
                    "properties": {"state": {"type": "string", "enum": ["open", "closed"]}},
                }
            },
        },
    )
    inner = f.prop_init + f.prop_key + f.enum_init + 2 * f.enum_item
    inner += o200k.count("open") + o200k.count("closed") + o200k.count("state:string:")
    assert o200k.tool_tokens(nested) - o200k.tool_tokens(flat) == inner


def test_arrays_unions_and_odd_values_are_counted(o200k):
    f = TOOL_FORMAT["o200k_base"]
    tool = Tool(
        "t",
        "d",
        {
            "type": "object",
            "properties": {
                "labels": {"type": "array", "items": {"type": "string", "enum": ["bug", "docs"]}},
                "rows": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                },
                "limit": {"type": ["integer", "null"], "enum": [10, 20]},
                "mode": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
                "anything": {},
                "broken": "not a schema",
            },
        },
    )
    cost = o200k.tool_tokens(tool)
    parts = (
        f.func_init
        + o200k.count("t:d")
        + f.prop_init
        + 6 * f.prop_key
        # labels: array items enum
        + o200k.count("labels:array:")
        + f.enum_init
        + 2 * f.enum_item
        + o200k.count("bug")
        + o200k.count("docs")
        # rows: array of objects, nested properties
        + o200k.count("rows:array:")
        + f.prop_init
        + f.prop_key
        + o200k.count("id:integer:")
        # limit: list type, non-string enum values rendered as JSON
        + o200k.count("limit:integer | null:")
        + f.enum_init
        + 2 * f.enum_item
        + o200k.count("10")
        + o200k.count("20")
        + o200k.count("mode:string | boolean:")
        + o200k.count("anything:any:")
        + o200k.count("broken:any:")
    )
    assert cost == parts


def test_tool_calls_and_tool_results_in_history(o200k):
    args = '{"location":"Paris, FR"}'
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_current_weather", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18C, sunny"},
    ]
    result = o200k.count_request(history)
    expected_messages = (
        o200k.count("user")
        + o200k.count("Weather in Paris?")
        + o200k.count("assistant")
        + o200k.count("get_current_weather")
        + o200k.count(args)
        + o200k.count("tool")
        + o200k.count("18C, sunny")
    )
    assert result.messages == expected_messages
    assert result.framing == 3 * 3 + 3


def test_content_parts_and_errors(o200k):
    parts = [{"type": "text", "text": "hello"}, {"type": "text", "text": " world"}]
    assert o200k.message_tokens({"role": "user", "content": parts}) == o200k.count("user") + 2
    with pytest.raises(ValueError, match="image_url"):
        o200k.count_request([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}])
    with pytest.raises(ValueError, match="role"):
        o200k.count_request([{"content": "no role"}])
    with pytest.raises(TypeError, match="expected a Tool"):
        o200k.count_request([], [{"name": "bare"}])


def test_count_completion(o200k):
    assert o200k.count_completion("hello world").to_dict() == {"content": 2, "tool_calls": 0, "total": 2}
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "get_current_weather", "arguments": '{"location":"Paris"}'},
    }
    result = o200k.count_completion(None, [call])
    assert result.content == 0
    assert result.tool_calls == o200k.count("get_current_weather") + o200k.count('{"location":"Paris"}')
    assert result.total == result.tool_calls


# --------------------------------------------------------------------------------- json and catalog views
def test_count_json_is_the_compact_wire_form(o200k):
    tools = [weather_tool()]
    wire = json.dumps([weather_tool().definition()], separators=(",", ":"), ensure_ascii=False)
    assert o200k.count_json(tools) == o200k.count(wire)
    assert o200k.count_json([weather_tool().definition()]) == o200k.count(wire)
    # non-ASCII stays as characters, not \\u escapes (which would cost far more)
    assert o200k.count_json({"d": "日本語"}) == o200k.count('{"d":"日本語"}')


def test_catalog_tokens_sorted_with_total(cl100k):
    small = Tool("a_small", "x", {"type": "object", "properties": {}})
    tools = [small, weather_tool()]
    rows, total = cl100k.catalog_tokens(tools)
    assert [name for name, _ in rows] == ["get_current_weather", "a_small"]
    assert rows[0][1] >= rows[1][1]
    assert rows[1][1] == TOOL_FORMAT["cl100k_base"].func_init + cl100k.count("a_small:x")
    assert total == sum(cost for _, cost in rows) + TOOL_FORMAT["cl100k_base"].func_end
    assert total == cl100k.count_request([], tools).tools
    assert cl100k.catalog_tokens([]) == ([], 0)


# ------------------------------------------------------------------------------------------------- CLI
def test_tokens_command_text_and_json(tmp_path, capsys):
    from toolsearch_lab.cli.main import main

    tools = [weather_tool(), Tool("tiny", "t")]
    path = tmp_path / "demo.json"
    path.write_text(json.dumps([t.definition() for t in tools]), encoding="utf-8")
    assert main(["tokens", "--catalog", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"catalog {path}: 2 tools, encoding o200k_base"
    assert lines[1].split() == ["tool", "tokens", "json"]  # the estimate beside the exact JSON sent
    assert lines[2].startswith("get_current_weather") and lines[3].startswith("tiny")
    counter = TokenCounter()
    weather = lines[2].split()
    assert weather[1:3] == [
        f"{counter.tool_tokens(weather_tool()):,}",
        f"{counter.count_json(weather_tool()):,}",
    ]
    assert lines[4].startswith("total") and f"{counter.count_json(tools):,}" in lines[4]

    assert main(["tokens", "--catalog", str(path), "--encoding", "cl100k_base", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    counter = TokenCounter("cl100k_base")
    assert payload == {
        "catalog": str(path),
        "encoding": "cl100k_base",
        "total": counter.tools_tokens(tools),
        "json_total": counter.count_json(tools),
        "tools": [
            {
                "name": "get_current_weather",
                "tokens": counter.tool_tokens(weather_tool()),
                "json": counter.count_json(weather_tool()),
            },
            {
                "name": "tiny",
                "tokens": counter.tool_tokens(Tool("tiny", "t")),
                "json": counter.count_json(Tool("tiny", "t")),
            },
        ],
    }


def test_tokens_cli_with_real_catalog_loader(tmp_path, capsys):
    from toolsearch_lab.cli.main import main

    path = tmp_path / "tools.json"
    path.write_text(json.dumps([weather_tool().definition()]), encoding="utf-8")
    assert main(["tokens", "--catalog", str(path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["encoding"] == "o200k_base"
    assert payload["tools"] == [
        {
            "name": "get_current_weather",
            "tokens": TokenCounter().tool_tokens(weather_tool()),
            "json": TokenCounter().count_json(weather_tool()),
        }
    ]
    assert payload["total"] == payload["tools"][0]["tokens"] + TOOL_FORMAT["o200k_base"].func_end
