"""The vector data API's operations over a :class:`LocalIndex`, as the service answers them: one table
from operation name to handler, and the HTTP status each local error stands for. The sandbox serves
this table over HTTP; :class:`svckit.localindex.client.LocalVector` calls it in process. The
operations that judge a filter take ``cancel`` (set when the client has gone: the work stops, with
:class:`~svckit.localindex.limits.Cancelled`).
"""

from __future__ import annotations

from typing import Any

from svckit._progress import Cancel
from svckit.errors import DiskError, EmbeddingModelMissing, InvalidRequest
from svckit.localindex.index import LocalIndex
from svckit.localindex.request import parse_delete, parse_fetch


def _fetch(index: LocalIndex, body: Any, namespace: str) -> Any:
    key, value, inc = parse_fetch(body)
    return index.fetch(None if key == "prefix" else value, namespace, prefix=value if key == "prefix" else None,
                       include_metadata=inc.metadata, include_vectors=inc.vectors, include_data=inc.data)


def _delete(index: LocalIndex, body: Any, namespace: str, cancel: Cancel) -> Any:
    key, value = parse_delete(body)
    return {"deleted": index.delete(**{key: value}, namespace=namespace, cancel=cancel)}


def _success(_done: object) -> str:
    """The reply of operations that answer the string "Success" once the call (the argument) is done."""
    return "Success"


#: operation -> (index, body, namespace, query params, cancel=None) -> result (``info`` is answered
#: by ``index.info()``)
OPERATIONS: dict[str, Any] = {
    "query-data": lambda ix, body, ns, q, cancel=None: ix.query(body, ns, cancel=cancel),
    "query": lambda ix, body, ns, q, cancel=None: ix.query(body, ns, text=False, cancel=cancel),
    "resumable-query-data": lambda ix, body, ns, q, cancel=None: ix.resumable_start(body, ns, cancel=cancel),
    "resumable-query": lambda ix, body, ns, q, cancel=None: ix.resumable_start(body, ns, text=False, cancel=cancel),
    "resumable-query-next": lambda ix, body, ns, q, cancel=None: ix.resumable_next(body),
    "resumable-query-end": lambda ix, body, ns, q, cancel=None: _success(ix.resumable_end(body)),
    "upsert-data": lambda ix, body, ns, q, cancel=None: _success(ix.upsert_data(body, ns)),
    "upsert": lambda ix, body, ns, q, cancel=None: _success(ix.upsert(body, ns)),
    "fetch": lambda ix, body, ns, q, cancel=None: _fetch(ix, body, ns),
    "range": lambda ix, body, ns, q, cancel=None: ix.range(body, ns),
    "delete": lambda ix, body, ns, q, cancel=None: _delete(ix, body, ns, cancel),
    "update": lambda ix, body, ns, q, cancel=None: ix.update(body, ns),
    "reset": lambda ix, body, ns, q, cancel=None: _success(ix.reset(ns, all="all" in q)),
    "list-namespaces": lambda ix, body, ns, q, cancel=None: ix.namespaces(),
    "delete-namespace": lambda ix, body, ns, q, cancel=None: _success(ix.delete_namespace(ns)),
}


def error_status(exc: Exception) -> int | None:
    """The HTTP status the service answers for a local index error (422: no embedding model; 400: a
    refused request or filter; 404: an unknown name; 507: a write the disk refused), or None for an
    error that is a bug."""
    if isinstance(exc, EmbeddingModelMissing):
        return 422
    if isinstance(exc, (InvalidRequest, DiskError)):
        return exc.status
    if isinstance(exc, ValueError):  # FilterSyntaxError and the index's own refusals
        return 400
    return None
