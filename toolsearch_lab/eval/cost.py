"""Cache-aware cost of model requests: which prompt tokens a provider's prompt cache serves, and the bill.

A request is cut into **segments** in the order the provider renders it: each tool definition, the end of the
tools block, then each message, then the reply priming (token counts from
:class:`~toolsearch_lab.tokens.TokenCounter`, so the segments add up to ``count_request(...).total``). Two
requests share a prefix as long as their segments are identical from the start; a changed segment ends the
prefix (segment granularity: the few identical tokens at the start of a changed segment are not counted).
:func:`shared_prefix_tokens` is the one implementation of "how much of this request repeats that one".

Caching rules (documented by the providers; read 2026-12-01):

``openai`` - automatic prefix caching, https://platform.openai.com/docs/guides/prompt-caching
  - on for every prompt of 1,024 tokens or more; nothing to mark, no charge to write;
  - a hit needs an exact prefix match with a recent request (kept 5-10 minutes idle, up to an hour); the tools
    array is part of the prefix and comes first;
  - cached tokens are counted from 1,024 up in 128-token increments (``usage.prompt_tokens_details.
    cached_tokens``).
  Model here: cached = the longest prefix shared with any earlier request of the run, rounded down to
  1,024 + 128 k (0 below 1,024). Everything earlier in a run counts as recent.

``anthropic`` - explicit cache breakpoints, https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
  - order tools -> system -> messages; a ``cache_control`` breakpoint caches the prefix up to it (at most 4
    per request); a prefix shorter than the model's minimum (1,024 tokens for Sonnet, 4,096 for Opus 4.5 and
    Haiku 4.5) is not cached;
  - a later request reads the cache when its prefix up to a breakpoint, or up to one of the ~20 block
    boundaries before a breakpoint, equals a cached prefix; writing costs 1.25 x base input (5-minute TTL),
    reading 0.1 x;
  - changing the tools invalidates everything after them; content added after a breakpoint does not.
  Model here: breakpoints after the tools, after the system message and after the last message (3 of 4); a
  segment is a block. Read = the longest earlier-written prefix found within 20 blocks before one of this
  request's breakpoints; write = the rest up to the last breakpoint (when that prefix reaches the minimum);
  what follows the last breakpoint (the reply priming) is plain input.

Anthropic's native tool search (the ``anthropic-regex``/``anthropic-bm25`` strategies) is billed by the same
rule, which is what Anthropic documents for it: deferred tools are "not included in the system-prompt prefix"
and a discovered tool's definition "is appended inline as a tool_reference block in the conversation
history. The prefix is untouched, so prompt caching is preserved" (tool use with prompt caching docs). The
strategy's tools array never changes, so its tools + system prefix is written once and read after; the
expanded definitions are message content, cached at the last message's breakpoint like any other. (The API
also places a breakpoint on a server tool's result within one call; the loop makes the search and its
continuation two requests, so the last-message breakpoint is already there.)

Token counts are our o200k estimates for both providers (Anthropic's tokenizer differs); the rules, not the
tokenizer, are what the comparison is about. Where a server reported ``cached_tokens`` in ``usage``, the
per-request rows carry it beside the model's figure (:attr:`RequestCost.reported_cached`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolsearch_lab.datafiles import data_path
from toolsearch_lab.model import check_positive_int
from toolsearch_lab.tokens import REPLY_PRIMING, TOKENS_PER_MESSAGE, TOKENS_PER_NAME, TokenCounter

PROVIDERS = ("openai", "anthropic")
OPENAI_MIN_CACHED = 1024
OPENAI_INCREMENT = 128
ANTHROPIC_LOOKBACK_BLOCKS = 20


# ---- prices ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model. ``cache_write`` is what writing the cache costs per token
    (OpenAI: the input price, it charges nothing extra); ``min_cacheable`` the shortest cacheable prefix."""

    model: str
    provider: str
    input: float
    cache_read: float
    output: float
    cache_write: float | None = None
    min_cacheable: int = OPENAI_MIN_CACHED

    @property
    def write_price(self) -> float:
        return self.input if self.cache_write is None else self.cache_write


@dataclass(frozen=True)
class PriceTable:
    taken: str
    models: dict[str, Price]
    default: str
    source: str = ""

    def price(self, model: str | None = None) -> Price:
        name = model or self.default
        if name not in self.models:
            raise ValueError(
                f"no price for model {name!r} in {self.source or 'the price table'}; "
                f"known: {sorted(self.models)}"
            )
        return self.models[name]

    def for_model(self, model: str | None) -> Price | None:
        """The price of the model an API call names (``claude-sonnet-4-5-20250929``, ``gpt-4.1-2025-04-14``):
        the table's entry of that name, else of the name without its date suffix, with Anthropic's
        ``4-5`` read as ``4.5``; None when the table has neither."""
        name = (model or "").strip().lower()
        undated = re.sub(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$", "", name)
        for candidate in (name, undated, re.sub(r"-(\d+)-(\d+)$", r"-\1.\2", undated)):
            if candidate in self.models:
                return self.models[candidate]
        return None

    def for_run(self, model: str | None, provider: str, price_model: str | None = None) -> tuple[Price, str]:
        """The price a logged run of ``model`` (sent to ``provider``) is billed at, and how it was chosen:
        ``price_model`` when given, else the run's own model's (:meth:`for_model`), else the provider's
        first model in the table, named as a stand-in."""
        if price_model is not None:
            return self.price(price_model), f"priced as {price_model} (asked for)"
        own = self.for_model(model)
        if own is not None:
            return own, f"priced as {own.model}, the run's model"
        stand_in = next((p for p in self.models.values() if p.provider == provider), self.price())
        return stand_in, (
            f"priced as {stand_in.model}, a stand-in: the price table has no price for {model!r} (name one "
            "with price_model, --price-model)"
        )


def load_prices(source: str | Path | Mapping[str, Any] | None = None) -> PriceTable:
    """The shipped table (``data/prices.json``), a JSON file of the same shape, or a dict."""
    if source is None:
        source = data_path("prices.json")
    where = "price table"
    if not isinstance(source, Mapping):
        where = str(source)
        try:
            raw = json.loads(Path(source).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc})") from None
    else:
        raw = dict(source)
    if not isinstance(raw, dict) or not isinstance(raw.get("models"), dict) or not raw["models"]:
        raise ValueError(f"{where}: expected an object with a non-empty 'models' object")
    models = {name: _price(name, spec, where) for name, spec in raw["models"].items()}
    default = raw.get("default") or next(iter(models))
    if default not in models:
        raise ValueError(f"{where}: default {default!r} is not one of its models {sorted(models)}")
    return PriceTable(str(raw.get("taken") or "unknown date"), models, default, where)


def _price(name: str, spec: Any, where: str) -> Price:
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: models[{name!r}] must be an object")
    provider = spec.get("provider")
    if provider not in PROVIDERS:
        raise ValueError(
            f"{where}: models[{name!r}].provider must be one of {list(PROVIDERS)}, got {provider!r}"
        )
    values = {}
    for key in ("input", "cache_read", "output", "cache_write"):
        value = spec.get(key)
        if value is None and key == "cache_write":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"{where}: models[{name!r}].{key} must be a number >= 0 (USD per 1M tokens)")
        values[key] = float(value)
    minimum = spec.get("min_cacheable", OPENAI_MIN_CACHED)
    check_positive_int(minimum, f"{where}: models[{name!r}].min_cacheable")
    return Price(name, provider, min_cacheable=minimum, **values)


# ---- segments ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    """One block of a request: ``kind`` is tool, tools_end, system, message or priming."""

    kind: str
    key: str
    tokens: int


def request_segments(
    messages: Sequence[Mapping], tools: Sequence[Mapping], counter: TokenCounter
) -> list[Segment]:
    """A chat-completions request as segments; their tokens add up to ``counter.count_request`` (messages in
    the wire form: the loop's own ``name`` on tool messages is not sent)."""
    segments = [Segment("tool", _key(t), counter.tool_tokens(t)) for t in tools]
    if segments:
        segments.append(Segment("tools_end", "", counter.tool_format.func_end))
    for message in messages:
        wire = (
            {k: v for k, v in message.items() if k != "name"}
            if message.get("role") == "tool"
            else dict(message)
        )
        tokens = (
            counter.message_tokens(wire) + TOKENS_PER_MESSAGE + (TOKENS_PER_NAME if wire.get("name") else 0)
        )
        kind = "system" if wire.get("role") in ("system", "developer") else "message"
        segments.append(Segment(kind, _key(wire), tokens))
    segments.append(Segment("priming", "", REPLY_PRIMING))
    return segments


def _key(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)


# ---- the order Spring sends its tools in -------------------------------------------------------------------
HASHSET_CAPACITY = 16  # java.util.HashSet(): initial table size, load factor 0.75
HASHSET_LOAD = 0.75


def hashset_order(names: Sequence[str], jvm: int = 0) -> list[str]:
    """``names`` (in insertion order) as a ``java.util.HashSet`` of tool callbacks iterates them: Spring's
    ``prepareIteration`` collects the exposed callbacks in a HashSet (spec §7.4), so the tools array follows
    it, not discovery order.

    A callback whose class does not override ``hashCode`` hashes by identity: a random value, fixed for the
    life of one JVM. ``jvm`` picks one JVM's hashes (stand-ins: 31 bits per tool from the name and ``jvm``).
    HashMap spreads a hash (``h ^ h >>> 16``), buckets it by the low bits of the table size (16, doubled when
    more than 3/4 full) and iterates bucket by bucket, insertion order within a bucket. So one discovery can
    land a tool anywhere in the array, and growing past 12, 24, ... tools reshuffles every position.
    """
    capacity = HASHSET_CAPACITY
    while len(names) > capacity * HASHSET_LOAD:
        capacity *= 2

    def bucket(name: str) -> int:
        digest = hashlib.sha256(f"{jvm}\x00{name}".encode()).digest()
        h = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(dict.fromkeys(names), key=bucket)  # sorted() is stable: insertion order within a bucket


def in_hashset_order(
    requests: Sequence[tuple[Sequence[Mapping], Sequence[Mapping]]], jvm: int = 0
) -> list[tuple[list[dict], list[dict]]]:
    """The same requests with each tools array in :func:`hashset_order` (messages unchanged): what
    Spring's advisor sends where this port sends discovery order."""
    out = []
    for messages, tools in requests:
        by_name = {t["function"]["name"]: t for t in tools}
        order = hashset_order(list(by_name), jvm)
        out.append(([dict(m) for m in messages], [dict(by_name[n]) for n in order]))
    return out


def shared_prefix_tokens(a: Sequence[Segment], b: Sequence[Segment]) -> int:
    """Tokens of the longest run of identical segments at the start of both requests."""
    total = 0
    for x, y in zip(a, b, strict=False):
        if x.kind == "priming" or x != y:
            break
        total += x.tokens
    return total


# ---- the two rules -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CacheSplit:
    """A request's prompt tokens: served from the cache, written to it, and plain input."""

    read: int
    write: int
    uncached: int


def openai_split(segments: Sequence[Segment], earlier: Sequence[Sequence[Segment]]) -> CacheSplit:
    total = sum(s.tokens for s in segments)
    shared = max((shared_prefix_tokens(segments, e) for e in earlier), default=0)
    read = 0
    if total >= OPENAI_MIN_CACHED and shared >= OPENAI_MIN_CACHED:
        read = OPENAI_MIN_CACHED + (shared - OPENAI_MIN_CACHED) // OPENAI_INCREMENT * OPENAI_INCREMENT
    return CacheSplit(read, 0, total - read)


class AnthropicCache:
    """The cache entries one run writes, and the split of each request under the breakpoint rule."""

    def __init__(self, min_cacheable: int) -> None:
        self.min_cacheable = min_cacheable
        self.entries: dict[str, int] = {}  # prefix hash -> prefix tokens

    def split(self, segments: Sequence[Segment]) -> CacheSplit:
        hashes, ends = _prefix_hashes(segments)
        breakpoints = _breakpoints(segments)
        read = 0
        for b in breakpoints:
            for p in range(b, max(b - ANTHROPIC_LOOKBACK_BLOCKS, 0) - 1, -1):
                if hashes[p] in self.entries:
                    read = max(read, ends[p])
                    break
        last = ends[breakpoints[-1]] if breakpoints else 0
        write = last - read if last >= self.min_cacheable and last > read else 0
        for b in breakpoints:
            if ends[b] >= self.min_cacheable:
                self.entries[hashes[b]] = ends[b]
        total = sum(s.tokens for s in segments)
        return CacheSplit(read, write, total - read - write)


def _prefix_hashes(segments: Sequence[Segment]) -> tuple[list[str], list[int]]:
    hashes, ends = [], []
    running = hashlib.sha256()
    total = 0
    for segment in segments:
        running.update(f"{segment.kind}\x00{segment.key}\x01".encode())
        total += segment.tokens
        hashes.append(running.copy().hexdigest())
        ends.append(total)
    return hashes, ends


def _breakpoints(segments: Sequence[Segment]) -> list[int]:
    """Indexes (inclusive) after which a breakpoint sits: end of tools, end of system, last message."""
    points = set()
    for kind in ("tools_end", "system", "message"):
        found = [i for i, s in enumerate(segments) if s.kind == kind]
        if found:
            points.add(found[-1])
    return sorted(points)


# ---- a run's bill ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RequestCost:
    number: int
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    uncached_tokens: int
    completion_tokens: int
    cost_usd: float
    reported_prompt: int | None = None
    reported_cached: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def request_costs(
    requests: Sequence[tuple[Sequence[Mapping], Sequence[Mapping]]],
    completions: Sequence[int],
    price: Price,
    counter: TokenCounter,
    reported: Sequence[Mapping | None] | None = None,
) -> list[RequestCost]:
    """One row per request ``(messages, tools)`` of a run, in order: cached / written / uncached prompt
    tokens under ``price.provider``'s rule, completion tokens, cost in USD, and what the server's ``usage``
    said (``reported``: one ``usage`` dict or None per request) beside it."""
    if len(completions) != len(requests):
        raise ValueError(f"{len(requests)} requests but {len(completions)} completion counts")
    history: list[list[Segment]] = []
    anthropic = AnthropicCache(price.min_cacheable)
    rows = []
    for i, (messages, tools) in enumerate(requests):
        segments = request_segments(messages, tools, counter)
        split = openai_split(segments, history) if price.provider == "openai" else anthropic.split(segments)
        history.append(segments)
        dollars = (
            split.read * price.cache_read
            + split.write * price.write_price
            + split.uncached * price.input
            + completions[i] * price.output
        ) / 1_000_000
        usage = (reported[i] if reported is not None and i < len(reported) else None) or {}
        rows.append(
            RequestCost(
                i + 1,
                sum(s.tokens for s in segments),
                split.read,
                split.write,
                split.uncached,
                completions[i],
                dollars,
                usage.get("prompt_tokens"),
                usage.get("cached_tokens"),
            )
        )
    return rows


def billed_costs(usages: Sequence[Mapping[str, Any] | None], price: Price) -> list[RequestCost]:
    """What requests cost as the API billed them: each one's ``usage`` as a logged run recorded it
    (normalised: ``prompt_tokens`` with ``cached_tokens`` and ``cache_write_tokens`` inside it,
    ``completion_tokens``), at ``price``. A request with no usage costs nothing and says so by its zeros."""
    rows = []
    for number, usage in enumerate(usages, start=1):
        counts = {k: int((usage or {}).get(k) or 0) for k in _USAGE_COUNTS}
        prompt, read, write, output = (counts[k] for k in _USAGE_COUNTS)
        uncached = max(prompt - read - write, 0)
        dollars = (read * price.cache_read + write * price.write_price + uncached * price.input) / 1_000_000
        dollars += output * price.output / 1_000_000
        rows.append(RequestCost(number, prompt, read, write, uncached, output, dollars, prompt, read))
    return rows


_USAGE_COUNTS = ("prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens")


def totals(rows: Sequence[RequestCost]) -> dict:
    """The run's sums (and the cached share of its prompt tokens)."""
    prompt = sum(r.prompt_tokens for r in rows)
    cached = sum(r.cached_tokens for r in rows)
    return {
        "requests": len(rows),
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "cache_write_tokens": sum(r.cache_write_tokens for r in rows),
        "uncached_tokens": sum(r.uncached_tokens for r in rows),
        "completion_tokens": sum(r.completion_tokens for r in rows),
        "cost_usd": sum(r.cost_usd for r in rows),
        "cached_share": cached / prompt if prompt else 0.0,
    }
