"""The connection pools under svckit's clients: aiohttp's for asyncio, urllib3's for threads.

httpx builds every request (``Client.build_request``), sends it (``Client.send``) and decodes every
response (URLs, headers, gzip, error types). The pools here are httpx transports
(``httpx.BaseTransport``, ``httpx.AsyncBaseTransport``) that svckit's transports
(:mod:`svckit._http`) give their clients, and each hands the request to a maintained HTTP/1.1
client: aiohttp (its llhttp parser is in C) for :class:`AsyncPool`, urllib3 2 (over the standard
library's http.client) for :class:`SyncPool`. Both speak http:// and https:// and
keep connections alive. They replaced svckit's own HTTP/1.1 code (issue 21): on the load bench they
come within 25 % of it, where httpx's default stack (httpcore, h11, anyio) was at half its rate;
the figures are in bench/RESULTS.md.

Only public API of httpx, urllib3, aiohttp and the standard library is used (issue 44): a transport
returns a plain ``httpx.Response(status, headers=..., stream=...)`` and httpx reads it.

What this module adds around the two libraries, each held by tests/test_transport_conformance.py:

- :func:`check_request` refuses CR, LF, NUL and other control bytes in a method or a header before
  anything is sent: httpx passes them on, and http.client lets a CR LF through when a space follows
  it. (httpx itself refuses them in a URL.)
- Framing comes from the body alone: a caller's Content-Length or Transfer-Encoding header is
  dropped, and the library writes the one that fits the bytes.
- Replies are read whole, and a reply over ``max_reply_bytes`` is refused (:class:`ReplyTooLarge`)
  before more of it is read. The cap counts the bytes the caller gets: a gzip or deflate reply is
  decoded once by httpx's ``Response.iter_bytes``, a few KiB of it at a time and counted as it
  inflates, so 64 KiB that inflate to 64 MiB are refused at the cap, not held whole first; a reply
  under the cap is then decoded again by httpx as it reads the response.
- urllib3 stands on http.client, which skips a ``100 Continue`` but hands any other 1xx reply (a
  ``103 Early Hints``) back as the answer, with the real one left unread behind it; nothing public
  skips it, so :class:`SyncPool` closes that connection and raises ``httpx.RemoteProtocolError``
  (aiohttp skips 1xx replies itself).
- The libraries' errors become httpx's, so the retry policy can tell "never sent" (connect errors,
  always safe to repeat) from "sent, then failed" (repeated only when idempotent).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.client
import os
import re
import ssl
import urllib.request
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import aiohttp
import httpx
import urllib3
import yarl
from urllib3.exceptions import (
    ConnectTimeoutError,
    EmptyPoolError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import SSLError as Urllib3SSLError

from svckit.errors import InvalidArgument

#: connections open to one host at most (httpx's own default); more requests wait for one
MAX_CONNECTIONS = 100
#: the largest reply body read; a larger one is refused rather than buffered
MAX_REPLY_BYTES = 256 * 1024 * 1024
#: what httpx takes as ``verify``: an SSL context, a CA bundle path, True (certifi's roots) or False
Verify = ssl.SSLContext | str | bool

# RFC 9110: a method and a header name are tokens; a field value is visible characters, spaces and
# tabs (obs-text allowed). The target needs no check here: httpx refuses a URL with a control
# character in it when the URL is made, and percent-encodes spaces.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# what may not stand in a name, in a value: searched for in all names at once, all values at once
_NOT_TOKEN = re.compile(rb"[^!#$%&'*+\-.^_`|~0-9A-Za-z]")
_NOT_FIELD_VALUE = re.compile(rb"[^\t\x20-\x7e\x80-\xff]")
#: framing headers: the library computes them from the body
_FRAMING = frozenset({b"content-length", b"transfer-encoding"})


class ReplyTooLarge(httpx.DecodingError):
    """A reply body is over the pool's ``max_reply_bytes``. Not a transport failure: repeating the
    request would fetch the same reply, so the retry policy leaves it alone."""


def check_request(request: httpx.Request) -> None:
    """Raise ``httpx.LocalProtocolError`` for a request that would put a control character on the
    wire (a CR LF in a header value writes a header of the caller's choosing)."""
    if not _TOKEN.fullmatch(request.method.encode("latin-1", "replace")):
        raise httpx.LocalProtocolError(f"Illegal method {request.method!r}")
    names, values = zip(*request.headers.raw) if request.headers.raw else ((), ())
    if all(names) and not _NOT_TOKEN.search(b"".join(names)) \
            and not _NOT_FIELD_VALUE.search(b"".join(values)):
        return
    for name, value in request.headers.raw:  # say which one
        if not _TOKEN.fullmatch(name):
            raise httpx.LocalProtocolError(f"Illegal header name {name!r}")
        if _NOT_FIELD_VALUE.search(value):
            raise httpx.LocalProtocolError(f"Illegal header value for {name.decode('latin-1')!r}")


def _headers(request: httpx.Request) -> list[tuple[str, str]]:
    """The request's headers but framing, as text in httpx's encoding of them (worked out once:
    ``Headers.multi_items`` works it out again for every name and value)."""
    enc = request.headers.encoding
    return [(name.decode(enc), value.decode(enc)) for name, value in request.headers.raw
            if name.lower() not in _FRAMING]


def _timeouts(request: httpx.Request) -> tuple[float | None, float | None, float | None, float | None]:
    """(connect, read, write, pool) from httpx's per-request timeout extension."""
    t = request.extensions.get("timeout", {})
    return t.get("connect"), t.get("read"), t.get("write"), t.get("pool")


def _too_large(size: int | str, cap: int, decoded: bool = False) -> ReplyTooLarge:
    what = "decodes to" if decoded else "is"
    return ReplyTooLarge(f"the reply {what} {size} bytes, over the limit of {cap:,} bytes (max_reply_bytes)")


def _gather(parts: Iterable[bytes], cap: int) -> bytes:
    """A body that comes in parts (chunked, or ended by the close of the connection), refused as
    soon as it grows past ``cap`` bytes."""
    out, size = [], 0
    for part in parts:
        size += len(part)
        if size > cap:
            raise _too_large(f"over {size:,}", cap)
        out.append(part)
    return b"".join(out)


async def _agather(parts: AsyncIterable[bytes], cap: int) -> bytes:
    """The asyncio twin of :func:`_gather`."""
    out, size = [], 0
    async for part in parts:
        size += len(part)
        if size > cap:
            raise _too_large(f"over {size:,}", cap)
        out.append(part)
    return b"".join(out)


#: coded bytes handed to httpx's decoder at a time: gzip and deflate make at most about a thousand
#: bytes of one, so a step adds at most a few MiB before the decoded total is counted again
DECODE_STEP = 4 * 1024


class _Steps(httpx.SyncByteStream):
    """A body read whole, in steps of :data:`DECODE_STEP` bytes."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        view = memoryview(self.body)
        for start in range(0, len(view), DECODE_STEP):
            yield bytes(view[start:start + DECODE_STEP])


def _check_decoded(headers: httpx.Headers, body: bytes, cap: int) -> None:
    """Raise :class:`ReplyTooLarge` for a reply with a content coding whose body decodes to more than
    ``cap`` bytes: decoded by httpx's ``iter_bytes`` a step at a time, refused as soon as the decoded
    bytes pass ``cap``. One coding at most: a step of a reply coded twice could inflate a
    millionfold before it is counted."""
    codings = [c.strip().lower() for c in headers.get_list("content-encoding", split_commas=True)]
    if len([c for c in codings if c not in ("", "identity")]) > 1:
        raise httpx.DecodingError(f"the reply has more than one content coding ({', '.join(codings)}); "
                                  "svckit decodes one, so that max_reply_bytes counts what it decodes")
    size = 0
    for part in httpx.Response(200, headers=headers, stream=_Steps(body)).iter_bytes():
        size += len(part)
        if size > cap:
            raise _too_large(f"over {size:,}", cap, decoded=True)


def _response(status: int, headers: Any, body: bytes, cap: int = MAX_REPLY_BYTES) -> httpx.Response:
    """What a transport here returns for a reply read whole: a plain ``httpx.Response`` with the
    headers as the server sent them and the body as received, which httpx reads (and decodes) in
    ``Client.send``. A body with a content coding is first checked against ``cap`` as it decodes
    (:func:`_check_decoded`)."""
    response = httpx.Response(status, headers=headers, stream=httpx.ByteStream(body),
                              extensions={"http_version": b"HTTP/1.1"})
    if "content-encoding" in response.headers:
        _check_decoded(response.headers, body, cap)
    return response


class ReadWhole(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """httpx's own transport (``inner``: ``httpx.HTTPTransport`` or ``httpx.AsyncHTTPTransport``,
    through a SOCKS proxy, which the pools do not speak), its replies read whole and capped as the
    pools read theirs: refused past ``max_reply_bytes`` as received and as decoded."""

    proxied = True

    def __init__(self, inner: httpx.BaseTransport | httpx.AsyncBaseTransport,
                 max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        self.inner = inner
        self.max_reply_bytes = max_reply_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(self.inner, httpx.BaseTransport)
        response = self.inner.handle_request(request)
        with contextlib.closing(response):
            body = _gather(response.iter_raw(), self.max_reply_bytes)
        return _response(response.status_code, response.headers.raw, body, self.max_reply_bytes)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(self.inner, httpx.AsyncBaseTransport)
        response = await self.inner.handle_async_request(request)
        try:
            body = await _agather(response.aiter_raw(), self.max_reply_bytes)
        finally:
            await response.aclose()
        return _response(response.status_code, response.headers.raw, body, self.max_reply_bytes)

    def close(self) -> None:
        if isinstance(self.inner, httpx.BaseTransport):
            self.inner.close()

    async def aclose(self) -> None:
        if isinstance(self.inner, httpx.AsyncBaseTransport):
            await self.inner.aclose()


def ssl_context(verify: Verify = True) -> ssl.SSLContext:
    """The TLS settings httpx would use: with ``verify=True`` certifi's roots, or SSL_CERT_FILE /
    SSL_CERT_DIR where set; a CA bundle path (a file, or a hashed directory) trusts that alone, so
    an explicit ``verify`` wins over the environment. (httpx deprecates a path, with a warning, for
    the context made here from it.)"""
    if not isinstance(verify, str):
        return verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify=verify)
    try:
        if os.path.isdir(verify):
            return ssl.create_default_context(capath=verify)
        return ssl.create_default_context(cafile=verify)
    except (OSError, ssl.SSLError) as exc:  # FileNotFoundError, or a file that holds no certificate
        raise InvalidArgument("verify", f"cannot load the CA bundle {verify!r} ({exc}): pass the path of "
                              "the CA certificate (PEM) that signed the server's, or set SVC_CA_FILE to "
                              "it (`svckit sandbox --tls` prints its own)") from None


def env_proxy(url: str) -> str | None:
    """The proxy a request for ``url`` goes through by the environment (HTTP_PROXY, HTTPS_PROXY,
    ALL_PROXY, NO_PROXY), or None for straight to the host. Read with the standard library's
    ``urllib.request.getproxies`` and ``proxy_bypass``, which httpx reads the variables with too
    (a proxy without a scheme is an http:// one, as httpx has it); the conformance tests hold the two
    to the same choice. (One difference: httpx matches a NO_PROXY name that starts with a dot,
    ``.example.com``, on subdomains only; the standard library matches ``example.com`` itself too.)"""
    target = httpx.URL(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(target.scheme) or proxies.get("all")
    # the host with its port, and the host alone (how NO_PROXY names an IPv6 address: ::1)
    if not proxy or urllib.request.proxy_bypass(target.netloc.decode("ascii")) or urllib.request.proxy_bypass(target.host):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _proxy_parts(proxy: str) -> tuple[str, tuple[str, str] | None]:
    """A proxy URL without its credentials, and the credentials (httpx sends them as Basic auth)."""
    url = httpx.URL(proxy)
    if not url.username:
        return proxy, None
    return str(url.copy_with(username=None, password=None)), (url.username, url.password)


# -- threads: urllib3 ---------------------------------------------------------------------------------
def _sync_error(exc: Exception) -> httpx.TransportError:
    """urllib3's (and http.client's) error as the httpx error of the same meaning."""
    if isinstance(exc, urllib3.exceptions.ProxyError) and isinstance(exc.original_error, Exception):
        exc = exc.original_error  # "Unable to connect to proxy": what went wrong connecting to it
    if isinstance(exc, NewConnectionError):  # refused, unreachable, no such host: nothing was sent
        return httpx.ConnectError(str(exc))
    if isinstance(exc, ConnectTimeoutError):
        return httpx.ConnectTimeout(str(exc))
    if isinstance(exc, ReadTimeoutError):
        return httpx.ReadTimeout(str(exc))
    if isinstance(exc, EmptyPoolError):
        return httpx.PoolTimeout("no free connection within the pool timeout")
    if isinstance(exc, Urllib3SSLError):
        return httpx.ConnectError(f"TLS handshake failed: {exc}")
    cause = exc.args[1] if isinstance(exc, ProtocolError) and len(exc.args) > 1 else exc
    if isinstance(cause, TimeoutError):  # the socket timed out while the request was written
        return httpx.WriteTimeout(str(exc))
    if isinstance(cause, (ConnectionResetError, BrokenPipeError)):
        return httpx.ReadError(str(exc))
    return httpx.RemoteProtocolError(str(exc))


class SyncPool(httpx.BaseTransport):
    """``httpx.Client(transport=SyncPool())``: urllib3 2's keep-alive pool (at most
    ``max_connections`` per host; more requests wait up to httpx's pool timeout), http and https,
    straight or through an HTTP(S) ``proxy``. Shareable between threads. Writes are bounded by the
    connect timeout (urllib3 keeps it on the socket until the request is sent)."""

    def __init__(self, *, verify: Verify = True, max_connections: int = MAX_CONNECTIONS,
                 max_reply_bytes: int = MAX_REPLY_BYTES, proxy: str | None = None) -> None:
        self.max_connections = max_connections
        self.max_reply_bytes = max_reply_bytes
        self.proxied = proxy is not None  # (the proxy URL may carry a password: not kept in sight)
        options: dict[str, Any] = {"maxsize": max_connections, "block": True, "retries": False,
                                   "ssl_context": ssl_context(verify)}
        if proxy is None:
            self._manager = urllib3.PoolManager(**options)
        else:
            url, auth = _proxy_parts(proxy)
            headers = urllib3.make_headers(proxy_basic_auth=":".join(auth)) if auth else None
            self._manager = urllib3.ProxyManager(url, proxy_headers=headers, **options)
        self._timeouts: dict[tuple[float | None, float | None], urllib3.Timeout] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        check_request(request)
        connect, read, _, wait = _timeouts(request)
        url = request.url
        options: dict[str, Any] = {
            "body": request.read() or None, "headers": dict(_headers(request)), "redirect": False,
            "retries": False, "preload_content": False, "decode_content": False,
            "timeout": self._timeout(connect, read), "pool_timeout": wait}
        try:
            if self.proxied:  # the manager writes the request line and headers a proxy needs
                reply = self._manager.urlopen(request.method, str(url), assert_same_host=False, **options)
            else:  # straight to the host's pool: the manager would parse the URL again for each request
                pool = self._manager.connection_from_host(url.host, url.port, url.scheme)
                reply = pool.urlopen(request.method, url.raw_path.decode("ascii"), **options)
        except urllib3.exceptions.LocationValueError as exc:
            raise httpx.UnsupportedProtocol(str(exc)) from None
        except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException) as exc:
            raise _sync_error(exc) from None
        try:
            if 100 <= reply.status < 200:  # what http.client hands back of a 1xx reply but 100 Continue
                raise httpx.RemoteProtocolError(
                    f"an informational reply ({reply.status}) came where the answer was due: the sync "
                    "transport (urllib3 over http.client) cannot read past it")
            body = self._read(reply)
        except (ReplyTooLarge, httpx.RemoteProtocolError):
            reply.close()  # the rest stays unread: this connection cannot carry another request
            raise
        except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException) as exc:
            reply.close()
            raise _sync_error(exc) from None
        finally:
            reply.release_conn()
        return _response(reply.status, list(reply.headers.iteritems()), body, self.max_reply_bytes)

    def _timeout(self, connect: float | None, read: float | None) -> urllib3.Timeout:
        key = (connect, read)
        found = self._timeouts.get(key)
        if found is None:
            found = self._timeouts[key] = urllib3.Timeout(connect=connect, read=read)
        return found

    def _read(self, reply: urllib3.BaseHTTPResponse) -> bytes:
        cap = self.max_reply_bytes
        length = reply.length_remaining
        if length is not None:
            if length > cap:
                raise _too_large(length, cap)
            return reply.read()
        return _gather(reply.stream(64 * 1024), cap)

    def close(self) -> None:
        self._manager.clear()

    def __repr__(self) -> str:
        return f"SyncPool(max_connections={self.max_connections})"


# -- asyncio: aiohttp ---------------------------------------------------------------------------------
#: a body larger than this goes to aiohttp in parts of this size, each written within the write
#: timeout (one part fits in the transport's buffer, so a smaller body is never held by a write)
WRITE_CHUNK = 64 * 1024


async def _paced(body: bytes, stalled: asyncio.Timeout, write: float) -> AsyncIterator[bytes]:
    """``body`` in parts; aiohttp asks for the next part once it has written the last one, so the
    deadline moved forward at each part times each write."""
    loop = asyncio.get_running_loop()
    view = memoryview(body)
    for start in range(0, len(body), WRITE_CHUNK):
        stalled.reschedule(loop.time() + write)
        yield bytes(view[start:start + WRITE_CHUNK])
    stalled.reschedule(None)


async def _closed_with_loop(session: aiohttp.ClientSession) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await session.close()


#: aiohttp's errors, most specific first, as the httpx error of the same meaning
_ASYNC_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),  # waiting for a slot, or connecting
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),  # refused, unreachable, TLS handshake
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),  # a body cut short
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),  # bytes that are not an HTTP reply
    (aiohttp.ClientOSError, httpx.ReadError),
    (aiohttp.InvalidURL, httpx.UnsupportedProtocol),
    (aiohttp.ClientError, httpx.TransportError),
)


def _async_error(exc: aiohttp.ClientError) -> httpx.TransportError:
    kind = next(new for old, new in _ASYNC_ERRORS if isinstance(exc, old))
    return kind(str(exc) or type(exc).__name__)


class AsyncPool(httpx.AsyncBaseTransport):
    """``httpx.AsyncClient(transport=AsyncPool())``: aiohttp's keep-alive pool (at most
    ``max_connections`` per host; more requests wait up to httpx's pool timeout), http and https,
    straight or through an HTTP(S) ``proxy``.
    A pool belongs to the event loop that opened it; a request on another loop (a notebook's second
    ``asyncio.run``) opens a new one. Writes are bounded by the read timeout, which runs from the
    moment the request is handed to the connection."""

    def __init__(self, *, verify: Verify = True, max_connections: int = MAX_CONNECTIONS,
                 max_reply_bytes: int = MAX_REPLY_BYTES, proxy: str | None = None) -> None:
        self.max_connections = max_connections
        self.max_reply_bytes = max_reply_bytes
        self.proxied = proxy is not None
        self._ssl = ssl_context(verify)
        self._proxy: str | None = None
        auth: tuple[str, str] | None = None
        if proxy:
            self._proxy, auth = _proxy_parts(proxy)
        self._proxy_auth = aiohttp.BasicAuth(*auth) if auth else None
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: AsyncIterator[None] | None = None
        self._timeouts: dict[tuple[float | None, ...], aiohttp.ClientTimeout] = {}

    async def _new_session(self, loop: asyncio.AbstractEventLoop) -> aiohttp.ClientSession:
        """The pool of ``loop``: the first request on a loop opens it."""
        await self.aclose()
        connector = aiohttp.TCPConnector(limit=self.max_connections, ssl=self._ssl)
        self._session = session = aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False,
            skip_auto_headers=("Content-Type",), timeout=aiohttp.ClientTimeout(), raise_for_status=False)
        self._loop = loop
        # A loop run by asyncio.run (or an asyncio.Runner) closes every async generator still open
        # before it stops: this one closes the session then, while the loop can still do it, so a
        # notebook's second asyncio.run finds no connections left over from the first.
        self._keeper = _closed_with_loop(session)
        await anext(self._keeper)
        return session

    def _timeout(self, request: httpx.Request) -> aiohttp.ClientTimeout:
        key = _timeouts(request)
        found = self._timeouts.get(key)
        if found is None:
            connect, read, _, pool = key
            # aiohttp's "connect" is the time to get a connection: waiting for a free slot, then
            # opening one if needed; "sock_connect" bounds the opening alone
            found = aiohttp.ClientTimeout(connect=pool, sock_connect=connect, sock_read=read)
            self._timeouts[key] = found
        return found

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        check_request(request)
        loop = asyncio.get_running_loop()
        session = self._session if self._loop is loop and self._session else await self._new_session(loop)
        body = await request.aread()  # (read already: the content as it is)
        headers = _headers(request)
        write = _timeouts(request)[2]
        # httpx has encoded the URL already: yarl need not check it again
        send = functools.partial(session.request, request.method, yarl.URL(str(request.url), encoded=True),
                                 headers=headers, allow_redirects=False, compress=None, proxy=self._proxy,
                                 proxy_auth=self._proxy_auth, timeout=self._timeout(request))
        try:  # (a try, not a context manager: this is every request's path)
            if write is None or len(body) <= WRITE_CHUNK:
                reply = await send(data=body or None)
            else:
                # aiohttp times no write: a server that stops reading would hold the request
                # forever. Hand it the body in parts; each must be taken within the write timeout.
                headers.append(("Content-Length", str(len(body))))
                stalled = asyncio.timeout(None)
                try:
                    async with stalled:
                        reply = await send(data=_paced(body, stalled, write))
                except TimeoutError:
                    if stalled.expired():
                        raise httpx.WriteTimeout("timed out writing the request body") from None
                    raise  # one of aiohttp's own timeouts (they are TimeoutErrors too)
            try:
                content = await self._read(reply)
            except BaseException:
                reply.close()  # unread bytes may follow: this connection cannot carry another request
                raise
            reply.release()
        except aiohttp.ClientError as exc:
            raise _async_error(exc) from None
        return _response(reply.status, list(reply.raw_headers), content, self.max_reply_bytes)

    async def _read(self, reply: aiohttp.ClientResponse) -> bytes:
        cap = self.max_reply_bytes
        length = reply.content_length
        if length is not None:
            if length > cap:
                raise _too_large(length, cap)
            return await reply.read()
        return await _agather(reply.content.iter_any(), cap)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()
        # a session of another loop was closed with it (see _new_session), or cannot be closed here

    def __repr__(self) -> str:
        return f"AsyncPool(max_connections={self.max_connections})"


__all__ = ["MAX_CONNECTIONS", "MAX_REPLY_BYTES", "AsyncPool", "ReadWhole", "ReplyTooLarge", "SyncPool", "Verify",
           "check_request", "env_proxy", "ssl_context"]
