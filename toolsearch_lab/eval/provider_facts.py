"""What the lab relies on about the providers' APIs, each fact once: the rule, in the words the docs, the
doctor and the re-priced replays state it, and the pages and threads it comes from.

``tests/test_provider_facts.py`` finds every statement of each fact in docs/ and the notebooks' Markdown
(``finds``) and fails unless it uses the fact's ``words``; it checks that each fact is stated somewhere, and
that the doctor's findings and the replay's OpenAI rows cite the fact they rest on. What a page does not say
in so many words is marked so in ``note``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BY_KEY", "FACTS", "ProviderFact"]

ANTHROPIC_TOOL_SEARCH = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool"
ANTHROPIC_CACHING = (
    "https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-use-with-prompt-caching"
)
OPENAI_TOOL_SEARCH = "https://developers.openai.com/api/docs/guides/tools-tool-search"


@dataclass(frozen=True)
class ProviderFact:
    key: str
    provider: Literal["anthropic", "openai"]
    rule: str  # the fact, as the lab states it: every statement of it contains ``words``
    words: str
    finds: str  # a regular expression that finds a statement of the fact in prose, however worded
    sources: tuple[str, ...]  # the provider's page first, then the threads that report it
    read: str  # when the sources were read
    note: str = ""  # what the sources leave open


FACTS = (
    ProviderFact(
        key="openai-flat-billed",
        provider="openai",
        rule="deferred functions outside a namespace are billed in full",
        words="billed in full",
        finds=r"outside (?:a|any) namespace",
        sources=(OPENAI_TOOL_SEARCH, "https://github.com/langchain-ai/langchain/issues/38573"),
        read="2026-12-07",
        note="reported by users ('deferring made requests larger'); OpenAI's guide recommends namespaces",
    ),
    ProviderFact(
        key="openai-namespace-surface",
        provider="openai",
        rule="the model sees a namespace's name and description until a search loads its functions",
        words="name and description",
        finds=r"namespace(?:'s|s')? (?:is |are )?(?:billed|seen|shown) as",
        sources=(OPENAI_TOOL_SEARCH,),
        read="2026-12-07",
        note="the guide says the model sees the name and description of everything searchable; how many "
        "tokens that is, it does not say: the lab counts them as one definition per namespace",
    ),
    ProviderFact(
        key="openai-loaded-at-end",
        provider="openai",
        rule="loaded tools go at the end of the model's context, so the cached prefix is kept",
        words="at the end of the",
        finds=r"loaded (?:tools|definitions|functions)[^.\n]*?end of",
        sources=(OPENAI_TOOL_SEARCH,),
        read="2026-12-07",
    ),
    ProviderFact(
        key="anthropic-defer-cache-control",
        provider="anthropic",
        rule="defer_loading and cache_control on the same tool is refused with a 400",
        words="refused with a 400",
        finds=r"cache_control`? on the same tool|same tool[^.\n]*?cache_control",
        sources=(ANTHROPIC_TOOL_SEARCH, ANTHROPIC_CACHING, "https://github.com/nearai/ironclaw/issues/7274"),
        read="2026-12-07",
        note="put the cache breakpoint on a tool that is not deferred",
    ),
)

BY_KEY = {f.key: f for f in FACTS}
