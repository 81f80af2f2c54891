"""Hostile vector requests over real HTTP: a GLOB that backtracks for hours answers at once and holds
neither the event loop nor the index lock; every limit answers 400 in the vector error shape.

The sandbox runs in this process, so a match that holds the GIL for hours would also stop
pytest-timeout (its alarm needs the GIL to fire): ``hard_timeout`` arms faulthandler's watchdog, a C
thread that ends the run with every thread's stack even then.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import os
import threading

import anyio.to_thread
import httpx
import pytest

from tests.conftest import running
from tests.sandbox.vector.conftest import post, unit

STARS = 25
#: 25 stars then a 'b' that is not there: a backtracking engine tries about 5000^25 ways to split the value
HOSTILE = "s GLOB '" + "*a" * STARS + "*b'"
HOLD = "held = 1"  # a filter the tests hold open mid-evaluation
NAMESPACE = "hostile"


@pytest.fixture(scope="module")
def sb(tmp_path_factory):
    with running(tmp_path_factory.mktemp("hostile"), areas=["kv", "vector"], backend="redis",
                 vector_threads_per_index=2, vector_max_resumable=2) as sandbox:
        post(sandbox, "nomodel", f"/upsert/{NAMESPACE}", [
            {"id": "long", "vector": unit(0), "metadata": {"s": "a" * 5000, "held": 1}},
            {"id": "ends-in-b", "vector": unit(1), "metadata": {"s": "a" * 4999 + "b", "held": 1}},
        ]).raise_for_status()
        kv(sandbox, "SET", "greeting", "hello")
        yield sandbox


@pytest.fixture
def hard_timeout(request):
    # the watchdog writes to a copy of the terminal's stderr taken with capture off: pytest's capture
    # file is lost when the watchdog ends the process
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        terminal = os.fdopen(os.dup(2), "w")
    faulthandler.dump_traceback_later(120, exit=True, file=terminal)
    yield
    faulthandler.cancel_dump_traceback_later()
    terminal.close()


def kv(sandbox, *command: str):
    headers = {"Authorization": f"Bearer {sandbox.env['SVC_KV_TOKEN']}"}
    reply = httpx.post(sandbox.env["SVC_KV_URL"] + "/" + "/".join(command), headers=headers, timeout=30)
    reply.raise_for_status()
    return reply.json()["result"]


def query(sandbox, flt: str, index: str = "nomodel", namespace: str = NAMESPACE, timeout: float = 60) -> set[str]:
    reply = post(sandbox, index, f"/query/{namespace}", {"vector": unit(0), "topK": 10, "filter": flt},
                 timeout=timeout)
    reply.raise_for_status()
    return {hit["id"] for hit in reply.json()["result"]}


@pytest.mark.timeout(60)
def test_a_glob_that_backtracks_for_hours_answers_at_once(sb, hard_timeout):
    assert query(sb, HOSTILE) == {"ends-in-b"}
    assert query(sb, HOSTILE.replace("GLOB", "NOT GLOB")) == {"long"}


@pytest.mark.timeout(60)
def test_a_key_value_get_is_answered_while_a_hostile_filter_runs(sb, hard_timeout, in_filter):
    # the hostile query keeps matching its GLOB against the 5,000-character value until the GET is
    # answered: the GET has to get through while the match runs (the old `re` engine held the GIL for
    # the whole match, so nothing else in the process ran)
    state = in_filter(HOSTILE, work=lambda original, flt: original(flt, {"s": "a" * 5000}))
    answer: list[set[str]] = []
    hostile = threading.Thread(target=lambda: answer.append(query(sb, HOSTILE)))
    hostile.start()
    try:
        assert state["entered"].acquire(timeout=30)
        assert kv(sb, "GET", "greeting") == "hello"
        assert hostile.is_alive() and not answer  # answered while the hostile query was still matching
    finally:
        state["release"].set()
        hostile.join()
    assert answer == [{"ends-in-b"}]


@pytest.mark.timeout(120)
def test_a_query_on_the_same_index_is_answered_while_a_filter_runs(sb, in_filter):
    state = in_filter(HOLD)
    answer: list[set[str]] = []
    held = threading.Thread(target=lambda: answer.append(query(sb, HOLD)))
    held.start()
    try:
        assert state["entered"].acquire(timeout=30)
        # the filter runs outside the index lock: this query on the same index does not wait for it
        assert query(sb, "", namespace="", timeout=30) == set()
        post(sb, "nomodel", f"/upsert/{NAMESPACE}", {"id": "written-meanwhile", "vector": unit(2),
                                                      "metadata": {"held": 1}}, timeout=30).raise_for_status()
        assert held.is_alive()
    finally:
        state["release"].set()
        held.join()
    assert answer == [{"long", "ends-in-b", "written-meanwhile"}]
    post(sb, "nomodel", f"/delete/{NAMESPACE}", {"ids": ["written-meanwhile"]}).raise_for_status()


@pytest.mark.timeout(120)
def test_a_request_waiting_for_its_index_lock_leaves_the_event_loop_serving(sb, monkeypatch):
    index = sb.area("vector").indexes["nomodel"]
    reached, info = threading.Event(), index.info
    monkeypatch.setattr(index, "info", lambda: (reached.set(), info())[1])
    answer: list[int] = []
    index._lock.acquire()  # as a long ranking on this index would
    try:
        waiting = threading.Thread(target=lambda: answer.append(
            httpx.get(f"{sb.url}/vector/nomodel/info", timeout=60,
                      headers={"Authorization": f"Bearer {sb.env['SVC_VECTOR_TOKEN']}"}).status_code))
        waiting.start()
        assert reached.wait(30)
        # info waits for the lock in a worker thread (it used to wait on the event loop, and every
        # area with it)
        assert kv(sb, "GET", "greeting") == "hello"
        assert query(sb, "", index="dense", namespace="", timeout=30) == set()
        assert waiting.is_alive() and not answer
    finally:
        index._lock.release()
    waiting.join()
    assert answer == [200]


@pytest.mark.timeout(120)
def test_a_flooded_index_leaves_the_other_indexes_their_threads(sb, in_filter):
    # the process's shared worker threads cut to one: were the vector area on them, the first held
    # request would leave no thread for any other index (or area)
    async def shared_threads(n: int) -> None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = n

    asyncio.run_coroutine_threadsafe(shared_threads(1), sb._loop).result()
    state = in_filter(HOLD)
    flood = [threading.Thread(target=lambda: query(sb, HOLD)) for _ in range(3)]
    for t in flood:
        t.start()
    try:
        assert state["entered"].acquire(timeout=30)
        assert query(sb, "animal = 'none'", index="dense", namespace="", timeout=30) == set()
    finally:
        state["release"].set()
        for t in flood:
            t.join()
        asyncio.run_coroutine_threadsafe(shared_threads(40), sb._loop).result()


def refused(reply: httpx.Response, *words: str) -> str:
    body = reply.json()
    assert reply.status_code == 400 and body["status"] == 400 and set(body) == {"error", "status"}, body
    for word in words:
        assert word in body["error"]
    return body["error"]


@pytest.mark.parametrize(("path", "body", "words"), [
    ("/query", {"vector": unit(0), "filter": "(" * 330 + "held = 1" + ")" * 330},
     ["deeper than 64 levels", "max_filter_depth"]),
    ("/query", {"vector": unit(0), "filter": "held IN (" + ", ".join(["1"] * 9000) + ")"},
     ["over the limit of 16384", "max_filter_length"]),
    ("/query", {"vector": unit(0), "topK": 1001}, ["topK: 1001 is over the limit of 1000", "max_top_k"]),
    ("/query", [{"vector": unit(0)}, {"vector": unit(1), "topK": 1001}], ["topK: 1001 is over the limit of 1000"]),
    ("/query-data", [{"data": "x"}] * 1001, ["1001 is over the limit of 1000", "max_batch"]),
    ("/resumable-query", {"vector": unit(0), "topK": 1001}, ["topK: 1001 is over the limit of 1000"]),
    ("/resumable-query", {"vector": unit(0), "maxIdle": 86401}, ["maxIdle: 86401 is over the limit of 86400"]),
    ("/delete", {"filter": "(" * 65 + "held = 1" + ")" * 65}, ["deeper than 64 levels"]),
])
def test_requests_over_a_limit_answer_400_in_the_vector_error_shape(sb, path, body, words):
    message = refused(post(sb, "nomodel", path + f"/{NAMESPACE}", body), *words)
    assert len(message) < 500  # a 16 KiB filter is not echoed back whole
    assert post(sb, "nomodel", f"/fetch/{NAMESPACE}", {"ids": ["long"]}).json()["result"][0]["id"] == "long"


def test_resumable_queries_are_capped_per_index_and_additional_k_too(sb):
    def start(index: str = "nomodel", path: str = f"/resumable-query/{NAMESPACE}", body=None) -> httpx.Response:
        return post(sb, index, path, body or {"vector": unit(0), "topK": 1})

    first, second = (start().json()["result"]["uuid"] for _ in range(2))
    refused(start(), "2 are open on this index, the limit of 2", "resumable-query-end")
    # another index keeps its own count
    other = start("sparse", "/resumable-query", {"sparseVector": {"indices": [1], "values": [1.0]}})
    assert other.status_code == 200
    refused(post(sb, "nomodel", "/resumable-query-next", {"uuid": first, "additionalK": 1001}),
            "additionalK: 1001 is over the limit of 1000")
    assert post(sb, "nomodel", "/resumable-query-end", {"uuid": first}).json() == {"result": "Success"}
    third = start()
    assert third.status_code == 200  # ending one made room
    for index, uid in (("nomodel", second), ("nomodel", third.json()["result"]["uuid"]),
                       ("sparse", other.json()["result"]["uuid"])):
        post(sb, index, "/resumable-query-end", {"uuid": uid}).raise_for_status()
