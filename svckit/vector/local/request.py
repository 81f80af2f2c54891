"""Validation of query-data requests (wire field names) shared by LocalIndex and the sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_TOP_K = 10
WEIGHTING_STRATEGIES = ("IDF",)
FUSION_ALGORITHMS = ("RRF", "DBSF")
QUERY_MODES = ("HYBRID", "DENSE", "SPARSE")


class InvalidRequest(ValueError):
    """A request that does not follow the request table; the sandbox answers 400 with this message."""


@dataclass(frozen=True)
class QueryRequest:
    data: str
    top_k: int = DEFAULT_TOP_K
    include_metadata: bool = False
    include_vectors: bool = False
    include_data: bool = False
    filter: str = ""
    weighting_strategy: str | None = None
    fusion_algorithm: str = "RRF"
    query_mode: str = "HYBRID"


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidRequest(f"{name}: must be a boolean, got {value!r}")
    return value


def _choice(body: dict[str, Any], name: str, allowed: tuple[str, ...], default: str | None) -> str | None:
    value = body.get(name)
    if value is None or value == "":
        return default
    if not isinstance(value, str) or value.upper() not in allowed:
        raise InvalidRequest(f"{name}: must be one of {', '.join(allowed)}, got {value!r}")
    return value.upper()


def parse_query(body: Any) -> QueryRequest:
    """One request object (wire names: data, topK, includeMetadata, ...) -> QueryRequest."""
    if not isinstance(body, dict):
        raise InvalidRequest(f"a query must be a JSON object with a 'data' field, got {type(body).__name__}")
    data = body.get("data")
    if not isinstance(data, str):
        raise InvalidRequest("data: required, the raw text to embed and query")
    top_k = body.get("topK", DEFAULT_TOP_K)
    if top_k is None:
        top_k = DEFAULT_TOP_K
    if isinstance(top_k, bool) or not isinstance(top_k, (int, float)) or top_k != int(top_k) or top_k < 1:
        raise InvalidRequest(f"topK: must be a positive integer, got {top_k!r}")
    flt = body.get("filter", "")
    if flt is None:
        flt = ""
    if not isinstance(flt, str):
        raise InvalidRequest(f"filter: must be a string, got {flt!r}")
    return QueryRequest(
        data=data,
        top_k=int(top_k),
        include_metadata=_bool(body, "includeMetadata"),
        include_vectors=_bool(body, "includeVectors"),
        include_data=_bool(body, "includeData"),
        filter=flt,
        weighting_strategy=_choice(body, "weightingStrategy", WEIGHTING_STRATEGIES, None),
        fusion_algorithm=_choice(body, "fusionAlgorithm", FUSION_ALGORITHMS, "RRF") or "RRF",
        query_mode=_choice(body, "queryMode", QUERY_MODES, "HYBRID") or "HYBRID",
    )


def parse_upsert(body: Any) -> list[tuple[str, str, Any]]:
    """An upsert-data body (one object or an array of ``{id, data, metadata}``) -> [(id, data, metadata)]."""
    items = body if isinstance(body, list) else [body]
    if not items:
        raise InvalidRequest("upsert-data: the array is empty")
    out = []
    for n, item in enumerate(items):
        where = "" if not isinstance(body, list) else f"[{n}] "
        if not isinstance(item, dict):
            raise InvalidRequest(f"{where}each item must be an object with id and data")
        rid = item.get("id")
        if isinstance(rid, bool) or not isinstance(rid, (str, int)) or rid == "":
            raise InvalidRequest(f"{where}id: required, a non-empty string")
        data = item.get("data")
        if not isinstance(data, str):
            raise InvalidRequest(f"{where}data: required, the raw text to embed")
        meta = item.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise InvalidRequest(f"{where}metadata: must be an object")
        out.append((str(rid), data, meta))
    return out


def parse_ids(body: Any) -> list[str]:
    """Ids of a fetch/delete body: ``{"ids": [...]}``, a bare array, or a single id."""
    ids = body.get("ids") if isinstance(body, dict) else body
    if isinstance(ids, (str, int)) and not isinstance(ids, bool):
        ids = [ids]
    if not isinstance(ids, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        raise InvalidRequest("ids: required, an array of vector ids")
    return [str(i) for i in ids]
