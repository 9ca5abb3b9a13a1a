"""HybridToolIndex: score normalisation, fusion, component scores, sessions, and the query helpers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from toolsearch_lab.index.abstention import AbstentionError
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.index.hybrid import HybridToolIndex, normalise, strip_stop_words
from toolsearch_lab.index.hybrid_settings import HybridSettings
from toolsearch_lab.index.ngram import CharNgramToolIndex
from toolsearch_lab.index.vector import VectorToolIndex, split_clauses
from toolsearch_lab.model import SearchRequest, Tool, ToolIndex, empty_response
from toolsearch_lab.text.normalise import keyword_tokens, stem_tokens
from toolsearch_lab.text.stopwords import ENGLISH_STOP_WORDS
from toolsearch_lab.text.tool_text import tool_text


class AxesEmbedder:
    """One axis per concept word (synonyms share an axis), so "paraphrases" match without shared terms."""

    name = "axes-v1"
    concepts = (
        ("weather", "forecast", "rain"),
        ("email", "mail", "message"),
        ("stock", "shares", "ticker"),
        ("calendar", "meeting", "event"),
    )
    dim = len(concepts)

    def __init__(self):
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            low = t.lower()
            for j, words in enumerate(self.concepts):
                out[i, j] = sum(low.count(w) for w in words)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms


TOOLS = [
    Tool("get_weather", "Returns the forecast for a city", category="info"),
    Tool("send_email", "Sends a message to someone", category="comms"),
    Tool("stock_quote", "Latest price of shares by ticker", category="finance"),
    Tool("create_event", "Adds a meeting to the calendar", category="comms"),
    Tool("xk9_sync", "Synchronises data", category="ops"),
]


def hybrid(**options) -> HybridToolIndex:
    index = HybridToolIndex(embedder=AxesEmbedder(), **options)
    index.index_tools("s", TOOLS)
    return index


def test_normalise_by_hand():
    s = np.array([[1.0, 3.0, 2.0], [5.0, 5.0, 5.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(normalise(s, "minmax"), [[0, 1, 0.5], [1, 1, 1], [0, 0, 0]])
    z = normalise(np.array([[1.0, 3.0]]), "zscore")
    np.testing.assert_allclose(z, [[-1.0, 1.0]])
    np.testing.assert_allclose(normalise(np.array([[0.1, 0.9, 0.5]]), "rrf"), [[1 / 63, 1 / 61, 1 / 62]])
    with pytest.raises(ValueError, match="normalisation"):
        normalise(s, "softmax")


def test_strip_stop_words_and_clauses():
    assert strip_stop_words("What is the weather in Paris?") == "weather Paris?"
    assert strip_stop_words("the of and") == "the of and"  # only stop words: keep the query
    assert split_clauses("Find flights to Rome. Then book a hotel near the station!") == [
        "Find flights to Rome.",
        "Then book a hotel near the station!",
    ]
    assert split_clauses("One single request about the weather") == []
    assert split_clauses("Do it. Then send the report to Bob.") == []  # "Do it." is too short to stand alone


def test_protocol_and_factory():
    index = hybrid()
    assert isinstance(index, ToolIndex)
    assert {"regex", "lucene", "vector", "hybrid"} <= set(INDEX_KINDS)
    with pytest.raises(ValueError, match="regex, lucene, vector, hybrid"):
        make_index("faiss")
    assert type(make_index("hybrid", embedder=AxesEmbedder())).__name__ == "HybridToolIndex"
    assert type(make_index("lucene")).__name__ == "BM25ToolIndex"


def test_paraphrase_found_by_vectors_exact_id_found_by_keywords():
    index = hybrid()
    # No shared term with the description or name: only the embedding side can find it.
    assert index.search(SearchRequest("s", "will it rain tomorrow", 1)).tool_names == ["get_weather"]
    # An opaque identifier: only BM25 (identifier-aware) can find it.
    assert index.search(SearchRequest("s", "run xk9 please", 1)).tool_names == ["xk9_sync"]


def test_weights_at_the_extremes_follow_one_component():
    vec_only = hybrid(vector_weight=1.0)
    kw_only = hybrid(vector_weight=0.0)
    q = "send the weather forecast by mail"
    hits = vec_only.explain_search(SearchRequest("s", q, 5))
    assert [h.vector_rank for h in hits] == [1, 2, 3, 4, 5]
    kw_hits = kw_only.explain_search(SearchRequest("s", q, 2))
    assert [h.keyword_rank for h in kw_hits] == [1, 2]


def test_explain_matches_search_and_exposes_components():
    index = hybrid()
    request = SearchRequest("s", "email my meeting notes", 3)
    response = index.search(request)
    hits = index.explain_search(request)
    assert [h.tool_name for h in hits] == response.tool_names
    for hit, ref in zip(hits, response.tool_references, strict=False):
        assert hit.score == pytest.approx(ref.relevance_score)
        expected = 0.7 * hit.vector_normalised + 0.3 * hit.keyword_normalised
        assert hit.score == pytest.approx(expected)
        assert hit.keyword_normalised == pytest.approx(0.5 * hit.word_normalised + 0.5 * hit.char_normalised)
        assert set(hit.view_scores) == {"description", "full", "name"}
        assert hit.vector_score == pytest.approx(np.mean(list(hit.view_scores.values())))
        assert hit.keyword_score >= 0.0 and 0.0 <= hit.char_score <= 1.0 + 1e-9
        assert 0.0 <= hit.vector_normalised <= 1.0 and 0.0 <= hit.keyword_normalised <= 1.0
    assert response.metadata.search_type == "HybridToolIndex"
    assert response.total_matches == 3
    assert hits[0].to_dict()["toolName"] == hits[0].tool_name


def test_default_max_results_category_filter_and_sessions():
    index = hybrid()
    assert len(index.search(SearchRequest("s", "anything")).tool_references) == 5  # all 5 (< 10)
    assert set(index.search(SearchRequest("s", "message", category_filter="comms")).tool_names) == {
        "send_email",
        "create_event",
    }
    assert index.search(SearchRequest("other", "weather")) == empty_response()
    assert index.search(SearchRequest(None, "weather")) == empty_response()
    index.index_tools("t", TOOLS[:1])
    assert index.search(SearchRequest("t", "email")).tool_names == ["get_weather"]  # never another session's
    index.clear_index("s")
    assert index.search(SearchRequest("s", "weather")) == empty_response()
    assert index.search(SearchRequest("t", "weather")).tool_names == ["get_weather"]
    index.clear_index("never-seen")


def test_search_many_matches_search_and_embeds_once():
    index = hybrid()
    emb = index.vector_index.embedder
    before = emb.calls
    queries = ["stock ticker price", "rain forecast", "book a meeting. Then email the invite to the team."]
    batch = index.search_many([SearchRequest("s", q, 3) for q in queries])
    assert emb.calls == before + 1  # three views share one embedder: one call for every query
    for q, resp in zip(queries, batch, strict=True):
        assert index.search(SearchRequest("s", q, 3)) == resp


def test_single_view_from_a_vector_index():
    index = HybridToolIndex(vector_index=VectorToolIndex(AxesEmbedder()))
    index.index_tools("s", TOOLS)
    hits = index.explain_search(SearchRequest("s", "forecast", 1))
    assert hits[0].tool_name == "get_weather" and list(hits[0].view_scores) == ["description"]


def test_invalid_options():
    with pytest.raises(ValueError, match="vector_weight"):
        HybridToolIndex(embedder=AxesEmbedder(), vector_weight=1.5)
    with pytest.raises(ValueError, match="views"):
        HybridToolIndex(embedder=AxesEmbedder(), views=("summary",))
    with pytest.raises(ValueError, match="normalisation"):
        HybridToolIndex(embedder=AxesEmbedder(), normalisation="max")
    with pytest.raises(ValueError, match="min_score_threshold"):
        HybridToolIndex(embedder=AxesEmbedder(), min_score_threshold=float("nan"))
    with pytest.raises(TypeError, match="unknown option.* min_score;.*min_score_threshold"):
        HybridToolIndex(embedder=AxesEmbedder(), min_score=0.5)  # the old name is refused, not ignored


def test_settings_are_one_value_the_options_change():
    tuned = HybridSettings(vector_weight=0.4, char_share=0.0, prerequisites=False)
    index = HybridToolIndex(embedder=AxesEmbedder(), settings=tuned, min_score_threshold=0.5)
    assert index.settings == dataclasses.replace(tuned, min_score_threshold=0.5) and index.char_index is None
    index.index_tools("s", TOOLS)
    same = hybrid(vector_weight=0.4, char_share=0.0, prerequisites=False, min_score_threshold=0.5)
    request = SearchRequest("s", "forecast for Oslo or shares of ACME", 5)
    assert index.search(request) == same.search(request)
    assert all(r.relevance_score >= 0.5 for r in index.search(request).tool_references)
    with pytest.raises(dataclasses.FrozenInstanceError):
        index.settings.vector_weight = 0.9  # type: ignore[misc]


def test_making_an_index_loads_nothing(tmp_path, monkeypatch):
    """The embedder and the abstention model are taken on first use: a bad model path fails the first
    search, naming the file, not the constructor."""
    import toolsearch_lab.index.vector as vector_module

    monkeypatch.setattr(vector_module, "default_embedder", lambda: pytest.fail("embedder taken too early"))
    index = HybridToolIndex(abstention=tmp_path / "missing.json")
    monkeypatch.setattr(vector_module, "default_embedder", AxesEmbedder)
    index.index_tools("s", TOOLS)
    with pytest.raises(AbstentionError, match="missing.json"):
        index.search(SearchRequest("s", "forecast"))


def test_search_racing_a_clear_answers_empty():
    index = hybrid()
    original = index.score_matrix

    def clear_then_score(session_id, queries):
        index.clear_index(session_id)  # another thread's clear lands between the checks and the scoring
        return original(session_id, queries)

    index.score_matrix = clear_then_score
    assert index.search(SearchRequest("s", "weather", 5)) == empty_response()


def test_keyword_component_bm25_by_hand_and_stemming():
    tools = [
        Tool("search_papers", "Search academic papers by keyword"),
        Tool("send_email", "Sends an email"),
        Tool("misc", "Nothing relevant here at all"),
    ]
    index = HybridToolIndex(embedder=AxesEmbedder(), char_share=0.0)
    index.index_tools("s", tools)
    bm25 = index.keyword_index
    assert isinstance(bm25, BM25ToolIndex) and bm25.fields == "full" and bm25.analyzer == "words"
    _, scores = bm25.score_matrix("s", ["searching for a paper"])
    s = scores[0]
    # "searching" -> "search", "paper" -> "paper": only the first tool shares terms (stop words dropped).
    assert s[0] > 0 and s[1] == 0 and s[2] == 0
    # By hand, Lucene's BM25: "search" and "paper" each occur twice in tool 0 (split name + description),
    # df = 1 of N = 3; lengths are the stemmed, stop-word-free token counts (all < 24: stored exactly).
    lengths = np.array(
        [len(stem_tokens(keyword_tokens(tool_text(t, "full"), ENGLISH_STOP_WORDS))) for t in tools],
        dtype=float,
    )
    assert lengths.tolist() == [6, 4, 2]  # search paper search academ paper keyword | send email send email
    idf = np.log1p((3 - 1 + 0.5) / (1 + 0.5))
    tf_part = 2 / (2 + 1.2 * (0.25 + 0.75 * lengths[0] / lengths.mean()))
    assert s[0] == pytest.approx(2 * idf * tf_part, rel=1e-6)
    plain = HybridToolIndex(embedder=AxesEmbedder(), char_share=0.0, stemmer="none")
    plain.index_tools("s", tools)
    assert plain.keyword_index.score_matrix("s", ["searching for a paper"])[1].max() == 0


def test_char_component_catches_typos_and_derivations():
    tools = [Tool("StrologyTool", "Povides strology services"), Tool("cooking", "Recipes for dinner")]
    index = HybridToolIndex(embedder=AxesEmbedder())
    index.index_tools("s", tools)
    assert index.keyword_index.score_matrix("s", ["astrology reading"])[1].max() == 0  # no shared word
    assert isinstance(index.char_index, CharNgramToolIndex)
    chars = index.char_index.score_matrix("s", ["astrology reading"])[1][0]
    assert chars[0] > 0.1 and chars[0] > chars[1]
    assert index.char_index.search(SearchRequest("s", "recipes", 1)).tool_names == ["cooking"]


def test_components_follow_incremental_adds_like_one_batch():
    one = HybridToolIndex(embedder=AxesEmbedder())
    one.index_tools("s", TOOLS)
    inc = HybridToolIndex(embedder=AxesEmbedder())
    for t in TOOLS:
        inc.index_tool("s", t)
    queries = ["stock prices", "synchronising", "meetings on my calendar"]
    a, b = one.score_matrix("s", queries), inc.score_matrix("s", queries)
    np.testing.assert_allclose(a.keyword, b.keyword, rtol=1e-6)
    np.testing.assert_allclose(a.char, b.char)
    np.testing.assert_allclose(a.fused, b.fused, rtol=1e-6)


def test_hybrid_numbers_are_the_component_columns():
    """Every raw score and rank in a hybrid explanation is the one the component's own search shows
    (notebook 02 once said "vector cosine 0.50, rank 1" while the vector column showed 0.414, 2nd)."""
    index = hybrid()
    query = "send the weather forecast by mail"
    columns = {
        role: index.components[role].search(SearchRequest("s", query, len(TOOLS)))
        for role in ("keyword", "vector", "char")
    }
    for ref in index.search(SearchRequest("s", query, 5)).tool_references:
        hit = index.explain("s", query, ref.tool_name).details
        for role, score, rank in [
            ("vector", hit.vector_score, hit.vector_rank),
            ("keyword", hit.keyword_score, hit.keyword_rank),
            ("char", hit.char_score, hit.char_rank),
        ]:
            names = columns[role].tool_names
            if rank is None:
                assert ref.tool_name not in names
                continue
            assert names[rank - 1] == ref.tool_name
            assert columns[role].tool_references[rank - 1].relevance_score == pytest.approx(score, rel=1e-6)


def test_hybrid_finds_an_inflected_paraphrase_by_keywords():
    # The embedder knows none of these words (all-zero vectors): only the keyword side can rank, and only
    # stemming links "translating documents" to "Translate document".
    tools = [
        Tool("doc_tool", "Translate document into another language"),
        Tool("img_tool", "Resize an image"),
        Tool("db_tool", "Query a database table"),
    ]
    index = HybridToolIndex(embedder=AxesEmbedder(), char_share=0.0)
    index.index_tools("s", tools)
    hits = index.explain_search(SearchRequest("s", "translating documents", 3))
    assert hits[0].tool_name == "doc_tool" and hits[0].keyword_rank == 1 and hits[0].keyword_score > 0
    plain = HybridToolIndex(embedder=AxesEmbedder(), char_share=0.0, stemmer="none")
    plain.index_tools("s", tools)
    assert plain.explain_search(SearchRequest("s", "translating documents", 3))[0].keyword_score == 0


def test_keyword_side_follows_later_additions_and_clears():
    index = hybrid()
    assert index.search(SearchRequest("s", "quantum teleporter", 1)).tool_names != ["qt_tool"]
    index.index_tool("s", Tool("qt_tool", "Operates the quantum teleporter"))
    assert index.search(SearchRequest("s", "quantum teleporter", 1)).tool_names == ["qt_tool"]
    index.clear_index("s")
    index.index_tools("s", TOOLS[:2])
    hits = index.explain_search(SearchRequest("s", "quantum teleporter", 5))
    assert {h.tool_name for h in hits} == {"get_weather", "send_email"}


def test_previous_keyword_index_still_pluggable():
    index = HybridToolIndex(
        BM25ToolIndex(min_score_threshold=0.0, split_identifiers=True),
        embedder=AxesEmbedder(),
        char_share=0.0,
        vector_weight=0.0,
    )
    index.index_tools("s", TOOLS)
    assert index.search(SearchRequest("s", "run xk9 please", 1)).tool_names == ["xk9_sync"]
    assert index.explain_search(SearchRequest("s", "run xk9 please", 1))[0].char_score == 0.0
    assert index.char_index is None and set(index.components) == {"keyword", "vector"}


def test_invalid_keyword_options():
    with pytest.raises(ValueError, match="char_share"):
        HybridToolIndex(embedder=AxesEmbedder(), char_share=1.5)
    with pytest.raises(ValueError, match="stemmer"):
        HybridToolIndex(embedder=AxesEmbedder(), stemmer="snowball")
