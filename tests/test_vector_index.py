"""VectorToolIndex: Spring's checklist items 35-40 with a real (counting) embedder, plus the documented
deviations (per-session matrices, category filter, "full" text)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from toolsearch_lab.embed import MiniLMEmbedder
from toolsearch_lab.index.vector import VectorToolIndex, tool_text
from toolsearch_lab.model import SearchRequest, Tool, empty_response


class CountingEmbedder:
    """Wraps a real embedder; records every call (the "store add" calls of Spring's tests)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def embed(self, texts):
        texts = list(texts)
        with self._lock:
            self.calls.append(texts)
        return self.inner.embed(texts)


class KeywordEmbedder:
    """Tiny exact embedder: one axis per vocabulary word, so cosine values are known in advance."""

    name = "keyword-axes"
    vocab = ("weather", "email", "calendar", "stock", "music")
    dim = len(vocab)

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for j, w in enumerate(self.vocab):
                out[i, j] = t.lower().count(w)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEmbedder()


def tools():
    return [
        Tool("weatherTool", "Get the current weather and the forecast for a city"),
        Tool("emailTool", "Send an email message to a recipient"),
        Tool("calendarTool", "Create a calendar event with a title and a time"),
        Tool("stockTool", "Look up the latest stock price for a ticker symbol"),
    ]


def test_item35_one_embed_call_per_batch_and_none_for_empty(minilm):
    emb = CountingEmbedder(minilm)
    index = VectorToolIndex(emb)
    index.index_tools("s", [])
    assert emb.calls == []
    index.index_tools("s", tools())
    assert len(emb.calls) == 1 and len(emb.calls[0]) == 4
    index.index_tool("s", Tool("musicTool", "Play music"))
    assert len(emb.calls) == 2 and emb.calls[1] == ["Play music"]


def test_item36_document_text_is_the_description_and_metadata(minilm):
    emb = CountingEmbedder(minilm)
    index = VectorToolIndex(emb)
    index.index_tools("s", tools())
    assert emb.calls[0] == [t.description for t in tools()]
    docs = index.documents("s")
    assert [d.text for d in docs] == [t.description for t in tools()]
    assert len({d.id for d in docs}) == 4
    assert docs[0].metadata == {
        "sessionId": "s",
        "id": docs[0].id,
        "toolName": "weatherTool",
        "toolDescription": "Get the current weather and the forecast for a city",
    }


def test_full_text_mode_embeds_name_and_parameters():
    t = Tool(
        "get_stock_price",
        "Price lookup.",
        {"type": "object", "properties": {"tickerSymbol": {"type": "string", "description": "e.g. AAPL"}}},
    )
    assert tool_text(t, "full") == "get stock price. Price lookup. Parameters: ticker Symbol: e.g. AAPL."
    assert tool_text(t, "name") == "get stock price"
    with pytest.raises(ValueError, match="text"):
        VectorToolIndex(KeywordEmbedder(), text="bogus")


def test_item37_top_k_threshold_and_session_filter():
    many = VectorToolIndex(KeywordEmbedder())
    many.index_tools("s", [Tool(f"t{i}", "weather") for i in range(12)])
    # Default top-k is 10; maxResults overrides it.
    assert len(many.search(SearchRequest("s", "weather")).tool_references) == 10
    assert len(many.search(SearchRequest("s", "weather", max_results=3)).tool_references) == 3
    index = VectorToolIndex(KeywordEmbedder())
    index.index_tools("s", [Tool(f"w{i}", "weather " + "email " * i) for i in range(12)])
    # Cosine of "weather" with "weather email*i" is 1/sqrt(1+i^2): >= 0.2 keeps i <= 4 (i=5 gives 0.196).
    names = index.search(SearchRequest("s", "weather", max_results=50)).tool_names
    assert names == ["w0", "w1", "w2", "w3", "w4"]
    exact = VectorToolIndex(KeywordEmbedder(), min_score_threshold=1 / np.sqrt(2))
    exact.index_tools("s", [Tool("a", "weather email"), Tool("b", "weather email email")])
    assert exact.search(SearchRequest("s", "weather")).tool_names == ["a"]  # equal to threshold is kept


def test_item38_result_mapping_order_and_metadata(minilm):
    index = VectorToolIndex(minilm)
    index.index_tools("s", tools())
    response = index.search(SearchRequest("s", "what's the weather like in Paris?"))
    assert response.tool_references[0].tool_name == "weatherTool"
    assert response.tool_references[0].summary == tools()[0].description
    scores = [r.relevance_score for r in response.tool_references]
    assert scores == sorted(scores, reverse=True) and all(s >= 0.2 for s in scores)
    assert response.total_matches == len(response.tool_references)
    assert response.metadata.search_type == "VectorToolIndex"
    assert response.metadata.query == "what's the weather like in Paris?"


def test_ties_keep_insertion_order():
    index = VectorToolIndex(KeywordEmbedder())
    index.index_tools("s", [Tool("b", "weather"), Tool("a", "weather"), Tool("c", "weather")])
    assert index.search(SearchRequest("s", "weather")).tool_names == ["b", "a", "c"]


def test_item39_clear_tracks_ids_per_session():
    index = VectorToolIndex(KeywordEmbedder())
    index.index_tools("a", tools())
    index.index_tools("b", tools()[:1])
    first_ids = index.tracked_ids("a")
    assert len(first_ids) == 4
    index.clear_index("unknown")  # no-op
    index.clear_index("a")
    assert index.tracked_ids("a") == [] and len(index.tracked_ids("b")) == 1
    assert index.search(SearchRequest("a", "weather")) == empty_response()
    index.index_tools("a", tools()[:2])
    new_ids = index.tracked_ids("a")
    assert len(new_ids) == 2 and not set(new_ids) & set(first_ids)


def test_item40_concurrent_index_tools_tracks_every_id():
    index = VectorToolIndex(KeywordEmbedder())
    barrier = threading.Barrier(10)

    def work(n):
        barrier.wait()
        index.index_tools("s", [Tool(f"t{n}_{i}", "weather email") for i in range(20)])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = index.tracked_ids("s")
    assert len(ids) == 200 and len(set(ids)) == 200
    assert len(index.search(SearchRequest("s", "weather", max_results=500)).tool_references) == 200


def test_item4_session_isolation_and_blank_session():
    index = VectorToolIndex(KeywordEmbedder())
    index.index_tools("A", [Tool("weatherTool", "weather")])
    index.index_tools("B", [Tool("emailTool", "email")])
    assert index.search(SearchRequest("B", "weather")).tool_names == []
    assert index.search(SearchRequest("A", "weather")).tool_names == ["weatherTool"]
    # Deviation: Spring searches every session for a null session id; we return the empty response.
    assert index.search(SearchRequest(None, "weather")) == empty_response()
    assert index.search(SearchRequest("  ", "weather")) == empty_response()
    with pytest.raises(ValueError):
        index.index_tools("", [Tool("x", "weather")])


def test_category_filter_is_honoured_when_tools_have_categories():
    index = VectorToolIndex(KeywordEmbedder())
    index.index_tools(
        "s",
        [
            Tool("a", "weather", category="Travel"),
            Tool("b", "weather", category="News"),
            Tool("c", "weather"),
        ],
    )
    assert index.search(SearchRequest("s", "weather", category_filter="travel")).tool_names == ["a", "c"]


def test_search_many_equals_search(minilm):
    index = VectorToolIndex(CountingEmbedder(minilm))
    index.index_tools("s", tools())
    queries = ["send a mail", "stock quote for AAPL", "schedule a meeting"]
    batch = index.search_many([SearchRequest("s", q, 2) for q in queries])
    assert len(index.embedder.calls) == 2  # one for the tools, one for all queries
    for q, resp in zip(queries, batch, strict=False):
        single = index.search(SearchRequest("s", q, 2))
        assert single.tool_names == resp.tool_names
        np.testing.assert_allclose(
            [r.relevance_score for r in single.tool_references],
            [r.relevance_score for r in resp.tool_references],
            atol=1e-3,
        )


def test_invalid_max_results():
    index = VectorToolIndex(KeywordEmbedder())
    index.index_tools("s", tools())
    with pytest.raises(ValueError, match="max_results"):
        index.search(SearchRequest("s", "weather", max_results=0))
