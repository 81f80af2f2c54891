"""Transport conformance: what HTTP/1.1 asks of a client, on every path svckit's clients take.

The paths (the ``path`` fixture): the sync and the async transport (svckit's pools: urllib3 for
threads, aiohttp for asyncio), each over http:// and https://, and through an HTTP proxy named in
the environment. Requests go in as svckit builds them (``ApiRequest``) and
come out as the retry policy sees them: an httpx response, or an httpx exception, before any retry.
The server is :class:`tests.scripted.Scripted`, which answers with exactly the bytes each case needs.
Pool mechanics (reuse, limits, cancellation, event loops) are in test_pools.py.
"""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import trustme

from svckit._http import ApiRequest, AsyncTransport, RetryPolicy, SyncTransport
from svckit._pools import AsyncPool, ReplyTooLarge, SyncPool
from tests.conftest import aeventually, eventually
from tests.scripted import OK, Scripted

PATHS = ["sync-http", "async-http", "sync-https", "async-https", "sync-proxy", "async-proxy"]
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
ONCE = RetryPolicy(attempts=1)


@pytest.fixture(scope="module")
def tls() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context): a certificate for 127.0.0.1 from a CA made for the test."""
    ca = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(server)
    client = ssl.create_default_context()
    ca.configure_trust(client)
    return server, client


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


class Caller:
    """Sends requests the way svckit's clients do, on one path; returns what the retry policy sees."""

    def __init__(self, kind: str, base_url: str, verify: ssl.SSLContext, **options: Any) -> None:
        self.kind = kind
        self.runner = asyncio.Runner() if kind == "async" else None
        cls = AsyncTransport if kind == "async" else SyncTransport
        self.t: Any = cls(base_url, retry=ONCE, timeout=2.0, verify=verify, **options)

    def __call__(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        request = ApiRequest(method, path, **kwargs).build(self.t._client)
        if self.runner is None:
            return self.t._exchange(request)
        return self.runner.run(self.t._exchange(request))

    def close(self) -> None:
        if self.runner is None:
            self.t.close()
        else:
            self.runner.run(self.t.aclose())
            self.runner.close()


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, tls: Any, no_proxy_env: pytest.MonkeyPatch) -> Iterator[Any]:
    """``(make, srv)``: ``make(**options)`` builds a :class:`Caller` on this path to ``srv``."""
    kind, how = request.param.split("-")
    srv = Scripted(tls[0] if how == "https" else None)
    if how == "proxy":
        no_proxy_env.setenv("HTTP_PROXY", srv.url)  # the scripted server plays the proxy and the origin
    made: list[Caller] = []

    def make(**options: Any) -> Caller:
        made.append(Caller(kind, srv.url, tls[1], **options))
        assert made[-1].t._pool.proxied == (how == "proxy")  # the path is the one named
        return made[-1]

    yield make, srv
    for caller in made:
        caller.close()
    if how == "proxy":
        assert srv.proxied == len(srv.heads)  # every request went through the proxy
    srv.stop()


# -- requests ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["method", "header name", "header value"])
@pytest.mark.parametrize("char", ["\r\n", "\r", "\n", "\x00"])
def test_control_characters_are_refused_before_anything_is_sent(path: Any, where: str, char: str) -> None:
    make, srv = path
    http = make()
    injected = f"x{char}Service-Injected: 1"
    method, headers = "POST", {"Service-Flow-Control-Key": "k"}
    if where == "method":
        method = f"POST{char}X"
    elif where == "header name":
        headers = {f"Service-Flow{char}Control-Key": "k"}
    else:
        headers = {"Service-Flow-Control-Key": injected}
    with pytest.raises(httpx.LocalProtocolError):
        http(method, "/ok", headers=headers)
    assert srv.heads == []  # not a byte of the request reached the server
    assert http("GET", "/ok").content == OK  # and the transport goes on


def test_a_folded_header_value_is_refused(path: Any) -> None:
    """``CR LF SP`` is obsolete line folding: http.client lets it through, a server may read a new line."""
    make, srv = path
    with pytest.raises(httpx.LocalProtocolError):
        make()("POST", "/ok", headers={"Service-Flow-Control-Key": "k\r\n Service-Injected: 1"})
    assert srv.heads == []


def test_control_characters_in_the_target_are_refused_when_the_url_is_made(path: Any) -> None:
    make, srv = path
    with pytest.raises(httpx.InvalidURL):
        make()("GET", "/GET/k\r\nService-Injected: 1")
    assert srv.heads == []


def _framing(head: bytes) -> list[str]:
    lines = head.decode("latin-1").lower().split("\r\n")
    return [line for line in lines if line.startswith(("content-length:", "transfer-encoding:"))]


@pytest.mark.parametrize("given", [{"Content-Length": "999"}, {"Content-Length": "1"},
                                   {"Transfer-Encoding": "chunked"},
                                   {"Transfer-Encoding": "chunked", "Content-Length": "3"}])
def test_framing_is_computed_from_the_body_never_both(path: Any, given: dict[str, str]) -> None:
    make, srv = path
    http = make()
    assert http("POST", "/echo", headers=given, content=b"abc").content == b"abc"
    assert _framing(srv.heads[-1]) == ["content-length: 3"]
    assert http("POST", "/echo", content=b"").content == b""
    assert _framing(srv.heads[-1]) in (["content-length: 0"], [])


# -- replies -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("route", ["/early-hints", "/continue"])
def test_informational_replies_are_skipped(path: Any, route: str) -> None:
    """aiohttp skips every 1xx reply before the answer. http.client (under urllib3, the sync pool)
    skips ``100 Continue`` only and hands a ``103 Early Hints`` back as the answer, with the answer
    unread behind it; nothing public reads past it, so the sync pool refuses it with a protocol
    error and drops that connection (issue 44: no private hook into http.client)."""
    make, _ = path
    http = make()
    if route == "/early-hints" and http.kind == "sync":
        with pytest.raises(httpx.RemoteProtocolError, match=r"informational reply \(103\)"):
            http("GET", route)
    else:
        reply = http("GET", route)
        assert (reply.status_code, reply.content) == (200, OK)
    assert http("GET", "/n").json() == {"n": 2}  # the connection is in step


@pytest.mark.parametrize("route", ["/extra", "/two"])
def test_bytes_after_a_reply_never_reach_the_next_request(path: Any, route: str) -> None:
    """A reply followed by bytes nobody asked for (a partial reply, or a whole second one in the same
    packet): the request gets the first reply, and the next request gets its own."""
    make, _ = path
    http = make()
    first = http("GET", route)
    assert first.content in (OK, b'{"reply":1}')
    assert http("GET", "/n").json() == {"n": 2}
    assert http("GET", "/n").json() == {"n": 3}


def test_a_body_ended_by_closing_the_connection_is_read(path: Any) -> None:
    make, srv = path
    http = make()
    assert http("GET", "/eof-body").json() == {"result": "OK"}
    assert http("GET", "/ok").content == OK
    assert srv.connections == 2


@pytest.mark.parametrize("route", ["/cut", "/garbage"])
def test_a_reply_cut_short_or_not_http_is_a_protocol_error(path: Any, route: str) -> None:
    make, _ = path
    http = make()
    with pytest.raises(httpx.RemoteProtocolError):
        http("GET", route)
    assert http("GET", "/ok").content == OK


def test_chunked_gzip_and_head_replies(path: Any) -> None:
    make, _ = path
    http = make()
    assert http("GET", "/chunked").json() == {"result": "chunked"}
    assert http("GET", "/gzip").json() == {"result": "unzipped"}  # httpx decodes; the pools pass bytes on
    head = http("HEAD", "/ok")
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(OK))
    assert http("GET", "/ok").content == OK


@pytest.mark.parametrize("route", ["/big", "/big-chunked", "/big-eof"])
def test_a_reply_over_the_size_cap_is_refused_and_not_retried(path: Any, route: str) -> None:
    make, _ = path
    http = make(max_reply_bytes=100_000)
    assert len(http("GET", f"{route}?n=100000").content) == 100_000  # at the cap: read
    with pytest.raises(ReplyTooLarge, match="over the limit of 100,000 bytes"):
        http("GET", f"{route}?n=300000")
    assert http("GET", "/ok").content == OK
    assert not ONCE.may_retry(ApiRequest("GET", "/", idempotent=True), ReplyTooLarge("x"), None)


# -- connections ---------------------------------------------------------------------------------------
@pytest.fixture
def many_files() -> Iterator[None]:
    """1,100 more open descriptors, so that the next sockets are numbered past 1024 (select() cannot
    watch those: a pool that polls with it stops reusing connections, or fails)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        yield
    finally:
        for fd in fds:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_idle_connections_past_descriptor_1024_are_reused_and_dropped_when_stale(path: Any, many_files: None) -> None:
    make, srv = path
    http = make()
    assert [http("GET", "/n").json()["n"] for _ in range(3)] == [1, 2, 3]
    assert srv.connections == 1  # kept alive and reused
    srv.close_idle()  # the server closes the idle connection, as servers do after a while
    assert http("GET", "/ok").content == OK  # noticed before reuse: a new connection, no error
    assert srv.connections == 2


# -- timeouts ------------------------------------------------------------------------------------------
def test_read_timeout(path: Any) -> None:
    make, _ = path
    http = make()
    with pytest.raises(httpx.ReadTimeout):
        http("GET", "/hang", timeout=0.3)
    assert http("GET", "/ok").content == OK


def test_write_timeout_when_the_server_does_not_read(path: Any) -> None:
    """64 MiB to a server that never reads them: the send stops within the timeout, with httpx's
    timeout error (the pools bound a stalled write by the connect or read timeout: see _pools.py)."""
    make, _ = path
    with pytest.raises(httpx.TimeoutException):
        make()("POST", "/no-read", content=b"x" * (64 << 20), timeout=0.5)


def test_connect_timeout(path: Any, tls: Any, no_proxy_env: pytest.MonkeyPatch) -> None:
    """A listener whose accept queue is full never completes a new connection: connecting times out,
    and httpx says so (the retry policy may repeat it: nothing was sent)."""
    make, srv = path
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    filler = socket.create_connection(full.getsockname())  # takes the one place in the queue
    try:
        target = f"http{'s' if srv.url.startswith('https') else ''}://127.0.0.1:{full.getsockname()[1]}"
        if srv.url.startswith("http://") and os.environ.get("HTTP_PROXY"):
            no_proxy_env.setenv("HTTP_PROXY", target)  # the proxy itself does not answer
            target = srv.url
        http = Caller(make().kind, target, tls[1])
        try:
            with pytest.raises(httpx.ConnectTimeout):
                http("GET", "/ok", timeout=0.5)
            assert ONCE.may_retry(ApiRequest("POST", "/"), httpx.ConnectTimeout("x"), None)
        finally:
            http.close()
    finally:
        filler.close()
        full.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_pool_timeout_when_every_connection_is_busy(kind: str) -> None:
    """The pools' own limit (httpx's proxy path has its own pool: httpx.Limits)."""
    srv = Scripted()
    try:
        if kind == "sync":
            from concurrent.futures import ThreadPoolExecutor

            with httpx.Client(transport=SyncPool(max_connections=1)) as http, ThreadPoolExecutor(1) as pool:
                hanging = pool.submit(http.get, f"{srv.url}/hang", timeout=1.0)
                eventually(lambda: srv.heads, "the first request reached the server", 10)
                with pytest.raises((httpx.PoolTimeout, httpx.ConnectTimeout)):
                    http.get(f"{srv.url}/ok", timeout=httpx.Timeout(5.0, pool=0.2))
                with pytest.raises(httpx.ReadTimeout):
                    hanging.result()
        else:
            async def main() -> None:
                async with httpx.AsyncClient(transport=AsyncPool(max_connections=1)) as http:
                    hanging = asyncio.create_task(http.get(f"{srv.url}/hang", timeout=1.0))
                    await aeventually(lambda: srv.heads, "the first request reached the server", 10)
                    with pytest.raises((httpx.PoolTimeout, httpx.ConnectTimeout)):
                        await http.get(f"{srv.url}/ok", timeout=httpx.Timeout(5.0, pool=0.2))
                    with pytest.raises(httpx.ReadTimeout):
                        await hanging
            asyncio.run(main())
    finally:
        srv.stop()


# -- proxies -------------------------------------------------------------------------------------------
ENVIRONMENTS = [
    {},
    {"HTTP_PROXY": "{proxy}"},
    {"HTTP_PROXY": "{proxy}", "NO_PROXY": "127.0.0.1"},
    {"HTTP_PROXY": "{proxy}", "NO_PROXY": "localhost"},
    {"HTTP_PROXY": "{proxy}", "NO_PROXY": "*"},
    {"ALL_PROXY": "{proxy}"},
    {"ALL_PROXY": "{proxy}", "NO_PROXY": "127.0.0.1:{port}"},
    {"HTTPS_PROXY": "{proxy}"},
    {"https_proxy": "{proxy}", "http_proxy": "{proxy}"},
]


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda e: ",".join(e) or "none")
def test_proxies_from_the_environment_are_used_as_httpx_uses_them(
        kind: str, scheme: str, env: dict[str, str], tls: Any, no_proxy_env: pytest.MonkeyPatch) -> None:
    """Each request goes where a plain httpx client in the same environment sends it: to the proxy
    (a plain request in absolute form, or a CONNECT tunnel for https) or straight to the server."""
    proxy, origin = Scripted(), Scripted(tls[0] if scheme == "https" else None)
    try:
        for name, value in env.items():
            no_proxy_env.setenv(name, value.format(proxy=proxy.url, port=origin.port))
        seen = []
        for client in ("httpx", "svckit"):
            before = (len(proxy.heads), len(origin.heads))
            try:
                if client == "httpx":
                    with httpx.Client(verify=tls[1], timeout=2.0) as plain:
                        plain.get(f"{origin.url}/ok")
                else:
                    http = Caller(kind, origin.url, tls[1])
                    try:
                        http("GET", "/ok")
                    finally:
                        http.close()
            except httpx.HTTPError:
                pass  # the scripted proxy does not tunnel: what matters is where the request went
            seen.append((len(proxy.heads) - before[0], len(origin.heads) - before[1]))
        assert seen[0] == seen[1]
        assert seen[0] in ((1, 0), (0, 1))
    finally:
        proxy.stop()
        origin.stop()
