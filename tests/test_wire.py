"""The wire text of toolSearchTool results: what the loop writes is what the loop and the models read."""

import json

import pytest

from toolsearch_lab.wire import (
    decode_search_items,
    decode_search_result,
    encode_inline_result,
    encode_search_result,
    error_message,
    error_result,
    is_error_result,
)

DEFINITION = {"type": "function", "function": {"name": "weather", "description": "", "parameters": {}}}


def test_search_results_round_trip_in_spring_form():
    text = encode_search_result(["weather", "clothing"])
    assert text == '["weather", "clothing"]'
    assert decode_search_result(text) == ["weather", "clothing"]
    assert decode_search_result(encode_search_result([])) == []
    assert decode_search_result(encode_inline_result([DEFINITION])) == ["weather"]


def test_an_error_result_is_never_a_search_result():
    text = error_result("toolSearchTool: 'query' is required")
    assert json.loads(text) == {"error": "toolSearchTool: 'query' is required"}
    assert is_error_result(text) and error_message(text) == "toolSearchTool: 'query' is required"
    assert decode_search_result(text) is None and decode_search_items(text) == []
    assert not is_error_result(encode_search_result(["weather"])) and error_message("[]") is None


@pytest.mark.parametrize("text", ["not json", '{"names": ["a"]}', '["a", 3]', "42", '[{"function": {}}]'])
def test_anything_else_is_not_a_search_result_and_strict_says_so(text):
    assert decode_search_result(text) is None
    with pytest.raises(ValueError, match="not a JSON array of names"):
        decode_search_result(text, strict=True)


def test_items_keep_the_usable_entries_for_readers_that_expand_definitions():
    text = json.dumps(["a", 3, DEFINITION, {"function": {"name": 5}}])
    assert decode_search_items(text) == ["a", DEFINITION]
