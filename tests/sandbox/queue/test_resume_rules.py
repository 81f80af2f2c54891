"""The DLQ's resume and restart rules over HTTP, as a caller of the sandbox sees them: the retries a
resumed or restarted run really gets (an override of 0 is 0, not "not given"), the run id and flow
control it carries, which steps run again, and the 400 / 404 a bad request gets."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from tests.conftest import eventually

URL = "https://app.example.com/api/workflows/resume-rules"


@pytest.fixture
def workflow(runner):
    """A workflow of two steps whose second fails while ``broken`` is set; ``counts`` counts each step's
    attempts."""
    counts: Counter[str] = Counter()
    broken = threading.Event()
    broken.set()

    def second():
        counts["second"] += 1
        if broken.is_set():
            raise RuntimeError("downstream is down")
        return "ok"

    def wf(context):
        context.run("first", lambda: counts.update(["first"]) or 1)
        return context.run("second", second)

    runner.register(URL, wf)
    return counts, broken


def failed_entry(runner, raw_queue, **options) -> str:
    """Trigger a run that fails, wait for it, and return its DLQ id."""
    handle = runner.trigger(URL, **options)
    assert runner.wait(handle) == "RUN_FAILED"
    [entry] = [m for m in raw_queue.get("/v2/dlq").json()["messages"]
               if (m["workflowRunId"], m["workflowCreatedAt"]) == (handle.workflow_run_id, handle.workflow_created_at)]
    return entry["dlqId"]


def finished(runner, raw_queue, answer: dict) -> dict:
    """The run a resume or restart answered with, once it has ended, as the logs show it."""
    runner.wait(runner.handle(answer["workflowRunId"], answer["workflowCreatedAt"]))
    logs = raw_queue.get("/v2/workflows/logs", params={"workflowRunId": answer["workflowRunId"],
                                                       "workflowCreatedAt": answer["workflowCreatedAt"]})
    [run] = logs.json()["runs"]
    return run


def states_of(run: dict, name: str) -> list[str]:
    return [s["state"] for group in run["steps"] for s in group["steps"] if s.get("stepName") == name]


@pytest.mark.parametrize("action", ["resume", "restart"])
def test_an_override_of_zero_retries_is_zero_retries(runner, raw_queue, workflow, action):
    counts, _ = workflow
    dlq_id = failed_entry(runner, raw_queue, retries=2)
    assert counts["second"] == 3  # the first try and its 2 retries
    r = raw_queue.post(f"/v2/dlq/{action}/{dlq_id}", headers={"Service-Retries": "0"})
    assert r.status_code == 200
    run = finished(runner, raw_queue, r.json())
    assert run["workflowState"] == "RUN_FAILED" and run["retries"] == 0
    assert states_of(run, "second") == ["STEP_FAILED"]  # no retry
    assert counts["second"] == 4


@pytest.mark.parametrize("action", ["resume", "restart"])
def test_without_an_override_the_run_keeps_its_retries(runner, raw_queue, workflow, action):
    counts, _ = workflow
    dlq_id = failed_entry(runner, raw_queue, retries=1)
    r = raw_queue.post(f"/v2/dlq/{action}", json={"dlqIds": [dlq_id]})
    assert r.status_code == 200
    [answer] = r.json()["workflowRuns"]
    run = finished(runner, raw_queue, answer)
    assert run["retries"] == 1 and states_of(run, "second") == ["STEP_RETRY", "STEP_FAILED"]
    assert counts["second"] == 4


def test_an_override_of_more_retries_and_the_other_overrides(runner, raw_queue, workflow):
    dlq_id = failed_entry(runner, raw_queue, retries=0, flow_control_key="old", flow_control_value="rate=1")
    r = raw_queue.post(f"/v2/dlq/resume/{dlq_id}", headers={
        "Service-Retries": "2", "Service-Workflow-RunId": "wfr_override", "Service-Flow-Control-Key": "new",
        "Service-Flow-Control-Value": "parallelism=1"})
    assert r.status_code == 200 and r.json()["workflowRunId"] == "wfr_override"
    run = finished(runner, raw_queue, r.json())
    assert (run["retries"], run["flowControlKey"], run["flowControlValue"]) == (2, "new", "parallelism=1")
    assert states_of(run, "second") == ["STEP_RETRY", "STEP_RETRY", "STEP_FAILED"]


def test_without_overrides_the_run_keeps_its_id_and_flow_control(runner, raw_queue, workflow):
    dlq_id = failed_entry(runner, raw_queue, retries=0, run_id="wfr_kept", flow_control_key="k",
                          flow_control_value="rate=2")
    r = raw_queue.post(f"/v2/dlq/restart/{dlq_id}")
    assert r.status_code == 200 and r.json()["workflowRunId"] == "wfr_kept"
    run = finished(runner, raw_queue, r.json())
    assert (run["retries"], run["flowControlKey"], run["flowControlValue"]) == (0, "k", "rate=2")


def test_resume_keeps_the_steps_that_succeeded_and_restart_runs_them_again(runner, raw_queue, workflow):
    counts, broken = workflow
    first = failed_entry(runner, raw_queue, retries=0)
    broken.clear()
    run = finished(runner, raw_queue, raw_queue.post(f"/v2/dlq/resume/{first}").json())
    assert run["workflowState"] == "RUN_SUCCESS" and counts == Counter(first=1, second=2)
    broken.set()
    second = failed_entry(runner, raw_queue, retries=0)
    broken.clear()
    run = finished(runner, raw_queue, raw_queue.post(f"/v2/dlq/restart/{second}").json())
    assert run["workflowState"] == "RUN_SUCCESS" and counts == Counter(first=3, second=4)
    assert raw_queue.get("/v2/dlq").json()["messages"] == []  # both entries consumed


def test_many_entries_at_once_in_order_and_each_once(runner, raw_queue, workflow):
    a = failed_entry(runner, raw_queue, retries=0, run_id="wfr_a")
    b = failed_entry(runner, raw_queue, retries=0, run_id="wfr_b")
    r = raw_queue.post("/v2/dlq/resume", json={"dlqIds": [b, a, b]}, headers={"Service-Retries": "0"})
    assert r.status_code == 200
    assert [w["workflowRunId"] for w in r.json()["workflowRuns"]] == ["wfr_b", "wfr_a"]
    for answer in r.json()["workflowRuns"]:
        assert finished(runner, raw_queue, answer)["retries"] == 0


def test_unknown_entries_are_a_404_naming_each_and_nothing_starts(runner, raw_queue, workflow):
    known = failed_entry(runner, raw_queue, retries=0)
    r = raw_queue.post("/v2/dlq/restart", json={"dlqIds": [known, "dlq_x", "dlq_y"]})
    assert r.status_code == 404 and r.json() == {"error": "no DLQ entry 'dlq_x', 'dlq_y'"}
    assert [m["dlqId"] for m in raw_queue.get("/v2/dlq").json()["messages"]] == [known]


@pytest.mark.parametrize(("value", "error"), [
    ("-1", "Service-Retries: must be at least 0, got -1"),
    ("three", "Service-Retries: must be an integer, got 'three'"),
    (str(2**63), f"Service-Retries: must be from 0 to {2**63 - 1}, got {2**63}"),
])
def test_a_bad_retries_header_is_a_400(runner, raw_queue, workflow, value, error):
    dlq_id = failed_entry(runner, raw_queue, retries=0)
    r = raw_queue.post(f"/v2/dlq/resume/{dlq_id}", headers={"Service-Retries": value})
    assert r.status_code == 400 and r.json() == {"error": error}
    assert [m["dlqId"] for m in raw_queue.get("/v2/dlq").json()["messages"]] == [dlq_id]  # not consumed


def test_the_largest_retries_is_accepted(runner, raw_queue, workflow):
    _, broken = workflow
    dlq_id = failed_entry(runner, raw_queue, retries=0)
    broken.clear()
    r = raw_queue.post(f"/v2/dlq/resume/{dlq_id}", headers={"Service-Retries": str(2**63 - 1)})
    assert r.status_code == 200 and finished(runner, raw_queue, r.json())["retries"] == 2**63 - 1


@pytest.mark.parametrize("header", ["Service-Workflow-RunId", "Service-Flow-Control-Key",
                                    "Service-Flow-Control-Value"])
def test_an_empty_override_is_a_400(runner, raw_queue, workflow, header):
    dlq_id = failed_entry(runner, raw_queue, retries=0)
    r = raw_queue.post(f"/v2/dlq/restart/{dlq_id}", headers={header: ""})
    assert r.status_code == 400 and r.json() == {"error": f"{header}: must not be empty"}


def test_a_run_triggered_over_http_keeps_its_label_body_and_caller_through_a_resume(runner, raw_queue, workflow):
    r = raw_queue.post(f"/v2/trigger/{URL}", json={"order": 7}, headers={"Service-Label": "blue",
                                                                         "Service-Retries": "0"})
    assert r.status_code == 200
    assert runner.wait(runner.handle(r.json()["workflowRunId"], r.json()["workflowCreatedAt"])) == "RUN_FAILED"
    [entry] = raw_queue.get("/v2/dlq").json()["messages"]
    # the failed message: the delivery of "first"'s result (in which "second" failed)
    assert (entry["label"], json.loads(entry["body"])["stepName"], entry["maxRetries"]) == ("blue", "first", 0)
    resumed = raw_queue.post(f"/v2/dlq/resume/{entry['dlqId']}")
    run = finished(runner, raw_queue, resumed.json())
    assert run["label"] == "blue" and run["workflowState"] == "RUN_FAILED"
    [again] = raw_queue.get("/v2/dlq").json()["messages"]  # it failed again: a new entry, the same run
    assert (again["label"], again["body"], again["callerIP"]) == ("blue", entry["body"], entry["callerIP"])
    assert again["callerIP"] == "127.0.0.1" and again["dlqId"] != entry["dlqId"]


def test_an_empty_label_is_a_400(runner, raw_queue, workflow):
    r = raw_queue.post(f"/v2/trigger/{URL}", headers={"Service-Label": ""})
    assert r.status_code == 400 and r.json() == {"error": "Service-Label: must not be empty"}


def test_the_runners_own_resume_and_restart_take_the_same_overrides(runner, raw_queue, workflow):
    counts, _ = workflow
    dlq_id = failed_entry(runner, raw_queue, retries=2)
    handle = runner.resume(dlq_id, retries=0, run_id="wfr_py")
    assert handle.workflow_run_id == "wfr_py" and runner.wait(handle) == "RUN_FAILED"
    assert counts == Counter(first=1, second=4)
    dlq_id = failed_entry(runner, raw_queue, retries=0)
    handle = runner.restart(dlq_id, retries=1)
    assert runner.wait(handle) == "RUN_FAILED" and counts == Counter(first=3, second=7)


def test_the_dlq_page_size_is_bounded(runner, raw_queue):
    from svckit.sandbox.queue_reads import MAX_DLQ_COUNT

    assert raw_queue.get("/v2/dlq", params={"count": MAX_DLQ_COUNT}).status_code == 200
    r = raw_queue.get("/v2/dlq", params={"count": MAX_DLQ_COUNT + 1})
    assert r.status_code == 400 and r.json() == {
        "error": f"count: must be from 1 to {MAX_DLQ_COUNT}, got {MAX_DLQ_COUNT + 1}"}


def test_a_batch_messages_headers_set_its_runs_options(runner, raw_queue, workflow):
    r = raw_queue.post("/v2/batch", json=[{"destination": URL, "body": '{"n": 1}', "headers": {
        "Service-Retries": "0", "Service-Label": "red,green", "Service-Workflow-RunId": "wfr_batch",
        "Service-Flow-Control-Key": "fk", "Service-Flow-Control-Value": "rate=3"}}])
    assert r.status_code == 200
    [entry] = eventually(lambda: [m for m in raw_queue.get("/v2/dlq").json()["messages"]
                                  if m["workflowRunId"] == "wfr_batch"], "the run failed into the DLQ", 30)
    assert (entry["label"], entry["maxRetries"], json.loads(entry["body"])["stepName"]) == ("red,green", 0, "first")
    logs = raw_queue.get("/v2/workflows/logs", params={"workflowRunId": "wfr_batch"}).json()["runs"]
    assert (logs[0]["flowControlKey"], logs[0]["flowControlValue"], logs[0]["retries"]) == ("fk", "rate=3", 0)
