"""The hosted service's ``qstash`` SDK (3.4.0), unchanged, against the sandbox's queue area: every DLQ
method and the events log, through ``qstash.QStash`` and ``qstash.AsyncQStash`` alike.

DLQ entries and events are produced the way a user produces them: demo-style workflows registered in
the sandbox's runner, started over HTTP with ``POST /queue/v2/trigger/{url}``. Each test works on runs
with a label of its own, so the tests of this module (which share one sandbox) do not see each
other's entries where it matters; the unfiltered listings are compared with the store itself.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from qstash import AsyncQStash, QStash
from qstash.errors import QStashError
from qstash.log import LogState

from svckit.sandbox import Sandbox

BASE = "https://compat.example.com/api/workflows"
OK_URL = f"{BASE}/ok"
FAIL_URL = f"{BASE}/fail"
LEDGER_URL = f"{BASE}/ledger"
FLAKY_URL = f"{BASE}/flaky"


@pytest.fixture(scope="module")
def runner(blank_sandbox: Sandbox) -> Any:
    runner = blank_sandbox.area("queue").runner  # type: ignore[attr-defined]
    flaky_attempts: Counter[str] = Counter()
    lock = threading.Lock()

    def flaky_fetch(run_id: str) -> dict[str, Any]:
        with lock:  # fails on the first attempt of every run, then succeeds
            flaky_attempts[run_id] += 1
            first = flaky_attempts[run_id] == 1
        if first:
            raise ConnectionError("gateway returned 503")
        return {"rows": 3}

    def fail() -> Any:
        raise PermissionError("ledger API rejected the upload: 403")

    runner.register(OK_URL, lambda c: c.run("ship", lambda: {"shipped": c.body}))
    runner.register(FAIL_URL, lambda c: [c.run("collect", lambda: 42), c.run("upload", fail)])
    runner.register(LEDGER_URL, lambda c: c.run("post", fail))
    runner.register(FLAKY_URL, lambda c: c.run("fetch", lambda: flaky_fetch(c.workflow_run_id)))
    return runner


@pytest.fixture(scope="module")
def trigger(blank_sandbox: Sandbox, runner: Any) -> Callable[..., str]:
    """Start a run over HTTP like a user would, wait for it to end; returns its run id."""
    env = blank_sandbox.env
    client = httpx.Client(base_url=env["SVC_QUEUE_URL"], headers={"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"})

    def start(url: str, body: Any, *, label: str, retries: int = 0, **headers: str) -> str:
        sent = {"Service-Label": label, "Service-Retries": str(retries), **headers}
        r = client.post(f"/v2/trigger/{url}", json=body, headers=sent)
        assert r.status_code == 200, r.text
        handle = runner.handle(r.json()["workflowRunId"], r.json()["workflowCreatedAt"])
        assert runner.wait(handle) in ("RUN_SUCCESS", "RUN_FAILED")
        return handle.workflow_run_id

    yield start
    client.close()


@pytest.fixture(params=["QStash", "AsyncQStash"])
def call(request, blank_sandbox: Sandbox) -> Callable[..., Any]:
    """``call("dlq.list", filter=...)`` runs that SDK method through QStash or AsyncQStash."""
    env = blank_sandbox.env
    token, url = env["SVC_QUEUE_TOKEN"], env["SVC_QUEUE_URL"]
    sync = QStash(token, base_url=url, retry=False)

    def run(method: str, *args: Any, **kwargs: Any) -> Any:
        area, name = method.split(".")
        if request.param == "QStash":
            return getattr(getattr(sync, area), name)(*args, **kwargs)

        async def go() -> Any:  # a client per call: its httpx.AsyncClient belongs to this loop
            client = AsyncQStash(token, base_url=url, retry=False)
            return await getattr(getattr(client, area), name)(*args, **kwargs)

        return asyncio.run(go())

    return run


@pytest.fixture
def label(request) -> str:
    """A label of this test alone (its node name, e.g. ``test_x-AsyncQStash-``: labels are [A-Za-z0-9._-])."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", request.node.name)


def dlq_rows(blank_sandbox: Sandbox, label: str | None = None) -> list[Any]:
    """The DLQ as the store holds it (ground truth for the listings), newest first by the entry's
    ``createdAt`` (the failed message's creation)."""
    sql = ("SELECT d.dlq_id, d.message_id, m.created_at, r.run_id, r.label, r.url FROM dlq d "
           "JOIN runs r ON r.seq = d.run_seq JOIN messages m ON m.seq = d.message_seq")
    args: tuple[Any, ...] = ()
    if label is not None:
        sql, args = sql + " WHERE r.label = ?", (label,)
    return blank_sandbox.area("queue").store.query(sql + " ORDER BY m.created_at DESC, d.dlq_id DESC", args)


def list_all(call: Callable[..., Any], method: str, items: str, **kwargs: Any) -> tuple[list[Any], int]:
    """Follow the SDK's cursor to the end; returns every item and the number of pages."""
    found, cursor, pages = [], None, 0
    while True:
        page = call(method, cursor=cursor, **kwargs)
        pages += 1
        found += getattr(page, items)
        cursor = page.cursor
        if cursor is None:
            return found, pages
        assert getattr(page, items), "a page with a cursor is never empty"


# -- DLQ ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def failed(trigger: Callable[..., str]) -> dict[str, list[str]]:
    """Failed runs of two workflows, with the settings the DLQ reports back."""
    fails = [trigger(FAIL_URL, {"month": m}, label="finance", retries=1) for m in ("2026-09", "2026-10", "2026-11")]
    ledger = [trigger(LEDGER_URL, {"batch": 7}, label="ledger", retries=2, **{
        "Service-Flow-Control-Key": "ledger-api", "Service-Flow-Control-Value": "parallelism=2, rate=10, period=1m"})]
    trigger(OK_URL, {"order": 1}, label="finance")  # succeeds: never in the DLQ
    return {"finance": fails, "ledger": ledger}


def test_dlq_list_returns_every_entry_with_the_fields_the_sdk_reads(call, blank_sandbox, failed):
    messages, _ = list_all(call, "dlq.list", "messages")
    assert [m.dlq_id for m in messages] == [r["dlq_id"] for r in dlq_rows(blank_sandbox)]  # newest first
    finance = [m for m in messages if m.label == "finance"]
    assert sorted(m.headers["Upstash-Workflow-RunId"][0] for m in finance) == sorted(failed["finance"])
    for m in finance:
        assert (m.url, m.method, m.max_retries, m.response_status) == (FAIL_URL, "POST", 1, 500)
        # the message that failed: collect's result, whose delivery ran upload
        assert json.loads(m.body)["stepName"] == "collect" and m.caller_ip == "127.0.0.1"
        assert json.loads(m.response_body) == {"error": "PermissionError", "message": "ledger API rejected the upload: 403"}
        assert m.response_headers["Upstash-Error-Step-Name"] == ["upload"]  # the step that failed
        assert m.message_id.startswith("msg_") and m.not_before <= m.created_at and m.flow_control is None
        assert m.url_group is None and m.queue is None and m.schedule_id is None
    (ledger,) = [m for m in messages if m.label == "ledger"]
    assert (ledger.flow_control.key, ledger.flow_control.parallelism, ledger.flow_control.rate,
            ledger.flow_control.period) == ("ledger-api", 2, 10, 60)
    assert ledger.max_retries == 2 and json.loads(ledger.body) == {"batch": 7}


def test_dlq_list_with_each_filter(call, blank_sandbox, failed):
    """Each filter against the store's own rows (other tests of the module add entries of their own,
    before or after this one: the expectations are read from the store, not assumed)."""
    def ids(**flt: Any) -> list[str]:
        return [m.dlq_id for m in call("dlq.list", filter=flt).messages]

    rows = dlq_rows(blank_sandbox)  # newest first, as the listing

    def where(**match: Any) -> list[str]:
        return [r["dlq_id"] for r in rows if all(r[k] == v for k, v in match.items())]

    finance = where(label="finance")
    one = rows[[r["dlq_id"] for r in rows].index(finance[1])]
    assert len(finance) >= 3 and ids(message_id=one["message_id"]) == where(message_id=one["message_id"])
    assert ids(url=FAIL_URL) == where(url=FAIL_URL) and ids(url=OK_URL) == []
    assert ids(label="ledger") == where(label="ledger")
    assert ids(label="finance", response_status=500) == finance and ids(response_status=404) == []
    assert ids(label="finance", caller_ip="127.0.0.1") == finance and ids(caller_ip="10.9.9.9") == []
    # nothing in the sandbox is published to a URL group or a queue, or by a schedule
    assert ids(url_group="orders") == [] and ids(queue="q") == [] and ids(schedule_id="scd_1") == []
    times = sorted(r["created_at"] for r in rows if r["label"] == "finance")
    assert ids(label="finance", from_time=times[1]) == [r["dlq_id"] for r in rows
                                                        if r["label"] == "finance" and r["created_at"] >= times[1]]
    assert ids(label="finance", to_time=times[1]) == [r["dlq_id"] for r in rows
                                                      if r["label"] == "finance" and r["created_at"] <= times[1]]
    assert ids(label="finance", from_time=times[0], to_time=times[-1]) == finance  # both bounds inclusive
    assert ids(label="finance", to_time=times[0] - 1) == []


def test_dlq_list_follows_the_cursor_to_the_end(call, blank_sandbox, failed):
    messages, pages = list_all(call, "dlq.list", "messages", count=1)
    expected = [r["dlq_id"] for r in dlq_rows(blank_sandbox)]
    assert [m.dlq_id for m in messages] == expected and pages == len(expected)
    two, _ = list_all(call, "dlq.list", "messages", count=2, filter={"label": "finance"})
    assert [m.dlq_id for m in two] == [r["dlq_id"] for r in dlq_rows(blank_sandbox, "finance")]


def test_dlq_get_returns_the_entry_and_unknown_ids_fail(call, blank_sandbox, failed):
    listed = {m.dlq_id: m for m in call("dlq.list", filter={"label": "finance"}).messages}
    for dlq_id, message in listed.items():
        assert call("dlq.get", dlq_id) == message
    with pytest.raises(QStashError, match="404"):
        call("dlq.get", "dlq_unknown")


def test_dlq_delete_and_delete_many(call, blank_sandbox, trigger, label):
    for i in range(4):
        trigger(LEDGER_URL, {"n": i}, label=label)
    first, *rest = [r["dlq_id"] for r in dlq_rows(blank_sandbox, label)]
    assert call("dlq.delete", first) is None  # the SDK returns nothing
    assert first not in [r["dlq_id"] for r in dlq_rows(blank_sandbox)]
    with pytest.raises(QStashError, match="404"):
        call("dlq.get", first)
    with pytest.raises(QStashError, match="404"):
        call("dlq.delete", first)  # already gone
    assert call("dlq.delete_many", [*rest[:2], first, "dlq_unknown"]) == 2  # unknown ids are not counted
    assert [r["dlq_id"] for r in dlq_rows(blank_sandbox, label)] == rest[2:]
    assert call("dlq.delete_many", []) == 0
    assert [m.dlq_id for m in call("dlq.list", filter={"label": label}).messages] == rest[2:]


# -- events log --------------------------------------------------------------------------------------
OUTCOMES = ("DELIVERED", "ERROR", "FAILED")


def _outcomes(logs: list[Any]) -> Counter[str]:
    """How each delivery of these events ended (a message's log also has CREATED, ACTIVE, RETRY)."""
    return Counter(log.state.value for log in logs if log.state.value in OUTCOMES)


def test_events_one_outcome_per_delivery(call, trigger, label):
    ok = trigger(OK_URL, {"order": 9}, label=label)
    flaky = trigger(FLAKY_URL, {"day": 1}, label=label, retries=2)
    bad = trigger(FAIL_URL, {"month": "2026-12"}, label=label, retries=1)
    logs, _ = list_all(call, "log.list", "logs", filter={"label": label})
    assert [log.time for log in logs] == sorted((log.time for log in logs), reverse=True)  # newest first
    by_run: dict[str, list[Any]] = {}
    for log in logs:
        by_run.setdefault(log.headers["Upstash-Workflow-RunId"][0], []).append(log)
    # A delivery runs the next step: the initial call's runs the first step, each result's the next one.
    assert _outcomes(by_run[ok]) == Counter(DELIVERED=2)  # the initial call (ran ship); ship's result (the end)
    assert _outcomes(by_run[flaky]) == Counter(DELIVERED=2, ERROR=1)  # the initial call failed once in fetch
    assert _outcomes(by_run[bad]) == Counter(DELIVERED=1, ERROR=1, FAILED=1)  # collect's result: upload, twice
    (error,) = [log for log in by_run[flaky] if log.state is LogState.ERROR]
    assert error.error == "ConnectionError: gateway returned 503" and error.response_status == 500
    assert error.next_delivery_time >= error.time
    (failure,) = [log for log in by_run[bad] if log.state is LogState.FAILED]
    assert failure.error.startswith("PermissionError") and failure.next_delivery_time is None
    for log in logs:
        assert log.label == label and log.method == "POST" and log.message_id.startswith("msg_")
        assert log.url in (OK_URL, FLAKY_URL, FAIL_URL) and log.url_group is None
    # The initial call publishes ship's result before it answers, so the result's delivery may end
    # first: the two are told apart by their bodies, not by their places in the list.
    delivered = [log for log in by_run[ok] if log.state is LogState.DELIVERED]
    bodies = sorted((json.loads(base64.b64decode(log.body_base64)) for log in delivered), key=len)
    assert bodies[0] == {"order": 9}  # the trigger's payload
    assert bodies[1]["stepName"] == "ship"  # a step's result
    assert [log.response_status for log in delivered] == [200, 200]


def test_events_with_each_filter_and_the_cursor(call, trigger, label):
    trigger(OK_URL, {"order": 1}, label=label)
    trigger(FAIL_URL, {"month": "2027-01"}, label=label, retries=1)
    logs, _ = list_all(call, "log.list", "logs", filter={"label": label})
    assert _outcomes(logs) == Counter(DELIVERED=3, ERROR=1, FAILED=1)

    def found(**flt: Any) -> list[tuple[int, str, str]]:
        page = call("log.list", filter={"label": label, **flt})
        assert page.cursor is None
        return [(log.time, log.message_id, log.state.value) for log in page.logs]

    def expect(keep: Callable[[Any], bool]) -> list[tuple[int, str, str]]:
        return [(log.time, log.message_id, log.state.value) for log in logs if keep(log)]

    upload = next(log for log in logs if log.state is LogState.FAILED).message_id
    ship = next(log for log in logs if log.url == OK_URL).message_id
    assert found(message_id=upload) == expect(lambda log: log.message_id == upload)
    assert _outcomes([log for log in logs if log.message_id == upload]) == Counter(ERROR=1, FAILED=1)  # 2 attempts
    assert found(message_ids=[upload, ship]) == expect(lambda log: log.message_id in (upload, ship))
    assert found(state=LogState.FAILED) == expect(lambda log: log.state is LogState.FAILED)
    assert found(state=LogState.CANCELED) == []
    assert found(url=OK_URL) == expect(lambda log: log.url == OK_URL)
    assert found(url_group="g") == [] and found(queue="q") == [] and found(schedule_id="s") == []
    times = sorted(log.time for log in logs)
    assert found(from_time=times[2]) == expect(lambda log: log.time >= times[2])
    assert found(to_time=times[2]) == expect(lambda log: log.time <= times[2])
    assert found(from_time=times[0], to_time=times[-1]) == expect(lambda log: True)
    # the cursor, one event per page, to the end: each event exactly once, in the same order
    paged, pages = list_all(call, "log.list", "logs", count=1, filter={"label": label})
    assert [(log.time, log.message_id, log.state) for log in paged] == [
        (log.time, log.message_id, log.state) for log in logs] and pages == len(logs)


def test_events_with_an_unknown_state_or_count_are_refused(blank_sandbox):
    env = blank_sandbox.env
    with httpx.Client(base_url=env["SVC_QUEUE_URL"], headers={"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}) as c:
        r = c.get("/v2/events", params={"state": "DONE"})
        assert r.status_code == 400 and r.json()["error"].startswith("state: must be one of CREATED")
        r = c.get("/v2/events", params={"count": 1001})
        assert r.status_code == 400 and r.json() == {"error": "count: must be from 1 to 1000, got 1001"}
