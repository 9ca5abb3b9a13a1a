"""Secrets hidden where text leaves, ordinary text left alone (issues 47 and 48).

Keys of every format the detector supports, built at run time from the issuers' documented shapes (no key is
written in this file), are planted in a replayed transcript's tool result and user text, in error messages,
log lines and terminal writes: none comes out. Look-alikes (a UUID, a git SHA, a base64 image, a long word,
a config's ordinary values) come out as they went in. The registry's one-pass pattern is checked against a
brute-force reading of the whole-token rule.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import re
from pathlib import Path

import pytest
from hostile_support import HOSTILE, PY, search_then_call
from key_samples import ALNUM, sample_keys

from toolsearch_lab.catalog.mcp import McpConnection, McpToolError
from toolsearch_lab.catalog.mcp_config import load_mcp_config
from toolsearch_lab.cli.main import main
from toolsearch_lab.model import Tool
from toolsearch_lab.secrets import (
    KEY_FORMATS,
    LONG_SECRET_CHARS,
    MIN_SCRUB_CHARS,
    Secret,
    argument_secrets,
    find_keys,
    hide_keys,
    install_log_redaction,
    register_secret,
    scrub,
    secret_name,
    setting_secret,
    shown_arguments,
)
from toolsearch_lab.secrets.registry import spellings
from toolsearch_lab.trace import RunTrace, shown_trace

KEYS = sample_keys()
# Credentials of no issued format, after a word that says what they are (or in a URL's userinfo).
BASIC = base64.b64encode(b"deploy:pa55word-prod").decode()
AFTER_KEYWORDS = [  # (text, the credential in it)
    ("api_key=Zx81kLmq92PpQrT7", "Zx81kLmq92PpQrT7"),
    ('"password": "hunter2-Xq9-correct-horse"', "hunter2-Xq9-correct-horse"),
    ("clientSecret: 9fJ2kQ7xLm4pR8sT", "9fJ2kQ7xLm4pR8sT"),
    ("the session token is a1B2c3D4e5F6g7H8i9", "a1B2c3D4e5F6g7H8i9"),
    ("Authorization: Bearer opaque-7Fq2Lp9xK3mZ", "opaque-7Fq2Lp9xK3mZ"),
    ("Authorization: Basic " + BASIC, BASIC),
    ("cloning https://deploy:ghs-token-88x7@git.example.com/org/repo.git", "deploy:ghs-token-88x7"),
]
# Text that looks like a key to a careless detector, and a config's ordinary values.
LOOK_ALIKES = [
    "request 550e8400-e29b-41d4-a716-446655440000 failed",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "pneumonoultramicroscopicsilicovolcanoconiosis and antidisestablishmentarianism",
    "Use 'Europe/Amsterdam' as local timezone if no timezone is provided by the user.",
    "NODE_ENV=production AWS_REGION=eu-west-1 LOG_LEVEL=debug TZ=America/New_York",
    "reading /home/deploy/projects/widgets/config.yaml from https://docs.example.com/setup#installation",
    "max_tokens=4096, 120000 tokens used, key: value, token budget 50256",
    "Performs basic arithmetic; supports Bearer Token authentication and Basic Auth.",
    "task-queue-worker-2024-06-01T12:00:00Z disk-usage 1234567890123 KB",
    "The secret to a good sourdough is patience; the password field is required.",
]


def test_every_supported_format_has_an_example_and_the_detector_names_it():
    assert set(KEYS) == {f.name for f in KEY_FORMATS}
    docs = (Path(__file__).resolve().parent.parent / "docs" / "reliability.md").read_text(encoding="utf-8")
    assert f"({len(KEY_FORMATS)} formats:" in docs and f"all {len(KEY_FORMATS)} formats" in docs
    for name, key in KEYS.items():
        found = find_keys(f"see {key} here")
        assert [(k.kind, k.end - k.start) for k in found] == [(name, len(key))], name


@pytest.mark.parametrize("name", sorted(KEYS))
def test_a_key_in_an_error_message_or_a_log_line_is_hidden(name, caplog):
    key = KEYS[name]
    error = McpToolError(f"MCP tool 'deploy' reported an error: rejected credential {key} (expired)")
    assert key not in str(error) and error.secret_hidden and "(expired)" in str(error)
    install_log_redaction(["httpx"])
    with caplog.at_level(logging.INFO, logger="httpx"):
        logging.getLogger("httpx").info("HTTP Request: POST %s with %s", "https://api.example.com/v1", key)
    assert key not in caplog.text and "https://api.example.com/v1" in caplog.text


@pytest.mark.parametrize(("text", "secret"), AFTER_KEYWORDS)
def test_a_credential_after_a_word_that_names_it_is_hidden(text, secret):
    shown = hide_keys(text)
    assert secret not in shown and "***" in shown
    assert shown.replace("***", secret) == text  # nothing else changed


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_and_ordinary_values_are_never_hidden(text):
    assert hide_keys(text) == text
    assert find_keys(text) == []


# ---- a replayed transcript: every output -----------------------------------------------------------------
def _transcript_with_keys(tmp_path, planted: str):
    """The held-out client-side Anthropic transcript with ``planted`` in the user's text and in every tool
    result."""
    source = Path(__file__).resolve().parent / "transcripts/anthropic/heldout_clientside_search.json"
    exchanges = json.loads(source.read_text(encoding="utf-8"))
    for exchange in exchanges:
        messages = exchange["request"]["messages"]
        messages[0]["content"] += "\nMy keys, for the record:\n" + planted
        for message in messages:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    block["content"] = [{"type": "text", "text": "env dump:\n" + planted}]
    path = tmp_path / "with_keys.json"
    path.write_text(json.dumps(exchanges), encoding="utf-8")
    return path


def test_no_key_of_a_replayed_log_reaches_the_json_the_table_or_the_stepper(tmp_path, capsys):
    from toolsearch_lab.replay.load import load_transcript
    from toolsearch_lab.ui.stepper import IterationStepper
    from toolsearch_lab.ui.stepper_panels import details_html

    secrets = [*KEYS.values(), *(secret for _, secret in AFTER_KEYWORDS)]
    planted = "\n".join([*KEYS.values(), *(text for text, _ in AFTER_KEYWORDS), *LOOK_ALIKES])
    path = _transcript_with_keys(tmp_path, planted)
    trace = load_transcript(path)
    assert KEYS["openai"] in trace.user_request  # the data is the log's, exact
    assert main(["replay", str(path), "--json"]) == 0
    printed = capsys.readouterr().out
    assert main(["replay", str(path)]) == 0
    table = capsys.readouterr().out
    stepper = IterationStepper(run=trace)
    html = "".join(details_html(stepper.trace, i) for i in range(len(trace.iterations)))
    for output, where in ((printed, "--json"), (table, "the table"), (html, "the stepper")):
        leaked = [s[:24] for s in secrets if s in output]
        assert not leaked, f"{where} shows {leaked}"
    shown = RunTrace.from_json(printed)
    for text in LOOK_ALIKES:  # ordinary text intact
        assert text in shown.user_request
    calls = [c for it in shown.iterations for c in it.tool_calls if c.kind == "tool"]
    assert calls and all("secret-hidden" in c.flags for c in calls)
    assert any(e.startswith("secret-hidden:") for e in shown.errors)
    assert "note: secret-hidden:" in table
    assert shown_trace(load_transcript("anthropic-messages")) == load_transcript("anthropic-messages")


# ---- what is registered: settings, arguments, marks -----------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        "apiKey",
        "x-api-key",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PWD",
        "SESSION_SECRET",
        "AWS_SECRET_ACCESS_KEY",
        "SLACK_COOKIE",
        "OAUTH_CLIENT_SECRET",
        "PRIVATE_KEY",
        "X-Amz-Signature",
        "sig",
        "AUTH_HEADER",
    ],
)
def test_a_name_that_says_secret_makes_its_value_one(name):
    assert secret_name(name)
    assert setting_secret(name, "plain-words-here-2024").registered


@pytest.mark.parametrize(
    "name",
    ["TZ", "NODE_ENV", "AWS_REGION", "LOG_LEVEL", "HOME", "PWD", "KEYBOARD_LAYOUT", "MONKEY_PATCH"]
    + ["TOKEN_FILE", "AUTH_URL", "SECRET_KEY_PATH", "SESSION_DIR", "AUTH_MODE", "PASSWORD_MIN_LENGTH"],
)
def test_a_name_that_does_not_leaves_its_value_visible(name):
    assert not secret_name(name)
    assert not setting_secret(name, "Europe/Amsterdam-production").registered


@pytest.mark.parametrize(
    "value", ["/etc/keys/service.pem", "https://auth.example.com/token", "3600", "true", "./secrets"]
)
def test_an_ordinary_value_stays_visible_even_under_a_secret_name(value):
    assert not setting_secret("API_TOKEN", value).registered


def test_a_key_or_a_url_password_under_any_name_is_registered():
    assert setting_secret("CONFIG", KEYS["github"]).registered
    held = setting_secret("DATABASE_URL", "postgres://app:pw-9f8e7d6c5b@db.internal:5432/app")
    assert not held.registered and scrub("login pw-9f8e7d6c5b failed") == "login *** failed"
    assert scrub("postgres at db.internal:5432/app") == "postgres at db.internal:5432/app"


def test_literal_keys_in_args_are_registered_and_never_shown(tmp_path):
    key = KEYS["openai"]
    args = [
        "--api-key",
        key,
        "--token=short1",
        "--timezone",
        "Europe/Amsterdam",
        f"GITHUB_TOKEN={KEYS['github']}",
    ]
    assert set(argument_secrets(args)) == {key, "short1", KEYS["github"]}
    assert shown_arguments(args) == [
        "--api-key",
        "***",
        "--token=***",
        "--timezone",
        "Europe/Amsterdam",
        "GITHUB_TOKEN=***",
    ]
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "broken": {
                        "command": str(tmp_path / "no-such-server"),
                        "args": [*args, "--key", f"${{MISSING:-{KEYS['anthropic']}}}"],
                    }
                }
            }
        )
    )
    server = load_mcp_config(config, environ={}).servers[0]
    assert "--timezone Europe/Amsterdam" in server.shown_command
    with pytest.raises(McpToolError) as failed:
        server.connect(startup_timeout=10)
    for text in (str(failed.value), server.shown_command, repr(server)):
        assert not [k for k in (key, "short1", KEYS["github"], KEYS["anthropic"]) if k in text], text


def test_a_config_marks_a_secret_by_name_and_a_mark_must_name_something(tmp_path):
    entry = {
        "command": "x",
        "env": {"REGION_CODE": "internal-zone-417", "TZ": "UTC"},
        "secrets": ["REGION_CODE"],
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"s": entry}}))
    server = load_mcp_config(config).servers[0]
    assert server.env["REGION_CODE"].registered and not server.env["TZ"].registered
    assert scrub("zone internal-zone-417") == "zone ***"
    config.write_text(json.dumps({"mcpServers": {"s": {**entry, "secrets": ["REGION"]}}}))
    # a mark that names nothing costs its own entry, named with the mark at fault (issue 48)
    assert re.search(r"'secrets' names 'REGION', which is no env", load_mcp_config(config).invalid["s"])


def test_the_python_api_marks_a_secret_by_wrapping_it_or_naming_it():
    env = {"REGION": Secret("internal-zone-417"), "TZ": "Europe/Amsterdam", "NOTE": "plain-note-value"}
    with McpConnection(PY, [HOSTILE, "ok"], env=env, secrets=["plain-note-value"]) as connection:
        for name, value in (("REGION", "internal-zone-417"), ("TZ", "Europe/Amsterdam")):
            assert connection.call_tool("echo_env", {"name": name}) == value  # data, as the server sent it
    assert scrub("zone internal-zone-417, note plain-note-value") == "zone ***, note ***"
    assert scrub("timezone Europe/Amsterdam") == "timezone Europe/Amsterdam"


# ---- what the model reads -----------------------------------------------------------------------------
def test_a_tool_error_that_hid_a_secret_is_flagged_for_the_model():
    register_secret("tok-registered-0123456789")

    def deploy() -> str:
        raise McpToolError("MCP tool 'deploy' reported an error: bad token tok-registered-0123456789")

    result = search_then_call([Tool("deploy", "deploy it", function=deploy)], "deploy", "deploy")
    call = result.trace.iterations[1].tool_calls[0]
    assert call.flags == ["secret-hidden"] and "tok-registered" not in call.result


def test_a_key_shaped_token_a_tool_returns_reaches_the_model_unless_registered():
    # a login tool's session token may be what the model must pass on: only registered values are hidden
    token = KEYS["jwt"]
    tools = [Tool("login", "log in and get a session token", function=lambda: token)]
    result = search_then_call(tools, "login", "login")
    assert result.trace.iterations[1].tool_calls[0].result == token


# ---- the registry's one pattern -------------------------------------------------------------------------
def _brute_force(text: str, values: list[str]) -> str:
    """The whole-token rule read literally: at each position, the longest value whose boundaries hold."""
    out, i = [], 0
    while i < len(text):
        best = None
        for value in values:
            if len(value) < MIN_SCRUB_CHARS or not text.startswith(value, i):
                continue
            long = len(value) >= LONG_SECRET_CHARS
            left = text[i - 1] if i else ""
            escaped = re.fullmatch(r"%[0-9A-Fa-f]{2}", text[max(0, i - 3) : i]) is not None
            bounded_left = long or not value[0].isalnum() or not left.isalnum() or escaped
            right = text[i + len(value)] if i + len(value) < len(text) else ""
            bounded_right = long or not value[-1].isalnum() or not right.isalnum()
            if bounded_left and bounded_right and (best is None or len(value) > len(best)):
                best = value
        if best is None:
            out.append(text[i])
            i += 1
        else:
            out.append("***")
            i += len(best)
    return "".join(out)


def test_the_one_pattern_hides_what_the_whole_token_rule_says():
    rng = random.Random(7)
    stem = "".join(rng.choices(ALNUM, k=10))
    values = [stem[:8], stem, stem + "-x", stem + "xyzw", "-" + stem, stem * 2, "abcdefgh%20", "key.9876543"]
    for value in values:
        register_secret(value)
    registered = [form for value in values for form in spellings(value)]
    pieces = [*values, stem[:9], "x" + stem, stem + "q", "%20" + stem[:8], "-", " ", "a", "%2F", "."]
    for _ in range(300):
        text = "".join(rng.choices(pieces, k=rng.randint(1, 12)))
        assert scrub(text) == _brute_force(text, registered), text
