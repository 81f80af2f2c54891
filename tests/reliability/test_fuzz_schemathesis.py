"""Schemathesis against the sandbox's own OpenAPI document (GET /openapi.json), over real HTTP.

Every operation of the four areas is fuzzed with positive and negative cases (schemathesis 4.x):
- on ``guarded`` with no credentials and with wrong ones: every answer is a 401 (or a 404 for a path
  that routes nowhere), with the spec's error body, and after each test the stored data is exactly
  what it was before it (KV DUMP of every key, vector counts, account record, runs and DLQ);
- on ``playground`` with valid credentials: every answer is < 500, and every 4xx has the error body.

Bounded by ``SVCKIT_FUZZ_EXAMPLES`` (default 6 examples per operation and credential kind), so the
file runs in well under two minutes on two cores.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from svckit.sandbox import openapi
from tests.reliability.conftest import Live, area_of, assert_error_body

EXAMPLES = int(os.environ.get("SVCKIT_FUZZ_EXAMPLES", "6"))
TIMEOUT = 10  # seconds; an answer that takes longer is a hang

schema = schemathesis.openapi.from_dict(openapi.document())
fuzz = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

WRONG = {
    "kv": "Bearer wrong-kv-token",
    "vector": "Bearer wrong-vector-token",
    "devapi": "Basic " + "c2FuZGJveEBzdmNraXQubG9jYWw6d3Jvbmc=",  # the right e-mail, a wrong key
    "queue": "Bearer wrong-queue-token",
    "sandbox": "Bearer nothing",
}


def _strip_credentials(case) -> None:
    """Drop whatever credentials schemathesis generated from the security schemes."""
    for name in list(case.headers or {}):
        if name.lower() == "authorization":
            del case.headers[name]
    if case.query:
        case.query.pop("_token", None)


def _is_stream(case) -> bool:
    """POST /kv/monitor and /kv/subscribe/... stream until the client leaves: with valid credentials a
    fuzz case would wait for its timeout, by design, so those two are left to the auth suite."""
    path = case.formatted_path
    return case.method.upper() == "POST" and (path.rstrip("/") == "/kv/monitor" or path.startswith("/kv/subscribe/"))


def _check_unauthenticated(live: Live, case, response) -> None:
    area = area_of(case.formatted_path)
    assert response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
    if case.path in openapi.PUBLIC_PATHS:  # public; negative cases may use another method (405)
        if response.status_code not in (200, 503):  # /health is 503 with its report when a check fails
            assert_error_body(area, response)
        for secret in live.secrets().values():
            assert secret not in response.text
        return
    if response.status_code == 400 and response.text == "Invalid HTTP request received.":
        return  # the generated request is not HTTP (a header value HTTP forbids): uvicorn refuses it unread
    assert response.status_code in (401, 404, 405), f"{case.method} {case.formatted_path}: " \
        f"{response.status_code} without valid credentials: {response.text[:300]}"
    assert_error_body(area, response)
    for secret in live.secrets().values():
        assert secret not in response.text


@schema.parametrize()
@fuzz
def test_no_credentials_is_refused_and_never_a_500(case, guarded: Live, unchanged):
    _strip_credentials(case)
    response = case.call(base_url=guarded.url, timeout=TIMEOUT)
    _check_unauthenticated(guarded, case, response)


@schema.parametrize()
@fuzz
def test_wrong_credentials_are_refused_and_never_a_500(case, guarded: Live, unchanged):
    _strip_credentials(case)
    area = area_of(case.formatted_path)
    response = case.call(base_url=guarded.url, timeout=TIMEOUT, headers={"Authorization": WRONG[area]})
    _check_unauthenticated(guarded, case, response)


@schema.parametrize()
@fuzz
def test_valid_credentials_never_give_a_500(case, playground: Live):
    if _is_stream(case):
        pytest.skip("an event stream with valid credentials never ends (tested in test_auth_everywhere)")
    _strip_credentials(case)
    area = area_of(case.formatted_path)
    headers = playground.auth(area) if area != "sandbox" else {}
    response = case.call(base_url=playground.url, timeout=TIMEOUT, headers=headers)
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code}: " \
                                       f"{response.text[:300]}"
    if response.status_code >= 400:
        assert_error_body(area, response)

