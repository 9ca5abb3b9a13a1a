"""PyPI's reference MCP servers, as a user's own config names them: two ``mcp-server-git`` servers on two
repositories plus ``mcp-server-time``, from a Claude Desktop config and a VS Code ``mcp.json``.

The servers are installed by ``.ci/run`` in a virtual environment of their own (they pin their own ``mcp``);
``TOOLSEARCH_LAB_MCP_BIN`` names its ``bin`` folder, else they are looked up on ``PATH``. Without them the
tests skip, except under ``CI=true``, where a missing server is a failure (CI installs them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from toolsearch_lab.catalog.live import connect_mcp_config

pytestmark = pytest.mark.slow  # PyPI's servers, installed by .ci/run: the slow tier

GIT_TOOLS = 12


def _server(name: str) -> str:
    folder = os.environ.get("TOOLSEARCH_LAB_MCP_BIN")
    found = shutil.which(name, path=folder) if folder else shutil.which(name)
    if found is None:
        reason = f"{name} is not installed (pip install {name}, or set TOOLSEARCH_LAB_MCP_BIN)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    return found


def _repository(path: Path, file_name: str) -> Path:
    path.mkdir()
    run = {"cwd": path, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)
    (path / file_name).write_text("hello\n")
    subprocess.run(["git", "add", file_name], **run)
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", f"add {file_name}"],
        **run,
    )
    return path


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("real-mcp")
    git, time_server = _server("mcp-server-git"), _server("mcp-server-time")
    alpha = _repository(base / "alpha", "alpha.txt")
    beta = _repository(base / "beta", "beta.txt")
    (alpha / "untracked.txt").write_text("new\n")
    servers = {
        "git alpha": {"command": git, "args": ["--repository", str(alpha)]},
        "git-beta": {"command": git, "args": ["--repository", str(beta)]},
        "time": {"command": time_server, "args": ["--local-timezone", "Europe/Amsterdam"]},
    }
    claude = base / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": servers}))
    (base / ".vscode").mkdir()
    vscode = base / ".vscode" / "mcp.json"
    vscode.write_text(json.dumps({"servers": {k: {"type": "stdio", **v} for k, v in servers.items()}}))
    return {"claude": claude, "vscode": vscode, "alpha": alpha, "beta": beta}


@pytest.mark.parametrize("kind", ["claude", "vscode"])
def test_both_git_servers_tools_are_present_under_distinct_names_and_reach_their_own_repository(setup, kind):
    with connect_mcp_config(setup[kind], startup_timeout=60) as servers:
        catalog = servers.catalog
        assert not servers.failures
        alpha = [n for n in catalog.names if n.startswith("git_alpha__")]
        beta = [n for n in catalog.names if n.startswith("git-beta__")]
        assert len(alpha) == len(beta) == GIT_TOOLS, catalog.names
        assert {"get_current_time", "convert_time"} <= set(catalog.names)  # no clash: left as they are
        assert len(catalog) == 2 * GIT_TOOLS + 2  # none lost
        assert catalog.origins["git-beta__git_status"] == ("git-beta", "git_status")
        status = catalog.get("git_alpha__git_status").function(repo_path=str(setup["alpha"]))
        assert "untracked.txt" in status
        log = catalog.get("git-beta__git_log").function(repo_path=str(setup["beta"]))
        assert "add beta.txt" in log and "alpha" not in log
        renames = [n for n in catalog.report.notes if "renamed" in n.message]
        assert len(renames) == 2 * GIT_TOOLS
