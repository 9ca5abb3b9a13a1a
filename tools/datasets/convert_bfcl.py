#!/usr/bin/env python3
"""BFCL v4 (PyPI ``bfcl-eval`` 2026.3.23, Apache-2.0: the Berkeley Function Calling Leaderboard) -> the
shipped ``data/bfcl/turns.json``, ``data/bfcl/tasks.json``, ``data/offcatalog/bfcl-irrelevance.tsv`` and
``data/bfcl-live/requests.json``. Standard library only:

    pip download --no-deps -d /tmp/bfcl bfcl-eval==2026.3.23
    (cd /tmp/bfcl && unzip -q bfcl_eval-2026.3.23-py3-none-any.whl)
    python tools/datasets/convert_bfcl.py /tmp/bfcl/bfcl_eval/data

Tools: the 128 functions of the 8 multi-turn API classes (``multi_turn_func_doc/*.json``; the memory_* and
web_search docs belong to other categories). BFCL's type names are mapped to JSON Schema (dict -> object,
float -> number, tuple -> array, any -> no type), the "response" schema is dropped (a model never sees
it), descriptions are verbatim. category = the API class (the "server").

Queries, from BFCL_v4_multi_turn_base.json and its possible_answer: ``turns.json`` has one query per user
turn (the 3 turns with an empty ground truth are left out), relevant = the functions of that turn's
ground-truth calls; ``tasks.json`` one query per task, its turns joined, relevant = their union. Each
query's ``domain`` is the API classes of its relevant tools, joined with "+".

``bfcl-irrelevance.tsv``: the 240 questions of BFCL_v4_irrelevance.json (whitespace normalised), as
requests the GitHub catalog cannot serve (none is about GitHub).

``bfcl-live/requests.json``: BFCL's "live" categories (user-contributed requests, each with its own catalog
of functions): every entry of ``BFCL_v4_live_{simple,multiple,parallel,parallel_multiple,relevance,
irrelevance}.json`` whose catalog has 1 to 12 functions. The request is the last user message, stripped
(system prompts and earlier messages are left out); ``relevant_tools`` are the functions of the ground-truth
calls (all the catalog's functions for ``relevance``, where any call is right; none for ``irrelevance``);
``arguments`` the first accepted value of each ground-truth argument (BFCL's "" = may be left out is
skipped). Identical catalogs are stored once, keyed by the first 12 hex digits of the sha256 of their
canonical JSON; a catalog whose key's first digit is even goes to the ``choice`` split, odd to ``held-out``
(the same catalog never sits in both).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
CLASSES = {
    "gorilla_file_system": "GorillaFileSystem",
    "math_api": "MathAPI",
    "message_api": "MessageAPI",
    "posting_api": "TwitterAPI",
    "ticket_api": "TicketAPI",
    "trading_bot": "TradingBot",
    "travel_booking": "TravelAPI",
    "vehicle_control": "VehicleControlAPI",
}
TYPES = {"dict": "object", "float": "number", "tuple": "array"}
CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def fix(schema):
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "type" and isinstance(value, str):
                if value != "any":
                    out[key] = TYPES.get(value, value)
            else:
                out[key] = fix(value)
        return out
    if isinstance(schema, list):
        return [fix(v) for v in schema]
    return schema


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tools_and_owners(src: Path) -> tuple[list[dict], dict[str, str]]:
    tools, owner = [], {}
    for stem, cls in CLASSES.items():
        for f in lines(src / "multi_turn_func_doc" / f"{stem}.json"):
            if f["name"] in owner:
                raise SystemExit(f"duplicate tool {f['name']}")
            owner[f["name"]] = cls
            record = {"name": f["name"], "description": f["description"], "parameters": fix(f["parameters"])}
            tools.append({**record, "category": cls})
    return tools, owner


def queries(src: Path, owner: dict[str, str]) -> tuple[list[dict], list[dict]]:
    answers = {
        a["id"]: a["ground_truth"] for a in lines(src / "possible_answer" / "BFCL_v4_multi_turn_base.json")
    }
    turns, tasks = [], []
    for entry in lines(src / "BFCL_v4_multi_turn_base.json"):
        truth = answers[entry["id"]]
        if len(truth) != len(entry["question"]):
            raise SystemExit(f"{entry['id']}: {len(truth)} answers for {len(entry['question'])} turns")
        texts, union = [], []
        for t, (messages, calls) in enumerate(zip(entry["question"], truth, strict=True)):
            text = " ".join(m["content"].strip() for m in messages if m["role"] == "user")
            relevant = list(dict.fromkeys(CALL.match(c).group(1) for c in calls))
            unknown = [r for r in relevant if r not in owner]
            if unknown:
                raise SystemExit(f"{entry['id']} turn {t}: unknown {unknown}")
            texts.append(text)
            union.extend(relevant)
            if relevant and text:
                domain = "+".join(sorted({owner[r] for r in relevant}))
                turns.append(
                    {
                        "id": f"{entry['id']}/turn{t}",
                        "query": text,
                        "relevant_tools": relevant,
                        "domain": domain,
                    }
                )
        union = list(dict.fromkeys(union))
        domain = "+".join(sorted({owner[r] for r in union}))
        tasks.append({"id": entry["id"], "query": " ".join(texts), "relevant_tools": union, "domain": domain})
    return turns, tasks


def irrelevance(src: Path) -> list[str]:
    out = []
    for row in lines(src / "BFCL_v4_irrelevance.json"):
        turn = row["question"][0]
        text = turn[-1]["content"] if isinstance(turn, list) else str(turn)
        out.append(" ".join(text.split()))
    return out


LIVE = ("simple", "multiple", "parallel", "parallel_multiple", "relevance", "irrelevance")
LIVE_SIZES = range(1, 13)


def _first_values(arguments: dict) -> dict:
    """The first accepted value of each ground-truth argument; "" (BFCL: may be left out) is skipped."""
    out = {}
    for name, accepted in arguments.items():
        values = [v for v in accepted if v != ""] if isinstance(accepted, list) else [accepted]
        if values:
            value = values[0]
            out[name] = _first_values(value) if isinstance(value, dict) else value
    return out


def live(src: Path) -> dict:
    """The live categories as {"catalogs": {key: tools}, "requests": [...]} (see the module docstring)."""
    catalogs: dict[str, list[dict]] = {}
    requests = []
    for category in LIVE:
        answers = {}
        answer_file = src / "possible_answer" / f"BFCL_v4_live_{category}.json"
        if answer_file.is_file():
            answers = {a["id"]: a["ground_truth"] for a in lines(answer_file)}
        for entry in lines(src / f"BFCL_v4_live_{category}.json"):
            functions = entry["function"]
            if len(functions) not in LIVE_SIZES:
                continue
            tools = [
                {"name": f["name"], "description": f["description"], "parameters": fix(f["parameters"])}
                for f in functions
            ]
            canonical = json.dumps(sorted(tools, key=lambda t: t["name"]), sort_keys=True, ensure_ascii=False)
            key = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]
            catalogs.setdefault(key, tools)
            text = next(m["content"] for m in reversed(entry["question"][-1]) if m["role"] == "user").strip()
            calls = answers.get(entry["id"], [])
            if category == "relevance":
                relevant = [t["name"] for t in tools]
            else:
                relevant = list(dict.fromkeys(name for call in calls for name in call))
            names = {t["name"] for t in tools}
            if category != "irrelevance" and (not relevant or set(relevant) - names):
                raise SystemExit(
                    f"{entry['id']}: ground truth {relevant} outside its catalog {sorted(names)}"
                )
            arguments = {name: _first_values(args) for call in calls for name, args in call.items()}
            requests.append(
                {
                    "id": entry["id"],
                    "category": category,
                    "split": "choice" if int(key[0], 16) % 2 == 0 else "held-out",
                    "catalog": key,
                    "query": text,
                    "relevant_tools": relevant,
                    "arguments": {name: arguments[name] for name in relevant if name in arguments},
                }
            )
    return {
        "source": "BFCL v4 live categories, bfcl-eval 2026.3.23 (catalogs of 1 to 12 functions)",
        "catalogs": catalogs,
        "requests": requests,
    }


def main() -> None:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "bfcl_eval/data")
    tools, owner = tools_and_owners(src)
    turns, tasks = queries(src, owner)
    for name, found in (("turns", turns), ("tasks", tasks)):
        doc = {
            "source": f"BFCL v4 multi_turn_base ({name}), bfcl-eval 2026.3.23",
            "tools": tools,
            "queries": found,
        }
        (DATA / "bfcl" / f"{name}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    with (DATA / "offcatalog" / "bfcl-irrelevance.tsv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow(["catalog", "kind", "query", "why", "batch"])
        writer.writerows(["github-mcp", "off-domain", q, "", "bfcl"] for q in irrelevance(src))
    print(f"{len(tools)} tools, {len(turns)} turns, {len(tasks)} tasks, {len(irrelevance(src))} questions")
    found = live(src)
    (DATA / "bfcl-live").mkdir(exist_ok=True)
    text = json.dumps(found, indent=1, ensure_ascii=False) + "\n"
    (DATA / "bfcl-live" / "requests.json").write_text(text, encoding="utf-8")
    print(f"live: {len(found['requests'])} requests over {len(found['catalogs'])} catalogs")


if __name__ == "__main__":
    main()
