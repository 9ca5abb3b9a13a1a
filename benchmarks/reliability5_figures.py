"""The figures of docs/reliability.md, section 7e (issue 48): each hostile config entry beside a good server,
an envFile that never ends, a listing slower than the start-up timeout, a JSON-RPC error answer to
``tools/list``, a server dying under concurrent calls, and ``--destructive exclude`` on office-word-mcp-server
when it is installed. Run: ``.venv/bin/python benchmarks/reliability5_figures.py`` (about a minute; starts
tests/hostile_mcp_server.py on stdio)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from hostile_support import HOSTILE, PY, stdio  # noqa: E402

from toolsearch_lab.catalog.container import CatalogError  # noqa: E402
from toolsearch_lab.catalog.live import connect_mcp_config, connect_mcp_stdio  # noqa: E402
from toolsearch_lab.catalog.mcp import McpConnection, McpToolError  # noqa: E402
from toolsearch_lab.catalog.mcp_config import load_mcp_config  # noqa: E402

WORD = Path(os.environ.get("TOOLSEARCH_LAB_MCP_SERVERS", "/tmp/toolsearch-lab-real-servers"))
WORD = WORD / "office-word-mcp-server" / "bin" / "word_mcp_server"


def bad_entries(folder: Path) -> dict[str, str]:
    """Each bad entry beside a good server: what the good server did (loaded or not) and how the bad one
    was named."""
    fifo = folder / "pipe.env"
    os.mkfifo(fifo)
    bad = {
        "args a string": {"command": PY, "args": f"{HOSTILE} ok"},
        "${VAR} unset": {**stdio("ok"), "args": [HOSTILE, "${P48_UNSET_MODE}"]},
        '"disabled": "true"': {**stdio("ok"), "disabled": "true"},
        "envFile a FIFO": {**stdio("ok"), "envFile": str(fifo)},
        "envFile /dev/zero": {**stdio("ok"), "envFile": "/dev/zero"},
        "entry not an object": "npx some-server",
    }
    out = {}
    for label, entry in bad.items():
        config = {"mcpServers": {"good": stdio("names=good_one"), "bad": entry}}
        try:
            with connect_mcp_config(config, timeout=10) as servers:
                loaded = servers.catalog.names == ["good_one"]
                out[label] = f"good loads: {loaded}; bad named: {'bad' in servers.failures}"
        except CatalogError as exc:
            out[label] = f"ABORTED: {exc}"
    return out


def env_file_refusals() -> dict[str, str]:
    """How long refusing an envFile that never ends takes (before: read for ever)."""
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        fifo = Path(folder) / "pipe.env"
        os.mkfifo(fifo)
        for label, path in (("FIFO without a writer", fifo), ("/dev/zero", Path("/dev/zero"))):
            started = time.perf_counter()
            invalid = load_mcp_config({"servers": {"s": {"command": "x", "envFile": str(path)}}}).invalid
            ms = (time.perf_counter() - started) * 1000
            out[label] = f"{ms:.1f} ms, refused: {invalid['s'].rsplit('(', 1)[-1].rstrip(')')}"
    return out


def slow_listing() -> str:
    """A server that starts at once and then lists two pages of 10 s each, under an 8 s start-up timeout."""
    started = time.perf_counter()
    try:
        connect_mcp_stdio(PY, [HOSTILE, "ok,slow-list=10"], startup_timeout=8, timeout=60).close()
        return "loaded (NOT bounded)"
    except McpToolError:
        return f"refused after {time.perf_counter() - started:.1f} s (the listing alone takes 20 s)"


def restarts(threads: int = 8, trials: int = 5) -> str:
    """A server that exits on every call, ``threads`` calls at once, ``trials`` times: restarts counted."""
    counts = []
    for _ in range(trials):
        connection = McpConnection(PY, [HOSTILE, "ok,exit-on-call"], timeout=10, max_restarts=1)
        gate = threading.Barrier(threads)

        def call(_: int, connection: McpConnection = connection, gate: threading.Barrier = gate) -> None:
            gate.wait()
            with contextlib.suppress(McpToolError):
                connection.call_tool("ping")

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(call, range(threads)))
        counts.append(len(connection.restarts))
        connection.close()
    return f"restarts per trial: {counts} (max_restarts=1)"


def word_exclude() -> str:
    """``--destructive exclude`` on office-word-mcp-server: held back, and what the old rule held back."""
    if not WORD.exists():
        return "office-word-mcp-server not installed (.ci/run installs it)"
    with connect_mcp_stdio(str(WORD), env={"MCP_TRANSPORT": "stdio"}, startup_timeout=120, strict=False) as s:
        tools = list(s.catalog)
    held = sum(t.may_be_destructive for t in tools)
    declared = sum(t.destructive for t in tools)
    return f"{held} of {len(tools)} held back (all not marked read-only); declared only: {declared}"


def main() -> None:
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as folder:
        for label, said in bad_entries(Path(folder)).items():
            print(f"bad entry {label:<22} {said}")
    for label, said in env_file_refusals().items():
        print(f"envFile {label:<24} {said}")
    print(f"slow listing                   {slow_listing()}")
    print(f"server dying under 8 threads   {restarts()}")
    print(f"--destructive exclude on Word  {word_exclude()}")


if __name__ == "__main__":
    main()
