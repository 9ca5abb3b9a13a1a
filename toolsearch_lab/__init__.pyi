"""Every public name of this front door, the one list of them: type checkers read it as the package's
interface, and the runtime builds ``__all__`` and the lazy loading from it (:mod:`toolsearch_lab.lazy`)."""

from .catalog.container import (
    SHIPPED_CATALOGS as SHIPPED_CATALOGS,
    ToolCatalog as ToolCatalog,
    load_catalog as load_catalog,
    tool as tool,
    tools_from_json as tools_from_json,
)
from .catalog.docstrings import parse_docstring as parse_docstring
from .catalog.export import (
    anthropic_tool_reference_result as anthropic_tool_reference_result,
    openai_tool_search_output as openai_tool_search_output,
    to_anthropic_tools as to_anthropic_tools,
    to_openai_responses_tools as to_openai_responses_tools,
    to_openai_tools as to_openai_tools,
)
from .catalog.live import (
    DestructiveToolsWarning as DestructiveToolsWarning,
    McpServers as McpServers,
    connect_mcp_config as connect_mcp_config,
    connect_mcp_stdio as connect_mcp_stdio,
)
from .catalog.mcp_config import McpConfig as McpConfig, load_mcp_config as load_mcp_config
from .embed.minilm import MiniLMEmbedder as MiniLMEmbedder
from .embed.openai import OpenAIEmbedder as OpenAIEmbedder
from .embed.tfidf import TfidfEmbedder as TfidfEmbedder
from .eval.bfcl_live import load_bfcl_live as load_bfcl_live, search_each as search_each
from .eval.ceiling import share_within as share_within, step_ranks as step_ranks
from .eval.compare import (
    Headline as Headline,
    compare as compare,
    compare_strategies as compare_strategies,
    comparison_rows as comparison_rows,
    headline as headline,
    run_strategy as run_strategy,
    usage_pins as usage_pins,
)
from .eval.cost import load_prices as load_prices
from .eval.datasets import Dataset as Dataset, Query as Query, load_dataset as load_dataset
from .eval.doctor import DoctorReport as DoctorReport, diagnose as diagnose
from .eval.doctor.examples import (
    helpdesk_catalog as helpdesk_catalog,
    rewrite_descriptions as rewrite_descriptions,
)
from .eval.metrics import evaluate as evaluate
from .eval.offcatalog import load_offcatalog as load_offcatalog
from .eval.pins import recommend_pins as recommend_pins
from .eval.ranker_training import DEFAULT_FEATURES as DEFAULT_FEATURES, fit_ranker as fit_ranker
from .eval.replay_compare import ReplayComparison as ReplayComparison, compare_replay as compare_replay
from .eval.scaling import (
    catalog_of as catalog_of,
    distractor_pool as distractor_pool,
    measure_index as measure_index,
)
from .eval.scenarios import (
    buildable_indexes as buildable_indexes,
    descriptions_label as descriptions_label,
    failed_steps_text as failed_steps_text,
    list_scenarios as list_scenarios,
    load_scenario as load_scenario,
    run_scenario as run_scenario,
    scenario_from_dict as scenario_from_dict,
    scenario_matrix as scenario_matrix,
    summarise_matrix as summarise_matrix,
    summary_text as summary_text,
)
from .eval.wording_matrix import load_wording_matrix as load_wording_matrix
from .index.base import BaseToolIndex as BaseToolIndex
from .index.bm25.index import BM25ToolIndex as BM25ToolIndex, LuceneToolIndex as LuceneToolIndex
from .index.factory import (
    INDEX_KINDS as INDEX_KINDS,
    make_index as make_index,
)
from .index.hybrid import HybridToolIndex as HybridToolIndex
from .index.learned import FEATURES as FEATURES, LearnedToolIndex as LearnedToolIndex
from .index.regex import (
    PatternError as PatternError,
    PatternTimeoutError as PatternTimeoutError,
    RegexToolIndex as RegexToolIndex,
)
from .index.vector import VectorToolIndex as VectorToolIndex
from .loop.advisor import (
    RunResult as RunResult,
    ToolNotFoundError as ToolNotFoundError,
    ToolSearchAdvisor as ToolSearchAdvisor,
)
from .loop.config import ToolSearchConfig as ToolSearchConfig
from .loop.conversation import Conversation as Conversation
from .loop.memory import (
    Compaction as Compaction,
    FullHistory as FullHistory,
    MessageWindow as MessageWindow,
)
from .loop.pinning import Pinned as Pinned
from .loop.policy import ToolCallRefused as ToolCallRefused
from .loop.run import TurnReading as TurnReading
from .loop.search_tool import ToolSearchTool as ToolSearchTool
from .loop.settings import AdvisorSettings as AdvisorSettings
from .loop.strategies import make_strategy as make_strategy
from .loop.strategy import Strategy as Strategy
from .model import (
    Explanation as Explanation,
    SearchConfidence as SearchConfidence,
    SearchMetadata as SearchMetadata,
    SearchRequest as SearchRequest,
    SearchResponse as SearchResponse,
    Tool as Tool,
    ToolIndex as ToolIndex,
    ToolReference as ToolReference,
)
from .models.base import (
    AssistantTurn as AssistantTurn,
    ChatModel as ChatModel,
    ScriptedModel as ScriptedModel,
    ToolCall as ToolCall,
    Usage as Usage,
)
from .models.factory import make_model as make_model
from .models.glossary import Glossary as Glossary, default_glossary as default_glossary
from .models.openai import OpenAIChatModel as OpenAIChatModel
from .models.simulated import SimulatedAgent as SimulatedAgent, simulated_agent as simulated_agent
from .replay.common import TranscriptError as TranscriptError
from .replay.load import (
    SHIPPED_TRANSCRIPTS as SHIPPED_TRANSCRIPTS,
    TRANSCRIPT_FORMATS as TRANSCRIPT_FORMATS,
    load_transcript as load_transcript,
)
from .session.eviction import (
    AlwaysEvict as AlwaysEvict,
    CompositeEviction as CompositeEviction,
    LruEviction as LruEviction,
    NeverEvict as NeverEvict,
    TtlEviction as TtlEviction,
)
from .session.fingerprint import fingerprint as fingerprint
from .text.lucene import analyze as analyze
from .text.normalise import keyword_tokens as keyword_tokens, porter_stem as porter_stem
from .text.stopwords import ENGLISH_STOP_WORDS as ENGLISH_STOP_WORDS
from .tokens import (
    DEFAULT_ENCODING as DEFAULT_ENCODING,
    ENCODINGS as ENCODINGS,
    REPLY_PRIMING as REPLY_PRIMING,
    TokenCounter as TokenCounter,
)
from .trace import RunTrace as RunTrace
from .version import __version__ as __version__
