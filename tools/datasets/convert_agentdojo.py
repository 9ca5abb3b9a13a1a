#!/usr/bin/env python3
"""AgentDojo (ethz-spylab/agentdojo, MIT) -> the shipped ``data/agentdojo/normalized.json``.

Run with a separate virtual environment that has the PyPI package installed (it needs its own
dependencies to compute the ground truths):

    python3 -m venv /tmp/agentdojo && /tmp/agentdojo/bin/pip install agentdojo==0.1.35
    /tmp/agentdojo/bin/python tools/datasets/convert_agentdojo.py

The suites are loaded through AgentDojo's own API (get_suites), so tools are exactly what AgentDojo sends a
model (name, description = docstring short + long description, parameters = the pydantic input schema) and
the relevant tools are the function names of each user task's ``ground_truth(environment)`` calls on the
suite's default environment (duplicates dropped, order kept). Nothing is edited by hand.

Writes data/agentdojo/normalized.json: all four suites, one merged 69-tool catalog (the 5 calendar and
e-mail tools shared by workspace and travel are one tool). AgentDojo is the held-out benchmark: nothing in
the package is trained or tuned on it.
"""

import json
import sys
from pathlib import Path

from agentdojo.task_suite.load_suites import get_suites

VERSION = sys.argv[1] if len(sys.argv) > 1 else "v1.2.2"  # AgentDojo's default benchmark version
OUT = Path(__file__).resolve().parents[2] / "data" / "agentdojo"


def server_of(function) -> str:
    # The module that implements the tool is the "server" (an MCP server would group them the same way):
    # agentdojo.default_suites.v1.tools.email_client -> email_client
    return function.run.__module__.rsplit(".", 1)[-1]


def schema(function) -> dict:
    s = function.parameters.model_json_schema()
    s.pop("title", None)
    for p in s.get("properties", {}).values():
        p.pop("title", None)
    return s


def main() -> None:
    suites = get_suites(VERSION)
    merged: dict[str, dict] = {}
    queries = []
    for sname, suite in suites.items():
        for f in suite.tools:
            rec = {
                "name": f.name,
                "description": f.description,
                "parameters": schema(f),
                "category": server_of(f),
            }
            if f.name in merged and merged[f.name] != rec:
                raise SystemExit(f"tool {f.name} differs between suites")
            merged.setdefault(f.name, rec)
        env = suite.load_and_inject_default_environment({})
        qs = []
        for tid, task in suite.user_tasks.items():
            calls = task.ground_truth(env.model_copy(deep=True))
            rel = list(dict.fromkeys(c.function for c in calls))
            if not rel:
                raise SystemExit(f"{sname}/{tid}: empty ground truth")
            qs.append({"id": f"{sname}/{tid}", "query": task.PROMPT, "relevant_tools": rel, "domain": sname})
        queries.extend(qs)
    source = f"agentdojo {VERSION} (all four suites, merged catalog)"
    doc = {"source": source, "tools": list(merged.values()), "queries": queries}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "normalized.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"{VERSION}: {len(merged)} tools, {len(queries)} tasks")


if __name__ == "__main__":
    main()
