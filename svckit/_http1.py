"""A lean HTTP/1.1 connection pool under ``httpx.Client`` and ``httpx.AsyncClient``, for plain-HTTP
base URLs.

Measured against the sandbox on loopback (bench/RESULTS.md, issue 14), httpcore, h11 and anyio took
~450-800 µs of client CPU per small async request, most of the async client's whole cost and more
than the gateway's: they are built for every case (HTTP/2, proxies, trio, a pool scan per request).
These transports do one thing: HTTP/1.1 requests over keep-alive connections, one request at a time
on each, the replies parsed by ``httptools`` (llhttp, in C). The same requests cost ~110-230 µs in
all with httpx around them. httpx still builds the requests (``client.build_request``) and decodes the
responses, so URLs, headers, timeouts, content decoding, errors and the retry policy behave as before;
:mod:`svckit._http` hands the request straight to the transport (``client.send`` would add cookie
handling, redirects and hooks, which svckit does not use, for ~15 % of the CPU). Each transport also
works under an ``httpx.Client`` / ``httpx.AsyncClient`` like any other.

:class:`Http1Transport` (asyncio: each connection an ``asyncio.Protocol``) and
:class:`SyncHttp1Transport` (blocking sockets, shareable between threads) share the request encoding
and the reply parser. :mod:`svckit._http` uses them for ``http://`` URLs (the sandbox, a local proxy).
Event streams (SSE) and ``https://`` go through httpx's own transports, the right tool where a stream
stays open or where TLS and the network cost far more than the client does.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import select
import socket
import threading
import time

import httptools
import httpx

#: connections open to one host at most (httpx's own default); more requests wait for one
MAX_CONNECTIONS = 100

Reply = tuple[int, list[tuple[bytes, bytes]], bytes, bool]  # status, headers, body, keep-alive


def encode_request(request: httpx.Request, body: bytes) -> bytes:
    """The bytes of one HTTP/1.1 request: httpx has already set Host, Content-Length and the rest."""
    parts = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    chunked = False
    for name, value in request.headers.raw:
        parts += (name, b": ", value, b"\r\n")
        chunked = chunked or (name.lower() == b"transfer-encoding" and value.lower() == b"chunked")
    parts.append(b"\r\n")
    if chunked:  # a streamed body, read whole by the caller: send it as one chunk
        parts += (b"%x\r\n" % len(body), body, b"\r\n0\r\n\r\n") if body else (b"0\r\n\r\n",)
    else:
        parts.append(body)
    return b"".join(parts)


def _body(request: httpx.Request) -> bytes:
    return request.content if hasattr(request, "_content") else request.read()


def _response(reply: Reply) -> httpx.Response:
    """A response read at construction (``content=``: httpx decodes gzip and the like right away), so
    ``read()`` / ``aread()`` after it cost nothing; the server's Content-Length stays as sent."""
    status, headers, body, _ = reply
    return httpx.Response(status, headers=headers, content=body, extensions={"http_version": b"HTTP/1.1"})


def _timeout(request: httpx.Request, which: str) -> float | None:
    value: float | None = request.extensions.get("timeout", {}).get(which)
    return value


def _check_scheme(url: httpx.URL) -> None:
    if url.scheme != "http":
        raise httpx.UnsupportedProtocol(f"svckit's HTTP/1.1 transport speaks plain http://, not {url.scheme}://")


def _readable(fd: int) -> bool:
    """An idle connection's socket is readable only when the server closed it (or sent bytes nobody
    asked for): either way it cannot carry the next request. One poll of one socket, a few µs."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class _ReplyParser:
    """Collects one reply at a time from the bytes fed to it (httptools calls the ``on_*`` methods)."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.head_only = False  # the request was HEAD: its reply has no body, whatever its headers say
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.reply: Reply | None = None

    def start(self, head_only: bool) -> None:
        self.head_only, self.reply = head_only, None

    def feed(self, data: bytes) -> None:
        """Parse ``data``; raises ``httpx.RemoteProtocolError`` for bytes that are not an HTTP reply."""
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            raise httpx.RemoteProtocolError(f"malformed HTTP reply: {exc}") from None

    def on_header(self, name: bytes, value: bytes | None) -> None:
        self.headers.append((name, value or b""))

    def on_headers_complete(self) -> None:
        if self.head_only:
            self._complete(keep_alive=False)  # llhttp would wait for the body the headers announce

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self._complete(keep_alive=self.parser.should_keep_alive())

    def _complete(self, keep_alive: bool) -> None:
        headers, body, self.headers, self.body = self.headers, b"".join(self.body), [], []
        self.reply = (self.parser.get_status_code(), headers, body, keep_alive)


# -- asyncio ------------------------------------------------------------------------------------------
class _Connection(asyncio.Protocol):
    """One keep-alive connection of :class:`Http1Transport`: at most one request in flight."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.parser = _ReplyParser()
        self.waiter: asyncio.Future[Reply] | None = None
        self.closed = False
        self.fd = -1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.fd = transport.get_extra_info("socket").fileno()

    def usable(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Fit to carry the next request on ``loop``: open, of that loop, and not closed by the
        server while idle (the loop may not have run since, e.g. between two ``Runner.run`` calls)."""
        return not self.closed and self.loop is loop and not _readable(self.fd)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.fail(httpx.RemoteProtocolError("Server disconnected without sending a complete response."))

    def data_received(self, data: bytes) -> None:
        if self.waiter is None:  # bytes nobody asked for: the connection is out of step, drop it
            self.close()
            return
        try:
            self.parser.feed(data)
        except httpx.RemoteProtocolError as exc:
            self.fail(exc)
            self.close()
            return
        if self.parser.reply is not None:
            waiter, self.waiter = self.waiter, None
            if not waiter.done():
                waiter.set_result(self.parser.reply)

    def fail(self, error: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def time_out(self) -> None:
        """The read timeout's timer: the exception is built only when it fires."""
        self.fail(httpx.ReadTimeout("timed out reading the reply"))

    def send(self, data: bytes, head_only: bool) -> asyncio.Future[Reply]:
        assert self.transport is not None and self.waiter is None
        self.parser.start(head_only)
        self.waiter = self.loop.create_future()
        self.transport.write(data)
        return self.waiter

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
        _check_scheme(url)
        if self._closed:
            raise RuntimeError("the transport is closed")
        loop = asyncio.get_running_loop()
        key = (url.host, url.port or 80)
        host = self._hosts.get(key) or self._hosts.setdefault(key, _Host())
        data = encode_request(request, request.content if hasattr(request, "_content") else await request.aread())
        conn = await self._acquire(host, url, request, loop)
        waiter = conn.send(data, request.method == "HEAD")
        read = _timeout(request, "read")
        timer = None if read is None else loop.call_later(read, conn.time_out)
        try:
            reply = await waiter
        except BaseException:  # a timeout, a broken connection, or the caller's cancellation
            conn.close()
            self._release(host, None)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if not reply[3] or self._closed:
            conn.close()
        self._release(host, None if conn.closed else conn)
        return _response(reply)

    async def _acquire(self, host: _Host, url: httpx.URL, request: httpx.Request,
                       loop: asyncio.AbstractEventLoop) -> _Connection:
        while True:
            while host.idle:
                conn = host.idle.pop()
                if conn.usable(loop):
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
            except BaseException as exc:
                with contextlib.suppress(ValueError):
                    host.waiting.remove(waiter)
                if waiter.done() and not waiter.cancelled():
                    self._wake(host)  # woken just as it gave up: the slot goes to the next in line
                if isinstance(exc, TimeoutError):
                    raise httpx.PoolTimeout(f"no free connection to {url.host} within the pool timeout") from None
                raise
        host.open += 1
        try:
            async with asyncio.timeout(_timeout(request, "connect")):
                _, conn = await loop.create_connection(lambda: _Connection(loop), url.host, url.port or 80)
        except BaseException as exc:
            host.open -= 1
            if isinstance(exc, TimeoutError):
                raise httpx.ConnectTimeout(f"timed out connecting to {url.host}:{url.port or 80}") from None
            if isinstance(exc, OSError):
                raise httpx.ConnectError(str(exc)) from None
            raise
        return conn

    def _release(self, host: _Host, conn: _Connection | None) -> None:
        """A request is done with its connection: keep it for the next one (None: it was closed)."""
        if conn is None:
            host.open -= 1
        else:
            host.idle.append(conn)
        self._wake(host)

    @staticmethod
    def _wake(host: _Host) -> None:
        """Wake one waiting request: an idle connection or a free slot is there for it."""
        while host.waiting:
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


# -- blocking sockets ---------------------------------------------------------------------------------
class _SyncConnection:
    """One keep-alive connection of :class:`SyncHttp1Transport`, used by one thread at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.parser = _ReplyParser()

    def exchange(self, data: bytes, head_only: bool, read_timeout: float | None) -> Reply:
        self.parser.start(head_only)
        self.sock.settimeout(read_timeout)
        try:
            self.sock.sendall(data)
            while self.parser.reply is None:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise httpx.RemoteProtocolError("Server disconnected without sending a complete response.")
                self.parser.feed(chunk)
        except TimeoutError:
            raise httpx.ReadTimeout("timed out reading the reply") from None
        except OSError as exc:
            raise httpx.ReadError(str(exc)) from None
        return self.parser.reply

    def stale(self) -> bool:
        return _readable(self.sock.fileno())

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class SyncHttp1Transport(httpx.BaseTransport):
    """``httpx.Client(transport=SyncHttp1Transport())`` for ``http://`` URLs: the blocking counterpart
    of :class:`Http1Transport`; one ``httpx.Client`` on it may be shared between threads."""

    def __init__(self, max_connections: int = MAX_CONNECTIONS) -> None:
        self.max_connections = max_connections
        self._idle: dict[tuple[str, int], list[_SyncConnection]] = {}
        self._open: collections.Counter[tuple[str, int]] = collections.Counter()
        self._freed = threading.Condition()
        self._closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        _check_scheme(url)
        if self._closed:
            raise RuntimeError("the transport is closed")
        key = (url.host, url.port or 80)
        data = encode_request(request, _body(request))
        conn = self._acquire(key, request)
        try:
            reply = conn.exchange(data, request.method == "HEAD", _timeout(request, "read"))
        except BaseException:
            conn.close()
            self._release(key, None)
            raise
        if not reply[3] or self._closed:
            conn.close()
            self._release(key, None)
        else:
            self._release(key, conn)
        return _response(reply)

    def _acquire(self, key: tuple[str, int], request: httpx.Request) -> _SyncConnection:
        pool = _timeout(request, "pool")
        deadline = None if pool is None else time.monotonic() + pool
        with self._freed:
            while True:
                idle = self._idle.get(key)
                while idle:
                    conn = idle.pop()
                    if not conn.stale():
                        return conn
                    conn.close()
                    self._open[key] -= 1
                if self._open[key] < self.max_connections:
                    self._open[key] += 1
                    break
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or not self._freed.wait(left):
                    raise httpx.PoolTimeout(f"no free connection to {key[0]} within the pool timeout")
        try:
            sock = socket.create_connection(key, timeout=_timeout(request, "connect"))
        except TimeoutError:
            self._release(key, None)
            raise httpx.ConnectTimeout(f"timed out connecting to {key[0]}:{key[1]}") from None
        except OSError as exc:
            self._release(key, None)
            raise httpx.ConnectError(str(exc)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _SyncConnection(sock)

    def _release(self, key: tuple[str, int], conn: _SyncConnection | None) -> None:
        with self._freed:
            if conn is None:
                self._open[key] -= 1
            else:
                self._idle.setdefault(key, []).append(conn)
            self._freed.notify()

    def close(self) -> None:
        with self._freed:
            self._closed = True
            for key, idle in self._idle.items():
                for conn in idle:
                    conn.close()
                self._open[key] -= len(idle)
            self._idle.clear()

    def __repr__(self) -> str:
        return f"SyncHttp1Transport(max_connections={self.max_connections})"


__all__ = ["MAX_CONNECTIONS", "Http1Transport", "SyncHttp1Transport", "encode_request"]
