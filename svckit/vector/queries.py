"""The :class:`VectorQueries` protocol: what a widget asks of a vector index. The service's
:class:`~svckit.vector.Vector`, :class:`~svckit.vector.LocalVector` (an index in this process) and the
tests' fakes all satisfy it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from svckit.vector.models import IndexInfo, QueryResult, RangeResult, VectorRecord
from svckit.vector.protocol import QueryInput


@runtime_checkable
class VectorQueries(Protocol):
    """What a widget asks of a vector index: text queries, browsing, statistics. :class:`Vector`,
    :class:`LocalVector` and the tests' fakes all satisfy it."""

    def query_data(self, data: QueryInput | Sequence[QueryInput], *, top_k: int = 10,
                   include_metadata: bool = False, include_vectors: bool = False, include_data: bool = False,
                   filter: str = "", weighting_strategy: str | None = None,
                   fusion_algorithm: str | None = None, query_mode: str | None = None,
                   namespace: str = "") -> list[QueryResult] | list[list[QueryResult]]: ...

    def fetch(self, ids: str | Sequence[str] | None = None, *, prefix: str | None = None, namespace: str = "",
              include_metadata: bool = True, include_vectors: bool = False,
              include_data: bool = True) -> list[VectorRecord | None]: ...

    def range(self, cursor: str = "", limit: int | None = None, *, prefix: str | None = None,
              namespace: str = "", include_metadata: bool = False, include_vectors: bool = False,
              include_data: bool = False) -> RangeResult: ...

    def list_namespaces(self) -> list[str]: ...

    def info(self) -> IndexInfo: ...


__all__ = ["VectorQueries"]
