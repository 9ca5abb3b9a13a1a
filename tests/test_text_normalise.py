"""The keyword tokenizer and the two stemmers of toolsearch_lab.text.normalise."""

from __future__ import annotations

import pytest

from toolsearch_lab.text.normalise import STEMMERS, keyword_tokens, porter_stem, s_stem, stem_tokens

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
