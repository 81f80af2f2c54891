"""Pydantic models of the vector interface; field names follow the wire names through aliases."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

# -- the enumerated option values, defined once (upper-case, as the service spells them) -------------


class QueryMode(StrEnum):
    """Which side of a hybrid index a text query runs on (default HYBRID: both, fused)."""

    HYBRID = "HYBRID"
    DENSE = "DENSE"
    SPARSE = "SPARSE"


class FusionAlgorithm(StrEnum):
    """How a hybrid query fuses its dense and sparse rankings (default RRF)."""

    RRF = "RRF"
    DBSF = "DBSF"


class WeightingStrategy(StrEnum):
    """Query-time weighting of sparse dimensions (default: none)."""

    IDF = "IDF"


class MetadataUpdateMode(StrEnum):
    """``update``: replace the metadata (OVERWRITE) or merge into it (PATCH, RFC 7396 JSON Merge Patch)."""

    OVERWRITE = "OVERWRITE"
    PATCH = "PATCH"


#: the index kinds a text query runs on, and the kind-specific query options each accepts (spec B:
#: weighting for sparse and hybrid, fusion and query mode for hybrid only)
KIND_OPTIONS: dict[str, frozenset[str]] = {
    "dense": frozenset(),
    "sparse": frozenset({"weighting_strategy"}),
    "hybrid": frozenset({"weighting_strategy", "fusion_algorithm", "query_mode"}),
}
KINDS = tuple(KIND_OPTIONS)


class QueryOptions(BaseModel):
    """The options of a text query (the keyword arguments of ``query_data``), checked once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    top_k: int = Field(10, ge=1)
    include_metadata: bool = False
    include_vectors: bool = False
    include_data: bool = False
    filter: str = ""
    weighting_strategy: WeightingStrategy | None = None
    fusion_algorithm: FusionAlgorithm | None = None
    query_mode: QueryMode | None = None
    namespace: str = ""

    def for_kind(self, kind: str) -> QueryOptions:
        """These options without the ones ``kind`` does not accept, so a dense index is never sent
        hybrid options."""
        dropped = set().union(*KIND_OPTIONS.values()) - KIND_OPTIONS[kind]
        return self.model_copy(update=dict.fromkeys(dropped))


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


class RangeResult(_Wire):
    """One page of ``range``: the vectors in id order and the cursor of the next page ("" at the end)."""

    next_cursor: str
    vectors: list[VectorRecord]


class ResumableQueryResult(_Wire):
    """The first page of a resumable query and the ``uuid`` that fetches more (``resumable-query-next``)."""

    uuid: str
    scores: list[QueryResult]


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
