"""Opening an event stream (``KV.monitor()`` / ``subscribe()``, sync and async) against a real socket
that misbehaves before the stream's response headers: the connection is reset, closed without an
answer or refused, the connect is never completed, or the server accepts and never answers. Each
comes out as svckit's TransportError / RequestTimeout naming what failed, with its hint and without
the token, retried as the policy says (opening is safe to repeat), and the client stays usable."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import pytest

from svckit._http import RetryPolicy
from svckit.errors import RequestTimeout, SvcError, TransportError
from svckit.kv import KV, AsyncKV
from tests.faults import FaultServer, client_stays

TOKEN = "tok_stream_open_SECRET_1234"
RETRY = RetryPolicy(attempts=3, backoff=0.01)
#: where the test waits for the timeout: a server that never answers, a connect never completed
TIMEOUT = 0.3
#: where the server answers: a timeout would be the loaded machine's, never the behaviour under test
ANSWERED = 10.0
#: the open stream that waits for events longer than its timeout: the server answers at once and then
#: pauses twice this long between two events
LATE = 1.5
TIMEOUT_HINT = "(is the server running? try a longer timeout=)"


def _events(sock: socket.socket, *events: bytes, pause: float = 0.0) -> None:
    """A 200 event stream of ``events``, the server pausing up to ``pause`` seconds between two (and
    ending the stream if the client hangs up meanwhile)."""
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    for i, event in enumerate(events):
        if i and pause and not client_stays(sock, pause):
            return
        data = b"data: %s\n\n" % event
        sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))
    sock.sendall(b"0\r\n\r\n")


class DroppingServer(FaultServer):
    """A FaultServer with two more faults: ``drop`` reads the request and closes the connection
    (FIN) without a byte of answer, a server that gives up before its response headers; ``sub``
    answers a subscription (its confirmation and one message)."""

    def _answer(self, sock: socket.socket, fault: str) -> bool:
        if fault == "drop":
            sock.close()
            return False
        if fault == "sub":
            _events(sock, b"subscribe,news,1", b"message,news,hello")
            return True
        return super()._answer(sock, fault)


@pytest.fixture
def server() -> Iterator[DroppingServer]:
    with DroppingServer() as srv:
        yield srv


class Silent:
    """A listening socket on loopback that accepts connections and never answers (until closed)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept()
        self._listener.close()
        self._thread.join(5)
        for conn in self.accepted:
            conn.close()


class Unreachable:
    """A port whose connects are never completed: a listener that accepts nothing, its accept queue
    (backlog 0) filled by one connection, so the kernel drops the next SYNs and a connect times out."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)
        port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._fillers = []
        for _ in range(2):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            self._fillers.append(filler)

    def close(self) -> None:
        for sock in [*self._fillers, self._listener]:
            sock.close()


def _refused_url() -> str:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return f"http://127.0.0.1:{sock.getsockname()[1]}"  # closed again: nothing listens there


def _client_sockets() -> int:
    """Sockets this process holds open."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def _says(error: SvcError, *parts: str) -> None:
    text = str(error)
    assert TOKEN not in text and TOKEN not in repr(error)
    for part in parts:
        assert part in text, text


def _usable(kv: KV[str], server: FaultServer) -> None:
    """The client that failed to open a stream still sends a command, and opens a stream."""
    server.play("ok")
    assert kv.execute("PING") == "OK"
    server.play("sse")
    with kv.monitor(timeout=ANSWERED) as monitor:
        assert not monitor.closed


async def _ausable(akv: AsyncKV[str], server: FaultServer) -> None:
    server.play("ok")
    assert await akv.execute("PING") == "OK"
    server.play("sse")
    async with akv.monitor(timeout=ANSWERED) as monitor:
        assert monitor is not None


# -- the connection is reset, or closed, before the response headers ------------------------------
@pytest.mark.parametrize("fault", ["reset", "drop"])
def test_a_stream_whose_every_open_is_cut_off_raises_transport_error_and_the_client_goes_on(server, fault):
    server.script.extend([fault] * RETRY.attempts)
    with KV(server.url, TOKEN, retry=RETRY) as kv:
        before = _client_sockets()
        with pytest.raises(TransportError) as info:
            kv.monitor(timeout=ANSWERED)
        assert not isinstance(info.value, RequestTimeout)
        _says(info.value, f"opening stream {server.url} failed", "Error")
        assert server.requests == ["POST /monitor HTTP/1.1"] * RETRY.attempts  # retried, then given up
        assert _client_sockets() <= before  # no connection of the failed attempts is left open
        _usable(kv, server)


@pytest.mark.parametrize("fault", ["reset", "drop"])
def test_a_subscription_cut_off_once_is_opened_by_the_retry(server, fault):
    server.script.extend([fault, "sub"])
    with KV(server.url, TOKEN, retry=RETRY) as kv, kv.subscribe("news", timeout=ANSWERED) as sub:
        assert [m.data for m in sub] == [None, "hello"]
    assert len(server.requests) == 2


@pytest.mark.parametrize("fault", ["reset", "drop"])
async def test_async_a_stream_whose_every_open_is_cut_off_raises_transport_error(server, fault):
    server.script.extend([fault] * RETRY.attempts)
    async with AsyncKV(server.url, TOKEN, retry=RETRY) as akv:
        with pytest.raises(TransportError) as info:
            async with akv.subscribe("news", timeout=ANSWERED):
                pass
        assert not isinstance(info.value, RequestTimeout)
        _says(info.value, f"opening stream {server.url} failed", "Error")
        assert len(server.requests) == RETRY.attempts
        await _ausable(akv, server)


async def test_async_a_monitor_cut_off_once_is_opened_by_the_retry(server):
    server.play("reset", "sse")
    async with AsyncKV(server.url, TOKEN, retry=RETRY) as akv, akv.monitor(timeout=ANSWERED) as monitor:
        assert monitor is not None
    assert len(server.requests) == 2


# -- nothing listening ------------------------------------------------------------------------------
def test_a_stream_to_a_port_nothing_listens_on_is_a_connect_error():
    url = _refused_url()
    with KV(url, TOKEN, retry=RETRY) as kv, pytest.raises(TransportError) as info:
        kv.monitor(timeout=TIMEOUT)
    _says(info.value, f"opening stream {url} failed: ConnectError")


async def test_async_a_stream_to_a_port_nothing_listens_on_is_a_connect_error():
    url = _refused_url()
    async with AsyncKV(url, TOKEN, retry=RETRY) as akv:
        with pytest.raises(TransportError) as info:
            await akv.monitor(timeout=TIMEOUT).start()
    _says(info.value, f"opening stream {url} failed: ConnectError")


def test_the_token_in_a_pasted_url_is_not_in_the_error():
    """A URL pasted with its credentials (``http://default:TOKEN@host``, as the vendor's Redis URLs
    are written): the error names the URL, masked."""
    url = _refused_url().replace("http://", f"http://default:{TOKEN}@")
    with KV(url, TOKEN, retry=RETRY) as kv, pytest.raises(TransportError) as info:
        kv.monitor(timeout=TIMEOUT)
    _says(info.value, "opening stream http://default:***", "ConnectError")


# -- a connect that never completes, a server that never answers ------------------------------------
@pytest.fixture
def unreachable() -> Iterator[Unreachable]:
    port = Unreachable()
    yield port
    port.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    srv = Silent()
    yield srv
    srv.close()


def test_a_stream_whose_connect_never_completes_is_a_request_timeout(unreachable):
    with KV(unreachable.url, TOKEN, retry=RetryPolicy(attempts=2, backoff=0.01)) as kv, \
            pytest.raises(RequestTimeout) as info:
        kv.subscribe("news", timeout=TIMEOUT)
    _says(info.value, f"opening stream {unreachable.url} failed: ConnectTimeout", TIMEOUT_HINT)


async def test_async_a_stream_whose_connect_never_completes_is_a_request_timeout(unreachable):
    async with AsyncKV(unreachable.url, TOKEN, retry=RetryPolicy(attempts=2, backoff=0.01)) as akv:
        with pytest.raises(RequestTimeout) as info:
            async with akv.monitor(timeout=TIMEOUT):
                pass
    _says(info.value, f"opening stream {unreachable.url} failed: ConnectTimeout", TIMEOUT_HINT)


def test_a_stream_whose_server_never_answers_is_a_request_timeout_not_a_hang(silent):
    with KV(silent.url, TOKEN, retry=RetryPolicy(attempts=2, backoff=0.01)) as kv, \
            pytest.raises(RequestTimeout) as info:
        kv.monitor(timeout=TIMEOUT)
    _says(info.value, f"opening stream {silent.url} failed: ReadTimeout", TIMEOUT_HINT)
    assert len(silent.accepted) == 2  # each attempt connected, and waited for headers in vain


async def test_async_a_stream_whose_server_never_answers_is_a_request_timeout_not_a_hang(silent):
    async with AsyncKV(silent.url, TOKEN, retry=RetryPolicy(attempts=2, backoff=0.01)) as akv:
        with pytest.raises(RequestTimeout) as info:
            await akv.subscribe("news", timeout=TIMEOUT).start()
    _says(info.value, f"opening stream {silent.url} failed: ReadTimeout", TIMEOUT_HINT)


class LateEvents(FaultServer):
    """Answers a subscription at once, then sends its message only after twice the client's timeout:
    an open stream must wait for it (the timeout covers opening the stream only)."""

    def _answer(self, sock: socket.socket, fault: str) -> bool:
        _events(sock, b"subscribe,news,1", b"message,news,late", pause=2 * LATE)
        return True


def test_an_open_stream_waits_for_events_longer_than_the_timeout():
    with LateEvents() as srv, KV(srv.url, TOKEN, retry=RETRY) as kv, kv.subscribe("news", timeout=LATE) as sub:
        assert [(m.kind, m.data) for m in sub] == [("subscribe", None), ("message", "late")]


async def test_async_an_open_stream_waits_for_events_longer_than_the_timeout():
    with LateEvents() as srv:
        async with AsyncKV(srv.url, TOKEN, retry=RETRY) as akv, akv.subscribe("news", timeout=LATE) as sub:
            assert [(m.kind, m.data) async for m in sub] == [("subscribe", None), ("message", "late")]
