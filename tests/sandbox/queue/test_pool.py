"""The sandbox's registered workflows run their steps on a bounded number of worker threads
(``queue_workers``, svckit/sandbox/workflow/local.py): never more step functions at once, the other
runs wait ``RUN_STARTED``, a waiting run can be canceled, parallel branches cannot deadlock a busy
app, and a sandbox stopped with runs waiting delivers them after its restart.

Concurrency is counted inside the workflows, never timed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from svckit.sandbox import Sandbox
from svckit.sandbox.workflow.runner import WorkflowRunner
from tests.conftest import eventually, running

URL = "https://app.example.com/api/workflows/pooled"
WAIT = 30.0  # how long a run may wait for a gate before the test counts it as hung


class Gauge:
    """How many workflows run at once, and the most there ever were."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = 0
        self.started: list[int] = []
        self.busy = threading.Condition(self.lock)

    def enter(self, n: int) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.started.append(n)
            self.busy.notify_all()

    def leave(self) -> None:
        with self.lock:
            self.now -= 1

    def hold(self, n: int, gate: threading.Event) -> int:
        """A step's work: count it as running until ``gate`` opens."""
        self.enter(n)
        try:
            assert gate.wait(WAIT)
        finally:
            self.leave()
        return n

    def wait_for(self, running: int) -> None:
        with self.busy:
            assert self.busy.wait_for(lambda: self.now == running, WAIT), f"{self.now} running, not {running}"


def pooled(tmp_path, workers: int) -> Iterator[Sandbox]:
    return running(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=0, queue_workers=workers)


def trigger(sb: Sandbox, http: httpx.Client, body: object, url: str = URL) -> str:
    r = http.post(f"{sb.url}/queue/v2/trigger/{url}", json=body,
                  headers={"Authorization": f"Bearer {sb.env['SVC_QUEUE_TOKEN']}"})
    assert r.status_code == 200, r.text
    return r.json()["workflowRunId"]


def states(runner: WorkflowRunner) -> dict[str, str]:
    return {r["run_id"]: r["state"] for r in runner.store.query("SELECT run_id, state FROM runs")}


@pytest.mark.timeout(120)
def test_200_triggers_on_a_pool_of_4_run_4_at_a_time_and_all_finish(tmp_path):
    gauge, gate = Gauge(), threading.Event()

    def wf(context):
        return context.run("work", lambda: gauge.hold(context.body["n"], gate))

    with pooled(tmp_path, 4) as sb, httpx.Client(timeout=30) as http:
        runner = sb.area("queue").runner
        runner.register(URL, wf)
        ids = [trigger(sb, http, {"n": n}) for n in range(200)]
        gauge.wait_for(4)
        waiting = [s for s in states(runner).values() if s == "RUN_STARTED"]
        assert len(waiting) == 200 and gauge.now == 4  # 4 running, 196 waiting, all RUN_STARTED
        gate.set()
        for run_id in ids:
            assert runner.wait(runner.handle(run_id, _created(runner, run_id)), timeout=WAIT) == "RUN_SUCCESS"
    assert gauge.peak == 4
    assert sorted(gauge.started) == list(range(200))


def _created(runner: WorkflowRunner, run_id: str) -> int:
    return runner.store.query("SELECT created_at FROM runs WHERE run_id = ?", (run_id,))[0]["created_at"]


@pytest.mark.timeout(120)
def test_waiting_runs_start_and_a_canceled_one_never_starts(tmp_path):
    gauge, gate, entered = Gauge(), threading.Event(), set()

    def wf(context):
        entered.add(context.body["n"])  # workflow code outside any step runs too when a delivery comes
        context.run("work", lambda: gauge.hold(context.body["n"], gate))

    with pooled(tmp_path, 1) as sb, httpx.Client(timeout=30) as http:
        runner = sb.area("queue").runner
        runner.register(URL, wf)
        ids = [trigger(sb, http, {"n": n}) for n in range(6)]
        gauge.wait_for(1)
        first = gauge.started[0]  # which run the one worker takes first is not promised
        waiting = 2 if first != 2 else 3
        r = http.delete(f"{sb.url}/queue/v2/workflows/runs/{ids[waiting]}",
                        headers={"Authorization": f"Bearer {sb.env['SVC_QUEUE_TOKEN']}"})
        assert r.status_code == 200 and r.json() == "OK"
        # canceled while waiting: finished at once, though the only worker is still busy (a wait
        # that lasted until the gate opens would hang this test: the gate opens only after it)
        assert runner.wait(runner.handle(ids[waiting], _created(runner, ids[waiting])), timeout=600) == "RUN_CANCELED"
        assert gauge.started == [first]
        gate.set()
        for run_id in ids:
            runner.wait(runner.handle(run_id, _created(runner, run_id)), timeout=WAIT)
        assert sorted(gauge.started) == sorted(entered) == [n for n in range(6) if n != waiting]
        assert [states(runner)[i] for i in ids] == [
            "RUN_CANCELED" if n == waiting else "RUN_SUCCESS" for n in range(6)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_branches_finish_when_every_worker_is_busy(tmp_path, workers):
    """Every worker holds a run whose parallel group waits for its branches: the branches run on the
    runs' own threads instead of waiting for a worker that will never be free."""
    def wf(context):
        return context.parallel({f"branch-{i}": (lambda i=i: i * context.body["n"]) for i in range(4)})

    with pooled(tmp_path, workers) as sb, httpx.Client(timeout=30) as http:
        runner = sb.area("queue").runner
        runner.register(URL, wf)
        ids = [trigger(sb, http, {"n": n}) for n in range(2 * workers)]
        for run_id in ids:
            assert runner.wait(runner.handle(run_id, _created(runner, run_id)), timeout=WAIT) == "RUN_SUCCESS"


@pytest.mark.timeout(120)
def test_parallel_branches_run_side_by_side_when_workers_are_free(tmp_path):
    barrier = threading.Barrier(3, timeout=WAIT)  # passes only if all three branches run at once

    def wf(context):
        return context.parallel({name: barrier.wait for name in ("a", "b", "c")})

    with pooled(tmp_path, 4) as sb, httpx.Client(timeout=30) as http:
        runner = sb.area("queue").runner
        runner.register(URL, wf)
        run_id = trigger(sb, http, {})
        assert runner.wait(runner.handle(run_id, _created(runner, run_id)), timeout=WAIT) == "RUN_SUCCESS"


@pytest.mark.timeout(120)
def test_a_sandbox_stopped_with_runs_waiting_delivers_them_after_its_restart(tmp_path):
    stuck = threading.Event()  # not set while the first sandbox runs: its one worker stays busy
    started: list[int] = []

    def wf(context):
        return context.run("stuck", lambda: started.append(context.body["n"]) or stuck.wait(WAIT) and "done")

    try:
        with pooled(tmp_path, 1) as sb, httpx.Client(timeout=30) as http:
            sb.area("queue").runner.register(URL, wf)
            ids = [trigger(sb, http, {"n": n}) for n in range(5)]
            eventually(lambda: started, "one run's step started", WAIT)
        # stopped while one run blocks and the other four wait: none of them started. Which run the
        # one worker takes first is not promised (deliveries of separate publishes are unordered).
        assert len(started) == 1
        stuck.set()
        with pooled(tmp_path, 1) as again:
            runner = again.area("queue").runner
            runner.register(URL, wf)  # as the demo does on every start
            for run_id in ids:
                assert runner.wait(runner.handle(run_id, _created(runner, run_id)), timeout=WAIT) == "RUN_SUCCESS"
        assert sorted(set(started)) == [0, 1, 2, 3, 4]  # the first run's step again: it never reported
    finally:
        stuck.set()
