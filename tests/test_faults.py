"""The retry policy against real socket faults: idempotent calls recover, others are never repeated."""

from __future__ import annotations

import threading

import pytest

from svckit._http import ApiRequest, AsyncTransport, RetryPolicy, StreamRefused, SyncTransport
from svckit.errors import RequestTimeout, StreamClosed, TransportError
from tests.conftest import wait_until_reading
from tests.faults import FaultServer

RETRY = RetryPolicy(attempts=3, backoff=0.01)
#: what the client waits: the "slow" fault holds its answer until the client hangs up, and a server that
#: answers has this long to (a loaded machine's thread, never the behaviour under test)
TIMEOUT = 1.0
READ = ApiRequest("GET", "/GET/key", idempotent=True)
WRITE = ApiRequest("POST", "/INCR/counter", idempotent=False)
TRANSIENT = ["reset", "truncate", "slow", "500", "503"]


@pytest.fixture
def server():
    with FaultServer(slow_seconds=30.0) as srv:
        yield srv


def sync_transport(server: FaultServer) -> SyncTransport:
    return SyncTransport(server.url, retry=RETRY, timeout=TIMEOUT)


@pytest.mark.parametrize("fault", TRANSIENT)
def test_idempotent_request_recovers(server, fault):
    server.play(fault)
    with sync_transport(server) as t:
        response = t.send(READ)
    assert response.status_code == 200 and response.json() == {"result": "OK"}
    assert len(server.requests) == 2


@pytest.mark.parametrize("fault", ["reset", "truncate", "slow"])
def test_non_idempotent_request_fails_once_and_is_not_repeated(server, fault):
    server.play(fault)
    expected = RequestTimeout if fault == "slow" else TransportError
    with sync_transport(server) as t, pytest.raises(expected) as info:
        t.send(WRITE)
    assert len(server.requests) == 1
    assert "POST" in str(info.value)


@pytest.mark.parametrize("status", ["500", "503"])
def test_non_idempotent_5xx_is_returned_not_repeated(server, status):
    server.play(status)
    with sync_transport(server) as t:
        assert t.send(WRITE).status_code == int(status)
    assert len(server.requests) == 1


def test_retries_are_bounded(server):
    server.play("503", "503", "503", "503")
    with sync_transport(server) as t:
        assert t.send(READ).status_code == 503
    assert len(server.requests) == RETRY.attempts


def test_connection_refused_is_a_clear_transport_error():
    with FaultServer() as srv:
        url = srv.url
    with SyncTransport(url, retry=RETRY, timeout=TIMEOUT) as t, pytest.raises(TransportError) as info:
        t.send(WRITE)
    assert "ConnectError" in str(info.value)


def test_sse_stream_yields_events_then_ends(server):
    server.play("sse")
    with sync_transport(server) as t:
        assert list(t.stream_lines(ApiRequest("POST", "/monitor"))) == ['"OK"', "one", "two"]


def test_broken_sse_stream_ends_with_stream_closed(server):
    server.play("sse-break")
    seen = []
    with sync_transport(server) as t, pytest.raises(StreamClosed, match="event stream broke"):
        for data in t.stream_lines(ApiRequest("POST", "/monitor")):
            seen.append(data)
    assert seen == ['"OK"', "one", "two"]


def test_closing_a_sync_stream_from_another_thread_ends_a_blocked_reader(server):
    """The reader waits for an event that never comes; close() from this thread makes its next()
    end with StopIteration (a deliberate close is not an error), promptly."""
    server.play("sse-hold")
    seen: list[str] = []
    outcome: list[object] = []
    with sync_transport(server) as t:
        stream = t.stream_lines(ApiRequest("POST", "/monitor"))
        three = threading.Event()

        def read() -> None:
            try:
                while True:
                    seen.append(next(stream))
                    if len(seen) == 3:
                        three.set()
            except StopIteration:
                outcome.append("StopIteration")
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                outcome.append(exc)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert three.wait(5), f"three events not read: {seen}"
        wait_until_reading(reader)  # the three events read, blocked waiting for a fourth
        assert seen == ['"OK"', "one", "two"] and reader.is_alive()
        stream.close()
        reader.join(5)  # a deadline for the failure message, not a speed threshold
        assert not reader.is_alive(), "close() did not end the blocked read"
        assert outcome == ["StopIteration"]
        assert stream.closed
        stream.close()  # idempotent
        with pytest.raises(StopIteration):
            next(stream)
        assert t.send(READ).status_code == 200  # the transport is still usable


def test_closing_a_sync_stream_before_reading_it(server):
    server.play("sse-hold")
    with sync_transport(server) as t:
        stream = t.stream_lines(ApiRequest("POST", "/monitor"))
        stream.close()
        assert list(stream) == []


def test_a_refused_stream_raises_at_open(server):
    server.play("500")
    with sync_transport(server) as t, pytest.raises(StreamRefused) as info:
        t.stream_lines(ApiRequest("POST", "/monitor"))
    assert info.value.response.status_code == 500
    assert info.value.response.json() == {"error": "injected fault"}


async def test_async_stream_yields_events_and_stops_when_closed(server):
    server.play("sse-hold", "500")
    async with AsyncTransport(server.url, retry=RETRY, timeout=TIMEOUT) as t:
        stream = t.stream_lines(ApiRequest("POST", "/monitor"))
        assert [await stream.__anext__() for _ in range(3)] == ['"OK"', "one", "two"]
        await stream.aclose()
        assert [data async for data in stream] == []
        with pytest.raises(StreamRefused):
            await t.stream_lines(ApiRequest("POST", "/monitor")).open()


@pytest.mark.parametrize("fault", TRANSIENT)
async def test_async_idempotent_request_recovers(server, fault):
    server.play(fault)
    async with AsyncTransport(server.url, retry=RETRY, timeout=TIMEOUT) as t:
        response = await t.send(READ)
    assert response.status_code == 200 and len(server.requests) == 2


@pytest.mark.parametrize("fault", ["reset", "truncate", "slow"])
async def test_async_non_idempotent_request_is_not_repeated(server, fault):
    server.play(fault)
    async with AsyncTransport(server.url, retry=RETRY, timeout=TIMEOUT) as t:
        with pytest.raises(TransportError):
            await t.send(WRITE)
    assert len(server.requests) == 1


async def test_async_broken_sse_stream_ends_with_stream_closed(server):
    server.play("sse-break")
    seen = []
    async with AsyncTransport(server.url, retry=RETRY, timeout=TIMEOUT) as t:
        with pytest.raises(StreamClosed):
            async for data in t.stream_lines(ApiRequest("POST", "/monitor")):
                seen.append(data)
    assert seen == ['"OK"', "one", "two"]
