"""The local embedding index (dense + sparse + hybrid) that the sandbox and the playground stand on.

>>> idx = LocalIndex(kind="hybrid")                                   # doctest: +SKIP
>>> idx.upsert_data(load_demo_corpus())                               # doctest: +SKIP
>>> idx.query({"data": "read a JSON file", "topK": 3, "includeMetadata": True})  # doctest: +SKIP

Modules: ``sparse`` (BM25's inverted indexes), ``metrics`` (score normalisation), ``limits`` (what
one request may ask for), ``ann`` (exact numpy / faiss HNSW), ``store`` (SQLite persistence),
``namespace`` (a namespace's records), ``resumable`` (open resumable queries), ``index``
(:class:`LocalIndex`: writes, persistence, info), ``reads`` (its fetch, range and queries),
``explain`` (why a hit scored what it scored, from the index's state), ``dispatch`` (the operation
table the sandbox serves) and ``client`` (:class:`LocalVector`, the client over an index in this
process). What the clients share with it is in :mod:`svckit.core` (the filter language, BM25's
tokenizer and weights, fusion, the explain arithmetic, the demo corpus); the embedder is
:mod:`svckit.embedding`.
"""

from svckit.core.corpus import docstring_pairs, load_demo_corpus
from svckit.core.filter import Filter, FilterSyntaxError, parse_filter
from svckit.embedding import DenseEmbedder, get_embedder, packaged_model_path
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
