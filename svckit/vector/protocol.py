"""Area B's protocol, sans I/O: ``build_*`` functions turn arguments into an :class:`ApiRequest`
(checking them first, so a mistake is named before anything is sent) and ``decode_*`` functions turn
a reply into the models. :class:`~svckit.vector.Vector` and :class:`~svckit.vector.AsyncVector` are
thin shells that send what these build."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import TypeAdapter

from svckit._http import ApiRequest, decode_json_reply
from svckit._inflight import batches
from svckit.errors import EmbeddingModelRequired, InvalidArgument, ProtocolError, UnprocessableEntity
from svckit.vector.models import (
    FusionAlgorithm,
    MetadataUpdateMode,
    QueryMode,
    QueryResult,
    RangeResult,
    ResumableQueryResult,
    SparseVector,
    VectorRecord,
    WeightingStrategy,
)

#: snake_case option -> wire field of a query request
QUERY_FIELDS = {
    "top_k": "topK",
    "include_metadata": "includeMetadata",
    "include_vectors": "includeVectors",
    "include_data": "includeData",
    "filter": "filter",
    "weighting_strategy": "weightingStrategy",
    "fusion_algorithm": "fusionAlgorithm",
    "query_mode": "queryMode",
    "vector": "vector",
    "sparse_vector": "sparseVector",
}

QueryInput = str | Mapping[str, Any]
#: a sparse vector as the clients take it: the model, ``(indices, values)`` or ``{indices, values}``
SparseInput = SparseVector | tuple[Sequence[int], Sequence[float]] | Mapping[str, Sequence[Any]]

#: wire field -> the values the service accepts (upper-case on the wire; any case is accepted here)
CHOICES = {
    "queryMode": tuple(QueryMode),
    "fusionAlgorithm": tuple(FusionAlgorithm),
    "weightingStrategy": tuple(WeightingStrategy),
}
INCLUDES = ("include_metadata", "include_vectors", "include_data")
RESUMABLE_MAX_IDLE = 3600  # seconds, the service's default
#: Records per ``range`` page and at most per ``fetch`` request, chosen once for every read of the
#: area. The service bounds neither (the spec gives no maximum, the sandbox and upstash-vector take
#: any), so a page is as large as is worth a 40 ms round trip: 10,000 records of ids, metadata and a
#: line of text are under a megabyte and about 40 ms of encoding and decoding; with their vectors (384
#: floats, ~8 kB of JSON each) 1,000 records are already 8 MB.
PAGE_RECORDS = 10_000
PAGE_RECORDS_WITH_VECTORS = 1_000
#: ids below which a fetch is one request: a smaller batch is decoded faster than a round trip
FETCH_BATCH_LEAST = 1_000
BOOLEANS = ("includeMetadata", "includeVectors", "includeData")
#: wire field -> the snake_case argument name used in errors
ARGUMENT_NAMES = {wire: name for name, wire in QUERY_FIELDS.items()}


def _path(operation: str, namespace: str) -> str:
    if not isinstance(namespace, str):
        raise InvalidArgument("namespace", "must be a string ('' is the default namespace)")
    return f"/{operation}/{quote(namespace, safe='')}" if namespace else f"/{operation}"


def _dense(vector: Any, argument: str = "vector") -> list[float]:
    values = vector.tolist() if hasattr(vector, "tolist") else vector
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence) or not values or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in values
    ):
        raise InvalidArgument(argument, "must be a non-empty list of numbers (or a numpy array)")
    return [float(x) for x in values]


def _sparse(sparse: Any, argument: str = "sparse_vector") -> dict[str, list[Any]]:
    """A sparse vector in any accepted shape -> its wire object ``{indices, values}``."""
    if isinstance(sparse, SparseVector):
        indices, values = sparse.indices, sparse.values
    elif isinstance(sparse, Mapping) and set(sparse) >= {"indices", "values"}:
        indices, values = sparse["indices"], sparse["values"]
    elif isinstance(sparse, tuple) and len(sparse) == 2:
        indices, values = sparse
    else:
        raise InvalidArgument(argument, "must be a SparseVector, (indices, values) or {indices, values}")
    indices = indices.tolist() if hasattr(indices, "tolist") else list(indices)
    values = values.tolist() if hasattr(values, "tolist") else list(values)
    if len(indices) != len(values) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        raise InvalidArgument(argument, "needs integer indices and as many values")
    return {"indices": indices, "values": [float(v) for v in values]}


def _vector_fields(body: dict[str, Any], *, required: bool) -> None:
    """Normalise ``vector`` / ``sparseVector`` of a wire body in place (numpy arrays, tuples, models)."""
    if body.get("vector") is not None:
        body["vector"] = _dense(body["vector"])
    else:
        body.pop("vector", None)
    if body.get("sparseVector") is not None:
        body["sparseVector"] = _sparse(body["sparseVector"])
    else:
        body.pop("sparseVector", None)
    if required and "vector" not in body and "sparseVector" not in body:
        raise InvalidArgument("vector", "give vector and/or sparse_vector")


def _query_object(item: QueryInput, options: Mapping[str, Any], text: bool) -> dict[str, Any]:
    if isinstance(item, str) and text:
        body: dict[str, Any] = {"data": item}
    elif isinstance(item, Mapping):
        body = {QUERY_FIELDS.get(k, k): v for k, v in item.items()}
        if text and not isinstance(body.get("data"), str):
            raise InvalidArgument("data", "each query object needs a 'data' string")
        if not text:
            _vector_fields(body, required=True)
    else:
        what = "text, a query object" if text else "a query object with vector and/or sparse_vector"
        raise InvalidArgument("data" if text else "vector", f"expected {what} or a list of them, "
                              f"got {type(item).__name__}")
    for name, value in options.items():
        wire = QUERY_FIELDS[name]
        if value is not None and wire not in body:
            body[wire] = value
    top_k = body.get("topK")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise InvalidArgument("top_k", f"must be a positive integer, got {top_k!r}")
    _check_query_fields(body)
    return body


def _check_booleans(body: Mapping[str, Any]) -> None:
    for wire in BOOLEANS:
        value = body.get(wire)
        if value is not None and not isinstance(value, bool):
            raise InvalidArgument(ARGUMENT_NAMES[wire], f"must be True or False, got {value!r}")


def _check_query_fields(body: dict[str, Any]) -> None:
    """Refuse (before any request) option values the service would reject; enum values are sent
    upper-case, as the service spells them."""
    _check_booleans(body)
    flt = body.get("filter")
    if flt is not None and not isinstance(flt, str):
        raise InvalidArgument("filter", f"must be a filter expression string, got {type(flt).__name__}")
    for wire, allowed in CHOICES.items():
        value = body.get(wire)
        if value is None:
            continue
        if not isinstance(value, str) or value.upper() not in allowed:
            raise InvalidArgument(ARGUMENT_NAMES[wire], f"must be one of {', '.join(allowed)}, got {value!r}")
        body[wire] = str(value.upper())


def build_query(data: QueryInput | Sequence[QueryInput], namespace: str = "", *, text: bool = True,
                **options: Any) -> tuple[ApiRequest, bool]:
    """The query-data request (``text``) or the query request (objects with ``vector`` and/or
    ``sparse_vector``), and whether the caller asked for a batch of several queries."""
    if isinstance(data, (str, Mapping)):
        body: Any = _query_object(data, options, text)
        batch = False
    elif isinstance(data, Sequence):
        if not data:
            raise InvalidArgument("data" if text else "queries", "the list of queries is empty")
        body = [_query_object(item, options, text) for item in data]
        batch = len(body) > 1
    else:
        raise InvalidArgument("data", f"expected text, a query object or a list of them, got {type(data).__name__}")
    return ApiRequest("POST", _path("query-data" if text else "query", namespace), json=body, idempotent=True), batch


def build_resumable_query(query: QueryInput, namespace: str = "", *, text: bool = True,
                          max_idle: int = RESUMABLE_MAX_IDLE, **options: Any) -> ApiRequest:
    """Start a resumable query (text, or an object with ``vector`` / ``sparse_vector``) that lives
    ``max_idle`` seconds without use. Not idempotent: every start opens a new query on the server."""
    if isinstance(max_idle, bool) or not isinstance(max_idle, int) or max_idle < 1:
        raise InvalidArgument("max_idle", f"must be a positive number of seconds, got {max_idle!r}")
    body = {**_query_object(query, options, text), "maxIdle": max_idle}
    return ApiRequest("POST", _path("resumable-query-data" if text else "resumable-query", namespace), json=body)


def _uuid(uuid: str) -> str:
    if not isinstance(uuid, str) or not uuid:
        raise InvalidArgument("uuid", "the uuid that resumable_query answered is required")
    return uuid


def build_resumable_next(uuid: str, additional_k: int) -> ApiRequest:
    if isinstance(additional_k, bool) or not isinstance(additional_k, int) or additional_k < 1:
        raise InvalidArgument("additional_k", f"must be a positive integer, got {additional_k!r}")
    # not idempotent: each call moves the query forward
    return ApiRequest("POST", "/resumable-query-next", json={"uuid": _uuid(uuid), "additionalK": additional_k})


def build_resumable_end(uuid: str) -> ApiRequest:
    return ApiRequest("POST", "/resumable-query-end", json={"uuid": _uuid(uuid)})


def build_upsert(items: Mapping[str, Any] | Sequence[Mapping[str, Any]], namespace: str = "") -> ApiRequest:
    """Embed-and-store request for ``{id, data, metadata}`` items (one or a list)."""
    body = _items(items)
    for item in body:
        if "id" not in item or not isinstance(item.get("data"), str):
            raise InvalidArgument("items", "each item needs an 'id' and a 'data' string")
    # repeating an upsert of the same items leaves the same state, so it is safe to retry
    return ApiRequest("POST", _path("upsert-data", namespace), json=body, idempotent=True)


def build_upsert_vectors(items: Mapping[str, Any] | Sequence[Mapping[str, Any]], namespace: str = "") -> ApiRequest:
    """Store-as-given request for ``{id, vector, sparse_vector, metadata, data}`` items (one or a list);
    vectors may be lists or numpy arrays, sparse vectors any :data:`SparseInput` shape."""
    body = []
    for item in _items(items):
        if "id" not in item:
            raise InvalidArgument("items", "each item needs an 'id'")
        wire = {QUERY_FIELDS.get(k, k): v for k, v in item.items()}
        _vector_fields(wire, required=True)
        body.append(wire)
    return ApiRequest("POST", _path("upsert", namespace), json=body, idempotent=True)


def _items(items: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(items, Mapping):
        return [dict(items)]
    if isinstance(items, Sequence) and not isinstance(items, str):
        if not items:
            raise InvalidArgument("items", "nothing to upsert")
        if not all(isinstance(i, Mapping) for i in items):
            raise InvalidArgument("items", "expected objects (dicts) with an 'id'")
        return [dict(i) for i in items]
    raise InvalidArgument("items", "expected an object (dict) with an 'id', or a list of them")


def _ids(ids: str | Sequence[str]) -> list[str]:
    if isinstance(ids, str):
        return [ids]
    out = list(ids)
    if not out:
        raise InvalidArgument("ids", "no ids given")
    return [str(i) for i in out]


def _includes(include_metadata: Any, include_vectors: Any, include_data: Any) -> dict[str, Any]:
    body = {"includeMetadata": include_metadata, "includeVectors": include_vectors, "includeData": include_data}
    _check_booleans(body)
    return body


def _one_of(**given: Any) -> tuple[str, Any]:
    named = [(k, v) for k, v in given.items() if v is not None]
    if len(named) != 1:
        raise InvalidArgument(next(iter(given)), f"give exactly one of {', '.join(given)}")
    key, value = named[0]
    if key in ("prefix", "filter") and (not isinstance(value, str) or not value):
        raise InvalidArgument(key, "must be a non-empty string")
    return key, _ids(value) if key == "ids" else value


def page_records(include_vectors: bool) -> int:
    """The default ``range`` page, and the largest fetch batch, for what the records carry."""
    return PAGE_RECORDS_WITH_VECTORS if include_vectors else PAGE_RECORDS


def wave_size(n: int, in_flight: int, least: int, most: int) -> int:
    """Items per request so that ``n`` items go out as at most ``in_flight`` requests side by side,
    one round trip in all: each of at least ``least`` items (fewer are not worth a request of their
    own) and at most ``most`` (what the service takes, or what keeps progress and Cancel prompt)."""
    return min(most, max(least, -(-n // in_flight)))


def fetch_batches(ids: str | Sequence[str] | None, in_flight: int,
                  include_vectors: bool) -> list[str | Sequence[str] | None]:
    """The ids of a fetch as the batches it sends side by side (:func:`wave_size`); a single id or a
    prefix fetch (``ids`` None) is one request."""
    if isinstance(in_flight, bool) or not isinstance(in_flight, int) or in_flight < 1:
        raise InvalidArgument("in_flight", f"must be a positive integer, got {in_flight!r}")
    if ids is None or isinstance(ids, str):
        return [ids]
    listed = list(ids)
    size = wave_size(len(listed), in_flight, FETCH_BATCH_LEAST, page_records(include_vectors))
    sent: list[str | Sequence[str] | None] = [*batches(listed, size)]
    return sent or [listed]  # no ids: one request, as before


def build_fetch(ids: str | Sequence[str] | None = None, namespace: str = "", *, prefix: str | None = None,
                include_metadata: bool = True, include_vectors: bool = False,
                include_data: bool = True) -> ApiRequest:
    """Fetch by ``ids`` (answers in that order, ``None`` for a missing id) or by id ``prefix``."""
    key, value = _one_of(ids=ids, prefix=prefix)
    body = {key: value, **_includes(include_metadata, include_vectors, include_data)}
    return ApiRequest("POST", _path("fetch", namespace), json=body, idempotent=True)


def build_delete(ids: str | Sequence[str] | None = None, namespace: str = "", *, prefix: str | None = None,
                 filter: str | None = None) -> ApiRequest:
    """Delete by ``ids``, id ``prefix`` or metadata ``filter`` (exactly one)."""
    key, value = _one_of(ids=ids, prefix=prefix, filter=filter)
    return ApiRequest("POST", _path("delete", namespace), json={key: value}, idempotent=True)


def build_range(cursor: str = "", limit: int = 100, namespace: str = "", *, prefix: str | None = None,
                include_metadata: bool = False, include_vectors: bool = False,
                include_data: bool = False) -> ApiRequest:
    """One page of vectors in id order from ``cursor`` ("" = the start)."""
    if not isinstance(cursor, str):
        raise InvalidArgument("cursor", "must be the next_cursor string of the previous page ('' to start)")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgument("limit", f"must be a positive integer, got {limit!r}")
    body: dict[str, Any] = {"cursor": cursor, "limit": limit,
                            **_includes(include_metadata, include_vectors, include_data)}
    if prefix:
        body["prefix"] = prefix
    return ApiRequest("POST", _path("range", namespace), json=body, idempotent=True)


def build_update(id: str, namespace: str = "", *, vector: Any = None, sparse_vector: SparseInput | None = None,
                 data: str | None = None, metadata: Mapping[str, Any] | None = None,
                 metadata_update_mode: MetadataUpdateMode | str = MetadataUpdateMode.OVERWRITE) -> ApiRequest:
    """Change one vector: its values, its data (re-embedded where the index has a model) or its
    metadata, replaced (OVERWRITE) or merged (PATCH, RFC 7396)."""
    if not isinstance(id, str) or not id:
        raise InvalidArgument("id", "the id of the vector to update is required")
    mode = str(metadata_update_mode).upper() if isinstance(metadata_update_mode, str) else None
    if mode not in tuple(MetadataUpdateMode):
        raise InvalidArgument("metadata_update_mode", f"must be one of {', '.join(MetadataUpdateMode)}, "
                              f"got {metadata_update_mode!r}")
    if data is not None and not isinstance(data, str):
        raise InvalidArgument("data", "must be a string")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidArgument("metadata", "must be a dict")
    body: dict[str, Any] = {"id": id, "metadataUpdateMode": mode, "vector": vector, "sparseVector": sparse_vector}
    _vector_fields(body, required=False)
    if data is not None:
        body["data"] = data
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if len(body) == 2:
        raise InvalidArgument("vector", "give at least one of vector, sparse_vector, data, metadata")
    return ApiRequest("POST", _path("update", namespace), json=body, idempotent=True)


def build_reset(namespace: str = "", *, all: bool = False) -> ApiRequest:
    """Empty a namespace, or every namespace with ``all``."""
    if all:
        return ApiRequest("POST", "/reset", params={"all": ""}, idempotent=True)
    return ApiRequest("POST", _path("reset", namespace), idempotent=True)


def build_list_namespaces() -> ApiRequest:
    return ApiRequest("POST", "/list-namespaces", idempotent=True)


def build_delete_namespace(namespace: str) -> ApiRequest:
    if not isinstance(namespace, str) or not namespace:
        raise InvalidArgument("namespace", "name the namespace to delete (the default namespace cannot be deleted)")
    return ApiRequest("POST", _path("delete-namespace", namespace), idempotent=True)


def build_info() -> ApiRequest:
    return ApiRequest("GET", "/info", idempotent=True)


def decode_result(response: httpx.Response, what: str, redact: Callable[[str], str] = str) -> Any:
    """The ``result`` of a reply, or the matching APIError (422 -> EmbeddingModelRequired); error
    bodies are read by the transport's one JSON envelope decoder."""
    try:
        body = decode_json_reply(response, what, redact)
    except UnprocessableEntity as exc:
        said = exc.body.get("error") if isinstance(exc.body, dict) else None
        raise EmbeddingModelRequired(
            f"{what} failed with HTTP 422: {redact(said or response.reason_phrase)} (text queries need an "
            "index created with an embedding model; use a dense, sparse or hybrid index that has one)",
            status=422, body=exc.body,
        ) from None
    if not isinstance(body, dict) or "result" not in body:
        raise ProtocolError(f"{what}: expected a JSON object with 'result', got {redact(response.text[:200])!r}")
    return body["result"]


def _results(items: Any, what: str) -> list[QueryResult]:
    if not isinstance(items, list):
        raise ProtocolError(f"{what}: expected a list of results, got {type(items).__name__}")
    return [QueryResult.model_validate(i) for i in items]


def decode_query(result: Any, batch: bool) -> list[QueryResult] | list[list[QueryResult]]:
    if batch:
        if not isinstance(result, list) or not all(isinstance(r, list) for r in result):
            raise ProtocolError("query: a batch query must answer one list per query")
        return [_results(r, "query") for r in result]
    return _results(result, "query")


def decode_resumable_query(result: Any) -> ResumableQueryResult:
    return ResumableQueryResult.model_validate(result)


def decode_resumable_next(result: Any) -> list[QueryResult]:
    return _results(result, "resumable-query-next")


_RECORDS: TypeAdapter[list[VectorRecord | None]] = TypeAdapter(list[VectorRecord | None])


def decode_fetch(result: Any) -> list[VectorRecord | None]:
    if not isinstance(result, list):
        raise ProtocolError("fetch: expected a list")
    return _RECORDS.validate_python(result)  # one call for the list: thousands of records a reply


def decode_range(result: Any) -> RangeResult:
    return RangeResult.model_validate(result)


def _count(result: Any, field: str, what: str) -> int:
    if isinstance(result, dict) and isinstance(result.get(field), int):
        return result[field]
    raise ProtocolError(f"{what}: expected {{{field}: n}}, got {result!r}")


def decode_delete(result: Any) -> int:
    return _count(result, "deleted", "delete")


def decode_update(result: Any) -> bool:
    """True if the vector existed and was updated."""
    return _count(result, "updated", "update") == 1


def decode_namespaces(result: Any) -> list[str]:
    if not isinstance(result, list) or not all(isinstance(n, str) for n in result):
        raise ProtocolError(f"list-namespaces: expected a list of names, got {result!r}")
    return result
