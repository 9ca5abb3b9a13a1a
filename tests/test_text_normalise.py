"""The text layer: the keyword tokenizer and the two stemmers, the one identifier splitter, the stop-word
lists."""

from __future__ import annotations

import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SKLEARN

from toolsearch_lab.model import Tool
from toolsearch_lab.text.identifiers import spaced_identifiers, split_identifiers
from toolsearch_lab.text.lucene import analyze_split, split_identifier
from toolsearch_lab.text.normalise import STEMMERS, keyword_tokens, porter_stem, s_stem, stem_tokens
from toolsearch_lab.text.stopwords import AGENT_STOP_WORDS, ENGLISH_STOP_WORDS, SPRING_REGEX_STOP_WORDS
from toolsearch_lab.text.tool_text import tool_text

# Porter's published examples (the 1980 paper and the reference vocabulary/output lists).
PORTER = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
    "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
    "sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
    "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
    "filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
    "rational": "ration", "digitizer": "digit", "generalization": "gener", "electrical": "electr",
    "hopeful": "hope", "goodness": "good", "revival": "reviv", "allowance": "allow",
    "adjustment": "adjust", "adoption": "adopt", "probate": "probat", "rate": "rate", "cease": "ceas",
    "controlling": "control", "roll": "roll",
}  # fmt: skip


@pytest.mark.parametrize(("word", "stem"), sorted(PORTER.items()))
def test_porter_reference_examples(word, stem):
    assert porter_stem(word) == stem


def test_porter_conflates_query_and_description_forms():
    for group in (
        ("search", "searches", "searching", "searched"),
        ("paper", "papers"),
        ("generate", "generates", "generating", "generation"),
        ("connect", "connected", "connecting", "connection", "connections"),
    ):
        assert len({porter_stem(w) for w in group}) == 1, group
    assert porter_stem("conversion") != porter_stem("convert")  # derivations Porter leaves apart
    assert porter_stem("pdf") == "pdf" and porter_stem("go") == "go"  # short words untouched
    assert porter_stem("天气") == "天气" and porter_stem("mp3s") == "mp3s"  # non-ASCII / digits untouched


def test_s_stemmer_plurals_only():
    assert s_stem("queries") == "query"
    assert s_stem("papers") == "paper"
    assert s_stem("files") == "file"
    assert s_stem("user's") == "user"
    for same in ("status", "address", "bus", "gas", "searching"):
        assert s_stem(same) == same
    assert s_stem("series") == "sery"  # Harman's rule, warts and all (-ies -> -y)


def test_keyword_tokens_split_identifiers_and_drop_stop_words():
    assert keyword_tokens("getStockPrice for the user's_portfolio") == [
        "get", "stock", "price", "for", "the", "user", "portfolio",
    ]  # fmt: skip
    assert keyword_tokens("get-weather v2.0 HTTPServer", frozenset({"v2"})) == [
        "get", "weather", "0", "http", "server",
    ]  # fmt: skip
    assert keyword_tokens("") == []
    assert keyword_tokens("the of and", frozenset({"the", "of", "and"})) == []


def test_stem_tokens_dispatch():
    assert stem_tokens(["papers", "searching"], "porter") == ["paper", "search"]
    assert stem_tokens(["papers", "searching"], "s") == ["paper", "searching"]
    assert stem_tokens(["papers"], "none") == ["papers"]
    assert set(STEMMERS) == {"none", "s", "porter"}
    with pytest.raises(ValueError, match="stemmer"):
        stem_tokens(["x"], "lancaster")


# ---- the one identifier splitter and the stop-word lists ---------------------------------------------


def test_split_identifiers_boundaries():
    assert split_identifiers("getStockPrice") == ["get", "Stock", "Price"]
    assert split_identifiers("github.list-issues/v2:all_open") == [
        "github",
        "list",
        "issues",
        "v2",
        "all",
        "open",
    ]
    assert split_identifiers("HTTPServer") == ["HTTP", "Server"]
    assert split_identifiers("HTTPServer", acronyms=False) == ["HTTPServer"]
    assert split_identifiers("utf8Decode ipv6") == ["utf8", "Decode ipv6"]  # digits stay with their word
    assert split_identifiers("ÄrgerÜber", unicode=True) == ["Ärger", "Über"]
    assert split_identifiers("ÄrgerÜber") == ["ÄrgerÜber"]  # ASCII rules by default
    assert split_identifiers("get-weather", separators="_") == ["get-weather"]
    assert split_identifiers("_private_") == ["private"]
    assert split_identifiers("_private_", keep_empty=True) == ["", "private", ""]
    assert spaced_identifiers("get_weather, getTime") == "get weather, get Time"
    assert spaced_identifiers("__init__") == " init "
    with pytest.raises(TypeError, match="str"):
        split_identifiers(42)  # type: ignore[arg-type]


def test_every_analyzer_uses_the_one_splitter():
    assert split_identifier("HTTPServer.getWeather") == ["http", "server", "get", "weather"]
    assert analyze_split("get_weather now")[0] == ["get", "weather", "now"]
    assert keyword_tokens("getStockPrice for the user's_portfolio") == [
        "get",
        "stock",
        "price",
        "for",
        "the",
        "user",
        "portfolio",
    ]
    assert tool_text(Tool("get_stockPrice", "d"), "name") == "get stock Price"


def test_stop_word_lists():
    assert set(ENGLISH_STOP_WORDS) == set(SKLEARN)  # the copy equals scikit-learn's list
    assert len(SPRING_REGEX_STOP_WORDS) == 95 and {"the", "dare", "ought", "used"} <= SPRING_REGEX_STOP_WORDS
    assert {"please", "find", "show"} <= AGENT_STOP_WORDS and "weather" not in AGENT_STOP_WORDS
    assert keyword_tokens("the weather of Paris", ENGLISH_STOP_WORDS) == ["weather", "paris"]
