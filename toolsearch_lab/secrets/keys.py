"""What counts as a secret: the one detector of key-shaped strings, and the rule for a setting's value.

**Key-shaped strings** (:func:`find_keys`) are of two kinds. The formats providers and code hosts issue,
each by its documented prefix and shape (:data:`KEY_FORMATS`: OpenAI ``sk-``/``sk-proj-``, Anthropic
``sk-ant-``, GitHub ``ghp_``…/``github_pat_``, GitLab ``glpat-``, Slack ``xoxb-``…, AWS ``AKIA``/``ASIA``,
Google ``AIza``, Stripe ``sk_live_``, Hugging Face ``hf_``, JWTs, npm, PyPI, private key blocks…); and a
high-entropy token right after a word such as key, token, secret or password (``api_key=…``,
``"password": "…"``, ``token is …``), where high-entropy means at least 12 characters holding letters and
digits with at least 3 bits of Shannon entropy per character. A UUID, a git SHA, a base64 image or a long
word on their own are none of these.

**A setting's value** (an MCP server's ``env``/``envFile`` entry, a ``${VAR}``, a query parameter of a
configured URL, a ``--flag value`` in ``args``) is secret when its name says so (:func:`secret_name`: a
word such as key, token, secret, password, auth, credential, private, session or cookie, the name split on
``_-.`` and camelCase, and not ending in a word that names where or what kind the secret is, such as
``_FILE``, ``_PATH``, ``_URL`` or ``_MODE``) and the value is not an ordinary one (a path, a URL without
userinfo, a number, a boolean), or when the value itself is key-shaped. Otherwise only what is inside the
value is: the keys in it and the userinfo of a URL in it (:func:`secret_values`).

The shapes are from the providers' pages named in :data:`KEY_FORMATS`; they are not checked against those
pages by a test (the tests use no network), only against examples built from the documented shapes.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from toolsearch_lab.secrets.registry import REDACTED, Secret

__all__ = [
    "KEY_FORMATS",
    "SENSITIVE_QUERY_KEYS",
    "KeyFormat",
    "KeyMatch",
    "argument_secrets",
    "find_keys",
    "is_key",
    "secret_name",
    "secret_values",
    "setting_secret",
    "shown_arguments",
]


@dataclass(frozen=True)
class KeyFormat:
    """An issued key's shape: ``pattern`` matches one whole key; ``source`` is where the issuer documents
    its prefix."""

    name: str
    pattern: str
    source: str


# Anchored on the left so that a prefix inside a longer word ("task-…" for "sk-") is no key.
_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
# Each issuer's format: its name, the pattern of one whole key, and where the issuer documents its prefix.
_FORMAT_TABLE = r"""
anthropic             sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,}  docs.anthropic.com api overview
openai                sk-(?!ant-)(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}  platform.openai.com api-reference
github                gh[pousr]_[A-Za-z0-9]{36,251}  github.blog 2021-04-05 token formats
github-fine-grained   github_pat_[A-Za-z0-9_]{22,}  docs.github.com access tokens
gitlab                gl(?:pat|dt|rt|ptt|ft|soat|cbt|oas)-[A-Za-z0-9_-]{20,}  docs.gitlab.com token prefixes
slack                 xox[abposre]-[A-Za-z0-9-]{10,}  api.slack.com token types
slack-app             xapp-\d-[A-Za-z0-9-]{10,}  api.slack.com token types
aws-access-key-id     (?:AKIA|ASIA)[A-Z2-7]{16}(?![A-Za-z0-9])  docs.aws.amazon.com IAM, unique ID prefixes
google-api-key        AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])  cloud.google.com api keys
google-oauth-token    ya29\.[0-9A-Za-z_-]{20,}  developers.google.com oauth2
google-client-secret  GOCSPX-[A-Za-z0-9_-]{20,}  developers.google.com oauth2
stripe                (?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}  docs.stripe.com/keys
stripe-webhook        whsec_[A-Za-z0-9+/=]{24,}  docs.stripe.com/webhooks
huggingface           hf_[A-Za-z0-9]{30,}  huggingface.co/docs security-tokens
jwt                   eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*  RFC 7519 (JWS compact form)
npm                   npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])  github.blog 2021-09-23 npm tokens
pypi                  pypi-AgE[A-Za-z0-9_-]{40,}  pypi.org/help/#apitoken
groq                  gsk_[A-Za-z0-9]{40,}  console.groq.com api keys
xai                   xai-[A-Za-z0-9]{60,}  docs.x.ai
perplexity            pplx-[A-Za-z0-9]{40,}  docs.perplexity.ai
replicate             r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])  replicate.com/docs api tokens
tavily                tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}  docs.tavily.com
linear                lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])  linear.app/developers
notion                (?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}(?![A-Za-z0-9]))  developers.notion.com
sendgrid              SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}  docs.sendgrid.com api keys
digitalocean          do[opr]_v1_[a-f0-9]{64}  docs.digitalocean.com tokens
databricks            dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])  docs.databricks.com tokens
docker-hub            dckr_pat_[A-Za-z0-9_-]{27,}  docs.docker.com access tokens
shopify               shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}  shopify.dev auth
atlassian             ATATT3[A-Za-z0-9_=-]{50,}  support.atlassian.com api tokens
figma                 figd_[A-Za-z0-9_-]{40,}  figma.com/developers access tokens
hashicorp-vault       hv[sb]\.[A-Za-z0-9_-]{24,}  developer.hashicorp.com/vault tokens
postman               PMAK-[a-f0-9]{24}-[a-f0-9]{34}  learning.postman.com api keys
"""
KEY_FORMATS: tuple[KeyFormat, ...] = (
    *(
        KeyFormat(*re.split(r"\s{2,}", line.strip(), maxsplit=2))
        for line in _FORMAT_TABLE.strip().splitlines()
    ),
    KeyFormat(
        "private-key",
        r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY(?: BLOCK)?-----[\s\S]{1,20000}?"
        r"-----END[A-Z ]{0,20} PRIVATE KEY(?: BLOCK)?-----",
        "RFC 7468 (PEM)",
    ),
)

# Words after which a high-entropy token is taken for a credential (a camelCase ``apiKey`` counts too).
_KEYWORD = (
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z]))"
    r"(?i:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|(?:access|auth|refresh|"
    r"bearer|session|id)[_-]?token|key|token|secret|password|passwd|passphrase|pwd|credentials?|auth|"
    r"authorization|bearer)(?![a-z0-9])"
)
_AFTER_KEYWORD = r"""["']?\s{0,3}(?::|=>?|\s(?i:is|was)\s|\s)\s{0,3}["']?(?i:bearer\s+)?"""
# One alternation without groups (named groups make the regex engine several times slower); which format a
# match is, is asked of the few matches found.
_FORMATS = re.compile(_ALNUM_BEFORE + "(?:" + "|".join(f.pattern for f in KEY_FORMATS) + ")")
_EACH_FORMAT = [(f.name, re.compile(f.pattern)) for f in KEY_FORMATS]
# A token that may be a credential: 12+ characters of the base64/URL-safe alphabets (padding at the end).
_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/~-])[A-Za-z0-9_+/~-]{12,}={0,2}")
_KEYWORD_BEFORE = re.compile(_KEYWORD + _AFTER_KEYWORD + r"\Z")
HIGH_ENTROPY_BITS = 3.0


@dataclass(frozen=True)
class KeyMatch:
    """One key-shaped string in a text: where it is and why (a :class:`KeyFormat`'s name, or
    ``"after-keyword"``)."""

    start: int
    end: int
    kind: str


def high_entropy(token: str) -> bool:
    """A token that looks generated: 12+ characters, letters and digits, 3+ bits of entropy per character."""
    if len(token) < 12 or not any(c.isdigit() for c in token) or not any(c.isalpha() for c in token):
        return False
    counts = Counter(token).values()
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts) >= HIGH_ENTROPY_BITS


def find_keys(text: str) -> list[KeyMatch]:
    """Every key-shaped string of ``text`` (see the module docstring), left to right, none overlapping:
    the issued formats first, then high-entropy tokens after a keyword outside them."""
    found = [KeyMatch(m.start(), m.end(), _format_of(m.group(0))) for m in _FORMATS.finditer(text)]
    taken = [(k.start, k.end) for k in found]
    # Tokens first, then the words before each: long random-looking tokens are rare in text, keywords not.
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        if (
            high_entropy(match.group(0))
            and _KEYWORD_BEFORE.search(text, max(0, start - 48), start)
            and not any(s < end and start < e for s, e in taken)
        ):
            found.append(KeyMatch(start, end, "after-keyword"))
    return sorted(found, key=lambda k: k.start)


def _format_of(key: str) -> str:
    return next(name for name, pattern in _EACH_FORMAT if pattern.fullmatch(key))


def is_key(value: str) -> bool:
    """Whether ``value`` (stripped) is one key of an issued format, whole."""
    value = value.strip()
    return any(m.start == 0 and m.end == len(value) and m.kind != "after-keyword" for m in find_keys(value))


# ---- names ---------------------------------------------------------------------------------------------

_SECRET_WORDS = frozenset(
    re.findall(
        r"\w+",
        "key keys apikey accesskey secretkey privatekey token tokens accesstoken authtoken refreshtoken "
        "secret secrets clientsecret password passwords passwd pass passphrase auth authorization credential "
        "credentials creds private session sessionid cookie cookies bearer jwt pat signature sig otp",
    )
)
# A name ending in one of these names where a secret is, or what kind it is, not the secret itself.
_NOT_SECRET_ENDINGS = frozenset(
    re.findall(
        r"\w+",
        "file path dir directory folder url uri endpoint host hostname domain port type mode name region "
        "provider method scheme format env enabled enable disabled required ttl timeout expiry expires "
        "expiration lifetime length size count version algorithm location store storage backend helper "
        "command field param variable policy scope scopes audience issuer kind strategy",
    )
)
# Query parameter names that name a credential in any URL (an OAuth ``code``, a signed URL's ``sig``).
SENSITIVE_QUERY_KEYS = frozenset(
    {
        "access_token",
        "access-token",
        "api-key",
        "api_key",
        "apikey",
        "auth",
        "code",
        "key",
        "password",
        "secret",
        "sig",
        "signature",
        "subscription-key",
        "token",
        "x-api-key",
    }
)
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _words(name: str) -> list[str]:
    return [w.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _NAME_WORD.findall(part)]


def secret_name(name: str) -> bool:
    """Whether a setting called ``name`` holds a secret, by its name (see the module docstring)."""
    if name.strip().lower() in SENSITIVE_QUERY_KEYS:
        return True
    words = _words(name)
    if not words or (words[-1] in _NOT_SECRET_ENDINGS and words[-1] not in _SECRET_WORDS):
        return False
    joined = "".join(words)
    return (
        any(w in _SECRET_WORDS for w in words)
        or joined.endswith(("password", "passwd", "apikey", "secret", "token"))
        or (len(words) > 1 and "pwd" in words)
    )


_ORDINARY = re.compile(
    r"(?i)(?:[-+]?\d+(?:\.\d+)?|true|false|yes|no|on|off|none|null|(?:/|~|\.{1,2}/|[a-z]:\\)\S*)"
)


def _ordinary(value: str) -> bool:
    """A value that is no secret whatever its name: a number, a boolean, a path, or a URL without
    userinfo."""
    value = value.strip()
    if _ORDINARY.fullmatch(value):
        return True
    parts = urllib.parse.urlsplit(value) if "://" in value else None
    return parts is not None and bool(parts.scheme) and " " not in value and "@" not in parts.netloc


_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://([^/\s@?#]+)@")


def secret_values(name: str | None, value: str) -> list[str]:
    """What of a setting's ``value`` is secret (see the module docstring): ``[value]``, or the keys and
    URL userinfo (user and password) inside it, or nothing."""
    if not value.strip():
        return []
    if is_key(value) or (name is not None and secret_name(name) and not _ordinary(value)):
        return [value]
    found = [value[m.start : m.end] for m in find_keys(value)]
    for userinfo in _USERINFO.findall(value):
        user, _, password = userinfo.partition(":")
        found += [urllib.parse.unquote(part) for part in (user, password) if part]
    return found


def setting_secret(name: str, value: str | Secret, *, marked: bool = False) -> Secret:
    """``value`` of setting ``name`` as a :class:`Secret`: registered whole when it is secret
    (:func:`secret_values`) or ``marked`` by the user (or already a registered Secret), else kept out of
    reprs only, with the keys and userinfo inside it registered."""
    if isinstance(value, Secret):
        if marked and not value.registered:
            return Secret(value.reveal())
        return value
    parts = [] if marked else secret_values(name, value)
    if marked or parts == [value]:
        return Secret(value)
    for part in parts:
        Secret(part)
    return Secret(value, register=False)


def argument_secrets(args: Sequence[str]) -> list[str]:
    """The secret values written in a command line: a value after a flag whose name says so
    (``--api-key VALUE``, ``--token=VALUE``, ``API_KEY=VALUE``), and key-shaped strings and URL userinfo in
    any argument."""
    found: list[str] = []
    for i, arg in enumerate(args):
        name, equals, value = arg.partition("=")
        flag = name.lstrip("-")
        if equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", flag):
            found += secret_values(flag, value)
            continue
        following = args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith("-") and following and not following.startswith("-") and secret_name(flag):
            found += secret_values(flag, following)
        found += secret_values(None, arg)
    return list(dict.fromkeys(found))


def shown_arguments(words: Sequence[str]) -> list[str]:
    """A command line to show: a word that is a secret of :func:`argument_secrets` as ``***``, however
    short, and so the value of a ``name=value`` word (``--token=***``); a key inside a longer word is
    registered, so :func:`~toolsearch_lab.secrets.scrub` hides it where the line is shown."""
    secrets = set(argument_secrets(words))
    shown = []
    for word in words:
        name, equals, value = word.partition("=")
        shown.append(
            REDACTED if word in secrets else f"{name}={REDACTED}" if equals and value in secrets else word
        )
    return shown
