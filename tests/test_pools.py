"""svckit's connection pools (svckit._pools: ``AsyncPool`` on aiohttp, ``SyncPool`` on urllib3) under
httpx clients, against a scripted loopback server: keep-alive reuse, the connection limit, cancellation,
successive event loops, and which pool svckit's transports choose. What HTTP/1.1 asks of every
path (framing, 1xx, broken replies, timeouts, proxies) is in test_transport_conformance.py.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import warnings
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from svckit._http import ApiRequest, AsyncTransport, SyncTransport
from svckit._pools import AsyncPool, ReadWhole, ReplyTooLarge, SyncPool, _response, env_proxy
from svckit.errors import RequestTimeout
from tests.conftest import aeventually, eventually
from tests.faults import FaultServer
from tests.scripted import OK, Scripted


class SyncCaller:
    """Requests through ``httpx.Client`` on SyncPool; ``many`` sends them from threads."""

    def __init__(self, **pool: Any) -> None:
        self.client = httpx.Client(transport=SyncPool(**pool), timeout=httpx.Timeout(2.0))

    def __call__(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.request(method, url, **kwargs)

    def many(self, calls: list[tuple[str, str, dict[str, Any]]]) -> list[httpx.Response]:
        with ThreadPoolExecutor(16) as pool:
            return list(pool.map(lambda c: self(c[0], c[1], **c[2]), calls))

    def close(self) -> None:
        self.client.close()


class AsyncCaller:
    """Requests through ``httpx.AsyncClient`` on AsyncPool; ``many`` sends them concurrently."""

    def __init__(self, **pool: Any) -> None:
        self.runner = asyncio.Runner()
        self.client = httpx.AsyncClient(transport=AsyncPool(**pool), timeout=httpx.Timeout(2.0))

    def __call__(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.runner.run(self.client.request(method, url, **kwargs))

    def many(self, calls: list[tuple[str, str, dict[str, Any]]]) -> list[httpx.Response]:
        async def all_of() -> list[httpx.Response]:
            return await asyncio.gather(*(self.client.request(m, u, **kw) for m, u, kw in calls))
        return self.runner.run(all_of())

    def close(self) -> None:
        self.runner.run(self.client.aclose())
        self.runner.close()


@pytest.fixture(params=["sync", "async"])
def make(request: pytest.FixtureRequest) -> Iterator[Any]:
    made: list[SyncCaller | AsyncCaller] = []

    def factory(**pool: Any) -> SyncCaller | AsyncCaller:
        made.append((SyncCaller if request.param == "sync" else AsyncCaller)(**pool))
        return made[-1]

    yield factory
    for caller in made:
        caller.close()


def test_sequential_requests_reuse_one_keep_alive_connection(srv: Scripted, make: Any) -> None:
    http = make()
    replies = [http("GET", f"{srv.url}/ok?i={i}").content for i in range(20)]
    assert replies == [OK] * 20
    assert srv.connections == 1 and [h.split(b" ")[1] for h in srv.heads] == [b"/ok?i=%d" % i for i in range(20)]


def test_concurrent_requests_each_get_their_own_reply_within_the_connection_limit(srv: Scripted, make: Any) -> None:
    http = make(max_connections=4)
    replies = http.many([("POST", f"{srv.url}/echo", {"content": f"body {i}".encode()}) for i in range(200)])
    assert [r.content for r in replies] == [f"body {i}".encode() for i in range(200)]
    assert 1 <= srv.connections <= 4


def test_connection_close_opens_a_new_connection(srv: Scripted, make: Any) -> None:
    http = make()
    assert http("GET", f"{srv.url}/close").content == OK
    assert http("GET", f"{srv.url}/ok").content == OK
    assert srv.connections == 2


def test_a_refused_connection_is_httpx_s_connect_error(make: Any) -> None:
    with FaultServer() as gone:
        url = gone.url
    with pytest.raises(httpx.ConnectError):
        make()("GET", f"{url}/ok")


async def test_a_cancelled_request_frees_its_slot(srv: Scripted) -> None:
    async with httpx.AsyncClient(transport=AsyncPool(max_connections=1)) as http:
        task = asyncio.create_task(http.get(f"{srv.url}/hang"))
        await aeventually(lambda: srv.heads, "the first request reached the server", 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await http.get(f"{srv.url}/ok")).content == OK  # the one slot is free again


async def test_a_request_waiting_for_the_slot_gets_it_when_it_frees(srv: Scripted) -> None:
    async with httpx.AsyncClient(transport=AsyncPool(max_connections=1), timeout=httpx.Timeout(5.0)) as http:
        hanging = asyncio.create_task(http.get(f"{srv.url}/hang", timeout=0.5))
        await aeventually(lambda: srv.heads, "the first request reached the server", 10)
        waiting = asyncio.create_task(http.get(f"{srv.url}/ok"))
        with pytest.raises(httpx.ReadTimeout):
            await hanging
        assert (await waiting).content == OK


def test_a_sync_request_waiting_for_the_slot_gets_it_when_it_frees(srv: Scripted) -> None:
    with httpx.Client(transport=SyncPool(max_connections=1)) as http, ThreadPoolExecutor(2) as pool:
        hanging = pool.submit(http.get, f"{srv.url}/hang", timeout=0.5)
        eventually(lambda: srv.heads, "the first request reached the server", 10)
        waiting = pool.submit(http.get, f"{srv.url}/ok", timeout=httpx.Timeout(5.0))
        with pytest.raises(httpx.ReadTimeout):
            hanging.result()
        assert waiting.result().content == OK


def test_one_async_transport_serves_successive_event_loops() -> None:
    """A notebook's second ``asyncio.run`` on the same client: the pool of the finished loop is
    dropped, not reused, and nothing warns about it. The collector runs before the check starts (what
    earlier tests left is not this test's) and at its end (a dropped pool in a reference cycle would
    otherwise warn whenever the collector happens to run, in this test or a later one)."""
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with FaultServer() as srv:
            t = AsyncTransport(srv.url)
            for _ in range(3):
                assert asyncio.run(t.send(ApiRequest("GET", "/x"))).json() == {"result": "OK"}
            asyncio.run(t.aclose())
            del t
        gc.collect()
    assert not [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


def test_svckit_transports_use_the_pools_and_surface_timeouts_as_request_timeout(srv: Scripted) -> None:
    sync = SyncTransport(srv.url, timeout=0.2)
    assert isinstance(sync._pool, SyncPool) and not sync._pool.proxied
    with pytest.raises(RequestTimeout):
        sync.send(ApiRequest("POST", "/hang"))
    sync.close()

    async def main() -> None:
        t = AsyncTransport(srv.url, timeout=0.2)
        assert isinstance(t._pool, AsyncPool) and not t._pool.proxied
        with pytest.raises(RequestTimeout):
            await t.send(ApiRequest("POST", "/hang"))
        await t.aclose()

    asyncio.run(main())


def test_https_uses_the_pools_too() -> None:
    assert isinstance(SyncTransport("https://hosted.example/kv")._pool, SyncPool)
    assert isinstance(AsyncTransport("https://hosted.example/kv")._pool, AsyncPool)


def test_a_socks_proxy_is_left_to_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx speaks SOCKS (with socksio installed); the pools do not, so those requests go through
    httpx's own transport, read whole as the pools read theirs."""
    pytest.importorskip("socksio")
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:9")
    sync, asyn = SyncTransport("http://127.0.0.1:8080/kv"), AsyncTransport("http://127.0.0.1:8080/kv")
    assert isinstance(sync._pool, ReadWhole) and isinstance(sync._pool.inner, httpx.HTTPTransport)
    assert isinstance(asyn._pool, ReadWhole) and isinstance(asyn._pool.inner, httpx.AsyncHTTPTransport)


@pytest.mark.parametrize(("no_proxy", "url", "direct"), [
    ("::1", "http://[::1]:8080/kv", True),  # an IPv6 address, as NO_PROXY names it
    ("localhost", "http://127.0.0.1:8080/kv", False),
    ("example.com", "https://www.example.com/kv", True),
    ("example.com:8080", "http://example.com/kv", False),
    ("*", "http://example.com/kv", True),
])
def test_the_environment_s_proxy_is_read_as_httpx_reads_it(
        monkeypatch: pytest.MonkeyPatch, no_proxy: str, url: str, direct: bool) -> None:
    """Where the pools send a request by HTTP(S)_PROXY and NO_PROXY, as httpx's own client would (a
    proxy without a scheme is an http:// one). The conformance tests compare the two on the wire."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", "proxy.example:3128")
    monkeypatch.setenv("HTTPS_PROXY", "proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    assert env_proxy(url) == (None if direct else "http://proxy.example:3128")


def test_httpx_s_own_transport_read_whole_keeps_the_reply_cap(srv: Scripted) -> None:
    """The SOCKS path (:class:`ReadWhole` over httpx's transport) refuses a reply over the cap as
    received and as decoded, as the pools do, and reads the rest as httpx would."""
    with httpx.Client(transport=ReadWhole(httpx.HTTPTransport(), max_reply_bytes=100_000)) as http:
        assert http.get(f"{srv.url}/gzip").json() == {"result": "unzipped"}
        assert len(http.get(f"{srv.url}/big-chunked?n=100000").content) == 100_000
        with pytest.raises(ReplyTooLarge, match="the reply is over "):
            http.get(f"{srv.url}/big-chunked?n=300000")
        with pytest.raises(ReplyTooLarge, match="decodes to over"):
            http.get(f"{srv.url}/inflates/1000000")

    async def main() -> None:
        async with httpx.AsyncClient(transport=ReadWhole(httpx.AsyncHTTPTransport(), 100_000)) as http:
            assert (await http.get(f"{srv.url}/ok")).content == OK
            with pytest.raises(ReplyTooLarge, match="over the limit of 100,000 bytes"):
                await http.get(f"{srv.url}/big?n=300000")

    asyncio.run(main())


@pytest.mark.parametrize(("headers", "body"), [
    ([(b"Content-Type", b"application/json"), (b"Content-Length", b"13")], b'{"result": 1}'),
    ([("content-type", "text/plain; charset=latin-1")], b"caf\xe9"),
    ([(b"Transfer-Encoding", b"chunked")], b"x" * 100_000),
    ([], b""),
    ([(b"Content-Encoding", b"gzip")], gzip.compress(b'{"result": "zipped"}', mtime=0)),
    ([(b"content-encoding", b"deflate"), (b"content-encoding", b"identity")], zlib.compress(b"twice named")),
])
async def test_a_pool_s_response_is_the_one_httpx_makes_of_the_reply(headers: list[Any], body: bytes) -> None:
    """What a pool returns is read by httpx's own ``Client.send``, sync and async, into the response
    httpx makes of the same reply."""
    expected = httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))
    expected.read()
    with httpx.Client(transport=httpx.MockTransport(lambda request: _response(200, headers, body))) as http:
        made = http.get("http://127.0.0.1/x")
    async with httpx.AsyncClient(transport=httpx.MockTransport(lambda request: _response(200, headers, body))) as ahttp:
        amade = await ahttp.get("http://127.0.0.1/x")
    for response in (made, amade):
        assert (response.content, response.text, response.headers.multi_items()) == \
            (expected.content, expected.text, expected.headers.multi_items())
        assert response.is_stream_consumed and response.is_closed and response.http_version == "HTTP/1.1"
