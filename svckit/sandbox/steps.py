"""Inside a workflow run: the ``context`` a workflow function receives, and how its steps are executed
and recorded. The runner that makes, resumes, restarts, cancels and recovers runs, and the full account
of what a run records, is :mod:`svckit.sandbox.runner`.

- :class:`WorkflowContext`: ``context.run``, ``context.sleep`` and ``context.parallel`` (its branches on
  the runner's worker pool); in a resumed run a step that already succeeded is copied, not run again.
- :class:`StepEngine`: executing one step with its retries, and writing its rows to SQLite (a step when
  it starts and again when it finishes, each delivery's event), and the succeeded steps a resumed run
  replays and copies. :class:`~svckit.sandbox.runner.WorkflowRunner` is a StepEngine.
- :class:`RunAborted` unwinds a canceled or stopped run; :class:`StepFailed` fails it.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from svckit.errors import DiskError
from svckit.queue.models import EventState, RunState, StepState
from svckit.sandbox.pool import Task
from svckit.sandbox.store import Store, now_ms

if TYPE_CHECKING:
    from svckit.sandbox.runner import WorkflowRunner

log = logging.getLogger(__name__)
T = TypeVar("T")

#: seconds before a worker tries again a write the disk refused, doubling up to the second
DISK_RETRY_DELAY, DISK_RETRY_MAX = 0.05, 1.0

#: the event each final state of a delivery (a step attempt) writes to the events log, and the
#: HTTP status the workflow endpoint answered with (None: no answer, the delivery was cut short).
_EVENT_OF_STEP: dict[str, tuple[EventState, int | None]] = {
    StepState.STEP_SUCCESS.value: (EventState.DELIVERED, 200),
    StepState.STEP_RETRY.value: (EventState.ERROR, 500),
    StepState.STEP_FAILED.value: (EventState.FAILED, 500),
    StepState.STEP_CANCELED.value: (EventState.CANCELED, None),
}


class StepFailed(Exception):
    """A step failed after all its retries; fails the run."""

    def __init__(self, name: str, error: str) -> None:
        self.name, self.error = name, error
        super().__init__(f"step {name!r} failed after all retries: {error}")


class RunAborted(BaseException):
    """Unwinds a workflow that was canceled or whose sandbox stopped. A BaseException so that a
    workflow's own ``except Exception`` cannot swallow it."""


def _json_or_none(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


class WorkflowContext:
    """The ``context`` a workflow function receives."""

    def __init__(self, runner: WorkflowRunner, run: _ActiveRun) -> None:
        self._runner = runner
        self._run = run
        self._next_step_id = 1
        self._next_group = 1
        self._seen: Counter[str] = Counter()
        self.workflow_run_id = run.run_id
        self.url = run.url
        self.body = run.body
        self.label = run.label
        self.retries = run.retries
        self.flow_control_key = run.flow_control_key
        self.flow_control_value = run.flow_control_value

    # -- public step API ---------------------------------------------------------------------
    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` as step ``name`` (retried on failure); returns its JSON-serialisable result.
        In a resumed run a step that already succeeded is not run again: its stored output is returned."""
        group = self._new_group()
        return self._step(name, fn, group, "sequential", self._take_step_id(), 1, "Run")

    def sleep(self, name: str, seconds: float) -> None:
        """A ``SleepFor`` step: wait ``seconds`` (cut short by cancel)."""
        group = self._new_group()

        def wait() -> None:
            if self._run.abort.wait(seconds):
                raise RunAborted

        self._step(name, wait, group, "sequential", self._take_step_id(), 1, "SleepFor")

    def parallel(self, steps: Mapping[str, Callable[[], Any]] | None = None, /,
                 **named: Callable[[], Any]) -> dict[str, Any]:
        """Run several steps side by side, one parallel group: ``context.parallel({"charge": f, "mail":
        g})`` or ``context.parallel(charge=f, mail=g)``. Returns ``{name: result}`` in the given order;
        if any branch fails (after its retries) the run fails once all branches have finished."""
        branches = {**(steps or {}), **named}
        if not branches:
            raise ValueError("parallel: give at least one step")
        self._run.check()
        group = self._new_group()
        ids = {name: self._take_step_id() for name in branches}
        results: dict[str, Any] = {}
        errors: dict[str, BaseException] = {}

        def branch(name: str, fn: Callable[[], Any]) -> None:
            try:
                results[name] = self._step(name, fn, group, "parallel", ids[name], len(branches), "Run")
            except BaseException as exc:  # noqa: BLE001 - re-raised on the workflow thread below
                errors[name] = exc

        # This thread runs the first branch; the others go to the pool, ahead of waiting runs, and
        # join() runs any that no worker has taken yet here (see svckit/sandbox/pool.py).
        (first, *rest) = branches.items()
        tasks = [self._runner._pool.submit(functools.partial(branch, *item), urgent=True) for item in rest]
        branch(*first)
        for task in tasks:
            task.join()
        for exc in errors.values():
            if isinstance(exc, RunAborted):
                raise exc
        for exc in errors.values():
            raise exc
        return {name: results[name] for name in branches}

    # -- internals ---------------------------------------------------------------------------
    def _new_group(self) -> int:
        group, self._next_group = self._next_group, self._next_group + 1
        return group

    def _take_step_id(self) -> int:
        step_id, self._next_step_id = self._next_step_id, self._next_step_id + 1
        return step_id

    def _step(self, name: str, fn: Callable[[], Any], group: int, group_type: str, step_id: int,
              concurrent: int, step_type: str) -> Any:
        self._run.check()
        with self._runner._lock:  # parallel branches count occurrences too
            self._seen[name] += 1
            occurrence = self._seen[name]
        kept = self._run.replay.get((name, occurrence))
        if kept is not None:
            self._runner._copy_step(self._run, kept, group, group_type)
            return _json_or_none(kept["out"])
        return self._runner._execute_step(self._run, name, fn, group, group_type, step_id, concurrent,
                                          step_type)


class _ActiveRun:
    """In-memory state of a run executing in this process."""

    def __init__(self, row: Mapping[str, Any], replay: dict[tuple[str, int], dict[str, Any]]) -> None:
        self.seq: int = row["seq"]
        self.run_id: str = row["run_id"]
        self.url: str = row["url"]
        self.created_at: int = row["created_at"]
        self.body = _json_or_none(row["body"])
        self.label: str | None = row["label"]
        self.retries: int = row["retries"]
        self.flow_control_key: str | None = row["flow_control_key"]
        self.flow_control_value: str | None = row["flow_control_value"]
        self.replay = replay
        self.abort = threading.Event()  # set on cancel and on sandbox stop
        self.done = threading.Event()
        self.task: Task | None = None  # its turn on the worker pool

    def check(self) -> None:
        if self.abort.is_set():
            raise RunAborted


class StepEngine:
    """The part of :class:`~svckit.sandbox.runner.WorkflowRunner` that executes a run's steps and
    records them (and their events) in the runner's ``store``, retrying after ``retry_delay``."""

    store: Store
    retry_delay: float
    _closing: threading.Event  # set when the runner closes

    def _write(self, what: str, body: Callable[[sqlite3.Connection], T]) -> T:
        """``body(db)`` in a store transaction, tried again while the disk refuses it (DiskError: full,
        read-only). So a run waits at a write the disk refused, with nothing of it half-written (each
        try is undone), and carries on once the disk takes writes again, without a restart; its thread
        is never lost to the error. RunAborted when the runner closes first: the run stays in
        progress, and the next start recovers it, as after a crash."""
        attempt = 0
        while True:
            try:
                with self.store.transaction() as db:
                    return body(db)
            except DiskError as exc:
                if attempt == 0:
                    log.warning("%s waits until the disk takes writes again: %s", what, exc)
            if self._closing.wait(min(DISK_RETRY_DELAY * 2**attempt, DISK_RETRY_MAX)):
                raise RunAborted
            attempt += 1

    def _execute_step(self, active: _ActiveRun, name: str, fn: Callable[[], Any], group: int, group_type: str,
                      step_id: int, concurrent: int, step_type: str) -> Any:
        message_id = _message_id()
        attempt = 0
        while True:
            active.check()
            row = self._insert_step(active, group, group_type, step_id, name, step_type, message_id, concurrent)
            try:
                value = fn()
                out = None if value is None and step_type != "Run" else json.dumps(value)
            except RunAborted:
                raise
            except Exception as exc:  # noqa: BLE001 - the step's failure is the workflow's data
                text = _error_text(exc)
                error = json.dumps({"error": text, "attempt": attempt + 1})
                if attempt < active.retries:
                    attempt += 1
                    delay = self.retry_delay * attempt
                    self._update_step(active, row, StepState.STEP_RETRY, error, error=text, retry_in=delay)
                    if active.abort.wait(delay):
                        raise RunAborted from None
                    continue
                self._update_step(active, row, StepState.STEP_FAILED, error, error=text)
                raise StepFailed(name, text) from None
            self._update_step(active, row, StepState.STEP_SUCCESS, out)
            return value

    def _insert_step(self, active: _ActiveRun, group: int, group_type: str, step_id: int, name: str,
                     step_type: str, message_id: str, concurrent: int) -> int:
        def insert(db: sqlite3.Connection) -> int:
            # Checked in the same transaction as the insert: a cancel that committed just before must
            # not be followed by a new step in progress.
            state = db.execute("SELECT state FROM runs WHERE seq = ?", (active.seq,)).fetchone()["state"]
            if state != RunState.RUN_STARTED.value:
                raise RunAborted
            row_id = db.execute(
                "INSERT INTO steps (run_seq, group_no, group_type, step_id, step_name, step_type, call_type, "
                "message_id, out, concurrent, state, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 'step', ?, NULL, ?, ?, ?)",
                (active.seq, group, group_type, step_id, name, step_type, message_id, concurrent,
                 StepState.STEP_PROGRESS.value, now_ms()),
            ).lastrowid
            assert row_id is not None
            return row_id

        return self._write(f"workflow run {active.run_id}: step {name!r}", insert)

    def _update_step(self, active: _ActiveRun, step_seq: int, state: StepState, out: str | None, *,
                     error: str | None = None, retry_in: float | None = None) -> None:
        # Only a step still in progress changes: a cancel may have marked it STEP_CANCELED meanwhile.
        # The next delivery is counted from the event's own time, so it is never before it.
        now = now_ms()
        next_delivery_time = None if retry_in is None else now + int(retry_in * 1000)
        self._write(f"workflow run {active.run_id}: a step's outcome", lambda db: self._finish_steps(
            db, "seq = ? AND state = ?", (step_seq, StepState.STEP_PROGRESS.value), state, out, now, error=error,
            next_delivery_time=next_delivery_time))

    @classmethod
    def _finish_steps(cls, db: Any, where: str, args: tuple[Any, ...], state: StepState, out: str | None,
                      now: int, *, error: str | None = None, next_delivery_time: int | None = None) -> None:
        """Give the steps matching ``where`` their final ``state`` (``out`` too, unless None for a
        canceled step) and write each one's delivery to the events log."""
        seqs = [r["seq"] for r in db.execute(f"SELECT seq FROM steps WHERE {where}", args).fetchall()]
        for seq in seqs:
            if out is None and state is StepState.STEP_CANCELED:
                db.execute("UPDATE steps SET state = ? WHERE seq = ?", (state.value, seq))
            else:
                db.execute("UPDATE steps SET state = ?, out = ? WHERE seq = ?", (state.value, out, seq))
            cls._record_events(db, "seq = ?", (seq,), state, now, error=error,
                               next_delivery_time=next_delivery_time)

    @staticmethod
    def _record_events(db: Any, where: str, args: tuple[Any, ...], state: StepState, now: int, *,
                       error: str | None = None, next_delivery_time: int | None = None) -> None:
        event, status = _EVENT_OF_STEP[state.value]
        db.execute("INSERT INTO events (run_seq, time, message_id, state, step_name, error, response_status, "
                   f"next_delivery_time) SELECT run_seq, ?, message_id, ?, step_name, ?, ?, ? FROM steps WHERE {where}",
                   (now, event.value, error, status, next_delivery_time, *args))

    def _succeeded_steps(self, run_seq: int) -> dict[tuple[str, int], dict[str, Any]]:
        """The steps of a run that succeeded, by (name, occurrence): what a resumed run replays."""
        replay: dict[tuple[str, int], dict[str, Any]] = {}
        seen: Counter[str] = Counter()
        for step in self.store.query(
            "SELECT * FROM steps WHERE run_seq = ? AND step_id IS NOT NULL ORDER BY group_no, step_id, seq",
            (run_seq,),
        ):
            if step["state"] == StepState.STEP_SUCCESS.value:
                seen[step["step_name"]] += 1
                replay[(step["step_name"], seen[step["step_name"]])] = dict(step)
        return replay

    def _copy_step(self, active: _ActiveRun, kept: Mapping[str, Any], group: int, group_type: str) -> None:
        self._write(f"workflow run {active.run_id}: step {kept['step_name']!r}", lambda db: db.execute(
            "INSERT INTO steps (run_seq, group_no, group_type, step_id, step_name, step_type, call_type, "
            "message_id, out, concurrent, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (active.seq, group, group_type, kept["step_id"], kept["step_name"], kept["step_type"],
             kept["call_type"], kept["message_id"], kept["out"], kept["concurrent"], kept["state"],
             kept["created_at"])))
