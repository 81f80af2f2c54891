"""Area B: text query of a vector index, plus the data operations a notebook needs to fill one.

>>> from svckit.vector import Vector                            # doctest: +SKIP
>>> with Vector.from_env(kind="hybrid") as v:                   # doctest: +SKIP
...     v.upsert_data([{"id": "1", "data": "Reading JSON files", "metadata": {"lang": "en"}}])
...     v.query_data("parse json", top_k=3, include_metadata=True, filter="lang = 'en'")

``svckit.vector.local`` holds the local embedding index the sandbox and the playground use; it is
imported only when asked for (it needs the ``local`` extra).
"""

from svckit.errors import EmbeddingModelRequired
from svckit.vector.client import AsyncVector, Vector
from svckit.vector.models import (
    DenseIndexInfo,
    IndexInfo,
    NamespaceInfo,
    QueryResult,
    SparseIndexInfo,
    SparseVector,
    VectorRecord,
)

__all__ = [
    "AsyncVector",
    "DenseIndexInfo",
    "EmbeddingModelRequired",
    "IndexInfo",
    "NamespaceInfo",
    "QueryResult",
    "SparseIndexInfo",
    "SparseVector",
    "Vector",
    "VectorRecord",
]
