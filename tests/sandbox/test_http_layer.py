"""The sandbox's HTTP layer (svckit/sandbox/http.py): one error type answered in each area's own error
body, and one way off the event loop."""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

import svckit.sandbox
from svckit.sandbox import Sandbox
from svckit.sandbox.http import ApiError, off_loop
from tests.conftest import running

SANDBOX = Path(svckit.sandbox.__file__).parent
#: the ways off the event loop that off_loop replaces
OTHER_WAYS = {"run_in_threadpool", "to_thread", "run_in_executor"}


def test_work_leaves_the_event_loop_one_way():
    found = []
    for path in sorted(SANDBOX.rglob("*.py")):
        if path.name == "http.py" and path.parent == SANDBOX:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in OTHER_WAYS:
                found.append(f"{path.relative_to(SANDBOX)}:{node.lineno} {name}")
    assert found == []


def test_off_loop_runs_in_a_worker_thread_with_its_arguments_and_limiter():
    limiter = anyio.CapacityLimiter(1)

    def work(a: int, *, b: int) -> tuple[int, bool]:
        return a + b, threading.current_thread() is threading.main_thread()

    async def main() -> tuple[tuple[int, bool], tuple[int, bool]]:
        return await off_loop(work, 1, b=2), await off_loop(work, 3, b=4, limiter=limiter)

    assert anyio.run(main) == ((3, False), (7, False))


def test_an_api_error_raised_in_a_worker_thread_reaches_the_caller():
    def refuse() -> None:
        raise ApiError(409, "taken", {"X-Why": "test"})

    with pytest.raises(ApiError) as caught:
        anyio.run(off_loop, refuse)
    assert (caught.value.status, caught.value.message, caught.value.headers) == (409, "taken", {"X-Why": "test"})


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("http-layer"), areas=["kv", "vector", "account", "queue"],
                 backend="fakeredis", embedding_model=None) as sb:
        yield sb


def test_each_area_answers_every_error_in_its_own_body(sandbox):
    s = sandbox.settings
    kv, vector = {"Authorization": f"Bearer {s.kv_token}"}, {"Authorization": f"Bearer {s.vector_token}"}
    queue = {"Authorization": f"Bearer {s.queue_token}"}
    with httpx.Client(base_url=sandbox.url, timeout=60) as http:
        r = http.delete("/kv/get/a", headers=kv)  # raised by the gateway, answered by it
        assert (r.status_code, r.json(), r.headers["allow"]) == (
            405, {"error": "method DELETE is not allowed: use GET, HEAD, POST or PUT"}, "GET, HEAD, POST, PUT")
        r = http.post("/kv/pipeline", headers=kv, content=b"[[")
        assert r.status_code == 400 and list(r.json()) == ["error"]
        r = http.get("/kv/get/a")
        assert (r.status_code, r.headers["www-authenticate"]) == (401, "Bearer")
        r = http.post("/vector/dense/query", headers=vector, content=b"{{")  # raised in a worker thread
        assert r.status_code == 400 and r.json()["status"] == 400
        assert r.json()["error"].startswith("request body is not valid JSON")
        r = http.put("/vector/dense/query", headers=vector)  # routing's 405, in the vector body, with Allow
        assert (r.json(), set(r.headers["allow"].split(", "))) == (
            {"error": "Method Not Allowed", "status": 405}, {"GET", "HEAD", "POST"})
        r = http.get("/devapi/v2/nowhere", auth=(s.devapi_email, s.devapi_key))
        assert (r.status_code, r.json()) == (404, {"error": "not found"})
        r = http.get("/queue/v2/dlq/zzz", headers=queue)
        assert (r.status_code, r.json()) == (404, {"error": "no DLQ entry 'zzz'"})
        r = http.get("/nowhere")  # the sandbox's own
        assert (r.status_code, r.json()) == (404, {"error": "Not Found", "status": 404})
