"""``toolsearch-lab preflight``: is this machine ready for the workshop? A participant runs it once, before
the day; it takes seconds, needs no network (every connection off this machine is refused while it runs, so a
check that passes here passes in a room without Wi-Fi) and prints one row per check: OK or FAIL, what it
found, and what to do. The exit code is 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

from toolsearch_lab.cli.options import EXIT_OK, EXIT_RUN_FAILED, add_command
from toolsearch_lab.version import __version__

NAME = "preflight"
SUMMARY = "check this machine for the workshop, offline, in seconds"

PYTHON = (3, 10)  # pyproject's requires-python
# What the notebooks need besides the package itself (pyproject's minimums): the widgets, and the lab.
WIDGETS = {"ipywidgets": "8.1", "plotly": "6.0", "anywidget": "0.9", "jupyterlab_widgets": "3.0"}
LAB = {"jupyterlab": "4.0"}
INSTALL = "pip install 'toolsearch-lab[lab]' (or `make lab` in a clone)"
MIN_FREE_MB = 500


@dataclass(frozen=True)
class Result:
    check: str
    ok: bool
    found: str
    fix: str = ""
    seconds: float = 0.0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    return add_command(
        subparsers,
        NAME,
        SUMMARY,
        "Checks what a workshop participant's machine needs, without the network: the Python version, this\n"
        "package, the notebook widgets and their versions, JupyterLab, the token encodings and the\n"
        "embedding model (both shipped, loaded offline), a writable cache folder with room, and one tiny\n"
        "run of the loop. Prints OK or FAIL per check with what to do; exit code 0 when all pass, 1\n"
        "otherwise.",
    )


def _version_at_least(found: str, wanted: str) -> bool:
    def numbers(v: str) -> tuple[int, ...]:
        return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in v.split(".")[:3])

    return numbers(found) >= numbers(wanted)


def _packages(wanted: dict[str, str]) -> tuple[bool, str, str]:
    """(all present at their minimum, what was found, what is missing or too old)."""
    found, bad = [], []
    for name, minimum in wanted.items():
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            bad.append(f"{name} missing")
            continue
        if find_spec(name) is None:
            bad.append(f"{name} {version} installed but not importable")
        elif not _version_at_least(version, minimum):
            bad.append(f"{name} {version} (needs {minimum} or newer)")
        found.append(f"{name} {version}")
    return not bad, ", ".join(found) or "none", "; ".join(bad)


def check_python() -> Result:
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info[:2] >= PYTHON
    fix = "" if ok else f"install Python {PYTHON[0]}.{PYTHON[1]} or newer and reinstall the package"
    return Result("Python", ok, f"{version} ({sys.executable})", fix)


def check_package() -> Result:
    from toolsearch_lab.datafiles import data_dir

    data = data_dir()
    ok = (data / "scenarios").is_dir()
    fix = "" if ok else f"the shipped data is missing from {data}: reinstall with {INSTALL}"
    return Result("toolsearch-lab", ok, f"{__version__}, data in {data}", fix)


def check_widgets() -> Result:
    ok, found, bad = _packages(WIDGETS)
    return Result("notebook widgets", ok, found if ok else bad, "" if ok else INSTALL)


def check_lab() -> Result:
    ok, found, bad = _packages(LAB)
    return Result("JupyterLab", ok, found if ok else bad, "" if ok else INSTALL)


def check_encodings() -> Result:
    from toolsearch_lab.tokens import ENCODINGS, TokenCounter

    counts = {name: TokenCounter(name).count("tool search, offline") for name in ENCODINGS}
    return Result("token encodings", True, ", ".join(f"{n} ({c} tokens)" for n, c in counts.items()))


def check_model_and_cache() -> list[Result]:
    """The embedding model, run on texts it has never seen (so the model itself answers, not the shipped
    vectors), and the cache folder it writes to."""
    from toolsearch_lab.index.factory import make_index
    from toolsearch_lab.model import SearchRequest, Tool

    started = time.perf_counter()
    stamp = f"{time.time_ns()}"  # new texts: the model runs, not the shipped or cached vectors
    tools = [
        Tool("rain_radar", f"Shows where it will rain in the next hours ({stamp})"),
        Tool("shoe_sizes", f"Lists the shoe sizes a shop has in stock ({stamp})"),
    ]
    index = make_index("vector")
    index.index_tools("preflight", tools)
    found = index.search(SearchRequest("preflight", "will I need an umbrella this afternoon", 1)).tool_names
    model = Result(
        "embedding model",
        found == ["rain_radar"],
        f"MiniLM answered offline in {time.perf_counter() - started:.1f} s",
        "" if found == ["rain_radar"] else f"it ranked {found or 'nothing'} first: reinstall with {INSTALL}",
    )
    # The folder the model's vectors are cached in, as the index's embedder resolves it (the CLI does not
    # reach into the embedders itself).
    cache = getattr(getattr(index, "embedder", None), "cache", None)
    if cache is None:
        return [model, Result("cache folder", False, "the vector index has no embedding cache", INSTALL)]
    return [model, check_cache(Path(cache.directory))]


def check_cache(folder: Path) -> Result:
    fix = "set TOOLSEARCH_LAB_CACHE to a folder you can write to, with room"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".preflight-"):
            pass
        free = shutil.disk_usage(folder).free // 2**20
    except OSError as exc:
        return Result("cache folder", False, f"{folder}: {exc.strerror or exc}", fix)
    if free < MIN_FREE_MB:
        return Result("cache folder", False, f"{folder}: only {free:,} MB free", fix)
    return Result("cache folder", True, f"{folder} (writable, {free:,} MB free)")


def check_loop() -> Result:
    from toolsearch_lab.eval.scenarios import run_scenario

    run = run_scenario("spring-demo", index="lucene")
    grade = run.grade
    ok = grade.success
    found = (
        f"spring-demo: {grade.steps_succeeded}/{len(run.steps)} steps in {len(run.trace.iterations)} requests"
    )
    return Result(
        "a run of the loop", ok, found, "" if ok else f"the demo run failed: reinstall with {INSTALL}"
    )


CHECKS: tuple[Callable[[], Result | list[Result]], ...] = (
    check_python,
    check_package,
    check_widgets,
    check_lab,
    check_encodings,
    check_model_and_cache,
    check_loop,
)


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Refuse every connection to another machine while the checks run: what passes here works without a
    network."""

    def refuse(address: object) -> None:
        if isinstance(address, tuple) and address:
            host = str(address[0])
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(host).is_loopback:
                    return
            if host != "localhost":
                raise OSError(f"preflight runs offline: a check tried to reach {host}")

    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object) -> None:
        refuse(address)
        connect(self, address)  # type: ignore[arg-type]

    def guarded_connect_ex(self: socket.socket, address: object) -> int:
        refuse(address)
        return connect_ex(self, address)  # type: ignore[arg-type]

    socket.socket.connect = guarded_connect  # type: ignore[assignment,method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = connect, connect_ex  # type: ignore[method-assign]


def run_checks() -> list[Result]:
    """Every check, each timed; a check that raises is a FAIL naming the error, never a traceback."""
    results: list[Result] = []
    with offline():
        for check in CHECKS:
            started = time.perf_counter()
            try:
                out = check()
            except Exception as exc:  # noqa: BLE001 - a broken install shows as a FAIL with its reason
                name = check.__name__.removeprefix("check_").replace("_", " ")
                out = Result(name, False, f"{type(exc).__name__}: {exc}", f"reinstall with {INSTALL}")
            seconds = time.perf_counter() - started
            for result in out if isinstance(out, list) else [out]:
                results.append(Result(result.check, result.ok, result.found, result.fix, seconds))
    return results


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    results = run_checks()
    total = time.perf_counter() - started
    width = max(len(r.check) for r in results)
    for r in results:
        status = "OK  " if r.ok else "FAIL"
        print(f"{status}  {r.check:<{width}}  {r.found}")
        if r.fix:
            print(f"{'':4}  {'':<{width}}  what to do: {r.fix}")
    failed = [r.check for r in results if not r.ok]
    verdict = f"{len(failed)} check(s) failed: {', '.join(failed)}" if failed else "ready for the workshop"
    print(f"\n{verdict} ({len(results)} checks, {total:.1f} s, network refused throughout)")
    return EXIT_RUN_FAILED if failed else EXIT_OK
