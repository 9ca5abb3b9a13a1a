"""``toolsearch-lab demo``: run a scenario through the advisor loop and print every iteration.

A run that stops without an answer (a model error, a tool-call limit) is reported as such: its errors are
printed, its token figures are labelled partial (no "saved %" for a run that did not finish) and the exit
code is 1. A finished run's saving is measured against a real all-tools run of the same task (the all-tools
row of ``toolsearch-lab compare``), with the per-request counterfactual beside it and both runs billed with
prompt caching (:func:`toolsearch_lab.eval.compare.headline`).

A conversation scenario (``--scenario support-conversation``, ``spring-7034``) runs turn by turn with chat
memory (``--memory full|window:N|compact:N``) where Spring's memory advisor sits (``--memory-advisor
none|outside|inside``), its found tools kept in the session or read back from the messages
(``--accumulation-source``; how the three combine: :mod:`toolsearch_lab.cli.chat`); each turn shows what
memory did, the tools its first request exposed, which found tools it carried or lost, its requests, and its
prompt tokens and billed cost.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from dataclasses import asdict
from typing import TYPE_CHECKING

from toolsearch_lab.cli.chat import add_chat_options, chat_choice, short_names, turn_footer, turn_header
from toolsearch_lab.cli.live_servers import add_live_options, live_catalog
from toolsearch_lab.cli.live_tools import add_destructive_option
from toolsearch_lab.cli.options import (
    EXIT_OK,
    EXIT_RUN_FAILED,
    EXIT_USAGE,
    abstention_options,
    add_abstention_options,
    add_command,
    add_json_flag,
    names_help,
    non_negative_int,
)
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.trace import ANSWERED

if TYPE_CHECKING:
    from toolsearch_lab.catalog.container import ToolCatalog
    from toolsearch_lab.eval.compare import Headline
    from toolsearch_lab.eval.scenarios import ScenarioRun
    from toolsearch_lab.models.base import ChatModel
    from toolsearch_lab.trace import RunTrace

NAME = "demo"
SUMMARY = "run a scenario through the advisor loop and print every iteration"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from toolsearch_lab.eval.scenarios import WORDINGS, list_scenarios
    from toolsearch_lab.models.factory import MODEL_NAMES
    from toolsearch_lab.models.openai import DEFAULT_MAX_RETRIES

    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Run a scenario through ToolSearchAdvisor and print each model request (numbered from 1): the tools\n"
        "exposed, the searches, the calls and the prompt tokens; then the saving against a real all-tools\n"
        "run of the same task, the per-request counterfactual, and both runs billed with prompt caching.\n"
        "--model openai reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL.",
    )
    parser.add_argument(
        "--scenario",
        default="spring-demo",
        help=names_help("shipped scenario", list_scenarios(), "a scenario JSON file"),
    )
    parser.add_argument(
        "--wording",
        choices=WORDINGS,
        help="the shipped scenario's task in its catalog's words (plain) or in a user's (user): "
        "--scenario github --wording user runs github-user (default: the scenario as named)",
    )
    parser.add_argument(
        "--examples",
        action="store_true",
        help="write the shipped example requests into the tools' descriptions (the 'better descriptions' "
        "fix for wording: searches and the model read them, and they cost prompt tokens)",
    )
    parser.add_argument("--index", default="lucene", choices=INDEX_KINDS, help="index kind behind the search")
    parser.add_argument(
        "--accumulation",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="keep tools found by every earlier search exposed; off as in Spring's demo app (the advisor's "
        "own default is on)",
    )
    parser.add_argument(
        "--model",
        default="simulated",
        choices=MODEL_NAMES,
        help="'simulated' (= 'semantic'), 'literal' and 'semantic-no-glossary' are the offline agents (see "
        "models/simulated.py: 'semantic' reads everyday words through a glossary, judges fit by meaning and "
        "skips a step it cannot do, 'semantic-no-glossary' does the same without the glossary, 'literal' "
        "judges by word overlap and stops at the first miss); 'openai' calls an OpenAI-compatible API "
        "configured by OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) and OPENAI_MODEL; 'anthropic' "
        "the Messages API configured by ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and ANTHROPIC_MODEL",
    )
    parser.add_argument(
        "--max-retries",
        type=non_negative_int,
        default=DEFAULT_MAX_RETRIES,
        help="--model openai/anthropic: how often a failed model request (429, 5xx, timeout) is retried "
        "before the run stops with an error",
    )
    add_chat_options(parser)
    add_json_flag(parser, "the trace summary (with the grade, errors and retries)")
    add_abstention_options(parser)
    add_live_options(parser, takes_file=False)
    add_destructive_option(parser)
    return parser


def build_model(args: argparse.Namespace) -> ChatModel | str:
    """The chat model to run: "simulated" (the scenario builds it), or an OpenAI or Anthropic model from the
    environment, which raises ``ModelNotConfigured`` naming what to set before anything runs."""
    from toolsearch_lab.models.openai import OpenAIChatModel

    if args.model == "openai":
        return OpenAIChatModel.from_env(max_retries=args.max_retries)
    if args.model == "anthropic":
        from toolsearch_lab.models.anthropic import AnthropicChatModel

        return AnthropicChatModel.from_env(max_retries=args.max_retries)
    return args.model


def run(args: argparse.Namespace) -> int:
    with ExitStack() as stack:
        live = live_catalog(args, stack, command=NAME)
        return _run(args, live)


def _run(args: argparse.Namespace, live: ToolCatalog | None) -> int:
    """The demo; ``live``: the tools of live MCP servers, which the scenario's steps call for real."""
    from toolsearch_lab.eval.compare import headline
    from toolsearch_lab.eval.scenarios import load_scenario
    from toolsearch_lab.models.openai import ModelNotConfigured

    index_options = abstention_options(args, args.index)
    scenario = load_scenario(
        args.scenario, args.wording, examples=args.examples, live_tools=live.tools if live else None
    )
    chat = chat_choice(args, scenario)
    try:
        model = build_model(args)
    except ModelNotConfigured as exc:
        print(f"toolsearch-lab demo: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # The real all-tools run of the same task is what the saving is measured against; against a paid API it
    # would be a second paid run, so there only the per-request counterfactual is given.
    # Live servers are not run a second time either: their tools may change things (a commit, a file).
    baseline = isinstance(model, str) and live is None
    head = headline(
        scenario,
        args.index,
        args.accumulation,
        model,
        real_baseline=baseline,
        index_options=index_options,
        **chat,
    )
    result = head.tool_search.run
    finished = result.trace.stop_reason == ANSWERED
    if args.json:
        json.dump(json_summary(result, head), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        if not finished:
            print(
                f"toolsearch-lab demo: the run stopped without an answer ({result.trace.stop_reason})",
                file=sys.stderr,
            )
    else:
        print(format_run(result, head))
    return EXIT_OK if finished else EXIT_RUN_FAILED


def json_summary(result: ScenarioRun, head: Headline | None = None) -> dict:
    """The trace summary plus the scenario, the grade, each retry, whether the run finished and (``head``) the
    saving against a real all-tools run with the billed cost; token figures of an unfinished run are marked
    partial and carry no saving."""
    trace = result.trace
    summary = trace.summary()
    summary["scenario"] = result.scenario.name
    summary["examples"] = result.scenario.examples
    summary["finished"] = trace.stop_reason == ANSWERED
    summary["retry_records"] = [
        {"iteration": it.number, **asdict(retry)} for it in trace.iterations for retry in it.retries
    ]
    if not summary["finished"]:
        summary["tokens"] = {**summary["tokens"], "partial": True, "prompt_saved_pct": None}
    elif head is not None:
        summary["headline"] = {**head.row(), "explanation": head.explanation()}
    summary["grade"] = {
        "success": result.grade.success,
        "expected": result.grade.expected,
        "missing": result.grade.missing,
        "steps_succeeded": result.grade.steps_succeeded,
        "step_success_rate": result.step_success_rate,
    }
    summary["steps"] = [asdict(step) for step in result.steps]
    if trace.turns and head is not None:
        from toolsearch_lab.eval.requests import turn_costs

        costs = {c["turn"]: c for c in turn_costs(trace, head.tool_search.costs)}
        for turn in summary["turns"]:
            bill = costs[turn["turn"]]
            turn.update(
                {k: bill[k] for k in ("cached_tokens", "uncached_tokens", "cost_usd", "steps_succeeded")}
            )
            turn["steps"] = bill["steps"]
    return summary


def _found_text(row: dict) -> str:
    if not row["found"] and row["abstained"]:
        return "no tool matches (the index abstained)"
    return short_names(row["found"])


def iteration_rows(result: ScenarioRun) -> list[dict]:
    """One row per model request, numbered from 1 as the trace numbers them."""
    rows = []
    trace = result.trace
    ends = {max(it.number for it in trace.iterations if it.turn == t.number): t for t in trace.turns}
    for it in trace.iterations:
        called = [c.name for c in it.tool_calls if c.kind != "search"]
        last = it is trace.iterations[-1] or it.number in ends
        stop = ends[it.number].stop_reason if it.number in ends else trace.stop_reason
        if not called and last:
            called_text = "(answer)" if stop == ANSWERED else f"({stop})"
        else:
            called_text = ", ".join(called) or "-"
        rows.append(
            {
                "iteration": it.number,
                "exposed": f"{len(it.exposed_tools)} (+{len(it.newly_exposed)})"
                if it.newly_exposed
                else str(len(it.exposed_tools)),
                "new": it.newly_exposed,
                "search": "; ".join(repr(s.query) for s in it.searches) or "-",
                "found": [n for s in it.searches for n in s.names],
                "abstained": any(s.abstained for s in it.searches),
                "called": called,
                "called_text": called_text,
                "tokens": it.tokens.tool_search.total,
                "baseline": it.tokens.baseline.total,
                "retries": len(it.retries),
            }
        )
    return rows


def format_run(result: ScenarioRun, head: Headline | None = None) -> str:
    trace = result.trace
    accumulation = "on" if trace.config.get("reference_tool_name_accumulation") else "off"
    abstention = f"   no tool matches: {trace.config['abstention']}" if "abstention" in trace.config else ""
    lines = [
        f"Scenario  {result.scenario.title}",
        f"Index     {trace.index}   accumulation {accumulation}   model {trace.model}   "
        f"encoding {trace.encoding}{abstention}",
    ]
    if trace.turns:
        config = trace.config
        lines.append(
            f"Memory    {config.get('memory')}   memory advisor: {config.get('memory_advisor')}   "
            f"found tools kept in: {config.get('accumulation_source')}   {len(trace.turns)} user turns"
        )
    else:
        lines.append(f"Request   {trace.user_request}")
    lines += [
        "",
        f"{'it':>2}  {'exposed':>7}  {'search query':<34} {'found':<44} {'called':<26} {'tokens':>7} "
        f"{'all tools':>9}",
    ]
    from toolsearch_lab.eval.requests import turn_costs

    turn = None
    bills = {c["turn"]: c for c in turn_costs(trace, head.tool_search.costs)} if head and trace.turns else {}
    for row, it in zip(iteration_rows(result), trace.iterations, strict=True):
        if it.turn is not None and it.turn != turn:
            if turn is not None:
                lines.append(turn_footer(bills.get(turn)))
            turn = it.turn
            lines += turn_header(trace, turn)
        lines.append(
            f"{row['iteration']:>2}  {row['exposed']:>7}  {row['search'][:34]:<34} "
            f"{_found_text(row)[:44]:<44} {row['called_text'][:26]:<26} {row['tokens']:>7,} "
            f"{row['baseline']:>9,}"
        )
    if turn is not None:
        lines.append(turn_footer(bills.get(turn)))
    lines += ["", *tokens_lines(trace, head)]
    if trace.iterations:
        lines.append(catalog_line(result))
    lines.append(stop_line(trace))
    lines += error_lines(trace)
    lines.append(retries_line(trace))
    lines += [
        f"Graded          {'successful' if result.grade.success else 'NOT successful'}: expected "
        f"{result.grade.expected}, called {result.grade.called}",
        *step_lines(result),
        "",
        "Answer:",
        trace.final_answer or "(none)",
    ]
    return "\n".join(lines)


def step_lines(result: ScenarioRun) -> list[str]:
    """Per-step grade: which steps got their tool, so one miss does not hide the steps that worked."""
    steps = result.steps
    if not steps:
        return []
    done = sum(s.success for s in steps)
    lines = [f"Steps           {done}/{len(steps)} ({100 * done / len(steps):.0f} %)"]
    for number, step in enumerate(steps, 1):
        mark = "✓" if step.success else "✗"
        ran = ", ".join(step.called) or ("no tool ran" if not step.expected else "nothing")
        expected = f"expected {', '.join(step.expected)}" if step.expected else "no tool serves it"
        lines.append(f"  {mark} {number}. {step.need[:60]} → {ran} ({expected})")
    return lines


def tokens_lines(trace: RunTrace, head: Headline | None = None) -> list[str]:
    """The headline: prompt tokens against a real all-tools run of the same task, the per-request
    counterfactual beside it with why the two differ, and both runs billed with prompt caching."""
    totals = trace.tokens_total()
    n = len(trace.iterations)
    if trace.stop_reason != ANSWERED:
        figures = (
            f"tool search {totals['prompt_tool_search']:,}   "
            f"all tools every request {totals['prompt_baseline']:,}"
        )
        return [
            f"Prompt tokens   PARTIAL, the run did not finish: {figures} over the {n} model "
            "request(s) made (no saving is given for an unfinished run)"
        ]
    ts = f"tool search {totals['prompt_tool_search']:,} ({n} requests)"
    saved = head.counterfactual_saved_pct if head is not None else totals["prompt_saved_pct"]
    per_request = (
        f"Per request     every tool in each of those {n} requests {totals['prompt_baseline']:,}   "
        f"saved {saved:.1f} %"
    )
    if head is None or head.all_tools is None:
        return [
            f"Prompt tokens   {ts}   real all-tools run not made (it would be a second run against the API "
            "or the live servers; `toolsearch-lab compare` makes it offline)",
            per_request,
        ]
    real = head.all_tools
    ratio = head.cost_pct_of_all_tools or 0.0
    price = head.tool_search.price
    cached = head.all_tools_cached_share or 0.0
    return [
        f"Prompt tokens   {ts}   real all-tools run {head.all_tools_prompt:,} ({len(real.costs)} requests)   "
        f"saved {head.saved_pct:.1f} %",
        per_request + f" (the real run needs {len(real.costs)}: it never searches)",
        f"Billed          {price.model}, {price.provider} prompt caching: tool search ${head.cost_usd:.4f}, "
        f"all tools ${head.all_tools_cost_usd:.4f} ({cached:.0%} of its prompt cached): tool search costs "
        f"{ratio:.1f} % of all tools{' (MORE)' if ratio > 100 else ''}",
    ]


def stop_line(trace: RunTrace) -> str:
    if trace.stop_reason == ANSWERED:
        return f"Stop reason     {trace.stop_reason}"
    if trace.stop_reason == "refused":
        why = "a tool call was not run (declined at the prompt, or no terminal to ask)"
        return f"Stop reason     refused: {why}, so the run stopped without an answer"
    return f"Stop reason     {trace.stop_reason}: the run stopped without an answer"


def error_lines(trace: RunTrace) -> list[str]:
    """Every error once, with the iteration it happened in (the error that stopped a run is on its
    iteration too, so run-level errors are listed only when no iteration holds them)."""
    located = [(it.number, e) for it in trace.iterations for e in it.errors]
    seen = {e for _, e in located}
    messages = [f"iteration {n}: {e}" for n, e in located] + [e for e in trace.errors if e not in seen]
    return [f"{'Errors' if i == 0 else '':<16}{m}" for i, m in enumerate(messages)]


def retries_line(trace: RunTrace) -> str:
    per_iteration = [(it.number, it.retries) for it in trace.iterations if it.retries]
    if not per_iteration:
        return "Retries         none"
    count = sum(len(r) for _, r in per_iteration)
    waited = sum(r.wait_s for _, records in per_iteration for r in records)
    parts = [
        f"iteration {n}: " + ", ".join(f"HTTP {r.status}" if r.status else r.error for r in records)
        for n, records in per_iteration
    ]
    return f"Retries         {count} ({'; '.join(parts)}; waited {waited:.1f} s in all)"


def catalog_line(result: ScenarioRun) -> str:
    from toolsearch_lab.tokens import TokenCounter

    counter = TokenCounter(result.trace.encoding)
    estimate = result.trace.iterations[0].tokens.baseline.tools
    as_json = counter.count_json([t.definition() for t in result.scenario.tools])
    described = " (descriptions with example requests)" if result.scenario.examples else ""
    line = (
        f"Catalog         {result.trace.catalog_size} tools{described}; sending them all costs {estimate:,} "
        f"prompt tokens per request (OpenAI's counting recipe), {as_json:,} tokens as the compact JSON tools "
        "array"
    )
    if estimate > 32_000:
        line += " — more than the whole 32K context window of many local models"
    return line
