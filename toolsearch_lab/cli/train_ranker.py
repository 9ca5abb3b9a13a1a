"""``toolsearch-lab train-ranker``: fit the learned index's ranker on labelled queries, save it as JSON.

Input: one or more datasets, each a shipped name (``metatool``, ``livemcpbench``) or a JSON file shaped like
the shipped ``normalized.json``::

    {"tools":   [{"name": "get_weather", "description": "...", "parameters": {...}}, ...],
     "queries": [{"query": "will it rain in Paris tomorrow?", "relevant_tools": ["get_weather"]}, ...]}

Each query's ``relevant_tools`` names tools of the same file. The fitted model is a small JSON file (feature
names, means, scales, weights, intercept); use it with ``make_index("learned", model="ranker.json")``.
"""

from __future__ import annotations

import argparse
import json
import random

from toolsearch_lab.cli.options import EXIT_OK, add_command, add_json_flag, names_help, positive_int

NAME = "train-ranker"
SUMMARY = "fit the learned index's ranker on labelled queries and save it as JSON"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.eval.datasets import SHIPPED_DATASETS

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Fits a logistic-regression ranker over the hybrid index's signals on labelled queries\n"
        '(a dataset JSON file: {"tools": [...], "queries": [{"query", "relevant_tools"}]}), and writes it\n'
        'as plain JSON for make_index("learned", model=PATH).',
    )
    parser.add_argument(
        "--dataset",
        action="append",
        required=True,
        help=names_help("shipped dataset", SHIPPED_DATASETS, "a dataset JSON file") + " (repeatable)",
    )
    parser.add_argument("--out", required=True, help="where to write the model JSON")
    parser.add_argument(
        "--max-queries",
        type=positive_int,
        default=None,
        help="random sample of at most N queries per dataset",
    )
    parser.add_argument("--c", type=float, default=0.01, help="inverse regularisation strength")
    parser.add_argument("--negatives", type=positive_int, default=100, help="irrelevant tools per query")
    parser.add_argument(
        "--features", choices=("default", "all"), default="default", help="all: also raw cosines and length"
    )
    add_json_flag(parser, "the model")
    return parser


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.eval.datasets import load_dataset
    from toolsearch_lab.eval.ranker_training import DEFAULT_FEATURES, fit_ranker
    from toolsearch_lab.index.learned import FEATURES

    if args.c <= 0:
        raise ValueError(f"--c must be > 0, got {args.c}")
    catalogs, names = [], []
    for source in args.dataset:
        dataset = load_dataset(source)
        queries = list(dataset.queries)
        if args.max_queries is not None and len(queries) > args.max_queries:
            queries = random.Random(0).sample(queries, args.max_queries)
        catalogs.append((dataset.tools, [(q.query, q.relevant_tools) for q in queries]))
        names.append(f"{dataset.name} ({len(queries)} queries)")
    model = fit_ranker(
        catalogs,
        features=DEFAULT_FEATURES if args.features == "default" else FEATURES,
        c=args.c,
        negatives=args.negatives,
        info={"trained_on": ", ".join(names)},
    )
    model.save(args.out)
    if args.json:
        print(json.dumps(model.to_dict(), indent=2))
        return EXIT_OK
    print(f"trained on {', '.join(names)}: {model.info['pairs']:,} (relevant, irrelevant) pairs")
    print("weights per standard deviation of each feature, largest first:")
    for feature, weight in model.weights().items():
        print(f"  {weight:+8.3f}  {feature}")
    print(f'wrote {args.out}; use it with make_index("learned", model={str(args.out)!r})')
    return EXIT_OK
