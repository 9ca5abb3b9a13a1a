"""Retrieval quality of every index kind on every shipped benchmark, next to peer baselines computed in the
same run over the same tools, with server-level recall for catalogs of several servers; optionally the
BM25 analysis ablation and the hybrid index's ablation table. A report, not a test: it prints numbers.

    python benchmarks/retrieval_quality.py --quick        # MetaTool subsampled to 3,000 queries (~4 min)
    python benchmarks/retrieval_quality.py                # every MetaTool query (the first run embeds them)
    python benchmarks/retrieval_quality.py --datasets agentdojo bfcl-tasks --bm25-ablation
    python benchmarks/retrieval_quality.py --datasets metatool livemcpbench --hybrid-ablation
    python benchmarks/retrieval_quality.py --quick --no-peers --diversity 0.1 0.2 0.3   # diverse re-ranking

Held out (nothing in the package is fitted, tuned or chosen on them): ``agentdojo`` and
``github-paraphrases``. Development: the rest.

Rows: each index as ``make_index`` builds it (hybrid and learned abstain when nothing fits: an abstained
query finds nothing), the hybrid without abstention, and peers over the same tools: scikit-learn TF-IDF
cosine and ``bm25s`` (English stop words) and ``rank_bm25`` over ``tool_text(tool, "full")`` (split name,
description, parameters), MiniLM over "name: description" without a threshold, and reciprocal-rank fusion
(k = 60) of that bm25s and that MiniLM. Metrics: ``toolsearch_lab.eval.metrics`` (k = 5, rankings 10 deep).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.eval.datasets import Dataset, load_dataset
from toolsearch_lab.eval.metrics import QueryResult, aggregate, evaluate
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.index.hybrid import DEFAULT_VIEWS, HybridToolIndex
from toolsearch_lab.text.tool_text import tool_text

K = 5
DEPTH = 10
HELD_OUT = ("agentdojo", "github-paraphrases")
DATASETS = (
    "agentdojo",
    "github-paraphrases",
    "bfcl-tasks",
    "bfcl-turns",
    "livemcpbench",
    "metatool",
    "github-examples",
    "github-prerequisites",
    "bfcl-prerequisites",
)
COLUMNS = [f"recall@{K}", f"hit@{K}", "ndcg@10", "mrr", f"server recall@{K}", "answered"]


def metrics_from_scores(scores: np.ndarray, dataset: Dataset, matched: np.ndarray | None = None) -> dict:
    """Metrics of a dense [queries x tools] score matrix (higher = better; ``matched`` masks out tools a
    method does not return, e.g. BM25 without a shared word)."""
    names = [t.name for t in dataset.tools]
    results = []
    for i, q in enumerate(dataset.queries):
        order = np.argsort(-scores[i], kind="stable")
        if matched is not None:
            order = order[matched[i][order]]
        top = order[:DEPTH]
        results.append(
            QueryResult(q.id, q.query, q.relevant_tools, [names[j] for j in top], [0.0] * len(top), K)
        )
    return aggregate(results, K, dataset.servers or None)


def _texts(dataset: Dataset) -> list[str]:
    return [tool_text(t, "full") for t in dataset.tools]


def peer_tfidf(dataset: Dataset) -> dict:
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(_texts(dataset))
    scores = (vec.transform([q.query for q in dataset.queries]) @ vec.transform(_texts(dataset)).T).toarray()
    return metrics_from_scores(scores, dataset, scores > 0)


def bm25s_scores(dataset: Dataset) -> np.ndarray:
    import bm25s  # a test extra only the peers need

    retriever = bm25s.BM25()
    corpus = bm25s.tokenize(_texts(dataset), stopwords="en", show_progress=False)
    retriever.index(corpus, show_progress=False)
    tokens = bm25s.tokenize(
        [q.query for q in dataset.queries], stopwords="en", return_ids=False, show_progress=False
    )
    scores = np.zeros((len(dataset.queries), len(dataset.tools)), dtype=np.float32)
    for i, words in enumerate(tokens):
        known = [w for w in words if w in corpus.vocab]
        if known:
            scores[i] = retriever.get_scores(known)
    return scores


def peer_bm25s(dataset: Dataset) -> dict:
    scores = bm25s_scores(dataset)
    return metrics_from_scores(scores, dataset, scores > 0)


def peer_rank_bm25(dataset: Dataset) -> dict:
    from rank_bm25 import BM25Okapi  # a test extra

    word = re.compile(r"\w+")
    bm = BM25Okapi([word.findall(t.lower()) for t in _texts(dataset)])
    scores = np.array([bm.get_scores(word.findall(q.query.lower())) for q in dataset.queries])
    return metrics_from_scores(scores, dataset)


def minilm_scores(dataset: Dataset) -> np.ndarray:
    embed = default_embedder().embed
    tools = np.asarray(embed([f"{t.name}: {t.description}" for t in dataset.tools]), dtype=np.float32)
    queries = np.asarray(embed([q.query for q in dataset.queries]), dtype=np.float32)
    return queries @ tools.T


def rrf(*matrices: np.ndarray, k: int = 60) -> np.ndarray:
    out = np.zeros(matrices[0].shape)
    for m in matrices:
        out += 1.0 / (k + np.argsort(np.argsort(-m, axis=1, kind="stable"), axis=1) + 1)
    return out


def peers(dataset: Dataset) -> list[tuple[str, Callable[[], dict]]]:
    cache: dict[str, np.ndarray] = {}

    def once(name: str, fn: Callable[[Dataset], np.ndarray]) -> np.ndarray:
        if name not in cache:
            cache[name] = fn(dataset)
        return cache[name]

    def bm25() -> np.ndarray:
        return once("bm25s", bm25s_scores)

    def minilm() -> np.ndarray:
        return once("minilm", minilm_scores)

    return [
        ("peer TF-IDF cosine (sklearn, full text)", lambda: peer_tfidf(dataset)),
        ("peer bm25s (full text)", lambda: metrics_from_scores(bm25(), dataset, bm25() > 0)),
        ("peer rank-bm25 (full text)", lambda: peer_rank_bm25(dataset)),
        ("peer MiniLM (name: description)", lambda: metrics_from_scores(minilm(), dataset)),
        ("peer RRF bm25s + MiniLM", lambda: metrics_from_scores(rrf(bm25(), minilm()), dataset)),
    ]


def bm25_ablation() -> list[tuple[str, BM25ToolIndex]]:
    """From Spring's LuceneToolIndex towards bm25s, one analysis change per row (docs/index.md)."""
    spring = {"stop_words": True, "split_identifiers": True}
    words = {"analyzer": "words", "fields": "full", "stop_words": True}
    return [
        ("A Spring's LuceneToolIndex (min_score_threshold 0.25)", BM25ToolIndex()),
        ("B A with min_score_threshold 0", BM25ToolIndex(0.0)),
        ("C B + English stop words out of the query", BM25ToolIndex(0.0, stop_words=True)),
        ("D C + identifiers split (get_iban -> get iban)", BM25ToolIndex(0.0, **spring)),
        ("E D + parameters as a third field", BM25ToolIndex(0.0, include_parameters=True, **spring)),
        ("F one full-text field, words analyzer, stop words", BM25ToolIndex(0.0, **words)),
        ("G F + Porter stemming (the hybrid's keyword side)", BM25ToolIndex(0.0, stemmer="porter", **words)),
    ]


def hybrid_ablation() -> list[tuple[str, dict]]:
    """Around the default hybrid, one change per row (abstention off: the ranking itself)."""
    return [
        ("default (prerequisites on)", {}),
        ("  without prerequisite links", {"prerequisites": False}),
        ("  prerequisite weight 0.7", {"prerequisite_weight": 0.7}),
        ("  prerequisite weight 0.9", {"prerequisite_weight": 0.9}),
        ("  description view -> name+description", {"views": ("name+description", "full", "name")}),
        ("  + name+description as a fourth view", {"views": (*DEFAULT_VIEWS, "name+description")}),
        ("  char share 0 (words only)", {"char_share": 0.0}),
        ("  w = 0.6", {"vector_weight": 0.6}),
        ("  w = 0.8", {"vector_weight": 0.8}),
        ("  RRF instead of min-max", {"normalisation": "rrf"}),
    ]  # fmt: skip


def diversity_rows(weights: list[float]) -> list[tuple[str, dict]]:
    """The hybrid's diverse re-ranking at each weight, by category (server) and by description."""
    return [
        (f"  diversity {w:g} by {by}", {"diversity": w, "diversity_by": by})
        for by in ("category", "description")
        for w in weights
    ]


def row(label: str, metrics: dict, seconds: float | None = None, width: int = 52) -> str:
    cells = "  ".join(f"{metrics[m]:>9.3f}" if m in metrics else f"{'':>9}" for m in COLUMNS)
    return f"{label:<{width}}{cells}" + (f"  {seconds:6.1f}s" if seconds is not None else "")


def header(title: str, width: int = 52) -> str:
    names = [c.replace("server ", "srv ") for c in COLUMNS]
    cols = "  ".join(f"{m:>9}" for m in names)
    return f"\n{title}\n{'':<{width}}{cols}\n" + "-" * (width + 11 * len(COLUMNS) + 9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--quick", action="store_true", help="subsample MetaTool to 3,000 queries")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument(
        "--bm25-ablation", action="store_true", help="Spring's BM25 towards bm25s, step by step"
    )
    parser.add_argument(
        "--hybrid-ablation", action="store_true", help="the hybrid index's options, one by one"
    )
    parser.add_argument(
        "--diversity",
        nargs="+",
        type=float,
        metavar="W",
        help="rows for the hybrid's diverse re-ranking at these weights (abstention off and on)",
    )
    args = parser.parse_args(argv)

    for name in args.datasets:
        dataset = load_dataset(name)
        if args.quick and len(dataset.queries) > 3000:
            dataset = dataset.subset(3000)
        role = "HELD OUT" if name in HELD_OUT else "development"
        servers = f", {len(set(dataset.servers.values()))} servers" if dataset.servers else ""
        print(
            header(
                f"== {dataset.name} ({role}): {len(dataset.tools)} tools{servers}, "
                f"{len(dataset.queries)} queries"
            )
        )
        for kind in INDEX_KINDS:
            result = evaluate(make_index(kind), dataset, K, depth=DEPTH)
            print(row(f"index {kind}", result.metrics, result.seconds), flush=True)
        result = evaluate(HybridToolIndex(abstain=False), dataset, K, depth=DEPTH)
        print(row("index hybrid, abstention off", result.metrics, result.seconds))
        result = evaluate(make_index("vector", text="name+description"), dataset, K, depth=DEPTH)
        print(row("index vector, text name+description", result.metrics, result.seconds))
        if not args.no_peers:
            for label, fn in peers(dataset):
                started = time.perf_counter()
                print(row(label, fn(), time.perf_counter() - started), flush=True)
        if args.bm25_ablation:
            print(header(f"-- BM25 analysis, Spring's index towards bm25s, on {dataset.name}"))
            for label, index in bm25_ablation():
                result = evaluate(index, dataset, K, depth=DEPTH)
                print(row(label, result.metrics, result.seconds), flush=True)
        if args.hybrid_ablation:
            print(header(f"-- hybrid options on {dataset.name} (abstention off)"))
            for label, options in hybrid_ablation():
                result = evaluate(HybridToolIndex(abstain=False, **options), dataset, K, depth=DEPTH)
                print(row(label, result.metrics, result.seconds), flush=True)
        if args.diversity:
            for abstain in (False, True):
                print(header(f"-- hybrid diverse re-ranking on {dataset.name} (abstain={abstain})"))
                for label, options in [("  off (diversity 0)", {}), *diversity_rows(args.diversity)]:
                    index = HybridToolIndex(abstain=abstain, **options)
                    result = evaluate(index, dataset, K, depth=DEPTH)
                    print(row(label, result.metrics, result.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
