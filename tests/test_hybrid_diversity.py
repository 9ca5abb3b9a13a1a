"""The hybrid's diverse re-ranking (``diversity``): a two-server request reaches both servers in its top
results, and with the option off the ranking is exactly the score order it always was."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch_lab.index.diversity import category_codes, diversify
from toolsearch_lab.index.hybrid import HybridToolIndex
from toolsearch_lab.model import SearchRequest, Tool


class AxesEmbedder:
    """One axis per concept word, as in test_hybrid_index: deterministic and without a download."""

    name = "axes-v1"
    concepts = (("email", "mail", "message"), ("calendar", "meeting", "event"), ("stock", "shares", "ticker"))

    def embed(self, texts):
        out = np.array(
            [[sum(t.lower().count(w) for w in words) for words in self.concepts] for t in texts],
            dtype=np.float32,
        )
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


MAIL_AND_CALENDAR = [
    Tool("send_email", "Sends an email message", category="mail"),
    Tool("reply_email", "Replies to an email message", category="mail"),
    Tool("forward_email", "Forwards an email message", category="mail"),
    Tool("create_event", "Adds a meeting to the calendar", category="calendar"),
    Tool("stock_quote", "Latest price of shares by ticker", category="finance"),
]
TWO_SERVERS = "email the message to Bob, then add a meeting"


def hybrid(**options) -> HybridToolIndex:
    index = HybridToolIndex(embedder=AxesEmbedder(), abstain=False, **options)
    index.index_tools("s", MAIL_AND_CALENDAR)
    return index


def categories(index: HybridToolIndex, query: str, k: int) -> list[str | None]:
    by_name = {t.name: t.category for t in MAIL_AND_CALENDAR}
    return [by_name[n] for n in index.search(SearchRequest("s", query, k)).tool_names]


def test_a_two_server_request_gets_one_tool_of_each_server_in_its_top_two():
    assert categories(hybrid(), TWO_SERVERS, 2) == ["mail", "mail"]
    assert categories(hybrid(diversity=0.5), TWO_SERVERS, 2) == ["mail", "calendar"]
    assert categories(hybrid(diversity=0.5, diversity_by="description"), TWO_SERVERS, 2) == [
        "mail",
        "calendar",
    ]


def test_diversity_zero_is_the_plain_score_order():
    plain, off = hybrid(), hybrid(diversity=0.0, diversity_by="description")
    for query in [TWO_SERVERS, "shares", "reply to the mail", "nothing in common"]:
        request = SearchRequest("s", query, 5)
        scores = plain.score_matrix("s", [query]).score[0]
        order = np.argsort(-scores, kind="stable")
        expected = [(MAIL_AND_CALENDAR[j].name, float(scores[j])) for j in order]
        for index in (plain, off):
            got = [(r.tool_name, r.relevance_score) for r in index.search(request).tool_references]
            assert got == expected
            assert "diversityPenalty" not in index.explain_search(request)[0].to_dict()


def test_explanations_agree_with_the_diverse_ranking():
    index = hybrid(diversity=0.5)
    response = index.search(SearchRequest("s", TWO_SERVERS, 5))
    scores = [r.relevance_score for r in response.tool_references]
    assert scores == sorted(scores, reverse=True)  # the adjusted scores still read best first
    for rank, ref in enumerate(response.tool_references, 1):
        exp = index.explain("s", TWO_SERVERS, ref.tool_name)
        assert exp.rank == rank and exp.score == ref.relevance_score
        assert sum(p.value for p in exp.parts) == pytest.approx(exp.score, abs=1e-9)
    penalised = index.explain_search(SearchRequest("s", TWO_SERVERS, 5))[2]
    assert penalised.diversity_penalty == pytest.approx(0.5) and "diversityPenalty" in penalised.to_dict()


def test_uncategorised_tools_and_exempt_tools_are_never_penalised():
    score = np.array([1.0, 0.9, 0.8])
    order = np.array([0, 1, 2])
    none = category_codes([Tool("a", "x"), Tool("b", "x"), Tool("c", "x")])
    assert diversify(score, order, 1.0, 3, groups=none)[0].tolist() == [0, 1, 2]
    same = category_codes([Tool("a", "x", category="S"), Tool("b", "x", category="s"), Tool("c", "x")])
    assert diversify(score, order, 1.0, 3, groups=same)[0].tolist() == [0, 2, 1]
    assert diversify(score, order, 1.0, 3, groups=same, exempt=[1])[0].tolist() == [0, 1, 2]


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="diversity must be within"):
        HybridToolIndex(embedder=AxesEmbedder(), diversity=1.5)
    with pytest.raises(ValueError, match="diversity_by"):
        HybridToolIndex(embedder=AxesEmbedder(), diversity_by="server")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one"):
        diversify(np.zeros(1), np.zeros(1, dtype=int), 0.1, 1)
