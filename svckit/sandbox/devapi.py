"""Area C of the sandbox: the developer management interface under ``/devapi/v2``, HTTP Basic auth.

Routes exactly as the spec's Endpoints C. State lives in the shared SQLite store (svckit/sandbox/store.py):
the queue account record (created on the free plan per data directory, ``customer_id`` = the devapi
e-mail) and a couple of seeded search indexes. Error bodies are ``{"error": "..."}`` (docs/errors.md).

:class:`AuthGate` and :func:`error_response` are shared with the queue area (svckit/sandbox/queue.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from svckit.account.plans import UPGRADE_PLAN_NAMES
from svckit.sandbox.area import Area, SandboxContext
from svckit.sandbox.auth import basic_check
from svckit.sandbox.store import Store


class ApiError(Exception):
    """Raised by a handler to answer ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message
        super().__init__(message)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message)


async def _http_exception(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, str(exc.detail).lower() if exc.status_code in (404, 405) else
                          str(exc.detail), getattr(exc, "headers", None))


def json_app(routes: list[Route]) -> Starlette:
    """A Starlette app whose every error (ours, 404 and 405 from routing) is ``{"error": ...}``."""
    return Starlette(routes=routes, exception_handlers={ApiError: _api_error, HTTPException: _http_exception})


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


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
        raise ApiError(400, "request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    return body


def required_string(body: dict[str, Any], field: str) -> str:
    value = body.get(field)
    if value is None:
        raise ApiError(400, f"{field}: required")
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"{field}: must be a non-empty string")
    return value


class DevApiArea(Area):
    """Developer management interface: search index rename and the queue account."""

    prefix = "/devapi/v2"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.store = Store.acquire(ctx)
        self.store.ensure_queue_account(ctx.credentials.devapi_email)
        self.store.ensure_search_indexes()

    def app(self) -> ASGIApp:
        store = self.store

        async def rename(request: Request) -> JSONResponse:
            index_id = request.path_params["id"]
            name = required_string(await json_body(request), "name")
            if not await run_in_threadpool(store.rename_search_index, index_id, name):
                raise ApiError(404, f"search index {index_id!r} not found")
            return JSONResponse("OK")

        def queue_user(request: Request) -> JSONResponse:
            return JSONResponse(store.queue_account())

        def rotate(request: Request) -> JSONResponse:
            return JSONResponse(store.rotate_queue_credentials())

        async def upgrade(request: Request) -> JSONResponse:
            body = await json_body(request)
            customer_id = required_string(body, "customer_id")
            plan_name = required_string(body, "plan_name")
            if plan_name not in UPGRADE_PLAN_NAMES:
                raise ApiError(400, f"plan_name: must be one of {', '.join(UPGRADE_PLAN_NAMES)}")
            if not await run_in_threadpool(store.upgrade_plan, customer_id, plan_name):
                raise ApiError(404, f"no queue account for customer {customer_id!r}")
            return JSONResponse("OK")

        routes = [
            Route("/search/{id}/rename", rename, methods=["POST"]),
            Route("/queue/user", queue_user, methods=["GET"]),
            Route("/queue/user/rotatetoken", rotate, methods=["POST"]),
            Route("/queue-upgrade", upgrade, methods=["POST"]),
        ]
        creds = self.ctx.credentials
        return AuthGate(json_app(routes), basic_check(creds.devapi_email, creds.devapi_key),
                        'Basic realm="devapi"')

    def env(self, base_url: str) -> dict[str, str]:
        creds = self.ctx.credentials
        return {"SVC_DEVAPI_URL": f"{base_url}{self.prefix}", "SVC_DEVAPI_EMAIL": creds.devapi_email,
                "SVC_DEVAPI_KEY": creds.devapi_key}

    async def stop(self) -> None:
        self.store.release()
