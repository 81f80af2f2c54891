"""Area C of the sandbox: the developer management interface under ``/devapi/v2``, HTTP Basic auth.

Routes exactly as the spec's Endpoints C (the contract), and beside them the vendor's current developer
API paths that its CLI and tools call, for what the sandbox really holds:

- the queue account, by the spec's paths and the vendor's per-instance ones, and its usage as the
  vendor's API reads it (``GET /qstash/stats[/{id}]?period=``): :mod:`.queue`;
- the key-value database, the vector indexes and the search indexes, with their endpoints, tokens,
  limits and usage (``/redis/...``, ``/vector/index...``, ``/search...``): :mod:`.resources`.

State lives in the shared SQLite store (svckit/sandbox/store.py): the queue account record (created on
the free plan per data directory, ``customer_id`` = the devapi e-mail), a couple of seeded search
indexes, and the ids of the other resources. Error bodies are ``{"error": "..."}`` (docs/errors.md);
the HTTP pieces it shares with the queue area are in :mod:`svckit.sandbox.http`.

Sizes: request bodies are small JSON objects, capped at 64 KiB (``Sandbox(devapi_max_body_bytes=...)``;
413 beyond it, svckit/sandbox/limits.py); a search index name is at most ``MAX_NAME_LENGTH``
characters (400 beyond it), so what is stored stays small.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from svckit.sandbox.area import Area, Health, SandboxContext
from svckit.sandbox.auth import basic_check
from svckit.sandbox.devapi.queue import queue_routes
from svckit.sandbox.devapi.resources import resource_routes
from svckit.sandbox.http import ApiError, AuthGate, json_app, json_body, off_loop, required_string
from svckit.sandbox.store import Store

__all__ = ["MAX_NAME_LENGTH", "DevApiArea"]

#: the longest search index name rename stores (characters)
MAX_NAME_LENGTH = 256


class DevApiArea(Area):
    """Developer management interface: the account's resources, search index rename, the queue account."""

    prefix = "/devapi/v2"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.store = Store.acquire(ctx)
        self.store.ensure_queue_account(ctx.credentials.devapi_email)
        self.store.ensure_search_indexes()

    @property
    def max_body_bytes(self) -> int:
        return self.ctx.options.devapi_max_body_bytes

    def app(self) -> ASGIApp:
        store = self.store

        async def rename(request: Request) -> JSONResponse:
            index_id = request.path_params["id"]
            name = required_string(await json_body(request), "name")
            if len(name) > MAX_NAME_LENGTH:
                raise ApiError(400, f"name: must be at most {MAX_NAME_LENGTH} characters, got {len(name)}")
            if not await off_loop(store.rename_search_index, index_id, name):
                raise ApiError(404, f"search index {index_id!r} not found")
            return JSONResponse("OK")

        routes = [Route("/search/{id}/rename", rename, methods=["POST"]), *queue_routes(store),
                  *resource_routes(self)]
        creds = self.ctx.credentials
        return AuthGate(json_app(routes), basic_check(creds.devapi_email, creds.devapi_key),
                        'Basic realm="devapi"')

    async def holds(self) -> str:
        record = self.store.queue_account()
        plan = record.get("reserved_type") or record.get("type") or "free"
        others = sum(len(area.resource_records("")) for area in self.ctx.areas)  # the database, the vector indexes
        more = f" and {others} other resource{'s' * (others != 1)}" if others else ""
        return f"a queue account on the {plan} plan, {len(self.store.search_indexes())} search indexes{more}"

    async def health(self) -> list[Health]:
        return [await self.store.health()]

    def env(self, base_url: str) -> dict[str, str]:
        creds = self.ctx.credentials
        return {"SVC_DEVAPI_URL": f"{base_url}{self.prefix}", "SVC_DEVAPI_EMAIL": creds.devapi_email,
                "SVC_DEVAPI_KEY": creds.devapi_key}

    async def stop(self) -> None:
        self.store.release()
