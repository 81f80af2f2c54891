"""Fixtures of the reliability and security suites: full sandboxes (all four areas) on loopback, the
credentials of each area, and a snapshot of everything the sandbox stores.

The key-value area runs on a real ``redis-server`` child when one is installed (CI installs it), else
on fakeredis: the properties checked here (status codes, error bodies, unchanged data) do not depend on
the backend. Tests that need real Redis ACLs call ``require_binary("redis-server")`` themselves.

Two session sandboxes, on separate data directories:
- ``guarded``: fuzzed with missing or wrong credentials only, so nothing may change in it;
- ``playground``: fuzzed with valid credentials, where writes are legitimate (only "no 500" holds).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from svckit.sandbox import Sandbox
from tests.conftest import basic, start_sandbox, wait_vector_seeded

#: items of the demo corpus per vector index: enough to have data to protect, small enough to embed fast.
DEMO_LIMIT = 6


def kv_backend() -> str:
    return "redis" if shutil.which("redis-server") else "fakeredis"


@dataclass
class Live:
    """A running sandbox plus what tests need to reach each area with the right credentials."""

    sandbox: Sandbox
    http: httpx.Client

    @property
    def url(self) -> str:
        return self.sandbox.url

    @property
    def env(self) -> dict[str, str]:
        return self.sandbox.env  # read each time: the queue token may have been rotated

    def auth(self, area: str) -> dict[str, str]:
        """Valid credentials for an area ("kv", "vector", "devapi", "queue"), as headers."""
        env = self.env
        if area == "kv":
            return {"Authorization": f"Bearer {env['SVC_KV_TOKEN']}"}
        if area == "vector":
            return {"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"}
        if area == "devapi":
            return {"Authorization": basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])}
        if area == "queue":
            return {"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}
        raise ValueError(area)

    def secrets(self) -> dict[str, str]:
        env = self.env
        account = self.sandbox.area("account").store.queue_account()  # type: ignore[attr-defined]
        return {"SVC_KV_TOKEN": env["SVC_KV_TOKEN"], "SVC_KV_READONLY_TOKEN": env["SVC_KV_READONLY_TOKEN"],
                "SVC_VECTOR_TOKEN": env["SVC_VECTOR_TOKEN"], "SVC_DEVAPI_KEY": env["SVC_DEVAPI_KEY"],
                "queue token": account["token"], "queue password": account["password"]}


def area_of(path: str) -> str:
    """Which area answers a sandbox path ("kv", "vector", "devapi", "queue", or "sandbox")."""
    for prefix, area in (("/kv", "kv"), ("/vector", "vector"), ("/devapi", "devapi"), ("/queue", "queue")):
        if path == prefix or path.startswith(prefix + "/"):
            return area
    return "sandbox"


def assert_error_body(area: str, response: httpx.Response | Any) -> None:
    """A 4xx carries the spec's error body: ``{error}`` (kv, devapi, queue) or ``{error, status}``
    (vector, and the sandbox's own 404 for paths outside every area). HEAD answers have no body."""
    status = response.status_code
    assert 400 <= status < 500, f"{status}: {response.text[:300]}"
    request = getattr(response, "request", None)
    if request is not None and request.method == "HEAD":
        return
    resp2 = request is not None and (request.headers.get("Service-Response-Format") or "").strip().lower() == "resp2"
    if resp2 and response.content.startswith(b"-"):  # rule 6: the raw reply, here a RESP error line
        return
    content_type = response.headers.get("content-type") or response.headers.get("Content-Type") or ""
    if isinstance(content_type, list):  # schemathesis' Response keeps every value of a header
        content_type = content_type[0]
    assert content_type.startswith("application/json"), \
        f"{status} with content-type {content_type!r}: {response.text[:200]!r}"
    body = response.json()
    assert isinstance(body, dict), body
    assert isinstance(body.get("error"), str) and body["error"], body
    if area in ("vector", "sandbox"):
        assert body.get("status") == status, body


def start_full_sandbox(data_dir: Any = None, **options: Any) -> Sandbox:
    """All four areas with the demo data, returned once the background vector seeding is done."""
    sandbox = start_sandbox(data_dir, seed="demo", backend=kv_backend(), demo_limit=DEMO_LIMIT,
                            queue_retry_delay=0, **options)
    wait_vector_seeded(sandbox, DEMO_LIMIT)
    return sandbox


def snapshot(live: Live) -> dict[str, Any]:
    """Everything the sandbox stores, in a comparable form.

    KV: every key with its DUMP (base64, exact bytes) and whether it has a TTL; vector: the vector
    count of every namespace of every index; account: the queue account record and the search
    indexes; queue: every run (id, state, step count) and every DLQ entry. Read through the sandbox's
    own HTTP interfaces with valid credentials, except the SQLite rows, read from its store.
    """
    http, url = live.http, live.url
    kv_auth = {**live.auth("kv"), "Service-Encoding": "base64"}
    keys = http.post(f"{url}/kv/", headers=live.auth("kv"), json=["KEYS", "*"]).json()["result"]
    kv: dict[str, Any] = {}
    if keys:
        rows = [r for key in keys for r in (["DUMP", key], ["PTTL", key])]
        replies = http.post(f"{url}/kv/pipeline", headers=kv_auth, json=rows).json()
        for i, key in enumerate(keys):
            kv[key] = (replies[2 * i]["result"], replies[2 * i + 1]["result"] != -1)
    vector = {}
    for name in ("dense", "sparse", "hybrid", "nomodel"):
        info = http.get(f"{url}/vector/{name}/info", headers=live.auth("vector")).json()["result"]
        vector[name] = {ns: v["vectorCount"] for ns, v in info["namespaces"].items()}
    store = live.sandbox.area("account").store  # type: ignore[attr-defined]
    runs = [tuple(r) for r in store.query(
        "SELECT r.run_id, r.created_at, r.state, COUNT(s.seq) FROM runs r LEFT JOIN steps s ON s.run_seq = r.seq "
        "GROUP BY r.seq ORDER BY r.seq")]
    dlq = [tuple(r) for r in store.query("SELECT dlq_id, run_seq, message_id FROM dlq ORDER BY dlq_id")]
    return {"kv": kv, "vector": vector, "account": store.queue_account(),
            "search_indexes": store.search_indexes(), "runs": runs, "dlq": dlq}


def _live(sandbox: Sandbox) -> Iterator[Live]:
    with httpx.Client(timeout=10) as http:
        yield Live(sandbox, http)


@pytest.fixture(scope="session")
def guarded(tmp_path_factory) -> Iterator[Live]:
    """A full sandbox that only ever sees missing or wrong credentials: its data must not change."""
    sandbox = start_full_sandbox(tmp_path_factory.mktemp("guarded"))
    try:
        yield from _live(sandbox)
    finally:
        sandbox.stop()


@pytest.fixture
def unchanged(guarded: Live) -> Iterator[None]:
    """``guarded``'s data snapshotted before the test and compared after it, so a test that uses this
    fails when anything it sent changed stored data, whichever tests ran before it or run after."""
    before = snapshot(guarded)
    yield
    assert snapshot(guarded) == before, "the guarded sandbox's data changed during this test"


@pytest.fixture(scope="session")
def playground(tmp_path_factory) -> Iterator[Live]:
    """A full sandbox fuzzed with valid credentials (writes allowed; only 'never a 500' holds)."""
    sandbox = start_full_sandbox(tmp_path_factory.mktemp("playground"))
    try:
        yield from _live(sandbox)
    finally:
        sandbox.stop()
