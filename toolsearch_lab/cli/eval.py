"""``toolsearch-lab eval``: retrieval metrics (recall@k, hit@k, nDCG@10, MRR) of one index on one dataset,
server-level figures for catalogs of several servers, and abstention: what the index returns for requests
no tool serves, and the curve over its confidence threshold."""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, ToolCatalog, read_json_file
from toolsearch_lab.cli.live_servers import add_live_options, open_catalog
from toolsearch_lab.cli.options import (
    ABSTAINING,
    EXIT_OK,
    abstention_options,
    add_abstention_options,
    add_command,
    add_json_flag,
    names_help,
    positive_int,
)
from toolsearch_lab.index.factory import INDEX_KINDS

if TYPE_CHECKING:
    from toolsearch_lab.eval.datasets import Dataset
    from toolsearch_lab.eval.metrics import EvalResult

NAME = "eval"
SUMMARY = "retrieval metrics of an index on a dataset, and what it does when no tool fits"
CURVE = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.eval.datasets import SHIPPED_DATASETS
    from toolsearch_lab.eval.offcatalog import OFFCATALOG_SETS

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Index a dataset's tools, search every query, and score the rankings with binary relevance:\n"
        "recall@k, hit@k, nDCG@10 and MRR, averaged over queries; for a catalog of several servers also\n"
        "server recall@k and server hit@k. An index that can say 'no tool matches' (hybrid, learned) also\n"
        "reports the share of queries it answered, and with --offcatalog the share of requests no tool\n"
        "serves that it returned nothing for, over its confidence threshold (--curve).\n"
        "With --catalog, --mcp-config or --mcp the dataset file gives only the queries (its 'tools' are\n"
        "replaced): each query's relevant_tools name tools of that catalog or of those live servers.",
    )
    parser.add_argument(
        "--dataset",
        required=True,
        help=names_help("shipped dataset", SHIPPED_DATASETS, 'a dataset JSON file {"tools", "queries"}'),
    )
    parser.add_argument("--index", default="hybrid", choices=INDEX_KINDS, help="index kind to evaluate")
    parser.add_argument(
        "--k",
        type=positive_int,
        default=5,
        help="cut-off for recall@k and hit@k (rankings are max(k, 10) deep for nDCG@10 and MRR)",
    )
    parser.add_argument(
        "--catalog",
        default=None,
        help=names_help("shipped catalog", SHIPPED_CATALOGS, "a tools JSON file, e.g. a snapshot")
        + ": the tools to search, instead of the dataset's own (default: the dataset's)",
    )
    parser.add_argument(
        "--offcatalog",
        default=None,
        metavar="SET|FILE",
        help="also search requests no tool of the catalog serves: a shipped set (its requests for the "
        "dataset's catalog: " + "; ".join(f"{k}: {v}" for k, v in OFFCATALOG_SETS.items()) + "), or a text "
        "file of your own, one request per line (default: none)",
    )
    parser.add_argument(
        "--curve",
        action="store_true",
        help="the abstention curve: off-catalog share abstained and hit@k over the confidence threshold "
        f"({' and '.join(ABSTAINING)} only)",
    )
    parser.add_argument("--by-group", action="store_true", help="metrics per query group (suite, API server)")
    add_json_flag(parser, "the metrics")
    add_abstention_options(parser)
    add_live_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.eval.datasets import load_dataset

    if args.curve and args.index not in ABSTAINING:
        raise ValueError(
            f"--curve: the {args.index} index has no confidence threshold; use {' or '.join(ABSTAINING)}"
        )
    options = abstention_options(args, args.index)
    if args.curve and options.get("abstain") is False:
        raise ValueError("--curve draws the confidence threshold, which --no-abstain turns off")
    if args.catalog or args.mcp_config or args.mcp:
        with ExitStack() as stack:
            catalog = open_catalog(args, stack, [args.catalog] if args.catalog else [], command=NAME)
            dataset = queries_over(args.dataset, catalog)
    else:
        dataset = load_dataset(args.dataset)
    off = _offcatalog(args.offcatalog, dataset) if args.offcatalog else None
    report = evaluate_with_abstention(args.index, dataset, args.k, off, curve=args.curve, options=options)
    if args.json:
        print(json.dumps({**report, "index": args.index}, indent=2))
        return EXIT_OK
    marker = "--min-confidence" if "min_confidence" in options else "default"
    print("\n".join(render(report, dataset, args.index, args.by_group, marker)))
    return EXIT_OK


def _offcatalog(name: str, dataset: Dataset) -> list[str]:
    from toolsearch_lab.eval.offcatalog import OFFCATALOG_SETS, load_offcatalog, read_requests

    if Path(name).is_file():
        return read_requests(name)
    if name not in OFFCATALOG_SETS:
        raise ValueError(
            f"--offcatalog {name}: no such file, nor a shipped set ({', '.join(OFFCATALOG_SETS)}); expected "
            "one of those or a text file with one request per line"
        )
    if dataset.catalog is None:
        raise ValueError(f"--offcatalog {name}: the dataset {dataset.name!r} is not over a shipped catalog")
    requests = load_offcatalog(name, dataset.catalog)
    if not requests:
        raise ValueError(
            f"--offcatalog {name}: it has no requests for the catalog {dataset.catalog!r} of {dataset.name}"
        )
    return [r.query for r in requests]


def evaluate_with_abstention(
    kind: str,
    dataset: Dataset,
    k: int,
    off: list[str] | None,
    *,
    curve: bool = False,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The evaluation as a plain dict: metrics (and per group), the share of ``off`` the index returned
    nothing for, and with ``curve`` the abstention curve over the confidence threshold. ``options`` go to
    the index (:func:`~toolsearch_lab.cli.options.abstention_options`)."""
    from toolsearch_lab.eval.metrics import evaluate
    from toolsearch_lab.index.factory import make_index

    options = options or {}
    index = make_index(kind, **options)
    result = evaluate(index, dataset, k=k)
    report: dict[str, Any] = {**result.to_dict(), "by_group": result.by_group(dataset.servers or None)}
    threshold = getattr(index, "min_confidence", None)
    report["min_confidence"] = threshold
    if off is not None:
        responses = _search_off(index, dataset, off, result.depth)
        report["offcatalog"] = {
            "requests": len(off),
            "returned_nothing": sum(1 for r in responses if not r.tool_names),
        }
    if curve:
        report["curve"] = _curve(kind, dataset, k, off, threshold, options)
    return report


def _search_off(index: Any, dataset: Dataset, off: list[str], depth: int) -> list[Any]:
    from toolsearch_lab.eval.metrics import search_queries

    index.index_tools("offcatalog", dataset.tools)
    try:
        return search_queries(index, "offcatalog", off, depth)
    finally:
        index.clear_index("offcatalog")


def _curve(
    kind: str, dataset: Dataset, k: int, off: list[str] | None, default: float | None, options: dict[str, Any]
) -> list[dict[str, float]]:
    """Re-evaluates with abstention at 0 (every confidence known; only near-misses, which abstain at
    any threshold, return nothing) and applies each threshold of :data:`CURVE`, and the index's own,
    afterwards: an abstained query finds nothing."""
    from toolsearch_lab.eval.metrics import evaluate, hit_at_k, recall_at_k
    from toolsearch_lab.index.factory import make_index

    index = make_index(kind, **{**options, "min_confidence": 0.0})
    full: EvalResult = evaluate(index, dataset, k=k)
    off_conf: list[tuple[float, bool]] = []
    for r in _search_off(index, dataset, off, full.depth) if off is not None else []:
        if r.confidence is not None:
            off_conf.append((r.confidence.value, r.confidence.near_miss is not None))
    rows = []
    for t in sorted({*CURVE, *([default] if default is not None else [])}):
        kept = [q for q in full.per_query if (q.confidence or 0.0) >= t and not q.abstained]
        n = max(len(full.per_query), 1)
        row = {
            "min_confidence": t,
            f"hit@{k}": sum(hit_at_k(q.ranked, q.relevant, k) for q in kept) / n,
            f"recall@{k}": sum(recall_at_k(q.ranked, q.relevant, k) for q in kept) / n,
            "answered": len(kept) / n,
        }
        if off_conf:
            row["offcatalog_abstained"] = sum(1 for c, near in off_conf if near or c < t) / len(off_conf)
        rows.append(row)
    return rows


def render(
    report: dict[str, Any], dataset: Dataset, kind: str, by_group: bool, marker: str = "default"
) -> list[str]:
    """The report as text lines; ``marker`` names where the index's threshold came from, on its curve row."""
    k = report["k"]
    lines = [
        f"dataset {dataset.name}: {len(dataset.tools)} tools, {len(dataset.queries)} queries"
        + (f" over {len(set(dataset.servers.values()))} servers" if dataset.servers else ""),
        f"index   {kind} ({report['index']}), k={k}, searched with max_results={max(k, 10)}",
    ]
    for metric, value in report["metrics"].items():
        lines.append(f"  {metric:<16} {value:.4f}")
    if "answered" in report["metrics"] and report["min_confidence"] is not None:
        lines.append(
            f"  (it returns no tools below confidence {report['min_confidence']:.3f}: 'no tool matches')"
        )
    if by_group and report["by_group"]:
        lines.append(f"by group ({'recall@' + str(k)} / {'hit@' + str(k)}):")
        for group, metrics in report["by_group"].items():
            lines.append(f"  {group:<28} {metrics[f'recall@{k}']:.3f} / {metrics[f'hit@{k}']:.3f}")
    if "offcatalog" in report:
        off = report["offcatalog"]
        share = off["returned_nothing"] / off["requests"]
        lines.append(f"off-catalog: {off['requests']} requests no tool serves; {kind} returned nothing for "
                     f"{off['returned_nothing']} ({share:.0%})")  # fmt: skip
    if "curve" in report:
        lines.append(
            "abstention curve (no tools below the threshold, nor for a near-miss; an abstained query finds "
            "nothing):"
        )
        head = f"  {'min confidence':>14}  {'hit@' + str(k):>6}  {'recall@' + str(k):>9}  {'answered':>8}"
        lines.append(head + ("  off-catalog abstained" if "offcatalog" in report else ""))
        for row in report["curve"]:
            default = row["min_confidence"] == report["min_confidence"]
            off = f"  {row['offcatalog_abstained']:>21.2f}" if "offcatalog_abstained" in row else ""
            lines.append(
                f"  {row['min_confidence']:>14.3f}  {row[f'hit@{k}']:>6.3f}  {row[f'recall@{k}']:>9.3f}  "
                f"{row['answered']:>8.2f}{off}" + (f"  <- {marker}" if default else "")
            )
        lines += error_plot(report["curve"], report["min_confidence"], marker)
    lines.append(f"  ({report['seconds']:.1f} s)")
    return lines


PLOT_WIDTH = 40  # columns from 0 to 1


def error_plot(curve: list[dict[str, float]], default: float | None, marker: str = "default") -> list[str]:
    """Both errors of each threshold on one axis: R, the servable requests refused (1 - answered), and L,
    the off-catalog requests loaded with tools anyway (1 - the share abstained); * where they meet."""
    loaded = all("offcatalog_abstained" in row for row in curve)
    lines = [
        "both errors by threshold: R = servable requests refused"
        + (
            ", L = off-catalog requests given tools (* both)"
            if loaded
            else " (no off-catalog requests given)"
        ),
        f"  {'min confidence':>14}   0{'.5':>{PLOT_WIDTH // 2}}{'1':>{PLOT_WIDTH - PLOT_WIDTH // 2}}  refused"
        + ("  loaded" if loaded else ""),
    ]
    for row in curve:
        axis = [" "] * (PLOT_WIDTH + 1)
        refused = 1.0 - row["answered"]
        marks = [("R", refused)] + ([("L", 1.0 - row["offcatalog_abstained"])] if loaded else [])
        for mark, share in marks:
            at = round(share * PLOT_WIDTH)
            axis[at] = "*" if axis[at] != " " else mark
        text = f"  {row['min_confidence']:>14.3f}  |{''.join(axis)}|  {refused:>7.2f}"
        text += f"  {1.0 - row['offcatalog_abstained']:>6.2f}" if loaded else ""
        lines.append(text + (f"  <- {marker}" if row["min_confidence"] == default else ""))
    return lines


def queries_over(path: str, catalog: ToolCatalog) -> Dataset:
    """The queries of the dataset file ``path`` over ``catalog``'s tools (its own ``tools`` are replaced)."""
    from toolsearch_lab.eval.datasets import SHIPPED_DATASETS, parse_dataset

    if path in SHIPPED_DATASETS and not Path(path).is_file():
        raise ValueError(
            f"--dataset {path}: a shipped dataset's queries name its own tools; with --catalog, --mcp-config "
            'or --mcp give a JSON file {"queries": [{"id", "query", "relevant_tools"}]} naming the tools'
        )
    document = read_json_file(path)
    if not isinstance(document, dict) or "queries" not in document:
        raise ValueError(f'--dataset {path}: expected a JSON object with "queries"')
    records = [
        {"name": t.name, "description": t.description, "parameters": t.parameters, "category": t.category}
        for t in catalog
    ]
    return parse_dataset({**document, "tools": records}, name=Path(path).stem)
