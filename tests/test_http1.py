"""svckit's HTTP/1.1 pools under httpx (svckit._http1: ``Http1Transport`` for asyncio,
``SyncHttp1Transport`` for threads), against a scripted loopback server: keep-alive reuse, the replies
HTTP/1.1 allows (chunked, gzip, Connection: close, HEAD), and what happens when things go wrong
(timeouts, cancellation, a full pool, a broken reply). Each behaviour is checked on both transports.
The retry policy over them is tested in test_faults.py, and every client test runs on them against
the sandbox.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from svckit._http import ApiRequest, AsyncTransport, SyncTransport
from svckit._http1 import Http1Transport, SyncHttp1Transport
from svckit.errors import RequestTimeout
from tests.faults import FaultServer

BODY = b'{"result":"OK"}'


class Scripted:
    """An asyncio HTTP/1.1 server on 127.0.0.1, in a thread of its own, that answers by path and
    counts the connections it accepted."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[tuple[str, str, bytes]] = []
        self.loop = asyncio.new_event_loop()
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if not self.thread.is_alive():
            return

        async def shut() -> None:
            self.server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shut(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                method, path, _ = head[0].split(" ")
                fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
                body = await reader.readexactly(int(fields.get("content-length", 0)))
                self.requests.append((method, path, body))
                if not await self._answer(method, path, body, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _answer(self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter) -> bool:
        def send(head: bytes, payload: bytes = b"") -> None:
            writer.write(b"HTTP/1.1 200 OK\r\n" + head + b"\r\n" + payload)

        if path == "/close":
            send(b"Content-Length: %d\r\nConnection: close\r\n" % len(BODY), BODY)
            await writer.drain()
            return False
        if path == "/chunked":
            chunks = (b'{"result":', b'"chunked"', b"}")
            send(b"Transfer-Encoding: chunked\r\n", b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n")
        elif path == "/gzip":
            packed = gzip.compress(b'{"result":"unzipped"}')
            send(b"Content-Encoding: gzip\r\nContent-Length: %d\r\n" % len(packed), packed)
        elif path == "/echo":
            send(b"Content-Length: %d\r\n" % len(body), body)
        elif path == "/hang":
            await asyncio.sleep(3600)
        elif path == "/garbage":
            writer.write(b"THIS IS NOT HTTP\r\n\r\n")
        elif path == "/cut":
            writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"res')
            await writer.drain()
            return False
        else:  # HEAD announces the body GET would get, and sends none
            send(b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(BODY), b"" if method == "HEAD" else BODY)
        await writer.drain()
        return True


@pytest.fixture
def srv() -> Iterator[Scripted]:
    server = Scripted()
    yield server
    server.stop()


class SyncCaller:
    """Requests through ``httpx.Client`` on SyncHttp1Transport; ``many`` sends them from threads."""

    def __init__(self, **transport: Any) -> None:
        self.client = httpx.Client(transport=SyncHttp1Transport(**transport), timeout=httpx.Timeout(2.0))

    def __call__(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.client.request(method, url, **kwargs)

    def many(self, calls: list[tuple[str, str, dict[str, Any]]]) -> list[httpx.Response]:
        with ThreadPoolExecutor(16) as pool:
            return list(pool.map(lambda c: self(c[0], c[1], **c[2]), calls))

    def close(self) -> None:
        self.client.close()


class AsyncCaller:
    """Requests through ``httpx.AsyncClient`` on Http1Transport; ``many`` sends them concurrently."""

    def __init__(self, **transport: Any) -> None:
        self.runner = asyncio.Runner()
        self.client = httpx.AsyncClient(transport=Http1Transport(**transport), timeout=httpx.Timeout(2.0))

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

    def factory(**transport: Any) -> SyncCaller | AsyncCaller:
        made.append((SyncCaller if request.param == "sync" else AsyncCaller)(**transport))
        return made[-1]

    yield factory
    for caller in made:
        caller.close()


def test_sequential_requests_reuse_one_keep_alive_connection(srv: Scripted, make: Any) -> None:
    http = make()
    replies = [http("GET", f"{srv.url}/ok?i={i}").json() for i in range(20)]
    assert replies == [{"result": "OK"}] * 20
    assert srv.connections == 1 and [p for _, p, _ in srv.requests] == [f"/ok?i={i}" for i in range(20)]


def test_concurrent_requests_each_get_their_own_reply_within_the_connection_limit(srv: Scripted, make: Any) -> None:
    http = make(max_connections=4)
    replies = http.many([("POST", f"{srv.url}/echo", {"content": f"body {i}".encode()}) for i in range(200)])
    assert [r.content for r in replies] == [f"body {i}".encode() for i in range(200)]
    assert 1 <= srv.connections <= 4


def test_connection_close_chunked_gzip_and_head_replies(srv: Scripted, make: Any) -> None:
    http = make()
    closed = http("GET", f"{srv.url}/close")
    after = http("GET", f"{srv.url}/ok")  # on a new connection: the server closed the first
    chunked = http("GET", f"{srv.url}/chunked")
    zipped = http("GET", f"{srv.url}/gzip")
    head = http("HEAD", f"{srv.url}/ok")
    again = http("GET", f"{srv.url}/ok")
    assert closed.json() == after.json() == again.json() == {"result": "OK"}
    assert chunked.json() == {"result": "chunked"}
    assert zipped.json() == {"result": "unzipped"}  # httpx decodes; the transport passes bytes on
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(BODY))
    assert srv.connections == 3  # /close ended the first, HEAD (whose body llhttp cannot know) the second


def test_a_read_timeout_is_httpx_s_and_the_connection_is_not_reused(srv: Scripted, make: Any) -> None:
    http = make()
    with pytest.raises(httpx.ReadTimeout):
        http("GET", f"{srv.url}/hang", timeout=0.2)
    assert http("GET", f"{srv.url}/ok").json() == {"result": "OK"}
    assert srv.connections == 2


@pytest.mark.parametrize("path", ["/garbage", "/cut"])
def test_a_broken_reply_is_a_protocol_error(srv: Scripted, make: Any, path: str) -> None:
    http = make()
    with pytest.raises(httpx.RemoteProtocolError):
        http("GET", f"{srv.url}{path}")
    assert http("GET", f"{srv.url}/ok").json() == {"result": "OK"}


def test_a_connection_the_server_closed_while_idle_is_not_reused(srv: Scripted, make: Any) -> None:
    http = make()
    assert http("GET", f"{srv.url}/ok").status_code == 200
    srv.stop()  # closes every connection, the idle one in the pool too
    with pytest.raises(httpx.ConnectError):  # nothing listens any more: a new connection is refused
        http("GET", f"{srv.url}/ok")


def test_https_is_refused_by_name(make: Any) -> None:
    with pytest.raises(httpx.UnsupportedProtocol, match="plain http"):
        make()("GET", "https://127.0.0.1:1/")


async def test_a_cancelled_request_frees_its_slot(srv: Scripted) -> None:
    async with httpx.AsyncClient(transport=Http1Transport(max_connections=1)) as http:
        task = asyncio.create_task(http.get(f"{srv.url}/hang"))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await http.get(f"{srv.url}/ok")).json() == {"result": "OK"}  # the one slot is free again


async def test_a_full_async_pool_waits_then_times_out_with_httpx_s_pool_timeout(srv: Scripted) -> None:
    async with httpx.AsyncClient(transport=Http1Transport(max_connections=1)) as http:
        hanging = asyncio.create_task(http.get(f"{srv.url}/hang", timeout=1.0))
        await asyncio.sleep(0.1)
        with pytest.raises(httpx.PoolTimeout):
            await http.get(f"{srv.url}/ok", timeout=httpx.Timeout(2.0, pool=0.2))
        waiting = asyncio.create_task(http.get(f"{srv.url}/ok", timeout=httpx.Timeout(5.0)))
        with pytest.raises(httpx.ReadTimeout):
            await hanging
        assert (await waiting).json() == {"result": "OK"}  # it got the slot the timed-out one freed


def test_a_full_sync_pool_waits_then_times_out_with_httpx_s_pool_timeout(srv: Scripted) -> None:
    with httpx.Client(transport=SyncHttp1Transport(max_connections=1)) as http, ThreadPoolExecutor(2) as pool:
        hanging = pool.submit(http.get, f"{srv.url}/hang", timeout=1.0)
        while not srv.requests:
            threading.Event().wait(0.01)
        with pytest.raises(httpx.PoolTimeout):
            http.get(f"{srv.url}/ok", timeout=httpx.Timeout(2.0, pool=0.2))
        waiting = pool.submit(http.get, f"{srv.url}/ok", timeout=httpx.Timeout(5.0))
        with pytest.raises(httpx.ReadTimeout):
            hanging.result()
        assert waiting.result().json() == {"result": "OK"}


def test_refused_connection_is_httpx_s_connect_error(make: Any) -> None:
    with FaultServer() as gone:
        url = gone.url
    with pytest.raises(httpx.ConnectError):
        make()("GET", f"{url}/ok")


def test_one_async_transport_serves_successive_event_loops() -> None:
    """A notebook's second ``asyncio.run`` on the same client: connections of the finished loop are
    dropped, not reused."""
    with FaultServer() as srv:
        t = AsyncTransport(srv.url)
        for _ in range(3):
            assert asyncio.run(t.send(ApiRequest("GET", "/x"))).json() == {"result": "OK"}


def test_svckit_transports_are_on_these_pools_and_surface_timeouts_as_request_timeout(srv: Scripted) -> None:
    sync = SyncTransport(srv.url, timeout=0.2)
    assert isinstance(sync._pool, SyncHttp1Transport)
    with pytest.raises(RequestTimeout):
        sync.send(ApiRequest("POST", "/hang"))
    sync.close()

    async def main() -> None:
        t = AsyncTransport(srv.url, timeout=0.2)
        assert isinstance(t._pool, Http1Transport)
        with pytest.raises(RequestTimeout):
            await t.send(ApiRequest("POST", "/hang"))
        await t.aclose()

    asyncio.run(main())


def test_an_http_proxy_from_the_environment_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    """With HTTP_PROXY set, requests to hosts it covers go through httpx's own pool (which uses the
    proxy); hosts in NO_PROXY stay on svckit's pool."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert SyncTransport("http://sandbox.example:8080/kv")._pool is None
    assert isinstance(SyncTransport("http://localhost:8080/kv")._pool, SyncHttp1Transport)
    assert AsyncTransport("https://hosted.example/kv")._pool is None  # TLS: httpx's own pool


async def test_a_request_cancelled_just_as_its_turn_came_passes_the_turn_on(srv: Scripted) -> None:
    """Three requests on one connection slot: the first holds it, the second is woken by its release
    and cancelled before it runs; the third still gets the slot instead of waiting out its timeout."""
    async with httpx.AsyncClient(transport=Http1Transport(max_connections=1), timeout=httpx.Timeout(5.0, pool=1.0)) as http:
        first = asyncio.create_task(http.get(f"{srv.url}/hang"))
        await asyncio.sleep(0.1)
        second = asyncio.create_task(http.get(f"{srv.url}/ok"))
        third = asyncio.create_task(http.get(f"{srv.url}/ok"))
        await asyncio.sleep(0.05)  # both wait for the slot
        first.cancel()
        await asyncio.sleep(0)  # the first gives the slot back and wakes the second ...
        second.cancel()  # ... which is cancelled before it runs
        assert (await third).json() == {"result": "OK"}
        for task in (first, second):
            with pytest.raises(asyncio.CancelledError):
                await task
