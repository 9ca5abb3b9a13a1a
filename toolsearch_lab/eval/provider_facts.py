"""What the lab relies on about the providers' APIs, each fact once: the rule, in the words the docs, the
doctor and the re-priced replays state it in, and the pages and threads it comes from.

``tests/test_provider_facts.py`` finds every statement of each fact in docs/ and the notebooks' Markdown
(``finds``) and fails unless it uses the fact's ``rule`` word for word; it checks that each fact is stated
somewhere, and that the doctor's findings and the replay's OpenAI rows cite the fact they rest on. What a
page does not say in so many words is marked so in ``note``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BY_KEY", "FACTS", "READ", "ProviderFact"]

ANTHROPIC_TOOL_SEARCH = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool"
ANTHROPIC_CACHING = (
    "https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-use-with-prompt-caching"
)
OPENAI_TOOL_SEARCH = "https://developers.openai.com/api/docs/guides/tools-tool-search"


READ = "2026-12-07"  # when the sources were read


@dataclass(frozen=True)
class ProviderFact:
    key: str  # the provider's name first
    rule: str  # the fact, in the words every statement of it uses
    finds: str  # a regular expression that finds a statement of the fact in prose, however worded
    sources: tuple[str, ...]  # the provider's page first, then the threads that report it
    note: str = ""  # what the sources leave open

    @property
    def provider(self) -> Literal["anthropic", "openai"]:
        return "anthropic" if self.key.startswith("anthropic-") else "openai"


FACTS = (
    ProviderFact(
        key="openai-flat-billed",
        rule="deferred functions outside a namespace are billed in full",
        finds=r"outside (?:a|any) namespace",
        sources=(OPENAI_TOOL_SEARCH, "https://github.com/langchain-ai/langchain/issues/38573"),
        note="reported by users ('deferring made requests larger'); OpenAI's guide recommends namespaces",
    ),
    ProviderFact(
        key="openai-namespace-surface",
        rule="each namespace is billed as its name and description until a search loads its functions",
        finds=r"namespace(?:'s|s')? (?:is |are )?(?:billed|seen|shown) as",
        sources=(OPENAI_TOOL_SEARCH,),
        note="the guide says the model sees the name and description of everything searchable; how many "
        "tokens that is, it does not say: the lab counts them as one definition per namespace",
    ),
    ProviderFact(
        key="openai-loaded-at-end",
        rule="loaded tools go at the end of the model's context, so the cached prefix is kept",
        finds=r"loaded (?:tools|definitions|functions)[^.\n]*?end of",
        sources=(OPENAI_TOOL_SEARCH,),
    ),
    ProviderFact(
        key="anthropic-defer-cache-control",
        rule="defer_loading and cache_control on the same tool is refused with a 400",
        finds=r"cache_control`? on the same tool|same tool[^.\n]*?cache_control",
        sources=(ANTHROPIC_TOOL_SEARCH, ANTHROPIC_CACHING, "https://github.com/nearai/ironclaw/issues/7274"),
        note="put the cache breakpoint on a tool that is not deferred",
    ),
)

BY_KEY = {f.key: f for f in FACTS}
