"""The shared transport: retry rules, redaction, timeouts by default."""

from __future__ import annotations

import httpx
import pytest

from svckit._http import ApiRequest, BasicAuth, BearerAuth, RetryPolicy, SyncTransport
from svckit.errors import TransportError, mask

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
