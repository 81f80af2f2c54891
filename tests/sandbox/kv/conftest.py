"""Fixtures of the key-value conformance suite: ``kv_sandbox`` (one per backend), reached over real HTTP.

Every test that takes ``kv`` runs twice, against a sandbox whose area A is backed by a real
``redis-server`` child and by fakeredis. Tests get raw httpx clients: the point is what goes over
the wire, not what a client library makes of it.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis

from svckit.sandbox import Sandbox
from svckit.sandbox.kv.users import load_passwords
from tests.conftest import KV_BACKENDS, require_binary, running


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
        """A key no other test uses (the sandbox is shared within a backend). On a cluster, one test's
        keys share a hash tag, so that its multi-key commands may name them together (a cluster
        answers CROSSSLOT otherwise), while the tests' keys spread over every master."""
        if self.backend == "redis-cluster":
            test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
            return f"{name}:{{{hashlib.sha1(test.encode()).hexdigest()[:8]}}}:{uuid.uuid4().hex[:10]}"
        return f"{name}:{uuid.uuid4().hex[:10]}"

    @property
    def backend(self) -> str:
        return self.sandbox.area("kv").backend_name


def kv_of(sandbox: Sandbox) -> KV:
    env = sandbox.env
    return KV(sandbox, env["SVC_KV_URL"], env["SVC_KV_TOKEN"], env["SVC_KV_READONLY_TOKEN"],
              httpx.Client(timeout=10))


@contextmanager
def kv_served(data_dir, **options) -> Iterator[KV]:
    """A sandbox of the caller's own serving only the key-value area, reached over HTTP; stopped on exit."""
    with running(data_dir, areas=["kv"], **options) as sandbox:
        client = kv_of(sandbox)
        try:
            yield client
        finally:
            client.http.close()


def acl_user(kv: KV, *rules: str) -> tuple[str, str]:
    """An ACL user made through the gateway (``ACL SETUSER name on >password *rules``): its name and password."""
    name, password = f"u{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    made = kv.post("/", json=["ACL", "SETUSER", name, "on", f">{password}", *rules])
    assert made.json() == {"result": "OK"}, made.text
    return name, password


def rest_token(kv: KV, name: str, password: str) -> str:
    """The REST token ``ACL RESTTOKEN`` mints for an ACL user."""
    return kv.post("/", json=["ACL", "RESTTOKEN", name, password]).json()["result"]


def redis_as(data_dir: Path, user: str, **options) -> redis.Redis:
    """redis-py straight to the redis-server child of the sandbox on ``data_dir``, on its Unix socket, as one
    of the sandbox's own users (svckit.sandbox.kv.users), with that user's password from the data directory."""
    return redis.Redis(unix_socket_path=str(data_dir / "redis" / "redis.sock"), username=user,
                       password=load_passwords(data_dir)[user], **options)


@pytest.fixture(scope="module")
def child(tmp_path_factory) -> Iterator[KV]:
    """A sandbox on a redis-server child of the test module's own, its key-value area reached over HTTP."""
    with kv_served(tmp_path_factory.mktemp("child"), backend="redis") as client:
        yield client


@pytest.fixture(scope="session")
def kv(kv_sandbox: Sandbox) -> Iterator[KV]:
    client = kv_of(kv_sandbox)
    try:
        yield client
    finally:
        client.http.close()


@pytest.fixture(params=KV_BACKENDS)
def backend(request) -> str:
    if request.param == "redis":
        require_binary("redis-server")
    return request.param
