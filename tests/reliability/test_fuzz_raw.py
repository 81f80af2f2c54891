"""Raw bad input, hypothesis-driven, over real HTTP (httpx, and a raw socket where httpx refuses to lie):
malformed JSON, wrong types, huge and empty arguments, invalid UTF-8 in paths and bodies, odd headers,
lying Content-Length, unknown paths and methods on every prefix.

Every answer is < 500; an error is a 4xx with the area's error body ({error} or {error, status}); no
request hangs (a client timeout of a few seconds). The requests sent with no or wrong credentials go to
``guarded`` and its data is checked unchanged around each test (the ``unchanged`` fixture); those with valid credentials go to
``playground``. Examples are bounded and derandomized, so the file is quick and repeatable.
"""

from __future__ import annotations

import json
import socket
import string
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.conftest import Live, area_of, assert_error_body

TIMEOUT = 5.0
fuzz = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

JSON_ENDPOINTS = [
    ("kv", "/kv/"), ("kv", "/kv/pipeline"), ("kv", "/kv/multi-exec"),
    ("vector", "/vector/dense/query-data"), ("vector", "/vector/hybrid/query-data/ns"),
    ("vector", "/vector/sparse/upsert-data"), ("vector", "/vector/dense/fetch"), ("vector", "/vector/dense/delete"),
    ("vector", "/vector/nomodel/query-data"),
    ("devapi", "/devapi/v2/search/idx_products/rename"), ("devapi", "/devapi/v2/queue-upgrade"),
    ("queue", "/queue/v2/trigger/https://example.com/wf"), ("queue", "/queue/v2/dlq/resume/dlq_x"),
]
PREFIXES = ["", "/kv", "/vector", "/vector/dense", "/vector/dense/query-data", "/devapi", "/devapi/v2",
            "/devapi/v2/queue", "/queue", "/queue/v2", "/queue/v2/workflows"]
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=20,
)
#: bodies that are not valid JSON, or not valid UTF-8, or JSON of every shape and type
bad_bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    json_values.map(lambda v: json.dumps(v).encode()[:-1]),  # truncated
    st.just(b""), st.just(b"\xff\xfe\xfd"), st.just(b'{"data": "\xff"}'), st.just(b"[[\"SET\", \"k\", \"\xc3\"]]"),
    st.just(b"NaN"), st.just(b"[" * 5000), st.just(b'{"data": 1e999}'), st.just(b'{"ids": {"$gt": 1}}'),
)


@pytest.fixture(scope="module")
def http():
    with httpx.Client(timeout=TIMEOUT) as client:
        yield client


def check(area: str, response: httpx.Response) -> None:
    """< 500, and an error (any 4xx) carries the area's error body."""
    assert response.status_code < 500, f"{response.request.method} {response.request.url}: " \
                                       f"{response.status_code} {response.text[:300]}"
    if response.status_code >= 400:
        assert_error_body(area, response)


# -- bodies ----------------------------------------------------------------------------------------
@fuzz
@given(endpoint=st.sampled_from(JSON_ENDPOINTS), body=bad_bodies,
       content_type=st.sampled_from(["application/json", "text/plain", "application/octet-stream", None]))
def test_malformed_and_mistyped_bodies(playground: Live, http, endpoint, body, content_type):
    area, path = endpoint
    headers = playground.auth(area)
    if content_type:
        headers["Content-Type"] = content_type
    check(area, http.post(playground.url + path, content=body, headers=headers))


@fuzz
@given(endpoint=st.sampled_from(JSON_ENDPOINTS), body=bad_bodies)
def test_bad_bodies_without_credentials_are_refused(guarded: Live, unchanged, http, endpoint, body):
    area, path = endpoint
    response = http.post(guarded.url + path, content=body)
    assert response.status_code == 401, response.text
    assert_error_body(area, response)


def test_huge_arguments(playground: Live, http):
    big = "x" * (2 * 1024 * 1024)
    kv = playground.url + "/kv"
    auth = playground.auth("kv")
    # a 2 MB value is a legitimate write (under the documented 10 MB request limit) and reads back
    assert http.post(kv + "/SET/huge", content=big, headers=auth).json() == {"result": "OK"}
    assert http.get(kv + "/STRLEN/huge", headers=auth).json() == {"result": len(big)}
    check("kv", http.post(kv + "/", json=["SET", "huge2", big], headers=auth))
    check("kv", http.post(kv + "/pipeline", json=[["SET", f"h{i}", "v"] for i in range(20_000)], headers=auth))
    # over the request limit: refused with the error body (413: the body is over the cap), not a 500
    limit = http.post(kv + "/", json=["SET", "toobig", "x" * (11 * 1024 * 1024)], headers=auth)
    assert limit.status_code == 413 and "max request size" in limit.json()["error"]
    for area, path, body in [
        ("vector", "/vector/dense/query-data", {"data": big, "topK": 1}),
        ("vector", "/vector/sparse/query-data", {"data": big, "topK": 1}),
        ("vector", "/vector/dense/query-data", {"data": "x", "topK": 10**12}),
        ("vector", "/vector/dense/fetch", {"ids": ["x"] * 100_000}),
        ("devapi", "/devapi/v2/search/idx_products/rename", {"name": big}),
        ("devapi", "/devapi/v2/queue-upgrade", {"customer_id": big, "plan_name": "paid"}),
    ]:
        check(area, http.post(playground.url + path, json=body, headers=playground.auth(area), timeout=60))
    # a 2 MB path or query string (httpx refuses to send one: raw socket) is refused by the HTTP layer
    # with a 4xx, or the connection is closed; never a 500 and never a hang
    for path in ("/kv/GET/" + "k" * (2 * 1024 * 1024), "/queue/v2/workflows/logs?label=" + big):
        auth = playground.auth(area_of(path))["Authorization"]
        raw = _raw(playground, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth}\r\n"
                               "Connection: close\r\n\r\n".encode(), shut_write=True)
        assert raw == b"" or 400 <= _status(raw) < 500, raw[:200]


def test_empty_arguments(playground: Live, http):
    kv, auth = playground.url + "/kv", playground.auth("kv")
    assert http.get(kv + "/SET/empty/", headers=auth).json() == {"result": "OK"}  # an empty value is a value
    assert http.get(kv + "/GET/empty", headers=auth).json() == {"result": ""}
    for path in ("/", "//", "///", "/GET//", "/%20"):
        check("kv", http.get(kv + path, headers=auth))
    for body in ([], [""], [[]], [[""]], ["", ""], {}):
        for path in ("/", "/pipeline", "/multi-exec"):
            check("kv", http.post(kv + path, json=body, headers=auth))
    for area, path, body in [
        ("vector", "/vector/dense/query-data", {"data": ""}), ("vector", "/vector/dense/query-data", []),
        ("vector", "/vector/dense/upsert-data", {"id": "", "data": ""}), ("vector", "/vector/dense/fetch", {"ids": []}),
        ("devapi", "/devapi/v2/search/idx_products/rename", {"name": ""}),
        ("devapi", "/devapi/v2/search/%20/rename", {"name": "x"}),
        ("devapi", "/devapi/v2/queue-upgrade", {"customer_id": "", "plan_name": ""}),
        ("queue", "/queue/v2/workflows/logs?count=&cursor=&state=&fromDate=", None),
        ("queue", "/queue/v2/dlq/resume/%20", None), ("queue", "/queue/v2/trigger/", None),
    ]:
        method = "GET" if body is None and "logs" in path else "POST"
        check(area, http.request(method, playground.url + path, json=body, headers=playground.auth(area)))


# -- invalid UTF-8 and odd characters in paths and query strings -------------------------------------
odd_segment = st.one_of(
    st.binary(min_size=1, max_size=12).map(lambda b: quote(b, safe="")),
    st.text(string.printable + "éü€\u2028\ufffd", min_size=1, max_size=12).map(lambda t: quote(t.encode(), safe="")),
    st.sampled_from(["%FF", "%C3", "%ED%A0%80", "%00", "..", "%2e%2e", "%2F", "%", "%G1"]),
)


@fuzz
@given(prefix=st.sampled_from(["/kv/GET", "/kv/SET/k", "/vector", "/vector/dense/query-data",
                               "/devapi/v2/search", "/queue/v2/dlq/resume", "/queue/v2/workflows/runs"]),
       segment=odd_segment, query=odd_segment, method=st.sampled_from(["GET", "POST", "DELETE"]))
def test_invalid_utf8_in_paths_and_queries(playground: Live, http, prefix, segment, query, method):
    path = f"{prefix}/{segment}?count={query}&{query}={query}"
    area = area_of(prefix)
    check(area, http.request(method, playground.url + path, headers=playground.auth(area)))


# -- unknown paths and methods on every prefix ---------------------------------------------------------
@fuzz
@given(prefix=st.sampled_from(PREFIXES), method=st.sampled_from(METHODS),
       tail=st.text(string.ascii_letters + string.digits + "-_.~", max_size=16),
       credentials=st.sampled_from(["none", "wrong"]))
def test_unknown_paths_and_methods_without_credentials(guarded: Live, unchanged, http, prefix, method, tail, credentials):
    path = f"{prefix}/{tail}" if tail else prefix or "/"
    area = area_of(path)
    headers = {"Authorization": "Bearer wrong"} if credentials == "wrong" else {}
    response = http.request(method, guarded.url + path, headers=headers)
    if path == "/openapi.json" and method in ("GET", "HEAD"):
        assert response.status_code == 200
        return
    if response.status_code == 307:  # "/kv" -> "/kv/": Starlette's slash redirect to the mount, no data
        assert response.headers["location"].endswith(path + "/"), response.headers
        return
    assert response.status_code in (401, 404, 405), (method, path, response.status_code, response.text[:200])
    assert_error_body(area, response)


@fuzz
@given(prefix=st.sampled_from(PREFIXES), method=st.sampled_from(METHODS),
       tail=st.text(string.ascii_letters + string.digits + "-_.~", min_size=1, max_size=16))
def test_unknown_paths_and_methods_with_credentials(playground: Live, http, prefix, method, tail):
    path = f"{prefix}/zz{tail}"  # "zz": never a real route name nor a key-value command
    area = area_of(path)
    headers = playground.auth(area) if area != "sandbox" else {}
    response = http.request(method, playground.url + path, headers=headers)
    assert 400 <= response.status_code < 500, (method, path, response.status_code, response.text[:200])
    assert_error_body(area, response)


# -- odd headers -----------------------------------------------------------------------------------
def _raw(live: Live, request: bytes, *, shut_write: bool = False) -> bytes:
    """Send bytes on a fresh socket and read until the server closes or the timeout (the timeout is
    a hang, and fails the test)."""
    with socket.create_connection(("127.0.0.1", live.sandbox.port), timeout=TIMEOUT) as sock:
        data = b""
        try:
            sock.sendall(request)
            if shut_write:
                sock.shutdown(socket.SHUT_WR)
        except OSError:  # reset, broken pipe, not connected
            return data  # the server refused the request by closing the connection: an answer too
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return data
            except TimeoutError:
                if data:
                    return data
                raise AssertionError(f"no answer within {TIMEOUT} s to {request[:120]!r}") from None
            if not chunk:
                return data
            data += chunk
            if shut_write is False and b"\r\n\r\n" in data and _complete(data):
                return data


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return False


def _status(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/1.1 ") else 0


AREA_PATHS = {"kv": "/kv/GET/greeting", "vector": "/vector/dense/info", "devapi": "/devapi/v2/queue/user",
              "queue": "/queue/v2/workflows/logs"}


@pytest.mark.parametrize("area", list(AREA_PATHS))
def test_duplicate_and_non_ascii_authorization_headers(guarded: Live, unchanged, area):
    path = AREA_PATHS[area]
    valid = guarded.auth(area)["Authorization"].encode()
    cases = {
        "wrong then valid": [b"Bearer wrong", valid],
        "two wrong": [b"Bearer wrong", b"Basic d3Jvbmc6d3Jvbmc="],
        "latin-1 bytes": [b"Bearer \xe9\xff\xfe"],
        "utf-8 bytes": ["Bearer tökén€".encode()],
        "control characters": [b"Bearer \x01\x7f"],
        "very long": [b"Bearer " + b"A" * 8000],
    }
    for name, values in cases.items():
        head = b"".join(b"Authorization: " + v + b"\r\n" for v in values)
        raw = _raw(guarded, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + head + b"Connection: close\r\n\r\n")
        status = _status(raw)
        assert status in (400, 401), (area, name, raw[:300])
        if status == 401:
            body = json.loads(raw.partition(b"\r\n\r\n")[2])
            assert isinstance(body.get("error"), str), (area, name, body)
    # the valid credential alone still works (the sandbox was not disturbed)
    raw = _raw(guarded, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ".encode() + valid
               + b"\r\nConnection: close\r\n\r\n")
    assert _status(raw) == 200


def test_odd_service_headers(playground: Live, http):
    auth = playground.auth("kv")
    for headers in ({"Service-Encoding": "gzip"}, {"Service-Response-Format": "xml"},
                    {"Service-Response-Format": "resp2", "Service-Encoding": "base64"},
                    {"Service-Encoding": "bäse64".encode()}):
        response = http.get(playground.url + "/kv/GET/greeting", headers={**auth, **headers})
        assert response.status_code == 400, headers
        assert_error_body("kv", response)
    queue = playground.auth("queue")
    for value in ("x", "", "-1", "1e3", "99999999999999999999999", "٣".encode()):
        response = http.post(playground.url + "/queue/v2/dlq/resume/dlq_none", headers={**queue, "Service-Retries": value})
        check("queue", response)


@pytest.mark.parametrize("path,area", [("/kv/", "kv"), ("/vector/dense/query-data", "vector"),
                                       ("/devapi/v2/queue-upgrade", "devapi"), ("/queue/v2/trigger/x", "queue")])
def test_content_length_lies(guarded: Live, unchanged, path, area):
    """Raw socket: a Content-Length larger than the body (then the client half-closes) and one smaller
    than the body. The server must neither hang nor answer 500, and keeps serving others."""
    body = b'["GET", "greeting"]'
    longer = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body) + 100}\r\n"
              f"Content-Type: application/json\r\n\r\n").encode() + body
    raw = _raw(guarded, longer, shut_write=True)
    assert raw == b"" or 400 <= _status(raw) < 500, raw[:300]
    shorter = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nContent-Type: application/json\r\n\r\n"
               ).encode() + body
    raw = _raw(guarded, shorter, shut_write=True)
    statuses = [int(line.split(b" ")[1]) for line in raw.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    assert statuses and all(400 <= s < 500 for s in statuses), raw[:400]
    chunked = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot hex\r\n").encode()
    raw = _raw(guarded, chunked, shut_write=True)
    assert raw == b"" or 400 <= _status(raw) < 500, raw[:300]
    both = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
            "0\r\n\r\n").encode()
    raw = _raw(guarded, both, shut_write=True)
    assert raw == b"" or 400 <= _status(raw) < 500, raw[:300]
    ok = httpx.get(guarded.url + AREA_PATHS[area], headers=guarded.auth(area), timeout=TIMEOUT)
    assert ok.status_code == 200

