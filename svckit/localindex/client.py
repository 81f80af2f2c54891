"""The client side of the local index: :class:`LocalVector`, a :class:`~svckit.vector.Vector` client
over a :class:`~svckit.localindex.LocalIndex` in this process.

``LocalVector(index)`` is the same client as the remote one: every method, argument, check, model and
error is :class:`Vector`'s, because only the transport differs. :class:`LocalTransport` answers each
request with the sandbox's operation table (:mod:`svckit.localindex.dispatch`) instead of sending it,
so a refused filter is a ``BadRequest`` and an index without a model an ``EmbeddingModelRequired``,
exactly as from the service.

This module is the one seam between the clients and the local index: the clients reach it only
through ``svckit.vector.LocalVector`` (imported on first use by the package's ``__getattr__``), and
nothing else in ``svckit.localindex`` imports a client.

>>> from svckit.vector import LocalVector                             # doctest: +SKIP
>>> local = LocalVector.from_items(load_demo_corpus(), kind="hybrid")   # doctest: +SKIP
>>> local.query_data("read a JSON file", top_k=3)                     # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

import httpx

from svckit._http import RetryPolicy
from svckit.core.explain import Explanation
from svckit.localindex.dispatch import OPERATIONS, error_status
from svckit.localindex.explain import explain
from svckit.localindex.index import LocalIndex
from svckit.vector.client import Vector
from svckit.vector.models import QueryOptions

#: the base URL of a local client: requests never leave the process (the transport answers them)
LOCAL_URL = "http://127.0.0.1/local-index"


class LocalTransport(httpx.BaseTransport):
    """Answers the vector data API's requests from a LocalIndex, with the service's status codes and
    ``{"result"}`` / ``{"error", "status"}`` bodies."""

    def __init__(self, index: Any) -> None:
        self.index = index

    def handle_request(self, request: httpx.Request) -> httpx.Response:
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

    @classmethod
    def from_items(cls, items: Sequence[Any], *, kind: str = "hybrid", namespace: str = "") -> LocalVector:
        """A client over a new ``kind`` index holding ``items`` (``{"id", "data", "metadata"}`` dicts)."""
        index = LocalIndex(kind=kind)
        index.upsert_data(items, namespace=namespace)
        return cls(index)

    @property
    def kind(self) -> str:
        """dense, sparse or hybrid: the index's kind (no request needed)."""
        return str(self.index.kind)

    def explain_query(self, text: str, options: QueryOptions) -> Explanation:
        """Explain the hits of ``text`` from the index's own state (see :mod:`svckit.localindex.explain`)."""
        return explain(self.index, text, top_k=options.top_k, namespace=options.namespace, filter=options.filter,
                       weighting_strategy=options.weighting_strategy, fusion_algorithm=options.fusion_algorithm,
                       query_mode=options.query_mode)

    def __repr__(self) -> str:
        return f"LocalVector({self.index!r})"


__all__ = ["LOCAL_URL", "LocalTransport", "LocalVector"]
