"""Text embedders (MiniLM, OpenAI-compatible, TF-IDF), the on-disk cache and the shipped vectors."""

from toolsearch_lab.embed.base import Embedder, EmbeddingError, check_texts, l2_normalise, text_key
from toolsearch_lab.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_dir
from toolsearch_lab.embed.default import default_embedder
from toolsearch_lab.embed.minilm import MiniLMEmbedder, verify_model_file
from toolsearch_lab.embed.openai import OpenAIEmbedder
from toolsearch_lab.embed.shipped import ShippedVectors, shipped_vectors
from toolsearch_lab.embed.tfidf import TfidfEmbedder

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingError",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "ShippedVectors",
    "TfidfEmbedder",
    "check_texts",
    "default_cache_dir",
    "default_embedder",
    "l2_normalise",
    "shipped_vectors",
    "text_key",
    "verify_model_file",
]
