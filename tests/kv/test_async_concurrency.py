"""AsyncKV with many requests in flight on the sandbox: every reply the one for its own request, over
svckit's HTTP/1.1 pool (svckit._http1) on http://, and every connection closed by ``close()``."""

from __future__ import annotations

import asyncio

import httpx

from svckit._http import AsyncTransport
from svckit._http1 import Http1Transport
from svckit.kv import AsyncKV
from svckit.sandbox import Sandbox


async def test_sequential_use_keeps_one_connection(akv: AsyncKV[str]) -> None:
    for i in range(20):
        assert await akv.set(f"seq:{i}", str(i)) is True
        assert await akv.get(f"seq:{i}") == str(i)
    pool = akv._transport._pool
    assert isinstance(pool, Http1Transport)
    assert [h.open for h in pool._hosts.values()] == [1]


async def test_many_in_flight_each_get_their_own_reply_and_close_ends_every_connection(kv_sandbox: Sandbox) -> None:
    env = kv_sandbox.env
    kv = AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"])

    async def one(i: int) -> str | None:
        assert await kv.set(f"conc:{i}", f"v{i}") is True
        return await kv.get(f"conc:{i}")

    pool = kv._transport._pool
    try:
        replies = await asyncio.gather(*(one(i) for i in range(200)))
        assert replies == [f"v{i}" for i in range(200)]
        (host,) = pool._hosts.values()
        assert 1 < host.open <= pool.max_connections and len(host.idle) == host.open  # none still busy
        conns = list(host.idle)
    finally:
        await kv.close()
    assert all(conn.transport.is_closing() for conn in conns)


async def test_a_given_transport_carries_every_request() -> None:
    seen: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        await asyncio.sleep(0.001)
        return httpx.Response(200, json={"result": "PONG"})

    transport = AsyncTransport("http://sandbox.invalid/kv", transport=httpx.MockTransport(handler))
    kv = AsyncKV("http://sandbox.invalid/kv", "t")
    kv._transport = transport
    try:
        assert await asyncio.gather(*(kv.execute("PING") for _ in range(32))) == ["PONG"] * 32
        assert len(seen) == 32 and transport._pool is None
    finally:
        await kv.close()
