"""Replies of the developer API's resource paths, shaped as the sandbox writes them (issue 45's wire
format), for tests of the account client that need a service answering exactly so: which path
fails, how many requests are in flight at once. ``Replies.transport()`` serves them through httpx's
MockTransport; ``missing`` makes paths answer 404 (a service without them)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

import httpx

EMAIL = "dev@example.com"
DB_TOKEN = "AXkvREST-standard-token-0001"
DB_RO_TOKEN = "AXkvREST-read-only-token-0002"
VECTOR_TOKEN = "vector-bearer-token-0003"
QUEUE_TOKEN = "queue-bearer-token-00000004"
QUEUE_PASSWORD = "queue-password-0000000005"
SECRETS = (DB_TOKEN, DB_RO_TOKEN, VECTOR_TOKEN, QUEUE_TOKEN, QUEUE_PASSWORD)
NOW = "2026-12-06 16:00:00.000 +0000 UTC"
TODAY = "2026-12-06"


def database(origin: str = "http://127.0.0.1:8123") -> dict[str, Any]:
    return {
        "database_id": "9b8a7c6d-0000-4000-8000-00000000d001", "database_name": "sandbox", "region": "local",
        "primary_region": "local", "port": 8123, "tls": False, "state": "active", "type": "free",
        "endpoint": f"{origin}/kv", "rest_token": DB_TOKEN, "read_only_rest_token": DB_RO_TOKEN,
        "creation_time": 1_764_000_000, "customer_id": EMAIL, "eviction": False,
        "db_max_request_size": 1_048_576, "db_request_limit": 10_000, "db_max_entry_size": -1,
        "db_memory_threshold": -1, "db_disk_threshold": 268_435_456, "db_max_clients": -1,
        "db_max_commands_per_second": -1,
    }


def vector_index(name: str, kind: str, n: int, origin: str = "http://127.0.0.1:8123") -> dict[str, Any]:
    record = {
        "id": f"9b8a7c6d-0000-4000-8000-00000000v00{n}", "name": name, "similarity_function": "COSINE",
        "dimension_count": 384 if kind != "SPARSE" else 0, "index_type": kind, "endpoint": f"{origin}/vector/{name}",
        "token": VECTOR_TOKEN, "read_only_token": "", "type": "free", "region": "local",
        "creation_time": 1_764_000_000 + n, "customer_id": EMAIL, "max_vector_count": 10_000,
        "max_daily_queries": -1, "max_daily_updates": -1, "max_writes_per_second": -1,
        "max_query_per_second": -1, "max_reads_per_request": 1000, "max_writes_per_request": -1,
        "max_total_metadata_size": -1,
    }
    if kind in ("DENSE", "HYBRID") and name != "nomodel":
        record["embedding_model"] = "all-MiniLM-L6-v2"
    if kind in ("SPARSE", "HYBRID"):
        record["sparse_embedding_model"] = "BM25"
    return record


def search_index() -> dict[str, Any]:
    return {"id": "search-1", "name": "docs", "type": "free", "region": "local", "endpoint": "", "token": "",
            "read_only_token": "", "creation_time": 1_764_000_100, "customer_id": EMAIL, "max_vector_count": -1}


def queue_account() -> dict[str, Any]:
    limits = {
        "max_message_size": 1_048_576, "max_requests_per_day": 500, "max_requests_per_day_hard": 500,
        "max_endpoints_per_topic": 100, "max_requests_per_second": 100, "max_dlq_size": 1000, "max_retries": 3,
        "max_topics": 10, "max_schedules": 10, "max_events_size": 1000, "max_dlq_retention_time_milis": 604_800_000,
        "max_delay": 604_800, "max_parallelism": 10, "max_global_parallelism": 10, "max_queues": 10,
        "prod_pack_enabled": False, "timeout": 900,
    }
    return {"customer_id": EMAIL, "id": "queue-account-1", "password": QUEUE_PASSWORD, "token": QUEUE_TOKEN,
            "active": True, "state": "active", "last_plan_upgrade_time": 0, **limits, "type": "free",
            "reserved_type": "", "reserved_price": 0.0, "created_by": EMAIL, "creation_time": 1_764_000_000}


def database_stats() -> dict[str, Any]:
    return {"daily_net_commands": 42, "current_storage": 1_398_101, "keyspace": [{"x": NOW, "y": 17}],
            "dailyrequests": [{"x": "2026-12-06 00:00:00.000 +0000 UTC", "y": 42}], "days": ["Sunday"]}


def vector_stats(n: int) -> dict[str, Any]:
    return {"current_vector_count": 100 * n, "pending_index_count": 0, "daily_query_count": 5 * n,
            "daily_update_count": n, "storage_usage": 4096 * n, "vector_count": [{"x": NOW, "y": 100 * n}],
            "days": ["Sunday"]}


def queue_stats() -> dict[str, Any]:
    return {"days": [TODAY], "daily_requests": [{"x": f"{TODAY} 00:00:00.000 +0000 UTC", "y": 12}],
            "dlq_message_count": 3, "daily_qstash_messages": [], "total_monthly_billing": 0.0}


VECTORS = [("dense", "DENSE", 1), ("sparse", "SPARSE", 2), ("hybrid", "HYBRID", 3), ("nomodel", "DENSE", 4)]


class Replies:
    """The devapi's resource paths over MockTransport. ``missing``: path prefixes that answer 404;
    ``waves``: sizes of the groups of requests that must be in flight at once (each request waits
    at a barrier until its whole group has arrived, so requests sent one after another break it)."""

    def __init__(self, missing: Iterable[str] = (), waves: Iterable[int] = ()) -> None:
        self.missing = tuple(missing)
        self.paths: list[str] = []
        self.waves = list(waves)
        self._lock = threading.Lock()
        self._barriers: list[Any] = []

    def routes(self) -> dict[str, Any]:
        routes: dict[str, Any] = {
            "/redis/databases": [database()], "/vector/index": [vector_index(*v) for v in VECTORS],
            "/search": [search_index()], "/qstash/users": [queue_account()], "/queue/user": queue_account(),
            "/qstash/stats": queue_stats(), f"/qstash/stats/{queue_account()['id']}": queue_stats(),
            f"/qstash/user/{queue_account()['id']}": queue_account(),
            f"/redis/database/{database()['database_id']}": database(),
            f"/redis/stats/{database()['database_id']}": database_stats(),
        }
        for name, kind, n in VECTORS:
            record = vector_index(name, kind, n)
            routes[f"/vector/index/{record['id']}"] = record
            routes[f"/vector/index/{record['id']}/stats"] = vector_stats(n)
        return routes

    def reply(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/devapi/v2")
        routes = self.routes()
        if any(path.startswith(prefix) for prefix in self.missing) or path not in routes:
            return httpx.Response(404, json={"error": "not found"})
        body = routes[path]
        if path.startswith("/redis/database/") and request.url.params.get("credentials") == "hide":
            body = {k: v for k, v in body.items() if k not in ("rest_token", "read_only_rest_token")}
        return httpx.Response(200, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    def _arrive(self, request: httpx.Request, factory: Callable[[int], Any]) -> Any:
        """Note the request; the barrier of its group, if it has one."""
        with self._lock:
            self.paths.append(request.url.path.removeprefix("/devapi/v2"))
            arrived = len(self.paths)
            total = 0
            for index, size in enumerate(self.waves):
                total += size
                if arrived <= total:
                    while len(self._barriers) <= index:
                        self._barriers.append(factory(self.waves[len(self._barriers)]))
                    return self._barriers[index]
            return None

    def transport(self) -> httpx.MockTransport:
        def handler(request: httpx.Request) -> httpx.Response:
            barrier = self._arrive(request, threading.Barrier)
            if barrier is not None:
                barrier.wait(timeout=10)  # BrokenBarrierError: the group was not in flight at once
            return self.reply(request)

        return httpx.MockTransport(handler)

    def async_transport(self) -> httpx.MockTransport:
        async def handler(request: httpx.Request) -> httpx.Response:
            barrier = self._arrive(request, asyncio.Barrier)
            if barrier is not None:
                async with asyncio.timeout(10):
                    await barrier.wait()
            return self.reply(request)

        return httpx.MockTransport(handler)


class Waves:
    """Real HTTP with the same proof as :class:`Replies`: each request waits at its group's barrier
    before it is sent, so a group of ``waves`` sizes must be in flight at once. ``paths`` lists the
    devapi paths asked, in order of arrival."""

    def __init__(self, waves: Iterable[int]) -> None:
        self.paths: list[str] = []
        self._gate = Replies(waves=waves)
        self.paths = self._gate.paths

    def transport(self) -> httpx.BaseTransport:
        gate, inner = self._gate, httpx.HTTPTransport()

        class Gated(httpx.BaseTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                barrier = gate._arrive(request, threading.Barrier)
                if barrier is not None:
                    barrier.wait(timeout=10)
                return inner.handle_request(request)

            def close(self) -> None:
                inner.close()

        return Gated()

    def async_transport(self) -> httpx.AsyncBaseTransport:
        gate, inner = self._gate, httpx.AsyncHTTPTransport()

        class Gated(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                barrier = gate._arrive(request, asyncio.Barrier)
                if barrier is not None:
                    async with asyncio.timeout(10):
                        await barrier.wait()
                return await inner.handle_async_request(request)

            async def aclose(self) -> None:
                await inner.aclose()

        return Gated()
