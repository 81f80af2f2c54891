"""Every request is bounded, over real HTTP (svckit/sandbox/limits.py): a body over an area's cap is
answered 413 in that area's error shape before it is read, a client that sends its request too
slowly is disconnected, a request head that grows without end is refused, and event streams are
never cut by any of it.

Raw sockets where the point is what arrives before the client has sent everything; every socket read
has a timeout, which turns a server that waits for the rest into a failure instead of a hang.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest

from svckit.sandbox import Sandbox
from tests.conftest import basic, running

WORKFLOW = "https://app.example.com/api/workflows/limits"
MiB = 1024 * 1024
READ_TIMEOUT = 10.0  # how long a test waits for an answer that must come (a hang guard, not a timing)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    """Every area, default caps and timeouts."""
    with running(tmp_path_factory.mktemp("limits"), backend="fakeredis") as sb:
        sb.area("queue").runner.register(WORKFLOW, lambda context: context.run("echo", lambda: context.body))
        yield sb


def auth(sb: Sandbox, area: str) -> str:
    """The Authorization header value of an area ("kv", "vector", "devapi", "queue")."""
    env = sb.env
    if area == "devapi":
        return basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])
    return f"Bearer {env['SVC_' + area.upper() + '_TOKEN']}"


#: area -> a route that reads a JSON body
BODY_ROUTES = {"kv": "/kv/pipeline", "vector": "/vector/dense/upsert",
               "devapi": "/devapi/v2/search/idx_products/rename", "queue": f"/queue/v2/trigger/{WORKFLOW}"}


def connect(sb: Sandbox) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", sb.port), timeout=READ_TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_answer(sock: socket.socket) -> tuple[int, dict]:
    """Status and JSON body of one answer (Content-Length framed); socket.timeout if none comes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed without an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), json.loads(body[:length])


def closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def assert_error_shape(area: str, status: int, body: dict) -> None:
    """Key-value, devapi and queue errors are ``{"error"}``; vector errors also carry ``status``."""
    assert isinstance(body.get("error"), str) and body["error"]
    assert body == ({"error": body["error"], "status": status} if area == "vector" else {"error": body["error"]})


# -- body caps --------------------------------------------------------------------------------
@pytest.mark.timeout(120)
@pytest.mark.parametrize("area", list(BODY_ROUTES))
def test_a_64_mib_body_is_answered_413_before_it_is_sent(sandbox, area):
    size = 64 * MiB
    with connect(sandbox) as sock:
        sock.sendall(f"POST {BODY_ROUTES[area]} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth(sandbox, area)}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode() + b"[" * 65536)
        # only the headers and the first 64 KiB were sent: the answer comes now, or not at all
        status, body = read_answer(sock)
    assert status == 413, body
    assert_error_shape(area, status, body)
    assert "too large" in body["error"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("area", list(BODY_ROUTES))
def test_a_chunked_body_is_answered_413_once_it_grows_past_the_cap(sandbox, area):
    cap = sandbox.area({"devapi": "account"}.get(area, area)).max_body_bytes
    chunk = b"[" * 65536
    with connect(sandbox) as sock:
        sock.sendall(f"POST {BODY_ROUTES[area]} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth(sandbox, area)}\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        for _ in range(cap // len(chunk) + 1):  # one chunk past the cap, and no last chunk: more could come
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        status, body = read_answer(sock)
    assert status == 413, body
    assert_error_shape(area, status, body)


@pytest.mark.timeout(120)
def test_a_client_that_sends_its_whole_body_first_still_gets_the_413(sandbox):
    """httpx writes the whole body before it reads: the connection stays open, the rest is discarded."""
    with httpx.Client(timeout=60) as http:
        r = http.post(sandbox.url + BODY_ROUTES["kv"], content=b"[" * (21 * MiB),
                      headers={"Authorization": auth(sandbox, "kv")})
        assert r.status_code == 413 and "too large" in r.json()["error"]
        # the same connection serves the next request
        ok = http.post(sandbox.url + "/kv/", json=["PING"], headers={"Authorization": auth(sandbox, "kv")})
        assert ok.json() == {"result": "PONG"}


def test_bodies_under_the_caps_are_served(sandbox):
    with httpx.Client(timeout=60) as http:
        big = "x" * (2 * MiB)  # over the devapi and queue caps, under the key-value and vector ones
        r = http.post(sandbox.url + "/kv/", json=["SET", "big", big], headers={"Authorization": auth(sandbox, "kv")})
        assert r.json() == {"result": "OK"}
        r = http.post(sandbox.url + "/vector/nomodel/upsert", headers={"Authorization": auth(sandbox, "vector")},
                      json=[{"id": f"v{i}", "vector": [0.5] * 384, "metadata": {"pad": "y" * 1000}} for i in range(500)])
        assert r.status_code == 200, r.text
        r = http.post(sandbox.url + BODY_ROUTES["queue"], json={"order": "z" * (512 * 1024)},
                      headers={"Authorization": auth(sandbox, "queue")})
        assert r.status_code == 200, r.text


def test_a_search_index_name_is_stored_only_up_to_its_length_limit(sandbox):
    from svckit.sandbox.devapi import MAX_NAME_LENGTH

    url = sandbox.url + BODY_ROUTES["devapi"]
    with httpx.Client(timeout=10, headers={"Authorization": auth(sandbox, "devapi")}) as http:
        r = http.post(url, json={"name": "n" * (MAX_NAME_LENGTH + 1)})
        assert r.status_code == 400 and r.json() == {"error": f"name: must be at most {MAX_NAME_LENGTH} "
                                                              f"characters, got {MAX_NAME_LENGTH + 1}"}
        assert http.post(url, json={"name": "n" * MAX_NAME_LENGTH}).json() == "OK"
    stored = sandbox.area("account").store.search_indexes()
    assert stored["idx_products"] == "n" * MAX_NAME_LENGTH


def test_the_caps_follow_the_sandbox_options(tmp_path):
    with running(tmp_path / "data", areas=["account", "queue"], devapi_max_body_bytes=100,
                 queue_max_body_bytes=100) as sb, httpx.Client(timeout=10) as http:
        r = http.post(sb.url + BODY_ROUTES["devapi"], json={"name": "n" * 120},
                      headers={"Authorization": auth(sb, "devapi")})
        assert r.status_code == 413 and "at most 100 bytes" in r.json()["error"]
        r = http.post(sb.url + "/queue/v2/dlq/resume", json={"dlqIds": ["d" * 120]},
                      headers={"Authorization": auth(sb, "queue")})
        assert r.status_code == 413 and "at most 100 bytes" in r.json()["error"]


def test_a_bad_limit_option_fails_at_start(tmp_path):
    with pytest.raises(ValueError, match="devapi_max_body_bytes: must be a positive number"):
        Sandbox(tmp_path / "a", areas=["account"], devapi_max_body_bytes="lots").start()
    with pytest.raises(ValueError, match="header_timeout: must be a positive number"):
        Sandbox(tmp_path / "b", areas=["account"], header_timeout=0)


@pytest.mark.parametrize(("area", "option"), [
    ("kv", "kv_max_request_size"), ("kv", "kv_daily_request_limit"), ("kv", "kv_max_streams"),
    ("kv", "kv_max_streams_per_token"), ("kv", "kv_max_request_commands"), ("kv", "kv_max_request_seconds"),
    ("kv", "kv_monitor_backlog_bytes"), ("kv", "kv_script_time_limit"), ("vector", "vector_threads_per_index"),
    ("queue", "queue_workers")])
@pytest.mark.parametrize("bad", [0, -1, "lots"])
def test_every_limit_in_the_security_table_refuses_a_bad_value_at_start(tmp_path, area, option, bad):
    with pytest.raises(ValueError, match=f"{option}: must be a positive number"):
        Sandbox(tmp_path, areas=[area], backend="fakeredis", embedding_model=None, **{option: bad}).start()


# -- slow clients ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def impatient(tmp_path_factory) -> Iterator[Sandbox]:
    """Key-value and devapi areas with half-second read timeouts and a 64 KiB head cap."""
    with running(tmp_path_factory.mktemp("impatient"), areas=["kv", "account"], backend="fakeredis",
                 header_timeout=0.5, body_timeout=0.5, max_header_bytes=64 * 1024) as sb:
        yield sb


def trickle(sock: socket.socket, start: bytes, byte: bytes) -> bytes:
    """Send ``start``, then one byte every 50 ms, up to 10 s; what the server sent once it closed the
    connection (AssertionError if it never does)."""
    sock.sendall(start)
    sock.settimeout(0.05)
    for _ in range(200):
        try:
            sock.sendall(byte)
            data = sock.recv(65536)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return b""
        sock.settimeout(READ_TIMEOUT)
        return data + closed(sock)
    raise AssertionError("the server kept a trickling client connected for 10 s")


@pytest.mark.timeout(60)
def test_headers_sent_byte_by_byte_are_cut_off_with_408(impatient):
    with connect(impatient) as sock:
        answer = trickle(sock, b"GET /devapi/v2/queue/user HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", b"a")
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"request line and headers did not arrive within 0.5 s" in answer


@pytest.mark.timeout(60)
def test_a_body_sent_byte_by_byte_is_cut_off_with_408(impatient):
    start = (f"POST /devapi/v2/search/idx_products/rename HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             f"Authorization: {auth(impatient, 'devapi')}\r\nContent-Length: 1000\r\n\r\n").encode()
    with connect(impatient) as sock:
        answer = trickle(sock, start, b" ")
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"request body did not arrive within 0.5 s" in answer


@pytest.mark.timeout(60)
def test_a_connection_that_never_sends_a_request_is_closed(impatient):
    with connect(impatient) as sock:
        assert closed(sock) == b""  # nothing to answer: closed quietly


@pytest.mark.timeout(60)
def test_a_request_head_over_the_cap_is_refused_with_431(impatient):
    with connect(impatient) as sock:
        sock.sendall(b"GET /devapi/v2/queue/user HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            for _ in range(10):
                sock.sendall(b"X-Pad: " + b"p" * 16384 + b"\r\n")  # 160 KiB in all, over the 64 KiB cap
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = closed(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer


@pytest.mark.timeout(60)
def test_event_streams_outlive_the_read_timeouts(impatient):
    headers = {"Authorization": auth(impatient, "kv")}
    with httpx.Client(timeout=10) as http, http.stream(
            "POST", impatient.url + "/kv/monitor", headers={**headers, "Accept": "text/event-stream"}) as stream:
        lines = (line for line in stream.iter_lines() if line.startswith("data: "))
        assert next(lines) == 'data: "OK"'
        # two connections opened after the stream, each closed by the server once its timeout fired:
        # one that never sends a head, one whose body stops short. Once both are closed, the stream
        # has been open longer than either timeout, and it must still be open.
        with connect(impatient) as idle, connect(impatient) as short:
            short.sendall(f"POST /kv/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {headers['Authorization']}\r\n"
                          "Content-Length: 10\r\n\r\n[".encode())
            assert closed(idle) == b""
            assert b"request body did not arrive" in closed(short)
        http.post(impatient.url + "/kv/", json=["SET", "still-here", "1"], headers=headers)
        assert any("still-here" in line for line in lines)
