"""Would a learned linear map over MiniLM's query vectors lift the hybrid's ranking? A report, not a test: it
prints recall@5 of the hybrid (abstention off) on each development set, as shipped and with the map.

    python benchmarks/query_adapter.py                    # pulls 0.03 0.1 0.3 (~25 min on 2 cores)
    python benchmarks/query_adapter.py --pulls 0.3

The map W (dim x dim, started at the identity) turns a request's vector into ``W q`` before the cosines; the
tools' vectors stay as they are. It is fitted by softmax cross-entropy of each request against every tool of
its catalog (tool vector: the mean of the hybrid's views), with an L2 pull of W towards the identity, each
dataset weighing the same. Leave-one-dataset-out: each set is scored with W fitted on the others only, BFCL
tasks and turns held out together (the turns are the tasks' sentences over the same tools). Held-out sets
(AgentDojo, the GitHub paraphrases) are never read. Result and decision: docs/hybrid-lab-log.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_quality import DEPTH, K  # noqa: E402

from toolsearch_lab.embed.cache import CachedEmbedder  # noqa: E402
from toolsearch_lab.embed.default import default_embedder  # noqa: E402
from toolsearch_lab.eval.datasets import Dataset, load_dataset  # noqa: E402
from toolsearch_lab.eval.metrics import evaluate  # noqa: E402
from toolsearch_lab.index.hybrid import DEFAULT_VIEWS, HybridToolIndex  # noqa: E402
from toolsearch_lab.text.tool_text import tool_text  # noqa: E402

DEVELOPMENT = ("bfcl-tasks", "github-examples", "bfcl-turns", "livemcpbench", "metatool")
SCORED_QUERIES = {"metatool": 3000}  # as retrieval_quality --quick
FITTED_QUERIES = {"metatool": 6000}
TOGETHER = {"bfcl-tasks": "bfcl", "bfcl-turns": "bfcl"}


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


class Fit:
    """One dataset's fitting data: request vectors, tool vectors, each request's relevant tool positions."""

    def __init__(self, dataset: Dataset, embedder: CachedEmbedder) -> None:
        position = {t.name: i for i, t in enumerate(dataset.tools)}
        views = [np.asarray(embedder.embed([tool_text(t, v) for t in dataset.tools])) for v in DEFAULT_VIEWS]
        self.tools = np.mean([unit(v.astype(np.float64)) for v in views], axis=0)
        queries = [q for q in dataset.queries if any(r in position for r in q.relevant_tools)]
        self.requests = unit(np.asarray(embedder.embed([q.query for q in queries]), dtype=np.float64))
        self.relevant = [[position[r] for r in q.relevant_tools if r in position] for q in queries]

    def gradient(self, w: np.ndarray, temperature: float) -> np.ndarray:
        """d(mean cross-entropy)/dW, a request's probability mass being that of all its relevant tools."""
        logits = self.requests @ w @ self.tools.T / temperature
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = p.copy()
        for i, relevant in enumerate(self.relevant):
            g[i, relevant] -= p[i, relevant] / p[i, relevant].sum()
        return self.requests.T @ (g @ self.tools) / (temperature * len(self.relevant))


def fit(parts: Sequence[Fit], pull: float, temperature: float = 0.05, steps: int = 300) -> np.ndarray:
    """W by Adam (learning rate 0.05), each dataset's gradient weighing the same."""
    eye = np.eye(parts[0].requests.shape[1])
    w, m, v = eye.copy(), np.zeros_like(eye), np.zeros_like(eye)
    for step in range(1, steps + 1):
        grad = pull * (w - eye) + sum(p.gradient(w, temperature) for p in parts) / len(parts)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        w -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


class AdaptedEmbedder:
    """An :class:`Embedder`: the base embedder, with ``W`` applied to every text that is not one of the tools'
    view texts (those stay the base embedder's, as the shipped tool vectors would)."""

    def __init__(self, base: CachedEmbedder, w: np.ndarray, tool_texts: set[str]) -> None:
        self.base, self.w, self.tool_texts = base, w, tool_texts
        self.name = f"{base.name}+query-adapter"

    @property
    def dim(self) -> int:
        return self.base.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        x = np.asarray(self.base.embed(texts), dtype=np.float64)
        request = np.array([t not in self.tool_texts for t in texts], dtype=bool)
        x[request] = unit(x[request] @ self.w)
        return x.astype(np.float32)


def recall(dataset: Dataset, index: HybridToolIndex) -> float:
    return evaluate(index, dataset, K, depth=DEPTH).metrics[f"recall@{K}"]


def hybrid(embedder: CachedEmbedder | AdaptedEmbedder) -> HybridToolIndex:
    return HybridToolIndex(embedder=embedder, abstain=False)


def print_table(rows: dict[str, dict[str, float]]) -> None:
    """One row per variant, one column per development set, and their mean."""
    title = "hybrid, abstention off, recall@5"
    print(f"{title:<34}" + "".join(f"{n:>17}" for n in DEVELOPMENT) + f"{'mean':>8}")
    for label, values in rows.items():
        cells = "".join(f"{values[n]:>17.3f}" for n in DEVELOPMENT)
        print(f"{label:<34}{cells}{np.mean([values[n] for n in DEVELOPMENT]):>8.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pulls", type=float, nargs="+", default=[0.03, 0.1, 0.3])
    args = parser.parse_args(argv)
    embedder = default_embedder()
    scored, fits = {}, {}
    for name in DEVELOPMENT:
        dataset = load_dataset(name)
        scored[name] = dataset.subset(SCORED_QUERIES.get(name, len(dataset.queries)))
        fits[name] = Fit(dataset.subset(FITTED_QUERIES.get(name, len(dataset.queries))), embedder)
    texts = {tool_text(t, v) for d in scored.values() for t in d.tools for v in DEFAULT_VIEWS}
    rows = {"as shipped": {n: recall(scored[n], hybrid(embedder)) for n in DEVELOPMENT}}

    def held_out(held: str, pull: float) -> float:
        others = [fits[n] for n in DEVELOPMENT if TOGETHER.get(n, n) != TOGETHER.get(held, held)]
        return recall(scored[held], hybrid(AdaptedEmbedder(embedder, fit(others, pull), texts)))

    for pull in args.pulls:
        rows[f"adapter, pull {pull}"] = {held: held_out(held, pull) for held in DEVELOPMENT}
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
