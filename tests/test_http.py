"""The shared transport: retry rules, redaction, timeouts by default."""

from __future__ import annotations

import itertools
import threading

import httpx
import pytest

from svckit._http import (
    ApiRequest,
    BasicAuth,
    BearerAuth,
    RetryPolicy,
    SyncTransport,
    apaginate,
    decode_json_reply,
    join_url,
    paginate,
)
from svckit._progress import Progress
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


# -- the one paginator --------------------------------------------------------------------------


class _Page:
    def __init__(self, runs: list[int], cursor: str | None) -> None:
        self.runs, self.cursor = runs, cursor


PAGES = {None: _Page([1, 2], "b"), "b": _Page([3], "c"), "c": _Page([4, 5], None)}


def test_paginate_follows_cursors_to_the_page_without_one():
    asked: list[object] = []

    def fetch(cursor: str | None) -> _Page:
        asked.append(cursor)
        return PAGES[cursor]

    assert list(paginate(fetch, "runs")) == [1, 2, 3, 4, 5]
    assert asked == [None, "b", "c"]


def test_paginate_reads_tuple_pages_from_a_start_cursor_until_scan_returns_zero():
    scan = {0: (7, ["a", "b"]), 7: (9, []), 9: (0, ["c"])}
    asked: list[int] = []

    def fetch(cursor: int) -> tuple[int, list[str]]:
        asked.append(cursor)
        return scan[cursor]

    keys = paginate(fetch, lambda page: page[1], cursor=lambda page: page[0], start=0)
    assert list(keys) == ["a", "b", "c"] and asked == [0, 7, 9]


def test_paginate_is_lazy_and_its_progress_bar_counts_the_items(capsys):
    fetched: list[object] = []

    def fetch(cursor: str | None) -> _Page:
        fetched.append(cursor)
        return PAGES[cursor]

    items = paginate(fetch, "runs", progress=True)
    assert fetched == []
    assert next(items) == 1 and fetched == [None]
    assert list(items) == [2, 3, 4, 5]
    last_state = capsys.readouterr().err.strip().split("\r")[-1]
    assert last_state.startswith("runs: 5 runs ")


async def test_apaginate_is_the_async_twin():
    async def fetch(cursor: str | None) -> _Page:
        return PAGES[cursor]

    assert [item async for item in apaginate(fetch, "runs")] == [1, 2, 3, 4, 5]
    scan = {0: (3, ["a"]), 3: (0, ["b"])}

    async def fetch_scan(cursor: int) -> tuple[int, list[str]]:
        return scan[cursor]

    keys = apaginate(fetch_scan, lambda page: page[1], cursor=lambda page: page[0], start=0)
    assert [key async for key in keys] == ["a", "b"]


def test_paginate_reports_progress_to_a_hook_and_stops_between_pages_on_cancel():
    seen: list[Progress] = []
    assert list(paginate(lambda cursor: PAGES[cursor], "runs", progress=seen.append)) == [1, 2, 3, 4, 5]
    # one page a request, one after another: the round trips so far
    assert seen == [Progress("runs", 2, None, "runs", round_trips=1),
                    Progress("runs", 3, None, "runs", round_trips=2),
                    Progress("runs", 5, None, "runs", round_trips=3)]

    fetched: list[object] = []
    stop = threading.Event()

    def fetch(cursor: str | None) -> _Page:
        fetched.append(cursor)
        stop.set()  # cancelled while the first page was on its way
        return PAGES[cursor]

    assert list(paginate(fetch, "runs", cancel=stop)) == [1, 2]  # the page in hand, no further request
    assert fetched == [None]


async def test_apaginate_reports_and_cancels_alike():
    async def fetch(cursor: str | None) -> _Page:
        return PAGES[cursor]

    seen: list[Progress] = []
    pages = apaginate(fetch, "runs", progress=seen.append, cancel=lambda: len(seen) == 2)
    assert [item async for item in pages] == [1, 2, 3]
    assert [p.done for p in seen] == [2, 3]


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
