"""The command line on a conversation scenario: ``demo --memory --accumulation-source`` turn by turn, and
``compare`` with the memory dimension and the pinned row."""

from __future__ import annotations

import json

import pytest

from toolsearch_lab.cli.main import main


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


DEMO = ("demo", "--scenario", "support-conversation", "--memory", "window:6")


def test_demo_history_with_a_six_message_window_shows_the_loss_and_a_failed_step(capsys):
    code, out, _ = run_cli(capsys, *DEMO, "--accumulation-source", "history")
    assert code == 0  # every turn answered; the grade says which step failed
    assert "Memory    window:6   found tools kept in: history   5 user turns" in out
    turn4 = out[out.index("Turn 4") : out.index("Turn 5")]
    assert "LOST" in turn4 and "add_issue_comment" in turn4 and "memory removed the search results" in turn4
    assert "given 7 messages, kept 1; dropped 6" in turn4
    assert "steps 0/1" in turn4 and "billed $" in turn4
    assert "Steps           4/5 (80 %)" in out and "✗ 4. give ticket 57 the same comment" in out


def test_demo_session_keeps_the_tool_and_every_step_succeeds_with_a_cost_per_turn(capsys):
    code, out, _ = run_cli(capsys, *DEMO, "--accumulation-source", "session", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["grade"]["success"] and summary["grade"]["steps_succeeded"] == 5
    turns = summary["turns"]
    assert [t["turn"] for t in turns] == [1, 2, 3, 4, 5] and all(t["lost"] == [] for t in turns)
    assert "add_issue_comment" in turns[3]["carried"] and turns[3]["called_tools"] == ["add_issue_comment"]
    assert sum(t["prompt_tokens"] for t in turns) == summary["tokens"]["prompt_tool_search"]
    assert all(t["cost_usd"] > 0 and t["cached_tokens"] <= t["prompt_tokens"] for t in turns)
    assert sum(t["cost_usd"] for t in turns) == pytest.approx(summary["headline"]["cost_usd"])
    assert turns[1]["memory"]["memory"] == "window:6" and turns[1]["memory"]["dropped"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("demo", "--scenario", "github", "--memory", "window:6"), "apply to conversation scenarios"),
        (("demo", "--scenario", "github", "--accumulation-source", "history"), "apply to conversation"),
        ((*DEMO[:3], "--memory", "window:0"), "argument --memory: memory 'window:0': N must be a whole"),
        ((*DEMO[:3], "--memory", "sliding:4"), "unknown kind 'sliding'"),
        ((*DEMO, "--accumulation-source", "memory"), "invalid choice: 'memory'"),
        (("compare", "--scenario", "spring-demo", "--memory", "full"), "one user request"),
    ],
)
def test_conversation_options_are_refused_with_a_reason_before_anything_runs(capsys, argv, message):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err


def test_compare_a_conversation_over_memories_and_sources_with_a_pin(capsys):
    code, out, _ = run_cli(
        capsys,
        "compare",
        "--scenario",
        "support-conversation",
        "--strategies",
        "search-only",
        "pinned",
        "--memory",
        "window:6",
        "--accumulation-source",
        "history",
        "session",
        "--pin",
        "add_issue_comment",
    )
    lines = out.splitlines()
    assert code == 0 and "memory" in lines[1] and "tools in" in lines[1]
    rows = {tuple(line.split()[:4]): line for line in lines[2:6]}
    assert "no 4/5" in rows[("search-only", "lucene", "window:6", "history")]
    assert "yes 5/5" in rows[("pinned", "lucene", "window:6", "history")]
    assert "yes 5/5" in rows[("search-only", "lucene", "window:6", "session")]
    assert lines[-1] == "pinned row: add_issue_comment always loaded"
