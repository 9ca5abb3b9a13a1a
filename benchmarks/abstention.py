"""Abstention ("no tool matches"): fit the hybrid index's confidence on calibration data, then judge it on
held-out sets, as a curve over the threshold and per index. A report: it prints numbers; nothing fails.

    python benchmarks/abstention.py            # fit, leave-one-catalog-out, curve, per-index table (~2 min)
    python benchmarks/abstention.py --write    # also write toolsearch_lab/resources/abstention/hybrid.json
    python benchmarks/abstention.py --no-indexes

Fit data (``toolsearch_lab.eval.offcatalog.calibration_sets``): hand-written off-catalog requests over
five catalogs, requests other catalogs serve that these cannot, and servable requests of the training
sources. Held out (never fitted or chosen on): the 100 hand-written GitHub off-catalog requests, BFCL's
240 irrelevance questions, 67 GitHub paraphrases and AgentDojo's 97 tasks.
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
    confidences,
    evidence,
    fit_abstention,
    leave_one_catalog_out,
    measure_abstention,
)
from toolsearch_lab.eval.metrics import rank_queries
from toolsearch_lab.eval.offcatalog import calibration_sets, catalog_tools, held_out_sets, load_offcatalog
from toolsearch_lab.index.abstention import SHIPPED_MODEL
from toolsearch_lab.index.factory import INDEX_KINDS, make_index
from toolsearch_lab.index.hybrid import HybridToolIndex

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


def print_curve(model, ev, cal, test) -> None:
    """The curve over the threshold: off-catalog sets abstained, servable sets' hit@5 / recall@5."""
    conf = confidences(model, ev)
    servable = [s for s in test if s.label == 1] + [s for s in cal if s.name == EXAMPLES]
    rankings = hybrid_rankings(servable)
    kinds = np.array([r.kind for r in load_offcatalog("github-test")])
    conf["near-miss"] = conf["github-test"][kinds == "near-miss"]
    conf["off-domain"] = conf["github-test"][kinds == "off-domain"]
    off = ["github-test", "near-miss", "off-domain", "bfcl-irrelevance"]
    thresholds = sorted({*THRESHOLDS, model.min_confidence})
    curve = abstention_curve(
        conf, off, {s.name: (rankings[s.name], s.relevant) for s in servable}, thresholds
    )
    print("\nthe curve (held-out sets; the GitHub example requests are fit data):")
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
    print_curve(model, ev, cal, test)
    if args.write:
        model.save(SHIPPED_MODEL)
        print(f"\nwrote {SHIPPED_MODEL}")
    if not args.no_indexes:
        print_indexes(test)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
