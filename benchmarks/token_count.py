"""Does counting stay exact and linear in the text's length, and does a 50 MB log replay in under a minute?

    .venv/bin/python benchmarks/token_count.py [--quick]

Three parts, each timed against a reference run in the same process, so the ratios hold on a busy machine:

* ``texts``: ``TokenCounter.count`` on 0.5 MB and on 8 MB of ordinary prose (the docs/ pages), of one
  letter, of spaces, of "! " and of "a'" (the worst shapes for the pre-tokenizer and for byte pair merging).
  Printed: seconds per MB at each size and the ratio large / small (1.0 = linear), and tiktoken alone
  (``encode_ordinary`` on the whole text) beside; where it finishes its count must equal ours (its regex
  engine panics on 1 MB of spaces, so it is not tried on 8).
* ``replay``: a Messages transcript of 20 exchanges whose requests repeat the history (each adds a ~250 KB
  tool result), about 50 MB, loaded by ``load_transcript``; the reference is the same run at a fifth of the
  size. Printed: MB, seconds, seconds per MB and the ratio.

``--quick`` uses 2 MB texts and a 10 MB transcript.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolsearch_lab.replay.load import load_transcript  # noqa: E402
from toolsearch_lab.tokens import TokenCounter  # noqa: E402

MB = 1_000_000
REFERENCE = 500_000  # characters: tiktoken alone still counts this much of every shape


def shapes() -> dict[str, str]:
    prose = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))
    return {"prose": prose, "one letter": "a", "spaces": " ", "'! '": "! ", '"a\'"': "a'"}


def sized(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size] + "x"


def timed(call, *args):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = call(*args)
    return value, time.perf_counter() - started


def tiktoken_alone(counter: TokenCounter, text: str) -> tuple[int | None, float]:
    """tiktoken's own count of the whole text and its time; None when its regex engine panics."""
    try:
        tokens, seconds = timed(counter.encoding.encode_ordinary, text)
    except BaseException as exc:  # pyo3's PanicException is a BaseException
        if type(exc).__name__ != "PanicException":
            raise
        return None, 0.0
    return len(tokens), seconds


def texts(factor: int) -> None:
    size = factor * MB
    print(f"texts: seconds per MB at 0.5 MB and at {factor} MB (ratio 1.0 = linear); tiktoken alone beside")
    big = f"{factor} MB"
    print(f"{'text':12} {'0.5 MB':>8} {big:>8} {'ratio':>6} {'tiktoken 0.5 MB':>16} {big:>8}")
    for label, unit in shapes().items():
        counter = TokenCounter()  # fresh: no count remembered from another size
        small, large = sized(unit, REFERENCE), sized(unit, size)
        ours, small_s = timed(counter.count, small)
        whole, tiktoken_small = tiktoken_alone(counter, small)
        if ours != whole:
            raise SystemExit(f"MISMATCH on {label}: ours {ours}, tiktoken {whole}")
        ours, large_s = timed(TokenCounter().count, large)
        whole, tiktoken_large = tiktoken_alone(counter, large) if label != "spaces" else (None, 0.0)
        if whole is not None and ours != whole:
            raise SystemExit(f"MISMATCH on {label} at {factor} MB: ours {ours}, tiktoken {whole}")
        small_rate, large_rate = small_s / (REFERENCE / MB), large_s / factor
        alone = f"{tiktoken_large / factor:8.3f}" if whole is not None else f"{'panics':>8}"
        print(
            f"{label:12} {small_rate:8.3f} {large_rate:8.3f} {large_rate / small_rate:6.2f} "
            f"{tiktoken_small / (REFERENCE / MB):16.3f} {alone}"
        )


def transcript(path: Path, result_bytes: int, exchanges: int = 20) -> int:
    """A Messages transcript whose every request repeats the history: each exchange reads a log."""
    tools = [{"name": "read_log", "description": "Read a log file.", "input_schema": {"type": "object"}}]
    usage = {"input_tokens": 10, "output_tokens": 5}
    line = "2026-12-07T10:00:00Z INFO request GET /api/items 200 12ms user=alice trace=4bf92f3577b34da6\n"
    messages: list[dict] = [{"role": "user", "content": "Read the logs and summarise them."}]
    records = []
    for n in range(exchanges):
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "read_log", "input": {"part": n}}
        response = {"type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage}
        response |= {"content": [call], "stop_reason": "tool_use"}
        records.append(
            {
                "request": {"model": "claude-sonnet-4-5", "tools": tools, "messages": list(messages)},
                "response": response,
            }
        )
        result = f"part {n}\n" + line * (result_bytes // len(line))
        messages += [
            {"role": "assistant", "content": [call]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": result}],
            },
        ]
    path.write_text(json.dumps(records), encoding="utf-8")
    return path.stat().st_size


def replay(result_bytes: int) -> None:
    print("\nreplay: load_transcript of a Messages log whose requests repeat the history")
    print(f"{'file MB':>8} {'seconds':>8} {'s/MB':>6} {'ratio':>6}")
    reference = None
    with tempfile.TemporaryDirectory() as folder:
        for size in (result_bytes // 5, result_bytes):
            path = Path(folder) / f"log-{size}.json"
            megabytes = transcript(path, size) / MB
            _, seconds = timed(load_transcript, path)
            per_mb = seconds / megabytes
            reference = reference or per_mb
            print(f"{megabytes:8.1f} {seconds:8.1f} {per_mb:6.3f} {per_mb / reference:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 MB texts and a 10 MB transcript")
    args = parser.parse_args()
    texts(2 if args.quick else 8)
    replay(50_000 if args.quick else 250_000)


if __name__ == "__main__":
    main()
