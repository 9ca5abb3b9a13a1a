"""The figures of docs/reliability.md, section 7d (issue 30): leaks found by path, aborts caused by one
server, and the poisoning share per index. Run: ``.venv/bin/python benchmarks/reliability_figures.py``
(about a minute; starts tests/hostile_mcp_server.py on stdio and on 127.0.0.1). The token estimate's error
against openai-harmony per catalog is printed by ``pytest tests/test_token_estimate.py -s``."""

from __future__ import annotations

import io
import json
import logging
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from hostile_support import HOSTILE, PY, cli, hostile_http, stdio, write_config  # noqa: E402

from toolsearch_lab.catalog.live import connect_mcp_config, connect_mcp_stdio  # noqa: E402
from toolsearch_lab.catalog.mcp import McpConnection, McpToolError  # noqa: E402
from toolsearch_lab.embed.cache import EmbeddingCache  # noqa: E402
from toolsearch_lab.index.regex import RegexToolIndex  # noqa: E402
from toolsearch_lab.loop.advisor import ToolSearchAdvisor  # noqa: E402
from toolsearch_lab.models.base import AssistantTurn, ScriptedModel, ToolCall  # noqa: E402
from toolsearch_lab.secrets import BaseUrl, scrub  # noqa: E402

SECRET = "s3cr3t-VALUE-7f9a2c"


def leaks() -> dict[str, bool]:
    """Each path a secret could take out, planted the way a user's config holds one: leaked or not."""
    found: dict[str, bool] = {}
    for name in ("x-api-key", "subscription-key", "access-token", "code"):
        url = f"https://h/v1?{name}={SECRET}"
        found[f"BaseUrl.shown ?{name}="] = SECRET in BaseUrl.parse(url).shown
        found[f"cache folder ?{name}="] = SECRET in str(EmbeddingCache(BaseUrl.parse(url).shown).directory)
    found["short user name scrubbed inside words"] = "ref***sed" in scrub(
        "Connection refused", BaseUrl.parse("http://u:K-0123456789@h/v1").secrets
    )
    try:
        McpConnection(
            PY, [HOSTILE, f"hang-start,stderr-secret={SECRET}"], env={"T": SECRET}, startup_timeout=3
        )
    except McpToolError as exc:
        found["start-up timeout + stderr tail"] = SECRET in str(exc)
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)
    headers = {"Authorization": f"Bearer {SECRET}"}
    with (
        hostile_http("ok,echo-header", token_env="RT", env={"RT": SECRET}) as url,
        McpConnection(url=f"{url}?token={SECRET}", headers=headers) as c,
    ):
        # the result is data (as the server sent it); what is shown or sent to a model is scrubbed
        found["HTTP tool echoing the Authorization header, shown"] = SECRET in scrub(c.call_tool("echo_auth"))
    logging.getLogger().removeHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    found["httpx / mcp log lines"] = SECRET in log.getvalue()
    with connect_mcp_stdio(PY, [HOSTILE, "ok"], {"MY_TOKEN": SECRET}, name="raw") as servers:
        turns = [
            AssistantTurn(None, [ToolCall("s", "toolSearchTool", '{"query": "environment variable"}')]),
            AssistantTurn(None, [ToolCall("c", "echo_env", '{"name": "MY_TOKEN"}')]),
            AssistantTurn("done"),
        ]
        run = ToolSearchAdvisor(RegexToolIndex()).run(
            ScriptedModel(turns), [{"role": "user", "content": "x"}], list(servers.catalog), session_id="s"
        )
        found["tool result to the model"] = SECRET in json.dumps(run.messages)
        found["trace"] = SECRET in run.trace.to_json()
        found["vars(McpConnection)"] = SECRET in repr(vars(servers.connections["raw"]))
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(Path(tmp) / "c.json", {"s": stdio("desc=key:${T}", env={"T": "${T}"})})
        code, out, err = cli(
            "snapshot", "--mcp-config", str(config), "-o", f"{tmp}/s.json", env={"T": SECRET}
        )
        found["CLI output"] = SECRET in out + err
        # the tools are kept as the server sent them (issue 48); the command line is the lab's own text
        snapshot = json.loads(Path(f"{tmp}/s.json").read_text(encoding="utf-8"))
        found["snapshot's command line"] = SECRET in json.dumps(snapshot["servers"])
    return found


BAD_SERVERS = {
    "malformed records": "ok,bad-record",
    "Infinity in a schema": "ok,infinity",
    "NaN in a schema": "ok,nan",
    "schema 150 deep": "ok,deep=150",
    "answer 800 deep": "ok,deep=400",
    "cursor repeated forever": "cursor-loop",
    "cursors forever": "cursor-endless",
    "stdout noise": "ok,stdout-noise,noise-each",
    "duplicate keys": "ok,dup-keys",
    "toolSearchTool, dots, 100 chars": "ok,meta-name,dots,names=" + "x" * 100,
    "never answers initialize": "hang-start",
}


def aborts() -> dict[str, str]:
    """Each bad server beside a good one in one config: what happened to the config (never an abort)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, modes in BAD_SERVERS.items():
            config = write_config(
                Path(tmp) / "c.json", {"good": stdio("names=good_tool"), "bad": stdio(modes)}
            )
            try:
                with connect_mcp_config(config, timeout=10, startup_timeout=5) as live:
                    kept = "good_tool" in live.catalog.names
                    out[label] = (
                        "loaded"
                        + ("" if kept else " WITHOUT the good server")
                        + (
                            f"; bad server failed ({live.failures['bad'][:60]}...)"
                            if "bad" in live.failures
                            else f"; {len(live.catalog.report.problems)} problem line(s)"
                        )
                    )
            except Exception as exc:  # noqa: BLE001  (an abort is what this counts)
                out[label] = f"ABORT: {type(exc).__name__}: {str(exc)[:80]}"
    return out


def poisoning() -> dict[str, dict]:
    """A keyword-stuffed tool among the shipped GitHub catalog's 117: its share per index, as the doctor
    measures it (probes of every other tool)."""
    from toolsearch_lab.catalog.container import load_catalog
    from toolsearch_lab.eval.doctor.engine import _bar, _build_indexes, _measure
    from toolsearch_lab.eval.doctor.poisoning import hijack_shares
    from toolsearch_lab.model import Tool
    from toolsearch_lab.tokens import TokenCounter

    common = (
        "get list create update delete search issue issues pull request requests repository repositories "
        "file "
        "files branch branches commit commits user users comment comments review reviews label workflow run "
        "code security alert notification team organization release tag github details information specific"
    )
    stuffed = Tool(
        "helpful_assistant", "A helpful assistant for any GitHub task. Keywords: " + (common + ". ") * 15
    )
    tools = [*load_catalog("github-mcp"), stuffed]
    built = _build_indexes(("regex", "lucene", "vector"))
    measured = _measure(tools, built, [TokenCounter()], 5, 0.9, _bar(False, ""), {})
    shares = hijack_shares(measured.findability, list(built))["helpful_assistant"]
    return {label: shares.get(label, {"above": 0.0, "first": 0.0, "tools": 0}) for label in built}


def main() -> None:
    found = leaks()
    print(f"leaks found by path: {sum(found.values())} of {len(found)} paths")
    for path, leaked in found.items():
        print(f"  {'LEAK' if leaked else 'ok  '}  {path}")
    happened = aborts()
    aborted = sum(v.startswith("ABORT") for v in happened.values())
    print(f"aborts caused by one server: {aborted} of {len(happened)}")
    for label, what in happened.items():
        print(f"  {label:34s} {what}")
    print("poisoning: the stuffed tool above the right tool, share of the other tools' probe queries")
    for index, share in poisoning().items():
        above, first, tools = share["above"], share["first"], share["tools"]
        print(f"  {index:7s} above {above:.0%}  rank 1 {first:.0%}  tools pushed down {tools}")


if __name__ == "__main__":
    main()
