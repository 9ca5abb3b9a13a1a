"""toolsearch-lab: explore and teach the tool search tool pattern (RAG over tools).

The front door: every public name a notebook or the README uses is importable from here (widgets and the
notebooks' exercises from ``toolsearch_lab.ui``). Each name loads its module on first use, so importing the
package (or starting the CLI) costs no scikit-learn, tiktoken, onnxruntime or plotly until a name needs them.
Type checkers and IDEs read the real imports in the ``TYPE_CHECKING`` block; ``_LAZY`` must list the same
names from the same modules (tests/test_front_door.py holds the two to each other).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolsearch_lab.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from toolsearch_lab.catalog.container import (
        SHIPPED_CATALOGS,
        ToolCatalog,
        load_catalog,
        tool,
        tools_from_json,
    )
    from toolsearch_lab.catalog.export import (
        anthropic_tool_reference_result,
        openai_tool_search_output,
        to_anthropic_tools,
        to_openai_responses_tools,
        to_openai_tools,
    )
    from toolsearch_lab.catalog.functions import parse_docstring
    from toolsearch_lab.catalog.live import McpServers, connect_mcp_config, connect_mcp_stdio
    from toolsearch_lab.embed.minilm import MiniLMEmbedder
    from toolsearch_lab.embed.openai import OpenAIEmbedder
    from toolsearch_lab.embed.tfidf import TfidfEmbedder
    from toolsearch_lab.eval.ceiling import share_within, step_ranks
    from toolsearch_lab.eval.compare import Headline, compare, compare_strategies, comparison_rows, headline
    from toolsearch_lab.eval.cost import load_prices
    from toolsearch_lab.eval.datasets import Dataset, Query, load_dataset
    from toolsearch_lab.eval.doctor import DoctorReport, diagnose
    from toolsearch_lab.eval.doctor.examples import helpdesk_catalog, rewrite_descriptions
    from toolsearch_lab.eval.metrics import evaluate
    from toolsearch_lab.eval.ranker_training import DEFAULT_FEATURES, fit_ranker
    from toolsearch_lab.eval.scaling import catalog_of, distractor_pool, measure_index
    from toolsearch_lab.eval.scenarios import (
        buildable_indexes,
        descriptions_label,
        failed_steps_text,
        list_scenarios,
        load_scenario,
        run_scenario,
        scenario_from_dict,
        scenario_matrix,
        summarise_matrix,
        summary_text,
    )
    from toolsearch_lab.eval.wording_matrix import load_wording_matrix
    from toolsearch_lab.index.bm25.index import BM25ToolIndex, LuceneToolIndex
    from toolsearch_lab.index.factory import INDEX_KINDS, THRESHOLD_OPTIONS, make_index, threshold_options
    from toolsearch_lab.index.hybrid import HybridToolIndex
    from toolsearch_lab.index.learned import FEATURES, LearnedToolIndex
    from toolsearch_lab.index.regex import PatternError, PatternTimeoutError, RegexToolIndex
    from toolsearch_lab.index.vector import VectorToolIndex
    from toolsearch_lab.loop.advisor import RunResult, ToolNotFoundError, ToolSearchAdvisor
    from toolsearch_lab.loop.config import ToolSearchConfig
    from toolsearch_lab.loop.search_tool import ToolSearchTool
    from toolsearch_lab.loop.strategies import make_strategy
    from toolsearch_lab.loop.strategy import Strategy
    from toolsearch_lab.model import (
        Explanation,
        SearchMetadata,
        SearchRequest,
        SearchResponse,
        Tool,
        ToolIndex,
        ToolReference,
    )
    from toolsearch_lab.models.base import AssistantTurn, ChatModel, ScriptedModel, ToolCall, Usage
    from toolsearch_lab.models.factory import make_model
    from toolsearch_lab.models.glossary import Glossary, default_glossary
    from toolsearch_lab.models.openai import OpenAIChatModel
    from toolsearch_lab.models.simulated import SimulatedAgent, simulated_agent
    from toolsearch_lab.session.eviction import (
        AlwaysEvict,
        CompositeEviction,
        LruEviction,
        NeverEvict,
        TtlEviction,
    )
    from toolsearch_lab.session.fingerprint import fingerprint
    from toolsearch_lab.text.lucene import analyze
    from toolsearch_lab.text.normalise import keyword_tokens, porter_stem
    from toolsearch_lab.text.stopwords import ENGLISH_STOP_WORDS
    from toolsearch_lab.tokens import DEFAULT_ENCODING, ENCODINGS, REPLY_PRIMING, TokenCounter
    from toolsearch_lab.trace import RunTrace

# name -> module (relative to this package) that defines it.
_LAZY: dict[str, str] = {
    "Explanation": "model",
    "SearchMetadata": "model",
    "SearchRequest": "model",
    "SearchResponse": "model",
    "Tool": "model",
    "ToolIndex": "model",
    "ToolReference": "model",
    "RunResult": "loop.advisor",
    "ToolNotFoundError": "loop.advisor",
    "ToolSearchAdvisor": "loop.advisor",
    "ToolSearchTool": "loop.search_tool",
    "ToolSearchConfig": "loop.config",
    "Strategy": "loop.strategy",
    "make_strategy": "loop.strategies",
    "AssistantTurn": "models.base",
    "ChatModel": "models.base",
    "ScriptedModel": "models.base",
    "ToolCall": "models.base",
    "Usage": "models.base",
    "OpenAIChatModel": "models.openai",
    "SimulatedAgent": "models.simulated",
    "simulated_agent": "models.simulated",
    "make_model": "models.factory",
    "Glossary": "models.glossary",
    "default_glossary": "models.glossary",
    "AlwaysEvict": "session.eviction",
    "CompositeEviction": "session.eviction",
    "LruEviction": "session.eviction",
    "NeverEvict": "session.eviction",
    "TtlEviction": "session.eviction",
    "fingerprint": "session.fingerprint",
    "RunTrace": "trace",
    "DEFAULT_ENCODING": "tokens",
    "ENCODINGS": "tokens",
    "REPLY_PRIMING": "tokens",
    "TokenCounter": "tokens",
    "analyze": "text.lucene",
    "keyword_tokens": "text.normalise",
    "porter_stem": "text.normalise",
    "ENGLISH_STOP_WORDS": "text.stopwords",
    "PatternError": "index.regex",
    "PatternTimeoutError": "index.regex",
    "RegexToolIndex": "index.regex",
    "BM25ToolIndex": "index.bm25.index",
    "LuceneToolIndex": "index.bm25.index",
    "VectorToolIndex": "index.vector",
    "HybridToolIndex": "index.hybrid",
    "DEFAULT_FEATURES": "eval.ranker_training",
    "FEATURES": "index.learned",
    "LearnedToolIndex": "index.learned",
    "fit_ranker": "eval.ranker_training",
    "INDEX_KINDS": "index.factory",
    "THRESHOLD_OPTIONS": "index.factory",
    "make_index": "index.factory",
    "threshold_options": "index.factory",
    "MiniLMEmbedder": "embed.minilm",
    "OpenAIEmbedder": "embed.openai",
    "TfidfEmbedder": "embed.tfidf",
    "SHIPPED_CATALOGS": "catalog.container",
    "ToolCatalog": "catalog.container",
    "load_catalog": "catalog.container",
    "tool": "catalog.container",
    "tools_from_json": "catalog.container",
    "parse_docstring": "catalog.functions",
    "McpServers": "catalog.live",
    "connect_mcp_config": "catalog.live",
    "connect_mcp_stdio": "catalog.live",
    "anthropic_tool_reference_result": "catalog.export",
    "openai_tool_search_output": "catalog.export",
    "to_anthropic_tools": "catalog.export",
    "to_openai_responses_tools": "catalog.export",
    "to_openai_tools": "catalog.export",
    "Dataset": "eval.datasets",
    "Query": "eval.datasets",
    "load_dataset": "eval.datasets",
    "evaluate": "eval.metrics",
    "share_within": "eval.ceiling",
    "step_ranks": "eval.ceiling",
    "compare": "eval.compare",
    "compare_strategies": "eval.compare",
    "comparison_rows": "eval.compare",
    "Headline": "eval.compare",
    "headline": "eval.compare",
    "load_prices": "eval.cost",
    "catalog_of": "eval.scaling",
    "distractor_pool": "eval.scaling",
    "measure_index": "eval.scaling",
    "load_wording_matrix": "eval.wording_matrix",
    "buildable_indexes": "eval.scenarios",
    "descriptions_label": "eval.scenarios",
    "failed_steps_text": "eval.scenarios",
    "list_scenarios": "eval.scenarios",
    "load_scenario": "eval.scenarios",
    "run_scenario": "eval.scenarios",
    "scenario_from_dict": "eval.scenarios",
    "scenario_matrix": "eval.scenarios",
    "summarise_matrix": "eval.scenarios",
    "summary_text": "eval.scenarios",
    "DoctorReport": "eval.doctor",
    "diagnose": "eval.doctor",
    "helpdesk_catalog": "eval.doctor.examples",
    "rewrite_descriptions": "eval.doctor.examples",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)


__all__ = [
    "AlwaysEvict",
    "AssistantTurn",
    "BM25ToolIndex",
    "ChatModel",
    "CompositeEviction",
    "DEFAULT_ENCODING",
    "DEFAULT_FEATURES",
    "Dataset",
    "DoctorReport",
    "ENCODINGS",
    "ENGLISH_STOP_WORDS",
    "Explanation",
    "FEATURES",
    "Glossary",
    "Headline",
    "HybridToolIndex",
    "INDEX_KINDS",
    "LearnedToolIndex",
    "LruEviction",
    "LuceneToolIndex",
    "McpServers",
    "MiniLMEmbedder",
    "NeverEvict",
    "OpenAIChatModel",
    "OpenAIEmbedder",
    "PatternError",
    "PatternTimeoutError",
    "Query",
    "REPLY_PRIMING",
    "RegexToolIndex",
    "RunResult",
    "RunTrace",
    "SHIPPED_CATALOGS",
    "ScriptedModel",
    "SearchMetadata",
    "SearchRequest",
    "SearchResponse",
    "SimulatedAgent",
    "Strategy",
    "THRESHOLD_OPTIONS",
    "TfidfEmbedder",
    "TokenCounter",
    "Tool",
    "ToolCall",
    "ToolCatalog",
    "ToolIndex",
    "ToolNotFoundError",
    "ToolReference",
    "ToolSearchAdvisor",
    "ToolSearchConfig",
    "ToolSearchTool",
    "TtlEviction",
    "Usage",
    "VectorToolIndex",
    "analyze",
    "anthropic_tool_reference_result",
    "buildable_indexes",
    "catalog_of",
    "compare",
    "compare_strategies",
    "comparison_rows",
    "connect_mcp_config",
    "connect_mcp_stdio",
    "default_glossary",
    "descriptions_label",
    "diagnose",
    "distractor_pool",
    "evaluate",
    "failed_steps_text",
    "fingerprint",
    "fit_ranker",
    "headline",
    "helpdesk_catalog",
    "keyword_tokens",
    "list_scenarios",
    "load_catalog",
    "load_dataset",
    "load_prices",
    "load_scenario",
    "load_wording_matrix",
    "make_index",
    "make_model",
    "make_strategy",
    "measure_index",
    "openai_tool_search_output",
    "parse_docstring",
    "porter_stem",
    "rewrite_descriptions",
    "run_scenario",
    "scenario_from_dict",
    "scenario_matrix",
    "share_within",
    "simulated_agent",
    "step_ranks",
    "summarise_matrix",
    "summary_text",
    "threshold_options",
    "to_anthropic_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
    "tool",
    "tools_from_json",
]
