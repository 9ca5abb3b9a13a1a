"""Retrieval quality of every index kind on the shipped datasets, next to peer baselines and the hybrid
index's ablation table. A report, not a test: it prints numbers; nothing fails.

    python benchmarks/retrieval_quality.py                 # both datasets, full (about 3-5 minutes; the first
                                                           # run also embeds 21k MetaTool queries, ~2 min)
    python benchmarks/retrieval_quality.py --quick         # MetaTool subsampled to 3,000 queries
    python benchmarks/retrieval_quality.py --no-ablation   # only the index and peer tables

Peers, computed in the same run over the same tool text (``tool_text(tool, "full")``: split name,
description, parameters): scikit-learn TF-IDF cosine (English stop words, sublinear tf), ``bm25s`` (English
stop words), and raw MiniLM cosine over the description without Spring's 0.2 threshold.

All metrics: see ``toolsearch_lab.eval.metrics`` (k = 5, rankings 10 deep).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolsearch_lab.eval.datasets import Dataset, load_dataset
from toolsearch_lab.eval.metrics import QueryResult, aggregate, evaluate
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.text.tool_text import tool_text

K = 5
DEPTH = 10
METRICS = [f"recall@{K}", f"hit@{K}", "ndcg@10", "mrr"]


def metrics_from_scores(scores: np.ndarray, dataset: Dataset) -> dict[str, float]:
    """Metrics of a dense [queries x tools] score matrix (higher = better)."""
    names = [t.name for t in dataset.tools]
    top = np.argsort(-scores, axis=1, kind="stable")[:, :DEPTH]
    results = [
        QueryResult(
            q.id, q.query, q.relevant_tools, [names[j] for j in row], [float(scores[i, j]) for j in row], K
        )
        for i, (q, row) in enumerate(zip(dataset.queries, top, strict=False))
    ]
    return aggregate(results, K)


def peer_tfidf(dataset: Dataset) -> dict[str, float]:
    texts = [tool_text(t, "full") for t in dataset.tools]
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(texts)
    scores = (vec.transform([q.query for q in dataset.queries]) @ vec.transform(texts).T).toarray()
    return metrics_from_scores(scores, dataset)


def peer_bm25s(dataset: Dataset) -> dict[str, float]:
    import bm25s  # a test extra only this peer needs; the report runs without the others

    texts = [tool_text(t, "full") for t in dataset.tools]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([q.query for q in dataset.queries], stopwords="en", show_progress=False)
    docs, values = retriever.retrieve(tokens, k=len(texts), show_progress=False)
    scores = np.zeros((len(dataset.queries), len(texts)), dtype=np.float32)
    for i in range(len(dataset.queries)):
        scores[i, docs[i]] = values[i]
    return metrics_from_scores(scores, dataset)


def peer_minilm(dataset: Dataset) -> dict[str, float]:
    index = make_index("vector", similarity_threshold=-1.0)
    return evaluate(index, dataset, K, depth=DEPTH).metrics


def ablation_configs() -> list[tuple[str, dict]]:
    """From naive RRF to the default hybrid, one change per row, then sensitivity rows around the default.

    Rows A-F use Spring's keyword index (``BM25ToolIndex``) as the word side; F was the default before the
    built-in stemmed keyword side. From G on, the word side is the hybrid's default keyword index,
    ``BM25ToolIndex(analyzer="words", fields="full")``.
    """

    def bm25(split: bool, params: bool) -> BM25ToolIndex:
        return BM25ToolIndex(min_score=0.0, split_identifiers=split, include_parameters=params)

    spring = {"char_share": 0.0, "vector_weight": 0.75}
    naive = dict(spring, views=("description",), strip_stopwords=False, query_clauses=False)
    f = dict(spring, keyword_index=bm25(True, True))
    return [
        (
            "A naive RRF: BM25 (Spring analyzer) + MiniLM(description)",
            dict(naive, normalisation="rrf", keyword_index=bm25(False, False)),
        ),
        ("B A with min-max scores, convex w=0.75", dict(naive, keyword_index=bm25(False, False))),
        ("C B + BM25 splits identifiers, indexes parameters", dict(naive, keyword_index=bm25(True, True))),
        (
            "D C + stop words removed from the BM25 query",
            dict(naive, strip_stopwords=True, keyword_index=bm25(True, True)),
        ),
        ("E D + views: description, full, name (mean cosine)", dict(f, query_clauses=False)),
        ("F E + per-sentence query embedding (old default)", f),
        ("G F, built-in word BM25 on full text, no stemming", dict(spring, stemmer="none")),
        ("H G + Porter stemming", dict(spring)),
        ("I H + char 3-5-gram TF-IDF (half the keyword side)", {"vector_weight": 0.75}),
        ("J I with w=0.7 = DEFAULT", {}),
        ("  J with the S stemmer (plurals only)", {"stemmer": "s"}),
        ("  J without stemming", {"stemmer": "none"}),
        ("  J with Spring's BM25 (split, params) as word side", {"keyword_index": bm25(True, True)}),
        ("  J with char share 0 (words only)", {"char_share": 0.0}),
        ("  J with char share 0.25", {"char_share": 0.25}),
        ("  J with char share 0.75", {"char_share": 0.75}),
        ("  J with char share 1 (n-grams only)", {"char_share": 1.0}),
        ("  J with z-score instead of min-max", {"normalisation": "zscore"}),
        ("  J with RRF instead of min-max", {"normalisation": "rrf"}),
        ("  J with w=0.5", {"vector_weight": 0.5}),
        ("  J with w=0.6", {"vector_weight": 0.6}),
        ("  J with w=0.8", {"vector_weight": 0.8}),
        ("  J with w=0.9", {"vector_weight": 0.9}),
        ("  J with w=1.0 (embedding views only)", {"vector_weight": 1.0}),
        ("  J with w=0.0 (keyword side only)", {"vector_weight": 0.0}),
    ]


def row(label: str, metrics: dict[str, float], seconds: float | None = None, width: int = 58) -> str:
    cells = "  ".join(f"{metrics[m]:>9.3f}" for m in METRICS)
    tail = f"  {seconds:6.1f}s" if seconds is not None else ""
    return f"{label:<{width}}{cells}{tail}"


def header(title: str, width: int = 58) -> str:
    cols = "  ".join(f"{m:>9}" for m in METRICS)
    return f"\n{title}\n{'':<{width}}{cols}\n" + "-" * (width + 11 * len(METRICS) + 9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["livemcpbench", "metatool"])
    parser.add_argument("--quick", action="store_true", help="subsample MetaTool to 3,000 queries")
    parser.add_argument("--no-ablation", action="store_true")
    args = parser.parse_args(argv)

    for name in args.datasets:
        dataset = load_dataset(name)
        if args.quick and len(dataset.queries) > 3000:
            dataset = dataset.subset(3000)
        print(header(f"== {dataset.name}: {len(dataset.tools)} tools, {len(dataset.queries)} queries"))
        for kind in INDEX_KINDS:
            result = evaluate(make_index(kind), dataset, K, depth=DEPTH)
            print(row(f"index {kind} (defaults)", result.metrics, result.seconds))
        for label, fn in [
            ("peer TF-IDF cosine (sklearn)", peer_tfidf),
            ("peer bm25s", peer_bm25s),
            ("peer MiniLM description, no threshold", peer_minilm),
        ]:
            started = time.perf_counter()
            print(row(label, fn(dataset), time.perf_counter() - started))
        if args.no_ablation:
            continue
        print(header(f"-- hybrid ablation on {dataset.name}"))
        for label, options in ablation_configs():
            result = evaluate(HybridToolIndex(**options), dataset, K, depth=DEPTH)
            print(row(label, result.metrics, result.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
