"""HybridToolIndex: one ranking from keyword scores (stemmed BM25 + character n-grams) and embedding
similarity.

Why not plain reciprocal-rank fusion? RRF throws the scores away: a tool the embeddings rank 1st by a wide
margin and BM25 ranks 40th ends up below tools both rank mediocrely. On paraphrased requests, where BM25 is
often wrong, that makes the fusion *worse* than embeddings alone: on MetaTool, naive RRF of Spring's BM25
and MiniLM(description) gets recall@5 .721, MiniLM alone .757. This index fuses scores instead. Each choice
below was measured on the two development datasets only (``benchmarks/retrieval_quality.py`` prints the
ablation; recall@5 LiveMCPBench / MetaTool, starting from naive RRF .335 / .721):

1. **Min-max normalisation per query, then a convex combination** (``normalisation="minmax"``,
   ``vector_weight``, 0.75 until step 9): both score lists are mapped to [0, 1] over every tool of the session and
   ``fused = w * vector + (1 - w) * keyword``. Keeps the margins RRF discards: .337 / .762. Candidate depth
   is the whole session (cheap at catalog sizes; no "tool missing from one list" special case). With the
   final default, z-score normalisation is within noise of min-max (.425 / .809), RRF clearly worse
   (.407 / .781); w = 0.6-0.8 is a plateau (w = 0.5: .420 / .777; w = 1.0, embeddings only: .401 / .778).
2. **BM25 splits identifiers and indexes parameter names/descriptions**, and runs with ``min_score=0``
   (Lucene's raw-score threshold 0.25 would drop weak-but-useful evidence before fusion weighs it): names
   like ``get_stock_price`` then match "stock price". .350 / .775.
3. **Stop words removed from the keyword query** (``strip_stopwords``): Spring's Lucene analyzer keeps them,
   so "the", "of", "with" in long requests add noise matches. .364 / .781.
4. **Three embedding views per tool** (``views``): the description (Spring's text), the "full" text (split
   name + description + parameters) and the split name alone; the vector score is their mean cosine.
   Names carry meaning short, vague or non-English descriptions lack, and averaging keeps any single view
   from dominating. .403 / .790.
5. **Multi-sentence requests also embedded per sentence** (``query_clauses``): the vector score of each view
   is the mean of the whole-query cosine and the best sentence's cosine, because a tool serving one step of
   a multi-step task matches that step's sentence better than the blurred whole. Single-sentence queries
   are unaffected. .420 / .791 (the default until the built-in keyword side below).
6. **A built-in word BM25 over the "full" tool text** (:class:`KeywordScorer`; stop words removed from
   tools and queries alike, identifiers split): the same evidence as 2-3 in one sparse matrix product per
   batch instead of a Lucene query per request (MetaTool's 21k queries: ~5 s instead of ~35 s). .431 / .791.
7. **Porter stemming on the word side** (``stemmer="porter"``, :mod:`toolsearch_lab.text.normalise`):
   requests and descriptions are written by different people ("searching for papers" vs "Search paper"),
   and exact-token matching misses every inflection. Keyword-only recall@5 on MetaTool rises .556 -> .632;
   fused .421 / .806 (LiveMCPBench's -0.01 is 1-2 of its 94 queries; the S stemmer, plurals only, is
   .419 / .807 in the default).
8. **Character 3-5-gram TF-IDF as half of the keyword side** (``char_share`` = 0.5): sub-word overlap
   catches what stemmed words still miss - derivations (``translator``/``translation``), typos ("Povides
   strology services"), glued compounds. Each half is min-max normalised, then averaged. .419 / .808.
9. **w = 0.7**: with two keyword signals agreeing, the keyword side earns a little more weight; w = 0.6-0.8
   stays a plateau on both datasets (ablation). .427 / .808 (**the default**).

Tried and not kept (recall@5 LiveMCPBench / MetaTool, measured on top of 7 unless said): query-adaptive
weights from the keyword side's top-score separation (gap top1-top2 or top1-top5, keyword weight 0.1-0.4:
.412-.421 / .802-.808) or from each side's peak z-score (.417-.424 / .774-.804); views combined by max
(.417 / .782, on 5) or softmax-weighted mean (.400-.405 / .794-.797); a name+description view (.415 / .787,
on 5); per-view weights (within +-0.015 / +-0.004 of equal weights); CSLS hubness correction against each
tool's nearest tools (.372-.405 / .699-.789); Rocchio feedback from the fused top 1-5 (.418-.441 /
.783-.809); expanding query words with their MiniLM-nearest catalog words (.402-.431 / .806-.812, and a
per-query embedding call for every word); a robust lower bound (median, mean or a percentile instead of the
minimum) for the vector min-max (.400-.433 / .796-.807); sqrt/log1p-compressed BM25 (.405-.416 /
.797-.806); raw-score sums without normalisation (.410-.434 / .796-.807); BM25 k1 0.6-2.0 and b 0.4-0.9
(.398-.421 / .805-.809); keyword scores per sentence (no change); word bigrams (no gain). The oracle union
of the vector and keyword top 5s finds a relevant tool for .834 of MetaTool queries (fused hit@5: .812),
so most remaining misses are ones neither signal ranks highly: label noise and overlapping tools (e.g.
several shopping or travel plug-ins) more than fusion.

Per-result component scores (raw and normalised, per view, and each component's rank) come from
:meth:`HybridToolIndex.explain_search`, for the notebooks' "why did this tool rank here" view.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolsearch_lab.index.vector import TEXT_MODES, VectorToolIndex, tool_text
from toolsearch_lab.model import (
    BaseToolIndex,
    SearchMetadata,
    SearchRequest,
    SearchResponse,
    Tool,
    ToolReference,
    empty_response,
)
from toolsearch_lab.text.normalise import STEMMERS, keyword_tokens, stem_tokens

DEFAULT_VIEWS = ("description", "full", "name")
DEFAULT_VECTOR_WEIGHT = 0.7
DEFAULT_CHAR_SHARE = 0.5
DEFAULT_STEMMER = "porter"
NORMALISATIONS = ("minmax", "zscore", "rrf")
_WORD = re.compile(r"\S+")
_PUNCT = ".,!?;:\"'()[]{}<>`*"


def _stop_words() -> frozenset[str]:
    # scikit-learn's English list (318 words; a dependency already); loaded lazily to keep imports cheap.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def strip_stop_words(query: str) -> str:
    """The query without English stop words, for the keyword side. A query made only of stop words is kept
    as is, so it can still match something."""
    stop = _stop_words()
    kept = [w for w in _WORD.findall(query) if w.lower().strip(_PUNCT) not in stop]
    return " ".join(kept) if kept else query


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def split_clauses(query: str, min_words: int = 3) -> list[str]:
    """The sentences of a multi-sentence request (each of at least ``min_words`` words), or [] when the
    query is a single sentence (then the whole query is all there is)."""
    parts = [p.strip() for p in _SENTENCE_END.split(query.strip())]
    parts = [p for p in parts if len(p.split()) >= min_words]
    return parts if len(parts) >= 2 else []


def normalise(scores: np.ndarray, method: str = "minmax") -> np.ndarray:
    """Row-wise score normalisation of a ``[n_queries, n_tools]`` matrix.

    ``minmax``: (s - min) / (max - min), a row with no spread becomes 1 where s > 0 else 0.
    ``zscore``: (s - mean) / std. ``rrf``: 1 / (60 + rank), rank 1-based (scores only order the tools).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    if method == "minmax":
        lo = scores.min(axis=1, keepdims=True)
        hi = scores.max(axis=1, keepdims=True)
        spread = hi - lo
        flat = spread <= 1e-12
        out = (scores - lo) / np.where(flat, 1.0, spread)
        return np.where(flat, (scores > 0).astype(np.float64), out)
    if method == "zscore":
        std = scores.std(axis=1, keepdims=True)
        return (scores - scores.mean(axis=1, keepdims=True)) / np.where(std <= 1e-12, 1.0, std)
    if method == "rrf":
        ranks = np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1) + 1
        return 1.0 / (60.0 + ranks)
    raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {method!r}")


_CHAR_FEATURES = 1 << 20  # hashed character n-gram space; collisions are negligible at catalog sizes


def _char_hasher() -> Any:
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        analyzer="char_wb", ngram_range=(3, 5), n_features=_CHAR_FEATURES, alternate_sign=False, norm=None
    )


@dataclass(frozen=True)
class _KeywordMatrices:
    """An immutable snapshot of a :class:`KeywordScorer` for ``n_docs`` tools (what one search reads)."""

    n_docs: int
    vocab: dict[str, int]
    bm25: Any  # csr [terms x tools]
    char_idf: np.ndarray | None  # [features]
    chars: Any  # csr [features x tools], unit columns, or None


class KeywordScorer:
    """The hybrid's built-in keyword side over one catalog: BM25 on stemmed words and TF-IDF cosine on
    character n-grams, both over each tool's "full" text (split name, description, parameters).

    * **Words**: :func:`~toolsearch_lab.text.normalise.keyword_tokens` (identifiers split, lower-cased,
      English stop words removed from tools and queries alike), then ``stemmer`` ("porter", "s" or "none");
      scored with BM25 (Lucene's idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``, ``k1``, ``b``), each distinct
      query term counted once.
    * **Characters**: n-grams of 3-5 characters within word boundaries (scikit-learn's ``char_wb``
      analyzer, hashed), sublinear tf x smooth idf, cosine. Sub-word overlap survives what word matching
      cannot: derivations a stemmer leaves apart (``translator``/``translation``), typos ("Povides
      strology services"), compounds (``web scraper``/``webscraping``).

    Tools are analysed once, when added (:meth:`add`); the corpus statistics (idf, lengths) are recomputed
    with sparse array operations on the first search after a change, in milliseconds. Scoring is a sparse
    matrix product, so thousands of queries at once are cheap.
    """

    def __init__(
        self,
        *,
        stemmer: str = DEFAULT_STEMMER,
        stop_words: bool = True,
        char_ngrams: bool = True,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        if stemmer not in STEMMERS:
            raise ValueError(f"stemmer must be one of {list(STEMMERS)}, got {stemmer!r}")
        self.stemmer = stemmer
        self.stop = _stop_words() if stop_words else None
        self.k1, self.b = float(k1), float(b)
        self._hasher = _char_hasher() if char_ngrams else None
        self._word_counts: list[dict[str, int]] = []
        self._char_batches: list[Any] = []  # csr [batch tools x features], raw counts
        self._snapshot: _KeywordMatrices | None = None

    def __len__(self) -> int:
        return len(self._word_counts)

    def _terms(self, text: str) -> list[str]:
        return stem_tokens(keyword_tokens(text, self.stop), self.stemmer)

    def add(self, tools: Sequence[Tool]) -> None:
        """Analyse ``tools`` (appended in order; row j of the scores is the j-th tool added)."""
        texts = [tool_text(t, "full") for t in tools]
        for text in texts:
            counts: dict[str, int] = {}
            for term in self._terms(text):
                counts[term] = counts.get(term, 0) + 1
            self._word_counts.append(counts)
        if self._hasher is not None and texts:
            self._char_batches.append(self._hasher.transform(texts).tocsr())
        self._snapshot = None

    def snapshot(self) -> _KeywordMatrices:
        """The scoring matrices for the tools added so far (cached until the next :meth:`add`)."""
        if self._snapshot is None:
            self._snapshot = self._build()
        return self._snapshot

    def _build(self) -> _KeywordMatrices:
        import scipy.sparse as sp

        n_docs = len(self._word_counts)
        vocab: dict[str, int] = {}
        rows, cols, counts = [], [], []
        for i, doc in enumerate(self._word_counts):
            for term, count in doc.items():
                rows.append(i)
                cols.append(vocab.setdefault(term, len(vocab)))
                counts.append(count)
        n_terms = max(len(vocab), 1)
        rows_a = np.asarray(rows, dtype=np.int64)
        cols_a = np.asarray(cols, dtype=np.int64)
        tf = np.asarray(counts, dtype=np.float64)
        dl = np.bincount(rows_a, weights=tf, minlength=n_docs)
        avgdl = float(dl.mean()) if n_docs and dl.mean() > 0 else 1.0
        df = np.bincount(cols_a, minlength=n_terms).astype(np.float64)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        k1, b = self.k1, self.b
        weight = tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl[rows_a] / avgdl)) * idf[cols_a]
        bm25 = sp.csr_matrix((weight, (cols_a, rows_a)), shape=(n_terms, n_docs))
        char_idf, chars = None, None
        if self._hasher is not None and n_docs:
            raw = sp.vstack(self._char_batches).tocsr()
            char_df = np.bincount(raw.indices, minlength=_CHAR_FEATURES).astype(np.float64)
            char_idf = np.log((1.0 + n_docs) / (1.0 + char_df)) + 1.0  # scikit-learn's smooth idf
            chars = self._char_weights(raw, char_idf).T.tocsr()
        return _KeywordMatrices(n_docs, vocab, bm25, char_idf, chars)

    @staticmethod
    def _char_weights(raw: Any, idf: np.ndarray) -> Any:
        """Sublinear tf x idf, rows scaled to unit length."""
        from sklearn.preprocessing import normalize as l2_rows

        x = raw.astype(np.float64, copy=True)
        x.data = (1.0 + np.log(x.data)) * idf[x.indices]
        return l2_rows(x)

    def word_scores(self, queries: Sequence[str], snap: _KeywordMatrices | None = None) -> np.ndarray:
        """BM25 of each query against each tool, ``[n_queries, n_tools]``."""
        import scipy.sparse as sp

        snap = snap or self.snapshot()
        rows, cols = [], []
        for i, query in enumerate(queries):
            terms = {snap.vocab[t] for t in self._terms(query) if t in snap.vocab}
            if not terms and self.stop is not None:  # a query made only of stop words: use them
                all_terms = stem_tokens(keyword_tokens(query), self.stemmer)
                terms = {snap.vocab[t] for t in all_terms if t in snap.vocab}
            rows.extend([i] * len(terms))
            cols.extend(terms)
        q = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), snap.bm25.shape[0]))
        return (q @ snap.bm25).toarray().astype(np.float64)

    def char_scores(self, queries: Sequence[str], snap: _KeywordMatrices | None = None) -> np.ndarray:
        """Character n-gram TF-IDF cosine of each query with each tool, ``[n_queries, n_tools]``."""
        snap = snap or self.snapshot()
        if snap.chars is None or self._hasher is None:
            return np.zeros((len(queries), snap.n_docs))
        q = self._char_weights(self._hasher.transform(list(queries)).tocsr(), snap.char_idf)
        return (q @ snap.chars).toarray().astype(np.float64)


@dataclass(frozen=True)
class HybridHit:
    """One fused result with the evidence behind it (ranks are 1-based within the session)."""

    tool_name: str
    score: float  # fused
    vector_score: float  # mean cosine over the views
    keyword_score: float  # raw word score, BM25 (0 = no word match)
    vector_normalised: float
    keyword_normalised: float  # the keyword side: normalised word and character scores, blended
    vector_rank: int
    keyword_rank: int | None  # rank on the keyword side; None when neither words nor n-grams matched
    view_scores: dict[str, float] = field(default_factory=dict)
    char_score: float = 0.0  # raw character n-gram TF-IDF cosine (0 when char_share is 0)

    def to_dict(self) -> dict:
        return {
            "toolName": self.tool_name,
            "score": round(self.score, 6),
            "vectorScore": round(self.vector_score, 6),
            "keywordScore": round(self.keyword_score, 6),
            "vectorNormalised": round(self.vector_normalised, 6),
            "keywordNormalised": round(self.keyword_normalised, 6),
            "vectorRank": self.vector_rank,
            "keywordRank": self.keyword_rank,
            "charScore": round(self.char_score, 6),
            "viewScores": {k: round(v, 6) for k, v in self.view_scores.items()},
        }


class HybridToolIndex(BaseToolIndex):
    """Keyword + embedding search fused into one ranking (see the module docstring for the design).

    The keyword side is, by default, the built-in :class:`KeywordScorer` (BM25 over ``stemmer``-stemmed
    words, blended with character n-gram TF-IDF by ``char_share``), built per session on first search.
    ``keyword_index``: any ToolIndex whose ``search`` returns raw scores, used for the word scores instead
    (e.g. ``BM25ToolIndex(min_score=0, split_identifiers=True, include_parameters=True)``, the previous
    default; ``stemmer`` then does not apply). ``vector_index``: a
    :class:`VectorToolIndex` to use as the only view, or None to build one per entry of ``views`` over
    ``embedder`` (default: the cached MiniLM). Results: the top ``max_results`` (default 10), optionally only
    those with fused score >= ``min_score`` (default None: no cut, because fused scores are relative to the
    query - the best tool scores near 1 whether or not it is any good).
    """

    DEFAULT_MAX_RESULTS = 10
    search_type = "HybridToolIndex"

    def __init__(
        self,
        keyword_index: Any = None,
        vector_index: VectorToolIndex | None = None,
        *,
        embedder: Any = None,
        views: Sequence[str] = DEFAULT_VIEWS,
        vector_weight: float = DEFAULT_VECTOR_WEIGHT,
        char_share: float = DEFAULT_CHAR_SHARE,
        stemmer: str = DEFAULT_STEMMER,
        normalisation: str = "minmax",
        strip_stopwords: bool = True,
        query_clauses: bool = True,
        min_score: float | None = None,
        default_max_results: int = DEFAULT_MAX_RESULTS,
    ) -> None:
        if not 0.0 <= vector_weight <= 1.0:
            raise ValueError(f"vector_weight must be within [0, 1], got {vector_weight}")
        if not 0.0 <= char_share <= 1.0:
            raise ValueError(f"char_share must be within [0, 1], got {char_share}")
        if stemmer not in STEMMERS:
            raise ValueError(f"stemmer must be one of {list(STEMMERS)}, got {stemmer!r}")
        if normalisation not in NORMALISATIONS:
            raise ValueError(f"normalisation must be one of {NORMALISATIONS}, got {normalisation!r}")
        if vector_index is not None:
            self.views: dict[str, VectorToolIndex] = {vector_index.text: vector_index}
        else:
            bad = [v for v in views if v not in TEXT_MODES]
            if not views or bad:
                raise ValueError(f"views must be a non-empty subset of {TEXT_MODES}, got {list(views)!r}")
            if embedder is None:
                from toolsearch_lab.embed.base import default_embedder

                embedder = default_embedder()
            # Threshold -1: the hybrid reads raw similarities; cutting happens after fusion.
            self.views = {
                v: VectorToolIndex(embedder, text=v, similarity_threshold=-1.0) for v in dict.fromkeys(views)
            }
        self.keyword_index = keyword_index  # None: the built-in KeywordScorer
        self.vector_weight = float(vector_weight)
        self.char_share = float(char_share)
        self.stemmer = stemmer
        self.normalisation = normalisation
        self.strip_stopwords = strip_stopwords
        self.query_clauses = query_clauses
        self.min_score = None if min_score is None else float(min_score)
        self.default_max_results = default_max_results
        self._tools: dict[str, list[Tool]] = {}
        self._scorers: dict[str, KeywordScorer] = {}  # the built-in keyword side, per session
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return (
            f"HybridToolIndex(views={list(self.views)}, vector_weight={self.vector_weight}, "
            f"char_share={self.char_share}, stemmer={self.stemmer!r}, "
            f"normalisation={self.normalisation!r}, strip_stopwords={self.strip_stopwords}, "
            f"keyword_index={type(self.keyword_index).__name__ if self.keyword_index else 'KeywordScorer'})"
        )

    # ------------------------------------------------------------------ indexing
    def index_tool(self, session_id: str, tool: Tool) -> None:
        self.index_tools(session_id, [tool])

    def index_tools(self, session_id: str, tools: Iterable[Tool]) -> None:
        tools = self.checked_batch(session_id, tools)
        if not tools:
            return
        with self._lock:
            # One lock around all components keeps their document orders identical, which the fusion
            # relies on (row j is the same tool in every component).
            for view in self.views.values():
                view.index_tools(session_id, tools)
            if self.keyword_index is not None:
                self.keyword_index.index_tools(session_id, tools)
            if self._uses_scorer:
                if session_id not in self._scorers:
                    self._scorers[session_id] = KeywordScorer(
                        stemmer=self.stemmer,
                        stop_words=self.strip_stopwords,
                        char_ngrams=self.char_share > 0,
                    )
                self._scorers[session_id].add(tools)
            self._tools.setdefault(session_id, []).extend(tools)

    def clear_index(self, session_id: str) -> None:
        with self._lock:
            for view in self.views.values():
                view.clear_index(session_id)
            if self.keyword_index is not None:
                self.keyword_index.clear_index(session_id)
            self._tools.pop(session_id, None)
            self._scorers.pop(session_id, None)

    @property
    def _uses_scorer(self) -> bool:
        return self.keyword_index is None or self.char_share > 0

    def tools(self, session_id: str) -> list[Tool]:
        with self._lock:
            return list(self._tools.get(session_id, []))

    # ------------------------------------------------------------------ scoring
    def _vector_scores(
        self, queries: Sequence[str], matrices: dict[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        # Multi-sentence requests ("find X, then do Y. Finally Z.") are also embedded sentence by sentence:
        # a tool that serves one step matches its sentence far better than the blurred whole.
        clauses = [split_clauses(q) if self.query_clauses else [] for q in queries]
        extra = [c for cs in clauses for c in cs]
        owner = np.repeat(np.arange(len(queries)), [len(cs) for cs in clauses])
        out: dict[str, np.ndarray] = {}
        cache: dict[int, np.ndarray] = {}
        for name, view in self.views.items():
            # Views usually share one embedder: embed the queries once, not once per view.
            key = id(view.embedder)
            if key not in cache:
                cache[key] = np.asarray(view.embedder.embed(list(queries) + extra), dtype=np.float32)
            sims = cache[key] @ matrices[name].T
            whole = sims[: len(queries)]
            if extra:
                whole = whole.copy()
                part = sims[len(queries) :]
                for i in np.unique(owner):
                    whole[i] = 0.5 * whole[i] + 0.5 * part[owner == i].max(axis=0)
            out[name] = whole
        return out

    def _keyword_scores(
        self,
        session_id: str,
        queries: Sequence[str],
        tools: list[Tool],
        scorer: KeywordScorer | None,
        snap: _KeywordMatrices | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(word scores, character n-gram scores), each ``[n_queries, n_tools]``."""
        if scorer is not None and self.char_share > 0:
            chars = scorer.char_scores(queries, snap)
        else:
            chars = np.zeros((len(queries), len(tools)))
        if self.keyword_index is None and scorer is not None:
            return scorer.word_scores(queries, snap), chars
        return self._index_scores(session_id, queries, tools), chars

    def _index_scores(self, session_id: str, queries: Sequence[str], tools: list[Tool]) -> np.ndarray:
        positions: dict[str, list[int]] = {}
        for j, t in enumerate(tools):
            positions.setdefault(t.name, []).append(j)
        scores = np.zeros((len(queries), len(tools)), dtype=np.float64)
        for i, query in enumerate(queries):
            text = strip_stop_words(query) if self.strip_stopwords else query
            response = self.keyword_index.search(SearchRequest(session_id, text, len(tools)))
            for ref in response.tool_references:
                for j in positions.get(ref.tool_name, ()):
                    scores[i, j] = max(scores[i, j], float(ref.relevance_score or 0.0))
        return scores

    def score_matrix(self, session_id: str, queries: Sequence[str]) -> dict[str, Any]:
        """Every component score of every query x tool: ``tools``, ``views`` (name -> cosine matrix),
        ``vector`` (mean cosine), ``keyword`` (raw word BM25), ``char`` (raw character n-gram cosine),
        ``vector_normalised``, ``keyword_normalised`` (the keyword side: normalised words and characters
        blended by ``char_share``) and ``fused``."""
        queries = [q or "" for q in queries]
        # One consistent snapshot: index_tools updates every component under the same lock, so the tool
        # list and the view matrices read here describe the same documents, row for row. A concurrent
        # clear_index after this point only makes the keyword side find less; it never raises.
        with self._lock:
            tools = list(self._tools.get(session_id, [])) if isinstance(session_id, str) else []
            scorer = self._scorers.get(session_id) if tools else None
            # The scorer's statistics for exactly these tools (rebuilt here after an index_tools, in ms).
            snap = scorer.snapshot() if scorer is not None else None
            matrices = {name: view.tool_matrix(session_id)[1] for name, view in self.views.items()}
        bad_snap = self._uses_scorer and (snap is None or snap.n_docs != len(tools))
        if not tools or bad_snap or any(m.shape[0] != len(tools) for m in matrices.values()):
            empty = np.zeros((len(queries), 0))
            return {
                "tools": [],
                "views": {name: empty for name in self.views},
                **dict.fromkeys(
                    ("vector", "keyword", "char", "vector_normalised", "keyword_normalised", "fused"),
                    empty,
                ),
            }
        views = self._vector_scores(queries, matrices)
        vector = np.mean(np.stack(list(views.values())), axis=0).astype(np.float64)
        keyword, chars = self._keyword_scores(session_id, queries, tools, scorer, snap)
        vector_n = normalise(vector, self.normalisation)
        keyword_n = normalise(keyword, self.normalisation)
        if self.char_share > 0:
            keyword_n = (1.0 - self.char_share) * keyword_n + self.char_share * normalise(
                chars, self.normalisation
            )
        fused = self.vector_weight * vector_n + (1.0 - self.vector_weight) * keyword_n
        return {
            "tools": tools,
            "views": views,
            "vector": vector,
            "keyword": keyword,
            "char": chars,
            "vector_normalised": vector_n,
            "keyword_normalised": keyword_n,
            "fused": fused,
        }

    # ------------------------------------------------------------------ search
    def search(self, request: SearchRequest) -> SearchResponse:
        return self.search_many(
            request.session_id, [request.query], request.max_results, request.category_filter
        )[0]

    def search_many(
        self,
        session_id: str | None,
        queries: Sequence[str | None],
        max_results: int | None = None,
        category_filter: str | None = None,
    ) -> list[SearchResponse]:
        """``search`` for many queries at once (one embedding call for all of them)."""
        return [resp for resp, _ in self._search(session_id, queries, max_results, category_filter)]

    def explain_search(self, request: SearchRequest) -> list[HybridHit]:
        """The results of ``search(request)`` with every component score behind each one."""
        return self._search(
            request.session_id, [request.query], request.max_results, request.category_filter
        )[0][1]

    def _search(
        self,
        session_id: str | None,
        queries: Sequence[str | None],
        max_results: int | None,
        category_filter: str | None,
    ) -> list[tuple[SearchResponse, list[HybridHit]]]:
        limit = self.resolve_max_results(
            SearchRequest(session_id, None, max_results), self.default_max_results
        )
        if not isinstance(session_id, str) or not session_id.strip():
            return [(empty_response(), []) for _ in queries]
        m = self.score_matrix(session_id, [q or "" for q in queries])
        tools: list[Tool] = m["tools"]
        if not tools:  # unknown session, or cleared while this search started
            return [(empty_response(), []) for _ in queries]
        allowed = np.array([self.category_allows(t, category_filter) for t in tools], dtype=bool)
        out = []
        for i, query in enumerate(queries):
            fused = m["fused"][i]
            passing = allowed if self.min_score is None else allowed & (fused >= self.min_score)
            keep = np.flatnonzero(passing)
            ranked = keep[np.argsort(-fused[keep], kind="stable")][:limit]
            vec_rank = np.empty(len(tools), dtype=np.int64)
            vec_rank[np.argsort(-m["vector"][i], kind="stable")] = np.arange(1, len(tools) + 1)
            kw_rank = np.empty(len(tools), dtype=np.int64)
            kw_rank[np.argsort(-m["keyword_normalised"][i], kind="stable")] = np.arange(1, len(tools) + 1)
            kw_matched = (m["keyword"][i] > 0) | (m["char"][i] > 0)
            refs, hits = [], []
            for j in ranked:
                t = tools[j]
                refs.append(ToolReference(t.name, float(fused[j]), t.description))
                hits.append(
                    HybridHit(
                        tool_name=t.name,
                        score=float(fused[j]),
                        vector_score=float(m["vector"][i, j]),
                        keyword_score=float(m["keyword"][i, j]),
                        vector_normalised=float(m["vector_normalised"][i, j]),
                        keyword_normalised=float(m["keyword_normalised"][i, j]),
                        vector_rank=int(vec_rank[j]),
                        keyword_rank=int(kw_rank[j]) if kw_matched[j] else None,
                        view_scores={v: float(s[i, j]) for v, s in m["views"].items()},
                        char_score=float(m["char"][i, j]),
                    )
                )
            out.append((SearchResponse(refs, len(refs), SearchMetadata(self.search_type, query, None)), hits))
        return out
