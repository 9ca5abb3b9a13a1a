"""Every Python snippet in the README and in docs/ runs, so none can rot.

Each Markdown file's ```python blocks run in order in one namespace, in a fresh interpreter whose working
directory is an empty temporary folder, with its own embedding cache, no ``OPENAI_*`` variables and no way
to open a connection beyond 127.0.0.1. A block fenced ```python no-run is shown, not run: that marker is for
the few snippets that need a real API key or a live server, and their number is capped here so it cannot
quietly grow. Every ``toolsearch-lab COMMAND --option`` written in a file's code must name a real command
and one of its options.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NO_RUN = "no-run"
# The snippets that need a real API key or a live server; raise it only for another one of those.
MAX_NO_RUN_BLOCKS = 4

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    info: str  # the fence's info string: "python", "python no-run", "bash", ...
    source: str

    @property
    def language(self) -> str:
        return self.info.split()[0].lower() if self.info.split() else ""

    @property
    def runs(self) -> bool:
        return self.language in ("python", "py") and NO_RUN not in self.info.split()[1:]


def fenced_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order; an unclosed fence is an error naming its line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence = opening["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence) and set(lines[j].strip()) == {fence[0]}
        ):
            body.append(lines[j])
            j += 1
        if j == len(lines):
            raise AssertionError(f"{path.name}:{i + 1}: code fence {fence!r} is never closed")
        blocks.append(Block(path, i + 1, opening["info"].strip(), "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in DOC_FILES for block in fenced_blocks(path)]


# Runs in the child interpreter: refuse every connection that is not to this machine, then run the blocks.
RUNNER = r"""
import ipaddress, json, socket, sys, traceback

def _refuse_remote(address):
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return
    host = address[0]
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        if host == "localhost":
            return
    raise OSError(f"docs snippet tried to reach {address!r}: snippets run without network")

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
def connect(self, address):
    _refuse_remote(address)
    return _connect(self, address)
def connect_ex(self, address):
    _refuse_remote(address)
    return _connect_ex(self, address)
socket.socket.connect, socket.socket.connect_ex = connect, connect_ex

blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for block in blocks:
    code = compile(block["source"], f"{block['file']}, block at line {block['line']}", "exec")
    try:
        exec(code, namespace)
    except BaseException:
        print(f"FAILED: {block['file']}, the ```python block at line {block['line']}:", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
print(f"ran {len(blocks)} blocks")
"""


def child_env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    env["TOOLSEARCH_LAB_CACHE"] = str(tmp_path / "cache")
    env["MPLBACKEND"] = "Agg"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


FILES_WITH_SNIPPETS = [path for path in DOC_FILES if any(b.runs for b in fenced_blocks(path))]


@pytest.mark.parametrize("path", FILES_WITH_SNIPPETS, ids=lambda p: p.relative_to(ROOT).as_posix())
@pytest.mark.slow
def test_python_snippets_run(path: Path, tmp_path: Path) -> None:
    blocks = [
        {"file": path.relative_to(ROOT).as_posix(), "line": b.line, "source": b.source}
        for b in fenced_blocks(path)
        if b.runs
    ]
    work = tmp_path / "cwd"
    work.mkdir()
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    # The timeout only guards against a hang; it says nothing about speed.
    done = subprocess.run(
        [sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "blocks.json")],
        cwd=work,
        env=child_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert f"ran {len(blocks)} blocks" in done.stdout


def test_no_run_blocks_are_few_and_python() -> None:
    skipped = [b for b in all_blocks() if NO_RUN in b.info.split()]
    for block in skipped:
        assert block.language == "python", f"{block.path.name}:{block.line}: {NO_RUN} only applies to python"
    assert len(skipped) <= MAX_NO_RUN_BLOCKS, [f"{b.path.name}:{b.line}" for b in skipped]


def test_every_fence_says_its_language() -> None:
    # A bare ``` block would silently escape the snippet test if it held Python.
    unnamed = [f"{b.path.name}:{b.line}" for b in all_blocks() if not b.language]
    assert not unnamed, f"code fences without a language: {unnamed}"


def code_text(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line of code in a Markdown file: fenced blocks, indented blocks and
    `inline code` spans."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced: set[int] = set()
    out: list[tuple[int, str]] = []
    for block in fenced_blocks(path):
        for offset, line in enumerate(block.source.splitlines(), start=1):
            fenced.add(block.line + offset)
            out.append((block.line + offset, line))
        fenced.add(block.line)
        fenced.add(block.line + len(block.source.splitlines()) + 1)
    for number, line in enumerate(lines, start=1):
        if number in fenced:
            continue
        if line.startswith("    ") and line.strip():
            out.append((number, line))
        out.extend((number, span) for span in re.findall(r"`([^`]+)`", line))
    return out


COMMAND_USE = re.compile(r"(?:^|[\s$(`])toolsearch-lab ([a-z][a-z0-9-]*)((?: +[^\s|#`]+)*)")


def cli_commands() -> dict[str, set[str]]:
    from toolsearch_lab.cli.main import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {name: set(sub._option_string_actions) for name, sub in subparsers.choices.items()}


def test_every_command_written_in_the_docs_exists() -> None:
    commands = cli_commands()
    problems = []
    for path in DOC_FILES:
        for number, text in code_text(path):
            for match in COMMAND_USE.finditer(text):
                command, rest = match[1], match[2]
                where = f"{path.relative_to(ROOT)}:{number}"
                if command not in commands:
                    problems.append(f"{where}: no command {command!r} in `toolsearch-lab {command}`")
                    continue
                for option in re.findall(r"(?:^|\s)(--[a-z][a-z0-9-]*)", rest):
                    if option not in commands[command]:
                        problems.append(f"{where}: `toolsearch-lab {command}` has no option {option}")
    assert not problems, "\n".join(problems)


def test_the_docs_name_every_command() -> None:
    documented = {
        match[1] for path in DOC_FILES for _, text in code_text(path) for match in COMMAND_USE.finditer(text)
    }
    missing = sorted(set(cli_commands()) - documented)
    assert not missing, f"commands the README and docs never show: {missing}"


def test_the_snippet_reader_finds_python(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```python\nx = 1\n```\n\n```python no-run\nclient.call()\n```\n\n````bash\n```\n````\n",
        encoding="utf-8",
    )
    blocks = fenced_blocks(page)
    assert [(b.line, b.info, b.runs) for b in blocks] == [
        (3, "python", True),
        (7, "python no-run", False),
        (11, "bash", False),
    ]
    assert blocks[0].source == "x = 1\n"
    assert blocks[2].source == "```\n"
    page.write_text("```python\nnever closed\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="never closed"):
        fenced_blocks(page)


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
HEADLINE_SCENARIOS = ("spring-demo", "github", "livemcpbench")


HEADLINE_PAGES = ("README.md", "docs/compare.md")


def headline_rows(page: str) -> dict[str, list[float]]:
    """Every number of each row of a page's headline-savings table, in order, by scenario."""
    rows = {}
    for line in (ROOT / page).read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = cells[0].split(" ")[0] if cells and cells[0] else ""
        if line.startswith("|") and name in HEADLINE_SCENARIOS and len(cells) == 5:
            rows[name] = [float(n.replace(",", "")) for n in NUMBER.findall(" ".join(cells))]
    return rows


@pytest.mark.parametrize("scenario", HEADLINE_SCENARIOS)
def test_headline_savings_are_what_demo_and_compare_measure(scenario: str) -> None:
    from toolsearch_lab import load_scenario
    from toolsearch_lab.eval.compare import headline

    head = headline(scenario)  # what `toolsearch-lab demo --scenario NAME` prints (accumulation off)
    real = head.all_tools
    assert real is not None
    cost_pct = head.cost_pct_of_all_tools
    assert head.saved_pct is not None and cost_pct is not None
    last = round(cost_pct - 100, 1) if cost_pct > 100 else round(cost_pct, 1)  # "costs X % more" / "X % of"
    measured = [
        len(load_scenario(scenario).tools),
        head.prompt,
        len(head.tool_search.costs),
        head.counterfactual_prompt,
        round(head.counterfactual_saved_pct, 1),
        head.all_tools_prompt,
        len(real.costs),
        round(head.saved_pct, 1),
        round(head.cost_usd, 4),
        round(head.all_tools_cost_usd or 0.0, 4),
        last,
    ]
    for page in HEADLINE_PAGES:
        rows = headline_rows(page)
        assert scenario in rows, f"{page}: the headline table has no {scenario} row"
        assert rows[scenario] == measured, page


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def prose(path: Path) -> str:
    """A Markdown file without its code blocks and `code spans`, where brackets are not links."""
    kept, in_code = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            kept.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(kept)


def test_links_between_the_pages_resolve() -> None:
    broken = []
    for path in DOC_FILES:
        for target in LINK.findall(prose(path)):
            if re.match(r"[a-z]+:", target):
                continue  # a web address: not checked (no network)
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked):
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_readme_terminal_output_is_what_demo_prints(capsys: pytest.CaptureFixture[str]) -> None:
    from toolsearch_lab.cli.main import main

    block = next(b for b in fenced_blocks(ROOT / "README.md") if b.language == "console")
    command, *shown = block.source.splitlines()
    assert command.startswith("$ toolsearch-lab ")
    assert main(command.removeprefix("$ toolsearch-lab ").split()) == 0
    printed = capsys.readouterr().out.splitlines()
    missing = [line for line in shown if line not in ("", "...") and line not in printed]
    assert not missing, f"README shows lines `{command[2:]}` no longer prints: {missing}"


def test_readme_accumulation_figures_are_measured() -> None:
    from toolsearch_lab.eval.compare import headline

    head = headline("github", accumulation=True)
    assert head.saved_pct is not None and head.cost_pct_of_all_tools is not None
    sentence = (
        f"github sends {head.prompt:,} tokens ({head.saved_pct:.1f} % saved against the real run, "
        f"{head.cost_pct_of_all_tools:.1f} % of its bill)"
    )
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert sentence in readme
