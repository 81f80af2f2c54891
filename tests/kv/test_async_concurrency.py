"""AsyncKV with many requests in flight on the sandbox: every reply the one for its own request, over
svckit's aiohttp pool (svckit._pools.AsyncPool), and every connection closed by ``close()``."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from svckit._http import AsyncTransport
from svckit._pools import AsyncPool
from svckit.kv import AsyncKV
from svckit.sandbox import Sandbox
from tests.conftest import aeventually


def _connections(sandbox: Sandbox) -> set[object]:
    """The HTTP connections the sandbox's server holds open (uvicorn's own set). Tests compare sets,
    not counts: an earlier test's idle connection may close meanwhile."""
    assert sandbox._server is not None
    return set(sandbox._server.server_state.connections)


async def _closed(sandbox: Sandbox, connections: set[object]) -> bool:
    """Wait until the server has seen every one of ``connections`` close (a moment after the client)."""
    await aeventually(lambda: not connections & _connections(sandbox), "the server saw the connections close", 10)
    return True


async def test_sequential_use_keeps_one_connection(kv_sandbox: Sandbox) -> None:
    env = kv_sandbox.env
    before = _connections(kv_sandbox)
    kv = AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"])
    try:
        for i in range(20):
            assert await kv.set(f"seq:{i}", str(i)) is True
            assert await kv.get(f"seq:{i}") == str(i)
        assert isinstance(kv._http._pool, AsyncPool)
        assert len(_connections(kv_sandbox) - before) == 1  # 40 requests, one keep-alive connection
    finally:
        await kv.aclose()


@pytest.mark.timeout(60)
async def test_many_in_flight_each_get_their_own_reply_and_close_ends_every_connection(kv_sandbox: Sandbox) -> None:
    env = kv_sandbox.env
    before = _connections(kv_sandbox)
    kv = AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"])

    async def one(i: int) -> str | None:
        assert await kv.set(f"conc:{i}", f"v{i}") is True
        return await kv.get(f"conc:{i}")

    try:
        replies = await asyncio.gather(*(one(i) for i in range(200)))
        assert replies == [f"v{i}" for i in range(200)]
        opened = _connections(kv_sandbox) - before
        assert 1 < len(opened) <= kv._http._pool.max_connections
    finally:
        await kv.aclose()
    assert await _closed(kv_sandbox, opened)  # aclose() ended every connection it opened


async def test_a_given_transport_carries_every_request() -> None:
    seen: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        await asyncio.sleep(0.001)
        return httpx.Response(200, json={"result": "PONG"})

    given = httpx.MockTransport(handler)
    transport = AsyncTransport("http://sandbox.invalid/kv", transport=given)
    kv = AsyncKV("http://sandbox.invalid/kv", "t")
    kv._http = transport
    try:
        assert await asyncio.gather(*(kv.execute("PING") for _ in range(32))) == ["PONG"] * 32
        assert len(seen) == 32 and transport._pool is given
    finally:
        await kv.aclose()
