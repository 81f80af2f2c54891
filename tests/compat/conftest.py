"""Fixtures of the ecosystem compatibility suite: the hosted service's own Python SDKs
(upstash-redis, upstash-ratelimit, upstash-vector, qstash), unchanged and unpatched, pointed at a
real sandbox on loopback.

``sandbox`` is one sandbox per test module with every area, on a fresh data directory and without
demo data; area A runs on a real ``redis-server`` child (skipped locally when it is missing, a
failure in CI). Each module reads the URL and credentials of its area from ``sandbox.env``;
``kv_url`` and ``kv_token`` are the key-value ones, in the shape ``upstash_redis.Redis(url, token)``
takes them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from svckit.sandbox import ALL_AREAS, Sandbox
from tests.conftest import require_binary

os.environ["HF_HUB_OFFLINE"] = "1"  # the vector area's model ships in a pip package: never the hub


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    require_binary("redis-server")
    sb = Sandbox(tmp_path_factory.mktemp("compat-sandbox"), seed=None, areas=ALL_AREAS, backend="redis").start()
    try:
        yield sb
    finally:
        sb.stop()


@pytest.fixture(scope="module")
def kv_url(sandbox: Sandbox) -> str:
    return sandbox.env["SVC_KV_URL"]


@pytest.fixture(scope="module")
def kv_token(sandbox: Sandbox) -> str:
    return sandbox.env["SVC_KV_TOKEN"]
