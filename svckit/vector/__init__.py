"""Area B: text query of a vector index and the whole data API around it.

>>> from svckit.vector import Vector                            # doctest: +SKIP
>>> with Vector.from_env(kind="hybrid") as v:                   # doctest: +SKIP
...     v.upsert_data([{"id": "1", "data": "Reading JSON files", "metadata": {"lang": "en"}}])
...     v.query_data("parse json", top_k=3, include_metadata=True, filter="lang = 'en'")
...     v.list_namespaces(), list(v.iter_range(include_metadata=True))

Every public name is imported on first use (PEP 562, :mod:`svckit._lazy`): importing
``svckit.vector.models`` loads no client, transport or HTTP library. ``LocalVector(index)`` is the same
client over a ``svckit.localindex.LocalIndex`` in this process (it needs the ``local`` extra); it lives in
:mod:`svckit.localindex.client`, and this package's lazy export of it is the one place a client module
reaches the local index. ``VectorQueries`` is the Protocol both clients satisfy.
"""

from typing import TYPE_CHECKING

from svckit._lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each imported on first use (svckit/_lazy.py)
    from svckit.errors import EmbeddingModelRequired

    # LocalVector: the one seam from the clients to the local index (docs/architecture.md)
    from svckit.localindex.client import LocalVector
    from svckit.vector.client import AsyncVector, Vector
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
    from svckit.vector.queries import VectorQueries

__getattr__, __dir__ = lazy_exports(__name__, __file__)

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
