"""Chat models by name: the offline simulated agents, or an OpenAI- or Anthropic-compatible model from the
environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolsearch_lab.models.base import ChatModel
from toolsearch_lab.models.fit import Step
from toolsearch_lab.models.simulated import AGENT_NAMES, DEFAULT_MODE, simulated_agent

# "simulated" is the default simulated agent (DEFAULT_MODE); "openai" reads OPENAI_API_KEY, OPENAI_BASE_URL
# and OPENAI_MODEL; "anthropic" reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_MODEL.
MODEL_NAMES = ("simulated", *AGENT_NAMES, "openai", "anthropic")


def make_model(name: str | ChatModel, steps: Sequence[Step | dict] = (), **agent_options: Any) -> ChatModel:
    """The chat model called ``name`` (one of :data:`MODEL_NAMES`), or ``name`` itself when it is already a
    ChatModel. A simulated agent works through ``steps`` (a scenario's ``agent_steps()``), with
    ``agent_options`` (:class:`~toolsearch_lab.models.simulated.SimulatedAgent`'s keywords); the OpenAI
    model takes none."""
    if not isinstance(name, str):
        return name
    if name in ("simulated", *AGENT_NAMES):
        return simulated_agent(DEFAULT_MODE if name == "simulated" else name, steps, **agent_options)
    if name in ("openai", "anthropic"):
        if agent_options:
            raise ValueError(
                f"make_model({name!r}): options {sorted(agent_options)} are for the simulated agents only"
            )
        # The SDK clients are imported only when asked for; from_env raises ModelNotConfigured now, naming
        # what to set, rather than failing the run's first request.
        if name == "anthropic":
            from toolsearch_lab.models.anthropic import AnthropicChatModel

            return AnthropicChatModel.from_env()
        from toolsearch_lab.models.openai import OpenAIChatModel

        return OpenAIChatModel.from_env()
    raise ValueError(
        f"unknown model {name!r}: use 'simulated', {', '.join(repr(m) for m in AGENT_NAMES)}, "
        "'openai', 'anthropic' or a ChatModel object"
    )
