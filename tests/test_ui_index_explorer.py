"""IndexExplorer: rankings per index kind with their reasons, escaped."""

import pytest

from toolsearch_lab.embed.base import TfidfEmbedder
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
        "vector": VectorToolIndex(emb, similarity_threshold=0.0),
        "hybrid": HybridToolIndex(embedder=emb),
    }


def make(query="create a pull request"):
    return IndexExplorer("custom", query=query, indexes=indexes(), tools=TOOLS)


def test_rankings_scores_and_reasons_per_kind():
    app = make()
    assert set(app.columns) == {"regex", "lucene", "vector", "hybrid"}
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
        def search(self, request):
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
