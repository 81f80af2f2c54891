"""Failure functions: what a workflow runs when one of its runs fails for good (the hosted service's
``failureFunction`` / ``failureUrl``), and retrying a failed one from the DLQ.

A workflow registered with one (``runner.register(url, fn, failure_function=on_failure)``) has it
called once when a run's retries are exhausted, on the worker that ran the run, right after the run
went to the DLQ. It is given a :class:`WorkflowFailure`; what it returns is recorded as the
callback's response body (``CALLBACK_SUCCESS``, status 200), an exception as a failed callback
(``CALLBACK_FAIL``, status 500, the error as the body). The runs log shows the call as the run's
``failureFunction``, the DLQ entry as ``failureCallback`` and ``failureCallbackInfo``.

:meth:`FailureCallbacks.retry_failure_function` (the workflow SDK's ``dlq.retryFailureFunction``)
calls it again for a DLQ entry whose callback failed; the entry stays in the DLQ. A callback is
called once per failure or retry: it has no retries of its own. Runs that a sandbox start found
interrupted (:meth:`WorkflowRunner.recover`) go to the DLQ without one.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from svckit.sandbox.steps import RunAborted, _error_text, _json_or_none, _message_id
from svckit.sandbox.store import Store, StoreClosed, now_ms

if TYPE_CHECKING:
    from svckit.sandbox.pool import WorkerPool
    from svckit.sandbox.runner import RunHandle

log = logging.getLogger(__name__)

CALLBACK_INPROGRESS, CALLBACK_SUCCESS, CALLBACK_FAIL = "CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL"
#: the status a failed run's last delivery is recorded with (a step raised: the endpoint answered 500)
FAIL_STATUS = 500
INTERRUPTED = "interrupted: the sandbox stopped while the failure function ran"


@dataclass(frozen=True)
class WorkflowFailure:
    """What a failure function is given: the run that failed and why."""

    run_id: str
    url: str
    body: Any
    label: str | None
    dlq_id: str | None
    status: int
    response: str


FailureFunction = Callable[[WorkflowFailure], Any]


class CallbackError(RuntimeError):
    """The DLQ entry's failure callback cannot be retried (none, or it has not failed)."""


class FailureCallbacks:
    """The part of :class:`~svckit.sandbox.runner.WorkflowRunner` that calls failure functions."""

    store: Store
    _pool: WorkerPool
    _failure_functions: dict[str, FailureFunction]
    _write: Callable[[str, Callable[[Any], Any]], Any]  # StepEngine's: a write that waits for the disk

    def _failed(self, seq: int, url: str, reason: str) -> None:
        """A run just failed for good: call its workflow's failure function, if it has one."""
        if url not in self._failure_functions:
            return
        self._write(f"the failure callback of {url}", lambda db: db.execute(
            "INSERT OR REPLACE INTO failure_callbacks (run_seq, message_id, state, fail_status, fail_response, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (seq, _message_id(), CALLBACK_INPROGRESS, FAIL_STATUS, reason, now_ms())))
        self._call_failure_function(seq)

    @staticmethod
    def _fail_interrupted_callbacks(db: Any) -> None:
        """At start (inside ``db``'s transaction): a call a stop interrupted has failed, and so can be
        retried from the DLQ."""
        db.execute("UPDATE failure_callbacks SET state = ?, response_status = ?, response_body = ? WHERE state = ?",
                   (CALLBACK_FAIL, FAIL_STATUS, json.dumps({"error": INTERRUPTED}), CALLBACK_INPROGRESS))

    def retry_failure_function(self, dlq_id: str) -> RunHandle:
        """Call the failure function of DLQ entry ``dlq_id``'s run again, on the worker pool; returns
        the run's handle. NotFoundError for an unknown entry; CallbackError when the run has no failure
        callback or its callback has not failed."""
        from svckit.sandbox.runner import NotFoundError, RunHandle, UnknownWorkflow

        rows = self.store.query(
            "SELECT r.seq, r.run_id, r.created_at, r.url, f.state FROM dlq d JOIN runs r ON r.seq = d.run_seq "
            "LEFT JOIN failure_callbacks f ON f.run_seq = r.seq WHERE d.dlq_id = ?", (dlq_id,))
        if not rows:
            raise NotFoundError(f"no DLQ entry {dlq_id!r}")
        run = rows[0]
        if run["state"] is None:
            raise CallbackError(f"the run of DLQ entry {dlq_id!r} has no failure callback to retry: its workflow "
                                "was registered without a failure function")
        if run["url"] not in self._failure_functions:
            raise UnknownWorkflow(f"the failure function of {run['url']!r} is not registered in this sandbox "
                                  "process; register it with runner.register(url, fn, failure_function=...)")
        with self.store.transaction() as db:
            retried = db.execute("UPDATE failure_callbacks SET state = ?, message_id = ?, updated_at = ? "
                                 "WHERE run_seq = ? AND state = ?",
                                 (CALLBACK_INPROGRESS, _message_id(), now_ms(), run["seq"], CALLBACK_FAIL))
            if retried.rowcount != 1:
                raise CallbackError(f"the failure callback of DLQ entry {dlq_id!r} is {run['state']}: only a "
                                    f"failed callback ({CALLBACK_FAIL}) is retried")
        self._pool.submit(functools.partial(self._call_failure_function, run["seq"]))
        return RunHandle(run["run_id"], run["created_at"], run["seq"])

    def _call_failure_function(self, seq: int) -> None:
        try:
            [row] = self.store.query(
                "SELECT r.run_id, r.url, r.body, r.label, r.dlq_id, f.fail_status, f.fail_response "
                "FROM runs r JOIN failure_callbacks f ON f.run_seq = r.seq WHERE r.seq = ?", (seq,))
            failure = WorkflowFailure(run_id=row["run_id"], url=row["url"], body=_json_or_none(row["body"]),
                                      label=row["label"], dlq_id=row["dlq_id"], status=row["fail_status"],
                                      response=row["fail_response"])
            try:
                out = self._failure_functions[row["url"]](failure)
                state, status, body = CALLBACK_SUCCESS, 200, json.dumps(out, default=str)
            except Exception as exc:  # noqa: BLE001 - a failing callback is recorded, like a failing step
                state, status, body = CALLBACK_FAIL, FAIL_STATUS, json.dumps({"error": _error_text(exc)})
                log.warning("the failure function of workflow run %s failed: %s", row["run_id"], _error_text(exc))
            self._write(f"the failure callback of workflow run {row['run_id']}", lambda db: db.execute(
                "UPDATE failure_callbacks SET state = ?, response_status = ?, response_body = ?, updated_at = ? "
                "WHERE run_seq = ?", (state, status, body, now_ms(), seq)))
        except (StoreClosed, RunAborted):
            pass  # the sandbox stopped: the callback stays in progress, as an interrupted step does
