"""One object holding every advisor setting and what Spring Boot wires around the advisor, readable from
Spring Boot properties (spec §10).

A Spring user can paste their ``spring.ai.chat.client.tool-search-advisor.*`` properties and get the same
setup::

    config = ToolSearchConfig.from_spring_properties({
        "spring.ai.chat.client.tool-search-advisor.enabled": "true",
        "spring.ai.chat.client.tool-search-advisor.tool-index-type": "lucene",
        "spring.ai.chat.client.tool-search-advisor.eviction.ttl": "10m",
    })
    advisor = config.build_advisor()
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from toolsearch_lab.index.factory import make_index
from toolsearch_lab.loop.advisor import ToolSearchAdvisor
from toolsearch_lab.loop.settings import AdvisorSettings, SettingError
from toolsearch_lab.model import ToolIndex, positive_int_problem
from toolsearch_lab.session.eviction import CompositeEviction, EvictionStrategy, LruEviction, TtlEviction
from toolsearch_lab.tokens import TokenCounter

PREFIX = "spring.ai.chat.client.tool-search-advisor."
INDEX_TYPES = ("regex", "lucene", "vector", "hybrid")
# The properties read, after the prefix, by the setting each one sets ("advisor-order" sets none).
PROPERTY_OF = {
    "enabled": "enabled",
    "index_type": "tool-index-type",
    "max_results": "max-results",
    "system_message_suffix": "system-message-suffix",
    "reference_tool_name_accumulation": "reference-tool-name-accumulation",
    "session_id_key": "session-id-key-name",
    "lru_max_sessions": "eviction.lru-max-sessions",
    "ttl": "eviction.ttl",
    "lucene_min_score": "lucene.min-score-threshold",
}
_KNOWN = {*PROPERTY_OF.values(), "advisor-order"}


@dataclass(frozen=True)
class ToolSearchConfig(AdvisorSettings):
    """The advisor's settings (:class:`~toolsearch_lab.loop.settings.AdvisorSettings`, checked as they are)
    plus what Spring Boot wires around the advisor: whether it is ``enabled``, the index (``index_type``,
    ``lucene_min_score``, ``index_options``) and the eviction strategy (``lru_max_sessions``, ``ttl``)."""

    reference_tool_name_accumulation: bool | None = True  # Spring's property defaults to true
    enabled: bool = False  # Spring: nothing is registered unless enabled
    index_type: str = "regex"  # Spring's default index
    lru_max_sessions: int = 1000
    ttl: timedelta | None = None
    lucene_min_score: float = 0.25
    index_options: dict[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        super().__post_init__()
        problem = positive_int_problem(self.lru_max_sessions)
        if problem is not None:
            raise SettingError(type(self).__name__, "lru_max_sessions", problem)
        if self.ttl is not None and self.ttl <= timedelta(0):
            raise SettingError(type(self).__name__, "ttl", f"must be positive, got {self.ttl!r}")
        if self.lucene_min_score < 0:
            problem = f"must be >= 0, got {self.lucene_min_score!r}"
            raise SettingError(type(self).__name__, "lucene_min_score", problem)

    # ---- building -------------------------------------------------------------------------------------
    def eviction(self) -> EvictionStrategy:
        """LRU(lru_max_sessions), or Composite(LRU, TTL) when a ttl is set — as Spring Boot wires it."""
        lru = LruEviction(self.lru_max_sessions)
        return CompositeEviction(lru, TtlEviction(self.ttl)) if self.ttl is not None else lru

    def build_index(self) -> ToolIndex:
        if self.index_type not in INDEX_TYPES:
            raise ValueError(
                f"ToolSearchConfig.index_type {self.index_type!r} is not one of {list(INDEX_TYPES)}"
            )
        options = dict(self.index_options)
        if self.index_type == "lucene":
            options.setdefault("min_score_threshold", self.lucene_min_score)
        return make_index(self.index_type, **options)

    def build_advisor(
        self, index: ToolIndex | None = None, token_counter: TokenCounter | None = None
    ) -> ToolSearchAdvisor:
        """A user-supplied index always wins over ``index_type`` (Spring: a custom ToolIndex bean wins). The
        advisor takes this config as its settings, as checked when it was made."""
        return ToolSearchAdvisor(
            index if index is not None else self.build_index(),
            settings=self,
            eviction=self.eviction(),
            token_counter=token_counter,
            index_name=None if index is not None else self.index_type,
        )

    def with_options(self, **changes: Any) -> ToolSearchConfig:
        return replace(self, **changes)

    # ---- Spring properties ----------------------------------------------------------------------------
    @classmethod
    def from_spring_properties(cls, properties: Mapping[str, Any]) -> ToolSearchConfig:
        """Read ``spring.ai.chat.client.tool-search-advisor.*`` keys (other keys are ignored).

        Defaults and validation follow Spring: disabled unless ``enabled``; ``tool-index-type`` is matched
        case-insensitively and an unknown value only warns (and leaves the default index); ``eviction.ttl``
        takes Spring durations like ``10m``, ``30s``, ``1h``, ``500ms`` or ISO-8601 ``PT10M``.
        ``advisor-order`` has no meaning here (there is one advisor) and is accepted and ignored.
        """
        values = _our_properties(properties)
        kwargs: dict[str, Any] = {}
        if "enabled" in values:
            kwargs["enabled"] = _bool(values["enabled"], "enabled")
        if "tool-index-type" in values:
            kind = str(values["tool-index-type"]).strip().lower()
            if kind in INDEX_TYPES:
                kwargs["index_type"] = kind
            else:
                given = values["tool-index-type"]
                warnings.warn(
                    f"{PREFIX}tool-index-type={given!r} is not one of {list(INDEX_TYPES)}; "
                    "keeping the default 'regex' (Spring logs a warning and registers no index)",
                    stacklevel=2,
                )
        if values.get("max-results") not in (None, ""):
            kwargs["max_results"] = _int(values["max-results"], "max-results")
        if str(values.get("system-message-suffix") or "").strip():
            kwargs["system_message_suffix"] = str(values["system-message-suffix"])
        if "reference-tool-name-accumulation" in values:
            kwargs["reference_tool_name_accumulation"] = _bool(
                values["reference-tool-name-accumulation"], "reference-tool-name-accumulation"
            )
        if "session-id-key-name" in values:
            key = values["session-id-key-name"]
            # Not str(): None would become the key "None", which a context could never carry by mistake.
            kwargs["session_id_key"] = key.strip() if isinstance(key, str) else key
        if "eviction.lru-max-sessions" in values:
            kwargs["lru_max_sessions"] = _int(
                values["eviction.lru-max-sessions"], "eviction.lru-max-sessions"
            )
        if values.get("eviction.ttl") not in (None, ""):
            kwargs["ttl"] = parse_duration(values["eviction.ttl"], PREFIX + "eviction.ttl")
        if "lucene.min-score-threshold" in values:
            try:
                kwargs["lucene_min_score"] = float(values["lucene.min-score-threshold"])
            except (TypeError, ValueError):
                given = values["lucene.min-score-threshold"]
                raise ValueError(
                    f"{PREFIX}lucene.min-score-threshold must be a number, got {given!r}"
                ) from None
        try:
            return cls(**kwargs)
        except SettingError as exc:  # a value read that breaks its setting's rule: name it as it was written
            raise ValueError(f"{PREFIX}{PROPERTY_OF[exc.setting]} {exc.problem}") from None


def _our_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tool-search-advisor.*`` properties by relaxed name; an unknown one of ours is an error."""
    values = {}
    for key, value in properties.items():
        if not isinstance(key, str) or not key.startswith(PREFIX):
            continue
        name = _relaxed(key[len(PREFIX) :])
        if name not in _KNOWN:
            raise ValueError(f"unknown Spring property {key!r}; known: {sorted(PREFIX + k for k in _KNOWN)}")
        values[name] = value
    return values


def _relaxed(name: str) -> str:
    # Spring's relaxed binding: maxResults, max_results and max-results are the same property.
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name).replace("_", "-")
    return name.lower()


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ValueError(f"{PREFIX}{name} must be true or false, got {value!r}")


# Spring binds these properties to a Java ``Integer``: a larger value fails there, and here it can only be
# a typo (a limit of 10**20 results or sessions means no limit, which is not what the setting is for).
JAVA_INT_MAX = 2**31 - 1


def _int(value: Any, name: str) -> int:
    """The property's integer, as Spring's ``Integer`` binding reads it; whether the setting takes that number
    (at least 1) is the setting's rule, checked when the config is made."""
    text = "" if isinstance(value, bool) else str(value).strip()
    if not re.fullmatch(r"[+-]?\d+", text):  # int() would also take "1_000" and " ２ "
        raise ValueError(f"{PREFIX}{name} must be an integer, got {value!r:.60}")
    if len(text) > 12 or int(text) > JAVA_INT_MAX:  # 12 digits: int() of 40,000 digits raises
        raise ValueError(f"{PREFIX}{name} must be an integer from 1 to {JAVA_INT_MAX:,}, got {value!r:.60}")
    return int(text)


_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: Any, name: str = "duration") -> timedelta:
    """Spring Boot's simple (``10m``, ``500ms``; a bare number is milliseconds) and ISO-8601 (``PT10M``)."""
    if isinstance(value, timedelta):
        return value
    text = str(value).strip()
    try:
        simple = re.fullmatch(r"([+-]?\d{1,30})\s*(ns|us|ms|s|m|h|d)?", text, re.IGNORECASE)
        if simple:
            unit = (simple.group(2) or "ms").lower()
            return timedelta(seconds=int(simple.group(1)) * _UNITS[unit])
        iso = re.fullmatch(
            r"P(?:(\d{1,30})D)?(?:T(?:(\d{1,30})H)?(?:(\d{1,30})M)?(?:(\d{1,30}(?:\.\d{1,9})?)S)?)?",
            text.upper(),
        )
        if iso and text.upper() not in ("P", "PT"):
            d, h, m, s = (float(g) if g else 0.0 for g in iso.groups())
            return timedelta(days=d, hours=h, minutes=m, seconds=s)
    except OverflowError:  # Spring's Duration holds ~292 billion years; Python's timedelta 999,999,999 days
        raise ValueError(
            f"{name}={value!r:.60} is longer than the longest duration supported "
            f"({timedelta.max.days:,} days); use a shorter one, or leave it unset for no time limit"
        ) from None
    raise ValueError(f"{name} must be a duration like 10m, 30s, 1h, 500ms or PT10M, got {value!r:.60}")
