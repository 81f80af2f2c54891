"""The retry policy as a caller meets it: how many requests go out, and how long each wait is.

Waits are recorded instead of slept (``time.sleep`` replaced); the jitter is pinned where a test
reads a wait's length (``random.uniform`` answering the top, or the bottom, of its range).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import ssl

import httpx
import pytest

from svckit._http import ApiRequest, RetryPolicy, SyncTransport, retry_after
from svckit._pools import ReplyTooLarge
from svckit.errors import StreamRefused, TransportError, UntrustedCertificate

URL = "http://127.0.0.1:1"


class Service:
    """A MockTransport answering from a script (status codes or exceptions), then 200; counts requests."""

    def __init__(self, *script: object, headers: dict[str, str] | None = None) -> None:
        self.script, self.headers, self.requests = list(script), headers or {}, 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.script:
            item = self.script.pop(0)
            if isinstance(item, BaseException):
                raise item
            return httpx.Response(int(item), json={"error": "busy"}, headers=self.headers)
        return httpx.Response(200, json={"result": "OK"}, headers={"content-type": "text/event-stream"})


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    recorded: list[float] = []
    monkeypatch.setattr("svckit._http.time.sleep", recorded.append)
    return recorded


@pytest.fixture
def top_of_jitter(monkeypatch) -> None:
    """Every wait the top of its jittered range: the policy's cap for that attempt."""
    monkeypatch.setattr("svckit._http.random.uniform", lambda low, high: high)


def send(policy: RetryPolicy, service: Service, request: ApiRequest) -> httpx.Response:
    return SyncTransport(URL, retry=policy, transport=httpx.MockTransport(service)).send(request)


GET = ApiRequest("GET", "/GET/a", idempotent=True)
POST = ApiRequest("POST", "/INCR/a")


def test_attempts_is_the_number_of_requests_and_the_last_answer_is_returned(waits):
    service = Service(503, 503, 503, 503)
    assert send(RetryPolicy(attempts=3, backoff=0), service, GET).status_code == 503
    assert service.requests == 3 and len(waits) == 2
    service = Service(503)
    assert send(RetryPolicy(attempts=1), service, GET).status_code == 503 and service.requests == 1


def test_at_least_one_attempt():
    with pytest.raises(ValueError, match=r"^attempts: must be at least 1$"):
        RetryPolicy(attempts=0)
    assert RetryPolicy(attempts=1).attempts == 1


def test_waits_double_from_backoff_up_to_max_backoff(waits, top_of_jitter):
    service = Service(503, 503, 503, 503, 503)
    send(RetryPolicy(attempts=6, backoff=0.1, max_backoff=0.3), service, GET)
    assert waits == pytest.approx([0.1, 0.2, 0.3, 0.3, 0.3])
    waits.clear()
    send(RetryPolicy(attempts=4, backoff=0.25, max_backoff=10), Service(502, 504, 500), GET)
    assert waits == pytest.approx([0.25, 0.5, 1.0])


def test_the_jitter_is_full_it_may_wait_nothing(waits, monkeypatch):
    ranges: list[tuple[float, float]] = []
    monkeypatch.setattr("svckit._http.random.uniform", lambda low, high: ranges.append((low, high)) or low)
    send(RetryPolicy(attempts=3, backoff=0.1), Service(503, 503), GET)
    assert waits == [0, 0] and [low for low, _ in ranges] == [0, 0]
    assert [high for _, high in ranges] == pytest.approx([0.1, 0.2])


@pytest.mark.parametrize(("status", "retried"), [(500, True), (502, True), (503, True), (504, True),
                                                  (501, False), (429, False), (404, False), (400, False)])
def test_which_statuses_are_retried(waits, status, retried):
    service = Service(status)
    answer = send(RetryPolicy(attempts=2, backoff=0), service, GET)
    assert (answer.status_code, service.requests) == ((200, 2) if retried else (status, 1))


def test_a_policy_may_name_its_own_statuses(waits):
    service = Service(429)
    assert send(RetryPolicy(attempts=2, backoff=0, statuses=frozenset({429})), service, GET).status_code == 200
    assert service.requests == 2


def test_a_write_that_may_have_run_is_not_repeated_unless_asked(waits):
    for failure in (503, httpx.ReadError("reset"), httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("cut")):
        service = Service(failure)
        if isinstance(failure, int):
            assert send(RetryPolicy(backoff=0), service, POST).status_code == 503
        else:
            with pytest.raises(TransportError):
                send(RetryPolicy(backoff=0), service, POST)
        assert service.requests == 1
        service = Service(failure)
        assert send(RetryPolicy(backoff=0, retry_non_idempotent=True), service, POST).status_code == 200
        assert service.requests == 2


def test_a_read_is_repeated_after_any_transport_failure(waits):
    for failure in (httpx.ReadError("reset"), httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("cut")):
        service = Service(failure)
        assert send(RetryPolicy(backoff=0), service, GET).status_code == 200 and service.requests == 2


def test_a_connection_never_opened_is_always_retried_even_for_a_write(waits):
    for failure in (httpx.ConnectError("refused"), httpx.ConnectTimeout("no answer")):
        service = Service(failure, failure)
        assert send(RetryPolicy(backoff=0), service, POST).status_code == 200 and service.requests == 3


def test_a_reply_too_large_is_not_retried(waits):
    service = Service(ReplyTooLarge("over the limit"))
    with pytest.raises(TransportError, match="ReplyTooLarge: over the limit"):
        send(RetryPolicy(backoff=0), service, GET)
    assert service.requests == 1 and waits == []


def _untrusted() -> httpx.ConnectError:
    try:
        try:
            raise ssl.SSLCertVerificationError("certificate verify failed: self-signed certificate")
        except ssl.SSLError as exc:
            raise httpx.ConnectError(str(exc)) from exc
    except httpx.ConnectError as error:
        return error


def test_an_untrusted_certificate_is_not_retried_and_says_how_to_trust_it(waits):
    service = Service(_untrusted())
    with pytest.raises(UntrustedCertificate, match="set SVC_CA_FILE"):
        send(RetryPolicy(backoff=0), service, GET)
    assert service.requests == 1 and waits == []


def test_the_last_failure_is_raised_naming_the_request(waits):
    service = Service(httpx.ConnectError("refused"), httpx.ConnectError("refused"), httpx.ConnectError("again"))
    with pytest.raises(TransportError, match=r"^GET http://127.0.0.1:1 failed: ConnectError: again$"):
        send(RetryPolicy(attempts=3, backoff=0), service, GET)
    assert service.requests == 3 and len(waits) == 2


def test_retry_after_in_seconds_or_as_a_date():
    def answer(value: str | None) -> httpx.Response:
        return httpx.Response(503, headers={} if value is None else {"Retry-After": value})

    assert retry_after(answer("3")) == 3.0 and retry_after(answer("1.5")) == 1.5
    assert retry_after(answer("-4")) == 0.0 and retry_after(answer("0")) == 0.0
    assert retry_after(answer(None)) is None and retry_after(answer("soon")) is None
    assert retry_after(answer("Fri, 01 Jan 2100 00:00:00 -0000")) is None  # no zone: not a time
    assert retry_after(answer("Fri, 01 Jan 2010 00:00:00 GMT")) == 0.0  # passed already
    ahead = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=120)
    assert 100 < retry_after(answer(email.utils.format_datetime(ahead, usegmt=True))) <= 120


def test_a_retry_after_within_patience_is_waited_even_at_the_limit(waits):
    service = Service(503, headers={"Retry-After": "10"})
    assert send(RetryPolicy(backoff=0, max_retry_after=10), service, GET).status_code == 200
    assert waits == [10.0] and service.requests == 2


def test_a_retry_after_shorter_than_the_backoff_waits_the_backoff(waits, top_of_jitter):
    service = Service(503, headers={"Retry-After": "0"})
    assert send(RetryPolicy(backoff=0.4, max_retry_after=10), service, GET).status_code == 200
    assert waits == pytest.approx([0.4])


def test_a_retry_after_beyond_patience_returns_the_answer(waits):
    service = Service(503, headers={"Retry-After": "11"})
    assert send(RetryPolicy(backoff=0, max_retry_after=10), service, GET).status_code == 503
    assert waits == [] and service.requests == 1


def test_a_retry_after_on_a_status_not_retried_is_not_waited(waits):
    service = Service(404, headers={"Retry-After": "1"})
    assert send(RetryPolicy(backoff=0), service, GET).status_code == 404 and waits == []


def test_opening_a_stream_is_retried_then_raises_naming_the_stream(waits, top_of_jitter):
    service = Service(httpx.ConnectError("refused"))
    t = SyncTransport(URL, retry=RetryPolicy(attempts=2, backoff=0.3), transport=httpx.MockTransport(service))
    stream = t.stream_lines(ApiRequest("GET", "/monitor"))
    stream.close()
    assert service.requests == 2 and waits == pytest.approx([0.3])
    service = Service(httpx.ConnectError("refused"), httpx.ConnectError("still refused"))
    t = SyncTransport(URL, retry=RetryPolicy(attempts=2, backoff=0), transport=httpx.MockTransport(service))
    with pytest.raises(TransportError, match=r"^opening stream http://127.0.0.1:1 failed: ConnectError: still"):
        t.stream_lines(ApiRequest("GET", "/monitor"))
    service = Service(503)
    t = SyncTransport(URL, retry=RetryPolicy(attempts=2, backoff=0), transport=httpx.MockTransport(service))
    with pytest.raises(StreamRefused, match="HTTP 503"):
        t.stream_lines(ApiRequest("GET", "/monitor"))
    assert service.requests == 1


def _wrapped(depth: int, link: str = "__cause__") -> httpx.ConnectError:
    """A connect error whose certificate error is ``depth`` links down its chain."""
    error: BaseException = ssl.SSLCertVerificationError("certificate verify failed")
    for _ in range(depth):
        outer = httpx.ConnectError("wrapped")
        setattr(outer, link, error)
        error = outer
    assert isinstance(error, httpx.ConnectError)
    return error


@pytest.mark.parametrize("link", ["__cause__", "__context__"])
def test_a_certificate_error_is_found_by_cause_or_context_up_to_sixteen_deep(waits, link):
    for depth in (1, 15):
        service = Service(_wrapped(depth, link))
        with pytest.raises(UntrustedCertificate):
            send(RetryPolicy(backoff=0), service, GET)
        assert service.requests == 1
    service = Service(_wrapped(16, link))  # beyond the bound: a plain connect error, retried
    assert send(RetryPolicy(backoff=0), service, GET).status_code == 200 and service.requests == 2


def test_an_error_chain_that_loops_is_a_plain_connect_error(waits):
    looping = httpx.ConnectError("refused")
    looping.__context__ = looping
    service = Service(looping)
    assert send(RetryPolicy(backoff=0), service, GET).status_code == 200 and service.requests == 2


def test_opening_a_read_stream_is_retried_after_a_reset(waits):
    service = Service(httpx.ReadError("reset"))
    t = SyncTransport(URL, retry=RetryPolicy(attempts=2, backoff=0), transport=httpx.MockTransport(service))
    t.stream_lines(ApiRequest("GET", "/monitor", idempotent=True)).close()
    assert service.requests == 2
