"""A plain-loop reference for ``BM25ToolIndex``'s default scores: Spring's query scored the slow, obvious
way (loops and float64, no rewrite, no caches), to cross-check the vectorised index in tests and in
``benchmarks/search_speed.py``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from toolsearch_lab.index.bm25.postings import byte4_to_int, int_to_byte4
from toolsearch_lab.text.lucene import analyze


def naive_scores(tools: Sequence[tuple[str, str]], query: str) -> list[float]:
    """Spring's query scored the slow, obvious way: loops and float64, no rewrite, no caches.

    ``tools`` are ``(name, description)`` pairs; returns one score per tool (0.0 = no match). Only the
    default configuration. Used by the tests and the benchmark to cross-check the vectorised index, and
    handy in notebooks to read the formula."""
    q = analyze(query) if query else []
    fields = [[analyze(d) for _, d in tools], [analyze(n) for n, _ in tools]]  # description, name
    boosts = [(1.0, 1.0), (4.0, 2.0)]  # (phrase, terms) per field
    scores = [0.0] * len(tools)
    if not q:
        return scores
    for docs, (phrase_boost, terms_boost) in zip(fields, boosts, strict=False):
        n_docs = sum(1 for d in docs if d)
        if not n_docs:
            continue
        avgdl = sum(len(d) for d in docs) / n_docs

        def idf_of(term: str, docs: list[list[str]] = docs, n_docs: int = n_docs) -> float:
            n = sum(1 for d in docs if term in d)
            return math.log(1 + (n_docs - n + 0.5) / (n + 0.5))

        def bm25_of(weight: float, tf: int, doc: list[str], avgdl: float = avgdl) -> float:
            dl = byte4_to_int(int_to_byte4(len(doc)))  # what Lucene remembers of the length
            return weight * tf / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl)) if tf else 0.0

        for i, doc in enumerate(docs):
            for term in q:  # descTerms / nameTerms: one SHOULD TermQuery per token
                scores[i] += bm25_of(terms_boost * idf_of(term), doc.count(term), doc)
            k = len(q)  # descPhrase / namePhrase: exact phrase occurrences (a TermQuery when k == 1)
            tf = sum(1 for p in range(len(doc) - k + 1) if doc[p : p + k] == q)
            if tf:
                scores[i] += bm25_of(phrase_boost * sum(idf_of(t) for t in q), tf, doc)
    return scores
