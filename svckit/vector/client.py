"""Vector / AsyncVector: text query, upsert, fetch, delete and info over one index URL.

The request building and reply decoding are pure functions (``build_*`` / ``decode_*``); the sync and
async clients are thin shells that send what they build through svckit._http.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx
from typing_extensions import Self

from svckit._http import ApiRequest, AsyncTransport, BearerAuth, RetryPolicy, SyncTransport
from svckit.config import Settings
from svckit.errors import (
    EmbeddingModelRequired,
    InvalidArgument,
    ProtocolError,
    error_for_status,
    mask,
)
from svckit.vector.models import IndexInfo, QueryResult, VectorRecord

KIND_SETTINGS = {
    "dense": "vector_url",
    "sparse": "vector_sparse_url",
    "hybrid": "vector_hybrid_url",
    "nomodel": "vector_nomodel_url",
}

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
}

QueryInput = str | Mapping[str, Any]

#: wire field -> the values the service accepts (upper-case on the wire; any case is accepted here)
CHOICES = {
    "queryMode": ("HYBRID", "DENSE", "SPARSE"),
    "fusionAlgorithm": ("RRF", "DBSF"),
    "weightingStrategy": ("IDF",),
}
BOOLEANS = ("includeMetadata", "includeVectors", "includeData")
#: wire field -> the snake_case argument name used in errors
ARGUMENT_NAMES = {wire: name for name, wire in QUERY_FIELDS.items()}


# -- pure protocol -----------------------------------------------------------------------------


def _path(operation: str, namespace: str) -> str:
    if not isinstance(namespace, str):
        raise InvalidArgument("namespace", "must be a string ('' is the default namespace)")
    return f"/{operation}/{quote(namespace, safe='')}" if namespace else f"/{operation}"


def _query_object(item: QueryInput, options: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, str):
        body: dict[str, Any] = {"data": item}
    elif isinstance(item, Mapping):
        body = {QUERY_FIELDS.get(k, k): v for k, v in item.items()}
        if not isinstance(body.get("data"), str):
            raise InvalidArgument("data", "each query object needs a 'data' string")
    else:
        raise InvalidArgument("data", f"expected text, a query object or a list of them, got {type(item).__name__}")
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
        body[wire] = value.upper()


def build_query(data: QueryInput | Sequence[QueryInput], namespace: str = "", **options: Any) -> tuple[ApiRequest, bool]:
    """The query-data request, and whether the caller asked for a batch of several queries."""
    if isinstance(data, (str, Mapping)):
        body: Any = _query_object(data, options)
        batch = False
    elif isinstance(data, Sequence):
        if not data:
            raise InvalidArgument("data", "the list of queries is empty")
        body = [_query_object(item, options) for item in data]
        batch = len(body) > 1
    else:
        raise InvalidArgument("data", f"expected text, a query object or a list of them, got {type(data).__name__}")
    return ApiRequest("POST", _path("query-data", namespace), json=body, idempotent=True), batch


def build_upsert(items: Mapping[str, Any] | Sequence[Mapping[str, Any]], namespace: str = "") -> ApiRequest:
    if isinstance(items, Mapping):
        body: Any = dict(items)
    elif isinstance(items, Sequence) and not isinstance(items, str):
        body = [dict(i) for i in items]
        if not body:
            raise InvalidArgument("items", "nothing to upsert")
    else:
        raise InvalidArgument("items", "expected {id, data, metadata} or a list of them")
    for item in body if isinstance(body, list) else [body]:
        if "id" not in item or not isinstance(item.get("data"), str):
            raise InvalidArgument("items", "each item needs an 'id' and a 'data' string")
    # repeating an upsert of the same items leaves the same state, so it is safe to retry
    return ApiRequest("POST", _path("upsert-data", namespace), json=body, idempotent=True)


def _ids(ids: str | Sequence[str]) -> list[str]:
    if isinstance(ids, str):
        return [ids]
    out = list(ids)
    if not out:
        raise InvalidArgument("ids", "no ids given")
    return [str(i) for i in out]


def build_fetch(ids: str | Sequence[str], namespace: str = "", *, include_metadata: bool = True,
                include_vectors: bool = False, include_data: bool = True) -> ApiRequest:
    body = {"ids": _ids(ids), "includeMetadata": include_metadata, "includeVectors": include_vectors,
            "includeData": include_data}
    _check_booleans(body)
    return ApiRequest("POST", _path("fetch", namespace), json=body, idempotent=True)


def build_delete(ids: str | Sequence[str], namespace: str = "") -> ApiRequest:
    return ApiRequest("POST", _path("delete", namespace), json={"ids": _ids(ids)}, idempotent=True)


def build_info() -> ApiRequest:
    return ApiRequest("GET", "/info", idempotent=True)


def decode_result(response: httpx.Response, what: str) -> Any:
    """The ``result`` of a reply, or the matching APIError (422 -> EmbeddingModelRequired)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        message = message or response.text[:200] or response.reason_phrase
        if response.status_code == 422:
            raise EmbeddingModelRequired(
                f"{what} failed with HTTP 422: {message} (text queries need an index created with an "
                "embedding model; use a dense, sparse or hybrid index that has one)",
                status=422, body=body,
            )
        raise error_for_status(response.status_code, message, body, what=what)
    if not isinstance(body, dict) or "result" not in body:
        raise ProtocolError(f"{what}: expected a JSON object with 'result', got {response.text[:200]!r}")
    return body["result"]


def decode_query(result: Any, batch: bool) -> list[QueryResult] | list[list[QueryResult]]:
    def one(items: Any) -> list[QueryResult]:
        if not isinstance(items, list):
            raise ProtocolError(f"query-data: expected a list of results, got {type(items).__name__}")
        return [QueryResult.model_validate(i) for i in items]

    if batch:
        if not isinstance(result, list) or not all(isinstance(r, list) for r in result):
            raise ProtocolError("query-data: a batch query must answer one list per query")
        return [one(r) for r in result]
    return one(result)


def decode_fetch(result: Any) -> list[VectorRecord | None]:
    if not isinstance(result, list):
        raise ProtocolError("fetch: expected a list")
    return [None if r is None else VectorRecord.model_validate(r) for r in result]


def decode_delete(result: Any) -> int:
    if isinstance(result, dict) and isinstance(result.get("deleted"), int):
        return result["deleted"]
    raise ProtocolError(f"delete: expected {{deleted: n}}, got {result!r}")


def _settings_url(settings: Settings, kind: str) -> tuple[str, str]:
    if kind not in KIND_SETTINGS:
        raise InvalidArgument("kind", f"must be one of {', '.join(KIND_SETTINGS)}, got {kind!r}")
    url, token = settings.require(KIND_SETTINGS[kind], "vector_token")
    return url, token


# -- clients -----------------------------------------------------------------------------------


class _Base:
    def __init__(self, url: str, token: str) -> None:
        if not url:
            raise InvalidArgument("url", "the index URL is required (SVC_VECTOR_URL)")
        if not token:
            raise InvalidArgument("token", "the index token is required (SVC_VECTOR_TOKEN)")
        self.url = url.rstrip("/")
        self._token = token

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, token={mask(self._token)})"


class Vector(_Base):
    """Synchronous client of one vector index.

    >>> v = Vector.from_env()                                   # doctest: +SKIP
    >>> v.upsert_data({"id": "a", "data": "hello world"})       # doctest: +SKIP
    >>> v.query_data("greeting", top_k=3)                       # doctest: +SKIP
    """

    def __init__(self, url: str, token: str, *, timeout: float | None = 10.0, retry: RetryPolicy | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(url, token)
        self._http = SyncTransport(self.url, BearerAuth(token), timeout=timeout, retry=retry, transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, kind: str = "dense", **options: Any) -> Vector:
        url, token = _settings_url(settings, kind)
        return cls(url, token, **options)

    @classmethod
    def from_env(cls, kind: str = "dense", **options: Any) -> Vector:
        return cls.from_settings(Settings.from_env(), kind=kind, **options)

    def _call(self, request: ApiRequest, what: str) -> Any:
        return decode_result(self._http.send(request), what)

    def query_data(self, data: QueryInput | Sequence[QueryInput], *, top_k: int = 10,
                   include_metadata: bool = False, include_vectors: bool = False, include_data: bool = False,
                   filter: str = "", weighting_strategy: str | None = None,
                   fusion_algorithm: str | None = None, query_mode: str | None = None,
                   namespace: str = "") -> list[QueryResult] | list[list[QueryResult]]:
        """Embed ``data`` with the index's model and return the nearest vectors.

        One text or object (or a one-element list) gives one list of results; a list of several gives
        one list per query, in order. Options apply to every query that does not set them itself.
        """
        request, batch = build_query(
            data, namespace, top_k=top_k, include_metadata=include_metadata, include_vectors=include_vectors,
            include_data=include_data, filter=None if filter == "" else filter,
            weighting_strategy=weighting_strategy, fusion_algorithm=fusion_algorithm, query_mode=query_mode,
        )
        return decode_query(self._call(request, "query-data"), batch)

    def upsert_data(self, items: Mapping[str, Any] | Sequence[Mapping[str, Any]], *, namespace: str = "") -> str:
        """Embed and store ``{id, data, metadata}`` items (one or a list); namespaces are created on use."""
        return self._call(build_upsert(items, namespace), "upsert-data")

    def fetch(self, ids: str | Sequence[str], *, namespace: str = "", include_metadata: bool = True,
              include_vectors: bool = False, include_data: bool = True) -> list[VectorRecord | None]:
        """Stored vectors by id, in order; ``None`` where an id does not exist."""
        request = build_fetch(ids, namespace, include_metadata=include_metadata,
                              include_vectors=include_vectors, include_data=include_data)
        return decode_fetch(self._call(request, "fetch"))

    def delete(self, ids: str | Sequence[str], *, namespace: str = "") -> int:
        """Delete vectors by id; returns how many existed."""
        return decode_delete(self._call(build_delete(ids, namespace), "delete"))

    def info(self) -> IndexInfo:
        return IndexInfo.model_validate(self._call(build_info(), "info"))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncVector(_Base):
    """Asynchronous twin of :class:`Vector` (same methods, awaited)."""

    def __init__(self, url: str, token: str, *, timeout: float | None = 10.0, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(url, token)
        self._http = AsyncTransport(self.url, BearerAuth(token), timeout=timeout, retry=retry, transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, kind: str = "dense", **options: Any) -> AsyncVector:
        url, token = _settings_url(settings, kind)
        return cls(url, token, **options)

    @classmethod
    def from_env(cls, kind: str = "dense", **options: Any) -> AsyncVector:
        return cls.from_settings(Settings.from_env(), kind=kind, **options)

    async def _call(self, request: ApiRequest, what: str) -> Any:
        return decode_result(await self._http.send(request), what)

    async def query_data(self, data: QueryInput | Sequence[QueryInput], *, top_k: int = 10,
                         include_metadata: bool = False, include_vectors: bool = False,
                         include_data: bool = False, filter: str = "", weighting_strategy: str | None = None,
                         fusion_algorithm: str | None = None, query_mode: str | None = None,
                         namespace: str = "") -> list[QueryResult] | list[list[QueryResult]]:
        request, batch = build_query(
            data, namespace, top_k=top_k, include_metadata=include_metadata, include_vectors=include_vectors,
            include_data=include_data, filter=None if filter == "" else filter,
            weighting_strategy=weighting_strategy, fusion_algorithm=fusion_algorithm, query_mode=query_mode,
        )
        return decode_query(await self._call(request, "query-data"), batch)

    async def upsert_data(self, items: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
                          namespace: str = "") -> str:
        return await self._call(build_upsert(items, namespace), "upsert-data")

    async def fetch(self, ids: str | Sequence[str], *, namespace: str = "", include_metadata: bool = True,
                    include_vectors: bool = False, include_data: bool = True) -> list[VectorRecord | None]:
        request = build_fetch(ids, namespace, include_metadata=include_metadata,
                              include_vectors=include_vectors, include_data=include_data)
        return decode_fetch(await self._call(request, "fetch"))

    async def delete(self, ids: str | Sequence[str], *, namespace: str = "") -> int:
        return decode_delete(await self._call(build_delete(ids, namespace), "delete"))

    async def info(self) -> IndexInfo:
        return IndexInfo.model_validate(await self._call(build_info(), "info"))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def close(self) -> None:
        await self.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
