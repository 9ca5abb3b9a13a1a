"""IndexExplorer: rankings per index kind with their reasons, escaped."""

import pytest

from toolsearch_lab.embed import TfidfEmbedder
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.index.regex import RegexToolIndex
from toolsearch_lab.index.vector import VectorToolIndex
from toolsearch_lab.model import Tool
from toolsearch_lab.ui import IndexExplorer
from toolsearch_lab.ui.index_explorer import marked

TOOLS = [
    Tool("create_pull_request", "Open a new pull request from a branch into a base branch."),
    Tool("merge_pull_request", "Merge a pull request. <script>alert('x')</script>"),
    Tool("list_issues", "List issues in a repository, filtered by state and labels."),
    Tool("create_issue", "Create a new issue in a repository."),
    Tool("request_review", "Ask reviewers to review a pull request."),
    Tool("get_weather", "Current weather for a city."),
]


def indexes():
    emb = TfidfEmbedder().fit([f"{t.name} {t.description}" for t in TOOLS])
    return {
        "regex": RegexToolIndex(),
        "lucene": BM25ToolIndex(),
        "vector": VectorToolIndex(emb, min_score_threshold=0.0),
        "hybrid": HybridToolIndex(embedder=emb),
    }


def make(query="create a pull request"):
    return IndexExplorer("custom", query=query, indexes=indexes(), tools=TOOLS)


def test_rankings_scores_and_reasons_per_kind():
    app = make()
    assert set(app.columns) == {
        "regex",
        "lucene",
        "vector",
        "hybrid",
        "hybrid/keyword",
        "hybrid/char",
        "hybrid/vector",
    }
    for kind, hits in app.results.items():
        assert hits and all(s is not None for _, s in hits)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        assert hits[0][0] in app.columns[kind].value
    assert "merge_pull_request" in [n for n, _ in app.results["lucene"]]
    # BM25: per-term contributions with field and term
    lucene = app.columns["lucene"].value
    assert "term contributions" in lucene and ":pull</span> <b>+" in lucene
    # regex: matched text is marked
    assert "<mark" in app.columns["regex"].value
    assert "cosine" in app.columns["vector"].value
    assert "fused = " in app.columns["hybrid"].value and "× BM25" in app.columns["hybrid"].value


def test_hybrid_reasons_cite_the_component_columns():
    """Each raw score and rank a hybrid reason cites is the one in that component's own column."""
    app = make()
    hybrid = app.index_for("hybrid")
    columns = {role: [n for n, _ in app.results[f"hybrid/{role}"]] for role in ("keyword", "char", "vector")}
    for name, _ in app.results["hybrid"]:
        hit = hybrid.explain("index-explorer", app.query_box.value, name).details
        for role, rank, score in [
            ("vector", hit.vector_rank, hit.vector_score),
            ("keyword", hit.keyword_rank, hit.keyword_score),
            ("char", hit.char_rank, hit.char_score),
        ]:
            if rank is not None and rank <= len(columns[role]):
                assert columns[role][rank - 1] == name
                assert dict(app.results[f"hybrid/{role}"])[name] == pytest.approx(score, rel=1e-6)
                assert f"rank {rank} in the" in app.columns["hybrid"].value


def test_rankings_differ_between_kinds_and_follow_the_query():
    app = make("issues")
    first = {k: [n for n, _ in v] for k, v in app.results.items()}
    assert len({tuple(v) for v in first.values()}) > 1  # the kinds disagree somewhere
    app.query_box.set_state({"value": "weather city"})
    assert app.results["lucene"][0][0] == "get_weather"
    app.max_results.value = 1
    assert all(len(v) <= 1 for v in app.results.values())


def test_tool_text_is_escaped():
    app = make("merge pull request alert script")
    joined = "".join(c.value for c in app.columns.values())
    assert "merge_pull_request" in joined
    assert "<script" not in joined and "&lt;script&gt;" in joined or "&lt;" in joined


def test_broken_index_only_blanks_its_column():
    class Broken(RegexToolIndex):
        def _search(self, request, limit):
            raise RuntimeError("boom <b>")

    ix = indexes()
    ix["regex"] = Broken()
    app = IndexExplorer("custom", kinds=("regex", "lucene"), indexes=ix, tools=TOOLS)
    assert "boom &lt;b&gt;" in app.columns["regex"].value and app.results["regex"] == []
    assert app.results["lucene"]


def test_marked_windows_and_escapes():
    text = "x" * 100 + "<pull> request"
    html = marked(text, [(101, 105)])
    assert html.startswith("…") and "<mark" in html and "&lt;" in html and "<pull>" not in html


@pytest.mark.parametrize("kind", ["regex", "lucene"])
def test_shipped_catalog(kind):
    app = IndexExplorer("github-mcp", kinds=(kind,), indexes={kind: indexes()[kind]})
    assert "create_pull_request" in [n for n, _ in app.results[kind]]
