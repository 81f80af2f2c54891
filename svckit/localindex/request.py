"""Validation of the vector data API's request bodies (wire field names), shared by LocalIndex and the
sandbox. Every parser takes the decoded JSON body and returns plain values, or raises
:class:`InvalidRequest` (HTTP 400) naming the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from svckit.errors import InvalidRequest
from svckit.localindex.limits import Limits
from svckit.vector.models import FusionAlgorithm, MetadataUpdateMode, QueryMode, WeightingStrategy

DEFAULT_TOP_K = 10
DEFAULT_MAX_IDLE = 3600  # seconds a resumable query lives without being used (the SDK's default)


class UnknownName(InvalidRequest):
    """The request names something that does not exist (a namespace, a resumable query): HTTP 404."""

    status = 404


SparsePair = tuple[list[int], list[float]]


@dataclass(frozen=True)
class QueryRequest:
    """One query: by text (``data``) or by a dense and/or sparse vector."""

    data: str | None = None
    vector: list[float] | None = None
    sparse_vector: SparsePair | None = None
    top_k: int = DEFAULT_TOP_K
    include_metadata: bool = False
    include_vectors: bool = False
    include_data: bool = False
    filter: str = ""
    weighting_strategy: str | None = None
    fusion_algorithm: str = FusionAlgorithm.RRF
    query_mode: str = QueryMode.HYBRID


@dataclass(frozen=True)
class VectorItem:
    """One vector to store: dense and/or sparse values given by the client, with optional data."""

    id: str
    vector: list[float] | None
    sparse_vector: SparsePair | None
    data: str | None
    metadata: dict[str, Any] | None


@dataclass(frozen=True)
class Includes:
    metadata: bool = False
    vectors: bool = False
    data: bool = False


@dataclass(frozen=True)
class UpdateRequest:
    id: str
    vector: list[float] | None
    sparse_vector: SparsePair | None
    data: str | None
    metadata: dict[str, Any] | None
    mode: str


def _object(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidRequest(f"{what}: the body must be a JSON object, got {type(body).__name__}")
    return body


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidRequest(f"{name}: must be a boolean, got {value!r}")
    return value


def _includes(body: dict[str, Any]) -> Includes:
    return Includes(_bool(body, "includeMetadata"), _bool(body, "includeVectors"), _bool(body, "includeData"))


def _choice(body: dict[str, Any], name: str, allowed: type[Any], default: str | None) -> str | None:
    value = body.get(name)
    if value is None or value == "":
        return default
    names = [m.value for m in allowed]
    if not isinstance(value, str) or value.upper() not in names:
        raise InvalidRequest(f"{name}: must be one of {', '.join(names)}, got {value!r}")
    return value.upper()


def _positive_int(body: dict[str, Any], name: str, default: int) -> int:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise InvalidRequest(f"{name}: must be a positive integer, got {value!r}")
    return int(value)


def _at_most(value: int, name: str, most: int, limit: str, hint: str) -> int:
    if value > most:
        raise InvalidRequest(f"{name}: {value} is over the limit of {most} (the index's {limit} limit); "
                             f"{hint}")
    return value


def _string(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidRequest(f"{name}: must be a string, got {value!r}")
    return value


def _id(value: Any, where: str = "") -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise InvalidRequest(f"{where}id: required, a non-empty string")
    return str(value)


def _metadata(value: Any, where: str = "") -> dict[str, Any] | None:
    if value is not None and not isinstance(value, dict):
        raise InvalidRequest(f"{where}metadata: must be an object")
    return value


def _dense(value: Any, where: str = "") -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value
    ):
        raise InvalidRequest(f"{where}vector: must be a non-empty array of finite numbers")
    return [float(x) for x in value]


def _sparse(value: Any, where: str = "") -> SparsePair | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidRequest(f"{where}sparseVector: must be an object with indices and values")
    indices, values = value.get("indices"), value.get("values")
    if not isinstance(indices, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        raise InvalidRequest(f"{where}sparseVector.indices: must be an array of integers")
    if not isinstance(values, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in values
    ):
        raise InvalidRequest(f"{where}sparseVector.values: must be an array of finite numbers")
    if len(indices) != len(values):
        raise InvalidRequest(f"{where}sparseVector: indices and values must have the same length "
                             f"({len(indices)} != {len(values)})")
    if len(set(indices)) != len(indices):
        raise InvalidRequest(f"{where}sparseVector.indices: must not repeat a dimension")
    if any(not -(2**31) <= i < 2**31 for i in indices):
        raise InvalidRequest(f"{where}sparseVector.indices: must be signed 32-bit integers")
    return [int(i) for i in indices], [float(x) for x in values]


def parse_query(body: Any, *, text: bool = True, limits: Limits | None = None) -> QueryRequest:
    """One query object -> QueryRequest. ``text``: a query-data body (``data`` required); otherwise a
    query body (``vector`` and/or ``sparseVector`` required)."""
    limits = limits or Limits()
    body = _object(body, "query")
    data = vector = sparse_vector = None
    if text:
        data = body.get("data")
        if not isinstance(data, str):
            raise InvalidRequest("data: required, the raw text to embed and query")
    else:
        vector, sparse_vector = _dense(body.get("vector")), _sparse(body.get("sparseVector"))
        if vector is None and sparse_vector is None:
            raise InvalidRequest("vector or sparseVector: required, the vector to query with "
                                 "(query-data takes text)")
    flt = body.get("filter", "")
    if flt is None:
        flt = ""
    if not isinstance(flt, str):
        raise InvalidRequest(f"filter: must be a string, got {flt!r}")
    includes = _includes(body)
    return QueryRequest(
        data=data,
        vector=vector,
        sparse_vector=sparse_vector,
        # a limit below the default lowers the default, so a query without topK still answers
        top_k=_at_most(_positive_int(body, "topK", min(DEFAULT_TOP_K, limits.max_top_k)), "topK",
                       limits.max_top_k, "max_top_k", "page through more results with a resumable query"),
        include_metadata=includes.metadata,
        include_vectors=includes.vectors,
        include_data=includes.data,
        filter=flt,
        weighting_strategy=_choice(body, "weightingStrategy", WeightingStrategy, None),
        fusion_algorithm=_choice(body, "fusionAlgorithm", FusionAlgorithm, FusionAlgorithm.RRF) or "RRF",
        query_mode=_choice(body, "queryMode", QueryMode, QueryMode.HYBRID) or "HYBRID",
    )


def parse_queries(body: Any, *, text: bool, limits: Limits) -> list[QueryRequest]:
    """A query(-data) body: one query object, or an array of them (a batch)."""
    if not isinstance(body, list):
        return [parse_query(body, text=text, limits=limits)]
    if not body:
        raise InvalidRequest("query: the array of queries is empty")
    _at_most(len(body), "queries in one request", limits.max_batch, "max_batch", "send them in several requests")
    return [parse_query(item, text=text, limits=limits) for item in body]


def _items(body: Any, what: str) -> list[tuple[str, dict[str, Any]]]:
    items = body if isinstance(body, list) else [body]
    if not items:
        raise InvalidRequest(f"{what}: the array is empty")
    out = []
    for n, item in enumerate(items):
        where = "" if not isinstance(body, list) else f"[{n}] "
        if not isinstance(item, dict):
            raise InvalidRequest(f"{where}each item must be an object with an id")
        out.append((where, item))
    return out


def parse_upsert(body: Any) -> list[tuple[str, str, Any]]:
    """An upsert-data body (one object or an array of ``{id, data, metadata}``) -> [(id, data, metadata)]."""
    out = []
    for where, item in _items(body, "upsert-data"):
        rid = _id(item.get("id"), where)
        data = item.get("data")
        if not isinstance(data, str):
            raise InvalidRequest(f"{where}data: required, the raw text to embed")
        out.append((rid, data, _metadata(item.get("metadata"), where)))
    return out


def parse_vectors(body: Any) -> list[VectorItem]:
    """An upsert body (one object or an array of ``{id, vector, sparseVector, metadata, data}``)."""
    out = []
    for where, item in _items(body, "upsert"):
        vector, sparse_vector = _dense(item.get("vector"), where), _sparse(item.get("sparseVector"), where)
        if vector is None and sparse_vector is None:
            raise InvalidRequest(f"{where}vector or sparseVector: required (upsert-data takes text)")
        data = _string(item, "data")
        out.append(VectorItem(_id(item.get("id"), where), vector, sparse_vector, data,
                              _metadata(item.get("metadata"), where)))
    return out


def parse_ids(body: Any) -> list[str]:
    """Ids of a fetch/delete body: ``{"ids": [...]}``, a bare array, or a single id."""
    ids = body.get("ids") if isinstance(body, dict) else body
    if isinstance(ids, (str, int)) and not isinstance(ids, bool):
        ids = [ids]
    if not isinstance(ids, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        raise InvalidRequest("ids: required, an array of vector ids")
    return [str(i) for i in ids]


def _selector(body: Any, allowed: tuple[str, ...], what: str) -> tuple[str, Any]:
    """Which one of ``ids`` / ``prefix`` / ``filter`` a fetch or delete body names, and its value."""
    if not isinstance(body, dict):
        return "ids", parse_ids(body)
    given = [k for k in allowed if body.get(k) is not None]
    if len(given) != 1:
        raise InvalidRequest(f"{what}: give exactly one of {', '.join(allowed)}")
    key = given[0]
    if key == "ids":
        return key, parse_ids(body)
    value = _string(body, key)
    if key == "prefix" and value == "":
        raise InvalidRequest("prefix: must not be empty (use range to walk the whole namespace)")
    return key, value


def parse_fetch(body: Any) -> tuple[str, Any, Includes]:
    """A fetch body -> (``"ids"`` or ``"prefix"``, its value, what to include)."""
    key, value = _selector(body, ("ids", "prefix"), "fetch")
    return key, value, _includes(body) if isinstance(body, dict) else Includes(metadata=True, data=True)


def parse_delete(body: Any) -> tuple[str, Any]:
    """A delete body -> (``"ids"``, ``"prefix"`` or ``"filter"``, its value)."""
    return _selector(body, ("ids", "prefix", "filter"), "delete")


def parse_range(body: Any) -> tuple[str, int, str, Includes]:
    """A range body -> (cursor, limit, id prefix, includes)."""
    body = _object(body, "range")
    cursor = _string(body, "cursor") or ""
    if "limit" not in body:
        raise InvalidRequest("limit: required, how many vectors to return")
    return cursor, _positive_int(body, "limit", 1), _string(body, "prefix") or "", _includes(body)


def parse_update(body: Any) -> UpdateRequest:
    body = _object(body, "update")
    request = UpdateRequest(
        id=_id(body.get("id")),
        vector=_dense(body.get("vector")),
        sparse_vector=_sparse(body.get("sparseVector")),
        data=_string(body, "data"),
        metadata=_metadata(body.get("metadata")),
        mode=_choice(body, "metadataUpdateMode", MetadataUpdateMode, MetadataUpdateMode.OVERWRITE) or "OVERWRITE",
    )
    if all(v is None for v in (request.vector, request.sparse_vector, request.data, request.metadata)):
        raise InvalidRequest("update: give at least one of vector, sparseVector, data, metadata")
    return request


def parse_resumable_start(body: Any, *, text: bool, limits: Limits) -> tuple[QueryRequest, int]:
    """A resumable-query(-data) body -> (the query, maxIdle seconds)."""
    query = parse_query(body, text=text, limits=limits)
    max_idle = _positive_int(body, "maxIdle", DEFAULT_MAX_IDLE)
    return query, _at_most(max_idle, "maxIdle", limits.max_idle, "max_idle",
                           "a query idle that long is better started again")


def parse_resumable_next(body: Any, limits: Limits) -> tuple[str, int]:
    body = _object(body, "resumable-query-next")
    additional_k = _positive_int(body, "additionalK", min(DEFAULT_TOP_K, limits.max_top_k))
    return _uuid(body), _at_most(additional_k, "additionalK", limits.max_top_k, "max_top_k",
                                 "ask for the rest in several calls")


def _uuid(body: dict[str, Any]) -> str:
    uid = body.get("uuid")
    if not isinstance(uid, str) or not uid:
        raise InvalidRequest("uuid: required, the id resumable-query answered")
    return uid


def parse_resumable_end(body: Any) -> str:
    return _uuid(_object(body, "resumable-query-end"))
