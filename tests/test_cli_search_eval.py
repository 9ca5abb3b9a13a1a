"""``toolsearch-lab search`` and ``eval`` through the real CLI entry point, on a tiny dataset file."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.cli.main import main

DOC = {
    "source": "cli-test",
    "tools": [
        {"name": "get_weather", "description": "Get the weather forecast for a city"},
        {"name": "send_email", "description": "Send an email message to a recipient"},
        {"name": "stock_quote", "description": "Latest stock price for a ticker symbol"},
    ],
    "queries": [
        {"id": "a", "query": "weather forecast for Paris", "relevant_tools": ["get_weather"]},
        {"id": "b", "query": "send an email to Bob", "relevant_tools": ["send_email"]},
        {"id": "c", "query": "stock price of ACME", "relevant_tools": ["stock_quote"]},
    ],
}


@pytest.fixture()
def dataset_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(DOC), encoding="utf-8")
    return path


def test_search_text_and_json(dataset_file, capsys):
    assert main(["search", "weather forecast", "--catalog", str(dataset_file), "--index", "lucene"]) == 0
    out = capsys.readouterr().out
    assert "get_weather" in out and "lucene index" in out
    assert (
        main(
            [
                "search",
                "weather forecast",
                "--catalog",
                str(dataset_file),
                "--index",
                "lucene",
                "--max-results",
                "1",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["toolReferences"][0]["toolName"] == "get_weather"
    assert data["toolReferences"][0]["relevanceScore"] > 0
    assert data["searchMetadata"]["searchType"] == "LuceneToolIndex"


def test_search_hybrid_shows_component_scores(dataset_file, capsys):
    assert (
        main(["search", "mail my colleague", "--catalog", str(dataset_file), "--index", "hybrid", "--json"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["toolReferences"][0]["toolName"] == "send_email"
    assert {"vectorScore", "keywordScore", "viewScores"} <= set(data["explain"][0])
    assert main(["search", "mail my colleague", "--catalog", str(dataset_file), "--index", "hybrid"]) == 0
    assert "vec " in capsys.readouterr().out


def test_eval_text_and_json(dataset_file, capsys):
    assert main(["eval", "--dataset", str(dataset_file), "--index", "vector", "--k", "1"]) == 0
    out = capsys.readouterr().out
    assert "recall@1" in out and "3 queries" in out
    assert main(["eval", "--dataset", str(dataset_file), "--index", "hybrid", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["recall@5"] == 1.0 and data["queries"] == 3 and data["index"] == "hybrid"


def test_errors_exit_2_with_message(dataset_file, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tools": [], "queries": [{"query": "x", "relevant_tools": ["ghost"]}]}))
    assert main(["eval", "--dataset", str(bad), "--index", "lucene"]) == 2
    assert "ghost" in capsys.readouterr().err
    assert main(["search", "x", "--catalog", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


# ---------------------------------------------------------------------------- hints about the real cause
def test_blank_query_hint_names_the_blank_query(dataset_file, capsys):
    assert main(["search", "  ", "--catalog", str(dataset_file), "--index", "lucene"]) == 0
    out = capsys.readouterr().out
    assert "0 of 3 tools" in out and "the query is blank" in out
    assert "threshold" not in out and "min_score" not in out
    assert main(["search", "", "--catalog", str(dataset_file), "--index", "regex"]) == 0
    out = capsys.readouterr().out
    assert "3 of 3 tools" in out and "match-all pattern" in out


def test_regex_syntax_in_keyword_mode_is_explained(dataset_file, capsys):
    assert main(["search", "(unclosed", "--catalog", str(dataset_file), "--index", "regex"]) == 0
    out = capsys.readouterr().out
    assert "never reads the query as a regular expression" in out and "(?i)(unclosed)" in out
    assert "--regex-mode pattern" in out and "threshold" not in out


def test_invalid_pattern_in_pattern_mode_is_an_error(dataset_file, capsys):
    argv = [
        "search",
        "(unclosed",
        "--catalog",
        str(dataset_file),
        "--index",
        "regex",
        "--regex-mode",
        "pattern",
    ]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "not a valid regular expression" in captured.err and captured.out == ""
    assert main([*argv[:1], "weath.*", *argv[2:]]) == 0
    assert "get_weather" in capsys.readouterr().out


def test_threshold_hint_only_when_the_threshold_cut_the_results(dataset_file, capsys):
    assert main(["search", "zzzqqq", "--catalog", str(dataset_file), "--index", "lucene"]) == 0
    out = capsys.readouterr().out
    assert "no tool's name or description contains a term" in out and "min_score" not in out
    argv = ["search", "weather forecast", "--catalog", str(dataset_file), "--index", "lucene"]
    assert main([*argv, "--min-score", "100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["toolReferences"] == []
    (hint,) = data["hints"]
    assert "below the lucene index's min_score_threshold 100.0" in hint and "best: get_weather" in hint


def test_options_that_do_not_fit_the_index_are_refused(dataset_file, capsys):
    base = ["search", "x", "--catalog", str(dataset_file)]
    assert main([*base, "--index", "regex", "--min-score", "1"]) == 2
    assert "no score threshold" in capsys.readouterr().err
    assert main([*base, "--index", "lucene", "--regex-mode", "pattern"]) == 2
    assert "--regex-mode applies to --index regex only" in capsys.readouterr().err


def test_search_says_why_no_tool_matches_and_the_flags_return_the_ranking(dataset_file, capsys):
    near = ["search", "delete the feature/login branch", "--catalog", "github-mcp", "--index", "hybrid"]
    assert main(near) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 of 117 tools") and "no tool passed the filters" not in out
    assert "near-miss, no tool about branch offers 'delete'" in out and "--no-near-miss" in out
    assert main([*near, "--no-near-miss", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "create_branch" in [r["toolName"] for r in data["toolReferences"]]
    assert data["confidence"]["abstained"] is False and "near_miss" not in data["confidence"]

    off = ["search", "book a table for two tonight", "--catalog", "github-mcp", "--index", "learned"]
    assert main(off) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 of 117 tools") and "confidence that some tool fits is 0." in out
    assert "below its threshold 0.229" in out
    for flags in (["--min-confidence", "0"], ["--no-abstain"]):
        assert main([*off, *flags, "--max-results", "3", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert len(data["toolReferences"]) == 3 and data["hints"] == []
    assert "confidence" not in data  # --no-abstain: no confidence at all, as Spring's indexes


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--index", "lucene", "--no-abstain"], "(hybrid or learned), not to the lucene index"),
        (["--index", "vector", "--min-confidence", "0.5"], "(hybrid or learned), not to the vector index"),
        (["--index", "hybrid", "--no-abstain", "--no-near-miss"], "--no-near-miss would change nothing"),
        (["--index", "hybrid", "--min-confidence", "1.5"], "expected a probability from 0 to 1, got '1.5'"),
    ],
)
def test_abstention_flags_that_cannot_apply_are_refused(dataset_file, capsys, flags, message):
    for command in (["search", "weather", "--catalog"], ["eval", "--dataset"]):
        try:
            code = main([*command, str(dataset_file), *flags])
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        assert code == 2
        assert message in capsys.readouterr().err


@pytest.mark.slow
def test_eval_reads_your_own_off_catalog_requests(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path / "cache"))
    mine = tmp_path / "off.txt"
    # A byte-order mark, Windows line ends, and a line separator that stays inside its request: 3 requests.
    mine.write_text(
        "# requests our GitHub server cannot serve\r\nbook a table for two\r\n\r\n"
        "convert 100 dollars\u2028to euros\r\ndelete the feature/login branch\r\n",
        encoding="utf-8-sig",
    )
    argv = ["eval", "--dataset", "github-paraphrases", "--offcatalog", str(mine)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "off-catalog: 3 requests no tool serves; hybrid returned nothing for 3 (100%)" in out
    assert main([*argv, "--no-abstain"]) == 0
    assert "hybrid returned nothing for 0 (0%)" in capsys.readouterr().out
    assert main([*argv, "--curve", "--min-confidence", "0.3"]) == 0
    curve, plot = capsys.readouterr().out.split("abstention curve")[1].split("both errors by threshold")
    marked = [line.split() for line in curve.splitlines() if line.endswith("<- --min-confidence")]
    assert len(marked) == 1 and marked[0][0] == "0.300"
    # the plot: at 0.300 no off-catalog request is given tools (L at 0) and 13 % of the servable are refused
    (row,) = [line for line in plot.splitlines() if line.endswith("<- --min-confidence")]
    assert row.split()[0] == "0.300" and row.split("|")[1].index("R") == round(0.13 * 40)
    assert row.split("|")[1].index("L") == 0 and row.split()[-4:-2] == ["0.13", "0.00"]
    # the learned index's threshold is its hybrid's
    assert main([*argv, "--index", "learned", "--curve"]) == 0
    curve = capsys.readouterr().out.split("abstention curve")[1]
    assert [line.split()[0] for line in curve.splitlines() if line.endswith("<- default")] == ["0.229"] * 2
    assert main([*argv, "--curve", "--no-abstain"]) == 2
    assert "--no-abstain turns off" in capsys.readouterr().err

    table = tmp_path / "table.tsv"
    table.write_text("catalog\tkind\tquery\ngithub-mcp\toff-domain\tbook a table\n", encoding="utf-8")
    blank = tmp_path / "blank.txt"
    blank.write_text("# only a comment\n\n", encoding="utf-8")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("réserver une table".encode("latin-1"))
    for path, message in [
        (table, "line 1 holds a tab; expected one request per line"),
        (blank, "no requests; expected one request per line"),
        (latin, "not UTF-8 text"),
        ("githib-test", "--offcatalog githib-test: no such file, nor a shipped set (calibration, "),
    ]:
        assert main(["eval", "--dataset", "github-paraphrases", "--offcatalog", str(path)]) == 2
        assert message in capsys.readouterr().err
