"""Area C of the sandbox: the developer management interface under ``/devapi/v2``, HTTP Basic auth.

Routes exactly as the spec's Endpoints C, and the queue account's usage as the vendor's developer API
reads it (``GET /qstash/stats?period=``, :mod:`svckit.sandbox.delivery.stats`). State lives in the shared SQLite store (svckit/sandbox/store.py):
the queue account record (created on the free plan per data directory, ``customer_id`` = the devapi
e-mail) and a couple of seeded search indexes. Error bodies are ``{"error": "..."}`` (docs/errors.md).

The HTTP pieces it shares with the queue area (error bodies, the auth gate, JSON bodies) are in
:mod:`svckit.sandbox.http`.

Sizes: request bodies are small JSON objects, capped at 64 KiB (``Sandbox(devapi_max_body_bytes=...)``;
413 beyond it, svckit/sandbox/limits.py); a search index name is at most ``MAX_NAME_LENGTH``
characters (400 beyond it), so what is stored stays small.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from svckit.account.plans import UPGRADE_PLAN_NAMES
from svckit.sandbox.area import Area, Health, SandboxContext
from svckit.sandbox.auth import basic_check
from svckit.sandbox.delivery.stats import DEFAULT_PERIOD, queue_stats
from svckit.sandbox.http import ApiError, AuthGate, json_app, json_body, required_string
from svckit.sandbox.store import Store, now_ms

#: the longest search index name rename stores (characters)
MAX_NAME_LENGTH = 256


class DevApiArea(Area):
    """Developer management interface: search index rename and the queue account."""

    prefix = "/devapi/v2"
    default_max_body_bytes = 64 * 1024

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
            if len(name) > MAX_NAME_LENGTH:
                raise ApiError(400, f"name: must be at most {MAX_NAME_LENGTH} characters, got {len(name)}")
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

        async def stats(request: Request) -> JSONResponse:
            period = request.query_params.get("period", DEFAULT_PERIOD)
            try:
                return JSONResponse(await run_in_threadpool(queue_stats, store.query, period, now_ms()))
            except ValueError as exc:
                raise ApiError(400, str(exc)) from None

        routes = [
            Route("/search/{id}/rename", rename, methods=["POST"]),
            Route("/queue/user", queue_user, methods=["GET"]),
            Route("/queue/user/rotatetoken", rotate, methods=["POST"]),
            Route("/queue-upgrade", upgrade, methods=["POST"]),
            Route("/qstash/stats", stats, methods=["GET"]),
        ]
        creds = self.ctx.credentials
        return AuthGate(json_app(routes), basic_check(creds.devapi_email, creds.devapi_key),
                        'Basic realm="devapi"')

    async def holds(self) -> str:
        record = self.store.queue_account()
        plan = record.get("reserved_type") or record.get("type") or "free"
        return f"a queue account on the {plan} plan, {len(self.store.search_indexes())} search indexes"

    async def health(self) -> list[Health]:
        return [await self.store.health()]

    def env(self, base_url: str) -> dict[str, str]:
        creds = self.ctx.credentials
        return {"SVC_DEVAPI_URL": f"{base_url}{self.prefix}", "SVC_DEVAPI_EMAIL": creds.devapi_email,
                "SVC_DEVAPI_KEY": creds.devapi_key}

    async def stop(self) -> None:
        self.store.release()
