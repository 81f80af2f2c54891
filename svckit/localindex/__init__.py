"""The local embedding index (dense + sparse + hybrid) that the sandbox and the playground stand on.

>>> idx = LocalIndex(kind="hybrid")                                   # doctest: +SKIP
>>> idx.upsert_data(load_demo_corpus())                               # doctest: +SKIP
>>> idx.query({"data": "read a JSON file", "topK": 3, "includeMetadata": True})  # doctest: +SKIP

Modules: ``embedding`` (sentence-transformers, packaged MiniLM, offline, cached), ``sparse`` (BM25),
``fusion`` (RRF, DBSF), ``metrics`` (score normalisation), ``filter`` (the metadata filter language),
``glob`` (its GLOB, matched by RE2 in linear time), ``limits`` (what one request may ask for),
``ann`` (exact numpy / faiss HNSW), ``store`` (SQLite persistence), ``corpus`` (the demo corpus),
``namespace`` (a namespace's records), ``resumable`` (open resumable queries), ``index``
(:class:`LocalIndex`: writes, persistence, info) and ``reads`` (its fetch, range and queries).
"""

from svckit.localindex.corpus import docstring_pairs, load_demo_corpus
from svckit.localindex.embedding import DenseEmbedder, get_embedder, packaged_model_path
from svckit.localindex.filter import Filter, FilterSyntaxError, parse_filter
from svckit.localindex.index import EmbeddingModelMissing, LocalIndex
from svckit.localindex.limits import Limits
from svckit.localindex.request import InvalidRequest

__all__ = [
    "DenseEmbedder",
    "EmbeddingModelMissing",
    "Filter",
    "FilterSyntaxError",
    "InvalidRequest",
    "Limits",
    "LocalIndex",
    "docstring_pairs",
    "get_embedder",
    "load_demo_corpus",
    "packaged_model_path",
    "parse_filter",
]
