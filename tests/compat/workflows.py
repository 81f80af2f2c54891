"""The workflows the JavaScript workflow SDK's tests (tests/compat/js/workflow.test.mjs) act on,
registered on a sandbox's runner under URLs of their own:

- ``flaky``: the first run of each run id fails in its ``charge`` step (after ``reserve`` succeeded),
  into the DLQ; a resumed or restarted run (same run id) succeeds. So a bulk resume empties the DLQ.
- ``slow``: waits in a ``SleepFor`` step for a minute, long enough to be canceled.
- ``callback``: always fails, and has a failure function that fails on its first call for a run and
  succeeds on the next (``dlq.retryFailureFunction``).
"""

from __future__ import annotations

import threading
from typing import Any

from svckit.sandbox.failure import WorkflowFailure

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
    flaky_runs, callback_calls = _Seen(), _Seen()

    def flaky(context: Any) -> Any:
        context.run("reserve", lambda: {"reserved": context.body})
        first = flaky_runs.first(context.workflow_run_id)

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
