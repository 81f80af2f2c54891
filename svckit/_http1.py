"""A lean HTTP/1.1 connection pool under ``httpx.AsyncClient``, for plain-HTTP base URLs.

Measured against the sandbox on loopback (bench/RESULTS.md, issue 14), httpcore, h11 and anyio took
~450-800 µs of client CPU per small request, most of the async client's whole cost and more than the
gateway's: they are built for every case (HTTP/2, proxies, trio, a pool scan per request). This
transport does one thing: HTTP/1.1 requests over keep-alive connections, each an ``asyncio.Protocol``
whose replies are parsed by ``httptools`` (llhttp, in C). The same requests cost ~110-230 µs in all
with httpx above it. httpx still builds the requests and reads the responses, so timeouts, headers,
content decoding, errors and the retry policy behave as before.

Used by :class:`svckit._http.AsyncTransport` for ``http://`` URLs (the sandbox, a local proxy).
Event streams (SSE) and ``https://`` go through httpx's own transport, which is the right tool
where a stream stays open or TLS and the network cost far more than the client does.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib

import httptools
import httpx

#: connections open to one host at most (httpx's own default); more requests wait for one
MAX_CONNECTIONS = 100


class _Connection(asyncio.Protocol):
    """One keep-alive connection: at most one request in flight, its reply parsed as it arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.reply: asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes, bool]] | None = None
        self.head_only = False  # the request was HEAD: its reply has no body, whatever its headers say
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.closed = False

    # -- asyncio.Protocol ------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(httpx.RemoteProtocolError("Server disconnected without sending a complete response."))

    def data_received(self, data: bytes) -> None:
        if self.reply is None:  # bytes nobody asked for: the connection is out of step, drop it
            self.close()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"malformed HTTP reply: {exc}"))
            self.close()

    # -- httptools callbacks -----------------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes | None) -> None:
        self.headers.append((name, value or b""))

    def on_headers_complete(self) -> None:
        if self.head_only:
            self._complete(keep_alive=False)  # llhttp would wait for the body the headers announce

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self._complete(keep_alive=self.parser.should_keep_alive())

    # -- one exchange ----------------------------------------------------------------------------
    def _complete(self, keep_alive: bool) -> None:
        reply, self.reply = self.reply, None
        headers, body, self.headers, self.body = self.headers, b"".join(self.body), [], []
        if reply is not None and not reply.done():
            reply.set_result((self.parser.get_status_code(), headers, body, keep_alive))

    def _fail(self, error: Exception) -> None:
        reply, self.reply = self.reply, None
        if reply is not None and not reply.done():
            reply.set_exception(error)

    def send(self, data: bytes, head_only: bool) -> asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes, bool]]:
        assert self.transport is not None and self.reply is None
        self.head_only = head_only
        self.reply = self.loop.create_future()
        self.transport.write(data)
        return self.reply

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            with contextlib.suppress(RuntimeError):  # its event loop is already closed
                self.transport.close()


class _Host:
    """The connections to one (host, port): idle ones to reuse, and requests waiting for a slot."""

    def __init__(self) -> None:
        self.idle: list[_Connection] = []
        self.open = 0  # connections open or being opened, idle or busy
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()


def _timeout(request: httpx.Request, which: str) -> float | None:
    value: float | None = request.extensions.get("timeout", {}).get(which)
    return value


class Http1Transport(httpx.AsyncBaseTransport):
    """``httpx.AsyncClient(transport=Http1Transport())`` for ``http://`` URLs: HTTP/1.1 over pooled
    keep-alive connections (at most ``max_connections`` per host), with httpx's connect, read and
    pool timeouts and its exception types. Connections belong to the event loop that opened them;
    a request on another loop (a notebook's second ``asyncio.run``) opens its own."""

    def __init__(self, max_connections: int = MAX_CONNECTIONS) -> None:
        self.max_connections = max_connections
        self._hosts: dict[tuple[str, int], _Host] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"Http1Transport speaks plain http://, not {url.scheme}://")
        if self._closed:
            raise RuntimeError("the transport is closed")
        loop = asyncio.get_running_loop()
        host = self._hosts.get((url.host, url.port or 80))
        if host is None:
            host = self._hosts[(url.host, url.port or 80)] = _Host()
        data = self._encode(request, request.content if hasattr(request, "_content") else await request.aread())
        conn = await self._acquire(host, url, request, loop)
        reply = conn.send(data, request.method == "HEAD")
        read = _timeout(request, "read")
        timer = None if read is None else loop.call_later(read, conn._fail, httpx.ReadTimeout("timed out reading the reply"))
        try:
            status, headers, body, keep_alive = await reply
        except BaseException:  # a timeout, a broken connection, or the caller's cancellation
            conn.close()
            self._release(host, None)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if not keep_alive or self._closed:
            conn.close()
        self._release(host, None if conn.closed else conn)
        return httpx.Response(status, headers=headers, stream=httpx.ByteStream(body),
                              extensions={"http_version": b"HTTP/1.1"})

    @staticmethod
    def _encode(request: httpx.Request, body: bytes) -> bytes:
        parts = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
        chunked = False
        for name, value in request.headers.raw:
            parts += (name, b": ", value, b"\r\n")
            chunked = chunked or (name.lower() == b"transfer-encoding" and value.lower() == b"chunked")
        parts.append(b"\r\n")
        if chunked:  # a streamed body, read whole above: send it as one chunk
            parts += (b"%x\r\n" % len(body), body, b"\r\n0\r\n\r\n") if body else (b"0\r\n\r\n",)
        else:
            parts.append(body)
        return b"".join(parts)

    async def _acquire(self, host: _Host, url: httpx.URL, request: httpx.Request,
                       loop: asyncio.AbstractEventLoop) -> _Connection:
        while True:
            while host.idle:
                conn = host.idle.pop()
                if not conn.closed and conn.loop is loop:
                    return conn
                conn.close()  # the server closed it while idle, or it belongs to a finished loop
                host.open -= 1
            if host.open < self.max_connections:
                break
            waiter = loop.create_future()
            host.waiting.append(waiter)
            try:
                async with asyncio.timeout(_timeout(request, "pool")):
                    await waiter
            except TimeoutError:
                raise httpx.PoolTimeout(f"no free connection to {url.host} within the pool timeout") from None
            finally:
                with contextlib.suppress(ValueError):
                    host.waiting.remove(waiter)
        host.open += 1
        try:
            async with asyncio.timeout(_timeout(request, "connect")):
                _, conn = await loop.create_connection(lambda: _Connection(loop), url.host, url.port or 80)
        except TimeoutError:
            host.open -= 1
            raise httpx.ConnectTimeout(f"timed out connecting to {url.host}:{url.port or 80}") from None
        except OSError as exc:
            host.open -= 1
            raise httpx.ConnectError(str(exc)) from None
        except BaseException:
            host.open -= 1
            raise
        return conn

    def _release(self, host: _Host, conn: _Connection | None) -> None:
        """A request is done with its connection: keep it for the next one (None: it was closed)."""
        if conn is None:
            host.open -= 1
        else:
            host.idle.append(conn)
        while host.waiting:  # wake one waiter: an idle connection or a free slot is there for it
            waiter = host.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    async def aclose(self) -> None:
        self._closed = True
        for host in self._hosts.values():
            for conn in host.idle:
                conn.close()
            host.open -= len(host.idle)
            host.idle.clear()

    def __repr__(self) -> str:
        return f"Http1Transport(max_connections={self.max_connections})"


__all__ = ["MAX_CONNECTIONS", "Http1Transport"]
