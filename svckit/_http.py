"""One transport for every client: auth, timeouts, retry policy, secret redaction, SSE reading.

Protocol code builds an :class:`ApiRequest` (a plain description: method, path, params, headers,
body, and whether repeating it is safe); :class:`SyncTransport` and :class:`AsyncTransport` send it
over one pooled httpx client each. Clients never talk to httpx directly, so the retry rules and the
redaction live here once.

Retry rules (:class:`RetryPolicy`):
- a connection that could not be opened (connect error / connect timeout) is always retried: the
  request never reached the server, so repeating it cannot apply a command twice; but a server
  certificate that failed verification is not (the same certificate comes back every time): it
  raises :class:`~svckit.errors.UntrustedCertificate` at once, saying how to trust it;
- a reset connection, a read timeout, a truncated body or a 5xx status are retried only when the
  request is idempotent, or when the caller asked for it (``retry_non_idempotent=True``): the server
  may have executed it already;
- waits grow exponentially with full jitter, capped at ``max_backoff``; a retried status that carries
  ``Retry-After`` (a 503 while the service restarts a part) waits at least that long, up to
  ``max_retry_after``: a server that asks for longer gets its answer returned instead of a wait.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import email.utils
import http.cookiejar
import itertools
import random
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from svckit._pools import (
    MAX_REPLY_BYTES,
    AsyncPool,
    ReadWhole,
    SyncPool,
    Verify,
    env_proxy,
    ssl_context,
)
from svckit._version import __version__
from svckit.errors import (
    ProtocolError,
    RequestTimeout,
    StreamClosed,
    StreamRefused,
    TransportError,
    UntrustedCertificate,
    error_for_status,
    mask,
)

if TYPE_CHECKING:
    from typing import Self

DEFAULT_TIMEOUT = 10.0
USER_AGENT = f"svckit/{__version__}"


def certificate_rejected(error: BaseException) -> bool:
    """Whether ``error`` comes of a server certificate that failed verification: raised while
    ssl's error was handled, by the pools (urllib3's and aiohttp's errors become httpx's there) or
    by httpx's own transport (httpcore's error, then httpx's), which sends the event streams."""
    cause: BaseException | None = error
    for _ in range(16):  # a bound: a chain made by hand may loop
        if cause is None:
            return False
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a request is repeated after a transient failure."""

    attempts: int = 3
    backoff: float = 0.05
    max_backoff: float = 2.0
    statuses: frozenset[int] = frozenset({500, 502, 503, 504})
    retry_non_idempotent: bool = False
    max_retry_after: float = 10.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts: must be at least 1")

    def delay(self, attempt: int) -> float:
        """Seconds to wait before try number ``attempt + 1`` (attempt counts from 1)."""
        cap = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return random.uniform(0, cap)

    def may_retry(self, request: ApiRequest, error: BaseException | None, status: int | None) -> bool:
        if error is not None and certificate_rejected(error):
            return False
        if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout)):
            return True
        safe = request.idempotent or self.retry_non_idempotent
        if error is not None:
            return safe and isinstance(error, httpx.TransportError)
        return safe and status in self.statuses


def retry_after(response: httpx.Response) -> float | None:
    """The seconds a response's ``Retry-After`` asks to wait (delay-seconds or an HTTP date), or None."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


class Auth:
    """Credentials for a request; their repr never shows the secret."""

    def header(self) -> str:
        raise NotImplementedError

    def secrets(self) -> tuple[str, ...]:
        raise NotImplementedError


class BearerAuth(Auth):
    def __init__(self, token: str) -> None:
        self._token = token

    def header(self) -> str:
        return f"Bearer {self._token}"

    def secrets(self) -> tuple[str, ...]:
        return (self._token,)

    def __repr__(self) -> str:
        return f"BearerAuth({mask(self._token)})"


class BasicAuth(Auth):
    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self._password = password

    def header(self) -> str:
        raw = f"{self.username}:{self._password}".encode()
        return "Basic " + base64.b64encode(raw).decode("ascii")

    def secrets(self) -> tuple[str, ...]:
        return (self._password, self.header().split(" ", 1)[1])

    def __repr__(self) -> str:
        return f"BasicAuth({self.username!r}, {mask(self._password)})"


def join_url(base: httpx.URL, path: str) -> httpx.URL:
    """``base`` with ``path`` after it, one "/" between them, parsed by httpx as one URL (so "." and
    ".." segments are resolved, and a "?" starts the query, as in ``httpx.URL(f"{base}/{path}")``)."""
    return httpx.URL(f"{str(base).rstrip('/')}/{path.lstrip('/')}")


@dataclass
class ApiRequest:
    """A transport-neutral description of one HTTP request."""

    method: str
    path: str
    params: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    idempotent: bool = False
    timeout: float | None = None

    def build(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The httpx request, with the client's base URL, headers and timeout (``client.build_request``);
        a path is joined to the base URL as :func:`join_url` joins it, an absolute URL is taken as it is."""
        url = self.path if "://" in self.path else join_url(client.base_url, self.path)
        return client.build_request(self.method, url, params=self.params, headers=self.headers or None,
                                    content=self.content, json=self.json,
                                    timeout=httpx.USE_CLIENT_DEFAULT if self.timeout is None else self.timeout)


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every secret in ``text`` with its masked form."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, mask(secret))
    return text


def decode_json_reply(response: httpx.Response, what: str, redact: Callable[[str], str] = str) -> Any:
    """The JSON body of a 2xx reply, or the matching APIError for an error status: the one envelope
    decoder of the JSON interfaces (areas B, C and D).

    Error bodies are ``{"error": "..."}`` (docs/errors.md); anything else is shown as text, redacted,
    so a misbehaving proxy cannot leak a secret into a traceback.
    """
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = None
        if response.status_code < 400:
            raise ProtocolError(f"{what}: reply is not JSON: {redact(response.text[:200])!r}") from None
    if response.status_code >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        if not isinstance(message, str):
            message = redact(response.text[:200]) or response.reason_phrase
        raise error_for_status(response.status_code, redact(message), body, what=what)
    return body


#: how to trust a server whose certificate failed verification
_TRUST_HINT = (" (the server's certificate is not signed by a CA this client trusts, or names another host: "
               "pass verify= the CA bundle that signed it, or set SVC_CA_FILE to it; `svckit sandbox --tls` "
               "prints its own. SSL_CERT_FILE / SSL_CERT_DIR apply where verify= is not given)")


def _wrap(error: httpx.HTTPError, secrets: tuple[str, ...], what: str) -> TransportError:
    cls: type[TransportError] = TransportError
    hint = ""
    if isinstance(error, httpx.TimeoutException):
        cls, hint = RequestTimeout, " (is the server running? try a longer timeout=)"
    elif certificate_rejected(error):
        cls, hint = UntrustedCertificate, _TRUST_HINT
    # ``what`` names the URL, which may carry the token too (a pasted ``https://default:TOKEN@host``)
    return cls(redact(f"{what} failed: {type(error).__name__}: {error}", secrets) + hint)


class _NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that takes none: svckit's clients keep no cookies (the services set none; one a
    proxy sets is not sent back), and the jar's reading of each reply's headers was a tenth of the
    CPU httpx spends on a request."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


def _client_kwargs(base_url: str, auth: Auth | None, timeout: float | None, headers: Mapping[str, str] | None,
                   verify: ssl.SSLContext) -> dict[str, Any]:
    hdrs = {"User-Agent": USER_AGENT, **(headers or {})}
    if auth is not None:
        hdrs["Authorization"] = auth.header()
    return {"base_url": base_url.rstrip("/"), "headers": hdrs, "timeout": timeout, "verify": verify,
            "cookies": _NoCookies()}


def _pool(cls: type[SyncPool | AsyncPool], proxied: type[httpx.HTTPTransport | httpx.AsyncHTTPTransport],
          base_url: str, verify: ssl.SSLContext, max_reply_bytes: int) -> SyncPool | AsyncPool | ReadWhole:
    """The transport for ``base_url``: the pool ``cls``, straight or through the HTTP(S) proxy the
    environment names for it; through a SOCKS proxy, which the pools do not speak, httpx's own
    transport (``proxied``), its replies read whole as the pools read theirs."""
    proxy = env_proxy(base_url)
    if proxy is None or httpx.URL(proxy).scheme in ("http", "https"):
        return cls(proxy=proxy, verify=verify, max_reply_bytes=max_reply_bytes)
    return ReadWhole(proxied(verify=verify, proxy=proxy), max_reply_bytes)


class _TransportBase:
    """What the sync and async transports share: one constructor over their httpx client class and
    pool class, the retry verdict, and redaction."""

    _client_class: type[httpx.Client | httpx.AsyncClient]
    _pool_class: type[SyncPool | AsyncPool]
    _proxied_class: type[httpx.HTTPTransport | httpx.AsyncHTTPTransport]

    def __init__(
        self,
        base_url: str,
        auth: Auth | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None = None,
        verify: Verify = True,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.auth = auth
        self.retry = retry or RetryPolicy()
        self.max_reply_bytes = max_reply_bytes
        self._secrets = auth.secrets() if auth else ()
        tls = ssl_context(verify)  # one TLS context (loading the CA roots once) for httpx and the pool
        options = _client_kwargs(base_url, auth, timeout, headers, tls)
        self._pool: Any = transport or _pool(self._pool_class, self._proxied_class, self.base_url, tls,
                                             max_reply_bytes)
        # builds and sends every request, over the pool (or the transport given)
        self._client: Any = self._client_class(transport=self._pool, **options)
        # sends the event streams, which stay open: over the transport given, or else the client's own
        # transport (through the proxy the environment names), as the pools read every reply whole
        self._streams: Any = self._client if transport else self._client_class(**options)

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _after_attempt(self, attempt: int, request: ApiRequest, response: httpx.Response | None,
                       error: httpx.HTTPError | None, what: str) -> float | httpx.Response:
        """The retry policy's verdict on one attempt, shared by the sync and async loops: seconds to
        wait before the next attempt, or the response to return (a final error is raised here)."""
        status = response.status_code if response is not None else None
        if attempt < self.retry.attempts and self.retry.may_retry(request, error, status):
            asked = retry_after(response) if response is not None else None
            if asked is None:
                return self.retry.delay(attempt)
            if asked <= self.retry.max_retry_after:
                return max(asked, self.retry.delay(attempt))
        if error is not None:
            raise _wrap(error, self._secrets, what) from None
        assert response is not None
        return response

    def _stream_retry(self, attempt: int, request: ApiRequest, error: httpx.HTTPError) -> float:
        """Opening a stream failed: seconds to wait before trying again, or the error, raised."""
        outcome = self._after_attempt(attempt, request, None, error, f"opening stream {self.base_url}")
        assert not isinstance(outcome, httpx.Response)
        return outcome

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r}, auth={self.auth!r})"


class SyncTransport(_TransportBase):
    """Sends :class:`ApiRequest` objects with one ``httpx.Client`` (``build_request``, ``send``) whose
    transport is :class:`~svckit._pools.SyncPool` (urllib3's keep-alive pool; http and https; through
    the proxy the environment names), or the ``transport`` given. Event streams go through a second
    ``httpx.Client`` on httpx's own transport (they stay open; the pool reads replies whole), and
    requests through a SOCKS proxy through httpx's own transport too. ``verify`` is httpx's: True
    (certifi's roots), a CA bundle path, an ``ssl.SSLContext``, or False. A reply body over
    ``max_reply_bytes`` (counted as received, and again as decoded: a gzip reply is counted as it
    inflates) is refused (:class:`~svckit._pools.ReplyTooLarge`, not retried)."""

    _client_class = httpx.Client
    _pool_class = SyncPool
    _proxied_class = httpx.HTTPTransport

    def _exchange(self, request: httpx.Request) -> httpx.Response:
        """One attempt: the response, read whole."""
        return self._client.send(request)

    def send(self, request: ApiRequest) -> httpx.Response:
        """Send with retries; the returned response is fully read. Error statuses are returned, not raised."""
        for attempt in itertools.count(1):
            try:
                response, error = self._exchange(request.build(self._client)), None
            except httpx.HTTPError as exc:
                response, error = None, exc
            outcome = self._after_attempt(attempt, request, response, error, f"{request.method} {self.base_url}")
            if isinstance(outcome, httpx.Response):
                return outcome
            time.sleep(outcome)
        raise AssertionError("unreachable")

    def stream_lines(self, request: ApiRequest) -> EventStream:
        """Open a Server-Sent Events stream now; iterate the returned :class:`EventStream` for each
        event's ``data`` payload.

        Opening follows the retry policy (opening is safe to repeat) and raises
        :class:`StreamRefused` for an HTTP error status. The request's timeout covers opening (connect,
        send, the response headers); once open, the stream waits for each event as long as it takes.
        ``EventStream.close()`` may be called from any thread, also while another thread is blocked
        reading it.
        """
        for attempt in itertools.count(1):
            try:
                response = self._streams.send(request.build(self._streams), stream=True)
                break
            except httpx.HTTPError as exc:
                time.sleep(self._stream_retry(attempt, request, exc))
        if response.status_code >= 400:
            with contextlib.suppress(httpx.HTTPError):  # the status alone still says why
                response.read()
            response.close()
            raise StreamRefused(response)
        _open_ended(response)
        return EventStream(response, self._secrets)

    def close(self) -> None:
        self._client.close()  # and its transport: the pool, or the one given
        self._streams.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncTransport(_TransportBase):
    """The asyncio counterpart of :class:`SyncTransport`, over :class:`~svckit._pools.AsyncPool`
    (aiohttp's keep-alive pool; http and https) or the ``transport`` given."""

    _client_class = httpx.AsyncClient
    _pool_class = AsyncPool
    _proxied_class = httpx.AsyncHTTPTransport

    async def _exchange(self, request: httpx.Request) -> httpx.Response:
        return await self._client.send(request)

    async def send(self, request: ApiRequest) -> httpx.Response:
        for attempt in itertools.count(1):
            try:
                response, error = await self._exchange(request.build(self._client)), None
            except httpx.HTTPError as exc:
                response, error = None, exc
            outcome = self._after_attempt(attempt, request, response, error, f"{request.method} {self.base_url}")
            if isinstance(outcome, httpx.Response):
                return outcome
            await asyncio.sleep(outcome)
        raise AssertionError("unreachable")

    def stream_lines(self, request: ApiRequest) -> AsyncEventStream:
        """The asyncio counterpart of :meth:`SyncTransport.stream_lines`: the returned
        :class:`AsyncEventStream` opens at its first ``__anext__`` (or ``await stream.open()``),
        with the same retry policy, and raises :class:`StreamRefused` then for an error status."""
        return AsyncEventStream(self, request)

    async def _open_stream(self, request: ApiRequest) -> httpx.Response:
        for attempt in itertools.count(1):
            try:
                response = await self._streams.send(request.build(self._streams), stream=True)
                break
            except httpx.HTTPError as exc:
                await asyncio.sleep(self._stream_retry(attempt, request, exc))
        if response.status_code >= 400:
            with contextlib.suppress(httpx.HTTPError):
                await response.aread()
            await response.aclose()
            raise StreamRefused(response)
        _open_ended(response)
        return response

    async def aclose(self) -> None:
        await self._client.aclose()  # and its transport: the pool, or the one given
        await self._streams.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _open_ended(response: httpx.Response) -> None:
    """An open event stream waits for its next event as long as it takes: the request's read timeout
    covered its response headers only (a server that accepts and never answers is a RequestTimeout,
    not a hang; an error reply's body is read within it too). httpx hands the request's extensions
    to httpcore as the same dict, and httpcore reads the body's read timeout from it when the body
    is read, that is after this (tests/test_stream_open_faults.py holds it to that)."""
    timeouts = response.request.extensions.get("timeout")
    if isinstance(timeouts, dict):
        response.request.extensions["timeout"] = {**timeouts, "read": None}


def _broke(error: BaseException, secrets: tuple[str, ...]) -> StreamClosed:
    return StreamClosed(redact(f"event stream broke: {type(error).__name__}: {error}", secrets))


class EventStream:
    """An open Server-Sent Events stream (sync): iterating yields each event's ``data`` payload.

    ``close()`` is safe from any thread, at any time, any number of times. Closing while another
    thread is blocked in ``next()`` shuts the socket down, so that read returns at once; a reader
    of a stream closed on purpose ends with ``StopIteration`` (a ``for`` loop just stops), whereas
    a stream that broke by itself raises :class:`~svckit.errors.StreamClosed`.
    """

    def __init__(self, response: httpx.Response, secrets: tuple[str, ...] = ()) -> None:
        from httpx_sse import EventSource

        self._response = response
        self._secrets = secrets
        self._events = EventSource(response).iter_sse()
        self._lock = threading.Lock()
        self._closed = False    # close() was called, or the stream ended
        self._reading = False   # a thread is inside next(self._events)
        self._released = False  # the response was closed

    @property
    def closed(self) -> bool:
        return self._closed

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> str:
        with self._lock:
            if self._closed:
                self._release()
                raise StopIteration
            self._reading = True
        try:
            event = next(self._events)
        except StopIteration:
            self._end()
            raise
        except Exception as exc:
            if self._end():  # closed on purpose: whatever the interrupted read raised is expected
                raise StopIteration from None
            if isinstance(exc, httpx.HTTPError):
                raise _broke(exc, self._secrets) from None
            raise
        with self._lock:
            self._reading = False
            if self._closed:  # closed while this event arrived: the caller asked for no more
                self._release()
                raise StopIteration
        return event.data

    def _end(self) -> bool:
        """The stream is over (it ended, broke or was interrupted): release the response. True when
        close() had been called, so the reader stops quietly."""
        with self._lock:
            self._reading = False
            requested = self._closed
            self._closed = True
            self._release()
        return requested

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if not self._reading:
                self._release()
                return
        # A thread is blocked in a read: wake it; it releases the response itself on its way out
        # (closing the response here would race with the connection pool in that thread).
        self._interrupt()

    def _release(self) -> None:
        # called with self._lock held
        if not self._released:
            self._released = True
            with contextlib.suppress(Exception):  # a connection that is already gone
                self._response.close()

    def _interrupt(self) -> None:
        stream = self._response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            try:
                # socket.socket.shutdown also on an SSLSocket: wakes the blocked recv with EOF
                # without touching the TLS state the reading thread is using.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
                return
            except OSError:
                pass
        # no socket to shut down (a mock or custom transport): closing the response is the best
        # remaining way to end the read
        with self._lock:
            self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncEventStream:
    """An asyncio Server-Sent Events stream: ``async for data in stream``; it opens at the first
    ``__anext__`` (or ``await stream.open()``). ``await aclose()`` ends it: a reader of a stream
    closed on purpose ends with ``StopAsyncIteration``, one that broke by itself raises
    :class:`~svckit.errors.StreamClosed`. (Cancel the reading task to interrupt a pending read.)
    """

    def __init__(self, transport: AsyncTransport, request: ApiRequest) -> None:
        self._transport = transport
        self._request = request
        self._response: Any = None  # the open stream's response
        self._events: AsyncIterator[Any] | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def open(self) -> Self:
        """Open the stream now (no-op when open); raises :class:`StreamRefused` for an error status."""
        if self._events is None and not self._closed:
            from httpx_sse import EventSource

            self._response = await self._transport._open_stream(self._request)
            self._events = EventSource(self._response).aiter_sse()
        return self

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        await self.open()
        if self._closed or self._events is None:
            raise StopAsyncIteration
        try:
            event = await self._events.__anext__()
        except StopAsyncIteration:
            await self.aclose()
            raise
        except Exception as exc:
            closed, self._closed = self._closed, True
            await self._release()
            if closed:
                raise StopAsyncIteration from None
            if isinstance(exc, httpx.HTTPError):
                raise _broke(exc, self._transport._secrets) from None
            raise
        if self._closed:
            raise StopAsyncIteration
        return event.data

    async def aclose(self) -> None:
        self._closed = True
        await self._release()

    async def _release(self) -> None:
        response, self._response = self._response, None
        if response is not None:
            with contextlib.suppress(Exception):  # a connection that is already gone
                await response.aclose()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
