#!/usr/bin/env python3
"""Draw which part of toolsearch_lab imports which, and check the structure: no circles, no arrows up.

    python tools/import_graph.py            # prints the Mermaid block for docs/architecture.md
    python tools/import_graph.py --check    # exits 1 on an import circle or an arrow up, naming each

Parts are the subpackages and top-level modules; an arrow A --> B means some module in A imports one in B
(function-level and TYPE_CHECKING imports included, as import-linter counts them). The layer order is read
from the import-linter layers contract in pyproject.toml, the one place it is written; the package's front
door (``toolsearch_lab/__init__``) sits above every layer, so any part importing it points up. A circle is
a set of modules that import each other, directly or through others (a deferred import hides one from
Python, not from this check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grimp
import tomllib

PACKAGE = "toolsearch_lab"
FRONT_DOOR = "(front door)"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def layers() -> list[list[str]]:
    """The parts of each layer, top first, from the layers contract in pyproject.toml."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[part.strip() for part in layer.split("|")] for layer in contract["layers"]]


def part_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") >= 1 else FRONT_DOOR


def module_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {
        m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules if m.startswith(PACKAGE)
    }


def part_edges(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {
        (part_of(a), part_of(b))
        for a, targets in edges.items()
        for b in targets
        if b.startswith(PACKAGE) and part_of(a) != part_of(b)
    }


def upward(parts: set[tuple[str, str]], rank: dict[str, int]) -> list[tuple[str, str]]:
    """Arrows from a part to one at its own layer or above (the front door is above everything)."""
    return sorted((a, b) for a, b in parts if a != FRONT_DOOR and rank.get(a, 99) >= rank.get(b, -1))


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Modules that reach each other through imports (Tarjan's strongly connected components of size > 1,
    or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(root: str) -> None:
        # Iterative, so a long chain of modules cannot exhaust Python's recursion limit.
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(found)


def mermaid(parts: set[tuple[str, str]], rank: dict[str, int]) -> str:
    lines = ["```mermaid", "graph TD"]
    lines += [f"    {a} --> {b}" for a, b in sorted(parts, key=lambda e: (rank.get(e[0], -1), e))]
    lines.append("```")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail on an import circle or an arrow up")
    args = parser.parse_args()
    rank = {part: depth for depth, parts in enumerate(layers()) for part in parts}
    edges = module_edges(grimp.build_graph(PACKAGE))
    parts = part_edges(edges)
    if not args.check:
        print(mermaid(parts, rank))
        return 0
    up, loops = upward(parts, rank), circles(edges)
    for a, b in up:
        print(f"arrow up: {a} --> {b}", file=sys.stderr)
    for loop in loops:
        print(f"import circle: {' <-> '.join(loop)}", file=sys.stderr)
    print(
        f"{len(edges)} modules, {len(parts)} arrows between parts: {len(loops)} circles, {len(up)} arrows up"
    )
    return 1 if up or loops else 0


if __name__ == "__main__":
    raise SystemExit(main())
