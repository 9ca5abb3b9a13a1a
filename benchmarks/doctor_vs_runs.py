"""The doctor's payoff against real runs of PyPI's reference MCP servers (docs/doctor.md's table). A report:
it prints numbers; nothing fails (tests/test_doctor_advice.py holds the advice to the run).

    python benchmarks/doctor_vs_runs.py     # needs mcp-server-git and mcp-server-time (~30 s)

For two configs (one git server; two git servers and the time server) it runs the doctor with its defaults,
then a 3-step task both ways with the simulated agent and the doctor's index, maxResults and accumulation,
and prints the doctor's estimate beside the run: prompt tokens and the prompt bill (the price table's default
model, with its prompt caching). The servers come from PATH or TOOLSEARCH_LAB_MCP_BIN.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_mcp_real_servers import _repository as repository  # the tests' temporary git repository

from toolsearch_lab.catalog.live import connect_mcp_config
from toolsearch_lab.catalog.mcp_config import load_mcp_config
from toolsearch_lab.eval.compare import run_strategy
from toolsearch_lab.eval.cost import totals
from toolsearch_lab.eval.doctor import diagnose
from toolsearch_lab.eval.scenarios import scenario_from_dict


def server(name: str) -> str:
    found = shutil.which(name, path=os.environ.get("TOOLSEARCH_LAB_MCP_BIN") or None)
    if found is None:
        sys.exit(f"{name} is not installed: pip install {name}, or set TOOLSEARCH_LAB_MCP_BIN")
    return found


def step(need: str, data: dict, expected: str, also: str | None = None) -> dict:
    return {"need": need, "data": data, "expected_tools": [expected], "also_accepted": [also] if also else []}


def measure(label: str, config: Path, steps: list[dict]) -> None:
    report = diagnose(load_mcp_config(config))
    rec, pay = report.recommendation, report.payoff
    with connect_mcp_config(config) as live:
        raw = {"name": "task", "user_request": "Do these three things.", "steps": steps}
        scenario = scenario_from_dict(raw, live_tools=live.catalog.tools)
        every = run_strategy(scenario, "all-tools", rec.index)
        strategy = "search-only" if rec.accumulation else "search-only-no-accumulation"
        search = run_strategy(scenario, strategy, rec.index, max_results=rec.max_results)
    a, s = totals(every.costs), totals(search.costs)
    saved_tokens, bill_share = 1 - s["prompt_tokens"] / a["prompt_tokens"], s["cost_usd"] / a["cost_usd"]
    print(f"{label}: {report.tools} tools, {pay.catalog_tokens:,} tokens a request")
    print(f"  doctor  {rec.verdict[:150]}")
    accumulation = "on" if rec.accumulation else "off"
    print(f"          {rec.index}, maxResults {rec.max_results}, accumulation {accumulation}")
    print(
        f"  tokens  doctor {pay.tokens_per_task_all:,} vs {pay.tokens_per_task_search:,} with search "
        f"({pay.saved_share:+.0%} saved); run {a['prompt_tokens']:,} ({len(every.costs)} requests) vs "
        f"{s['prompt_tokens']:,} ({len(search.costs)}) ({saved_tokens:+.0%} saved)"
    )
    print(
        f"  bill    doctor {pay.bill_saved_share:+.0%} saved; run {1 - bill_share:+.0%} saved "
        f"({bill_share:.0%} of the all-tools bill, {pay.priced_as}; doctor ${pay.bill_all_usd:.4f} vs "
        f"${pay.bill_search_usd:.4f}, run ${a['cost_usd']:.4f} vs ${s['cost_usd']:.4f})"
    )


def main() -> None:
    git, time_server = server("mcp-server-git"), server("mcp-server-time")
    base = Path(tempfile.mkdtemp())
    alpha, beta = repository(base / "alpha", "a.txt"), repository(base / "beta", "b.txt")
    one, many = base / "one.json", base / "many.json"
    pinned = {"command": git, "args": ["--repository", str(alpha)]}
    one.write_text(json.dumps({"mcpServers": {"git": pinned}}))
    servers = {
        "git alpha": pinned,
        "git-beta": {"command": git, "args": ["--repository", str(beta)]},
        "time": {"command": time_server, "args": ["--local-timezone", "Europe/Amsterdam"]},
    }
    many.write_text(json.dumps({"mcpServers": servers}))
    repo = {"repo_path": str(alpha)}
    measure("git", one, [
        step("show the working tree status", repo, "git_status"),
        step("show the commit log", repo, "git_log"),
        step("show the staged changes", repo, "git_diff_staged"),
    ])  # fmt: skip
    measure("git x2 + time", many, [
        step("show the working tree status", repo, "git_alpha__git_status", "git-beta__git_status"),
        step("show the commit log", repo, "git_alpha__git_log", "git-beta__git_log"),
        step("what time is it in Tokyo", {"timezone": "Asia/Tokyo"}, "get_current_time"),
    ])  # fmt: skip


if __name__ == "__main__":
    main()
