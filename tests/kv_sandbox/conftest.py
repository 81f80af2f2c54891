"""Fixtures of the key-value conformance suite: one sandbox per backend, reached over real HTTP.

Every test that takes ``kv`` runs twice, against a sandbox whose area A is backed by a real
``redis-server`` child and by fakeredis. Tests get raw httpx clients: the point is what goes over
the wire, not what a client library makes of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from svckit.sandbox import Sandbox
from tests.conftest import require_binary

BACKENDS = ["redis", "fakeredis"]


@dataclass
class KV:
    """A running sandbox and what a test needs to talk to its key-value area."""

    sandbox: Sandbox
    url: str
    token: str
    readonly_token: str
    http: httpx.Client

    def auth(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}

    def get(self, path: str, **kw) -> httpx.Response:
        return self.http.get(self.url + path, headers={**self.auth(), **kw.pop("headers", {})}, **kw)

    def post(self, path: str, **kw) -> httpx.Response:
        return self.http.post(self.url + path, headers={**self.auth(), **kw.pop("headers", {})}, **kw)

    def key(self, name: str = "k") -> str:
        """A key no other test uses (the sandbox is shared within a backend)."""
        return f"{name}:{uuid.uuid4().hex[:10]}"

    @property
    def backend(self) -> str:
        return self.sandbox.area("kv").backend_name


def start_sandbox(backend: str, **options) -> Sandbox:
    if backend == "redis":
        require_binary("redis-server")
    return Sandbox(areas=["kv"], backend=backend, **options).start()


def kv_of(sandbox: Sandbox) -> KV:
    env = sandbox.env
    return KV(sandbox, env["SVC_KV_URL"], env["SVC_KV_TOKEN"], env["SVC_KV_READONLY_TOKEN"],
              httpx.Client(timeout=10))


@pytest.fixture(scope="session", params=BACKENDS)
def kv(request) -> Iterator[KV]:
    sandbox = start_sandbox(request.param)
    client = kv_of(sandbox)
    try:
        yield client
    finally:
        client.http.close()
        sandbox.stop()


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    if request.param == "redis":
        require_binary("redis-server")
    return request.param
