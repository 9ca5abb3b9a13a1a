"""The learned ranker next to the hand-tuned hybrid and the peers, on both shipped datasets, in one table.
A report, not a test: it prints numbers; nothing fails.

    python benchmarks/learned_ranker.py            # about 2-4 minutes (features of 21k MetaTool queries)
    python benchmarks/learned_ranker.py --quick    # MetaTool subsampled to 3,000 queries

Rows, per dataset (k = 5, rankings 10 deep, metrics of ``toolsearch_lab.eval.metrics``):

* ``hybrid`` - the hand-tuned default. Its weights were tuned on these same two datasets: in-sample.
* ``learned, trained on <other dataset>`` - cross-dataset: the model never saw a query of this dataset.
* ``learned, leave-one-server-out`` (LiveMCPBench) - queries grouped by the server of their first relevant
  tool; each group is scored by a model trained on all other groups (in-domain, never in-sample).
* ``learned, shipped model`` - trained on both datasets: in-sample, shown for reference only.
* peers (``benchmarks/retrieval_quality.py``): scikit-learn TF-IDF cosine and ``bm25s``.

Training: ``fit_model`` with the defaults of ``toolsearch-lab train-ranker`` (pairwise logistic regression,
C = 0.01, 100 random irrelevant tools per query), MetaTool as training set capped at ``--train-queries``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_quality import header, metrics_from_scores, peer_bm25s, peer_tfidf, row

from toolsearch_lab.eval.datasets import Dataset, load_dataset
from toolsearch_lab.eval.ranker_training import DEFAULT_FEATURES, combine, fit_model, pairs_from_features
from toolsearch_lab.index.learned import FEATURES, RankerModel, RankingSignals


def dataset_features(dataset: Dataset) -> np.ndarray:
    """``[n_queries, n_tools, F]`` (float32) over the dataset's catalog, in catalog order."""
    signals = RankingSignals()
    signals.index_tools("bench", list(dataset.tools))
    parts = []
    for start in range(0, len(dataset.queries), 2048):
        tools, x = signals.features("bench", [q.query for q in dataset.queries[start : start + 2048]])
        assert [t.name for t in tools] == dataset.tool_names
        parts.append(x.astype(np.float32))
    return np.concatenate(parts)


def train(dataset: Dataset, x: np.ndarray, rows: np.ndarray, args: argparse.Namespace) -> RankerModel:
    rng = np.random.default_rng(0)
    if len(rows) > args.train_queries:
        rows = np.sort(rng.choice(rows, args.train_queries, replace=False))
    relevant = [dataset.queries[i].relevant_tools for i in rows]
    data = pairs_from_features(x[rows], dataset.tool_names, relevant, rng=rng)
    return fit_model(combine([data]), features=args.features, info={"trained_on": dataset.name})


def leave_one_server_out(dataset: Dataset, x: np.ndarray, args: argparse.Namespace) -> np.ndarray:
    """Scores ``[n_queries, n_tools]``, each query's from a model that never saw its server's group."""
    server = {t.name: t.category or "?" for t in dataset.tools}
    group = np.array([server.get(q.relevant_tools[0], "?") for q in dataset.queries])
    scores = np.zeros(x.shape[:2])
    for name in np.unique(group):
        held = np.flatnonzero(group == name)
        model = train(dataset, x, np.flatnonzero(group != name), args)
        scores[held] = model.scores(x[held].astype(np.float64))
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="subsample MetaTool to 3,000 queries")
    parser.add_argument("--train-queries", type=int, default=5000, help="cap on training queries per set")
    parser.add_argument("--all-features", action="store_true", help="also raw cosines and description length")
    args = parser.parse_args(argv)
    args.features = FEATURES if args.all_features else DEFAULT_FEATURES
    data, feats = {}, {}
    for name in ("livemcpbench", "metatool"):
        dataset = load_dataset(name)
        data[name] = dataset.subset(3000) if args.quick and len(dataset.queries) > 3000 else dataset
        started = time.perf_counter()
        feats[name] = dataset_features(data[name])
        print(f"features of {data[name].name}: {feats[name].shape} in {time.perf_counter() - started:.1f} s")
    models = {n: train(data[n], feats[n], np.arange(len(data[n].queries)), args) for n in data}
    shipped = RankerModel.load()
    hybrid_col = FEATURES.index("hybrid score")
    for name, other in (("livemcpbench", "metatool"), ("metatool", "livemcpbench")):
        dataset, x = data[name], feats[name].astype(np.float64)
        print(header(f"== {dataset.name}: {len(dataset.tools)} tools, {len(dataset.queries)} queries"))
        print(row("hybrid, hand-tuned (in-sample)", metrics_from_scores(x[..., hybrid_col], dataset)))
        print(
            row(
                f"learned, trained on {other} (cross-dataset)",
                metrics_from_scores(models[other].scores(x), dataset),
            )
        )
        if name == "livemcpbench":
            print(
                row(
                    "learned, leave-one-server-out",
                    metrics_from_scores(leave_one_server_out(dataset, x, args), dataset),
                )
            )
        print(row("learned, shipped model (in-sample)", metrics_from_scores(shipped.scores(x), dataset)))
        print(row("peer TF-IDF cosine (sklearn)", peer_tfidf(dataset)))
        print(row("peer bm25s", peer_bm25s(dataset)))
    for name, model in models.items():
        top = ", ".join(f"{f} {w:+.2f}" for f, w in list(model.weights().items())[:5])
        print(f"\nweights of the model trained on {name} (per sd, top 5): {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
