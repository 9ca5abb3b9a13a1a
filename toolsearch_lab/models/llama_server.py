"""llama.cpp's own OpenAI-compatible server on a GGUF model, with nothing to compile:

    pip install xllamacpp                      # a prebuilt CPU wheel of llama.cpp's server (MIT)
    python -m toolsearch_lab.models.llama_server MODEL.gguf --port 8080

``xllamacpp`` (PyPI) wraps llama.cpp's C++ server (``llama-server``) as a Python extension: ``Server(params)``
starts it, HTTP included, on a background thread (the chat completions, ``/v1/models`` and
``/v1/responses`` endpoints ``llama-server`` documents). This module only sets the parameters a workshop
laptop needs and waits for Ctrl-C: the host (loopback unless told otherwise), the port (llama-server's
default, 8080), the context, the CPU threads, and Jinja chat templates, which llama.cpp's tool calling reads
(``use_jinja``); ``--chat-template FILE`` replaces the model's own template. It imports only the standard
library and, when it runs, ``xllamacpp``: it needs nothing else from the package, so a separate environment
with ``xllamacpp`` alone runs it (``PYTHONPATH`` at the project) as well as the lab's own.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_PORT", "main", "server_params"]

DEFAULT_PORT = 8080  # llama-server's own default


def server_params(xllamacpp: Any, args: argparse.Namespace) -> Any:
    """``xllamacpp.CommonParams`` for ``args`` (see :func:`parser`)."""
    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True  # llama.cpp renders tools and reads tool calls only through Jinja templates
    if args.chat_template is not None:
        params.chat_template = args.chat_template.read_text(encoding="utf-8")
    return params


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(prog="python -m toolsearch_lab.models.llama_server", description=__doc__)
    out.add_argument("model", type=Path, help="the GGUF model file")
    out.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    out.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    out.add_argument("--ctx", type=int, default=4096, help="context size in tokens (default 4096)")
    out.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")
    out.add_argument("--chat-template", type=Path, default=None, help="a Jinja chat template file to use")
    return out


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.model.is_file():
        print(f"no GGUF model file at {args.model}", file=sys.stderr)
        return 2
    try:
        import xllamacpp
    except ImportError:
        print("llama_server needs xllamacpp: pip install xllamacpp (a prebuilt wheel)", file=sys.stderr)
        return 2
    try:
        server = xllamacpp.Server(server_params(xllamacpp, args))
    except RuntimeError as exc:  # llama.cpp logged why (a bad file, a template it cannot parse)
        print(f"llama.cpp's server did not start: {exc}", file=sys.stderr)
        return 1
    print(f"listening on {server.listening_address}/v1 (Ctrl-C stops it)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a supervisor's stop ends it like Ctrl-C
    try:
        while True:  # the server runs on its own threads; this one only waits
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
