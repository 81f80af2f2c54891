"""HTTP pieces the sandbox's JSON areas share (the developer management API and the queue):
``{"error": ...}`` bodies for every failure, an authentication gate in front of every path, and
JSON request-body reading.

:class:`ApiError` is raised by a handler to answer with an error status; :func:`json_app` turns it,
routing's own 404 and 405, and a :class:`~svckit.errors.DiskError` from the store (507: the data
directory's disk is full or read-only), into ``{"error": message}``; :class:`AuthGate` answers 401 before
any route is looked up, using a check from :mod:`svckit.sandbox.auth`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from svckit.errors import DiskError


class ApiError(Exception):
    """Raised by a handler to answer ``{"error": message}`` with ``status`` (and ``headers``: a 429's
    rate limit headers)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self.status, self.message, self.headers = status, message, headers
        super().__init__(message)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.message, exc.headers)


async def _disk_error(request: Request, exc: DiskError) -> JSONResponse:
    return error_response(exc.status, str(exc))


async def _http_exception(request: Request, exc: HTTPException) -> JSONResponse:
    return error_response(exc.status_code, str(exc.detail).lower() if exc.status_code in (404, 405) else
                          str(exc.detail), getattr(exc, "headers", None))


def json_app(routes: list[Route]) -> Starlette:
    """A Starlette app whose every error (ours, 404 and 405 from routing, 507 for a write the disk
    refused) is ``{"error": ...}``."""
    handlers: dict[Any, Callable[[Request, Any], Any]] = {ApiError: _api_error, HTTPException: _http_exception,
                                                          DiskError: _disk_error}
    return Starlette(routes=routes, exception_handlers=handlers)


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
                await error_response(401, reason, {"WWW-Authenticate": self.challenge})(scope, receive, send)
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
