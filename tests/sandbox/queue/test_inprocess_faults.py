"""Deliveries whose failure used to escape the engine's bookkeeping: each must end as a failed
delivery (counted, retried, put in the DLQ), never as an attempt the engine makes again every second
for good with its row ACTIVE.

- a registered workflow's in-process app that raises (here: a body that is not JSON on a call that
  looks like a later call of a run) answers 500, as a real server's would;
- an app on loopback that answers a run's delivery 500 with JSON nested too deep to parse fails the
  run like any other 500."""

from __future__ import annotations

import httpx

from svckit.sandbox.logs import recording
from svckit.sandbox.workflow.runner import WorkflowRunner
from tests.conftest import eventually
from tests.receiver import Receiver

WORKFLOW = "https://shop.example/api/raising"
DEADLINE = 15.0  # seconds: the outcome comes at once (retries 0); a row ACTIVE for good never gets there


def _state(runner: WorkflowRunner, message_id: str) -> str | None:
    rows = runner.store.query("SELECT state FROM messages WHERE message_id = ?", (message_id,))
    return rows[0]["state"] if rows else None


def test_an_in_process_workflow_app_that_raises_answers_500_and_the_message_goes_to_the_dlq(
        runner: WorkflowRunner, raw_queue: httpx.Client):
    runner.register(WORKFLOW, lambda context: None)
    # a later call of a run (the protocol's version header) whose body is not the run's history
    with recording() as lines:
        r = raw_queue.post(f"/v2/publish/{WORKFLOW}", content=b"not json", headers={
            "Upstash-Forward-Upstash-Workflow-Sdk-Version": "1", "Upstash-Retries": "0"})
        assert r.status_code in (200, 201), r.text
        message_id = r.json()["messageId"]
        eventually(lambda: _state(runner, message_id) == "FAILED",
                   lambda: f"the message is {_state(runner, message_id)}, not FAILED", DEADLINE)
    [entry] = runner.store.query("SELECT d.response_status, d.response_body FROM dlq d JOIN messages m "
                                 "ON m.seq = d.message_seq WHERE m.message_id = ?", (message_id,))
    assert entry["response_status"] == 500
    assert "JSONDecodeError" in entry["response_body"]  # the entry says what failed, and the log says where
    assert any(f"workflow app: the delivery to {WORKFLOW} failed" in line for line in lines), lines
    assert [e["state"] for e in runner.store.query(
        "SELECT e.state FROM events e JOIN messages m ON m.seq = e.message_seq WHERE m.message_id = ? "
        "ORDER BY e.rowid", (message_id,))].count("ACTIVE") == 1  # one attempt, not one a second


def test_a_run_whose_app_answers_500_with_json_nested_too_deep_fails_into_the_dlq(runner: WorkflowRunner):
    with Receiver() as app:
        app.answer("/wf", (500, {"Content-Type": "application/json"}, b"[" * 100_000))
        handle = runner.trigger(app.url("/wf"), {"order": 1}, retries=0)
        assert runner.wait(handle, timeout=DEADLINE) == "RUN_FAILED"
        [run] = runner.store.query("SELECT dlq_id FROM runs WHERE seq = ?", (handle.seq,))
        assert run["dlq_id"] is not None
        assert len(app.at("/wf")) == 1  # delivered once: retries 0
