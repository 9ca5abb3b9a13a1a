"""``toolsearch-lab search QUERY --catalog NAME|FILE [--index KIND] [--max-results N] [--json]``: index one
catalog with one index and print what the tool search tool would return, with scores."""

from __future__ import annotations

import json
import shutil
from typing import Any

from toolsearch_lab.model import SearchRequest

SESSION = "cli"


def run_search(query: str, catalog: str, index_kind: str = "lucene", max_results: int | None = None) -> dict:
    """Search ``catalog`` (shipped name or file) with a fresh ``index_kind`` index; returns a JSON-able dict:
    the Spring-shaped response plus, for the hybrid index, the component scores of every result."""
    from toolsearch_lab.catalog.container import load_catalog
    from toolsearch_lab.index.factory import make_index

    tools = load_catalog(catalog).tools
    index = make_index(index_kind)
    index.index_tools(SESSION, tools)
    request = SearchRequest(SESSION, query, max_results)
    response = index.search(request)
    out: dict[str, Any] = {"catalog": catalog, "tools": len(tools), "index": index_kind, **response.to_dict()}
    if hasattr(index, "explain_search"):
        out["explain"] = [hit.to_dict() for hit in index.explain_search(request)]
    return out


def search_command(args: Any) -> int:
    result = run_search(args.query, args.catalog, args.index, args.max_results)
    if getattr(args, "json", False):
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    refs = result["toolReferences"]
    print(
        f"{len(refs)} of {result['tools']} tools from {result['catalog']!r} for {args.query!r} ({args.index} index)"
    )
    if not refs:
        print("  (no tool matched; the lucene and vector indexes drop low scores, try --index hybrid)")
        return 0
    explain = {e["toolName"]: e for e in result.get("explain", [])}
    width = shutil.get_terminal_size((110, 20)).columns
    name_w = min(max(len(r["toolName"]) for r in refs), 40)
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
    return 0
