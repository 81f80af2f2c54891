"""Event streams against an httpx.MockTransport: the first "OK" is consumed, an empty stream is a
clear StreamClosed, and the request asks for text/event-stream."""

from __future__ import annotations

import httpx
import pytest

from svckit.errors import StreamClosed
from svckit.kv import KV, AsyncKV


def sse(*payloads: str) -> bytes:
    return "".join(f"data: {p}\n\n" for p in payloads).encode()


def transport(body: bytes, seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    return httpx.MockTransport(handler)


def test_monitor_consumes_ok_and_parses_events() -> None:
    seen: list[httpx.Request] = []
    body = sse('"OK"', '1700000000.5 [0 10.0.0.1:4000] "GET" "k"', '1700000001.0 [0 lua] "INCR" "n"')
    with KV("http://127.0.0.1:1/kv", "t", transport=transport(body, seen)) as kv:
        events = list(kv.monitor())
    assert [(e.command, e.args) for e in events] == [("GET", ["k"]), ("INCR", ["n"])]
    assert seen[0].method == "POST" and seen[0].url.path == "/kv/monitor"
    assert seen[0].headers["accept"] == "text/event-stream"


def test_subscribe_path_is_percent_encoded() -> None:
    seen: list[httpx.Request] = []
    body = sse("subscribe,a/b c,1", "message,a/b c,hi")
    with KV("http://127.0.0.1:1/kv", "t", transport=transport(body, seen)) as kv:
        messages = list(kv.subscribe("a/b c"))
    assert seen[0].url.raw_path == b"/kv/subscribe/a%2Fb%20c"
    assert [(m.kind, m.channel, m.data) for m in messages] == [("subscribe", "a/b c", None), ("message", "a/b c", "hi")]


def test_a_stream_that_ends_at_once_is_stream_closed() -> None:
    with KV("http://127.0.0.1:1/kv", "t", transport=transport(b"", [])) as kv, \
            pytest.raises(StreamClosed, match="MONITOR"):
        kv.monitor()


async def test_async_streams_against_a_mock() -> None:
    seen: list[httpx.Request] = []
    body = sse('"OK"', '1700000000.5 [0 10.0.0.1:4000] "SET" "k" "v"')

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    async with AsyncKV("http://127.0.0.1:1/kv", "t", transport=httpx.MockTransport(handler)) as akv:
        events = [ev async for ev in akv.monitor()]
        assert [(e.command, e.args) for e in events] == [("SET", ["k", "v"])]

    async def empty(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"", headers={"content-type": "text/event-stream"})

    async with AsyncKV("http://127.0.0.1:1/kv", "t", transport=httpx.MockTransport(empty)) as akv:
        with pytest.raises(StreamClosed):
            async with akv.subscribe("c"):
                pass
