"""``toolsearch-lab eval``: retrieval metrics (recall@k, hit@k, nDCG@10, MRR) of one index on one dataset."""

from __future__ import annotations

import argparse
import json

from toolsearch_lab.cli.options import EXIT_OK, add_command, add_json_flag, names_help, positive_int
from toolsearch_lab.eval.datasets import SHIPPED_DATASETS, load_dataset
from toolsearch_lab.eval.metrics import evaluate
from toolsearch_lab.index.factory import INDEX_KINDS, make_index


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        "eval",
        "retrieval metrics of an index on a dataset",
        "Index a dataset's tools, search every query, and score the rankings with binary relevance:\n"
        "recall@k, hit@k, nDCG@10 and MRR, averaged over queries.",
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
    add_json_flag(parser, "the metrics")
    return parser


def run(args: argparse.Namespace) -> int:
    dataset = load_dataset(args.dataset)
    result = evaluate(make_index(args.index), dataset, k=args.k)
    if args.json:
        print(json.dumps({**result.to_dict(), "index": args.index}, indent=2))
        return EXIT_OK
    print(f"dataset {dataset.name}: {len(dataset.tools)} tools, {len(dataset.queries)} queries")
    print(f"index   {args.index} ({result.index}), k={result.k}, searched with max_results={result.depth}")
    for metric, value in result.metrics.items():
        print(f"  {metric:<10} {value:.4f}")
    print(f"  ({result.seconds:.1f} s)")
    return EXIT_OK
