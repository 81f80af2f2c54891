"""Vector / AsyncVector: the whole data API of one index URL.

Text query and upsert (``query_data``, ``upsert_data``), vectors given as numbers (``upsert``,
``query``), resumable queries, ``range`` (and ``iter_range`` over every page), ``fetch`` and ``delete``
by ids, id prefix or filter, ``update``, ``reset``, namespaces and ``info``.

:mod:`svckit.vector.protocol` builds the requests and decodes the replies (pure ``build_*`` /
``decode_*`` functions); the sync and async clients are thin shells that send what it builds through
svckit._http.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from svckit._client import AsyncClient, ClientBase, ClientOptions, SyncClient
from svckit._cursor import ARun, Pages, Run, alisting, listing
from svckit._gc import collector_paused
from svckit._http import ApiRequest, BearerAuth
from svckit._inflight import DEFAULT_IN_FLIGHT, InFlight, agather
from svckit._progress import Cancel, ProgressArg
from svckit.config import Settings
from svckit.errors import (
    InvalidArgument,
    mask,
)
from svckit.vector import protocol as p
from svckit.vector.models import (
    IndexInfo,
    MetadataUpdateMode,
    QueryResult,
    RangeResult,
    ResumableQueryResult,
    VectorRecord,
)

if TYPE_CHECKING:
    from typing import Self, Unpack

T = TypeVar("T")

KIND_SETTINGS = {
    "dense": "vector_url",
    "sparse": "vector_sparse_url",
    "hybrid": "vector_hybrid_url",
    "nomodel": "vector_nomodel_url",
}

def _settings_url(settings: Settings, kind: str) -> tuple[str, str]:
    if kind not in KIND_SETTINGS:
        raise InvalidArgument("kind", f"must be one of {', '.join(KIND_SETTINGS)}, got {kind!r}")
    url, token = settings.require(KIND_SETTINGS[kind], "vector_token")
    return url, token


def _range_pages(progress: ProgressArg, cancel: Cancel, limit: int | None) -> Pages:
    """``iter_range``'s cursor chain: ``range`` pages from "" to the page whose ``next_cursor`` is ""."""
    return Pages("vectors", "next_cursor", start="", progress=progress, cancel=cancel, limit=limit)


# -- clients -----------------------------------------------------------------------------------


class _VectorBase(ClientBase):
    """What Vector and AsyncVector share (:mod:`svckit._client`): the index URL and token, and which
    index of the settings ``kind`` names."""

    def __init__(self, url: str, token: str, **options: Unpack[ClientOptions]) -> None:
        if not url:
            raise InvalidArgument("url", "the index URL is required (SVC_VECTOR_URL)")
        if not token:
            raise InvalidArgument("token", "the index token is required (SVC_VECTOR_TOKEN)")
        super().__init__(url, BearerAuth(token), **options)
        self._token = token

    @classmethod
    def from_settings(cls, settings: Settings, kind: str = "dense", **options: Any) -> Self:
        """Build from ``settings``: the index of ``kind`` (dense, sparse, hybrid or nomodel)."""
        url, token = _settings_url(settings, kind)
        return cls(url, token, **settings.client_options(options))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, token={mask(self._token)})"


class Vector(_VectorBase, SyncClient):
    """Synchronous client of one vector index.

    >>> v = Vector.from_env()                                   # doctest: +SKIP
    >>> v.upsert_data({"id": "a", "data": "hello world"})       # doctest: +SKIP
    >>> v.query_data("greeting", top_k=3)                       # doctest: +SKIP
    >>> v.upsert({"id": "b", "vector": [0.1] * 384})            # doctest: +SKIP
    >>> [r.id for r in v.iter_range(prefix="a")]                # doctest: +SKIP
    """

    def _call(self, request: ApiRequest, what: str | None = None) -> Any:
        # the vector envelope decoder also names the missing embedding model (a 422)
        return p.decode_result(self._http.send(request), what or request.path, self._http.redact)

    def _read(self, request: ApiRequest, what: str, decode: Callable[[Any], T]) -> T:
        """A reply of up to thousands of records, parsed and decoded with the collector paused
        (:mod:`svckit._gc`)."""
        response = self._http.send(request)
        with collector_paused():
            return decode(p.decode_result(response, what, self._http.redact))

    # -- queries -----------------------------------------------------------------------------
    def query_data(self, data: p.QueryInput | Sequence[p.QueryInput], *, top_k: int = 10,
                   include_metadata: bool = False, include_vectors: bool = False, include_data: bool = False,
                   filter: str = "", weighting_strategy: str | None = None,
                   fusion_algorithm: str | None = None, query_mode: str | None = None,
                   namespace: str = "") -> list[QueryResult] | list[list[QueryResult]]:
        """Embed ``data`` with the index's model and return the nearest vectors.

        One text or object (or a one-element list) gives one list of results; a list of several gives
        one list per query, in order. Options apply to every query that does not set them itself.
        """
        request, batch = p.build_query(
            data, namespace, top_k=top_k, include_metadata=include_metadata, include_vectors=include_vectors,
            include_data=include_data, filter=filter or None,
            weighting_strategy=weighting_strategy, fusion_algorithm=fusion_algorithm, query_mode=query_mode,
        )
        return p.decode_query(self._call(request, "query-data"), batch)

    def query(self, vector: Any = None, *, sparse_vector: p.SparseInput | None = None, top_k: int = 10,
              include_metadata: bool = False, include_vectors: bool = False, include_data: bool = False,
              filter: str = "", weighting_strategy: str | None = None, fusion_algorithm: str | None = None,
              namespace: str = "") -> list[QueryResult]:
        """The nearest vectors to a dense ``vector`` and/or a ``sparse_vector`` (both on a hybrid index
        fuse the two rankings). No embedding: works on an index created without a model."""
        request, batch = p.build_query(
            {"vector": vector, "sparse_vector": sparse_vector}, namespace, text=False, top_k=top_k,
            include_metadata=include_metadata, include_vectors=include_vectors, include_data=include_data,
            filter=filter or None, weighting_strategy=weighting_strategy, fusion_algorithm=fusion_algorithm,
        )
        return p.decode_query(self._call(request, "query"), batch)  # type: ignore[return-value]

    def query_many(self, queries: Sequence[Mapping[str, Any]], *, namespace: str = "",
                   **options: Any) -> list[list[QueryResult]]:
        """Several vector queries (objects with ``vector`` / ``sparse_vector`` and their own options) in
        one request; one list of results per query, in order."""
        request, batch = p.build_query(queries, namespace, text=False, **options)
        out = p.decode_query(self._call(request, "query"), batch)
        return out if batch else [out]  # type: ignore[list-item,return-value]

    def resumable_query(self, query: p.QueryInput, *, text: bool | None = None, max_idle: int = p.RESUMABLE_MAX_IDLE,
                        namespace: str = "", **options: Any) -> ResumableQueryResult:
        """Start a query whose further results are read with :meth:`resumable_query_next` until
        :meth:`resumable_query_end` (or ``max_idle`` seconds without use). ``query``: text, or an object
        with ``vector`` / ``sparse_vector``; options as for :meth:`query_data`."""
        request = p.build_resumable_query(query, namespace, text=isinstance(query, str) if text is None else text,
                                        max_idle=max_idle, **options)
        return p.decode_resumable_query(self._call(request, "resumable-query"))

    def resumable_query_next(self, uuid: str, additional_k: int = 10) -> list[QueryResult]:
        return p.decode_resumable_next(self._call(p.build_resumable_next(uuid, additional_k), "resumable-query-next"))

    def resumable_query_end(self, uuid: str) -> None:
        self._call(p.build_resumable_end(uuid), "resumable-query-end")

    # -- writes ------------------------------------------------------------------------------
    def upsert_data(self, items: Mapping[str, Any] | Sequence[Mapping[str, Any]], *, namespace: str = "") -> str:
        """Embed and store ``{id, data, metadata}`` items (one or a list); namespaces are created on use."""
        return self._call(p.build_upsert(items, namespace), "upsert-data")

    def upsert(self, items: Mapping[str, Any] | Sequence[Mapping[str, Any]], *, namespace: str = "") -> str:
        """Store ``{id, vector, sparse_vector, metadata, data}`` items as given (nothing is embedded)."""
        return self._call(p.build_upsert_vectors(items, namespace), "upsert")

    def update(self, id: str, *, vector: Any = None, sparse_vector: p.SparseInput | None = None,
               data: str | None = None, metadata: Mapping[str, Any] | None = None,
               metadata_update_mode: MetadataUpdateMode | str = MetadataUpdateMode.OVERWRITE,
               namespace: str = "") -> bool:
        """Change one vector; False if the id does not exist."""
        request = p.build_update(id, namespace, vector=vector, sparse_vector=sparse_vector, data=data,
                               metadata=metadata, metadata_update_mode=metadata_update_mode)
        return p.decode_update(self._call(request, "update"))

    def delete(self, ids: str | Sequence[str] | None = None, *, prefix: str | None = None,
               filter: str | None = None, namespace: str = "") -> int:
        """Delete vectors by ids, id prefix or metadata filter (exactly one); returns how many existed."""
        return p.decode_delete(self._call(p.build_delete(ids, namespace, prefix=prefix, filter=filter), "delete"))

    def reset(self, *, namespace: str = "", all: bool = False) -> None:
        """Remove every vector of ``namespace``, or of every namespace with ``all=True``."""
        self._call(p.build_reset(namespace, all=all), "reset")

    def delete_namespace(self, namespace: str) -> None:
        """Delete a namespace and its vectors (NotFound if it does not exist)."""
        self._call(p.build_delete_namespace(namespace), "delete-namespace")

    # -- reads -------------------------------------------------------------------------------
    def fetch(self, ids: str | Sequence[str] | None = None, *, prefix: str | None = None, namespace: str = "",
              include_metadata: bool = True, include_vectors: bool = False, include_data: bool = True,
              in_flight: int = DEFAULT_IN_FLIGHT) -> list[VectorRecord | None]:
        """Stored vectors by id, in order (``None`` where an id does not exist), or every vector whose
        id starts with ``prefix``. Many ids go as batches, ``in_flight`` of them side by side, so
        10,000 ids take one round trip, and the service encodes one batch while this decodes another."""
        def one(batch: str | Sequence[str] | None) -> list[VectorRecord | None]:
            request = p.build_fetch(batch, namespace, prefix=prefix, include_metadata=include_metadata,
                                    include_vectors=include_vectors, include_data=include_data)
            return self._read(request, "fetch", p.decode_fetch)

        batches = p.fetch_batches(ids, in_flight, include_vectors)
        if len(batches) == 1:
            return one(batches[0])
        records: list[VectorRecord | None] = []
        with InFlight(in_flight) as flight:
            for batch in batches:
                flight.submit(one, batch, then=records.extend)
        return records

    def range(self, cursor: str = "", limit: int | None = None, *, prefix: str | None = None,
              namespace: str = "", include_metadata: bool = False, include_vectors: bool = False,
              include_data: bool = False) -> RangeResult:
        """One page of vectors in id order; pass its ``next_cursor`` for the next ("" when done).
        ``limit`` defaults to a page worth a round trip (:data:`~svckit.vector.protocol.PAGE_RECORDS`)."""
        limit = p.page_records(include_vectors) if limit is None else limit
        request = p.build_range(cursor, limit, namespace, prefix=prefix,
                                include_metadata=include_metadata, include_vectors=include_vectors,
                                include_data=include_data)
        return self._read(request, "range", p.decode_range)

    def iter_range(self, *, page_size: int | None = None, progress: ProgressArg = False,
                   cancel: Cancel = None, limit: int | None = None, **options: Any) -> Run[VectorRecord]:
        """Every vector (of ``namespace``, with ``prefix``), page by page (pages as :meth:`range`'s),
        through the one cursor loop (:mod:`svckit._cursor`); options as for :meth:`range`.
        ``progress`` and ``cancel`` as in :mod:`svckit._progress` (a cancelled walk stops before its
        next page, ``.cancelled`` True), ``limit`` stops after that many vectors."""
        return listing(lambda cursor: self.range(cursor, page_size, **options), _range_pages(progress, cancel, limit))

    def list_namespaces(self) -> list[str]:
        """Names of the index's namespaces; the default namespace is ``""``."""
        return p.decode_namespaces(self._call(p.build_list_namespaces(), "list-namespaces"))

    def info(self) -> IndexInfo:
        """Index statistics, with the vector count of each namespace in ``namespaces``."""
        return IndexInfo.model_validate(self._call(p.build_info(), "info"))


class AsyncVector(_VectorBase, AsyncClient):
    """Asynchronous twin of :class:`Vector` (same methods, awaited; ``iter_range`` is an async iterator)."""

    async def _call(self, request: ApiRequest, what: str | None = None) -> Any:
        return p.decode_result(await self._http.send(request), what or request.path, self._http.redact)

    async def _read(self, request: ApiRequest, what: str, decode: Callable[[Any], T]) -> T:
        response = await self._http.send(request)
        with collector_paused():
            return decode(p.decode_result(response, what, self._http.redact))

    async def query_data(self, data: p.QueryInput | Sequence[p.QueryInput], *, top_k: int = 10,
                         include_metadata: bool = False, include_vectors: bool = False,
                         include_data: bool = False, filter: str = "", weighting_strategy: str | None = None,
                         fusion_algorithm: str | None = None, query_mode: str | None = None,
                         namespace: str = "") -> list[QueryResult] | list[list[QueryResult]]:
        request, batch = p.build_query(
            data, namespace, top_k=top_k, include_metadata=include_metadata, include_vectors=include_vectors,
            include_data=include_data, filter=filter or None,
            weighting_strategy=weighting_strategy, fusion_algorithm=fusion_algorithm, query_mode=query_mode,
        )
        return p.decode_query(await self._call(request, "query-data"), batch)

    async def query(self, vector: Any = None, *, sparse_vector: p.SparseInput | None = None, top_k: int = 10,
                    include_metadata: bool = False, include_vectors: bool = False, include_data: bool = False,
                    filter: str = "", weighting_strategy: str | None = None, fusion_algorithm: str | None = None,
                    namespace: str = "") -> list[QueryResult]:
        request, batch = p.build_query(
            {"vector": vector, "sparse_vector": sparse_vector}, namespace, text=False, top_k=top_k,
            include_metadata=include_metadata, include_vectors=include_vectors, include_data=include_data,
            filter=filter or None, weighting_strategy=weighting_strategy, fusion_algorithm=fusion_algorithm,
        )
        return p.decode_query(await self._call(request, "query"), batch)  # type: ignore[return-value]

    async def query_many(self, queries: Sequence[Mapping[str, Any]], *, namespace: str = "",
                         **options: Any) -> list[list[QueryResult]]:
        request, batch = p.build_query(queries, namespace, text=False, **options)
        out = p.decode_query(await self._call(request, "query"), batch)
        return out if batch else [out]  # type: ignore[list-item,return-value]

    async def resumable_query(self, query: p.QueryInput, *, text: bool | None = None,
                              max_idle: int = p.RESUMABLE_MAX_IDLE, namespace: str = "",
                              **options: Any) -> ResumableQueryResult:
        request = p.build_resumable_query(query, namespace, text=isinstance(query, str) if text is None else text,
                                        max_idle=max_idle, **options)
        return p.decode_resumable_query(await self._call(request, "resumable-query"))

    async def resumable_query_next(self, uuid: str, additional_k: int = 10) -> list[QueryResult]:
        return p.decode_resumable_next(
            await self._call(p.build_resumable_next(uuid, additional_k), "resumable-query-next"))

    async def resumable_query_end(self, uuid: str) -> None:
        await self._call(p.build_resumable_end(uuid), "resumable-query-end")

    async def upsert_data(self, items: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
                          namespace: str = "") -> str:
        return await self._call(p.build_upsert(items, namespace), "upsert-data")

    async def upsert(self, items: Mapping[str, Any] | Sequence[Mapping[str, Any]], *, namespace: str = "") -> str:
        return await self._call(p.build_upsert_vectors(items, namespace), "upsert")

    async def update(self, id: str, *, vector: Any = None, sparse_vector: p.SparseInput | None = None,
                     data: str | None = None, metadata: Mapping[str, Any] | None = None,
                     metadata_update_mode: MetadataUpdateMode | str = MetadataUpdateMode.OVERWRITE,
                     namespace: str = "") -> bool:
        request = p.build_update(id, namespace, vector=vector, sparse_vector=sparse_vector, data=data,
                               metadata=metadata, metadata_update_mode=metadata_update_mode)
        return p.decode_update(await self._call(request, "update"))

    async def delete(self, ids: str | Sequence[str] | None = None, *, prefix: str | None = None,
                     filter: str | None = None, namespace: str = "") -> int:
        return p.decode_delete(await self._call(p.build_delete(ids, namespace, prefix=prefix, filter=filter), "delete"))

    async def reset(self, *, namespace: str = "", all: bool = False) -> None:
        await self._call(p.build_reset(namespace, all=all), "reset")

    async def delete_namespace(self, namespace: str) -> None:
        await self._call(p.build_delete_namespace(namespace), "delete-namespace")

    async def fetch(self, ids: str | Sequence[str] | None = None, *, prefix: str | None = None,
                    namespace: str = "", include_metadata: bool = True, include_vectors: bool = False,
                    include_data: bool = True,
                    in_flight: int = DEFAULT_IN_FLIGHT) -> list[VectorRecord | None]:
        async def one(batch: str | Sequence[str] | None) -> list[VectorRecord | None]:
            request = p.build_fetch(batch, namespace, prefix=prefix, include_metadata=include_metadata,
                                    include_vectors=include_vectors, include_data=include_data)
            return await self._read(request, "fetch", p.decode_fetch)

        parts = await agather([one(b) for b in p.fetch_batches(ids, in_flight, include_vectors)], in_flight)
        return [record for part in parts for record in part]

    async def range(self, cursor: str = "", limit: int | None = None, *, prefix: str | None = None,
                    namespace: str = "", include_metadata: bool = False, include_vectors: bool = False,
                    include_data: bool = False) -> RangeResult:
        limit = p.page_records(include_vectors) if limit is None else limit
        request = p.build_range(cursor, limit, namespace, prefix=prefix,
                                include_metadata=include_metadata, include_vectors=include_vectors,
                                include_data=include_data)
        return await self._read(request, "range", p.decode_range)

    def iter_range(self, *, page_size: int | None = None, progress: ProgressArg = False,
                   cancel: Cancel = None, limit: int | None = None, **options: Any) -> ARun[VectorRecord]:
        """Every vector, page by page (``async for``); options as for :meth:`range`."""
        return alisting(lambda cursor: self.range(cursor, page_size, **options),
                        _range_pages(progress, cancel, limit))

    async def list_namespaces(self) -> list[str]:
        return p.decode_namespaces(await self._call(p.build_list_namespaces(), "list-namespaces"))

    async def info(self) -> IndexInfo:
        return IndexInfo.model_validate(await self._call(p.build_info(), "info"))
