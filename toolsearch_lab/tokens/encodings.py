"""The tiktoken encodings, built offline from OpenAI's rank files shipped gzipped in
``resources/tiktoken`` and verified by sha256, so nothing is ever downloaded; and which encoding an OpenAI
model uses.
:mod:`toolsearch_lab.tokens.counter` counts with them."""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

import tiktoken

__all__ = ["DEFAULT_ENCODING", "ENCODINGS", "encoding_for_model", "get_encoding", "pre_tokenizer"]

DEFAULT_ENCODING = "o200k_base"

# The pattern and special tokens are copied from tiktoken_ext.openai_public (tiktoken 0.14) rather than taken
# from its constructor functions, because calling those functions downloads the rank file.
# tests/test_tokens.py checks that the copies still equal what the installed tiktoken defines.
_O200K_PAT_STR = "|".join(  # noqa: FLY002 - same layout as tiktoken_ext, easy to diff
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


@dataclass(frozen=True)
class _EncodingSpec:
    rank_file: str
    sha256: str  # of the *uncompressed* rank file: the expected_hash tiktoken itself checks
    pat_str: str
    special_tokens: Mapping[str, int]


_SPECS: dict[str, _EncodingSpec] = {
    "o200k_base": _EncodingSpec(
        "o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT_STR,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": _EncodingSpec(
        "cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT_STR,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}
ENCODINGS: tuple[str, ...] = tuple(_SPECS)

_ENCODINGS: dict[str, tiktoken.Encoding] = {}
_LOCK = threading.Lock()


def _rank_file_bytes(name: str) -> bytes:
    """The gzipped rank file shipped with the package (a separate function so tests can swap the file)."""
    return (
        resources.files("toolsearch_lab")
        .joinpath("resources")
        .joinpath("tiktoken")
        .joinpath(_SPECS[name].rank_file)
        .read_bytes()
    )


def _check_name(name: str) -> _EncodingSpec:
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown encoding {name!r}; valid encodings: {', '.join(ENCODINGS)}") from None


def _load_encoding(name: str) -> tiktoken.Encoding:
    spec = _check_name(name)
    try:
        raw = gzip.decompress(_rank_file_bytes(name))
    except (OSError, EOFError) as exc:  # missing file, or not gzip / truncated
        raise RuntimeError(f"tiktoken rank file for {name} is unreadable: {exc}") from exc
    actual = hashlib.sha256(raw).hexdigest()
    if actual != spec.sha256:
        raise RuntimeError(
            f"tiktoken rank file for {name} failed its integrity check: sha256 {actual}, expected "
            f"{spec.sha256} (the file in toolsearch_lab/resources/tiktoken is corrupt or was replaced; "
            "reinstall the package)"
        )
    # Same format load_tiktoken_bpe parses ("<base64 token> <rank>" per line); parsed here so tiktoken never
    # touches its download cache.
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
    )


def pre_tokenizer(name: str = DEFAULT_ENCODING) -> str:
    """The regex the encoding ``name`` splits a text into pieces with before byte pair merging."""
    return _check_name(name).pat_str


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The tiktoken ``Encoding`` for ``name``, built once per process from the shipped rank file."""
    _check_name(name)
    enc = _ENCODINGS.get(name)
    if enc is None:
        with _LOCK:  # o200k takes about a second to build; build it once even if threads race
            enc = _ENCODINGS.get(name)
            if enc is None:
                enc = _ENCODINGS[name] = _load_encoding(name)
    return enc


# Checked in order, so the longer gpt-4 family prefixes win over plain "gpt-4".
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)


def encoding_for_model(model_name: str) -> str:
    """The encoding name an OpenAI model uses. Accepts ``openai/gpt-4o`` and ``ft:gpt-4o-mini:...`` forms.
    Unknown models get ``o200k_base`` (every current OpenAI chat model uses it) and a ``UserWarning``."""
    model = str(model_name).strip().lower().rsplit("/", 1)[-1]
    model = model.removeprefix("ft:")
    for prefix, encoding in _MODEL_PREFIXES:
        if model.startswith(prefix):
            return encoding
    warnings.warn(
        f"unknown model {model_name!r}: counting with {DEFAULT_ENCODING} (the encoding of all current OpenAI "
        "chat models); counts for other vendors' models are only indicative",
        stacklevel=2,
    )
    return DEFAULT_ENCODING
