"""Files the package writes go through toolsearch_lab.atomic: a crash leaves the old file or the new one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from toolsearch_lab.atomic import atomic_file, write_bytes, write_text


def test_a_failed_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = write_text(tmp_path / "model.json", '{"old": true}\n')
    with pytest.raises(RuntimeError), atomic_file(target) as handle:
        handle.write('{"new": tr')
        raise RuntimeError("killed mid-write")
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]


def test_bytes_and_text_round_trip(tmp_path):
    assert write_bytes(tmp_path / "a.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
    assert write_text(tmp_path / "a.txt", "héllo").read_text(encoding="utf-8") == "héllo"
    with pytest.raises(ValueError, match="mode must be 'w' or 'wb'"), atomic_file(tmp_path / "x", "a"):
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_kill_9_during_a_save_keeps_the_previous_file(tmp_path):
    """A process killed while it is writing a large file leaves the previous content whole."""
    target = tmp_path / "big.json"
    write_text(target, "previous\n")
    script = textwrap.dedent(
        f"""
        import sys, time
        from toolsearch_lab.atomic import atomic_file
        with atomic_file({str(target)!r}) as handle:
            handle.write("x" * 1_000_000)
            handle.flush()
            print("writing", flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert target.read_text() == "previous\n"


def test_a_new_file_is_readable_by_all_and_a_replaced_one_keeps_its_mode(tmp_path):
    fresh = write_text(tmp_path / "fresh.json", "{}")
    assert fresh.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    private = tmp_path / "private.json"
    private.write_text("old")
    private.chmod(0o600)
    write_text(private, "new")
    assert private.stat().st_mode & 0o777 == 0o600 and private.read_text() == "new"


def test_lines_appended_from_many_threads_land_whole(tmp_path):
    """A recorder appends one exchange per line while calls run in parallel: no line is torn or lost."""
    import json
    import threading

    from toolsearch_lab.atomic import append_line

    target = tmp_path / "run.jsonl"
    body = "x" * 70_000  # longer than a pipe buffer: one write still lands whole

    def write(worker: int) -> None:
        for n in range(20):
            append_line(target, json.dumps({"worker": worker, "n": n, "body": body}))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert sorted((r["worker"], r["n"]) for r in records) == [(w, n) for w in range(4) for n in range(20)]
    assert all(r["body"] == body for r in records)
