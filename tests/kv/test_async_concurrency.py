"""AsyncKV with many requests in flight: httpx pools opened as concurrency needs them (a few
requests per pool, see svckit._http.REQUESTS_PER_POOL), every reply the one for its own request,
and all of them closed by ``close()``."""

from __future__ import annotations

import asyncio

import httpx

from svckit._http import MAX_POOLS, AsyncTransport
from svckit.kv import AsyncKV
from svckit.sandbox import Sandbox


async def test_sequential_use_keeps_one_pool(akv: AsyncKV[str]) -> None:
    for i in range(20):
        assert await akv.set(f"seq:{i}", str(i)) is True
        assert await akv.get(f"seq:{i}") == str(i)
    assert len(akv._transport._clients) == 1


async def test_many_in_flight_spread_over_pools_and_every_reply_is_its_own(kv_sandbox: Sandbox) -> None:
    env = kv_sandbox.env
    kv = AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"])

    async def one(i: int) -> str | None:
        assert await kv.set(f"conc:{i}", f"v{i}") is True
        return await kv.get(f"conc:{i}")

    try:
        replies = await asyncio.gather(*(one(i) for i in range(200)))
        assert replies == [f"v{i}" for i in range(200)]
        clients = list(kv._transport._clients)
        assert 1 < len(clients) <= MAX_POOLS
        assert kv._transport._in_flight == [0] * len(clients)  # nothing counted as still sending
    finally:
        await kv.close()
    assert all(client.is_closed for client in clients)


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
        assert len(seen) == 32 and len(transport._clients) == 1
    finally:
        await kv.close()
