"""``toolsearch-lab demo``: run a scenario through the advisor loop and print every iteration."""

from __future__ import annotations

import json
import sys

from toolsearch_lab.eval.scenarios import ScenarioRun, load_scenario, run_scenario


def _short(names: list[str], limit: int = 4) -> str:
    if not names:
        return "-"
    shown = ", ".join(names[:limit])
    return shown + (f" +{len(names) - limit}" if len(names) > limit else "")


def iteration_rows(run: ScenarioRun) -> list[dict]:
    rows = []
    for it in run.trace.iterations:
        rows.append(
            {
                "iteration": it.index + 1,
                "exposed": f"{len(it.exposed_tools)} (+{len(it.newly_exposed)})"
                if it.newly_exposed
                else str(len(it.exposed_tools)),
                "new": it.newly_exposed,
                "search": "; ".join(repr(s.query) for s in it.searches) or "-",
                "found": [n for s in it.searches for n in s.names],
                "called": [c.name for c in it.tool_calls if c.kind != "search"],
                "tokens": it.tokens.tool_search.total,
                "baseline": it.tokens.baseline.total,
            }
        )
    return rows


def format_run(run: ScenarioRun) -> str:
    trace = run.trace
    totals = trace.tokens_total()
    lines = [
        f"Scenario  {run.scenario.title}",
        f"Index     {trace.index}   accumulation {'on' if trace.config.get('reference_tool_name_accumulation') else 'off'}"
        f"   model {trace.model}   encoding {trace.encoding}",
        f"Request   {trace.user_request}",
        "",
        f"{'it':>2}  {'exposed':>7}  {'search query':<34} {'found':<44} {'called':<26} {'tokens':>7} {'all tools':>9}",
    ]
    for row in iteration_rows(run):
        called = ", ".join(row["called"]) or (
            "(answer)" if row["iteration"] == len(trace.iterations) else "-"
        )
        lines.append(
            f"{row['iteration']:>2}  {row['exposed']:>7}  {row['search'][:34]:<34} {_short(row['found'])[:44]:<44} "
            f"{called[:26]:<26} {row['tokens']:>7,} {row['baseline']:>9,}"
        )
    lines += [
        "",
        f"Prompt tokens   tool search {totals['prompt_tool_search']:,}   all tools every request "
        f"{totals['prompt_baseline']:,}   saved {totals['prompt_saved_pct']:.1f} %",
        catalog_line(run),
        f"Stop reason     {trace.stop_reason}",
        f"Graded          {'successful' if run.grade.success else 'NOT successful'}: expected "
        f"{run.grade.expected}, called {run.grade.called}",
        "",
        "Answer:",
        trace.final_answer or "(none)",
    ]
    return "\n".join(lines)


def catalog_line(run: ScenarioRun) -> str:
    from toolsearch_lab.tokens import TokenCounter

    counter = TokenCounter(run.trace.encoding)
    estimate = run.trace.iterations[0].tokens.baseline.tools
    as_json = counter.count_json([t.definition() for t in run.scenario.tools])
    line = (
        f"Catalog         {run.trace.catalog_size} tools; sending them all costs {estimate:,} prompt tokens per request "
        f"(OpenAI's counting recipe), {as_json:,} tokens as the compact JSON tools array"
    )
    if estimate > 32_000:
        line += " — more than the whole 32K context window of many local models"
    return line


def demo_command(args) -> int:
    scenario = load_scenario(args.scenario)
    if args.model not in ("simulated", "openai"):
        raise ValueError(f"--model must be 'simulated' or 'openai', got {args.model!r}")
    run = run_scenario(scenario, index=args.index, accumulation=args.accumulation, model=args.model)
    if args.json:
        summary = run.trace.summary()
        summary["scenario"] = scenario.name
        summary["grade"] = {
            "success": run.grade.success,
            "expected": run.grade.expected,
            "missing": run.grade.missing,
        }
        json.dump(summary, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(format_run(run))
    return 0
