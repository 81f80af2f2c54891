"""The queue data API through svckit's clients, against the sandbox over real HTTP: the DLQ (filters,
cursor, get, delete one and many, resume and restart one and many), cancel (one, many, by URL
prefix, all), the events log, and the state rules and errors of docs/errors.md."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from dataclasses import dataclass

import pytest

from svckit import frames
from svckit._http import ApiRequest
from svckit.errors import BadRequest, InvalidArgument, NotFound, UnprocessableEntity
from svckit.queue import EventState, RunState
from svckit.queue.protocol import build_cancel_many_request, build_events_request, build_from_dlq_request
from tests.conftest import eventually

URL = "https://app.example.com/api/workflows/export"
SLOW_URL = "https://app.example.com/api/workflows/slow"
OTHER_SLOW_URL = "https://jobs.example.org/wf/slow"


@pytest.fixture
def broken(runner):
    """A workflow whose ``upload`` step fails while ``broken`` is set; counts executions per step."""
    flag, counts = threading.Event(), Counter()
    flag.set()

    def upload():
        counts["upload"] += 1
        if flag.is_set():
            raise RuntimeError("ledger down")
        return "uploaded"

    def wf(context):
        total = context.run("collect", lambda: counts.update(["collect"]) or 42)
        return context.run("upload", lambda: [upload(), total])

    runner.register(URL, wf)
    flag.counts = counts  # type: ignore[attr-defined]
    return flag


def fail_runs(runner, n, **options):
    handles = [runner.trigger(URL, {"n": i}, retries=0, **options) for i in range(n)]
    for h in handles:
        assert runner.wait(h) == "RUN_FAILED"
    return handles


@dataclass
class Slow:
    """The slow workflows' gate: ``release`` lets their first steps end; ``started`` counts first steps begun."""

    release: threading.Event
    started: threading.Semaphore


@pytest.fixture
def slow(runner):
    """Two workflows that block in their first step until released (runs stay RUN_STARTED)."""
    gate = Slow(threading.Event(), threading.Semaphore(0))

    def wf(context):
        context.run("wait", lambda: gate.started.release() or gate.release.wait(30))
        return context.run("after", lambda: "done")

    runner.register(SLOW_URL, wf)
    runner.register(OTHER_SLOW_URL, wf)
    yield gate
    gate.release.set()


def start_slow(runner, slow, url, run_id):
    """A run of a slow workflow, once its first step runs."""
    handle = runner.trigger(url, run_id=run_id)
    assert slow.started.acquire(timeout=10)
    return handle


def test_dlq_entries_filters_cursor_and_get(runner, queue, broken):
    handles = fail_runs(runner, 3, label="finance", flow_control_key="ledger", flow_control_value="parallelism=2")
    fail_runs(runner, 1, label="ops")
    entries = list(queue.iter_dlq(progress=True))
    assert len(entries) == 4
    finance = [m for m in entries if m.label == "finance"]
    assert sorted(m.workflow_run_id for m in finance) == sorted(h.workflow_run_id for h in handles)
    m = finance[0]
    assert (m.url, m.method, m.max_retries, m.response_status) == (URL, "POST", 0, 500)
    assert (m.flow_control_key, m.flow_control_value, m.parallelism) == ("ledger", "parallelism=2", 2)
    # the failed message: the delivery of "collect"'s result, in which "upload" failed
    assert json.loads(m.response_body) == {"error": "RuntimeError", "message": "ledger down"}
    assert json.loads(m.body)["stepName"] == "collect"
    assert queue.dlq_message(m.dlq_id) == m
    assert [x.dlq_id for x in queue.iter_dlq(label="finance")] == [x.dlq_id for x in finance]
    assert [x.dlq_id for x in queue.iter_dlq(message_id=m.message_id)] == [m.dlq_id]
    assert [x.dlq_id for x in queue.iter_dlq(workflow_run_id=m.workflow_run_id)] == [m.dlq_id]
    assert list(queue.iter_dlq(queue="orders")) == [] and list(queue.iter_dlq(response_status=404)) == []
    times = sorted(x.created_at for x in entries)
    assert {x.dlq_id for x in queue.iter_dlq(from_date=times[1], to_date=times[2])} == {
        x.dlq_id for x in entries if times[1] <= x.created_at <= times[2]}
    pages = [queue.dlq(count=3), None]
    pages[1] = queue.dlq(cursor=pages[0].cursor, count=3)
    assert [len(p.messages) for p in pages] == [3, 1] and pages[1].cursor is None
    df = frames.dlq_frame(queue.dlq())
    assert list(df["dlq_id"]) == [x.dlq_id for x in entries] and df["response_status"].dtype == "Int64"
    assert set(df["label"]) == {"finance", "ops"} and df["entered_at"].dt.tz is not None
    with pytest.raises(NotFound):
        queue.dlq_message("dlq_unknown")
    with pytest.raises(InvalidArgument) as info:
        queue.dlq(colour="red")
    assert info.value.argument == "colour"


def test_delete_one_and_many(runner, queue, broken):
    handles = fail_runs(runner, 4)
    ids = [m.dlq_id for m in queue.iter_dlq()]
    queue.delete_dlq(ids[0])
    with pytest.raises(NotFound):
        queue.delete_dlq(ids[0])
    with pytest.raises(NotFound):
        queue.resume(ids[0])  # a deleted entry cannot be resumed
    assert queue.delete_dlq_many([ids[1], ids[2], ids[0], "dlq_unknown"]) == 2
    assert [m.dlq_id for m in queue.iter_dlq()] == ids[3:]
    assert queue.delete_dlq_many([]) == 0
    # the runs themselves stay failed; only the last one still names a DLQ entry
    runs = {r.workflow_run_id: r for r in queue.iter_runs()}
    assert {r.workflow_state for r in runs.values()} == {RunState.RUN_FAILED}
    assert sum(r.dlq_id is not None for r in runs.values()) == 1 and len(handles) == 4


def test_resume_many_keeps_succeeded_steps_and_consumes_every_entry(runner, queue, broken):
    fail_runs(runner, 3)
    ids = [m.dlq_id for m in queue.iter_dlq()]
    broken.clear()
    started = queue.resume_many(ids[:2], retries=2)
    assert len(started) == 2
    for result in started:
        assert runner.wait(runner.handle(result.workflow_run_id, result.workflow_created_at)) == "RUN_SUCCESS"
    assert broken.counts["collect"] == 3  # nothing collected again
    assert [m.dlq_id for m in queue.iter_dlq()] == ids[2:]
    with pytest.raises(NotFound) as info:
        queue.resume_many([ids[2], "dlq_gone"])  # one unknown id: nothing is resumed
    assert "dlq_gone" in str(info.value)
    assert [m.dlq_id for m in queue.iter_dlq()] == ids[2:]
    with pytest.raises(InvalidArgument):
        queue.resume_many([])


def test_restart_runs_every_step_again(runner, queue, broken):
    (failed,) = fail_runs(runner, 1, run_id="wfr_again", flow_control_key="k")
    (entry,) = queue.dlq().messages
    broken.clear()
    result = queue.restart(entry.dlq_id, retries=1)
    assert result.workflow_run_id == "wfr_again" and result.workflow_created_at > failed.workflow_created_at
    assert runner.wait(runner.handle("wfr_again", result.workflow_created_at)) == "RUN_SUCCESS"
    assert broken.counts == Counter(collect=2, upload=2)  # collect ran again: nothing was kept
    run = queue.workflow_logs(workflow_run_id="wfr_again", workflow_created_at=result.workflow_created_at).runs[0]
    assert (run.retries, run.flow_control_key) == (1, "k")
    assert json.loads(run.step("collect").out) == 42 and run.step("collect").created_at > failed.workflow_created_at
    with pytest.raises(NotFound):
        queue.restart(entry.dlq_id)  # consumed
    broken.set()
    fail_runs(runner, 2)
    ids = [m.dlq_id for m in queue.iter_dlq()]
    broken.clear()
    with pytest.raises(UnprocessableEntity, match="one run at a time"):
        queue.restart_many(ids, run_id="wfr_batch")  # one id for two runs in progress: nothing starts
    for r in queue.restart_many(ids):
        assert runner.wait(runner.handle(r.workflow_run_id, r.workflow_created_at)) == "RUN_SUCCESS"
    assert queue.dlq().messages == [] and broken.counts["collect"] == 6


def test_resume_of_an_unregistered_workflow_is_422_and_keeps_the_entry(queue_sandbox, runner, queue, broken):
    fail_runs(runner, 1)
    (entry,) = queue.dlq().messages
    runner.app.workflows.pop(URL)  # as after a restart of the sandbox without registering it again
    for action in (queue.resume, queue.restart):
        with pytest.raises(UnprocessableEntity):
            action(entry.dlq_id)
    assert [m.dlq_id for m in queue.iter_dlq()] == [entry.dlq_id]


def test_cancel_many_by_url_prefix_and_all(runner, queue, slow):
    a = start_slow(runner, slow, SLOW_URL, "wfr_a")
    b = start_slow(runner, slow, SLOW_URL, "wfr_b")
    c = start_slow(runner, slow, OTHER_SLOW_URL, "wfr_c")
    d = start_slow(runner, slow, OTHER_SLOW_URL, "wfr_d")
    assert queue.cancel_many(["wfr_a", "wfr_unknown"]) == 1
    assert queue.cancel_many(["wfr_a"]) == 0  # no longer in progress: skipped, not an error
    assert queue.cancel_by_url("https://app.example.com/") == 1  # wfr_b
    assert queue.cancel_all() == 2  # wfr_c, wfr_d
    assert queue.cancel_all() == 0
    slow.release.set()
    for h in (a, b, c, d):
        assert runner.wait(h) == "RUN_CANCELED"
    states = {r.workflow_run_id: r for r in queue.iter_runs()}
    assert {k: r.workflow_state for k, r in states.items()} == dict.fromkeys(
        ["wfr_a", "wfr_b", "wfr_c", "wfr_d"], RunState.RUN_CANCELED)
    # the step in flight never reported (what it returned was refused: the run had ended), the next never ran
    assert all(r.step("wait") is None and r.step("after") is None for r in states.values())
    with pytest.raises(InvalidArgument):
        build_cancel_many_request(run_ids=["x"], url_prefix="y")
    with pytest.raises(InvalidArgument):
        build_cancel_many_request()


def test_bulk_bodies_are_checked(raw_queue):
    for method, path, body, word in [
        ("POST", "/v2/dlq/resume", {}, "dlqIds"), ("POST", "/v2/dlq/restart", {"dlqIds": []}, "dlqIds"),
        ("POST", "/v2/dlq/resume", {"dlqIds": "dlq_1"}, "dlqIds"), ("DELETE", "/v2/dlq", {"dlqIds": [1]}, "dlqIds"),
        ("DELETE", "/v2/workflows/runs", {"workflowRunIds": "wfr_1"}, "workflowRunIds"),
        ("DELETE", "/v2/workflows/runs", {"workflowUrl": ""}, "workflowUrl"),
    ]:
        r = raw_queue.request(method, path, json=body)
        assert r.status_code == 400 and r.json()["error"].startswith(word), (path, body, r.text)
    r = raw_queue.request("DELETE", "/v2/workflows/runs", content=b"[1]")
    assert r.status_code == 400 and r.json() == {"error": "request body must be a JSON object"}
    r = raw_queue.request("DELETE", "/v2/workflows/runs")  # no body: every run in progress
    assert r.status_code == 200 and r.json() == {"cancelled": 0}


def test_events_log_one_event_per_delivery(runner, queue, broken):
    (failed,) = fail_runs(runner, 1, label="ev")
    broken.clear()
    resumed = queue.resume(queue.dlq().messages[0].dlq_id)
    assert runner.wait(runner.handle(resumed.workflow_run_id, resumed.workflow_created_at)) == "RUN_SUCCESS"
    def delivered_and_failed():  # the delivery that ended the run is recorded just after the run ended
        found = list(queue.iter_events(progress=True, workflow_run_id=failed.workflow_run_id))
        return found if sum(e.state is EventState.DELIVERED for e in found) == 3 else None

    events = eventually(delivered_and_failed, "the resumed run's last delivery recorded")
    assert [e.time for e in events] == sorted((e.time for e in events), reverse=True)
    # each message of the run, under the step it carries: the first run's init, and collect's result,
    # whose delivery failed in "upload"; the resumed run delivers collect's result again (collect is
    # kept, not run), then upload's result
    assert Counter((e.step_name, e.state) for e in events if e.state in (EventState.DELIVERED, EventState.FAILED)) == \
        Counter({("init", EventState.DELIVERED): 1, ("upload", EventState.FAILED): 1,
                 ("collect", EventState.DELIVERED): 1, ("upload", EventState.DELIVERED): 1})
    (failure,) = [e for e in events if e.state is EventState.FAILED]
    assert failure.error == "RuntimeError: ledger down" and failure.response_status == 500  # the app's {error, message}
    assert all(e.label == "ev" for e in events)
    assert {json.dumps(json.loads(e.payload)) for e in events if e.step_name == "init"} == {json.dumps({"n": 0})}
    assert [e.message_id for e in queue.iter_events(state=EventState.FAILED)] == [failure.message_id]
    upload_ok = next(e for e in events if e.step_name == "upload" and e.state is EventState.DELIVERED)
    assert {e.message_id for e in queue.iter_events(message_ids=[failure.message_id, upload_ok.message_id])} == {
        failure.message_id, upload_ok.message_id}
    page = queue.events(count=2)
    assert len(page.events) == 2 and page.cursor is not None
    df = frames.events_frame(page)
    assert list(df["state"].cat.categories[:5]) == ["CREATED", "ACTIVE", "RETRY", "ERROR", "DELIVERED"]
    assert list(df["message_id"]) == [e.message_id for e in page.events]
    with pytest.raises(InvalidArgument):
        queue.events(state="DONE")
    with pytest.raises(InvalidArgument):
        queue.events(count=1001)


def test_retried_attempts_are_error_events_with_the_next_delivery(runner, queue):
    attempts = Counter()

    def flaky():
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise ConnectionError("503")
        return "ok"

    runner.register(URL, lambda context: context.run("sync", flaky))
    handle = runner.trigger(URL, retries=1)
    assert runner.wait(handle) == "RUN_SUCCESS"
    def sync_events():  # the delivery that ended the run is recorded just after the run ended
        found = {e.state: e for e in queue.iter_events(workflow_run_id=handle.workflow_run_id, url=URL)
                 if e.step_name == "sync" and e.state in (EventState.ERROR, EventState.DELIVERED)}
        return found if len(found) == 2 else None

    events = eventually(sync_events, "the error and the delivery of step sync")
    error = events[EventState.ERROR]
    assert error.response_status == 500 and error.next_delivery_time >= error.time
    assert events[EventState.DELIVERED].next_delivery_time is None


def test_cancel_writes_a_canceled_event(runner, queue, slow):
    handle = start_slow(runner, slow, SLOW_URL, "wfr_ev")
    queue.cancel("wfr_ev")
    # the delivery in flight (the run's init, running "wait") ends canceled
    assert [(e.workflow_run_id, e.step_name) for e in queue.iter_events(state="CANCELED")] == [("wfr_ev", "init")]
    slow.release.set()
    assert runner.wait(handle) == "RUN_CANCELED"


def test_vendor_header_spelling_reaches_resume(queue_sandbox, runner, raw_queue, broken):
    pytest.importorskip("svckit.sandbox.headers")
    fail_runs(runner, 1)
    (entry,) = raw_queue.get("/v2/dlq").json()["messages"]
    broken.clear()
    r = raw_queue.post(f"/v2/dlq/restart/{entry['dlqId']}",
                       headers={"Upstash-Retries": "5", "Upstash-Workflow-RunId": "wfr_vendor"})
    assert r.status_code == 200 and r.json()["workflowRunId"] == "wfr_vendor"
    run = raw_queue.get("/v2/workflows/logs", params={"workflowRunId": "wfr_vendor"}).json()["runs"][0]
    assert run["retries"] == 5


def test_build_functions_refuse_bad_arguments_before_sending():
    with pytest.raises(InvalidArgument):
        build_from_dlq_request("replay", "dlq_1")
    with pytest.raises(InvalidArgument):
        build_from_dlq_request("resume", ["dlq_1", ""])
    request = build_from_dlq_request("restart", ["a", "b"], retries=0)
    assert (request.path, request.json, dict(request.headers)) == (
        "/v2/dlq/restart", {"dlqIds": ["a", "b"]}, {"Service-Retries": "0"})
    assert build_events_request(state=EventState.FAILED, message_ids=["m1", "m2"]).params == {
        "state": "FAILED", "messageIds": ["m1", "m2"]}
    with pytest.raises(InvalidArgument):
        build_events_request(from_date=10, to_date=5)


async def test_async_twin(runner, aqueue, broken, slow):
    fail_runs(runner, 2)
    ids = [m.dlq_id async for m in aqueue.iter_dlq()]
    assert len(ids) == 2 and (await aqueue.dlq_message(ids[0])).dlq_id == ids[0]
    broken.clear()
    (result,) = await aqueue.restart_many([ids[0]])
    await asyncio.to_thread(runner.wait, runner.handle(result.workflow_run_id, result.workflow_created_at))
    resumed = await aqueue.resume_many([ids[1]])
    assert len(resumed) == 1 and await aqueue.delete_dlq_many(ids) == 0
    handle = await asyncio.to_thread(start_slow, runner, slow, SLOW_URL, "wfr_async")
    assert await aqueue.cancel_many(["wfr_async"]) == 1
    assert await aqueue.cancel_by_url(SLOW_URL) == 0 and await aqueue.cancel_all() == 0
    events = [e async for e in aqueue.iter_events(state=EventState.CANCELED)]
    assert [e.workflow_run_id for e in events] == ["wfr_async"]
    assert (await aqueue.events(count=1)).cursor is not None
    with pytest.raises(NotFound):
        await aqueue.delete_dlq("dlq_none")
    with pytest.raises(BadRequest):
        await aqueue._call(ApiRequest("POST", "/v2/dlq/resume", json={}))  # the server's 400, no dlqIds
    slow.release.set()
    await asyncio.to_thread(runner.wait, handle)
