"""Retrieval: Japanese tokenization, BM25, dense (embedding) and hybrid ranking.

Generic over any list of texts (block specs for plan generation, manual chunks for the help
desk). BM25 runs in process and can be saved to a directory; dense retrieval takes its vectors
from the LLM layer's embedder (a provider) or the bundled local model and caches them on disk;
hybrid mixes the two per query. The local model and the semantic index are not re-exported here
(importing this package must not load them).

- :mod:`~keiri_agent.retrieval.tokenize` — SudachiPy tokenizer (:func:`get_tokenizer`; the
  module's ``tokenize`` function is not re-exported here, so the module name stays reachable)
- :mod:`~keiri_agent.retrieval.bm25` — :class:`BM25Index`
- :mod:`~keiri_agent.retrieval.dense` — :class:`DenseIndex`, :class:`EmbeddingCache`
- :mod:`~keiri_agent.retrieval.lexical` — :class:`LexicalIndex` (Sudachi words, character and
  reading n-grams; calibrated 0..1 scores), the help desk's lexical retrieval
- :mod:`~keiri_agent.retrieval.hybrid` — :func:`reciprocal_rank_fusion`, :class:`HybridIndex`,
  :func:`fuse`
- :mod:`~keiri_agent.retrieval.local_embedding` — :class:`LocalEmbedder`, the multilingual model
  that ships with the install (no network, no key; loaded on first use)
- :mod:`~keiri_agent.retrieval.semantic` — :class:`SemanticIndex` (documents as embedded
  pieces), :class:`Background` (unrelated text a question's margin is measured against)
- :mod:`~keiri_agent.retrieval.normalize` — one written form for questions and documents (NFKC,
  a message's greetings, signature, URLs and emoji, several questions, kana written back as the
  documents spell them)
- :mod:`~keiri_agent.retrieval.loanwords` — loanwords typed in hiragana or English, in the
  dictionary's katakana
- :mod:`~keiri_agent.retrieval.hits` — :class:`Hit`, the form every index answers in
- :mod:`~keiri_agent.retrieval.eval` — recall@K and MRR
"""

from __future__ import annotations

from keiri_agent.retrieval.bm25 import BM25Hit, BM25Index
from keiri_agent.retrieval.dense import DenseHit, DenseIndex, EmbeddingCache, cosine_scores
from keiri_agent.retrieval.hybrid import (
    DEFAULT_DENSE_WEIGHT,
    HybridHit,
    HybridIndex,
    fuse,
    minmax,
    reciprocal_rank_fusion,
)
from keiri_agent.retrieval.lexical import LexicalHit, LexicalIndex
from keiri_agent.retrieval.tokenize import JapaneseTokenizer, get_tokenizer, tokenize_many

__all__ = [
    "DEFAULT_DENSE_WEIGHT",
    "BM25Hit",
    "BM25Index",
    "DenseHit",
    "DenseIndex",
    "EmbeddingCache",
    "HybridHit",
    "HybridIndex",
    "JapaneseTokenizer",
    "LexicalHit",
    "LexicalIndex",
    "cosine_scores",
    "fuse",
    "get_tokenizer",
    "minmax",
    "reciprocal_rank_fusion",
    "tokenize_many",
]
