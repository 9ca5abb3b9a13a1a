"""``toolsearch-lab eval``: retrieval metrics (recall@k, hit@k, nDCG@10, MRR) of one index on one dataset."""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, ToolCatalog, read_json_file
from toolsearch_lab.cli.options import (
    EXIT_OK,
    add_command,
    add_json_flag,
    add_live_options,
    names_help,
    open_catalog,
    positive_int,
)
from toolsearch_lab.index.factory import INDEX_KINDS

if TYPE_CHECKING:
    from toolsearch_lab.eval.datasets import Dataset

NAME = "eval"
SUMMARY = "retrieval metrics of an index on a dataset"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.eval.datasets import SHIPPED_DATASETS

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Index a dataset's tools, search every query, and score the rankings with binary relevance:\n"
        "recall@k, hit@k, nDCG@10 and MRR, averaged over queries.\n"
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
    add_json_flag(parser, "the metrics")
    add_live_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.eval.datasets import load_dataset
    from toolsearch_lab.eval.metrics import evaluate
    from toolsearch_lab.index.factory import make_index

    if args.catalog or args.mcp_config or args.mcp:
        with ExitStack() as stack:
            catalog = open_catalog(args, stack, [args.catalog] if args.catalog else [], command=NAME)
            dataset = queries_over(args.dataset, catalog)
    else:
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
