"""Area B: text query of a vector index and the whole data API around it.

>>> from svckit.vector import Vector                            # doctest: +SKIP
>>> with Vector.from_env(kind="hybrid") as v:                   # doctest: +SKIP
...     v.upsert_data([{"id": "1", "data": "Reading JSON files", "metadata": {"lang": "en"}}])
...     v.query_data("parse json", top_k=3, include_metadata=True, filter="lang = 'en'")
...     v.list_namespaces(), list(v.iter_range(include_metadata=True))

``svckit.localindex`` holds the local embedding index the sandbox and the playground use; it is
imported only when asked for (it needs the ``local`` extra). ``LocalVector(index)`` is the same client
over such an index in this process; ``VectorQueries`` is the Protocol both clients satisfy.
"""

from svckit.errors import EmbeddingModelRequired
from svckit.vector.client import AsyncVector, Vector
from svckit.vector.local_client import LocalVector, VectorQueries
from svckit.vector.models import (
    DenseIndexInfo,
    FusionAlgorithm,
    IndexInfo,
    MetadataUpdateMode,
    NamespaceInfo,
    QueryMode,
    QueryOptions,
    QueryResult,
    RangeResult,
    ResumableQueryResult,
    SparseIndexInfo,
    SparseVector,
    VectorRecord,
    WeightingStrategy,
)

__all__ = [
    "AsyncVector",
    "DenseIndexInfo",
    "EmbeddingModelRequired",
    "FusionAlgorithm",
    "IndexInfo",
    "LocalVector",
    "MetadataUpdateMode",
    "NamespaceInfo",
    "QueryMode",
    "QueryOptions",
    "QueryResult",
    "RangeResult",
    "ResumableQueryResult",
    "SparseIndexInfo",
    "SparseVector",
    "Vector",
    "VectorQueries",
    "VectorRecord",
    "WeightingStrategy",
]
