"""The workflow SDK's paths (``/v2/workflows/...``, ``/v2/batch``) over real HTTP: the rules the JS
suite (tests/compat/js/workflow.test.mjs) does not reach — errors for bad input, several values of
one filter, the ``host`` / ``path`` filters, failure functions and their recovery after a stop."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from svckit.sandbox.workflow.local import WorkflowFailure
from svckit.sandbox.workflow.runner import CallbackError, WorkflowRunner
from svckit.sandbox.workflow.runs import CALLBACK_INPROGRESS, CALLBACK_SUCCESS
from tests.conftest import eventually, running

SHOP = "https://shop.example/api/order"
BILLING = "https://billing.example/api/invoice"


def _fails(context: Any) -> None:
    context.run("charge", lambda: 1 / 0)


def _failed_runs(runner: WorkflowRunner, url: str, labels: list[str]) -> list[Any]:
    runner.register(url, _fails)
    handles = [runner.trigger(url, {"n": i}, label=label, retries=0) for i, label in enumerate(labels)]
    assert [runner.wait(h) for h in handles] == ["RUN_FAILED"] * len(handles)
    return handles


def _dlq(raw: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    reply = raw.get("/v2/dlq", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()["messages"]


def test_a_filter_given_several_values_matches_any_of_them(raw_queue: httpx.Client, runner: WorkflowRunner):
    _failed_runs(runner, SHOP, ["red", "green", "blue"])
    labels = {m["label"] for m in _dlq(raw_queue, label=["red", "blue"])}
    assert labels == {"red", "blue"}
    runs = raw_queue.get("/v2/workflows/events", params={"groupBy": "workflowRunId", "label": ["red", "green"]})
    assert {r["label"] for r in runs.json()["runs"]} == {"red", "green"}


def test_a_filter_that_takes_one_value_refuses_two(raw_queue: httpx.Client):
    reply = raw_queue.get("/v2/dlq", params={"workflowRunId": ["a", "b"]})
    assert reply.status_code == 400
    assert "workflowRunId: give one value, got 2" in reply.json()["error"]


def test_host_and_path_filters_match_the_workflow_url(raw_queue: httpx.Client, runner: WorkflowRunner):
    _failed_runs(runner, SHOP, ["a"])
    _failed_runs(runner, BILLING, ["b"])
    by_host = raw_queue.get("/v2/workflows/logs", params={"host": "billing.example"}).json()["runs"]
    assert [r["workflowUrl"] for r in by_host] == [BILLING]
    by_path = raw_queue.get("/v2/workflows/logs", params={"path": "/api/order"}).json()["runs"]
    assert [r["workflowUrl"] for r in by_path] == [SHOP]


def test_grouped_events_need_group_by_run_id(raw_queue: httpx.Client):
    reply = raw_queue.get("/v2/workflows/events", params={"groupBy": "messageId"})
    assert reply.status_code == 400
    assert "groupBy" in reply.json()["error"]


def test_a_bulk_action_by_filter_acts_on_count_entries_and_returns_the_cursor(
        raw_queue: httpx.Client, runner: WorkflowRunner):
    _failed_runs(runner, SHOP, ["sweep"] * 3 + ["keep"])
    first = raw_queue.delete("/v2/workflows/dlq", params={"label": "sweep", "count": 2}).json()
    assert first["deleted"] == 2 and first["cursor"]
    last = raw_queue.delete("/v2/workflows/dlq", params={"label": "sweep", "cursor": first["cursor"]}).json()
    assert last == {"deleted": 1}
    assert [m["label"] for m in _dlq(raw_queue)] == ["keep"]


def test_a_bulk_resume_of_an_unknown_id_starts_nothing(raw_queue: httpx.Client, runner: WorkflowRunner):
    _failed_runs(runner, SHOP, ["x"])
    [entry] = _dlq(raw_queue)
    reply = raw_queue.post("/v2/workflows/dlq/resume", params={"dlqIds": [entry["dlqId"], "dlq_nope"]})
    assert reply.status_code == 404
    assert "dlq_nope" in reply.json()["error"]
    assert [m["dlqId"] for m in _dlq(raw_queue)] == [entry["dlqId"]]


def test_cancel_refuses_a_url_match_that_is_neither_exact_nor_prefix(raw_queue: httpx.Client):
    reply = raw_queue.delete("/v2/workflows/runs", params={"workflowUrl": SHOP, "workflowUrlExactMatch": "yes"})
    assert reply.status_code == 400
    assert "workflowUrlExactMatch" in reply.json()["error"]


def test_batch_starts_nothing_when_one_message_is_refused(raw_queue: httpx.Client, runner: WorkflowRunner):
    runner.register(SHOP, _fails)
    # a plain message to a host that is not on loopback: the sandbox does not deliver there
    reply = raw_queue.post("/v2/batch", json=[{"destination": SHOP, "body": "{}"},
                                              {"destination": "https://elsewhere.example/hook", "body": "{}"}])
    assert reply.status_code == 400
    assert "elsewhere.example" in reply.json()["error"] and "only to this machine" in reply.json()["error"]
    assert raw_queue.get("/v2/workflows/logs").json()["runs"] == []
    for bad in ([], {"destination": SHOP}, [{"body": "{}"}], [{"destination": SHOP, "headers": ["x"]}],
                [{"destination": SHOP, "headers": {"Upstash-Label": " "}}],
                [{"destination": SHOP, "headers": {"Upstash-Retries": "-1"}}]):
        assert raw_queue.post("/v2/batch", json=bad).status_code == 400


def test_batch_reads_the_run_options_from_each_message_headers(raw_queue: httpx.Client, runner: WorkflowRunner):
    runner.register(SHOP, _fails)
    reply = raw_queue.post("/v2/batch", json=[{"destination": SHOP, "body": '{"id": 7}', "headers": {
        "Upstash-Workflow-RunId": "wfr_batch", "Upstash-Label": "first,second", "Upstash-Retries": "0",
        "Upstash-Flow-Control-Key": "fc", "Upstash-Flow-Control-Value": "parallelism=1"}}])
    assert reply.status_code == 200
    runner.wait(runner.handle("wfr_batch", raw_queue.get("/v2/workflows/logs").json()["runs"][0]["workflowRunCreatedAt"]))
    [run] = raw_queue.get("/v2/workflows/logs").json()["runs"]
    assert (run["workflowRunId"], run["label"], run["retries"], run["flowControlKey"]) == (
        "wfr_batch", "first,second", 0, "fc")
    assert run["steps"][0]["steps"][0]["out"] == '{"id": 7}'


def test_a_failure_function_is_given_the_failed_run(raw_queue: httpx.Client, runner: WorkflowRunner):
    seen: list[WorkflowFailure] = []
    runner.register(SHOP, _fails, failure_function=lambda failure: seen.append(failure) or "alerted")
    handle = runner.trigger(SHOP, {"id": 1}, label="l", retries=0)
    assert runner.wait(handle) == "RUN_FAILED"
    # called after the run failed, as QStash calls back: a message of its own
    [entry] = eventually(lambda: [e for e in _dlq(raw_queue) if (e.get("failureCallbackInfo") or {}).get("state")
                                  == CALLBACK_SUCCESS], "the failure function's answer recorded")
    [failure] = seen
    assert (failure.run_id, failure.body, failure.label, failure.status) == (handle.workflow_run_id, {"id": 1}, "l", 500)
    assert "division by zero" in failure.response and failure.dlq_id == entry["dlqId"]
    [run] = raw_queue.get("/v2/workflows/logs").json()["runs"]
    assert run["failureFunction"]["responseBody"] == '{"result":"alerted"}'  # as the JS SDK answers


def test_a_failure_callback_cut_short_by_a_stop_is_delivered_after_the_restart(tmp_path):
    release, seen = threading.Event(), []
    with running(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=0) as sandbox:
        runner = sandbox.area("queue").runner
        runner.register(SHOP, _fails, failure_function=lambda failure: release.wait(10))
        handle = runner.trigger(SHOP, retries=0)
        eventually(lambda: runner.store.query("SELECT 1 FROM failure_callbacks WHERE state = ?", (CALLBACK_INPROGRESS,)),
                   "the failure function called")
    release.set()  # the sandbox stopped while the failure function ran: its callback was not answered
    with running(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=0,
                 queue_backoff_scale=0.001) as sandbox:
        runner = sandbox.area("queue").runner
        runner.register(SHOP, _fails, failure_function=lambda failure: seen.append(failure.run_id) or "alerted")
        [callback] = eventually(lambda: runner.store.query(
            "SELECT state, response_body FROM failure_callbacks WHERE state = ?", (CALLBACK_SUCCESS,)),
            "the failure callback delivered after the restart")
        assert callback["response_body"] == '{"result":"alerted"}' and seen == [handle.workflow_run_id]
        [dlq] = runner.store.query("SELECT dlq_id FROM dlq")
        with pytest.raises(CallbackError, match="has not failed"):
            runner.retry_failure_function(dlq["dlq_id"])


@pytest.mark.parametrize("with_callback", [False, True])
def test_retrying_a_callback_that_did_not_fail_is_refused(raw_queue: httpx.Client, runner: WorkflowRunner,
                                                          with_callback: bool):
    runner.register(SHOP, _fails, failure_function=(lambda failure: None) if with_callback else None)
    runner.wait(runner.trigger(SHOP, retries=0))
    [entry] = _dlq(raw_queue)
    if with_callback:  # called after the run failed: until it answered, it is in progress
        eventually(lambda: runner.store.query("SELECT 1 FROM failure_callbacks WHERE state = ?", (CALLBACK_SUCCESS,)),
                   "the failure function's answer recorded")
    reply = raw_queue.post(f"/v2/workflows/dlq/callback/{entry['dlqId']}")
    assert reply.status_code == 422
    assert ("CALLBACK_SUCCESS" if with_callback else "no failure callback") in reply.json()["error"]
    assert raw_queue.post("/v2/workflows/dlq/callback/dlq_nope").status_code == 404
