"""Would late interaction over MiniLM's own token vectors lift the hybrid's ranking? A report, not a test: it
prints recall@5 of the hybrid (abstention off) on each development set, as shipped and with a MaxSim term
blended into its score.

    python benchmarks/late_interaction.py                        # blends 0.1 0.2 0.3, idf-weighted
    python benchmarks/late_interaction.py --blends 0.2 --uniform

MaxSim (as ColBERT scores, here with no new weights): every word piece of the request and of the tool's "full"
text (split name, description, parameters) gets MiniLM's contextual vector, the last hidden state that mean
pooling would otherwise average away; a request token scores its best-matching tool token by cosine, and the
request's score is the mean over its tokens, weighted by each token's idf over the catalog's tool texts (as
BERTScore weights them) unless ``--uniform``. The score is min-max normalised per request and blended into the
hybrid's final score. Held-out sets (AgentDojo, the GitHub paraphrases) are never read. Result and decision:
docs/hybrid-lab-log.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from query_adapter import DEVELOPMENT, SCORED_QUERIES, print_table, recall  # noqa: E402

from toolsearch_lab.embed.minilm import MiniLMEmbedder  # noqa: E402
from toolsearch_lab.eval.datasets import load_dataset  # noqa: E402
from toolsearch_lab.index.hybrid import HybridToolIndex, normalise  # noqa: E402
from toolsearch_lab.index.hybrid_evidence import Scores  # noqa: E402
from toolsearch_lab.text.tool_text import tool_text  # noqa: E402


class TokenVectors:
    """Unit-length contextual vectors of each text's word pieces ([CLS] and [SEP] left out), with their ids;
    kept per text, because the same tool texts are scored against every request of a catalog."""

    def __init__(self) -> None:
        self.model = MiniLMEmbedder()
        self.kept: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        new = sorted({t for t in texts if t not in self.kept})
        for rows, ids, mask, hidden in self.model.hidden_states(new):
            for r, row in enumerate(rows):
                end = max(int(mask[r].sum()) - 1, 1)
                vectors = hidden[r, 1:end].astype(np.float32)
                vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
                self.kept[new[row]] = (vectors, ids[r, 1:end].copy())
        return [self.kept[t] for t in texts]


def maxsim(
    requests: list[tuple[np.ndarray, np.ndarray]], tools: list[tuple[np.ndarray, np.ndarray]], uniform: bool
) -> np.ndarray:
    """[n_requests, n_tools]: each request token's best cosine within a tool, averaged over the request's
    tokens with idf weights over the tools' texts (or uniform weights)."""
    matrix = np.concatenate([v for v, _ in tools])
    starts = np.cumsum([0] + [len(v) for v, _ in tools[:-1]])
    df: dict[int, int] = {}
    for _, ids in tools:
        for i in set(ids.tolist()):
            df[i] = df.get(i, 0) + 1
    out = np.zeros((len(requests), len(tools)))
    for row, (vectors, ids) in enumerate(requests):
        best = np.maximum.reduceat(vectors @ matrix.T, starts, axis=1)
        if uniform:
            weights = np.ones(len(ids))
        else:
            weights = np.array([np.log((len(tools) + 1) / (df.get(i, 0) + 1)) for i in ids.tolist()])
        out[row] = weights @ best / max(weights.sum(), 1e-9)
    return out


class LateInteractionHybrid(HybridToolIndex):
    """The shipped hybrid with ``blend`` x the normalised MaxSim score mixed into its final score."""

    def __init__(self, tokens: TokenVectors, blend: float, uniform: bool) -> None:
        super().__init__(abstain=False)
        self.tokens, self.blend, self.uniform = tokens, blend, uniform

    def score_matrix(self, session_id: str, queries: Sequence[str | None]) -> Scores:
        m = super().score_matrix(session_id, queries)
        if not m.tools or self.blend <= 0:
            return m
        tools = self.tokens([tool_text(t, "full") for t in m.tools])
        late = normalise(maxsim(self.tokens([q or "" for q in queries]), tools, self.uniform))
        return dataclasses.replace(m, score=(1 - self.blend) * m.score + self.blend * late)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blends", type=float, nargs="+", default=[0.1, 0.2, 0.3])
    parser.add_argument("--uniform", action="store_true", help="weigh request tokens equally, not by idf")
    args = parser.parse_args(argv)
    tokens = TokenVectors()
    rows: dict[str, dict[str, float]] = {}
    for name in DEVELOPMENT:
        dataset = load_dataset(name)
        dataset = dataset.subset(SCORED_QUERIES.get(name, len(dataset.queries)))
        rows.setdefault("as shipped", {})[name] = recall(dataset, HybridToolIndex(abstain=False))
        for blend in args.blends:
            label = f"MaxSim {'uniform' if args.uniform else 'idf'}, blend {blend}"
            rows.setdefault(label, {})[name] = recall(
                dataset, LateInteractionHybrid(tokens, blend, args.uniform)
            )
        print(name, {label: round(values[name], 3) for label, values in rows.items()}, flush=True)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
