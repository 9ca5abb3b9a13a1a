#!/usr/bin/env python3
"""Draw which part of toolsearch_lab imports which, as a Mermaid graph for the README.

    python tools/import_graph.py            # prints the Mermaid block
    python tools/import_graph.py --check    # exits 1 if any arrow points up the layer order below

Parts are the subpackages and top-level modules; an arrow A --> B means some module in A imports one in B
(function-level imports included, as import-linter counts them). The layer order is the one the
import-linter contract in pyproject.toml enforces; this script only draws it.
"""

from __future__ import annotations

import argparse
import sys

import grimp

LAYERS = [
    ["cli"],
    ["ui"],
    ["eval"],
    ["loop"],
    ["models", "index", "catalog"],
    ["embed", "session", "tokens", "trace"],
    ["text", "schema"],
    ["model", "secrets", "jsonlimits", "datafiles"],
]
RANK = {part: depth for depth, parts in enumerate(LAYERS) for part in parts}


def part_edges(package: str = "toolsearch_lab") -> set[tuple[str, str]]:
    graph = grimp.build_graph(package)
    edges = set()
    for module in graph.modules:
        source = module.split(".")[1] if module.count(".") >= 1 else None
        for imported in graph.find_modules_directly_imported_by(module):
            target = imported.split(".")[1] if imported.startswith(package + ".") else None
            if source and target and source != target:
                edges.add((source, target))
    return edges


def upward(edges: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, b in edges if RANK.get(a, 99) >= RANK.get(b, 99))


def mermaid(edges: set[tuple[str, str]]) -> str:
    lines = ["```mermaid", "graph TD"]
    lines += [f"    {a} --> {b}" for a, b in sorted(edges, key=lambda e: (RANK.get(e[0], 99), e))]
    lines.append("```")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail on an arrow that points up or sideways")
    args = parser.parse_args()
    edges = part_edges()
    bad = upward(edges)
    if args.check:
        for a, b in bad:
            print(f"{a} --> {b} points up or sideways", file=sys.stderr)
        return 1 if bad else 0
    print(mermaid(edges))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
