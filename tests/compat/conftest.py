"""Fixtures of the ecosystem compatibility suite: the hosted service's own Python SDKs
(upstash-redis, upstash-ratelimit, upstash-vector, qstash), unchanged and unpatched, pointed at a
real sandbox on loopback.

The sandbox is ``blank_sandbox`` (tests/conftest.py): one per test module with every area, on a fresh
data directory and without demo data; area A runs on a real ``redis-server`` child (skipped locally
when it is missing, a failure in CI). Each module reads the URL and credentials of its area from
``blank_sandbox.env``;
``kv_url`` and ``kv_token`` are the key-value ones, in the shape ``upstash_redis.Redis(url, token)``
takes them.
"""

from __future__ import annotations

import pytest

from svckit.sandbox import Sandbox


@pytest.fixture(scope="module")
def kv_url(blank_sandbox: Sandbox) -> str:
    return blank_sandbox.env["SVC_KV_URL"]


@pytest.fixture(scope="module")
def kv_token(blank_sandbox: Sandbox) -> str:
    return blank_sandbox.env["SVC_KV_TOKEN"]
