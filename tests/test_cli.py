"""The ``toolsearch-lab`` command line as a user meets it: --version, --help of every command, and ``demo``'s
exit codes, error messages, partial figures and retries, against the loopback fake OpenAI server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from openai_fake_server import FakeOpenAIServer, chat_response, error_response, rate_limited, tool_call

from toolsearch_lab import __version__
from toolsearch_lab.catalog.container import SHIPPED_CATALOGS
from toolsearch_lab.cli.main import COMMANDS, build_parser, main
from toolsearch_lab.eval.datasets import SHIPPED_DATASETS
from toolsearch_lab.eval.scenarios import list_scenarios
from toolsearch_lab.index.factory import INDEX_KINDS

FAKE_KEY = "sk-test-cli-DO-NOT-LEAK-31c9"
OPENAI_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    # A developer's real key or server must never reach a test, and must not change its outcome.
    for var in OPENAI_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TOOLSEARCH_LAB_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def server(monkeypatch):
    with FakeOpenAIServer() as s:
        monkeypatch.setenv("OPENAI_BASE_URL", s.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
        monkeypatch.setenv("OPENAI_MODEL", "fake-model")
        yield s


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------------------------------ version, help
def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"toolsearch-lab {__version__}"


def test_cli_runs_in_a_subprocess():
    env = {k: v for k, v in os.environ.items() if k not in OPENAI_ENV}
    version = subprocess.run(
        [sys.executable, "-m", "toolsearch_lab.cli", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert version.returncode == 0 and version.stdout.strip() == f"toolsearch-lab {__version__}"
    no_key = subprocess.run(
        [sys.executable, "-m", "toolsearch_lab.cli", "demo", "--model", "openai"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert no_key.returncode == 2
    assert "OPENAI_API_KEY" in no_key.stderr and "Traceback" not in no_key.stderr
    assert no_key.stdout == ""


def _flat(text: str) -> str:
    return " ".join(text.split())


def _subparsers():
    parser = build_parser()
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return action.choices


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_help_shows_every_default(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    shown = _flat(capsys.readouterr().out)
    parser = _subparsers()[command]
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.dest == "help":
            continue
        text = _flat(formatter._expand_help(action))
        assert text.endswith("(required)") or "(default: " in text, f"{command} {action.dest}: {text!r}"
        assert "".join(text.split()) in "".join(shown.split())  # argparse may wrap at a hyphen
    assert "exit codes:" in shown


def test_help_lists_the_shipped_names(capsys):
    helps = {}
    for command in ("demo", "search", "eval", "tokens"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        helps[command] = _flat(capsys.readouterr().out)
    assert all(name in "".join(helps["demo"].split()) for name in list_scenarios())  # may wrap at a hyphen
    assert all(name in helps[c] for c in ("search", "tokens") for name in SHIPPED_CATALOGS)
    assert all(name in "".join(helps["eval"].split()) for name in SHIPPED_DATASETS)  # may wrap at a hyphen
    assert all(kind in helps[c] for c in ("demo", "search", "eval") for kind in INDEX_KINDS)


def test_every_registered_command_is_reachable():
    names = set(_subparsers())
    assert {"demo", "search", "eval", "tokens"} <= names and len(names) == len(COMMANDS)
    assert all(callable(c.add_parser) and callable(c.run) for c in COMMANDS)


# ------------------------------------------------------------------------------------------------- demo
def test_answered_simulated_run_exits_0_with_numbered_iterations(capsys):
    code, out, _ = run_cli(capsys, "demo", "--scenario", "spring-demo", "--index", "regex")
    assert code == 0
    table = out.split("\n\n")[1].splitlines()
    assert table[1].split()[0] == "1"  # the first model request is iteration 1
    assert "saved" in out and "PARTIAL" not in out
    assert "Retries         none" in out and "Errors" not in out


def test_demo_saving_is_against_the_real_all_tools_run_that_compare_makes(capsys):
    """The headline saving is measured against compare's all-tools row of the same task, the per-request
    counterfactual sits beside it, and both bills are compare's; on the 26-tool Spring demo tool search
    sends fewer prompt tokens yet costs more once caching is billed."""
    code, out, _ = run_cli(capsys, "demo", "--json")
    head = json.loads(out)["headline"]
    code, out, _ = run_cli(
        capsys,
        "compare",
        "--scenario",
        "spring-demo",
        "--strategies",
        "all-tools",
        "search-only-no-accumulation",
        "--json",
    )
    rows = {r["strategy"]: r for r in json.loads(out)}
    real, ours = rows["all-tools"], rows["search-only-no-accumulation"]
    assert head["prompt_tokens"] == ours["prompt_tokens"] and head["requests"] == ours["requests"]
    assert (
        head["all_tools_prompt_tokens"] == real["prompt_tokens"]
        and head["all_tools_requests"] == real["requests"]
    )
    assert head["all_tools_requests"] < head["requests"]  # a real all-tools agent never searches
    assert head["saved_pct"] == pytest.approx(100 * (1 - ours["prompt_tokens"] / real["prompt_tokens"]))
    assert head["counterfactual_saved_pct"] > head["saved_pct"] > 0
    assert (
        head["cost_usd"] == pytest.approx(ours["cost_usd"]) and head["all_tools_cost_usd"] == real["cost_usd"]
    )
    assert head["cost_pct_of_all_tools"] > 100
    code, text, _ = run_cli(capsys, "demo")
    assert f"real all-tools run {real['prompt_tokens']:,} ({real['requests']} requests)" in text
    assert (
        f"saved {head['saved_pct']:.1f} %" in text
        and f"saved {head['counterfactual_saved_pct']:.1f} %" in text
    )
    assert "prompt caching" in text and "(MORE)" in text


def test_no_key_says_what_to_set_and_runs_nothing(capsys):
    code, out, err = run_cli(capsys, "demo", "--model", "openai")
    assert code == 2 and out == ""
    assert "OPENAI_API_KEY" in err and "OPENAI_BASE_URL" in err and "OPENAI_MODEL" in err


def test_openai_answer_exits_0(server, capsys):
    server.enqueue(chat_response("Nothing to do, all done."))
    code, out, err = run_cli(capsys, "demo", "--model", "openai")
    assert code == 0
    assert "Nothing to do, all done." in out and "saved" in out
    assert len(server.requests) == 1
    assert FAKE_KEY not in out + err


def test_model_error_exits_1_with_the_message_and_partial_figures(server, capsys):
    server.enqueue(error_response(400, "Invalid value for 'tools': boom", "invalid_request_error"))
    code, out, _ = run_cli(capsys, "demo", "--model", "openai")
    assert code == 1
    assert "Invalid value for 'tools': boom" in out
    assert "Stop reason     error" in out
    assert "PARTIAL" in out and "saved" not in out


@pytest.mark.slow
def test_a_run_stopped_by_a_limit_also_exits_1(server, capsys):
    server.default = lambda request: chat_response(
        tool_calls=[tool_call("toolSearchTool", {"query": "time"})]
    )
    code, out, _ = run_cli(capsys, "demo", "--model", "openai")
    assert code == 1
    stop = next(line for line in out.splitlines() if line.startswith("Stop reason"))
    assert "answered" not in stop and "stopped without an answer" in stop
    assert "limit reached" in out and "PARTIAL" in out


def test_json_lists_each_error_once_and_marks_partial_tokens(server, capsys):
    server.enqueue(error_response(400, "Invalid value for 'tools': boom", "invalid_request_error"))
    code, out, err = run_cli(capsys, "demo", "--model", "openai", "--json")
    assert code == 1
    summary = json.loads(out)
    assert summary["stop_reason"] == "error" and summary["finished"] is False
    assert len(summary["errors"]) == 1 and "boom" in summary["errors"][0]
    assert summary["tokens"]["partial"] is True and summary["tokens"]["prompt_saved_pct"] is None
    assert "stopped without an answer" in err
    assert FAKE_KEY not in out + err


def test_max_retries_reaches_the_model_and_the_output(server, capsys):
    server.enqueue(*[rate_limited(retry_after_ms=5)] * 3, chat_response("third time lucky"))
    code, out, _ = run_cli(capsys, "demo", "--model", "openai", "--max-retries", "3", "--json")
    assert code == 0 and len(server.requests) == 4
    summary = json.loads(out)
    assert summary["retries"] == 3
    assert [(r["iteration"], r["status"]) for r in summary["retry_records"]] == [(1, 429)] * 3

    server.enqueue(*[rate_limited(retry_after_ms=5)] * 3, chat_response("never asked for"))
    code, out, _ = run_cli(capsys, "demo", "--model", "openai", "--max-retries", "1")
    assert code == 1 and len(server.requests) == 4 + 2  # one try and one retry, then the run stops
    assert "Retries         1 (iteration 1: HTTP 429" in out
    assert "429" in out.split("Errors", 1)[1]


def test_max_retries_must_be_a_count(capsys):
    with pytest.raises(SystemExit) as info:
        main(["demo", "--max-retries", "-1"])
    assert info.value.code == 2
    assert "--max-retries" in capsys.readouterr().err


def test_demo_grades_each_step_so_one_miss_does_not_hide_the_rest(capsys):
    """The user-worded release-day task: the literal agent stops at its first miss, the semantic agent skips
    it and carries on; both print the per-step grade, and the JSON carries the same steps."""
    code, literal, _ = run_cli(capsys, "demo", "--scenario", "github-release-day-user", "--model", "literal")
    assert code == 0
    assert "Steps           0/6 (0 %)" in literal
    scenario = ("--scenario", "github-release-day-user")
    code, out, _ = run_cli(capsys, "demo", *scenario, "--model", "semantic", "--json")
    report = json.loads(out)
    steps = report["steps"]
    assert len(steps) == 6 and all({"need", "expected", "success", "called"} <= set(s) for s in steps)
    done = sum(s["success"] for s in steps)
    assert report["grade"]["steps_succeeded"] == done
    assert report["grade"]["step_success_rate"] == pytest.approx(done / 6)


def test_demo_runs_a_scenario_in_the_other_wording(capsys):
    code, out, _ = run_cli(capsys, "demo", "--scenario", "github", "--wording", "user", "--json")
    assert code == 0 and json.loads(out)["scenario"] == "github-user"
    code, out, _ = run_cli(capsys, "demo", "--scenario", "github-user", "--wording", "plain", "--json")
    assert code == 0 and json.loads(out)["scenario"] == "github"
    code, _, err = run_cli(capsys, "demo", "--scenario", "github-release-day-user", "--wording", "plain")
    assert code == 2 and "has no 'plain' wording" in err


def test_the_glossary_is_what_the_semantic_agent_adds_on_user_words(capsys):
    """Same scenario, same index: the agent that reads everyday words does more steps than the one without."""
    done = {}
    for agent in ("literal", "semantic-no-glossary", "semantic"):
        code, out, _ = run_cli(
            capsys, "demo", "--scenario", "spring-demo-shop-user", "--model", agent, "--json"
        )
        report = json.loads(out)
        assert code == 0 and report["model"] == f"simulated-{agent}".replace("simulated-literal", "simulated")
        done[agent] = report["grade"]["steps_succeeded"]
    assert done["literal"] < done["semantic-no-glossary"] < done["semantic"]
