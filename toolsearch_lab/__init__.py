"""toolsearch-lab: explore and teach the tool search tool pattern (RAG over tools).

The core names are importable from here; heavier pieces (embeddings, MCP, the UI) load on first use.
"""

from __future__ import annotations

import importlib

from .advisor import RunResult, ToolNotFoundError, ToolSearchAdvisor
from .chat_model import AssistantTurn, ChatModel, ScriptedModel, ToolCall, Usage
from .eviction import AlwaysEvict, CompositeEviction, LruEviction, NeverEvict, TtlEviction
from .fingerprint import fingerprint
from .tool import SearchMetadata, SearchRequest, SearchResponse, Tool, ToolIndex, ToolReference
from .tool_search_tool import ToolSearchTool
from .trace import RunTrace

__version__ = "0.1.0"

# name -> module, imported lazily so `import toolsearch_lab` stays fast and needs no model files.
_LAZY = {
    "RegexToolIndex": "regex_index",
    "BM25ToolIndex": "lucene_index",
    "LuceneToolIndex": "lucene_index",
    "VectorToolIndex": "vector_index",
    "HybridToolIndex": "hybrid_index",
    "make_index": "index_factory",
    "MiniLMEmbedder": "embedders",
    "OpenAIEmbedder": "embedders",
    "TfidfEmbedder": "embedders",
    "TokenCounter": "tokens",
    "ToolCatalog": "catalog",
    "load_catalog": "catalog",
    "tool": "catalog",
    "load_dataset": "datasets",
    "evaluate": "evaluation",
    "ToolSearchConfig": "config",
    "OpenAIChatModel": "openai_chat",
    "SimulatedAgent": "simulated_agent",
    "load_scenario": "scenarios",
    "run_scenario": "scenarios",
    "list_scenarios": "scenarios",
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
