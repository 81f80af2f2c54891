"""Fixtures of the ecosystem compatibility suite: the hosted service's own Python SDKs
(upstash-redis, upstash-ratelimit, upstash-vector, qstash), unchanged and unpatched, pointed at a
real sandbox on loopback.

The sandbox is ``blank_sandbox`` (tests/conftest.py): one per test module with every area, on a fresh
data directory and without demo data; area A runs on a real ``redis-server`` child (skipped locally
when it is missing, a failure in CI). Each module reads the URL and credentials of its area from
``blank_sandbox.env``;
``kv_url`` and ``kv_token`` are the key-value ones, in the shape ``upstash_redis.Redis(url, token)``
takes them. ``node`` is Node.js for the vendor's JavaScript packages in tests/compat/js (its SDKs,
test_js_sdks.py; its CLI, test_upstash_cli.py): skipped locally, a failure in CI, where either is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from svckit.sandbox import Sandbox
from tests.conftest import IN_CI, require_binary

#: the vendor's JavaScript packages, pinned by package-lock.json (``npm ci --prefix tests/compat/js``)
JS_DIR = Path(__file__).parent / "js"


@pytest.fixture(scope="module")
def kv_url(blank_sandbox: Sandbox) -> str:
    return blank_sandbox.env["SVC_KV_URL"]


@pytest.fixture(scope="module")
def kv_token(blank_sandbox: Sandbox) -> str:
    return blank_sandbox.env["SVC_KV_TOKEN"]


@pytest.fixture(scope="module")
def node() -> str:
    path = require_binary("node")
    if not (JS_DIR / "node_modules").is_dir():
        message = "run: npm ci --prefix tests/compat/js"  # the JS packages are not installed
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path
