"""The offline-room recipe of docs/install.md, its install half: a wheelhouse installs into a fresh virtual
environment with no index and nothing else (pip's configuration switched off), and `toolsearch-lab preflight`
passes in it, from a folder outside the clone.

Building the wheelhouse needs the network (the recipe's `pip wheel`), which tests never use: give one built
with the recipe's first command as ``TOOLSEARCH_LAB_WHEELHOUSE=DIR``; without it the test skips. The commands
are read from the page, so the page and the test cannot drift apart.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs_snippets import fenced_blocks

REPO = Path(__file__).resolve().parent.parent
INSTALL = REPO / "docs" / "install.md"
pytestmark = pytest.mark.slow


def recipe() -> list[str]:
    """The commands of the page's wheelhouse block, comments left out."""
    block = next(
        b for b in fenced_blocks(INSTALL) if b.language == "bash" and "--find-links wheelhouse" in b.source
    )
    return [line for line in block.source.splitlines() if line.strip() and not line.startswith("#")]


def test_the_recipe_builds_once_and_installs_with_no_index():
    commands = recipe()
    assert commands[0] == "python3 -m pip wheel -w wheelhouse '.[lab]'"
    install = next(c for c in commands if " install " in c)
    assert "--no-index" in install and "--find-links wheelhouse" in install
    assert any(c.endswith("toolsearch-lab preflight") for c in commands)


def test_a_wheelhouse_installs_offline_and_passes_preflight(tmp_path):
    wheelhouse = os.environ.get("TOOLSEARCH_LAB_WHEELHOUSE")
    if not wheelhouse:
        pytest.skip("set TOOLSEARCH_LAB_WHEELHOUSE to a folder built with the recipe's `pip wheel` command")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env["PIP_CONFIG_FILE"] = os.devnull  # no other index, no other folder of wheels
    env["TOOLSEARCH_LAB_CACHE"] = str(tmp_path / "cache")
    for command in recipe()[1:]:
        if "jupyter lab" in command:
            continue  # starts a server; the browser tests cover JupyterLab
        words = [w.replace("wheelhouse", wheelhouse) for w in shlex.split(command)]
        words = [str(tmp_path / w) if w.startswith(".venv") else w for w in words]
        words = [sys.executable if w == "python3" and i == 0 else w for i, w in enumerate(words)]
        done = subprocess.run(words, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert re.search(r"ready for the workshop \(8 checks", done.stdout), done.stdout
