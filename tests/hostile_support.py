"""Helpers for the reliability tests over tests/hostile_mcp_server.py: configs naming it, the server on
127.0.0.1 over HTTP, and the CLI run in a subprocess (its real stdout and stderr, guard included)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOSTILE = str(Path(__file__).resolve().parent / "hostile_mcp_server.py")
PY = sys.executable


def stdio(modes: str, **extra) -> dict:
    """A config entry starting the hostile server over stdio in ``modes``."""
    return {"command": PY, "args": [HOSTILE, modes], **extra}


def write_config(path: Path, servers: dict, key: str = "mcpServers") -> Path:
    path.write_text(json.dumps({key: servers}), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(argv: list[str], port: int, env: dict | None = None, timeout: float = 90) -> Iterator[None]:
    """A server process listening on 127.0.0.1:``port`` until the block ends (stopped, then killed)."""
    proc = subprocess.Popen(
        argv, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {(proc.stderr.read() if proc.stderr else '')[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:g} s") from None
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def hostile_http(modes: str, *, token_env: str | None = None, env: dict | None = None) -> Iterator[str]:
    """The hostile server over streamable HTTP: yields its URL (``http://127.0.0.1:PORT/mcp``)."""
    port = free_port()
    argv = [PY, HOSTILE, "--http", str(port), *(["--token-env", token_env] if token_env else []), modes]
    with http_server(argv, port, env):
        yield f"http://127.0.0.1:{port}/mcp"


def installed(variable: str, *parts: str) -> str:
    """A real server's program under the folder ``$variable`` names (``.ci/run`` installs them there; for
    ``TOOLSEARCH_LAB_MCP_BIN`` the ``PATH`` too): its path, else the test skips with the reason, or fails
    under ``CI=true``."""
    import shutil

    import pytest

    folder = os.environ.get(variable, "")
    path = Path(folder, *parts) if folder else None
    if path is not None and path.exists():
        return str(path)
    found = shutil.which(parts[-1]) if variable == "TOOLSEARCH_LAB_MCP_BIN" else None
    if found:
        return found
    reason = f"{parts[-1]} is not installed in ${variable} (.ci/run installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def search_then_call(tools: list, query: str, name: str, arguments: str = "{}"):
    """An advisor run (regex index) whose scripted model searches for ``query``, calls ``name`` with
    ``arguments`` and answers: its :class:`~toolsearch_lab.loop.run.RunResult`."""
    from toolsearch_lab.index.regex import RegexToolIndex
    from toolsearch_lab.loop.advisor import ToolSearchAdvisor
    from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall

    turns = [
        AssistantTurn(None, [ToolCall("s", "toolSearchTool", json.dumps({"query": query}))]),
        AssistantTurn(None, [ToolCall("c", name, arguments)]),
        AssistantTurn("done"),
    ]
    model = ScriptedModel(turns)
    return ToolSearchAdvisor(RegexToolIndex()).run(
        model, [{"role": "user", "content": query}], tools, session_id="s"
    )


def cli(*argv: str, env: dict | None = None, timeout: float = 300, stdin: str | None = None):
    """``toolsearch-lab ARGV`` in a subprocess: (exit code, stdout, stderr)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    done = subprocess.run(
        [PY, "-m", "toolsearch_lab.cli", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**environ, **(env or {})},
        timeout=timeout,
        input=stdin,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr
