"""Writing a file so that a reader, or a crash, never sees half of it: the one way the package writes files.

The content goes to a temporary file in the target's folder, is flushed and fsynced, and ``os.replace``
moves it over the target, which is atomic on POSIX and Windows. A process killed at any point leaves either
the previous file or the new one, never a truncated one, and at worst a stray ``.tmp-*`` file beside it.
The new file keeps the mode of the one it replaces, or is readable by all (0644): ``mkstemp`` would make it
private. A log that grows one record at a time is appended to instead (:func:`append_line`), one whole line
per write.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

TEMP_PREFIX = ".tmp-"
DEFAULT_MODE = 0o644


@contextlib.contextmanager
def atomic_file(
    path: str | os.PathLike, mode: str = "w", *, encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """Open a temporary file for writing; on a clean exit it replaces ``path``, on an error it is removed."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file: mode must be 'w' or 'wb', got {mode!r}")
    target = Path(path)
    try:
        permissions = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        permissions = DEFAULT_MODE
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=TEMP_PREFIX, suffix=target.suffix)
    try:
        os.chmod(tmp, permissions)
        with os.fdopen(fd, mode, encoding=None if mode == "wb" else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
    with atomic_file(path, "w", encoding=encoding) as handle:
        handle.write(text)
    return Path(path)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    with atomic_file(path, "wb") as handle:
        handle.write(data)
    return Path(path)


def append_line(path: str | os.PathLike, line: str) -> None:
    """Add one line to the end of ``path`` (created if missing) in a single write, flushed and fsynced.

    Appending is how a log grows without being rewritten; the one ``write`` to a file opened ``O_APPEND``
    lands whole after whatever is there, even with other writers. A process killed during it leaves at most
    a cut last line, which readers of line-per-record files name and leave out."""
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, DEFAULT_MODE)
    try:
        written = 0
        while written < len(data):  # os.write may write less than asked, rarely; finish the line
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
