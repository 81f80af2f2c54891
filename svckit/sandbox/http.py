"""HTTP pieces the sandbox's areas share: one error type, the exception handlers that turn it into each
area's error body, an authentication gate in front of every path, and JSON request-body reading.

:class:`ApiError` (status, message, headers) is raised wherever a request's handling finds an error;
the exception handlers of the area's app (:func:`error_handlers`) turn it, routing's own 404 and 405, and
a :class:`~svckit.errors.DiskError` from the store (507: the data directory's disk is full or read-only),
into that area's error body: ``{"error": message}`` (:func:`error_body`: the key-value gateway, the
developer API, the queue) or ``{"error": message, "status": status}`` (:func:`error_body_with_status`:
the vector area, and the sandbox's own answers). :class:`AuthGate` answers 401 before any route is
looked up, using a check from :mod:`svckit.sandbox.auth`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from svckit.errors import DiskError

T = TypeVar("T")


async def off_loop(fn: Callable[..., T], *args: Any, limiter: anyio.CapacityLimiter | None = None,
                   **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker thread, the event loop serving other requests meanwhile: the one
    way the sandbox runs blocking work (SQLite, the disk, an index's query) from a coroutine. On anyio's
    worker threads (at most 40 at once), as Starlette runs a sync endpoint; ``limiter`` bounds the threads
    of one kind of work instead (an index's queries)."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=limiter)


class ApiError(Exception):
    """An error answer: ``status``, ``message`` and ``headers`` (a 401's challenge, a 429's rate limit
    headers). Raised by an endpoint or anything it calls; its area's app answers it in that area's
    error body (:func:`error_handlers`)."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        self.status, self.message, self.headers = status, message, headers
        super().__init__(message)


#: an area's error body for a message and status (:meth:`svckit.sandbox.area.Area.error_body`)
ErrorBody = Callable[[str, int], Any]


def error_body(message: str, status: int) -> dict[str, Any]:
    """``{"error": message}``: the key-value gateway's, the developer API's and the queue's error body."""
    return {"error": message}


def error_body_with_status(message: str, status: int) -> dict[str, Any]:
    """``{"error": message, "status": status}``: the vector area's error body, and the sandbox's own."""
    return {"error": message, "status": status}


def error_reply(exc: ApiError, body: ErrorBody = error_body) -> JSONResponse:
    """``exc`` answered in the error body ``body`` makes."""
    return JSONResponse(body(exc.message, exc.status), status_code=exc.status, headers=exc.headers)


def error_handlers(body: ErrorBody = error_body, *, lower_routing: bool = False) -> dict[Any, Any]:
    """The ``exception_handlers`` of an app whose every error is ``body``: a :class:`ApiError`,
    routing's 404 and 405 (their detail in lower case with ``lower_routing``: the developer API and the
    queue say "not found"), and 507 for a write the disk refused."""
    async def service(request: Request, exc: ApiError) -> JSONResponse:
        return error_reply(exc, body)

    async def routing(request: Request, exc: HTTPException) -> JSONResponse:
        detail = str(exc.detail)
        if lower_routing and exc.status_code in (404, 405):
            detail = detail.lower()
        return error_reply(ApiError(exc.status_code, detail, exc.headers), body)

    async def disk(request: Request, exc: DiskError) -> JSONResponse:
        return error_reply(ApiError(exc.status, str(exc)), body)

    return {ApiError: service, HTTPException: routing, DiskError: disk}


def json_app(routes: Sequence[BaseRoute]) -> Starlette:
    """The app of the developer API and the queue: every error is ``{"error": ...}``."""
    return Starlette(routes=routes, exception_handlers=error_handlers(lower_routing=True))


class AuthGate:
    """ASGI middleware: every request (any path, even an unknown one) must pass ``check(header)`` first,
    else 401 ``{"error": ...}``. ``check`` returns None when the Authorization header is accepted,
    or the reason it is not."""

    def __init__(self, app: ASGIApp, check: Callable[[str | None], str | None], challenge: str) -> None:
        self.app, self.check, self.challenge = app, check, challenge

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = None
            for name, value in scope["headers"]:
                if name == b"authorization":
                    header = value.decode("latin-1")
                    break
            reason = self.check(header)
            if reason is not None:
                await error_reply(ApiError(401, reason, {"WWW-Authenticate": self.challenge}))(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def json_body(request: Request, *, optional: bool = False) -> dict[str, Any]:
    """The request's JSON object; 400 when the body is not valid JSON or not an object (an empty body
    is ``{}`` when the body is ``optional``)."""
    raw = await request.body()
    if optional and not raw.strip():
        return {}
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
        raise ApiError(400, "request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def lower_headers(request: Request) -> dict[str, str]:
    """The request's headers by lower-case name."""
    return {k.lower(): v for k, v in request.headers.items()}


def path_tail(request: Request, marker: str) -> str:
    """What follows ``marker`` in the request's path, as sent (not percent-decoded): a destination URL
    in the path keeps its own escapes."""
    path = (request.scope.get("raw_path") or request.scope["path"].encode()).decode("latin-1")
    return path[path.index(marker) + len(marker):]


def required_string(body: dict[str, Any], field: str) -> str:
    """``body[field]`` as a non-empty string; 400 naming the field otherwise."""
    value = body.get(field)
    if value is None:
        raise ApiError(400, f"{field}: required")
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"{field}: must be a non-empty string")
    return value
