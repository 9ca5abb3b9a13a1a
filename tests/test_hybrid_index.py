"""HybridToolIndex: score normalisation, fusion, component scores, sessions, and the query helpers."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.index.hybrid import (
    HybridToolIndex,
    KeywordScorer,
    normalise,
    split_clauses,
    strip_stop_words,
)
from toolsearch_lab.model import SearchRequest, Tool, ToolIndex, empty_response


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
    assert set(INDEX_KINDS) == {"regex", "lucene", "vector", "hybrid"}
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
    emb = next(iter(index.views.values())).embedder
    before = emb.calls
    queries = ["stock ticker price", "rain forecast", "book a meeting. Then email the invite to the team."]
    batch = index.search_many("s", queries, 3)
    assert emb.calls == before + 1  # three views share one embedder: one call for every query
    for q, resp in zip(queries, batch, strict=False):
        assert index.search(SearchRequest("s", q, 3)).tool_names == resp.tool_names


def test_single_view_from_a_vector_index():
    from toolsearch_lab.index.vector import VectorToolIndex

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


def test_search_racing_a_clear_answers_empty():
    index = hybrid()
    original = index.score_matrix

    def clear_then_score(session_id, queries):
        index.clear_index(session_id)  # another thread's clear lands between the checks and the scoring
        return original(session_id, queries)

    index.score_matrix = clear_then_score
    assert index.search(SearchRequest("s", "weather", 5)) == empty_response()


def test_keyword_scorer_bm25_by_hand_and_stemming():
    tools = [
        Tool("search_papers", "Search academic papers by keyword"),
        Tool("send_email", "Sends an email"),
        Tool("misc", "Nothing relevant here at all"),
    ]
    scorer = KeywordScorer(char_ngrams=False)
    scorer.add(tools)
    s = scorer.word_scores(["searching for a paper"])[0]
    # "searching" -> "search", "paper" -> "paper": only the first tool shares terms (stop words dropped).
    assert s[0] > 0 and s[1] == 0 and s[2] == 0
    # By hand: "search" and "paper" each occur twice in tool 0 (split name + description), df = 1 of N = 3;
    # BM25 with k1 = 1.2, b = 0.75 over the stemmed, stop-word-free lengths.
    counts = [dict(scorer._word_counts[i]) for i in range(3)]
    lengths = np.array([sum(c.values()) for c in counts], dtype=float)
    assert counts[0]["search"] == 2 and counts[0]["paper"] == 2
    idf = np.log1p((3 - 1 + 0.5) / (1 + 0.5))
    tf_part = 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * lengths[0] / lengths.mean()))
    assert s[0] == pytest.approx(2 * idf * tf_part)
    # Without stemming, the inflected query shares no term with the tool.
    plain = KeywordScorer(stemmer="none", char_ngrams=False)
    plain.add(tools)
    assert plain.word_scores(["searching for a paper"])[0].max() == 0


def test_keyword_scorer_char_ngrams_catch_typos_and_derivations():
    tools = [Tool("StrologyTool", "Povides strology services"), Tool("cooking", "Recipes for dinner")]
    scorer = KeywordScorer()
    scorer.add(tools)
    assert scorer.word_scores(["astrology reading"])[0].max() == 0  # no shared word
    chars = scorer.char_scores(["astrology reading"])[0]
    assert chars[0] > 0.1 and chars[0] > chars[1]
    assert scorer.char_scores(["recipes"])[0][1] == pytest.approx(scorer.char_scores(["recipes"])[0].max())


def test_keyword_scorer_incremental_adds_match_one_batch():
    one = KeywordScorer()
    one.add(TOOLS)
    inc = KeywordScorer()
    for t in TOOLS:
        inc.add([t])
    queries = ["stock prices", "synchronising", "meetings on my calendar"]
    np.testing.assert_allclose(inc.word_scores(queries), one.word_scores(queries))
    np.testing.assert_allclose(inc.char_scores(queries), one.char_scores(queries))
    assert len(inc) == len(TOOLS)


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
    from toolsearch_lab.index.bm25.index import BM25ToolIndex

    index = HybridToolIndex(
        BM25ToolIndex(min_score=0.0, split_identifiers=True),
        embedder=AxesEmbedder(),
        char_share=0.0,
        vector_weight=0.0,
    )
    index.index_tools("s", TOOLS)
    assert index.search(SearchRequest("s", "run xk9 please", 1)).tool_names == ["xk9_sync"]
    assert index.explain_search(SearchRequest("s", "run xk9 please", 1))[0].char_score == 0.0


def test_invalid_keyword_options():
    with pytest.raises(ValueError, match="char_share"):
        HybridToolIndex(embedder=AxesEmbedder(), char_share=1.5)
    with pytest.raises(ValueError, match="stemmer"):
        HybridToolIndex(embedder=AxesEmbedder(), stemmer="snowball")
