"""``toolsearch-lab replay FILE --compare``: the logged run re-priced under every strategy of the strategy
lab, and the model's own search queries asked of every index (:func:`~toolsearch_lab.eval.replay_compare.
compare_replay`). Every text from the file goes through the CLI's terminal guard (:func:`safe`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from toolsearch_lab.cli.options import EXIT_OK, positive_int
from toolsearch_lab.cli.terminal import safe
from toolsearch_lab.index.factory import INDEX_KINDS

if TYPE_CHECKING:
    from toolsearch_lab.eval.replay_compare import ReplayComparison
    from toolsearch_lab.eval.replay_searches import SearchHits

__all__ = ["add_compare_options", "format_comparison", "run_compare"]


def add_compare_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("counterfactual replay (--compare)")
    group.add_argument(
        "--compare",
        action="store_true",
        help="re-price the run under every strategy of the strategy lab (the model's calls kept as logged) "
        "and ask every index the model's own search queries: did it return the tool the model then called?",
    )
    group.add_argument(
        "--index",
        nargs="+",
        choices=INDEX_KINDS,
        default=list(INDEX_KINDS),
        help="indexes Spring's loop is re-run with and the searches are asked of (the other strategies use "
        "lucene when it is one of them, else the first)",
    )
    group.add_argument("--k", type=positive_int, default=5, help="hit@k of the searches")
    group.add_argument(
        "--prices", default=None, help="a price table JSON file (default: the shipped one, data/prices.json)"
    )
    group.add_argument(
        "--price-model",
        default=None,
        help="the model to price as (default: the run's own model when the table has it, else a stand-in of "
        "its provider, named)",
    )


def run_compare(args: argparse.Namespace) -> int:
    from toolsearch_lab.eval.cost import load_prices
    from toolsearch_lab.eval.replay_compare import compare_replay

    comparison = compare_replay(
        args.file,
        format=None if args.format == "auto" else args.format,
        catalog=args.catalog,
        indexes=args.index,
        index="lucene" if "lucene" in args.index else args.index[0],
        k=args.k,
        prices=load_prices(args.prices) if args.prices else None,
        price_model=args.price_model,
    )
    print(comparison.to_json() if args.json else format_comparison(comparison))
    return EXIT_OK


COLUMNS = (
    *("#", "strategy", "index", "req", "prompt", "cached", "written", "uncached", "output", "USD"),
    *("tools/req", "refused"),
)


def format_comparison(c: ReplayComparison) -> str:
    """The comparison as a terminal page: the rows, what each assumes, then the searches."""
    from toolsearch_lab.eval.replay_compare import EVERY_RERUN

    lines = [f"compare: {safe(c.file or '?')} ({c.format}, model {safe(c.model, 80)})"]
    if c.provenance:
        lines.append(f"provenance: {safe(c.provenance, 400)}")
    lines += [
        f"{c.priced_as}; {c.price.provider}'s caching rule; prices of {c.prices_taken}",
        f"kept loaded: {safe(', '.join(c.kept), 300) or 'none'}",
        f"assumed in every re-run: {EVERY_RERUN}",
        "",
    ]
    rows = [list(COLUMNS)]
    for number, r in enumerate(c.rows, start=1):
        bill = r.bill
        rows.append(
            [
                str(number),
                r.strategy,
                safe(r.index or "-", 28),
                str(bill["requests"]),
                *(f"{bill[k]:,}" for k in ("prompt_tokens", "cached_tokens", "cache_write_tokens")),
                *(f"{bill[k]:,}" for k in ("uncached_tokens", "completion_tokens")),
                f"{r.cost_usd:.4f}",
                "-" if r.mean_tools is None else f"{r.mean_tools:.1f}",
                "-" if r.refused_calls is None else str(r.refused_calls),
            ]
        )
    lines += _table(rows, left=(1, 2))
    lines += ["", "what each row assumes:"]
    lines += [f"{n:>3}  {safe(r.assumes)}" for n, r in enumerate(c.rows, start=1)]
    lines += ["", *_searches(c.searches)]
    lines += [f"note: {safe(note, 300)}" for note in c.notes]
    return "\n".join(lines)


def _table(rows: list[list[str]], left: tuple[int, ...]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _searches(hits: SearchHits) -> list[str]:
    k = hits.k
    scored = hits.scored
    lines = [
        f"searches: did the index return the tool the model then called? {scored} of {len(hits.cases)} "
        f"searches scored, over the {hits.searchable} tools the log's searches searched (a search with no "
        "such call after it, or a select: lookup, is not scored)"
    ]
    rows = [["index", "hit@1", f"hit@{k}", "MRR"]]
    for i in hits.indexes:
        rows.append([i.index, f"{i.hit_at_1}/{i.searches}", f"{i.hit_at_k}/{i.searches}", f"{i.mrr:.2f}"])
    lines += _table(rows, left=(0,))
    for case in hits.cases:
        then = ", ".join(case.targets) or (
            "nothing: a select: lookup" if case.select else "nothing searchable"
        )
        lines += [
            "",
            f"{case.number}. request {case.request}, {safe(case.tool, 40)} “{safe(case.query, 200)}”",
        ]
        lines.append(
            f"   then called: {safe(then, 200)}" + (" (select: lookup, not scored)" if case.select else "")
        )
        for a in case.answers:
            rank = f"#{a.rank}" if a.rank else "miss" if case.targets else "-"
            found = a.error or ", ".join(a.names) or "nothing"
            lines.append(f"   {a.index:<15} {rank:>4}  {safe(found, 300)}" + _asked(a))
    return lines


def _asked(answer: Any) -> str:
    return "" if answer.query_as == "as written" or answer.index == "logged" else f"  ({answer.query_as})"
