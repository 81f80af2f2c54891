"""The workflows of the JavaScript suite (tests/compat/js), registered on a sandbox's runner under URLs
of their own. :func:`seed_queue` makes failed and succeeded runs for qstash.test.mjs to read;
:func:`register_workflows` registers those that workflow.test.mjs starts and acts on itself:

- ``flaky``: the first run of each run id fails in its ``charge`` step (after ``reserve`` succeeded),
  into the DLQ; a resumed or restarted run (same run id) succeeds. So a bulk resume empties the DLQ.
- ``slow``: waits in a ``SleepFor`` step for a minute, long enough to be canceled.
- ``callback``: always fails, and has a failure function that fails on its first call for a run and
  succeeds on the next (``dlq.retryFailureFunction``).
"""

from __future__ import annotations

import threading
from typing import Any

from svckit.sandbox import Sandbox
from svckit.sandbox.workflow.local import WorkflowFailure

FLAKY_URL = "https://compat.example/workflows/flaky"
SLOW_URL = "https://compat.example/workflows/slow"
CALLBACK_URL = "https://compat.example/workflows/callback"


class _Seen:
    """Run ids seen once already (a workflow's first attempt of a run id behaves differently)."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def first(self, run_id: str) -> bool:
        with self._lock:
            new = run_id not in self._ids
            self._ids.add(run_id)
            return new


def register_workflows(runner: Any) -> dict[str, str]:
    """Register the three workflows; their URLs as the ``COMPAT_*`` variables the JS tests read."""
    callback_calls = _Seen()

    first_runs: dict[str, int | None] = {}

    def flaky(context: Any) -> Any:
        context.run("reserve", lambda: {"reserved": context.body})
        # the first run of this id (replayed at each delivery: decided by the run's creation, not a count)
        first = first_runs.setdefault(context.workflow_run_id, context.workflow_run_created_at) == \
            context.workflow_run_created_at

        def charge() -> dict[str, Any]:
            if first:
                raise RuntimeError("card declined: 402")
            return {"charged": True}

        return context.run("charge", charge)

    def slow(context: Any) -> None:
        context.sleep("wait-for-payment", 60)

    def always_fails(context: Any) -> None:
        context.run("export", lambda: 1 / 0)

    def on_failure(failure: WorkflowFailure) -> dict[str, Any]:
        if callback_calls.first(failure.run_id):
            raise ConnectionError("the alerting endpoint is down")
        return {"alerted": failure.run_id, "because": failure.response}

    runner.register(FLAKY_URL, flaky)
    runner.register(SLOW_URL, slow)
    runner.register(CALLBACK_URL, always_fails, failure_function=on_failure)
    return {"COMPAT_FLAKY_URL": FLAKY_URL, "COMPAT_SLOW_URL": SLOW_URL, "COMPAT_CALLBACK_URL": CALLBACK_URL}


#: a workflow whose second step always fails (its runs end RUN_FAILED, in the DLQ), and one that succeeds
FAIL_URL = "https://compat.example/fail"
OK_URL = "https://compat.example/ok"


class PaymentDeclined(RuntimeError):
    """What the failing workflow's ``charge`` step raises (the DLQ entry's response body names it)."""


def _failing_workflow(context: Any) -> None:
    context.run("reserve", lambda: {"reserved": context.body})

    def charge() -> None:
        raise PaymentDeclined("card declined: 402")

    context.run("charge", charge)


def _succeeding_workflow(context: Any) -> Any:
    return context.run("ship", lambda: {"shipped": context.body})


def seed_queue(sandbox: Sandbox, tag: str = "js", *, failing: int = 3, succeeding: int = 2) -> dict[str, str]:
    """Register the two workflows on the queue area's runner and make runs of them, labelled with
    ``tag`` (``<tag>-fail``, ``<tag>-ok``): ``failing`` runs that end in the DLQ (each step is tried
    twice: ``retries=1``) and ``succeeding`` ones. Returns once every run ended, as ``COMPAT_*``
    variables for the JS tests (URLs, labels, run ids, comma-separated)."""
    queue: Any = sandbox.area("queue")
    runner = queue.runner
    runner.register(FAIL_URL, _failing_workflow)
    runner.register(OK_URL, _succeeding_workflow)
    fail_label, ok_label = f"{tag}-fail", f"{tag}-ok"
    failed = [runner.trigger(FAIL_URL, {"order": i}, label=fail_label, retries=1) for i in range(failing)]
    succeeded = [runner.trigger(OK_URL, {"order": i}, label=ok_label) for i in range(succeeding)]
    for handles, state in ((failed, "RUN_FAILED"), (succeeded, "RUN_SUCCESS")):
        ended = [runner.wait(handle) for handle in handles]
        assert ended == [state] * len(handles), f"seed_queue: runs ended {ended}, not {state}"
    in_dlq = queue.store.query(
        "SELECT COUNT(*) AS n FROM dlq d JOIN runs r ON r.seq = d.run_seq WHERE r.label = ?", (fail_label,))
    assert in_dlq[0]["n"] == failing, f"seed_queue: {in_dlq[0]['n']} of {failing} failed runs in the DLQ"
    return {
        "COMPAT_FAIL_URL": FAIL_URL,
        "COMPAT_OK_URL": OK_URL,
        "COMPAT_FAIL_LABEL": fail_label,
        "COMPAT_OK_LABEL": ok_label,
        "COMPAT_FAIL_RUN_IDS": ",".join(h.workflow_run_id for h in failed),
        "COMPAT_OK_RUN_IDS": ",".join(h.workflow_run_id for h in succeeded),
    }
