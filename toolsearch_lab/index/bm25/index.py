"""``BM25ToolIndex``: Spring AI's ``LuceneToolIndex`` re-implemented on numpy/scipy, score for score.

Spring indexes each tool as a Lucene document with two analysed fields, ``toolName`` and
``toolDescription`` (StandardAnalyzer, see :mod:`toolsearch_lab.text.lucene`), and searches with one
BooleanQuery of four SHOULD clauses (spec §4)::

    descPhrase        the query tokens as an exact phrase (a TermQuery when there is one token)
    descTerms         the query tokens as SHOULD TermQueries
    namePhrase  x4    the same phrase on the name
    nameTerms   x2    the same terms on the name

scored with Lucene's BM25 (k1 = 1.2, b = 0.75), including its lossy one-byte document-length norm and its
32-bit float arithmetic. Lucene rewrites identical SHOULD clauses into one clause with the summed boost
(``BooleanQuery.rewrite``), so a one-token query scores as ``desc x2 + name x6``; we do the same.

Per session the index keeps a snapshot (:mod:`toolsearch_lab.index.bm25.postings`): every field's posting
lists in one CSC over (field, term) keys with each posting's exact BM25 denominator and score, dense score
rows for the most frequent keys, Lucene-encoded lengths and the positions for phrase matching. A search
turns the query into arrays in one go (one row per TermQuery leaf) and ranks with MaxScore pruning and an
exact rescoring of the survivors, a few dozen numpy calls whatever the query length; the top k equals
scoring every document (see :func:`toolsearch_lab.index.bm25.postings.top_k`). Tools added with
``index_tool`` mark the session dirty; the arrays are rebuilt once, on the next search, so batch indexing
stays O(n).

Deviations from Spring (all deliberate, see the README section): additions are visible immediately,
``search_time_ms`` is filled in, ``category_filter`` is honoured for tools that carry a category,
``max_results < 1`` raises ``ValueError`` up front, and two opt-in options (``split_identifiers``,
``include_parameters``) change scoring when switched on. With the defaults, scores are Lucene's.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from toolsearch_lab.index.bm25.postings import (
    LENGTH_TABLE,
    CompiledQuery,
    FieldBuilder,
    FieldIndex,
    Postings,
    bm25,
    byte4_to_int,
    compile_leaves,
    encode_lengths,
    idf,
    idf_array,
    int_to_byte4,
    norm_inverse_cache,
    top_k,
)
from toolsearch_lab.model import (
    BaseToolIndex,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)
from toolsearch_lab.text.lucene import analyze, analyze_split

log = logging.getLogger(__name__)

NAME_FIELD = "toolName"
DESCRIPTION_FIELD = "toolDescription"
PARAMETERS_FIELD = "toolParameters"  # only with include_parameters=True; not a Spring field

_F32 = np.float32


@functools.lru_cache(maxsize=1024)
def _analyze_query_cached(query: str, split: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(positional, extra) query tokens; queries repeat a lot in agent loops, analysis is pure."""
    if split:
        positional, extra = analyze_split(query)
        return tuple(positional), tuple(extra)
    return tuple(analyze(query)), ()


def _tool_reference(name: str, score: float, description: str) -> ToolReference:
    """``ToolReference(name, score, description)`` without the dataclass machinery (the hot path builds
    one per hit). Safe: the fields come from a validated ``Tool``, so ``__post_init__`` has nothing to
    reject; falls back to the constructor if ``ToolReference`` ever stops having a plain ``__dict__``."""
    ref = _new_object(ToolReference)
    fields = ref.__dict__
    fields["tool_name"] = name
    fields["relevance_score"] = score
    fields["summary"] = description
    return ref


_new_object = object.__new__
if hasattr(ToolReference, "__slots__"):  # pragma: no cover
    _tool_reference = ToolReference  # type: ignore[assignment]


# Spring's clauses per field: (field, short label, phrase boost, terms boost).
_SPRING_FIELDS = ((DESCRIPTION_FIELD, "desc", 1.0, 1.0), (NAME_FIELD, "name", 4.0, 2.0))


@dataclass(frozen=True)
class _Snapshot:
    tools: tuple[Tool, ...]
    fields: dict[str, FieldIndex]
    postings: Postings
    category_codes: np.ndarray  # int32 per doc, -1 = no category
    category_lookup: dict[str, int]


class _Session:
    def __init__(self, field_names: Sequence[str]) -> None:
        self.lock = threading.RLock()
        self.tools: list[Tool] = []
        self.vocab: dict[str, int] = {}
        self.builders = {name: FieldBuilder() for name in field_names}
        self.snapshot: _Snapshot | None = None

    def term_id(self, term: str) -> int:
        tid = self.vocab.get(term)
        if tid is None:
            tid = len(self.vocab)
            self.vocab[term] = tid
        return tid


# --- query plan and explanation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    """One leaf query: a TermQuery (one term) or a PhraseQuery (several)."""

    field: str
    terms: tuple[str, ...]
    boost: float

    @property
    def is_phrase(self) -> bool:
        return len(self.terms) > 1


@dataclass(frozen=True)
class _Group:
    """One top-level SHOULD clause of the rewritten BooleanQuery. Lucene sums a nested BooleanQuery's
    leaves in double and rounds to float before the outer sum, so groups are kept apart."""

    label: str
    items: tuple[_Item, ...]


@dataclass(frozen=True)
class TermContribution:
    """One leaf of the explanation: a term (or a phrase) in one field and what it added to the score."""

    clause: str
    field: str
    kind: str  # "term" or "phrase"
    term: str
    boost: float
    doc_freq: int
    doc_count: int
    idf: float
    tf: int
    dl: int  # the field's real token count
    dl_norm: int  # the length BM25 used: Lucene's one-byte norm, decoded
    avgdl: float
    contribution: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ClauseExplanation:
    clause: str
    score: float
    terms: tuple[TermContribution, ...]


@dataclass(frozen=True)
class Explanation:
    """Why ``tool_name`` got ``score`` for ``query``: every clause and leaf, with the BM25 inputs.

    Leaf contributions sum to their clause score and clause scores to ``score`` (in float32, in Lucene's
    summation order; the float64 sum of the rounded values can differ in the last float32 bit)."""

    tool_name: str
    query: str
    tokens: tuple[str, ...]
    score: float
    min_score: float
    clauses: tuple[ClauseExplanation, ...]

    @property
    def matched(self) -> bool:
        return self.score > 0

    @property
    def above_threshold(self) -> bool:
        return self.matched and _F32(self.score) >= _F32(self.min_score)

    def rows(self) -> list[dict]:
        """One dict per matching leaf, ready for a DataFrame or an HTML table."""
        return [t.to_dict() for c in self.clauses for t in c.terms]

    def to_text(self) -> str:
        lines = [
            f"{self.tool_name!r} for query {self.query!r} (tokens {list(self.tokens)}): "
            f"score {self.score:.5f} "
            + (
                "(kept)"
                if self.above_threshold
                else f"(below min_score {self.min_score})"
                if self.matched
                else "(no match)"
            )
        ]
        for c in self.clauses:
            lines.append(f"  {c.score:.5f}  {c.clause}")
            for t in c.terms:
                lines.append(
                    f"      {t.contribution:.5f}  {t.field}:{t.term!r} {t.kind} boost={t.boost:g} "
                    f"idf={t.idf:.5f} (n={t.doc_freq}, N={t.doc_count}) tf={t.tf} "
                    f"dl={t.dl} (as {t.dl_norm}) avgdl={t.avgdl:.4f}"
                )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


# --- the index ---------------------------------------------------------------------------------------------


def _parameter_text(schema: object) -> str:
    """Property names and descriptions of a JSON Schema, depth first, one per line."""
    parts: list[str] = []

    def walk(node: object) -> None:
        if not isinstance(node, dict):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                parts.append(str(name))
                if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                    parts.append(sub["description"])
                walk(sub)
        walk(node.get("items"))

    walk(schema)
    return "\n".join(parts)


class BM25ToolIndex(BaseToolIndex):
    """Spring AI's LuceneToolIndex: per-session BM25 over tool name and description, Lucene-exact scores.

    ``min_score`` is Spring's minScoreThreshold (raw BM25, applied after the top-N cut).
    ``split_identifiers`` (off by default) also indexes and queries the parts of camelCase, snake_case and
    dotted identifiers, so "weather" finds ``get_weather``. ``include_parameters`` (off by default) indexes
    parameter names and descriptions as a third field, queried by SHOULD terms with ``parameter_boost``.
    """

    DEFAULT_MAX_RESULTS = 10
    DEFAULT_MIN_SCORE = 0.25
    SEARCH_TYPE = "LuceneToolIndex"  # Spring's metadata value, kept for parity

    def __init__(
        self,
        min_score: float = DEFAULT_MIN_SCORE,
        *,
        split_identifiers: bool = False,
        include_parameters: bool = False,
        parameter_boost: float = 1.0,
    ) -> None:
        if (
            isinstance(min_score, bool)
            or not isinstance(min_score, (int, float))
            or not math.isfinite(min_score)
        ):
            raise ValueError(f"min_score must be a finite number >= 0, got {min_score!r}")
        if min_score < 0:
            raise ValueError(f"min_score must be >= 0, got {min_score}")
        if not isinstance(parameter_boost, (int, float)) or not parameter_boost > 0:
            raise ValueError(f"parameter_boost must be a number > 0, got {parameter_boost!r}")
        self.min_score = float(min_score)
        self.split_identifiers = bool(split_identifiers)
        self.include_parameters = bool(include_parameters)
        self.parameter_boost = float(parameter_boost)
        self._field_names = [NAME_FIELD, DESCRIPTION_FIELD] + (
            [PARAMETERS_FIELD] if include_parameters else []
        )
        self._field_pos = {name: i for i, name in enumerate(self._field_names)}
        # The terms boost of each field: the posting arrays keep each posting's score for it (for bounds).
        self._base_boost = {DESCRIPTION_FIELD: 1.0, NAME_FIELD: 2.0, PARAMETERS_FIELD: self.parameter_boost}
        self._sessions: dict[str, _Session] = {}
        self._sessions_lock = threading.Lock()

    # -- analysis ---------------------------------------------------------------------------------------------

    def _analyze(self, text: str) -> tuple[list[str], list[str]]:
        if self.split_identifiers:
            return analyze_split(text)
        return analyze(text), []

    def _field_texts(self, tool: Tool) -> dict[str, str]:
        texts = {NAME_FIELD: tool.name, DESCRIPTION_FIELD: tool.description}
        if self.include_parameters:
            texts[PARAMETERS_FIELD] = _parameter_text(tool.parameters)
        return texts

    # -- indexing ---------------------------------------------------------------------------------------------

    def _session(self, session_id: str, create: bool) -> _Session | None:
        with self._sessions_lock:
            session = self._sessions.get(session_id)
            if session is None and create:
                session = self._sessions[session_id] = _Session(self._field_names)
            return session

    def index_tool(self, session_id: str, tool: Tool) -> None:
        self.index_tools(session_id, [tool])

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        tools = self.checked_batch(session_id, tools)
        if not tools:
            return
        # Analyse outside the lock: it is the expensive part and touches no shared state.
        analysed = [{f: self._analyze(text) for f, text in self._field_texts(tool).items()} for tool in tools]
        session = self._session(session_id, create=True)
        assert session is not None
        with session.lock:
            for tool, fields in zip(tools, analysed, strict=False):
                doc = len(session.tools)
                session.tools.append(tool)
                for name, (positional, extra) in fields.items():
                    session.builders[name].add(
                        doc, [session.term_id(t) for t in positional], [session.term_id(t) for t in extra]
                    )
            session.snapshot = None  # dirty: rebuilt on the next search

    def clear_index(self, session_id: str) -> None:
        with self._sessions_lock:
            self._sessions.pop(session_id, None)

    def size(self, session_id: str) -> int:
        session = self._session(session_id, create=False) if isinstance(session_id, str) else None
        if session is None:
            return 0
        with session.lock:
            return len(session.tools)

    def total_size(self) -> int:
        with self._sessions_lock:
            sessions = list(self._sessions.values())
        return sum(len(s.tools) for s in sessions)

    def close(self) -> None:
        """Drop every session (Spring closes each session's writer and directory). The index stays usable."""
        with self._sessions_lock:
            self._sessions.clear()

    # -- snapshots --------------------------------------------------------------------------------------------

    def _snapshot(self, session: _Session, tokens: Sequence[str]) -> tuple[_Snapshot, dict[str, int]]:
        """The session's current search structures (rebuilt if tools were added) and the query's term ids."""
        with session.lock:
            snap = session.snapshot
            if snap is None:
                snap = session.snapshot = self._build_snapshot(session)
            vocab = session.vocab
            ids = {t: vocab.get(t, -1) for t in tokens}
        return snap, ids

    def _build_snapshot(self, session: _Session) -> _Snapshot:
        n_terms = len(session.vocab)
        fields = {
            name: FieldIndex(session.builders[name], n_terms, self._base_boost[name])
            for name in self._field_names
        }
        postings = Postings([fields[name] for name in self._field_names], len(session.tools), n_terms)
        lookup: dict[str, int] = {}
        codes = np.full(len(session.tools), -1, dtype=np.int32)
        for i, tool in enumerate(session.tools):
            if tool.category is not None:
                codes[i] = lookup.setdefault(tool.category.casefold(), len(lookup))
        return _Snapshot(tuple(session.tools), fields, postings, codes, lookup)

    # -- query ------------------------------------------------------------------------------------------------

    def _analyze_query(self, query: str | None) -> tuple[list[str], list[str]]:
        """(phrase tokens, term tokens). Without splitting both are the analysed query."""
        if not isinstance(query, str) or not query:
            return [], []
        positional, extra = _analyze_query_cached(query, self.split_identifiers)
        return list(positional), list(positional + extra)

    def _plan(self, phrase: list[str], terms: list[str]) -> list[_Group]:
        """Spring's buildQuery, after Lucene's BooleanQuery rewrite merged duplicate SHOULD clauses.

        :meth:`_compile` builds the same query as arrays for searching; this form is for explanations."""
        counts: dict[str, int] = {}
        for t in terms:
            counts[t] = counts.get(t, 0) + 1
        groups: list[_Group] = []
        for fname, short, phrase_boost, terms_boost in _SPRING_FIELDS:
            if len(phrase) == 1 and len(counts) == 1:
                # descPhrase and descTerms are the same TermQuery: Lucene merges them, boosts summed.
                t = phrase[0]
                groups.append(
                    _Group(
                        f"{short}Phrase + {short}Terms (identical TermQuery, merged; boost "
                        f"{phrase_boost:g}+{terms_boost:g})",
                        (_Item(fname, (t,), phrase_boost + terms_boost * counts[t]),),
                    )
                )
                continue
            if len(phrase) == 1:
                groups.append(
                    _Group(
                        f"{short}Phrase (TermQuery, boost {phrase_boost:g})",
                        (_Item(fname, (phrase[0],), phrase_boost),),
                    )
                )
            elif phrase:
                groups.append(
                    _Group(
                        f"{short}Phrase (PhraseQuery, boost {phrase_boost:g})",
                        (_Item(fname, tuple(phrase), phrase_boost),),
                    )
                )
            groups.append(
                _Group(
                    f"{short}Terms (SHOULD TermQueries, boost {terms_boost:g})",
                    tuple(_Item(fname, (t,), terms_boost * c) for t, c in counts.items()),
                )
            )
        if self.include_parameters:
            groups.append(
                _Group(
                    f"paramTerms (SHOULD TermQueries, boost {self.parameter_boost:g}; not in Spring)",
                    tuple(_Item(PARAMETERS_FIELD, (t,), self.parameter_boost * c) for t, c in counts.items()),
                )
            )
        return groups

    def _compile(
        self, snap: _Snapshot, phrase: list[str], terms: list[str], ids: dict[str, int]
    ) -> CompiledQuery:
        """:meth:`_plan` as arrays, built without the per-item objects: one row per TermQuery leaf (same
        clause order, same boosts), terms without postings in a field left out; phrase leaves are matched
        right away."""
        counts: dict[str, int] = {}
        for t in terms:
            counts[t] = counts.get(t, 0) + 1
        tids = [ids[t] for t in counts]
        cnts = list(counts.values())
        postings = snap.postings
        has = postings.has_postings
        n_terms = postings.n_terms
        keys: list[int] = []
        boost: list[float] = []
        mult: list[float] = []
        group: list[int] = []
        g = 0
        single = len(phrase) == 1 and len(counts) == 1
        pending = []  # (group, field, boost) of PhraseQuery clauses
        clauses = [(fname, pb, tb) for fname, _, pb, tb in _SPRING_FIELDS]
        if self.include_parameters:
            clauses.append((PARAMETERS_FIELD, None, self.parameter_boost))
        for fname, phrase_boost, terms_boost in clauses:
            offset = self._field_pos[fname] * n_terms
            if phrase_boost is not None and single:  # xPhrase == xTerms: one TermQuery, boosts summed
                if tids[0] >= 0 and has[offset + tids[0]]:
                    b = phrase_boost + terms_boost * cnts[0]
                    keys.append(offset + tids[0])
                    boost.append(b)
                    mult.append(b / terms_boost)
                    group.append(g)
                g += 1
                continue
            if phrase_boost is not None and len(phrase) == 1:  # (unreachable: one token, one term)
                tid = ids[phrase[0]]
                if tid >= 0 and has[offset + tid]:
                    keys.append(offset + tid)
                    boost.append(phrase_boost)
                    mult.append(phrase_boost / terms_boost)
                    group.append(g)
                g += 1
            elif phrase_boost is not None and phrase:
                pending.append((g, fname, phrase_boost))
                g += 1
            leaves = [(offset + t, c) for t, c in zip(tids, cnts, strict=False) if t >= 0 and has[offset + t]]
            if leaves:
                keys += [key for key, _ in leaves]
                bs = [terms_boost * c for _, c in leaves]
                boost += bs
                mult += [b / terms_boost for b in bs]
                group += [g] * len(leaves)
            g += 1
        query = compile_leaves(postings, keys, boost, mult, group, g)
        if pending:
            # A phrase can only match where the field has every one of its terms: check that on the
            # posting lists before touching positions.
            phrase_ids = [ids[t] for t in phrase]
            if min(phrase_ids) >= 0:
                for grp, fname, phrase_boost in pending:
                    offset = self._field_pos[fname] * n_terms
                    if all(has[offset + t] for t in phrase_ids):
                        hits = snap.fields[fname].phrase_scores(phrase_ids, phrase_boost)
                        if hits is not None:
                            query.phrases.append((grp, hits[0], hits[1]))
        return query

    def search(self, request: SearchRequest) -> SearchResponse:
        started = time.perf_counter()
        max_results = self.resolve_max_results(request, self.DEFAULT_MAX_RESULTS)
        session_id = request.session_id
        if not isinstance(session_id, str) or not session_id.strip():
            log.warning("search without a session id: returning the empty response")
            return empty_response()
        session = self._session(session_id, create=False)
        if session is None:
            return empty_response()
        phrase, terms = self._analyze_query(request.query)
        if not terms:
            return empty_response()  # Spring: buildQuery returns null
        snap, ids = self._snapshot(session, terms)
        eligible = None
        if request.category_filter and len(snap.category_lookup):
            code = snap.category_lookup.get(request.category_filter.casefold(), -2)
            eligible = (snap.category_codes == -1) | (snap.category_codes == code)
        query = self._compile(snap, phrase, terms, ids)
        docs, scores = top_k(snap.postings, query, eligible, max_results)
        # Java compares float with float and keeps equality: the float32 scores, as Python floats, are
        # compared with the float32 threshold, as a Python float (the same comparison, no numpy call).
        threshold = float(_F32(self.min_score))
        tools = snap.tools
        refs = [
            _tool_reference(tools[doc].name, score, tools[doc].description)
            for doc, score in zip(docs.tolist(), scores.tolist(), strict=False)
            if score >= threshold
        ]
        if log.isEnabledFor(logging.DEBUG):
            for ref in refs:
                log.debug("hit %s score %.5f", ref.tool_name, ref.relevance_score)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        return SearchResponse(refs, len(refs), SearchMetadata(self.SEARCH_TYPE, request.query, elapsed_ms))

    def _group_hits(
        self, snap: _Snapshot, group: _Group, ids: dict[str, int]
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(item index, docs, float32 scores) of each leaf of one clause that matches something, scored
        one by one (the slow, obvious way; for explanations)."""
        out = []
        for i, item in enumerate(group.items):
            fs = snap.fields[item.field]
            term_ids = [ids.get(t, -1) for t in item.terms]
            if item.is_phrase:
                hits = fs.phrase_scores(term_ids, item.boost)
                if hits is not None:
                    out.append((i, hits[0], hits[1]))
            elif fs.doc_count and fs.doc_freq(term_ids[0]):
                docs, den = fs.postings(term_ids[0])
                weight = _F32(_F32(item.boost) * idf(len(docs), fs.doc_count))
                out.append((i, docs, bm25(weight, den)))
        return out

    # -- explanation ------------------------------------------------------------------------------------------

    def explain(self, session_id: str, query: str, tool_name: str) -> Explanation:
        """Break the score of ``tool_name`` for ``query`` into clauses and terms.

        If the session holds several tools with that name, the best-scoring one (then the first) is
        explained. Raises ``KeyError`` when the session or the tool is unknown."""
        session = self._session(session_id, create=False) if isinstance(session_id, str) else None
        if session is None:
            raise KeyError(f"unknown session {session_id!r}")
        phrase, terms = self._analyze_query(query)
        snap, ids = self._snapshot(session, terms)
        candidates = [i for i, t in enumerate(snap.tools) if t.name == tool_name]
        if not candidates:
            raise KeyError(f"tool {tool_name!r} is not indexed in session {session_id!r}")
        groups = self._plan(phrase, terms) if terms else []
        explanations = [self._explain_doc(snap, groups, ids, doc) for doc in candidates]
        clauses, score = max(explanations, key=lambda e: e[1])  # max keeps the first of equals
        return Explanation(tool_name, query, tuple(terms), score, self.min_score, tuple(clauses))

    def _explain_doc(
        self, snap: _Snapshot, groups: list[_Group], ids: dict[str, int], doc: int
    ) -> tuple[list[ClauseExplanation], float]:
        clauses: list[ClauseExplanation] = []
        total = 0.0
        for g in groups:
            leaves: list[TermContribution] = []
            group_sum = 0.0
            for item_index, docs, scores in self._group_hits(snap, g, ids):  # in Lucene's summation order
                i = int(np.searchsorted(docs, doc))
                if i >= len(docs) or docs[i] != doc:
                    continue
                item = g.items[item_index]
                fs = snap.fields[item.field]
                term_ids = [ids.get(t, -1) for t in item.terms]
                doc_freqs = fs.doc_freqs(np.array(term_ids))
                contribution = _F32(scores[i])
                group_sum += float(contribution)
                leaves.append(
                    TermContribution(
                        clause=g.label,
                        field=item.field,
                        kind="phrase" if item.is_phrase else "term",
                        term=" ".join(item.terms),
                        boost=item.boost,
                        doc_freq=len(docs) if item.is_phrase else int(doc_freqs[0]),
                        doc_count=fs.doc_count,
                        idf=float(_F32(idf_array(doc_freqs, fs.doc_count).astype(np.float64).sum())),
                        tf=fs.phrase_freq(term_ids, doc)
                        if item.is_phrase
                        else fs.term_freq(term_ids[0], doc),
                        dl=int(fs.lengths[doc]),
                        dl_norm=int(LENGTH_TABLE[fs.norms[doc]]),
                        avgdl=float(fs.avgdl),
                        contribution=float(contribution),
                    )
                )
            if leaves:
                clause_score = float(_F32(group_sum))
                total += clause_score
                clauses.append(ClauseExplanation(g.label, clause_score, tuple(leaves)))
        return clauses, float(_F32(total))


LuceneToolIndex = BM25ToolIndex


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


__all__ = [
    "LENGTH_TABLE",
    "BM25ToolIndex",
    "ClauseExplanation",
    "Explanation",
    "LuceneToolIndex",
    "TermContribution",
    "byte4_to_int",
    "encode_lengths",
    "int_to_byte4",
    "naive_scores",
    "norm_inverse_cache",
]
