"""The benchmarks and how they are measured: the shipped datasets (AgentDojo held out, BFCL, the hand-written
GitHub sets), server-level recall, the eval command with abstention, the BM25 analysis option and the
name + description text for the embedder."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.datasets import SHIPPED_DATASETS, Dataset, Query, load_dataset
from toolsearch_lab.eval.metrics import evaluate, server_recall_hit_at_k
from toolsearch_lab.index.bm25.index import BM25ToolIndex
from toolsearch_lab.index.vector import VectorToolIndex
from toolsearch_lab.model import SearchRequest, Tool
from toolsearch_lab.text.tool_text import TEXT_MODES, tool_text


def test_the_shipped_benchmarks_have_their_published_shape():
    agentdojo = load_dataset("agentdojo")
    assert (len(agentdojo.tools), len(agentdojo.queries)) == (69, 97)
    assert len(set(agentdojo.servers.values())) == 9 and agentdojo.catalog == "agentdojo"
    assert {q.group for q in agentdojo.queries} == {"workspace", "travel", "banking", "slack"}
    turns, tasks = load_dataset("bfcl-turns"), load_dataset("bfcl-tasks")
    assert (len(turns.tools), len(turns.queries), len(tasks.queries)) == (128, 731, 200)
    assert len(set(turns.servers.values())) == 8 and turns.catalog == tasks.catalog == "bfcl"
    live = load_dataset("livemcpbench")
    assert len(set(live.servers.values())) == 69  # the servers of tools.json, not their 8 categories
    github = {n: load_dataset(n) for n in ("github-examples", "github-paraphrases", "github-prerequisites")}
    assert [len(d.queries) for d in github.values()] == [585, 67, 40]
    assert all(d.catalog == "github-mcp" and len(d.tools) == 117 and not d.servers for d in github.values())
    assert len(load_dataset("bfcl-prerequisites").queries) == 20
    assert set(SHIPPED_DATASETS) >= {"agentdojo", "bfcl-turns", "bfcl-tasks", "github-paraphrases"}


def test_server_level_recall_counts_servers_not_tools():
    servers = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
    assert server_recall_hit_at_k(["a2", "c1"], ["a1", "b1"], servers, 5) == (0.5, 1.0)
    assert server_recall_hit_at_k(["c1"], ["a1", "a2"], servers, 5) == (0.0, 0.0)
    tools = [Tool(n, f"tool {n}", category=s) for n, s in servers.items()]
    dataset = Dataset(tools, [Query("q", "tool a2", ("a1",))], "tiny")
    assert dataset.servers == servers
    metrics = evaluate(BM25ToolIndex(0.0), dataset, k=1).metrics
    assert metrics["recall@1"] == 0.0 and metrics["server recall@1"] == 1.0  # a2 is on a1's server
    single = Dataset([Tool("x", "x"), Tool("y", "y")], [Query("q", "x", ("x",))], "one server")
    assert "server recall@5" not in evaluate(BM25ToolIndex(0.0), single).metrics


def test_eval_shows_servers_abstention_and_the_curve(capsys):
    code = main(["eval", "--dataset", "github-paraphrases", "--offcatalog", "github-test", "--curve"])
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "answered" in out and "off-catalog: 100 requests no tool serves; hybrid returned nothing for" in out
    )
    table, plot = out.split("abstention curve")[1].split("both errors by threshold")
    curve = table.splitlines()[2:]
    rows = [line.split() for line in curve if line.strip() and line.strip()[0].isdigit()]
    # The plot puts both errors of each threshold on one axis: servable refused, off-catalog given tools.
    plotted = [line for line in plot.splitlines() if line.strip()[:1].isdigit()]
    assert len(plotted) == len(rows)
    for row, line in zip(rows, plotted, strict=True):
        axis = line.split("|")[1]
        refused, loaded = (float(v) for v in line.split("|")[2].split()[:2])
        assert line.split()[0] == row[0]
        assert refused == pytest.approx(1 - float(row[3]), abs=0.006)
        assert loaded == pytest.approx(1 - float(row[4]), abs=0.006)
        assert abs(axis.index("R" if "R" in axis else "*") - refused * 40) <= 1  # one column: 2.5 %
    # At 0 the confidence turns nothing away; only near-misses (an operation no tool offers) are.
    assert rows[0][0] == "0.000" and 0.0 < float(rows[0][-1]) < 0.2 and float(rows[0][3]) == 1.0
    abstained = [float(r[4]) for r in rows]
    default = next(line for line in curve if line.endswith("<- default")).split()
    assert float(default[1]) == pytest.approx(float(out.split("hit@5")[1].split()[0]), abs=5e-4)  # = metrics
    hits = [float(r[1]) for r in rows]
    assert abstained == sorted(abstained) and hits == sorted(hits, reverse=True) and abstained[-1] > 0.5
    assert any(line.endswith("<- default") for line in curve)
    main(["eval", "--dataset", "agentdojo", "--index", "lucene", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert "server recall@5" in report["metrics"]
    assert set(report["by_group"]) == {"workspace", "travel", "banking", "slack"}
    assert main(["eval", "--dataset", "agentdojo", "--index", "lucene", "--curve"]) == 2
    assert "the lucene index has no confidence threshold" in capsys.readouterr().err
    assert main(["eval", "--dataset", "agentdojo", "--offcatalog", "github-test", "--index", "regex"]) == 2
    assert "it has no requests for the catalog 'agentdojo'" in capsys.readouterr().err


def test_springs_bm25_can_drop_query_stop_words():
    tools = [
        Tool("get_weather", "Get the weather for a city"),
        Tool("what_is_new", "What is new in the release notes"),
    ]
    spring = BM25ToolIndex()
    fixed = BM25ToolIndex(stop_words=True)
    for index in (spring, fixed):
        index.index_tools("s", tools)
    query = "what is the weather in the city"
    assert spring.search(SearchRequest("s", query)).tool_names[0] == "what_is_new"  # "what is the" weighs
    assert fixed.search(SearchRequest("s", query)).tool_names == ["get_weather"]
    assert fixed.explain("s", query, "get_weather").score == pytest.approx(
        spring.explain("s", "weather city", "get_weather").score
    )


def test_name_and_description_is_a_text_mode_for_the_embedder():
    tool = Tool("get_iban", "Get the IBAN of the current bank account.")
    assert "name+description" in TEXT_MODES
    assert tool_text(tool, "name+description") == "get_iban: Get the IBAN of the current bank account."
    index = VectorToolIndex(text="name+description")
    index.index_tools("s", [tool, Tool("get_balance", "Get the balance of the account.")])
    assert index.documents("s")[0].text.startswith("get_iban: ")
    assert index.search(SearchRequest("s", "what is my iban")).tool_names[0] == "get_iban"
    assert VectorToolIndex().views == ("description",)  # Spring's text stays the default
