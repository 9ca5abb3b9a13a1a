"""Abstention ("no tool matches"): fit the hybrid index's confidence on calibration data, then judge it on
held-out sets, as a curve over the threshold and per index. A report: it prints numbers; nothing fails.

    python benchmarks/abstention.py            # fit, leave one out, curve, held out, per index (~8 min)
    python benchmarks/abstention.py --write    # also write toolsearch_lab/resources/abstention/hybrid.json
    python benchmarks/abstention.py --no-indexes --before   # the held-out table also without the size rule

The near-miss check (``toolsearch_lab.index.operations``) is measured too: its margin chosen on the
calibration sets (at most 1 % of their servable requests flagged on average per catalog), its flags part of
the curve (a flagged request abstains at any threshold).

Fit data (``toolsearch_lab.eval.offcatalog.calibration_sets``): hand-written off-catalog requests over
five catalogs, requests other catalogs serve that these cannot, and servable requests of the training
sources. Held out (never fitted or chosen on): the 100 hand-written GitHub off-catalog requests, BFCL's
240 irrelevance questions, 67 GitHub paraphrases, AgentDojo's 97 tasks, the steps of the three user-worded
scenarios written blind, and BFCL live's held-out half (real users' requests, each over its own catalog of
1 to 12 functions). The user-worded requests of every scenario are also judged by the model fitted without
their catalog (the calibration's promise, checked where it was not fitted).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.eval.abstention import (
    DEFAULT_KEEP,
    abstention_curve,
    choose_near_miss_gain,
    confidences,
    evidence,
    fit_abstention,
    held_out_refusals,
    leave_one_catalog_out,
    measure_abstention,
    near_miss_gains,
    refusals_table,
    user_worded_refusals,
)
from toolsearch_lab.eval.metrics import rank_queries
from toolsearch_lab.eval.offcatalog import (
    calibration_sets,
    catalog_tools,
    held_out_sets,
    load_offcatalog,
)
from toolsearch_lab.index.abstention import SHIPPED_MODEL
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.index.operations import NEAR_MISS_GAIN

THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
EXAMPLES = "servable: GitHub example requests"
COMMAND = "python benchmarks/abstention.py --write"


def hybrid_rankings(sets, k: int = 10) -> dict[str, list[list[str]]]:
    """The default hybrid's rankings (abstention off) of every servable set."""
    index = HybridToolIndex(abstain=False)
    out = {}
    for s in sets:
        index.index_tools("curve", catalog_tools(s.catalog))
        out[s.name] = [names for names, _ in rank_queries(index, "curve", list(s.queries), k)]
        index.clear_index("curve")
    return out


def formula(model) -> str:
    terms = " ".join(
        f"{c:+.3f} x ({f} - {m:.3f}) / {s:.3f}"
        for f, c, m, s in zip(model.features, model.coef, model.mean, model.scale, strict=True)
    )
    return f"P(some tool fits) = sigmoid({model.intercept:+.3f} {terms})"


def print_near_miss(cal, gains) -> float:
    """The near-miss margin chosen on calibration data, with what each margin flags per catalog."""
    chosen, rows = choose_near_miss_gain(cal, gains)
    hand = load_offcatalog("calibration")
    print("\nnear-miss check on calibration data (flagged share; servable: the requests it would turn away):")
    catalogs = list(dict.fromkeys(s.catalog for s in cal))
    print(f"{'gain >':>7} | " + " ".join(f"{c[:12]:>12}" for c in catalogs) + " | mean servable")
    for row in rows:
        g = row["gain"]
        near, on = [], []
        for c in catalogs:
            written = next(s for s in cal if s.catalog == c and s.name.startswith("hand-written"))
            kinds = np.array([r.kind for r in hand if r.catalog == c])
            near.append(float(np.mean(gains[written.name][kinds == "near-miss"] > g)))
            on.append(float(np.mean(next(gains[s.name] for s in cal if s.catalog == c and s.label == 1) > g)))
        mark = " <- chosen" if g == chosen else ""
        print(
            f"{g:>7.2f} | "
            + " ".join(f"{n:>5.2f} / {o:.3f}" for n, o in zip(near, on, strict=True))
            + f" | {row['servable flagged']:.4f}{mark}"
        )
    print("        (each cell: near-misses caught / servable flagged)")
    if chosen != NEAR_MISS_GAIN:
        print(f"NOTE: the chosen margin {chosen} differs from the shipped NEAR_MISS_GAIN {NEAR_MISS_GAIN}")
    return chosen


def print_curve(model, ev, cal, test, flags) -> None:
    """The curve over the threshold: off-catalog sets abstained, servable sets' hit@5 / recall@5."""
    conf = confidences(model, ev)
    servable = [s for s in test if s.label == 1] + [s for s in cal if s.name == EXAMPLES]
    rankings = hybrid_rankings(servable)
    kinds = np.array([r.kind for r in load_offcatalog("github-test")])
    flags = dict(flags)
    for kind in ("near-miss", "off-domain"):
        conf[kind] = conf["github-test"][kinds == kind]
        flags[kind] = flags["github-test"][kinds == kind]
    off = ["github-test", "near-miss", "off-domain", "bfcl-irrelevance"]
    thresholds = sorted({*THRESHOLDS, model.min_confidence})
    served = {s.name: (rankings[s.name], s.relevant) for s in servable}
    print("\nthe curve (held-out sets; the GitHub example requests are fit data):")
    print_points(abstention_curve(conf, off, served, thresholds), model, "without the near-miss check")
    print_points(abstention_curve(conf, off, served, thresholds, near_miss=flags), model, "with it (default)")


def print_points(curve, model, title) -> None:
    print(f"  {title}:")
    print(
        f"{'P <':>7} | {'gh-test':>7} {'near':>5} {'off':>5} {'bfcl-irr':>8} | {'paraphr. hit@5':>14} "
        f"{'AgentDojo r@5':>13} {'answered':>8} | {'GH examples hit@5':>17}"
    )
    for p in curve:
        a = p.abstained
        mark = " <- default" if p.threshold == model.min_confidence else ""
        print(
            f"{p.threshold:>7.3f} | {a['github-test']:>7.2f} {a['near-miss']:>5.2f} {a['off-domain']:>5.2f} "
            f"{a['bfcl-irrelevance']:>8.2f} | {p.hit['github-paraphrases']:>14.3f} "
            f"{p.recall['agentdojo']:>13.3f} {p.answered['agentdojo']:>8.2f} | {p.hit[EXAMPLES]:>17.3f}{mark}"
        )


def print_cost(test, rounds: int = 3) -> None:
    """What the near-miss check costs a search: the default hybrid against near_miss=False on the same
    GitHub requests, in this process, interleaved (ratios hold on a noisy machine; milliseconds do not).
    Both embed with MiniLM itself, not through the cache, so every search embeds its request afresh."""
    from toolsearch_lab.model import SearchRequest

    queries = [q for s in test if s.catalog == "github-mcp" for q in s.queries]
    minilm = default_embedder().embedder
    indexes = {
        "with the check": HybridToolIndex(embedder=minilm),
        "without": HybridToolIndex(embedder=minilm, near_miss=False),
    }
    for index in indexes.values():
        index.index_tools("cost", catalog_tools("github-mcp"))
        index.search(SearchRequest("cost", queries[0], 5))  # warm: embeddings, links, operations
    seconds = {name: [] for name in indexes}
    asked = [query for _ in range(rounds) for query in queries for _ in indexes]
    for i, query in enumerate(asked):
        name = list(indexes)[i % len(indexes)]
        started = time.perf_counter()
        indexes[name].search(SearchRequest("cost", query, 5))
        seconds[name].append(time.perf_counter() - started)
    ops = indexes["with the check"].operations("cost")
    judged = sum(ops.missing(q) is not None for q in queries)
    p50 = {name: float(np.median(v)) * 1000 for name, v in seconds.items()}
    total = {name: sum(v) for name, v in seconds.items()}
    ratio = total["with the check"] / total["without"]
    print(f"\nnear-miss check cost, {len(queries)} held-out GitHub requests x {rounds} rounds, one process:")
    print(
        f"  p50 per search {p50['with the check']:.2f} ms vs {p50['without']:.2f} ms without; total time "
        f"x{ratio:.2f}; {judged} requests ({judged / len(queries):.0%}) had no tool offering their "
        "operation and paid three more query embeddings"
    )


def print_user_worded(cal, ev, model) -> None:
    """The calibration's promise (keep 95 % of servable requests) where it was not fitted."""
    print("\nuser-worded servable requests (never fitted on), share refused by the confidence alone:")
    print(f"  {'set':<44} {'requests':>8}  {'fitted without its catalog':>26}  {'shipped model':>13}")
    for row in user_worded_refusals(cal, ev, model):
        print(f"  {row['set']:<44} {row['requests']:>8}  {row['left out']:>26.3f}  {row['shipped']:>13.3f}")


def print_held_out(options: dict) -> None:
    """Every held-out set the lab has, as the hybrid with ``options`` searches: servable requests refused
    next to unservable ones turned away (BFCL live's held-out half by catalog size)."""
    print(f"\nheld-out sets, hybrid {options or 'default'}: servable refused / unservable turned away")
    print("\n".join(refusals_table(held_out_refusals(make_index("hybrid", **options)))), flush=True)


def print_indexes(test) -> None:
    print("\nper index, as each searches (its own threshold or abstention), held-out sets:")
    print(f"{'index':<8} {'gh-test':>8} {'bfcl-irr':>8} | {'paraphr. hit@5':>14} | AgentDojo r@5 answered")
    for kind in INDEX_KINDS:
        r = measure_abstention(make_index(kind), test)
        print(
            f"{kind:<8} {r['github-test']['abstained']:>8.2f} {r['bfcl-irrelevance']['abstained']:>8.2f} | "
            f"{r['github-paraphrases']['hit@5']:>14.3f} | {r['agentdojo']['recall@5']:>13.3f} "
            f"{r['agentdojo']['answered']:>8.2f}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write the fitted model to {SHIPPED_MODEL}")
    parser.add_argument("--keep", type=float, default=DEFAULT_KEEP, help="servable share the threshold keeps")
    parser.add_argument("--no-indexes", action="store_true", help="skip the per-index table")
    parser.add_argument(
        "--before", action="store_true", help="also the held-out table without the rule by catalog size"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    cal, test = calibration_sets(), held_out_sets()
    ev = evidence(cal + test)
    n = sum(len(s.queries) for s in cal + test)
    print(f"evidence of {n:,} requests in {time.perf_counter() - started:.0f} s")

    print("\nleave one catalog out (fit on the other four, judge on this one):")
    for row in leave_one_catalog_out(cal, ev):
        print(
            f"  {row['catalog']:<13} AUC {row['auc']:.3f}  off-catalog abstained {row['abstained']:.2f}  "
            f"servable kept {row['kept']:.2f}  (threshold {row['threshold']:.3f})"
        )
    info = {"fitted_on": "toolsearch_lab.eval.offcatalog.calibration_sets()", "command": COMMAND}
    model = fit_abstention(cal, ev, keep=args.keep, embedder=default_embedder().name, info=info)
    print("\nmodel: " + formula(model) + f"; abstain below {model.min_confidence:.3f}")
    print(f"       (the threshold keeps {args.keep:.0%} of the calibration catalogs' servable requests)")
    print_user_worded(cal, ev, model)
    gains = near_miss_gains(cal + test)
    chosen = print_near_miss(cal, gains)
    print_curve(model, ev, cal, test, {name: g > chosen for name, g in gains.items()})
    if args.write:
        model.save(SHIPPED_MODEL)
        print(f"\nwrote {SHIPPED_MODEL}")
    print_cost(test)
    print_held_out({})
    if args.before:
        print_held_out({"small_catalog": 0})
    if not args.no_indexes:
        print_indexes(test)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
