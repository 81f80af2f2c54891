"""svckit's HTTP/1.1 pool under httpx (svckit._http1.Http1Transport), against a scripted loopback
server: keep-alive reuse, the replies HTTP/1.1 allows (chunked, gzip, Connection: close, HEAD), and
what happens when things go wrong (timeouts, cancellation, a full pool, a broken reply). The retry
policy over it is tested in test_faults.py, and every async client test runs on it against the sandbox.
"""

from __future__ import annotations

import asyncio
import gzip

import httpx
import pytest

from svckit._http import ApiRequest, AsyncTransport
from svckit._http1 import Http1Transport
from svckit.errors import RequestTimeout
from tests.faults import FaultServer

BODY = b'{"result":"OK"}'


class Scripted:
    """An asyncio HTTP/1.1 server on 127.0.0.1 that answers by path, counting connections."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[tuple[str, str, bytes]] = []
        self.server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> Scripted:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

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
        except (asyncio.IncompleteReadError, ConnectionError):
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
            send(b"Transfer-Encoding: chunked\r\n", b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (b'{"result":', b'"chunked"', b"}"))
                 + b"0\r\n\r\n")
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
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"res")
            await writer.drain()
            return False
        else:  # HEAD announces the body GET would get, and sends none
            send(b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(BODY), b"" if method == "HEAD" else BODY)
        await writer.drain()
        return True


def client(**limits: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=Http1Transport(**limits), timeout=httpx.Timeout(2.0))


async def test_sequential_requests_reuse_one_keep_alive_connection() -> None:
    async with Scripted() as srv, client() as http:
        replies = [(await http.get(f"{srv.url}/ok?i={i}")).json() for i in range(20)]
    assert replies == [{"result": "OK"}] * 20
    assert srv.connections == 1 and [p for _, p, _ in srv.requests] == [f"/ok?i={i}" for i in range(20)]


async def test_concurrent_requests_each_get_their_own_reply_within_the_connection_limit() -> None:
    async with Scripted() as srv, client(max_connections=4) as http:
        replies = await asyncio.gather(*(http.post(f"{srv.url}/echo", content=f"body {i}".encode())
                                         for i in range(200)))
    assert [r.content for r in replies] == [f"body {i}".encode() for i in range(200)]
    assert srv.connections <= 4


async def test_connection_close_chunked_gzip_and_head_replies() -> None:
    async with Scripted() as srv, client() as http:
        closed = await http.get(f"{srv.url}/close")
        after = await http.get(f"{srv.url}/ok")  # a new connection: the server closed the first
        chunked = await http.get(f"{srv.url}/chunked")
        zipped = await http.get(f"{srv.url}/gzip")
        head = await http.head(f"{srv.url}/ok")
        again = await http.get(f"{srv.url}/ok")
    assert closed.json() == after.json() == again.json() == {"result": "OK"}
    assert chunked.json() == {"result": "chunked"}
    assert zipped.json() == {"result": "unzipped"}  # httpx decodes; the transport passes bytes on
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(BODY))
    assert srv.connections >= 2


async def test_a_read_timeout_is_httpx_s_and_the_connection_is_not_reused() -> None:
    async with Scripted() as srv, httpx.AsyncClient(transport=Http1Transport(), timeout=0.2) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.get(f"{srv.url}/hang")
        assert (await http.get(f"{srv.url}/ok")).json() == {"result": "OK"}
    assert srv.connections == 2


async def test_a_cancelled_request_frees_its_slot() -> None:
    async with Scripted() as srv, client(max_connections=1) as http:
        task = asyncio.create_task(http.get(f"{srv.url}/hang"))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await http.get(f"{srv.url}/ok")).json() == {"result": "OK"}  # the one slot is free again


async def test_a_full_pool_waits_then_times_out_with_httpx_s_pool_timeout() -> None:
    async with Scripted() as srv, client(max_connections=1) as http:
        hanging = asyncio.create_task(http.get(f"{srv.url}/hang"))
        await asyncio.sleep(0.1)
        with pytest.raises(httpx.PoolTimeout):
            await http.get(f"{srv.url}/ok", timeout=httpx.Timeout(2.0, pool=0.2))
        hanging.cancel()
        assert (await http.get(f"{srv.url}/ok")).json() == {"result": "OK"}


@pytest.mark.parametrize("path", ["/garbage", "/cut"])
async def test_a_broken_reply_is_a_protocol_error(path: str) -> None:
    async with Scripted() as srv, client() as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.get(f"{srv.url}{path}")
        assert (await http.get(f"{srv.url}/ok")).json() == {"result": "OK"}


async def test_refused_connection_is_httpx_s_connect_error() -> None:
    async with Scripted() as srv:
        url = srv.url
    await asyncio.sleep(0.05)  # the server is gone: nothing listens on its port
    async with client() as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(f"{url}/ok")


async def test_https_is_refused_by_name() -> None:
    async with client() as http:
        with pytest.raises(httpx.UnsupportedProtocol, match="plain http"):
            await http.get("https://127.0.0.1:1/")


def test_one_transport_serves_successive_event_loops() -> None:
    """A notebook's second ``asyncio.run`` on the same client: connections of the finished loop are
    dropped, not reused."""
    with FaultServer() as srv:
        t = AsyncTransport(srv.url)
        for _ in range(3):
            assert asyncio.run(t.send(ApiRequest("GET", "/x"))).json() == {"result": "OK"}


async def test_svckit_transport_timeouts_surface_as_request_timeout() -> None:
    async with Scripted() as srv:
        t = AsyncTransport(srv.url, timeout=0.2)
        with pytest.raises(RequestTimeout):
            await t.send(ApiRequest("POST", "/hang"))
        await t.aclose()

