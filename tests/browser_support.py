"""Helpers for the real-browser tests: JupyterLab and Voila on 127.0.0.1, Debian Chromium via Playwright.

Everything is bounded but generous (a loaded 2-core machine is slow, not broken): servers get
``SERVER_START_S`` to answer and a server whose process exits fails at once, DOM waits use explicit timeouts,
and servers are stopped by killing their process group. No network beyond 127.0.0.1 is needed: Chromium is
launched with background networking off and JupyterLab with news and update checks off, and
:class:`RequestLog` records every request to another host, so a test can fail on it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
VOILA_TEMPLATES = REPO / "toolsearch_lab" / "ui" / "jupyter"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
SERVER_START_S = 240.0
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
WIDGET_FAILURE_TEXTS = ("Loading widget", "Error displaying widget", "Model not found")


def find_chromium() -> str | None:
    for path in CHROMIUM_CANDIDATES:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def missing_browser_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if find_chromium() is None:
        return (
            "Debian Chromium not found at /usr/bin/chromium (install it with `apt-get install -y chromium`; "
            "never `playwright install`)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -e '.[test]')"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _jupyter_env(base: Path) -> dict[str, str]:
    """Isolated config/runtime/settings/workspace dirs, with the news toast and update check disabled."""
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": base / "settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "workspaces",
        "IPYTHONDIR": base / "ipython",
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    notification = dirs["JUPYTERLAB_SETTINGS_DIR"] / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env = dict(os.environ)
    env.update({k: str(v) for k, v in dirs.items()})
    # The kernelspec says "python": make sure that is this interpreter (the project's venv).
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["TOOLSEARCH_LAB_FAST"] = "1"
    env.pop("OPENAI_API_KEY", None)  # the browser tests exercise the offline path only
    env.pop("OPENAI_BASE_URL", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Server:
    """A Jupyter-family server in its own process group, with its log in a file."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path, url: str, log: Path) -> None:
        self.url = url
        self.log_path = log
        self._log = open(log, "wb")  # noqa: SIM115 - open for the life of the server
        self.proc = subprocess.Popen(
            cmd, env=env, cwd=str(cwd), stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, path: str, timeout: float = SERVER_START_S) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + path, timeout=5) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except (urllib.error.URLError, ConnectionError, OSError) as exc:
                last = str(exc)
            time.sleep(0.25)
        raise RuntimeError(f"server not ready after {timeout:.0f}s ({last}):\n{self.log_tail()}")

    def log_tail(self, n: int = 4000) -> str:
        self._log.flush()
        return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self._log.close()


def copy_notebooks(dest: Path, names: list[str]) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(NOTEBOOKS / name, dest / name)
    return dest


@contextmanager
def jupyter_lab(root_dir: Path, base: Path) -> Iterator[Server]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--allow-root",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.port_retries=0",
        # No auth on 127.0.0.1 anyway; without this, shutdown_kernels' DELETE (no XSRF cookie) gets a 403.
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root_dir}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    server = Server(cmd, _jupyter_env(base), root_dir, f"http://127.0.0.1:{port}", base / "lab.log")
    try:
        server.wait_ready("/api/status")
        yield server
    finally:
        server.stop()


@contextmanager
def voila(notebook: Path, base: Path) -> Iterator[Server]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "voila",
        str(notebook.name),
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--show_tracebacks=True",
        "--template=offline",  # Voila's lab template without its CDN stylesheets, as `make app` uses it
    ]
    env = _jupyter_env(base)
    env["JUPYTER_PATH"] = str(VOILA_TEMPLATES)
    server = Server(cmd, env, notebook.parent, f"http://127.0.0.1:{port}", base / "voila.log")
    try:
        # Voila executes the notebook to answer "/", so readiness means "the port accepts connections".
        _wait_port(server)
        yield server
    finally:
        server.stop()


def _wait_port(server: Server, timeout: float = SERVER_START_S) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server exited with {server.proc.returncode}:\n{server.log_tail()}")
        with socket.socket() as s:
            s.settimeout(1)
            if s.connect_ex((host, int(port))) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"server did not open port {port} within {timeout:.0f}s:\n{server.log_tail()}")


@contextmanager
def chromium(profile_dir: Path, width: int = 1400, height: int = 1000):
    """A headless Chromium context (persistent profile in a fresh dir) and its first page."""
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    if executable is None:
        raise RuntimeError(missing_browser_reason() or "chromium missing")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile_dir),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(30_000)
            yield page
        finally:
            context.close()


class ConsoleLog:
    """Collects page errors and console errors; some are expected offline (allow-list)."""

    # No CDN names here: a request off 127.0.0.1 fails the test through RequestLog, not a console message.
    ALLOWED = (
        "Failed to load resource",  # e.g. a missing favicon (a 404 from the local server)
        "net::ERR",  # local requests cut short when a page or kernel closes
        "version",  # plotly/anywidget extension version warnings under Voila
        "favicon",
    )

    def __init__(self, page) -> None:
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("console", self._on_console)

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            self.errors.append(f"console: {msg.text}")

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.ALLOWED)]


def widget_failures(page) -> list[str]:
    """Texts that mean a widget did not render, as found in the page right now."""
    body = page.inner_text("body")
    return [t for t in WIDGET_FAILURE_TEXTS if t in body]


def stderr_outputs(page) -> list[str]:
    loc = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    return [loc.nth(i).inner_text()[:500] for i in range(loc.count())]


def error_outputs(page) -> list[str]:
    """Tracebacks rendered by JupyterLab or Voila."""
    out = stderr_outputs(page)
    tb = page.locator(
        ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr'], "
        ".jp-OutputArea-output .ansi-red-fg"
    )
    out += [tb.nth(i).inner_text()[:500] for i in range(min(tb.count(), 5))]
    return out


def _kernels(server: Server) -> list[dict]:
    with urllib.request.urlopen(server.url + "/api/kernels", timeout=5) as resp:
        return json.load(resp)


def lab_open_notebook(page, server: Server, name: str, timeout: float = 180.0) -> None:
    """Open a notebook (in a fresh workspace) and wait until its kernel is started, connected to the page and
    idle.

    The toolbar's execution indicator says "idle" before the kernel exists, so readiness is read from the
    server: a kernel with at least one websocket connection and execution_state "idle".
    """
    page.goto(f"{server.url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout * 1000)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kernel = _notebook_kernel(server, name)
        if kernel and kernel.get("connections", 0) >= 1 and kernel.get("execution_state") == "idle":
            break
        time.sleep(0.25)
    else:
        raise RuntimeError(f"kernel not ready after {timeout:.0f}s: {_kernels(server)}\n{server.log_tail()}")
    page.wait_for_function(
        "() => /Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent || '')", timeout=60_000
    )


def _notebook_kernel(server: Server, name: str) -> dict | None:
    """The kernel of the session that has notebook ``name`` open (other notebooks' kernels may linger)."""
    with urllib.request.urlopen(server.url + "/api/sessions", timeout=5) as resp:
        sessions = json.load(resp)
    return next((s["kernel"] for s in sessions if s.get("path") == name and s.get("kernel")), None)


def shutdown_kernels(server: Server) -> None:
    """Stop every kernel of the server, so the next notebook's readiness check sees only its own."""
    for kernel in _kernels(server):
        request = urllib.request.Request(f"{server.url}/api/kernels/{kernel['id']}", method="DELETE")
        with suppress(urllib.error.URLError), urllib.request.urlopen(request, timeout=30):
            pass  # already gone is fine


class RequestLog:
    """Every request the page makes to a host other than 127.0.0.1/localhost.

    A listener, not a route: routed requests wait for the Python side to pump events, which would stall the
    page while a test polls the server with plain sleeps.
    """

    def __init__(self, page) -> None:
        self.non_local: list[str] = []
        page.on("request", self._on_request)

    def _on_request(self, request) -> None:
        url = request.url
        scheme, _, rest = url.partition("://")
        host = rest.split("/", 1)[0].rsplit(":", 1)[0]
        if scheme in ("http", "https", "ws", "wss") and host not in LOCAL_HOSTS:
            self.non_local.append(url)


def lab_run_all(page) -> None:
    """Run > Run All Cells through the menu bar, as a person does."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def lab_wait_executed(page, timeout_ms: int = 600_000) -> None:
    """Every code cell has an execution count (no '[*]', no '[ ]')."""
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
            if (!prompts.length) return false;
            return prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=timeout_ms,
    )


def scroll_all_outputs(page) -> None:
    """JupyterLab 4 renders lazily: bring every output into view once so it is in the DOM."""
    n = page.locator(".jp-Cell").count()
    for i in range(n):
        page.locator(".jp-Cell").nth(i).scroll_into_view_if_needed()


def press_slider_right(page, slider, times: int = 1) -> None:
    """Click an ipywidgets slider's handle and press ArrowRight, like a keyboard user."""
    handle = slider.locator(".noUi-handle")
    handle.click()
    for _ in range(times):
        handle.press("ArrowRight")


def slider_readout(slider) -> str:
    return slider.locator(".widget-readout").inner_text().strip()
