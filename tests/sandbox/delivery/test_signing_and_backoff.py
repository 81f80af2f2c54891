"""Signatures the SDKs' receivers accept, and when failed deliveries are tried again."""

from __future__ import annotations

import pytest
from qstash import Receiver
from qstash.errors import SignatureError

from svckit.sandbox.delivery.backoff import asked_delay, default_backoff, retry_delay, retry_delay_problem
from svckit.sandbox.delivery.signing import new_signing_key, signature


def test_the_python_sdks_receiver_accepts_a_delivery_signed_with_either_key():
    current, upcoming = new_signing_key(), new_signing_key()
    assert len(current) >= 32 and current.startswith("sig_") and current != upcoming
    url = "http://127.0.0.1:8000/api/hook?tenant=a"
    receiver = Receiver(current_signing_key=current, next_signing_key=upcoming)
    receiver.verify(signature=signature(current, url, b'{"n": 1}'), body='{"n": 1}', url=url)
    # after a rotation the deliveries are signed with the old next key: a receiver that knows both accepts them
    receiver.verify(signature=signature(upcoming, url, b"x"), body="x", url=url)
    with pytest.raises(SignatureError):
        receiver.verify(signature=signature(current, url, b"x"), body="tampered", url=url)
    with pytest.raises(SignatureError):
        receiver.verify(signature=signature(current, url, b"x"), body="x", url="http://127.0.0.1:8000/other")
    with pytest.raises(SignatureError):
        receiver.verify(signature=signature(new_signing_key(), url, b"x"), body="x", url=url)


def test_the_default_backoff_follows_the_vendors_table():
    assert [round(default_backoff(n)) for n in (1, 2, 3)] == [12, 148, 1808]
    assert default_backoff(5) == default_backoff(50) == 86400
    assert retry_delay(None, 0) == default_backoff(1)


def test_a_retry_delay_expression_gives_milliseconds_of_retried():
    assert [retry_delay("1000 * (1 + retried)", n) for n in range(3)] == [1.0, 2.0, 3.0]
    assert retry_delay("max(10, pow(2, retried))", 0) == 0.01
    assert retry_delay("pow(2, retried) * 1000", 200) == 86400  # a day at most
    assert retry_delay_problem("1000 * (1 + retried)") is None
    assert "not an expression" in retry_delay_problem("open('/etc/passwd')")


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after": "5"}, 5), ({"retry-after": "6m5s"}, 365), ({"x-ratelimit-reset": "250ms"}, 0.25),
    ({"retry-after": "Thu, 01 Jan 1970 00:01:40 GMT"}, 60), ({"retry-after": "2d"}, None),
    ({"retry-after": "999999"}, None), ({}, None)])
def test_the_destination_may_say_when_to_try_again(headers, seconds):
    assert asked_delay(headers, now=40) == seconds
