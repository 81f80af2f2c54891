"""Area D over real HTTP against the sandbox and its local workflow runner."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter

import httpx
import pytest

from svckit.errors import AuthError, InvalidArgument, NotFound, UnprocessableEntity
from svckit.queue import RunState, StepState, StepType

URL = "https://app.example.com/api/workflows/checkout"


def run_of(queue, handle):
    """The one run a handle names (run id + creation time identify it)."""
    page = queue.workflow_logs(workflow_run_id=handle.workflow_run_id,
                               workflow_created_at=handle.workflow_created_at)
    assert len(page.runs) == 1
    return page.runs[0]


def test_run_records_initial_run_parallel_and_sleep_steps(runner, queue):
    threads = []

    def wf(context):
        threads.append(threading.current_thread())
        a = context.run("reserve", lambda: {"sku": context.body["sku"], "qty": 2})
        both = context.parallel({"charge": lambda: 19.0, "notify": lambda: "sent"})
        context.sleep("settle", 0)
        return context.run("ship", lambda: [a["sku"], both["charge"]])

    runner.register(URL, wf)
    handle = runner.trigger(URL, {"sku": "MUG-1"}, label="shop")
    assert runner.wait(handle) == "RUN_SUCCESS"
    # a worker thread, never the sandbox's event loop thread
    assert threads[0].name != "svckit-sandbox" and threads[0] is not threading.main_thread()
    run = run_of(queue, handle)
    assert run.workflow_state is RunState.RUN_SUCCESS and run.workflow_url == URL and run.label == "shop"
    assert run.workflow_run_created_at == handle.workflow_created_at
    assert run.workflow_run_completed_at >= run.workflow_run_created_at and run.retries == 3
    assert [(g.type, [s.step_name for s in g.steps]) for g in run.steps] == [
        ("sequential", ["init"]), ("sequential", ["reserve"]), ("parallel", ["charge", "notify"]),
        ("sequential", ["settle"]), ("sequential", ["ship"])]
    init, reserve, charge, notify, settle, ship = run.all_steps
    assert init.step_type is StepType.INITIAL and init.step_id is None and json.loads(init.out) == {"sku": "MUG-1"}
    assert [s.step_id for s in (reserve, charge, notify, settle, ship)] == [1, 2, 3, 4, 5]
    assert {s.step_type for s in (reserve, charge, notify, ship)} == {StepType.RUN}
    assert settle.step_type is StepType.SLEEP_FOR and settle.out is None
    assert (charge.concurrent, notify.concurrent, reserve.concurrent) == (2, 2, 1)
    assert json.loads(reserve.out) == {"sku": "MUG-1", "qty": 2} and json.loads(ship.out) == ["MUG-1", 19.0]
    assert all(s.state is StepState.STEP_SUCCESS and s.call_type == "step" for s in run.all_steps)
    assert all(s.message_id.startswith("msg_") and s.created_at >= run.workflow_run_created_at
               for s in run.all_steps)


def test_failed_attempts_are_recorded_as_step_retry_before_each_retry(runner, queue):
    attempts = Counter()

    def flaky():
        attempts["n"] += 1
        if attempts["n"] <= 2:
            raise ConnectionError(f"gateway 503 #{attempts['n']}")
        return "ok"

    runner.register(URL, lambda context: context.run("sync", flaky))
    handle = runner.trigger(URL, retries=2)
    assert runner.wait(handle) == "RUN_SUCCESS"
    steps = run_of(queue, handle).steps[1].steps
    assert [s.state for s in steps] == ["STEP_RETRY", "STEP_RETRY", "STEP_SUCCESS"]
    assert [json.loads(s.out) for s in steps[:2]] == [
        {"error": "ConnectionError: gateway 503 #1", "attempt": 1},
        {"error": "ConnectionError: gateway 503 #2", "attempt": 2}]
    # the two attempts were one delivery retried; the success is the step message that came of the third
    assert steps[0].message_id == steps[1].message_id != steps[2].message_id and {s.step_id for s in steps} == {1}


def test_exhausted_retries_fail_the_run_and_create_a_dlq_entry(runner, queue):
    def wf(context):
        context.run("collect", lambda: 3)
        context.run("upload", lambda: 1 / 0)

    runner.register(URL, wf)
    handle = runner.trigger(URL, {"month": "2026-10"}, retries=1, label="finance")
    assert runner.wait(handle) == "RUN_FAILED"
    run = run_of(queue, handle)
    assert run.workflow_run_completed_at is not None
    assert [s.state for s in run.steps[2].steps] == ["STEP_RETRY", "STEP_FAILED"]
    (message,) = queue.dlq().messages
    assert message.dlq_id == run.dlq_id
    assert (message.workflow_run_id, message.workflow_url, message.workflow_created_at) == (
        handle.workflow_run_id, URL, handle.workflow_created_at)
    assert message.label == "finance" and "ZeroDivisionError" in message.response_body
    assert [m.dlq_id for m in queue.iter_dlq()] == [message.dlq_id]


def _resumable(runner, counts, broken):
    def upload():
        counts["upload"] += 1
        if broken.is_set():
            raise RuntimeError("ledger down")
        return "uploaded"

    def wf(context):
        total = context.run("collect", lambda: counts.update(["collect"]) or 42)
        context.parallel(audit=lambda: counts.update(["audit"]) or "a", mail=lambda: counts.update(["mail"]) or "m")
        return context.run("upload", lambda: [upload(), total])

    runner.register(URL, wf)


def test_resume_keeps_succeeded_steps_without_running_them_and_uses_overrides(runner, queue):
    counts, broken = Counter(), threading.Event()
    broken.set()
    _resumable(runner, counts, broken)
    failed = runner.trigger(URL, {"batch": 7}, retries=0, flow_control_key="ledger", flow_control_value="rate=1")
    assert runner.wait(failed) == "RUN_FAILED"
    assert counts == Counter(collect=1, audit=1, mail=1, upload=1)
    dlq_id = queue.dlq().messages[0].dlq_id

    broken.clear()
    result = queue.resume(dlq_id, retries=4, run_id="wfr_resumed", flow_control_key="ledger-v2",
                          flow_control_value="parallelism=2")
    assert result.workflow_run_id == "wfr_resumed"
    assert runner.wait(runner.handle("wfr_resumed", result.workflow_created_at)) == "RUN_SUCCESS"
    # the counter proves it: collect, audit and mail ran once in total; only upload ran again
    assert counts == Counter(collect=1, audit=1, mail=1, upload=2)
    run = queue.workflow_logs(workflow_run_id="wfr_resumed").runs[0]
    assert (run.retries, run.flow_control_key, run.flow_control_value) == (4, "ledger-v2", "parallelism=2")
    original = run_of(queue, failed)
    kept = {s.step_name: s for s in original.all_steps if s.state == "STEP_SUCCESS" and s.step_id}
    for name in ("collect", "audit", "mail"):
        new = run.step(name)
        assert (new.out, new.message_id, new.step_id, new.created_at) == (
            kept[name].out, kept[name].message_id, kept[name].step_id, kept[name].created_at)
    assert json.loads(run.step("upload").out) == ["uploaded", 42]
    assert json.loads(run.all_steps[0].out) == {"batch": 7}
    # the DLQ entry was consumed by the resume
    assert queue.dlq().messages == []
    with pytest.raises(NotFound):
        queue.resume(dlq_id)


def test_resume_without_headers_reuses_the_original_configuration(runner, queue, raw_queue):
    counts, broken = Counter(), threading.Event()
    broken.set()
    _resumable(runner, counts, broken)
    failed = runner.trigger(URL, retries=1, run_id="wfr_same", flow_control_key="k",
                            flow_control_value="parallelism=1")
    assert runner.wait(failed) == "RUN_FAILED"
    dlq_id = queue.dlq().messages[0].dlq_id
    r = raw_queue.post(f"/v2/dlq/resume/{dlq_id}")  # no Service-* header at all
    assert r.status_code == 200 and r.json()["workflowRunId"] == "wfr_same"
    runs = queue.workflow_logs(workflow_run_id="wfr_same").runs
    assert len(runs) == 2 and runs[0].workflow_run_created_at == r.json()["workflowCreatedAt"]
    assert runner.wait(runner.handle("wfr_same", r.json()["workflowCreatedAt"])) == "RUN_FAILED"
    again = queue.workflow_logs(workflow_run_id="wfr_same", workflow_created_at=r.json()["workflowCreatedAt"]).runs
    assert len(again) == 1 and (again[0].retries, again[0].flow_control_key, again[0].flow_control_value) == (1, "k", "parallelism=1")
    # retries=1 kept: one STEP_RETRY, then STEP_FAILED, on the upload step only
    assert [s.state for s in again[0].all_steps if s.step_name == "upload"] == ["STEP_RETRY", "STEP_FAILED"]
    assert counts["collect"] == 1 and counts["upload"] == 4


def test_resume_errors(runner, raw_queue, queue):
    r = raw_queue.post("/v2/dlq/resume/dlq_nope")
    assert r.status_code == 404 and r.json() == {"error": "no DLQ entry 'dlq_nope'"}
    r = raw_queue.post("/v2/dlq/resume/dlq_nope", headers={"Service-Retries": "many"})
    assert r.status_code == 400 and r.json()["error"].startswith("Service-Retries")
    with pytest.raises(InvalidArgument):
        queue.resume("dlq_x", retries=-1)


def _many_runs(runner, n, **options):
    runner.register(URL, lambda context: context.run("noop", lambda: context.body))
    handles = [runner.trigger(URL, i, **options) for i in range(n)]
    for h in handles:
        assert runner.wait(h) == "RUN_SUCCESS"
    return handles


def test_pagination_returns_every_run_exactly_once_and_ends_without_cursor(runner, queue):
    handles = _many_runs(runner, 23)
    pages, cursor = [], None
    while True:
        page = queue.workflow_logs(cursor=cursor, count=10) if cursor else queue.workflow_logs()
        pages.append(page)
        cursor = page.cursor
        if cursor is None:
            break
    assert [len(p.runs) for p in pages] == [10, 10, 3]
    seen = [(r.workflow_run_id, r.workflow_run_created_at) for p in pages for r in p.runs]
    assert sorted(seen) == sorted((h.workflow_run_id, h.workflow_created_at) for h in handles)
    created = [c for _, c in seen]
    assert created == sorted(created, reverse=True)  # newest first
    assert [r.workflow_run_id for r in queue.iter_runs(progress=True)] == [s[0] for s in seen]
    # a smaller page size pages the same set
    assert len(list(queue.iter_runs(count=4))) == 23


def test_count_above_ten_is_rejected(raw_queue, queue):
    r = raw_queue.get("/v2/workflows/logs", params={"count": 11})
    assert r.status_code == 400 and r.json() == {"error": "count: must be from 1 to 10, got 11"}
    with pytest.raises(InvalidArgument):
        queue.workflow_logs(count=11)


def test_every_logs_filter(runner, queue, raw_queue):
    other = "https://app.example.com/api/workflows/other"
    runner.register(URL, lambda context: context.run("ok", lambda: 1))
    runner.register(other, lambda context: context.run("boom", lambda: 1 / 0))
    shared = []
    for _ in range(3):  # one after another: a run id in progress is not started twice
        shared.append(runner.trigger(URL, run_id="wfr_shared", label="blue"))
        runner.wait(shared[-1])
    single = runner.trigger(URL, label="green")
    failed = runner.trigger(other, retries=0, label="blue")
    handles = [*shared, single, failed]
    for h in handles:
        runner.wait(h)

    def ids(**filters):
        return sorted((r.workflow_run_id, r.workflow_run_created_at) for r in queue.iter_runs(**filters))

    def key(*hs):
        return sorted((h.workflow_run_id, h.workflow_created_at) for h in hs)

    assert ids(workflow_run_id="wfr_shared") == key(*shared)  # every run sharing the id
    assert len({h.workflow_created_at for h in shared}) == 3
    assert ids(workflow_run_id="wfr_shared", workflow_created_at=shared[1].workflow_created_at) == key(shared[1])
    assert ids(workflow_url=other) == key(failed)
    assert ids(state="RUN_FAILED") == key(failed) and ids(state=RunState.RUN_SUCCESS) == key(*shared, single)
    assert ids(state="RUN_CANCELED") == [] and ids(state="RUN_STARTED") == []
    assert ids(label="blue") == key(*shared, failed) and ids(label="green") == key(single)
    times = sorted(h.workflow_created_at for h in handles)
    lo, hi = times[1], times[3]
    expected = [h for h in handles if lo <= h.workflow_created_at <= hi]
    assert ids(from_date=lo, to_date=hi) == key(*expected)  # both bounds inclusive
    assert ids(from_date=times[-1]) == key(*[h for h in handles if h.workflow_created_at == times[-1]])
    assert ids(to_date=times[0] - 1) == []
    assert ids(workflow_url=URL, label="blue", state="RUN_SUCCESS") == key(*shared)
    for params, word in [({"state": "DONE"}, "state"), ({"fromDate": "today"}, "fromDate"),
                         ({"cursor": "bm9wZQ"}, "cursor"), ({"count": 0}, "count")]:
        r = raw_queue.get("/v2/workflows/logs", params=params)
        assert r.status_code == 400 and r.json()["error"].startswith(word), params


def test_cancel_marks_run_canceled_and_stops_at_the_next_step(runner, queue, raw_queue):
    started, release, counts = threading.Event(), threading.Event(), Counter()

    def wf(context):
        context.run("first", lambda: started.set() or counts.update(["first"]) or release.wait(30))
        context.run("second", lambda: counts.update(["second"]))

    runner.register(URL, wf)
    handle = runner.trigger(URL, run_id="wfr_cancel_me")
    assert started.wait(10)
    queue.cancel("wfr_cancel_me")
    run = run_of(queue, handle)
    assert run.workflow_state is RunState.RUN_CANCELED and run.workflow_run_completed_at is not None
    release.set()
    assert runner.wait(handle) == "RUN_CANCELED"
    time.sleep(0.3)  # what the step returned now reaches the local QStash, which refuses it
    assert counts == Counter(first=1)  # the second step never ran
    assert run_of(queue, handle).step("first") is None  # the step in flight never reported
    with pytest.raises(UnprocessableEntity):
        queue.cancel("wfr_cancel_me")
    r = raw_queue.delete("/v2/workflows/runs/wfr_unknown")
    assert r.status_code == 404 and r.json() == {"error": "no workflow run 'wfr_unknown'"}
    assert queue.dlq().messages == []  # a canceled run is not a failed one


def test_trigger_route_with_headers(runner, raw_queue, queue):
    runner.register(URL, lambda context: context.run("echo", lambda: context.body))
    r = raw_queue.post(f"/v2/trigger/{URL}", json={"n": 1},
                       headers={"Service-Workflow-RunId": "wfr_http", "Service-Label": "api",
                                "Service-Retries": "0", "Service-Flow-Control-Key": "fk"})
    assert r.status_code == 200 and r.json()["workflowRunId"] == "wfr_http"
    r = raw_queue.post("/v2/trigger/https://nowhere.example/wf")  # neither registered nor on loopback
    assert r.status_code == 400 and "loopback" in r.json()["error"]
    result = queue.trigger(URL, {"n": 2}, label="client")
    runner.wait(runner.handle(result.workflow_run_id, result.workflow_created_at))
    run = queue.workflow_logs(workflow_run_id="wfr_http").runs[0]
    assert (run.label, run.retries, run.flow_control_key) == ("api", 0, "fk")
    assert queue.workflow_logs(workflow_run_id=result.workflow_run_id).runs[0].label == "client"


QUEUE_ROUTES = [("GET", "/v2/workflows/logs"), ("GET", "/v2/dlq"), ("POST", "/v2/dlq/resume/dlq_x"),
                ("DELETE", "/v2/workflows/runs/wfr_x"), ("POST", f"/v2/trigger/{URL}"), ("GET", "/v2/nothing")]


@pytest.mark.parametrize("method, path", QUEUE_ROUTES)
def test_every_queue_route_needs_the_current_bearer_token(queue_sandbox, method, path):
    env = queue_sandbox.env
    token = env["SVC_QUEUE_TOKEN"]
    with httpx.Client(base_url=env["SVC_QUEUE_URL"]) as c:
        for why, headers in {"missing": {}, "basic scheme": {"Authorization": f"Basic {token}"},
                             "bearer without token": {"Authorization": "Bearer"},
                             "wrong": {"Authorization": f"Bearer {token}x"},
                             "devapi key": {"Authorization": f"Bearer {env['SVC_DEVAPI_KEY']}"}}.items():
            r = c.request(method, path, headers=headers)
            assert r.status_code == 401, why
            assert set(r.json()) == {"error"} and token not in r.text


def test_wrong_token_raises_auth_error_without_the_token(queue_sandbox):
    from svckit.queue import Queue

    with Queue(queue_sandbox.env["SVC_QUEUE_URL"], "not-the-token-0123456789") as q:
        with pytest.raises(AuthError) as info:
            q.workflow_logs()
    assert "not-the-token-0123456789" not in str(info.value)


async def test_async_queue_client(runner, aqueue):
    counts, broken = Counter(), threading.Event()
    broken.set()
    _resumable(runner, counts, broken)
    failed = runner.trigger(URL, retries=0)
    assert runner.wait(failed) == "RUN_FAILED"
    page = await aqueue.dlq()
    broken.clear()
    result = await aqueue.resume(page.messages[0].dlq_id, run_id="wfr_async", retries=0)
    await asyncio.to_thread(runner.wait, runner.handle("wfr_async", result.workflow_created_at))
    runs = [r async for r in aqueue.iter_runs(count=1)]
    assert {r.workflow_run_id for r in runs} == {failed.workflow_run_id, "wfr_async"}
    logs = await aqueue.workflow_logs(workflow_run_id="wfr_async", workflow_created_at=result.workflow_created_at)
    assert len(logs.runs) == 1 and logs.runs[0].retries == 0
    assert [m async for m in aqueue.iter_dlq()] == []
    with pytest.raises(InvalidArgument):
        await aqueue.workflow_logs(state="nope")
    with pytest.raises(NotFound):
        await aqueue.cancel("wfr_none")
    trig = await aqueue.trigger(URL, {"x": 1})
    assert trig.workflow_run_id.startswith("wfr_")
