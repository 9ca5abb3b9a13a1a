"""What the stepper shows of a replayed run (:func:`toolsearch_lab.replay.load.load_transcript`) on top of
what it shows of any run: the transcript's own search tools in place of ``toolSearchTool``, the tools each
request sent deferred, and the API's usage beside this project's count, each labelled, with what it cost
at the run's model's price (when the shipped price table has it)."""

from __future__ import annotations

from typing import Any

from toolsearch_lab.eval.cost import Price, billed_costs, load_prices
from toolsearch_lab.loop.search_tool import TOOL_SEARCH_TOOL_NAME
from toolsearch_lab.trace import CHAT_COMPLETIONS_COUNT, Iteration, RunTrace, SearchRecord
from toolsearch_lab.ui import theme as t

DEFERRED = "deferred: sent, not loaded"
DEFERRED_STYLE = {DEFERRED: {"symbol": "square", "size": 10, "color": t.BASELINE_LIGHT}}


def search_tools(trace: RunTrace) -> list[str]:
    """The names the run's searches go by: the transcript's (``tool_search_tool_regex``, ``ToolSearch``...)
    for a replayed run, else the loop's ``toolSearchTool``."""
    names = trace.replay.search_tool_names if trace.replay is not None else []
    return names or [TOOL_SEARCH_TOOL_NAME]


def context_label(trace: RunTrace, it: Iteration) -> str:
    """What the model had in context, for a heading: "toolSearchTool + 3" (escaped)."""
    searchers = search_tools(trace)
    others = len([n for n in it.exposed_tools if n not in searchers])
    return t.esc(f"{' + '.join(searchers)} + {others}")


def tool_of(it: Iteration, search: SearchRecord) -> str:
    """The tool a search called (a replay's own: ``tool_search_tool_bm25``, ``ToolSearch``...)."""
    return next((c.name for c in it.tool_calls if c.call_id == search.call_id), TOOL_SEARCH_TOOL_NAME)


def discovered(trace: RunTrace, rows: list[str]) -> int:
    """How many tool rows are tools the run discovered: not its search tools, not tools only ever deferred."""
    seen = {
        n for it in trace.iterations for n in (*it.exposed_tools, *(h for s in it.searches for h in s.names))
    }
    seen |= {c.name for it in trace.iterations for c in it.tool_calls}
    return len([r for r in rows if r in seen and r not in search_tools(trace)])


def deferred_cells(i: int, it: Iteration) -> list[tuple[str, str, str]]:
    """(kind, tool, hover) of the iteration's deferred tools: named to the API, not in the model's context."""
    return [(DEFERRED, name, f"request {i}: {name} sent deferred (not loaded)") for name in it.deferred]


def replay_details(trace: RunTrace, it: Iteration) -> list[str]:
    """The deferred tools and the API's usage of one replayed request (nothing for the loop's own runs)."""
    parts = []
    if it.deferred:
        chips = "".join(t.chip(n, t.MUTED, t.BASELINE_LIGHT) for n in it.deferred)
        parts.append(
            f"<div style='margin-top:4px'><b>Deferred</b> {t.muted(f'({len(it.deferred)} sent, not loaded)')}"
            f"<br>{chips}</div>"
        )
    usage = it.tokens.api_usage
    if trace.replay is not None and usage:
        price = run_price(trace)
        cost = f"; cost <b>${billed(usage, price):.4f}</b> at {t.esc(price.model)} prices" if price else ""
        parts.append(
            f"<div style='margin-top:6px'><b>The API's usage</b> (from the transcript): prompt "
            f"<b>{usage.get('prompt_tokens', 0):,}</b> = {usage.get('cached_tokens') or 0:,} read from the "
            f"cache + {usage.get('cache_write_tokens') or 0:,} written to it + the rest; output "
            f"{usage.get('completion_tokens', 0):,}{cost}. {t.muted(our_count_label(trace))}</div>"
        )
    return parts


def run_price(trace: RunTrace) -> Price | None:
    """The shipped price table's price for the replayed run's model, if it has one."""
    return load_prices().for_model(trace.model)


def billed(usage: dict[str, Any], price: Price) -> float:
    """USD of one request's API usage at ``price``."""
    return billed_costs([usage], price)[0].cost_usd


def our_count_label(trace: RunTrace) -> str:
    counted = trace.replay.our_count if trace.replay is not None else CHAT_COMPLETIONS_COUNT
    return f"Ours: this project's o200k count of {counted}; the provider's tokenizer differs."


def replay_status(trace: RunTrace) -> str:
    """The status line's part for a replayed run: where it came from and the API's totals."""
    replay = trace.replay
    if replay is None:
        return ""
    prompt = sum((it.tokens.api_usage or {}).get("prompt_tokens") or 0 for it in trace.iterations)
    cached = sum((it.tokens.api_usage or {}).get("cached_tokens") or 0 for it in trace.iterations)
    price, cost = run_price(trace), ""
    if price is not None:
        dollars = sum(billed(it.tokens.api_usage, price) for it in trace.iterations if it.tokens.api_usage)
        cost = f", costing ${dollars:.4f} at {t.esc(price.model)} prices"
    source = t.esc(f"{replay.file or 'a transcript'} ({replay.format})")
    note = f"<br>{t.muted(t.esc(t.clip(replay.provenance, 300)))}" if replay.provenance else ""
    uncounted = (
        ""
        if replay.counts_definitions
        else "<br>Our counts above leave out every tool definition: the file holds none, so they show no "
        "saving (load it with <code>catalog=</code> to count the deferred tools)."
    )
    return (
        f"<div>Replayed from <b>{source}</b>: the API's own usage {prompt:,} prompt tokens "
        f"({cached:,} read from the cache){cost}{note}{uncounted}</div>"
    )


VARIANT_WORDS = {  # how a replayed run's search tool searched (trace.source.SearchVariant), in words
    "regex": "regex, run by Anthropic",
    "bm25": "BM25, run by Anthropic",
    "hosted": "run by OpenAI",
    "client": "run by the caller",
}


def replay_search_settings(trace: RunTrace) -> tuple[str, str]:
    """A replayed run's search as its provider ran it: the search tools and how each searched, and how many
    results its searches asked for (each search's own ``max_results``; none asked: the provider's limit).
    The stepper shows these in place of the lab's index and maxResults, which did not run."""
    assert trace.replay is not None, "replay_search_settings reads a replayed trace"
    tools = [f"{s.name} ({VARIANT_WORDS[s.variant]})" for s in trace.replay.search_tools]
    asked = sorted({s.max_results for s in trace.searches() if s.max_results is not None})
    limit = ", ".join(map(str, asked)) if asked else "none asked: the provider's own limit"
    return ", ".join(tools) or "no search tool", limit


def catalog_name(name: str) -> str:
    """A replayed tool's name as a catalog has it: ``mcp__github__list_issues`` and
    ``github_issues.list_issues`` are ``list_issues``."""
    if name.startswith("mcp__"):
        return name.split("__", 2)[-1]
    return name.rsplit(".", 1)[-1]


def replay_summary(trace: RunTrace | None) -> str:
    """One sentence on a replayed run's tools and usage, for the token dashboard ("" for other runs)."""
    if trace is None or trace.replay is None or not trace.iterations:
        return ""
    loaded = {n for it in trace.iterations for s in it.searches for n in s.names}
    prompt = sum((it.tokens.api_usage or {}).get("prompt_tokens") or 0 for it in trace.iterations)
    ours = trace.tokens_total()["prompt_tool_search"]
    return t.muted(
        f" Replayed run: its first request sent {len(trace.iterations[0].deferred)} tools deferred, its "
        f"searches loaded {len(loaded)}; the API reported {prompt:,} prompt tokens over the run, our count "
        f"says {ours:,}. " + our_count_label(trace)
    )
