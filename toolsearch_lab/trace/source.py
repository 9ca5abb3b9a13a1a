"""Where a trace came from (:data:`TraceSource`) and, for a replayed run, what its log says about how the
provider was set up (:class:`ReplaySettings`): the fields views read instead of keys of ``RunTrace.config``,
which holds the loop's own settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolsearch_lab.trace.records import check_choice

__all__ = [
    "CHAT_COMPLETIONS_COUNT",
    "Provider",
    "ReplaySettings",
    "SearchTool",
    "SearchVariant",
    "SubAgent",
    "TraceSource",
    "TranscriptFormat",
]

# "loop": ToolSearchAdvisor ran it (a single request or a conversation); "replay": it was read from a log of
# a real run (toolsearch_lab.replay.load.load_transcript), and RunTrace.replay says how that run was set up.
TraceSource = Literal["loop", "replay"]
TranscriptFormat = Literal[
    "anthropic-messages", "openai-responses", "openai-chat-completions", "claude-code-session"
]
Provider = Literal["anthropic", "openai"]
# How a replayed run's search tool searched. "regex" / "bm25": Anthropic's server-side tool_search_tool_regex
# and tool_search_tool_bm25; "hosted": OpenAI's tool_search run by OpenAI (execution "server"); "client": a
# search the caller ran and answered (Anthropic: a tool whose tool_result holds tool_reference blocks; OpenAI:
# tool_search with execution "client"; Claude Code's ToolSearch).
SearchVariant = Literal["regex", "bm25", "hosted", "client"]
# What this project's token count of a request covers, unless a replayed log holds less than a request.
CHAT_COMPLETIONS_COUNT = "each request in chat-completions form"
_PROVIDERS: dict[TranscriptFormat, Provider] = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai",
    "openai-chat-completions": "openai",
    "claude-code-session": "anthropic",  # Claude Code calls Anthropic's Messages API
}


@dataclass
class SearchTool:
    """A search tool of a replayed run: its name as the requests gave it, and how it searched."""

    name: str
    variant: SearchVariant

    def __post_init__(self) -> None:
        check_choice("SearchTool", "variant", self.variant, SearchVariant)


@dataclass
class SubAgent:
    """A sub-agent of a replayed Claude Code session, read from its own file (``<session>/subagents/``):
    how the replay labels it, the file, and the iterations (numbers) that are its requests."""

    label: str
    file: str
    requests: list[int] = field(default_factory=list)


@dataclass(kw_only=True)
class ReplaySettings:
    """What the log of a replayed run says about how it ran, and which file it was.

    ``format``: the transcript's format (which names the provider, :attr:`provider`). ``search_tools``: the
    search tools its requests declared or used, in first-appearance order. ``namespaces``: the OpenAI
    namespaces its requests declared (none in the other formats). ``deferred_tools``: every tool a request
    sent deferred (``defer_loading``; Claude Code's deferred tools), in first-appearance order: what its
    searches searched. How many results a search asked for is each search's own
    (``SearchRecord.max_results``): no format declares one for the run. ``served_model``: the model the API
    says answered (``RunTrace.model`` is the one asked for). ``endpoint``: the host the requests went to
    (never the URL's credentials).
    ``exchanges`` (API formats) and ``user_prompts`` (Claude Code): how many of each the file holds.
    ``counts_definitions``: whether this project's token count includes the tool definitions (a Claude Code
    session file holds none unless a catalog supplies them). ``file``, ``sha256``, ``provenance``: the file
    it was read from (None when the trace was built from records, not a file). ``sub_agents``: the
    sub-agents whose files a Claude Code replay followed, their requests among the run's iterations.
    """

    format: TranscriptFormat
    search_tools: list[SearchTool] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    deferred_tools: list[str] = field(default_factory=list)
    served_model: str | None = None
    endpoint: str | None = None
    exchanges: int | None = None
    user_prompts: int | None = None
    counts_definitions: bool = True
    file: str | None = None
    sha256: str | None = None
    provenance: str | None = None
    sub_agents: list[SubAgent] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_choice("ReplaySettings", "format", self.format, TranscriptFormat)

    def agent_of(self, number: int) -> str | None:
        """The label of the sub-agent whose request iteration ``number`` is (None: the session's own)."""
        return next((a.label for a in self.sub_agents if number in a.requests), None)

    @property
    def provider(self) -> Provider:
        return _PROVIDERS[self.format]

    @property
    def search_tool_names(self) -> list[str]:
        return [s.name for s in self.search_tools]

    @property
    def our_count(self) -> str:
        """What this project's token count of each request covers, in words."""
        if self.format != "claude-code-session":
            return CHAT_COMPLETIONS_COUNT
        if self.counts_definitions:
            return "the conversation in the file and the loaded tools' definitions"
        return (
            "the conversation in the file only: a session file holds no system prompt and no tool "
            "definitions (pass a catalog to count the deferred tools)"
        )
