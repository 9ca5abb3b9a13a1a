"""Metric functions against hand-computed values, and evaluate() end to end on a tiny dataset."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolsearch_lab.eval.datasets import Dataset, Query
from toolsearch_lab.eval.metrics import (
    evaluate,
    hit_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.vector import VectorToolIndex
from toolsearch_lab.model import Tool

RANKED = ["a", "b", "c", "d", "e", "f"]


def test_recall_and_hit():
    assert recall_at_k(RANKED, ["b", "e", "z"], 5) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, ["f"], 5) == 0.0
    assert recall_at_k(RANKED, ["f"], 6) == 1.0
    assert hit_at_k(RANKED, ["z", "c"], 3) == 1.0
    assert hit_at_k(RANKED, ["d"], 3) == 0.0
    with pytest.raises(ValueError):
        recall_at_k(RANKED, [], 5)


def test_ndcg_by_hand():
    # Relevant b (rank 2) and d (rank 4): DCG = 1/log2(3) + 1/log2(5); IDCG = 1/log2(2) + 1/log2(3).
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert ndcg_at_k(RANKED, ["b", "d"], 10) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(RANKED, ["a"], 10) == 1.0
    assert ndcg_at_k(RANKED, ["z"], 10) == 0.0
    # Ideal DCG is capped at k positions.
    assert ndcg_at_k(["a", "b"], ["a", "b", "c"], 2) == 1.0


def test_reciprocal_rank():
    assert reciprocal_rank(RANKED, ["c", "e"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(RANKED, ["z"]) == 0.0


class AxesEmbedder:
    name = "axes-eval"
    words = ("weather", "email", "stock", "calendar")
    dim = 4

    def __init__(self):
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = np.array([[t.lower().count(w) for w in self.words] for t in texts], dtype=np.float32)
        n = np.linalg.norm(out, axis=1, keepdims=True)
        n[n == 0] = 1
        return out / n


def tiny() -> Dataset:
    tools = [
        Tool("weatherTool", "weather forecast"),
        Tool("emailTool", "send email"),
        Tool("stockTool", "stock prices"),
        Tool("calendarTool", "calendar events"),
    ]
    queries = [
        Query("1", "weather today", ("weatherTool",)),
        Query("2", "email and calendar", ("emailTool", "calendarTool")),
        Query("3", "nothing matches", ("stockTool",)),
    ]
    return Dataset(tools, queries, "tiny")


def test_evaluate_vector_batch_path():
    emb = AxesEmbedder()
    index = VectorToolIndex(emb)
    result = evaluate(index, tiny(), k=1)
    assert emb.calls == 2  # tools once, all queries once
    assert result.per_query[0].ranked == ["weatherTool"]
    assert result.per_query[0].ranks == {"weatherTool": 1}
    assert result.per_query[1].ranks["emailTool"] in (1, 2)
    assert result.per_query[2].ranks == {"stockTool": None}
    assert result.metrics["recall@1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert result.metrics["hit@1"] == pytest.approx(2 / 3)
    assert result.metrics["mrr"] == pytest.approx(2 / 3)
    assert [q.id for q in result.misses()] == ["3"]
    assert index.sessions() == []  # evaluation session cleared afterwards
    d = result.to_dict(per_query=True)
    assert d["queries"] == 3 and d["per_query"][0]["top_k"] == ["weatherTool"]


def test_evaluate_looping_path_matches_metrics():
    result = evaluate(BM25ToolIndex(min_score_threshold=0), tiny(), k=5)
    assert result.depth == 10
    assert result.per_query[0].ranked[0] == "weatherTool"
    assert result.metrics["recall@5"] == pytest.approx((1 + 1 + 0) / 3)
    assert "recall@5" in result.summary()


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "5"])
def test_evaluate_rejects_bad_k(bad):
    with pytest.raises(ValueError, match="evaluate: k must be a positive integer"):
        evaluate(BM25ToolIndex(), tiny(), k=bad)
