"""Clients of the key-value tests, over real HTTP against ``kv_sandbox`` (once per backend: real
redis-server and fakeredis), each on an empty database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from svckit.kv import KV, AsyncKV
from svckit.sandbox import Sandbox


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
