"""The shared transport: retry rules, redaction, timeouts by default."""

from __future__ import annotations

import itertools
import subprocess
import sys

import httpx
import pytest

from svckit._http import (
    ApiRequest,
    BasicAuth,
    BearerAuth,
    RetryPolicy,
    SyncTransport,
    decode_json_reply,
    join_url,
)
from svckit.errors import NotFound, ProtocolError, ServerError, TransportError, mask

TOKEN = "tok_0123456789abcdefSECRET"


def flaky(failures: list[object]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport that replays ``failures`` (exceptions or status codes) and then answers 200."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if failures:
            item = failures.pop(0)
            if isinstance(item, Exception):
                raise item
            return httpx.Response(int(item), json={"error": "boom"})
        return httpx.Response(200, json={"result": "OK"})

    return httpx.MockTransport(handler), seen


FAST = RetryPolicy(attempts=3, backoff=0.0)


def test_idempotent_request_recovers_from_5xx_and_reset():
    transport, seen = flaky([503, httpx.ReadError("reset")])
    t = SyncTransport("http://127.0.0.1:1", BearerAuth(TOKEN), retry=FAST, transport=transport)
    resp = t.send(ApiRequest("GET", "/GET/a", idempotent=True))
    assert resp.status_code == 200 and len(seen) == 3


def test_non_idempotent_request_is_not_repeated_after_it_may_have_run():
    transport, seen = flaky([httpx.ReadError("reset")])
    t = SyncTransport("http://127.0.0.1:1", retry=FAST, transport=transport)
    with pytest.raises(TransportError):
        t.send(ApiRequest("POST", "/INCR/a", idempotent=False))
    assert len(seen) == 1
    transport, seen = flaky([503])
    t = SyncTransport("http://127.0.0.1:1", retry=FAST, transport=transport)
    assert t.send(ApiRequest("POST", "/INCR/a")).status_code == 503 and len(seen) == 1


def test_non_idempotent_request_retried_when_asked_and_on_connect_errors():
    transport, seen = flaky([503])
    policy = RetryPolicy(attempts=3, backoff=0.0, retry_non_idempotent=True)
    t = SyncTransport("http://127.0.0.1:1", retry=policy, transport=transport)
    assert t.send(ApiRequest("POST", "/INCR/a")).status_code == 200 and len(seen) == 2
    transport, seen = flaky([httpx.ConnectError("refused")])
    t = SyncTransport("http://127.0.0.1:1", retry=FAST, transport=transport)
    assert t.send(ApiRequest("POST", "/INCR/a")).status_code == 200 and len(seen) == 2


def _waits_of(monkeypatch) -> list[float]:
    """The transport's waits between attempts, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr("svckit._http.time.sleep", waits.append)
    return waits


def _unavailable(retry_after: str) -> httpx.MockTransport:
    answers = iter([httpx.Response(503, json={"error": "restarting"}, headers={"Retry-After": retry_after})])
    return httpx.MockTransport(lambda request: next(answers, httpx.Response(200, json={"result": "OK"})))


@pytest.mark.parametrize("header", ["2", "Fri, 01 Jan 2100 00:00:00 GMT"])
def test_a_retried_503_waits_as_long_as_its_retry_after_asks(monkeypatch, header):
    waits = _waits_of(monkeypatch)
    policy = RetryPolicy(attempts=3, backoff=0.05, max_retry_after=float("inf"))
    t = SyncTransport("http://127.0.0.1:1", retry=policy, transport=_unavailable(header))
    assert t.send(ApiRequest("GET", "/GET/a", idempotent=True)).status_code == 200
    [wait] = waits
    assert wait >= 2  # not the policy's own 0.05 s, which the service said is too soon


def test_a_retry_after_beyond_the_policys_patience_is_answered_not_waited_for(monkeypatch):
    waits = _waits_of(monkeypatch)
    t = SyncTransport("http://127.0.0.1:1", retry=RetryPolicy(max_retry_after=10), transport=_unavailable("60"))
    assert t.send(ApiRequest("GET", "/GET/a", idempotent=True)).status_code == 503
    assert waits == []


def test_errors_and_reprs_never_show_secrets():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused while sending {request.headers['authorization']}")

    t = SyncTransport("http://127.0.0.1:1", BearerAuth(TOKEN), retry=FAST, transport=httpx.MockTransport(handler))
    with pytest.raises(TransportError) as info:
        t.send(ApiRequest("GET", "/PING"))
    assert TOKEN not in str(info.value) and mask(TOKEN) in str(info.value)
    assert TOKEN not in repr(t)
    basic = BasicAuth("me@example.com", TOKEN)
    assert TOKEN not in repr(basic) and "me@example.com" in repr(basic)


def test_importing_the_transport_puts_no_none_into_sys_modules():
    """Importing svckit changes nothing in the user's kernel: no module is marked missing (a None in
    sys.modules makes every later ``import`` of it fail, also once it is installed)."""
    code = ("import sys; before = {k for k, v in sys.modules.items() if v is None}; "
            "import svckit, svckit._http, svckit.kv; "
            "print(sorted(k for k, v in sys.modules.items() if v is None and k not in before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_cookie_a_server_sets_is_never_sent_back():
    """svckit's clients keep no cookies (httpx's client would keep them and send them back)."""
    cookies: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        cookies.append(request.headers.get("cookie"))
        return httpx.Response(200, json={"result": "OK"}, headers={"Set-Cookie": "sticky=node-2; Path=/"})

    t = SyncTransport("http://127.0.0.1:1", transport=httpx.MockTransport(handler))
    for _ in range(2):
        t.send(ApiRequest("GET", "/GET/a"))
    assert cookies == [None, None]


def test_default_timeout_is_set():
    t = SyncTransport("http://127.0.0.1:1")
    assert t._client.timeout.read == 10.0


def test_mask_shows_at_most_last_four():
    assert mask(TOKEN) == "***CRET"[:3] + TOKEN[-4:]
    assert mask("short") == "***" and mask(None) == "***"


# -- the one envelope decoder -------------------------------------------------------------------


def test_json_reply_body_or_the_error_of_its_status_with_secrets_masked():
    assert decode_json_reply(httpx.Response(200, json={"a": 1}), "GET /x") == {"a": 1}
    assert decode_json_reply(httpx.Response(200), "DELETE /x") is None
    with pytest.raises(NotFound, match="GET /x failed with HTTP 404: no such run"):
        decode_json_reply(httpx.Response(404, json={"error": "no such run"}), "GET /x")
    proxy_page = f"<html>bad gateway for {TOKEN}</html>"
    with pytest.raises(ServerError) as caught:
        decode_json_reply(httpx.Response(502, text=proxy_page), "GET /x",
                          lambda text: text.replace(TOKEN, mask(TOKEN)))
    assert TOKEN not in str(caught.value) and "bad gateway" in str(caught.value)
    with pytest.raises(ProtocolError, match="not JSON"):
        decode_json_reply(httpx.Response(200, text="<html>"), "GET /x")


BASES = ["http://127.0.0.1:7379", "http://127.0.0.1:7379/", "https://example.test/kv/", "http://[::1]:8080/a/b",
         "http://localhost/x%20y/", "http://127.0.0.1:7379?q=1"]
# pieces of paths as the clients make them (percent-encoded keys) and as a caller may write them
PATH_PARTS = ["get", "w12%3Akey", "a:b", "%", "%2", "%zz", "%C3%A9", "é", " ", "?", "#", ".", "..", "/", "//",
              "[x]", "a.b", "~!$&'()*+,;=@", "\\", "\"", "<>", "`", "{}", "|^", "\x7f", "\N{EM SPACE}", "%0A"]


@pytest.mark.parametrize("base", BASES)
def test_join_url_is_the_url_httpx_parses_from_base_and_path(base):
    for parts in itertools.chain(itertools.product(PATH_PARTS, repeat=2), [("",), ("/",), ("get", "/", "."),
                                                                          ("a", "/", "..", "/", "b")]):
        path = "".join(parts)
        try:
            expected = httpx.URL(f"{str(httpx.URL(base)).rstrip('/')}/{path.lstrip('/')}")
        except httpx.InvalidURL:
            with pytest.raises(httpx.InvalidURL):
                join_url(httpx.URL(base), path)
            continue
        joined = join_url(httpx.URL(base), path)
        assert (str(joined), joined.raw_path, joined.host, joined.port) == \
            (str(expected), expected.raw_path, expected.host, expected.port), path


def test_join_url_refuses_what_httpx_refuses():
    for path in ["get/a\r\nX-Injected: 1", "a\x00b", "x" * 70_000]:
        with pytest.raises(httpx.InvalidURL):
            httpx.URL(f"http://127.0.0.1/{path}")
        with pytest.raises(httpx.InvalidURL):
            join_url(httpx.URL("http://127.0.0.1"), path)


CLIENT_HEADERS = [{}, {"X-Team": "kv"}, {"Host": "proxy.example"}, {"User-Agent": "notebook/2"}]
REQUEST_HEADERS = [{}, {"Content-Type": "application/json"}, {"User-Agent": "other/1", "X-Two": "2"},
                   {"content-length": "5"}, {"Host": "else.example"}, {"Transfer-Encoding": "chunked"},
                   {"Upstash-Encoding": "base64", "x-empty": ""}]
BODIES = [{}, {"content": b""}, {"content": b'["SET","k","v"]'}, {"json": {"q": "caf\xe9"}},
          {"content": b"x", "params": {"a": "1 2"}}]


@pytest.mark.parametrize("client_headers", CLIENT_HEADERS)
def test_a_built_request_is_the_one_httpx_builds(client_headers):
    client = httpx.Client(base_url="http://127.0.0.1:7379/kv", timeout=3.0,
                          headers={"Authorization": "Bearer t", **client_headers})
    for method, request_headers, body, timeout in itertools.product(
            ["GET", "post", "PUT", "DELETE", "PATCH"], REQUEST_HEADERS, BODIES, [None, 1.5]):
        request = ApiRequest(method, "/get/k%3A1", headers=request_headers, timeout=timeout, **body)
        ours = request.build(client)
        theirs = client.build_request(method, "http://127.0.0.1:7379/kv/get/k%3A1", headers=request_headers,
                                      timeout=timeout or httpx.USE_CLIENT_DEFAULT, **body)
        seen = [(r.method, str(r.url), r.headers.multi_items(), r.read(), r.extensions) for r in (ours, theirs)]
        assert seen[0] == seen[1], (method, request_headers, body)
