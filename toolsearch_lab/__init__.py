"""toolsearch-lab: explore and teach the tool search tool pattern (RAG over tools).

The core names are importable from here; heavier pieces (embeddings, MCP, the UI) load on first use.
"""

from __future__ import annotations

import importlib

from toolsearch_lab.loop.advisor import RunResult, ToolNotFoundError, ToolSearchAdvisor
from toolsearch_lab.loop.search_tool import ToolSearchTool
from toolsearch_lab.model import SearchMetadata, SearchRequest, SearchResponse, Tool, ToolIndex, ToolReference
from toolsearch_lab.models.base import AssistantTurn, ChatModel, ScriptedModel, ToolCall, Usage
from toolsearch_lab.session.eviction import (
    AlwaysEvict,
    CompositeEviction,
    LruEviction,
    NeverEvict,
    TtlEviction,
)
from toolsearch_lab.session.fingerprint import fingerprint
from toolsearch_lab.trace import RunTrace

__version__ = "0.1.0"

# name -> module, imported lazily so `import toolsearch_lab` stays fast and needs no model files.
_LAZY = {
    "RegexToolIndex": "index.regex",
    "BM25ToolIndex": "index.bm25.index",
    "LuceneToolIndex": "index.bm25.index",
    "VectorToolIndex": "index.vector",
    "HybridToolIndex": "index.hybrid",
    "LearnedToolIndex": "index.learned",
    "make_index": "index.factory",
    "MiniLMEmbedder": "embed.minilm",
    "OpenAIEmbedder": "embed.openai",
    "TfidfEmbedder": "embed.tfidf",
    "TokenCounter": "tokens",
    "ToolCatalog": "catalog.container",
    "load_catalog": "catalog.container",
    "tool": "catalog.container",
    "load_dataset": "eval.datasets",
    "evaluate": "eval.metrics",
    "ToolSearchConfig": "loop.config",
    "Strategy": "loop.strategy",
    "make_strategy": "loop.strategy",
    "compare_strategies": "eval.compare",
    "load_prices": "eval.cost",
    "OpenAIChatModel": "models.openai",
    "SimulatedAgent": "models.simulated",
    "simulated_agent": "models.simulated",
    "Glossary": "models.glossary",
    "load_scenario": "eval.scenarios",
    "run_scenario": "eval.scenarios",
    "list_scenarios": "eval.scenarios",
    "diagnose": "eval.doctor",
    "DoctorReport": "eval.doctor",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolsearch_lab' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "AlwaysEvict",
    "AssistantTurn",
    "ChatModel",
    "CompositeEviction",
    "LruEviction",
    "NeverEvict",
    "RunResult",
    "RunTrace",
    "ScriptedModel",
    "SearchMetadata",
    "SearchRequest",
    "SearchResponse",
    "Tool",
    "ToolCall",
    "ToolIndex",
    "ToolNotFoundError",
    "ToolReference",
    "ToolSearchAdvisor",
    "ToolSearchTool",
    "TtlEviction",
    "Usage",
    "fingerprint",
]
__all__ += list(_LAZY)
