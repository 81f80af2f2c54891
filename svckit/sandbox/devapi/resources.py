"""What the account holds, as the vendor's developer API lists it: the key-value database
(``/redis/...``), the vector indexes (``/vector/index...``) and the search indexes (``/search...``).

Each area describes its own resources (:meth:`svckit.sandbox.area.Area.resource_records`: endpoint, tokens,
the limits it enforces) and measures them (:meth:`~svckit.sandbox.area.Area.resource_stats`); this
module adds what the account knows (the id and creation time kept in the store's meta table, so the same
after a restart; the owner; region "local", plan "free") and writes the vendor's stats objects. An area
the sandbox does not run lists nothing; an id nothing lists is a 404.

An ``endpoint`` is the whole REST URL, built from the origin the request came to (its scheme and Host
header): the sandbox's areas share one host under path prefixes, where each of the vendor's resources
has a host of its own.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from svckit.sandbox.delivery.stats import DEFAULT_PERIOD, PERIODS, vendor_time
from svckit.sandbox.http import ApiError, off_loop

if TYPE_CHECKING:
    from svckit.sandbox.area import Area
    from svckit.sandbox.devapi import DevApiArea

#: kind -> (the id field, the name field) of its records
ID_FIELDS = {"redis": ("database_id", "database_name"), "vector": ("id", "name")}
#: the record fields that carry a credential (``?credentials=hide`` leaves them out)
TOKEN_FIELDS = ("rest_token", "read_only_rest_token", "token", "read_only_token", "password")
#: the vendor's search index limits; the sandbox enforces none (it serves no search data API)
SEARCH_LIMITS = ("max_vector_count", "max_daily_queries", "max_daily_updates", "max_writes_per_second",
                 "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
                 "max_total_metadata_size")


def origin(request: Request) -> str:
    """``scheme://host[:port]`` the request came to (its Host header, which hosts.py has checked)."""
    return f"{request.url.scheme}://{request.url.netloc}"


def _point(ms: int, y: Any) -> dict[str, Any]:
    return {"x": vendor_time(ms), "y": y}


def _today() -> tuple[int, str]:
    """(today 00:00 UTC in ms, today's day name)."""
    midnight = dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return int(midnight.timestamp() * 1000), f"{midnight:%A}"


def database_stats(raw: dict[str, Any]) -> dict[str, Any]:
    """The vendor's ``DatabaseStats`` of what the key-value area measured (one point each: no history)."""
    midnight, day = _today()
    now = time.time_ns() // 1_000_000
    return {"daily_net_commands": raw["commands_today"], "current_storage": raw["storage_bytes"],
            "keyspace": [_point(now, raw["keys"])], "dailyrequests": [_point(midnight, raw["commands_today"])],
            "days": [day]}


def vector_stats(raw: dict[str, Any]) -> dict[str, Any]:
    """The vendor's vector index stats of what the vector area measured (one point: no history)."""
    _, day = _today()
    return {"current_vector_count": raw["vectors"], "pending_index_count": raw["pending"],
            "daily_query_count": raw["queries_today"], "daily_update_count": raw["updates_today"],
            "storage_usage": raw["storage_bytes"], "vector_count": [_point(time.time_ns() // 1_000_000, raw["vectors"])],
            "days": [day]}


def check_period(request: Request) -> None:
    period = request.query_params.get("period", DEFAULT_PERIOD)
    if period not in PERIODS:
        raise ApiError(400, f"period: must be one of {', '.join(PERIODS)}, got {period!r}")


def resource_routes(devapi: DevApiArea) -> list[Route]:
    store = devapi.store
    customer = devapi.ctx.credentials.devapi_email

    def area_of(kind: str) -> Area | None:
        return next((area for area in devapi.ctx.areas if area.resource_kind == kind), None)

    async def listed(kind: str, request: Request) -> list[tuple[str, dict[str, Any]]]:
        """(name, record) of every resource of ``kind`` the sandbox runs."""
        area = area_of(kind)
        if area is None:
            return []
        described = area.resource_records(origin(request))
        identities = await off_loop(lambda: {name: store.resource_identity(kind, name) for name in described})
        id_field, name_field = ID_FIELDS[kind]
        return [(name, {id_field: identities[name]["id"], name_field: name, "region": "local", "type": "free",
                        "creation_time": identities[name]["creation_time"], "customer_id": customer, **fields})
                for name, fields in described.items()]

    async def one(kind: str, request: Request) -> tuple[str, dict[str, Any]]:
        wanted = request.path_params["id"]
        id_field = ID_FIELDS[kind][0]
        for name, record in await listed(kind, request):
            if record[id_field] == wanted:
                return name, record
        what = "database" if kind == "redis" else "vector index"
        raise ApiError(404, f"{what} {wanted!r} not found")

    async def measured(kind: str, name: str) -> dict[str, Any]:
        area = area_of(kind)
        assert area is not None  # the name was just listed by it
        return await area.resource_stats(name)

    # -- key-value -----------------------------------------------------------------------------
    async def databases(request: Request) -> JSONResponse:
        return JSONResponse([record for _, record in await listed("redis", request)])

    async def database(request: Request) -> JSONResponse:
        _, record = await one("redis", request)
        if request.query_params.get("credentials") == "hide":
            record = {k: v for k, v in record.items() if k not in TOKEN_FIELDS}
        return JSONResponse(record)

    async def db_stats(request: Request) -> JSONResponse:
        name, _ = await one("redis", request)
        return JSONResponse(database_stats(await measured("redis", name)))

    # -- vector --------------------------------------------------------------------------------
    async def indexes(request: Request) -> JSONResponse:
        return JSONResponse([record for _, record in await listed("vector", request)])

    async def index(request: Request) -> JSONResponse:
        return JSONResponse((await one("vector", request))[1])

    async def index_stats(request: Request) -> JSONResponse:
        check_period(request)
        name, _ = await one("vector", request)
        return JSONResponse(vector_stats(await measured("vector", name)))

    async def all_index_stats(request: Request) -> JSONResponse:
        check_period(request)
        each = [await measured("vector", name) for name, _ in await listed("vector", request)]
        return JSONResponse({"record_count": sum(s["vectors"] for s in each),
                             "request": sum(s["queries_today"] + s["updates_today"] for s in each),
                             "storage": sum(s["storage_bytes"] for s in each),
                             "bandwidth": 0, "billing": 0.0, "rerank_count": 0})

    # -- search (the names are the account's; the sandbox serves no search data API) ------------
    def search_record(row: dict[str, Any]) -> dict[str, Any]:
        return {"id": row["id"], "name": row["name"], "type": "free", "region": "local", "endpoint": "",
                "token": "", "read_only_token": "", "creation_time": row["creation_time"], "customer_id": customer,
                **dict.fromkeys(SEARCH_LIMITS, -1)}

    def search_indexes(request: Request) -> JSONResponse:
        return JSONResponse([search_record(row) for row in store.search_index_records()])

    def search_row(request: Request) -> dict[str, Any]:
        wanted = request.path_params["id"]
        for row in store.search_index_records():
            if row["id"] == wanted:
                return row
        raise ApiError(404, f"search index {wanted!r} not found")

    def search_index(request: Request) -> JSONResponse:
        return JSONResponse(search_record(search_row(request)))

    # nothing is stored in or asked of a search index here, so its usage is zeros (not a 404: the
    # vendor's CLI reads these as any account's)
    def search_stats(request: Request) -> JSONResponse:
        check_period(request)
        return JSONResponse({"record_count": 0, "request": 0, "storage": 0, "bandwidth": 0, "billing": 0.0,
                             "rerank_count": 0})

    def search_index_stats(request: Request) -> JSONResponse:
        check_period(request)
        search_row(request)
        return JSONResponse(vector_stats({"vectors": 0, "pending": 0, "queries_today": 0, "updates_today": 0,
                                          "storage_bytes": 0}))

    return [
        Route("/redis/databases", databases, methods=["GET"]),
        Route("/redis/database/{id}", database, methods=["GET"]),
        Route("/redis/stats/{id}", db_stats, methods=["GET"]),
        Route("/vector/index", indexes, methods=["GET"]),
        Route("/vector/index/stats", all_index_stats, methods=["GET"]),
        Route("/vector/index/{id}", index, methods=["GET"]),
        Route("/vector/index/{id}/stats", index_stats, methods=["GET"]),
        Route("/search", search_indexes, methods=["GET"]),
        Route("/search/stats", search_stats, methods=["GET"]),
        Route("/search/{id}", search_index, methods=["GET"]),
        Route("/search/{id}/stats", search_index_stats, methods=["GET"]),
    ]
