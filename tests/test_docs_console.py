"""Every ```console block in docs/ shows what the commands print today.

A block is a little shell session: ``$ toolsearch-lab …`` lines are run (the package's own entry point, in a
sandbox folder that plays ``/tmp/walk``, the folder the page works in), ``$ cat FILE`` writes the file the
block shows (the docs show files that way) and prints it, ``$ export``/``$ unset`` set the environment of
the commands after them, and ``$ echo $?`` prints the last exit code. The lines shown under a command must
appear in what it printed, in order; a line ``…`` stands for lines left out, a line ending in ``…`` for its
own end. Only the parts declared in :data:`VOLATILE` may differ (timings). The sandbox holds the files the
page describes before its first block: the two git repositories, and the config files of its ```json blocks
(:data:`FIXTURES`).

The sandbox's path stands for ``/tmp/walk`` in the page's files and commands, and ``/tmp/walk`` for it in
what the commands print. No path the page shows may reach a model request (it would count tokens): the page's
scenario names its repository relative to the folder the command runs in.

The MCP servers are PyPI's reference servers (``TOOLSEARCH_LAB_MCP_BIN`` names their ``bin`` folder, as for
tests/test_mcp_real_servers.py); without them the test skips, except under ``CI=true``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs_snippets import fenced_blocks

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
WALK = "/tmp/walk"  # the folder the pages' commands run in
# What may differ between a run and the page: how long a command took.
VOLATILE = (r"\d+(?:\.\d+)? s\b",)
# The files each page describes before its console blocks: (file in the sandbox, a text the ```json block of
# the page that holds it contains).
FIXTURES = {
    "mcp.md": {"claude_desktop_config.json": '"mcpServers"', ".vscode/mcp.json": '"servers"'},
}
ELIDED = ("…", "...")


def console_blocks(path: Path):
    return [b for b in fenced_blocks(path) if b.language == "console"]


PAGES = [p for p in DOCS if console_blocks(p)]


def _servers_path() -> str:
    folder = os.environ.get("TOOLSEARCH_LAB_MCP_BIN")
    missing = [n for n in ("mcp-server-git", "mcp-server-time") if not shutil.which(n, path=folder)]
    if missing:
        reason = f"{', '.join(missing)} not installed (pip install them, or set TOOLSEARCH_LAB_MCP_BIN)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    return folder or ""


def _sandbox(page: Path, walk: Path) -> None:
    """The folder the page's commands run in: two git repositories on branch main with an untracked file,
    and the page's config files."""
    for name in ("alpha", "beta"):
        repo = walk / name
        repo.mkdir(parents=True)
        git = ["git", "-C", str(repo), "-c", "user.email=docs@example.com", "-c", "user.name=docs"]
        subprocess.run([*git[:3], "init", "-q", "-b", "main"], check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
        (repo / "notes.txt").write_text("not committed yet\n")
    json_blocks = [b for b in fenced_blocks(page) if b.language == "json"]
    for target, marker in FIXTURES.get(page.name, {}).items():
        block = next(b for b in json_blocks if marker in b.source)
        (walk / target).parent.mkdir(parents=True, exist_ok=True)
        (walk / target).write_text(block.source.replace(WALK, str(walk)))


def _sessions(source: str) -> list[tuple[str, list[str]]]:
    """(command, the lines shown under it) for each ``$`` line of a block."""
    out: list[tuple[str, list[str]]] = []
    for line in source.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def _pattern(shown: str) -> re.Pattern:
    """A shown line as a pattern: the volatile parts as wildcards, a trailing … as "and more"."""
    text, open_end = (shown[:-1].rstrip(), True) if shown.endswith("…") else (shown, False)
    parts = re.split("(" + "|".join(VOLATILE) + ")", text)
    body = "".join(r"\d+(?:\.\d+)? s\b" if i % 2 else re.escape(part) for i, part in enumerate(parts))
    return re.compile(body + (".*" if open_end else "") + r"\s*$")


def _matches(shown: list[str], printed: list[str]) -> list[str]:
    """The shown lines not found in ``printed`` in order ("" when all are)."""
    at, missing = 0, []
    for line in shown:
        if line.strip() in ELIDED or not line.strip():
            continue
        pattern = _pattern(line.rstrip())
        found = next((i for i in range(at, len(printed)) if pattern.fullmatch(printed[i].rstrip())), None)
        if found is None:
            missing.append(line)
        else:
            at = found + 1
    return missing


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
@pytest.mark.slow
def test_console_blocks_show_what_the_commands_print(page: Path, tmp_path: Path) -> None:
    servers = _servers_path() if page.name in FIXTURES else ""  # the pages that start MCP servers
    walk = tmp_path / "walk"
    _sandbox(page, walk)
    _run_page(page, walk, servers, tmp_path)


def _run_page(page: Path, walk: Path, servers: str, tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PATH"] = os.pathsep.join(filter(None, [servers, str(bin_dir), env.get("PATH", "")]))
    env["TOOLSEARCH_LAB_CACHE"] = str(tmp_path / "cache")
    env["COLUMNS"] = "110"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as on a terminal
    problems, last_code = [], 0
    for block in console_blocks(page):
        for command, shown in _sessions(block.source):
            where = f"{page.name}:{block.line} `$ {command}`"
            words = shlex.split(command.replace(WALK, str(walk)))
            if words[0] == "export":
                name, _, value = words[1].partition("=")
                env[name] = value
                continue
            if words[0] == "unset":
                env.pop(words[1], None)
                continue
            if words[0] == "echo" and words[1:] == ["$?"]:
                printed = [str(last_code)]
            elif words[0] == "cat":
                # The page shows the file: it is the file.
                (walk / words[1]).write_text("\n".join(shown).replace(WALK, str(walk)) + "\n")
                printed = shown
            elif words[0] == "toolsearch-lab":
                done = subprocess.run(
                    [str(bin_dir / "toolsearch-lab"), *words[1:]],
                    cwd=walk,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=600,  # a guard against a hang, not a speed test
                )
                last_code = done.returncode
                printed = done.stdout.replace(str(walk), WALK).splitlines()
            else:
                problems.append(f"{where}: not a command this test knows how to run")
                continue
            missing = _matches(shown, printed)
            if missing:
                problems.append(f"{where} no longer prints:\n    " + "\n    ".join(missing))
    assert not problems, "\n".join(problems)


def test_the_line_matcher_declares_its_wildcards():
    shown = ["doctor x: 26 tools; k=5; 23.7 s", "…", "  1. a  Shows the…"]
    printed = ["doctor x: 26 tools; k=5; 8.9 s", "other", "  1. a  Shows the commit logs"]
    assert _matches(shown, printed) == []
    assert _matches(["doctor x: 27 tools; k=5; 23.7 s"], printed) == ["doctor x: 27 tools; k=5; 23.7 s"]
    assert _matches(["  1. a  Shows the…", "doctor x: 26 tools; k=5; 1 s"], printed) == [
        "doctor x: 26 tools; k=5; 1 s"
    ]  # in order
