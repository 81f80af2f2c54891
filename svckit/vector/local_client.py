"""A :class:`Vector` client over a :class:`~svckit.localindex.LocalIndex` in this process, and the
:class:`VectorQueries` protocol that both clients (and test fakes) satisfy.

``LocalVector(index)`` is the same client as the remote one: every method, argument, check, model and
error is :class:`Vector`'s, because only the transport differs. :class:`LocalTransport` answers each
request with the sandbox's operation table (:mod:`svckit.localindex.dispatch`) instead of sending it,
so a refused filter is a ``BadRequest`` and an index without a model an ``EmbeddingModelRequired``,
exactly as from the service.

>>> from svckit.localindex import LocalIndex, load_demo_corpus      # doctest: +SKIP
>>> index = LocalIndex(kind="hybrid"); index.upsert_data(load_demo_corpus())   # doctest: +SKIP
>>> LocalVector(index).query_data("read a JSON file", top_k=3)        # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable
from urllib.parse import unquote

import httpx

from svckit._http import RetryPolicy
from svckit.vector.client import Vector
from svckit.vector.models import IndexInfo, QueryResult, RangeResult, VectorRecord
from svckit.vector.protocol import QueryInput

#: the base URL of a local client: requests never leave the process (the transport answers them)
LOCAL_URL = "http://127.0.0.1/local-index"


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


class LocalTransport(httpx.BaseTransport):
    """Answers the vector data API's requests from a LocalIndex, with the service's status codes and
    ``{"result"}`` / ``{"error", "status"}`` bodies."""

    def __init__(self, index: Any) -> None:
        self.index = index

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        from svckit.localindex.dispatch import OPERATIONS, error_status

        base = httpx.URL(LOCAL_URL).path
        operation, _, namespace = request.url.path.removeprefix(base).lstrip("/").partition("/")
        namespace = unquote(namespace)
        content = request.read()
        try:
            if operation == "info":
                result = self.index.info()
            elif operation in OPERATIONS:
                body = json.loads(content or b"null")
                result = OPERATIONS[operation](self.index, body, namespace, dict(request.url.params))
            else:
                return _error(f"unknown operation {operation!r}", 404)
        except Exception as exc:
            status = error_status(exc)
            if status is None:
                raise
            return _error(str(exc), status)
        return httpx.Response(200, json={"result": result})


def _error(message: str, status: int) -> httpx.Response:
    return httpx.Response(status, json={"error": message, "status": status})


class LocalVector(Vector):
    """The :class:`Vector` client of a LocalIndex in this process (no network, no token)."""

    def __init__(self, index: Any) -> None:
        super().__init__(LOCAL_URL, "local", retry=RetryPolicy(attempts=1), transport=LocalTransport(index))
        self.index = index

    def __repr__(self) -> str:
        return f"LocalVector({self.index!r})"
