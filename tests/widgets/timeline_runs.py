"""Workflows the timeline's sandbox tests register, and the runs they make of them.

Every run is served by the sandbox's own runner (in this process) and is waited for with the runner's
bounded waits, never a fixed sleep:

- ``steps``: an Initial step, ``fetch`` that fails on its first attempt and then returns
  ``{"rows": 42}``, three parallel shards, and ``report``, which fails when the body says ``fail``;
- ``flaky``: ``prepare``, then ``flaky``, which fails on its first three attempts (counted per body
  ``token`` across runs, so a resume continues the count); with ``retries=0`` a run fails on the first
  attempt, a resume with ``retries=3`` succeeds on its fourth, one without the override fails again;
- ``block``: one step, shown in progress, that waits until the test releases it (a run in progress).
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from svckit.queue.models import ResumeResult, WorkflowRun
from svckit.sandbox.workflow.runner import RunHandle, WorkflowRunner

BASE = "https://timeline.test/api/workflows"
STEPS_URL = f"{BASE}/steps"
FLAKY_URL = f"{BASE}/flaky"
BLOCK_URL = f"{BASE}/block"
#: how long a bounded wait for a run may take before the test fails (not a timing threshold: a run
#: that never ends is a failure; one that ends is seen at once)
DEADLINE = 30.0


class Workflows:
    """The three workflows above, with what their steps did, per body token."""

    def __init__(self, runner: WorkflowRunner) -> None:
        self.runner = runner
        self.fetches: Counter[str] = Counter()
        self.flaky_attempts: Counter[str] = Counter()
        self.prepared: Counter[str] = Counter()
        self.releases: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        runner.register(STEPS_URL, self.steps)
        runner.register(FLAKY_URL, self.flaky)
        runner.register(BLOCK_URL, self.block)

    def _count(self, counter: Counter[str], token: str) -> int:
        with self._lock:
            counter[token] += 1
            return counter[token]

    def steps(self, context: Any) -> Any:
        body = context.body

        def fetch() -> dict[str, int]:
            if self._count(self.fetches, body["token"]) == 1:
                raise ConnectionError("upstream 503 (first attempt)")
            return {"rows": 42}

        def report() -> dict[str, bool]:
            if body.get("fail"):
                raise RuntimeError("report: the ledger refused the upload")
            return {"ok": True}

        context.run("fetch", fetch)
        context.parallel({f"shard-{k}": (lambda k=k: f"shard {k} ok") for k in range(3)})
        return context.run("report", report)

    def flaky(self, context: Any) -> Any:
        token = context.body["token"]

        def prepare() -> dict[str, bool]:
            self._count(self.prepared, token)
            return {"ready": True}

        def flaky() -> dict[str, int]:
            n = self._count(self.flaky_attempts, token)
            if n <= 3:
                raise ConnectionError(f"gateway 503 (attempt {n})")
            return {"attempt": n}

        context.run("prepare", prepare)
        return context.run("flaky", flaky)

    def block(self, context: Any) -> Any:
        release = self.releases[context.body["token"]]
        # a parallel branch: announced (its plan) before it runs, so the log shows it in progress, as the
        # QStash sees it; a plain context.run is known only by its result
        return context.parallel({"wait": lambda: release.wait(DEADLINE)})

    # -- making runs ----------------------------------------------------------------------------------
    def finish(self, handle: RunHandle) -> str:
        """Wait (bounded) until the run ended; its state."""
        state = self.runner.wait(handle, timeout=DEADLINE)
        assert state != "RUN_STARTED", f"run {handle.workflow_run_id} did not end within {DEADLINE:.0f} s"
        return state

    def finish_result(self, result: ResumeResult) -> str:
        """:meth:`finish` for a run the service started over HTTP (a resume, a restart)."""
        return self.finish(self.runner.handle(result.workflow_run_id, result.workflow_created_at))

    def failed_run(self, **options: Any) -> tuple[str, RunHandle]:
        """A ``flaky`` run with no retries, ended RUN_FAILED (in the DLQ): its token and handle."""
        token = uuid.uuid4().hex[:10]
        handle = self.runner.trigger(FLAKY_URL, {"token": token}, run_id=f"wfr_{token}", retries=0, **options)
        assert self.finish(handle) == "RUN_FAILED"
        return token, handle

    def steps_run(self, *, fail: bool = False, url: str = STEPS_URL, **options: Any) -> RunHandle:
        token = uuid.uuid4().hex[:10]
        return self.runner.trigger(url, {"token": token, "fail": fail}, retries=1, **options)

    @contextmanager
    def blocked_run(self, **options: Any) -> Iterator[RunHandle]:
        """A ``block`` run whose step is in progress, released (and ended) when the block exits;
        ``options`` as the runner's trigger takes them (a label)."""
        token = uuid.uuid4().hex[:10]
        self.releases[token] = threading.Event()
        handle = self.runner.trigger(BLOCK_URL, {"token": token}, run_id=f"wfr_block_{token}", **options)
        try:
            assert self.runner.wait_for_step(handle, "wait", timeout=DEADLINE)
            yield handle
        finally:
            self.releases[token].set()
            self.runner.wait(handle, timeout=DEADLINE)


def key(run: RunHandle | ResumeResult | WorkflowRun) -> str:
    """The timeline's key of a run: ``id@createdAtMs``."""
    created = run.workflow_run_created_at if isinstance(run, WorkflowRun) else run.workflow_created_at
    return f"{run.workflow_run_id}@{created}"


def run_of(queue: Any, handle: RunHandle | ResumeResult) -> WorkflowRun:
    """The run as the service lists it now (by id and creation time: the ``workflow_created_at`` filter)."""
    (run,) = queue.workflow_logs(workflow_run_id=handle.workflow_run_id,
                                 workflow_created_at=handle.workflow_created_at).runs
    return run
