"""`toolsearch-lab preflight` checks a participant's machine: every check passes here, offline; a machine with
a broken part gets FAIL on that row with what to do, and exit code 1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from importlib import metadata

import pytest

from toolsearch_lab.cli import preflight
from toolsearch_lab.cli.main import main

CHECKS = ("Python", "toolsearch-lab", "notebook widgets", "JupyterLab", "token encodings", "embedding model",
          "cache folder", "a run of the loop")  # fmt: skip


def test_this_machine_passes_every_check(capsys):
    assert main(["preflight"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("OK", "FAIL"))]
    assert [row[6:].split("  ")[0].strip() for row in rows] == list(CHECKS), out
    assert all(row.startswith("OK") for row in rows), out
    assert "ready for the workshop" in out and "network refused throughout" in out


def test_a_cache_folder_that_cannot_be_written_fails_with_what_to_do(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {**os.environ, "TOOLSEARCH_LAB_CACHE": str(blocker / "cache")}  # its parent is a file: no folder
    command = [sys.executable, "-m", "toolsearch_lab.cli", "preflight"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    row = next(line for line in out.splitlines() if "cache folder" in line)
    assert row.startswith("FAIL") and str(blocker) in row, out
    assert "what to do: set TOOLSEARCH_LAB_CACHE to a folder you can write to" in out
    assert "1 check(s) failed: cache folder" in out


def test_a_missing_or_old_widget_package_is_named(monkeypatch, capsys):
    real = metadata.version

    def version(name: str) -> str:
        if name == "anywidget":
            raise metadata.PackageNotFoundError(name)
        return "7.0.0" if name == "ipywidgets" else real(name)

    monkeypatch.setattr(preflight.metadata, "version", version)
    assert main(["preflight"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "notebook widgets" in line)
    assert row.startswith("FAIL") and "anywidget missing" in row and "ipywidgets 7.0.0 (needs 8.1" in row, out
    assert "pip install 'toolsearch-lab[lab]'" in out


def test_checks_run_with_the_network_refused():
    with preflight.offline(), pytest.raises(OSError, match="preflight runs offline"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1: never reachable anyway
    with preflight.offline():
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):  # this machine is allowed
            pass
        server.close()


def test_a_check_that_raises_is_a_fail_not_a_traceback(monkeypatch, capsys):
    def broken() -> preflight.Result:
        raise ImportError("No module named 'onnxruntime'")

    monkeypatch.setattr(preflight, "CHECKS", (preflight.check_python, broken))
    assert main(["preflight"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  broken" in out and "ImportError: No module named 'onnxruntime'" in out, out
