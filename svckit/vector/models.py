"""Pydantic models of the vector interface; field names follow the wire names through aliases."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)


class SparseVector(_Wire):
    """A sparse vector: the non-zero dimensions and their values."""

    indices: list[int]
    values: list[float]


class QueryResult(_Wire):
    """One hit of a text query. ``score``: higher is more similar (0..1 on dense indexes)."""

    id: str
    score: float
    vector: list[float] | None = None
    sparse_vector: SparseVector | None = Field(default=None, alias="sparseVector")
    metadata: dict[str, Any] | None = None
    data: str | None = None

    @property
    def sparseVector(self) -> SparseVector | None:
        return self.sparse_vector


class VectorRecord(_Wire):
    """A stored vector as ``fetch`` returns it."""

    id: str
    vector: list[float] | None = None
    sparse_vector: SparseVector | None = Field(default=None, alias="sparseVector")
    metadata: dict[str, Any] | None = None
    data: str | None = None


class NamespaceInfo(_Wire):
    vector_count: int
    pending_vector_count: int = 0


class DenseIndexInfo(_Wire):
    dimension: int
    similarity_function: str
    embedding_model: str | None = None


class SparseIndexInfo(_Wire):
    embedding_model: str | None = None


class IndexInfo(_Wire):
    """Index statistics: vector counts (total and per namespace), dimension, metric, index kind."""

    vector_count: int
    pending_vector_count: int = 0
    index_size: int = 0
    dimension: int = 0
    similarity_function: str | None = None
    index_type: str | None = None
    dense_index: DenseIndexInfo | None = None
    sparse_index: SparseIndexInfo | None = None
    namespaces: dict[str, NamespaceInfo] = Field(default_factory=dict)
