"""Fixtures for the key-value client tests: one sandbox per backend (real redis-server, fakeredis),
clients over real HTTP against it, and an empty database for each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from svckit.kv import KV, AsyncKV
from svckit.sandbox import Sandbox
from tests.conftest import require_binary

BACKENDS = ["redis", "fakeredis"]


@pytest.fixture(scope="session", params=BACKENDS)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "redis":
        require_binary("redis-server")
    with Sandbox(areas=["kv"], backend=request.param) as sb:
        yield sb


@pytest.fixture
def kv(sandbox: Sandbox) -> Iterator[KV[str]]:
    with KV.from_settings(sandbox.settings) as client:
        client.flushdb()
        yield client


@pytest.fixture
def kv_bytes(sandbox: Sandbox, kv: KV[str]) -> Iterator[KV[bytes]]:
    with KV.from_settings(sandbox.settings, decode=False) as client:
        yield client


@pytest.fixture
async def akv(sandbox: Sandbox) -> AsyncIterator[AsyncKV[str]]:
    async with AsyncKV.from_settings(sandbox.settings) as client:
        await client.flushdb()
        yield client
