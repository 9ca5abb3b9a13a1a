"""One ``BM25ToolIndex`` session: the tools added so far with their analysed fields (:class:`Session`), and
the search structures built from them (:class:`Snapshot`), replaced, never changed, when tools are added."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from toolsearch_lab.index.bm25.postings import FieldBuilder, FieldIndex, Postings
from toolsearch_lab.model import Tool

__all__ = ["Session", "Snapshot", "build_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """The session at its last build: what every search reads, without a lock."""

    tools: tuple[Tool, ...]
    fields: dict[str, FieldIndex]
    postings: Postings
    category_codes: np.ndarray  # int32 per doc, -1 = no category
    category_lookup: dict[str, int]
    vocab: dict[str, int]
    # keys x docs, the posting scores for each field's base boost: a batch of terms-only queries
    # (fields="full") is one sparse product; None for Spring's layout, which never uses it
    by_key: sp.csr_matrix | None = field(repr=False)

    def eligible(self, category_filter: str | None) -> np.ndarray | None:
        """The docs a search with ``category_filter`` may return (None: all of them), as
        :meth:`~toolsearch_lab.index.base.BaseToolIndex.category_allows` decides, from the category codes."""
        if not category_filter or not len(self.category_lookup):
            return None
        code = self.category_lookup.get(category_filter.casefold(), -2)
        return np.asarray((self.category_codes == -1) | (self.category_codes == code))


class Session:
    """What the index keeps of a session while tools are added: the tools, the vocabulary (term -> id),
    each field's postings builder, and the snapshot of the last build (None: stale, rebuilt on use)."""

    def __init__(self, field_names: Sequence[str]) -> None:
        self.lock = threading.RLock()
        self.tools: list[Tool] = []
        self.vocab: dict[str, int] = {}
        self.builders = {name: FieldBuilder() for name in field_names}
        self.snapshot: Snapshot | None = None

    def term_id(self, term: str) -> int:
        tid = self.vocab.get(term)
        if tid is None:
            tid = len(self.vocab)
            self.vocab[term] = tid
        return tid


def build_snapshot(
    session: Session, field_names: Sequence[str], base_boost: Mapping[str, float], by_key: bool
) -> Snapshot:
    """The session's search structures: each field's postings at its base terms boost, the category codes
    and, with ``by_key`` (one terms-only field), the keys x docs matrix a batch of queries multiplies."""
    n_terms = len(session.vocab)
    fields = {name: FieldIndex(session.builders[name], n_terms, base_boost[name]) for name in field_names}
    postings = Postings([fields[name] for name in field_names], len(session.tools), n_terms)
    lookup: dict[str, int] = {}
    codes = np.full(len(session.tools), -1, dtype=np.int32)
    for i, tool in enumerate(session.tools):
        if tool.category is not None:
            codes[i] = lookup.setdefault(tool.category.casefold(), len(lookup))
    matrix = None
    if by_key:
        shape = (len(postings.indptr) - 1, postings.n_docs)
        matrix = sp.csr_matrix((postings.base, postings.docs, postings.indptr), shape=shape)
    # The vocabulary is copied: later additions must not change what this snapshot's queries resolve to.
    return Snapshot(tuple(session.tools), fields, postings, codes, lookup, dict(session.vocab), matrix)
