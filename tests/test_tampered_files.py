"""Files the package reads back (recordings, ranker models, shipped vectors) may be corrupt or tampered with:
each bad form gets an error (or, for shipped vectors, a warning and a fallback) that names the file. Files it
writes survive a ``kill -9`` mid-write: the previous file stays whole."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from toolsearch_lab.embed.base import text_key
from toolsearch_lab.embed.shipped import ShippedVectors, write_shipped_vectors
from toolsearch_lab.index.learned import FEATURES, RankerError, RankerModel
from toolsearch_lab.models.base import AssistantTurn, ToolCall, Usage
from toolsearch_lab.models.openai import OpenAIChatModel, RecordingError, load_recording

REPO = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------------------------------ recordings

GOOD_TURN = {
    "role": "assistant",
    "content": "Sunny.",
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def _recording(turns) -> dict:
    return {"format": "toolsearch-lab/recorded-turns", "model": "openai:m", "turns": turns}


BAD_RECORDINGS = [
    (b"{not json", "not valid JSON"),
    (b"", "not valid JSON"),
    (b"\xff\xfe{}", "not UTF-8 text"),
    ('{"turns": ["caf\u00e9"]}'.encode("latin-1"), "not UTF-8 text"),
    (b"42", "got a JSON int"),
    (b'"turns"', "got a JSON str"),
    (b"null", "got a JSON NoneType"),
    (b'{"format": "toolsearch-lab/recorded-turns", "model": "m"}', "no 'turns' key"),
    (b'{"turns": {"0": {}}}', "'turns' must be a list"),
    (b'{"turns": "abc"}', "'turns' must be a list"),
    (b'{"format": "other/format", "turns": []}', "format is 'other/format'"),
    (b'{"model": 5, "turns": []}', "'model' must be a string"),
    (json.dumps(_recording([1])).encode(), "turn 0: expected an assistant message dict"),
    (json.dumps(_recording([GOOD_TURN, "text"])).encode(), "turn 1: expected an assistant message dict"),
    (json.dumps(_recording([{"role": "user", "content": "hi"}])).encode(), "turn 0: expected an assistant"),
    (json.dumps(_recording([{"content": 5}])).encode(), "turn 0: assistant message content must be"),
    (json.dumps(_recording([{"content": None, "tool_calls": "x"}])).encode(), "tool_calls must be a list"),
    (json.dumps(_recording([{"tool_calls": [{"function": {}}]}])).encode(), "tool_calls\\[0\\] has no"),
    (json.dumps(_recording([{"tool_calls": [7]}])).encode(), "tool_calls\\[0\\] has no function.name"),
    (
        json.dumps(_recording([{"tool_calls": [{"id": 3, "function": {"name": "f"}}]}])).encode(),
        "tool_calls\\[0\\].id must be a string",
    ),
    (json.dumps(_recording([{**GOOD_TURN, "usage": {"prompt_tokens": 1}}])).encode(), "completion_tokens"),
    (json.dumps(_recording([{**GOOD_TURN, "usage": {"bogus": 1}}])).encode(), "unknown keys \\['bogus'\\]"),
    (json.dumps(_recording([{**GOOD_TURN, "usage": [1, 2, 3]}])).encode(), "usage must be an object"),
    (
        json.dumps(
            _recording([{**GOOD_TURN, "usage": {**GOOD_TURN["usage"], "total_tokens": True}}])
        ).encode(),
        "total_tokens must be an integer >= 0",
    ),
    (
        json.dumps(
            _recording([{**GOOD_TURN, "usage": {**GOOD_TURN["usage"], "prompt_tokens": -1}}])
        ).encode(),
        "prompt_tokens must be an integer >= 0",
    ),
    (b'{"turns": ' + b"[" * 5_000 + b"]" * 5_000 + b"}", "nested 5001 levels deep"),
]


@pytest.mark.parametrize("content, message", BAD_RECORDINGS)
def test_a_bad_recording_is_an_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "tampered-recording.json"
    path.write_bytes(content)
    with pytest.raises(RecordingError, match=message) as info:
        load_recording(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError) and info.value.__cause__ is None


def test_a_missing_or_unreadable_recording_is_an_error_naming_it(tmp_path):
    with pytest.raises(RecordingError, match="cannot be read") as info:
        load_recording(tmp_path / "absent.json")
    assert str(tmp_path / "absent.json") in str(info.value)
    with pytest.raises(RecordingError, match="cannot be read"):
        load_recording(tmp_path)  # a directory


def test_good_recordings_still_load_in_both_forms(tmp_path):
    path = tmp_path / "rec.json"
    turns = [
        GOOD_TURN,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {"a": 1}}}],
        },
    ]
    path.write_text(json.dumps(_recording(turns)), encoding="utf-8")
    replay = load_recording(path)
    assert replay.name == "replay:openai:m"
    assert replay.turns == [
        AssistantTurn("Sunny.", [], Usage(3, 1, 4)),
        AssistantTurn(None, [ToolCall("c1", "f", '{"a": 1}')]),
    ]
    path.write_text(json.dumps(turns), encoding="utf-8")  # the plain list of assistant messages
    assert load_recording(path, name="mine").turns == replay.turns and load_recording(path).name == "replay"


# ------------------------------------------------------------------------------------------ ranker models


def _model_doc(**change) -> dict:
    return {**RankerModel.load().to_dict(), **change}


def _replace_one(key: str, value) -> dict:
    doc = _model_doc()
    doc[key] = [value, *doc[key][1:]]
    return doc


BAD_MODELS = [
    (_replace_one("coef", 1e308), "coef\\[0\\] is 1e\\+308"),
    (_replace_one("coef", -1e308), "coef\\[0\\] is -1e\\+308"),
    (_replace_one("mean", 10**400), "mean\\[0\\] must be finite"),
    (_replace_one("coef", True), "coef\\[0\\] must be a number, got True"),
    (_replace_one("scale", False), "scale\\[0\\] must be a number, got False"),
    (_replace_one("mean", "0.1"), "mean\\[0\\] must be a number"),
    (_replace_one("mean", None), "mean\\[0\\] must be a number"),
    (_replace_one("scale", 1e-300), "every scale must be >= 1e-12"),
    (_replace_one("scale", 0), "every scale must be >= 1e-12"),
    (_replace_one("scale", -1.0), "every scale must be >= 1e-12"),
    (_model_doc(intercept=True), "intercept must be a number, got True"),
    (_model_doc(intercept=1e300), "intercept is 1e\\+300"),
    (_model_doc(intercept=[1.0]), "intercept must be a number"),
    (_model_doc(coef=[1.0]), "coef has 1 values, expected"),
    (_model_doc(mean={"a": 1}), "'mean' must be a list of numbers"),
    (_model_doc(features=[], mean=[], scale=[], coef=[]), "'features' is empty"),
    (_model_doc(features="cosine name"), "'features' must be a list"),
    (
        _model_doc(features=[FEATURES[0], FEATURES[0]], mean=[0, 0], scale=[1, 1], coef=[1, 1]),
        "more than once",
    ),
    (_model_doc(features=[1], mean=[0], scale=[1], coef=[1]), "'features' must be a list of feature names"),
    (_model_doc(info=[1, 2]), "'info' must be an object"),
    (_model_doc(info="trained on x"), "'info' must be an object"),
    (_model_doc(format=None), "format is None"),
    ([1, 2, 3], "expected a JSON object, got list"),
]


@pytest.mark.parametrize("doc, message", BAD_MODELS)
def test_a_tampered_ranker_model_is_refused_naming_the_file(tmp_path, doc, message):
    path = tmp_path / "tampered-model.json"
    # Python's json writes a too-large int exactly and inf/nan as Infinity/NaN: what a tamperer could write.
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(RankerError, match=message) as info:
        RankerModel.load(path)
    assert f"ranker model {path}" in str(info.value)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\xff\xfe", "not UTF-8 text"),
        (b"{", "not valid JSON"),
        (b"[" * 5_000, "nested 5000 levels deep"),
        (json.dumps(_replace_one("coef", float("inf"))).encode(), "coef\\[0\\] must be finite"),
        (json.dumps(_replace_one("mean", float("nan"))).encode(), "mean\\[0\\] must be finite"),
    ],
)
def test_a_corrupt_ranker_file_is_refused_naming_the_file(tmp_path, content, message):
    path = tmp_path / "corrupt.json"
    path.write_bytes(content)
    with pytest.raises(RankerError, match=message) as info:
        RankerModel.load(path)
    assert str(path) in str(info.value)
    with pytest.raises(RankerError, match="cannot be read"):
        RankerModel.load(tmp_path)


def test_a_model_built_in_code_gets_the_same_checks():
    with pytest.raises(RankerError, match="ranker model: coef\\[0\\] must be a number, got True"):
        RankerModel((FEATURES[0],), (0.0,), (1.0,), (True,), 0.0)  # type: ignore[arg-type]
    with pytest.raises(RankerError, match="ranker model: coef\\[0\\] is 1e\\+308"):
        RankerModel((FEATURES[0],), (0.0,), (1.0,), (1e308,), 0.0)


def test_the_largest_allowed_model_scores_finite(tmp_path):
    """Within the bounds no logit overflows: every score stays a probability, even for extreme features."""
    n = len(FEATURES)
    model = RankerModel(FEATURES, (1e6,) * n, (1e-12,) * n, (1e6,) * n, -1e6)
    x = np.full((3, len(FEATURES)), -1e6)
    x[1] = 1e6
    x[2, ::2] = 1e6
    scores = model.scores(x)
    assert np.isfinite(scores).all() and ((scores >= 0) & (scores <= 1)).all()


# ------------------------------------------------------------------------------------------ shipped vectors


def _shipped(tmp_path, **arrays) -> Path:
    keys = [text_key(t) for t in ("a", "b")]
    path = tmp_path / "vectors.npz"
    write_shipped_vectors(path, "emb", keys, np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    if arrays:
        with np.load(path) as data:
            saved = {k: data[k] for k in data.files}
        saved.update(arrays)
        np.savez(path, **saved)
    return path


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"scales": np.array([np.nan, 1.0], dtype=np.float32)}, "non-finite or non-positive"),
        ({"scales": np.array([np.inf, 1.0], dtype=np.float32)}, "non-finite or non-positive"),
        ({"scales": np.array([0.0, 1.0], dtype=np.float32)}, "non-finite or non-positive"),
        ({"scales": np.array([1.0], dtype=np.float32)}, "scales are float32 \\(1,\\)"),
        ({"scales": np.array(["x", "y"])}, "scales are <U1"),
        ({"vectors": np.ones((2, 2), dtype=np.float64)}, "vectors are float64"),
        ({"vectors": np.ones((3, 2), dtype=np.int8)}, "vectors are int8 \\(3, 2\\)"),
        ({"vectors": np.ones(2, dtype=np.int8)}, "vectors are int8 \\(2,\\)"),
        ({"keys": np.zeros((2, 8), dtype=np.uint8)}, "keys are uint8 \\(2, 8\\)"),
        ({"keys": np.zeros((2, 16), dtype=np.int64)}, "keys are int64"),
    ],
)
def test_tampered_shipped_vectors_are_not_used(tmp_path, caplog, arrays, message):
    path = _shipped(tmp_path, **arrays)
    with caplog.at_level(logging.WARNING):
        got = ShippedVectors(path, "emb").get_many([text_key("a"), text_key("b")])
    assert got == [None, None]  # embedded afresh instead
    assert any(str(path) in r.getMessage() and re.search(message, r.getMessage()) for r in caplog.records), (
        caplog.text
    )


def test_a_corrupt_or_truncated_shipped_file_is_not_used(tmp_path, caplog):
    path = _shipped(tmp_path)
    good = ShippedVectors(path, "emb").get_many([text_key("a")])[0]
    assert good is not None and np.isfinite(good).all()
    path.write_bytes(path.read_bytes()[:40])
    with caplog.at_level(logging.WARNING):
        assert ShippedVectors(path, "emb").get_many([text_key("a")]) == [None]
    assert f"shipped vectors {path}: unreadable" in caplog.text
    with caplog.at_level(logging.WARNING):
        assert ShippedVectors(tmp_path / "absent.npz", "emb").get_many([text_key("a")]) == [None]


# ------------------------------------------------------------------------------------------ kill -9 mid-save

# The child replaces os.fdopen (used only by toolsearch_lab.atomic) so that the file it returns writes
# half of its data, tells the parent, and hangs: the parent then kills it in the middle of the write.
_HANG_MID_WRITE = """
import os, sys, time
_fdopen = os.fdopen

class _HalfThenHang:
    def __init__(self, handle):
        self._handle = handle
    def write(self, data):
        self._handle.write(data[: len(data) // 2])
        self._handle.flush()
        print("writing", flush=True)
        time.sleep(60)
    def __getattr__(self, name):
        return getattr(self._handle, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)

os.fdopen = lambda *a, **k: _HalfThenHang(_fdopen(*a, **k))
"""


def _kill_mid_write(save_code: str) -> None:
    script = _HANG_MID_WRITE + textwrap.dedent(save_code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "writing", (
            "the save did not go through toolsearch_lab.atomic"
        )
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_kill_9_during_save_recording_keeps_the_previous_recording(tmp_path):
    path = tmp_path / "run.json"
    model = OpenAIChatModel(model="m", base_url="http://127.0.0.1:9/v1", record=True)
    model.recording.append(AssistantTurn("first answer").to_message())
    model.save_recording(path)
    before = path.read_bytes()
    _kill_mid_write(
        f"""
        from toolsearch_lab.models.base import AssistantTurn
        from toolsearch_lab.models.openai import OpenAIChatModel
        model = OpenAIChatModel(model="m", base_url="http://127.0.0.1:9/v1", record=True)
        model.recording.extend(AssistantTurn("x" * 1000).to_message() for _ in range(1000))
        model.save_recording({str(path)!r})
        """
    )
    assert path.read_bytes() == before
    assert load_recording(path).turns == [AssistantTurn("first answer")]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_kill_9_during_a_ranker_save_keeps_the_previous_model(tmp_path):
    path = tmp_path / "ranker.json"
    RankerModel.load().save(path)
    before = path.read_bytes()
    _kill_mid_write(
        f"""
        from toolsearch_lab.index.learned import RankerModel
        model = RankerModel.load()
        padded = {{"pad": "x" * 100_000}}
        model = RankerModel(model.features, model.mean, model.scale, model.coef, 0.5, padded)
        model.save({str(path)!r})
        """
    )
    assert path.read_bytes() == before and RankerModel.load(path) == RankerModel.load()
