"""The sandbox's registered workflows under faults, seen as a user sees it, over HTTP with the queue
client: a parallel branch that fails for good (each branch is its own delivery, as in the vendor's
protocol: the siblings are recorded, the run fails once, the DLQ entry is the branch's), its resume
(the siblings are kept, only the branch runs again), and a cancel that comes while a failed step waits
to be retried (the run ends canceled at once and is not retried: the worker is free for the next run)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from svckit.queue import Queue
from svckit.queue.models import WorkflowRun
from svckit.sandbox import Sandbox
from svckit.sandbox.workflow.runner import WorkflowRunner
from tests.conftest import eventually, running

SHOP = "https://shop.example/api/order"
QUICK = "https://shop.example/api/ping"
DEADLINE = 20.0  # seconds a poll waits for what should happen at once


def _until(what: str, check: Callable[[], Any]) -> Any:
    return eventually(check, what, DEADLINE)


def _run(queue: Queue, run_id: str) -> WorkflowRun:
    [run] = queue.workflow_logs(workflow_run_id=run_id).runs
    return run


def _text(value: Any) -> str:
    return str(getattr(value, "value", value))


def _steps(run: WorkflowRun) -> list[tuple[str, str, str]]:
    """(group type, step name, state) of every step the service reports, in its order."""
    return [(_text(group.type), step.step_name, _text(step.state)) for group in run.steps for step in group.steps]


def _names(run: WorkflowRun) -> list[tuple[str, str]]:
    """(step name, state) of every step the service reports."""
    return [step[1:] for step in _steps(run)]


def _siblings_recorded(queue: Queue, run_id: str) -> bool:
    """Whether the branches "charge" and "audit" of the run are recorded as succeeded."""
    return {("charge", "STEP_SUCCESS"), ("audit", "STEP_SUCCESS")} <= set(_names(_run(queue, run_id)))


# -- a parallel branch fails ------------------------------------------------------------------------
def test_a_parallel_branch_that_fails_for_good_fails_the_run_and_its_siblings_are_recorded(
        queue: Queue, runner: WorkflowRunner):
    calls: dict[str, int] = {"receipt": 0, "after": 0}

    def receipt() -> None:
        calls["receipt"] += 1
        _until("the siblings recorded", lambda: _siblings_recorded(queue, handle.workflow_run_id))
        raise RuntimeError("mail server down")

    def workflow(context: Any) -> None:
        context.run("reserve", lambda: "reserved")
        context.parallel({"receipt": receipt, "charge": lambda: "charged", "audit": lambda: "logged"})
        calls["after"] += 1
        context.run("ship", lambda: "shipped")

    runner.register(SHOP, workflow)
    handle = runner.trigger(SHOP, {"order": 7}, retries=1)
    run_id = handle.workflow_run_id
    run = _until("the run ends", lambda: (r := _run(queue, run_id)).workflow_state != "RUN_STARTED" and r)

    assert run.workflow_state == "RUN_FAILED" and run.dlq_id
    assert calls == {"receipt": 2, "after": 0}  # retried once, and nothing after the group ran
    steps = _steps(run)
    assert steps[:2] == [("sequential", "init", "STEP_SUCCESS"), ("sequential", "reserve", "STEP_SUCCESS")]
    assert sorted(steps[2:]) == sorted([
        ("parallel", "charge", "STEP_SUCCESS"), ("parallel", "audit", "STEP_SUCCESS"),
        ("parallel", "receipt", "STEP_RETRY"), ("parallel", "receipt", "STEP_FAILED")])
    group = run.steps[-1]
    assert {s.step_name: s.out for s in group.steps if s.state == "STEP_SUCCESS"} == {
        "charge": '"charged"', "audit": '"logged"'}
    assert all(s.concurrent == 3 for s in group.steps)
    failed = next(s for s in group.steps if s.state == "STEP_FAILED")
    assert "RuntimeError: mail server down" in (failed.out or "")

    # one DLQ entry for the run: the delivery of the branch's plan, the error its answer
    [entry] = queue.dlq().messages
    assert (entry.dlq_id, entry.workflow_run_id, entry.message_id) == (run.dlq_id, run_id, failed.message_id)
    assert entry.response_status == 500 and "mail server down" in (entry.response_body or "")

    # the events log: the branch's delivery failed once (ERROR), then for good (FAILED)
    events = [(e.step_name, _text(e.state)) for e in queue.events(workflow_run_id=run_id).events]
    assert sorted(e for e in events if e[0] == "receipt" and e[1] in ("ERROR", "FAILED")) == [
        ("receipt", "ERROR"), ("receipt", "FAILED")]
    assert not any(name == "ship" for name, _ in events)


def test_a_resumed_run_keeps_the_branches_that_succeeded_and_reruns_only_the_failed_one(
        queue: Queue, runner: WorkflowRunner):
    ran: list[str] = []
    broken = threading.Event()
    broken.set()

    def branch(name: str) -> Callable[[], str]:
        def step() -> str:
            ran.append(name)
            if name == "receipt" and broken.is_set():
                # fails once its siblings are recorded (a failure cuts short the branches still running)
                _until("the siblings recorded", lambda: _siblings_recorded(queue, handle.workflow_run_id))
                raise RuntimeError("mail server down")
            return name
        return step

    runner.register(SHOP, lambda context: context.parallel({n: branch(n) for n in ("charge", "receipt", "audit")}))
    handle = runner.trigger(SHOP, {"order": 8}, retries=0)
    _until("the run fails", lambda: _run(queue, handle.workflow_run_id).workflow_state == "RUN_FAILED")
    assert sorted(ran) == ["audit", "charge", "receipt"]

    broken.clear()
    [entry] = queue.dlq().messages
    queue.resume(entry.dlq_id)
    resumed = _until("the resumed run succeeds", lambda: next(
        (r for r in queue.workflow_logs(workflow_run_id=handle.workflow_run_id).runs
         if r.workflow_state == "RUN_SUCCESS"), None))
    assert sorted(ran) == ["audit", "charge", "receipt", "receipt"]  # the siblings were copied, not rerun
    assert sorted(_names(resumed)[1:]) == [
        ("audit", "STEP_SUCCESS"), ("charge", "STEP_SUCCESS"), ("receipt", "STEP_SUCCESS")]
    assert queue.dlq().messages == []


# -- a cancel during the retry back-off ------------------------------------------------------------
@pytest.fixture
def one_worker(tmp_path) -> Iterator[Sandbox]:
    """A queue sandbox with one worker and a minute's back-off before a failed step is retried."""
    with running(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=60, queue_workers=1) as sandbox:
        yield sandbox


def test_a_run_canceled_while_it_waits_to_retry_ends_canceled_at_once_and_never_retries(one_worker: Sandbox):
    runner: WorkflowRunner = one_worker.area("queue").runner  # type: ignore[attr-defined]
    attempts: list[int] = []

    def charge() -> None:
        attempts.append(1)
        raise RuntimeError("card declined")

    runner.register(SHOP, lambda context: context.run("charge", charge))
    runner.register(QUICK, lambda context: context.run("pong", lambda: "pong"))
    with Queue.from_settings(one_worker.settings) as queue:
        handle = runner.trigger(SHOP, {"order": 9}, retries=3)
        _until("the first attempt fails and waits to be retried",
               lambda: ("charge", "STEP_RETRY") in _names(_run(queue, handle.workflow_run_id)))
        queue.cancel(handle.workflow_run_id)
        run = _run(queue, handle.workflow_run_id)
        assert run.workflow_state == "RUN_CANCELED" and run.workflow_run_completed_at is not None

        # the one worker is free again at once: the canceled run stopped waiting for its retry
        quick = runner.trigger(QUICK, None)
        _until("a run after the cancel gets the worker",
               lambda: _run(queue, quick.workflow_run_id).workflow_state == "RUN_SUCCESS")

        run = _run(queue, handle.workflow_run_id)
        assert run.workflow_state == "RUN_CANCELED" and run.dlq_id is None
        assert _names(run) == [("init", "STEP_SUCCESS"), ("charge", "STEP_RETRY")]
        assert attempts == [1]
        events = [(e.step_name, _text(e.state)) for e in queue.events(workflow_run_id=handle.workflow_run_id).events]
        # the run's one message: its delivery failed in "charge", waited to be retried, was canceled
        assert sorted(events) == [("charge", "ERROR"), ("init", "ACTIVE"), ("init", "CANCELED"), ("init", "CREATED"),
                                  ("init", "RETRY")]
        assert queue.dlq().messages == []
