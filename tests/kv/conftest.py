"""Clients of the key-value tests, over real HTTP against ``kv_sandbox`` (once per backend: real
redis-server and fakeredis), each on an empty database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

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
