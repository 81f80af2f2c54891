"""Clients of the key-value tests, over real HTTP against ``kv_sandbox`` (once per backend: real
redis-server, fakeredis, and a Redis Cluster of three masters behind the gateway), each on an empty
database.

On the cluster a command naming keys of several slots is refused (CROSSSLOT), as Redis Cluster
refuses it: tests write their data with :func:`fill` (one SET per key), and a test of a multi-key
command gives its keys one hash tag (``{t}a``, ``{t}b``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis

from svckit.kv import KV, AsyncKV
from svckit.sandbox import Sandbox


def direct_redis(sandbox: Sandbox) -> redis.Redis | redis.RedisCluster | None:
    """A redis-py client of the Redis behind the gateway, to read what Redis itself stored (ground
    truth that does not go through svckit): on the cluster, redis-py's cluster client, which sends
    each key to its slot's master; None on fakeredis (it lives in the gateway's process)."""
    area = sandbox.area("kv")
    url = getattr(area, "redis_url", None)
    if not url:
        return None
    if area.backend_name == "redis-cluster":  # type: ignore[attr-defined]
        return redis.RedisCluster.from_url(url)
    return redis.Redis.from_url(url)


@pytest.fixture
def kv(kv_sandbox: Sandbox) -> Iterator[KV[str]]:
    with KV.from_settings(kv_sandbox.settings) as client:
        client.flushdb()
        yield client


@pytest.fixture
def kv_bytes(kv_sandbox: Sandbox, kv: KV[str]) -> Iterator[KV[bytes]]:
    with KV.from_settings(kv_sandbox.settings, decode=False) as client:
        yield client


@pytest.fixture
async def akv(kv_sandbox: Sandbox) -> AsyncIterator[AsyncKV[str]]:
    async with AsyncKV.from_settings(kv_sandbox.settings) as client:
        await client.flushdb()
        yield client


#: keys written per request by :func:`fill`
FILL_BATCH = 1000


def fill(kv: KV[Any], values: dict[str, Any]) -> None:
    """Write ``values`` with one SET per key, in pipelines of FILL_BATCH: MSET would name keys of
    many slots in one command, which a Redis Cluster refuses (CROSSSLOT)."""
    items = list(values.items())
    for start in range(0, len(items), FILL_BATCH):
        pipe = kv.pipeline()
        for key, value in items[start:start + FILL_BATCH]:
            pipe.set(key, value)
        pipe.exec()


async def afill(akv: AsyncKV[Any], values: dict[str, Any]) -> None:
    """:func:`fill` with the async client."""
    items = list(values.items())
    for start in range(0, len(items), FILL_BATCH):
        pipe = akv.pipeline()
        for key, value in items[start:start + FILL_BATCH]:
            pipe.set(key, value)
        await pipe.exec()
