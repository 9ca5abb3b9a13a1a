"""``toolsearch-lab search``: index one catalog with one index and print what the tool search tool would
return, with scores, and for an empty or odd result a hint about its real cause."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from contextlib import ExitStack
from typing import Any

from toolsearch_lab.catalog.container import SHIPPED_CATALOGS, ToolCatalog
from toolsearch_lab.cli.live_servers import add_live_options, open_catalog
from toolsearch_lab.cli.options import (
    EXIT_OK,
    EXIT_USAGE,
    abstention_options,
    add_abstention_options,
    add_command,
    add_examples_option,
    add_json_flag,
    catalog_tools,
    finite_float,
    names_help,
    positive_int,
)
from toolsearch_lab.index.factory import INDEX_KINDS
from toolsearch_lab.model import SearchConfidence, SearchRequest, SearchResponse, Tool

NAME = "search"
SUMMARY = "search a catalog with one index"
SESSION = "cli"
# The regex index's default mode, Spring's; the index checks the mode (and lists the others in its error).
KEYWORDS = "keywords"
# The constructor option that holds each kind's score threshold (the regex index has none), and the value
# that switches it off.
# Each floored index kind's min_score_threshold that lets every match through (the threshold hint's re-run)
NO_THRESHOLD: dict[str, float | None] = {"lucene": 0.0, "vector": -1.0, "hybrid": None, "learned": None}
_REGEX_SYNTAX = frozenset("\\.*+?^${}[]|()")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Index a catalog in a fresh index and run one query, as the toolSearchTool would.\n"
        'example: toolsearch-lab search --catalog github-mcp --index lucene "create a pull request"\n'
        'live:    toolsearch-lab search --mcp-config claude_desktop_config.json "show the git log"',
    )
    parser.add_argument(
        "query",
        help="what the model would send to toolSearchTool: keywords or a sentence "
        "(a regular expression with --index regex --regex-mode pattern)",
    )
    parser.add_argument(
        "--catalog",
        default=None,
        help=names_help("shipped catalog", SHIPPED_CATALOGS, "a tools JSON file (OpenAI, Anthropic or MCP)")
        + " (default: none; give this, --mcp-config or --mcp)",
    )
    add_examples_option(parser)
    parser.add_argument("--index", default="lucene", choices=INDEX_KINDS, help="index kind to search with")
    parser.add_argument(
        "--max-results",
        type=positive_int,
        default=None,
        help="at most this many results (default: the index's own default)",
    )
    parser.add_argument(
        "--min-score",
        type=finite_float,
        default=None,
        help="score threshold, the index's min_score_threshold (raw BM25 for lucene, a cosine for vector, "
        "the fused score for hybrid, a probability for learned); the regex index has none (default: the "
        "index's own threshold)",
    )
    parser.add_argument(
        "--regex-mode",
        default=KEYWORDS,
        help="regex index only: 'keywords' is Spring's RegexToolIndex (the query is split into escaped "
        "words, never read as a regex); 'pattern' reads the query as a Python regular expression",
    )
    add_json_flag(parser, "the Spring-shaped response (plus component scores for hybrid and any hints)")
    add_abstention_options(parser)
    add_live_options(parser)
    return parser


def _index_options(index_kind: str, min_score_threshold: float | None, regex_mode: str) -> dict[str, Any]:
    # The index checks the mode and make_index the threshold; their option lists live there.
    options: dict[str, Any] = {}
    if regex_mode != KEYWORDS:
        if index_kind != "regex":
            raise ValueError(f"--regex-mode applies to --index regex only, not to {index_kind!r}")
        options["mode"] = regex_mode
    if min_score_threshold is not None:
        options["min_score_threshold"] = min_score_threshold
    return options


def run_search(
    query: str,
    catalog: str | ToolCatalog,
    index_kind: str = "lucene",
    max_results: int | None = None,
    *,
    min_score_threshold: float | None = None,
    regex_mode: str = KEYWORDS,
    examples: str | None = None,
    abstention: dict[str, Any] | None = None,
) -> dict:
    """Search ``catalog`` (a loaded catalog, a shipped name or a file) with a fresh ``index_kind`` index;
    returns a JSON-able dict: the Spring-shaped response, for the hybrid index the component scores of
    every result, and ``hints`` explaining a blank query or an empty result. ``regex_mode``: the regex
    index's mode. ``examples``: example requests to write into the descriptions first
    (:func:`~toolsearch_lab.catalog.examples.load_example_requests`)."""
    from toolsearch_lab.index.factory import make_index

    tools = catalog_tools(catalog, examples)
    options = {**_index_options(index_kind, min_score_threshold, regex_mode), **(abstention or {})}
    index = make_index(index_kind, **options)
    index.index_tools(SESSION, tools)
    request = SearchRequest(SESSION, query, max_results)
    response = index.search(request)
    label = (catalog.source or "catalog") if isinstance(catalog, ToolCatalog) else catalog
    out: dict[str, Any] = {"catalog": label, "tools": len(tools), "index": index_kind}
    if examples is not None:
        out["examples"] = examples
    out.update(response.to_dict())
    if hasattr(index, "explain_search"):
        out["explain"] = [hit.to_dict() for hit in index.explain_search(request)]
    out["hints"] = hints(index, index_kind, request, response, tools, options)
    return out


def hints(
    index: Any,
    index_kind: str,
    request: SearchRequest,
    response: SearchResponse,
    tools: list[Tool],
    options: dict[str, Any],
) -> list[str]:
    """Why the result looks the way it does, when that is not obvious: a blank query, or nothing found."""
    query = request.query or ""
    if not query.strip():
        return [_blank_query_hint(index_kind, bool(response.tool_references))]
    if response.tool_references:
        return []
    if response.confidence is not None and response.abstained:
        return [_abstained_hint(index_kind, response.confidence)]
    if index_kind == "regex":
        return [_regex_hint(index, query)]
    cut = _threshold_cut(index, index_kind, request, tools, options)
    if cut:
        return [cut]
    if index_kind == "lucene":
        return [
            "no tool's name or description contains a term of the query (Lucene's StandardAnalyzer keeps "
            "identifiers whole: 'weather' does not match get_weather); the vector and hybrid indexes also "
            "match by meaning"
        ]
    return ["no tool passed the filters of this index"]


def _blank_query_hint(index_kind: str, found: bool) -> str:
    if index_kind == "regex":
        return (
            "the query is blank: Spring's keyword mode then searches with the match-all pattern '.*', so "
            "every tool matches; each line of a name or description counts as hits, so the scores say how "
            "many lines a tool's text has, not how relevant it is"
        )
    if not found:
        return f"the query is blank: it has no terms, so the {index_kind} index finds nothing"
    return (
        f"the query is blank: the {index_kind} index compares the embedding of an empty text with every "
        "tool, so these scores say nothing about relevance"
    )


def _abstained_hint(index_kind: str, confidence: SearchConfidence) -> str:
    if confidence.near_miss is not None:
        return (
            f"no tool matches: the request is a near-miss, {confidence.near_miss}; --no-near-miss returns "
            "the ranking anyway"
        )
    return (
        f"no tool matches: the {index_kind} index's confidence that some tool fits is "
        f"{confidence.value:.3f}, below its threshold {confidence.threshold:.3f} ({confidence.reason}); "
        "a lower --min-confidence or --no-abstain returns the ranking anyway"
    )


def _regex_hint(index: Any, query: str) -> str:
    if getattr(index, "mode", KEYWORDS) != KEYWORDS:
        return f"no tool's name, description or parameters match the regular expression {query!r}"
    pattern = index.convert_query_to_regex_pattern(query)
    if _REGEX_SYNTAX.intersection(query):
        return (
            f"keyword mode (Spring's RegexToolIndex) never reads the query as a regular expression: it split "
            f"it into words and escaped them, searching {pattern}, and no tool matched; for a real regular "
            "expression add --regex-mode pattern"
        )
    return f"no tool's name or description contains any of the keywords in {pattern}"


def _threshold_cut(
    index: Any, index_kind: str, request: SearchRequest, tools: list[Tool], options: dict[str, Any]
) -> str | None:
    """If the index's score threshold removed every match, say which tool came closest. Found by searching
    again with the threshold switched off, in a second index (the first stays as the user configured it)."""
    from toolsearch_lab.index.factory import make_index

    if index_kind not in NO_THRESHOLD or index.min_score_threshold is None:
        return None
    unfiltered = make_index(index_kind, **{**options, "min_score_threshold": NO_THRESHOLD[index_kind]})
    unfiltered.index_tools(SESSION, tools)
    refs = unfiltered.search(request).tool_references
    if not refs:
        return None
    threshold = index.min_score_threshold
    best = refs[0]
    flag = "--min-score" if index_kind != "vector" else "--min-score (cosine, -1 to 1)"
    return (
        f"tools matched, but every score is below the {index_kind} index's min_score_threshold {threshold} "
        f"(best: {best.tool_name} {best.relevance_score:.4f}); lower it with {flag}"
    )


def run(args: argparse.Namespace) -> int:
    from toolsearch_lab.index.regex import PatternError, PatternTimeoutError

    try:
        with ExitStack() as stack:
            catalog = open_catalog(args, stack, [args.catalog] if args.catalog else [], command=NAME)
            result = run_search(
                args.query,
                catalog,
                args.index,
                args.max_results,
                min_score_threshold=args.min_score,
                regex_mode=args.regex_mode,
                examples=args.examples,
                abstention=abstention_options(args, args.index),
            )
    except PatternError as exc:
        print(f"toolsearch-lab search: error: {exc}", file=sys.stderr)
        if not isinstance(exc, PatternTimeoutError):
            print(
                "  (--regex-mode pattern reads the query as a Python regular expression; without it the "
                "regex index searches keywords, as Spring does)",
                file=sys.stderr,
            )
        return EXIT_USAGE
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print_result(result, args.query)
    return EXIT_OK


def print_result(result: dict, query: str) -> None:
    refs = result["toolReferences"]
    print(
        f"{len(refs)} of {result['tools']} tools from {result['catalog']!r} for {query!r} "
        f"({result['index']} index)"
    )
    for hint in result["hints"]:
        print(f"  hint: {hint}")
    explain = {e["toolName"]: e for e in result.get("explain", [])}
    width = shutil.get_terminal_size((110, 20)).columns
    name_w = min(max((len(r["toolName"]) for r in refs), default=4), 40)
    for rank, ref in enumerate(refs, 1):
        score = ref.get("relevanceScore")
        score_text = f"{score:8.4f}" if score is not None else "       -"
        detail = ""
        if ref["toolName"] in explain:
            e = explain[ref["toolName"]]
            detail = f" [vec {e['vectorScore']:.3f} #{e['vectorRank']}, bm25 {e['keywordScore']:.2f}" + (
                f" #{e['keywordRank']}]" if e["keywordRank"] else " -]"
            )
        line = f"{rank:3d}. {ref['toolName']:<{name_w}} {score_text}{detail}  "
        summary = " ".join(ref["summary"].split())
        room = max(width - len(line), 20)
        print(line + (summary if len(summary) <= room else summary[: room - 1] + "…"))
