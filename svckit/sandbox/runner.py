"""The sandbox's local workflow runner: runs Python workflow functions and records what they did.

Here: :class:`WorkflowRunner`, the workflows by URL and the runs it makes (trigger, resume, restart),
cancels, waits for and recovers, with their DLQ entries. Inside a run (the ``context`` a workflow gets,
each step executed, retried and recorded with its events): :mod:`svckit.sandbox.steps`.

A workflow is a function of one argument, registered under the URL the service would call::

    def order_workflow(context):
        order = context.body                                   # the trigger payload (JSON)
        stock = context.run("reserve-stock", lambda: reserve(order))
        paid = context.parallel({"charge-card": charge, "send-receipt": receipt})
        context.sleep("cool-down", 0.2)
        return context.run("ship", lambda: ship(order, stock))

    runner.register("https://shop.example/api/workflows/order", order_workflow)
    handle = runner.trigger("https://shop.example/api/workflows/order", body={"id": 42})

What is recorded (and served by ``GET /queue/v2/workflows/logs``):
- an ``Initial`` step first (its ``out`` is the trigger body), in a sequential group of its own;
- one sequential group per ``context.run`` / ``context.sleep`` and one parallel group per
  ``context.parallel``; a step's return value is stored JSON-serialised in ``out``;
- a failing step is retried ``retries`` times (default 3, ``Service-Retries`` overrides); before each
  retry the failed attempt is recorded as ``STEP_RETRY`` (its ``out`` holds the error). When the
  retries are exhausted the step becomes ``STEP_FAILED``, the run ``RUN_FAILED`` and a DLQ entry is
  created;
- resuming a DLQ entry creates a fresh run (same run id unless overridden) that copies the steps that
  succeeded and does not execute them again: ``context.run`` returns the stored output instead;
- restarting a DLQ entry creates a fresh run from the first step (the same body and configuration,
  nothing kept); resume and restart both consume the entry, and so does deleting it;
- cancel marks the run ``RUN_CANCELED`` at once and the step in flight ``STEP_CANCELED``; the worker
  stops at the next step boundary (a running step function cannot be interrupted, its result is dropped);
- every delivery (the Initial call and each attempt of each step) writes one row to the events log
  (``GET /v2/events``): DELIVERED, ERROR (a retry follows), FAILED or CANCELED. Steps a resumed run
  copies are not delivered again and write no event.

A workflow may have a failure function, called once when one of its runs fails for good; a failed
call can be retried from the DLQ (:mod:`svckit.sandbox.failure`).

Runs execute on a bounded pool of daemon worker threads (:mod:`svckit.sandbox.pool`, ``workers``
of them, default 16), never on the event loop: runs beyond the pool wait, ``RUN_STARTED``, and start
in the order they were made; a waiting run can be canceled (it never starts). The branches of a
parallel group run on the same pool, ahead of waiting runs; a branch no worker has taken runs on its
run's own thread, so a busy pool runs the group one branch after another instead of deadlocking.

Every run's message (its body as compact JSON) must fit the queue account's ``max_message_size``,
read from the live account record when the run is made (a plan upgrade changes it at once):
trigger, resume and restart raise :class:`MessageTooLarge` otherwise.

Each step is written to SQLite when it starts and again when it finishes, so a killed sandbox loses
no finished step. A write the disk refuses (full, read-only) is tried again until it goes through
(:meth:`StepEngine._write`): the run waits there and carries on once space is back, without a
restart. Runs still ``RUN_STARTED`` when a sandbox starts were interrupted by a stop or a crash (or
were still waiting for a worker): :meth:`recover` marks them ``RUN_FAILED`` (the step in
flight ``STEP_FAILED``) and puts them in the DLQ, so they can be resumed from where they stopped.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import logging
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from svckit.queue.models import RunState, StepState
from svckit.sandbox.area import new_token
from svckit.sandbox.failure import FailureCallbacks, FailureFunction
from svckit.sandbox.pool import WorkerPool
from svckit.sandbox.steps import (
    RunAborted,
    StepEngine,
    StepFailed,
    WorkflowContext,
    _ActiveRun,
    _error_text,
    _message_id,
)
from svckit.sandbox.store import Store, StoreClosed, now_ms

log = logging.getLogger(__name__)

Workflow = Callable[["WorkflowContext"], Any]
DEFAULT_RETRIES = 3
#: runs (and parallel branches) that execute at once; ``Sandbox(queue_workers=...)`` changes it
DEFAULT_WORKERS = 16
INTERRUPTED = "interrupted: the sandbox stopped while this step ran"


class UnknownWorkflow(LookupError):
    """No workflow function is registered under this URL in this sandbox process."""


class NotFoundError(LookupError):
    """No such run or DLQ entry."""


class InvalidState(RuntimeError):
    """The run is not in a state that allows the operation (e.g. cancel a finished run)."""


class MessageTooLarge(ValueError):
    """A run's message is larger than the queue account's ``max_message_size``."""

    def __init__(self, limit: int, size: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(f"message too large: {size} bytes (the body as compact JSON), over the queue "
                         f"account's max_message_size of {limit} bytes; send a smaller body, or move to a "
                         "plan with a larger max_message_size (POST /devapi/v2/queue-upgrade)")


def message_size(body_json: str | None) -> int:
    """The size of a run's message: its body (stored JSON text) as compact UTF-8 JSON, in bytes."""
    if body_json is None:
        return 0
    compact = json.dumps(json.loads(body_json), ensure_ascii=False, separators=(",", ":"))
    return len(compact.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class RunHandle:
    """What trigger and resume return: the run's id and creation time (Unix ms) identify it."""

    workflow_run_id: str
    workflow_created_at: int
    seq: int


# -- cursors ----------------------------------------------------------------------------------
def encode_cursor(created_at: int, key: int | str) -> str:
    return base64.urlsafe_b64encode(f"{created_at}:{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """Inverse of :func:`encode_cursor`; ValueError for anything else."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, _, key = raw.partition(":")
        if not key:
            raise ValueError
        return int(created), key
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError("cursor: not a cursor returned by this server") from None


class WorkflowRunner(StepEngine, FailureCallbacks):
    """Registry of workflow functions by URL, and the engine that runs them (module docstring)."""

    def __init__(self, store: Store, *, retry_delay: float = 0.05, workers: int = DEFAULT_WORKERS,
                 message_limit: Callable[[], int] | None = None) -> None:
        """``message_limit`` returns the current largest message in bytes (None: no limit)."""
        self.store = store
        self.retry_delay = retry_delay
        self.message_limit = message_limit
        self._workflows: dict[str, Workflow] = {}
        self._failure_functions: dict[str, FailureFunction] = {}
        self._active: dict[int, _ActiveRun] = {}
        self._lock = threading.RLock()
        self._closing = threading.Event()
        self._pool = WorkerPool(workers, "svckit-run")

    # -- registry ----------------------------------------------------------------------------
    def register(self, url: str, fn: Workflow, *, failure_function: FailureFunction | None = None) -> Workflow:
        """Serve workflow ``fn`` under ``url`` (runs, resumes and the trigger route look it up here).
        ``failure_function`` is called when one of its runs fails for good (:mod:`svckit.sandbox.failure`)."""
        if not url:
            raise ValueError("url: must not be empty")
        self._workflows[url] = fn
        if failure_function is None:
            self._failure_functions.pop(url, None)
        else:
            self._failure_functions[url] = failure_function
        return fn

    def workflow(self, url: str, *, failure_function: FailureFunction | None = None) -> Callable[[Workflow], Workflow]:
        """Decorator form of :meth:`register`."""
        return lambda fn: self.register(url, fn, failure_function=failure_function)

    @property
    def urls(self) -> list[str]:
        return sorted(self._workflows)

    # -- starting runs -----------------------------------------------------------------------
    def trigger(self, url: str, body: Any = None, *, run_id: str | None = None, label: str | None = None,
                retries: int | None = None, flow_control_key: str | None = None,
                flow_control_value: str | None = None, caller_ip: str | None = None) -> RunHandle:
        """Start a run of the workflow registered at ``url`` on the worker pool. ``caller_ip`` is the
        publisher's address the DLQ and its ``callerIp`` filter report (the trigger route passes it).
        MessageTooLarge when the body is over the account's ``max_message_size``."""
        (handle,) = self.trigger_many([{
            "url": url, "body": body, "run_id": run_id, "label": label, "retries": retries,
            "flow_control_key": flow_control_key, "flow_control_value": flow_control_value, "caller_ip": caller_ip}])
        return handle

    def trigger_many(self, runs: Sequence[Mapping[str, Any]]) -> list[RunHandle]:
        """:meth:`trigger` for each of ``runs`` (its arguments by name), written as one: every run starts,
        or none does (an unknown workflow, a message too large, a disk that refused the write)."""
        with self.store.transaction():
            rows = [self._new_run(**run) for run in runs]
        return [self._start(row, {}) for row in rows]

    def _new_run(self, url: str, body: Any = None, *, run_id: str | None = None, label: str | None = None,
                 retries: int | None = None, flow_control_key: str | None = None,
                 flow_control_value: str | None = None, caller_ip: str | None = None) -> dict[str, Any]:
        if url not in self._workflows:
            raise UnknownWorkflow(f"no workflow registered at {url!r}")
        body_json = None if body is None else json.dumps(body)
        self._check_message(body_json)
        return self._insert_run(
            run_id=run_id or f"wfr_{new_token(15)}", url=url, label=label, body=body_json,
            retries=DEFAULT_RETRIES if retries is None else retries,
            flow_control_key=flow_control_key, flow_control_value=flow_control_value, resumed_from=None,
            caller_ip=caller_ip)

    def resume(self, dlq_id: str, **overrides: Any) -> RunHandle:
        """A fresh run from DLQ entry ``dlq_id``: succeeded steps are copied, not executed again. Each
        override (``retries``, ``run_id``, ``flow_control_key``, ``flow_control_value``) replaces the
        failed run's setting only when given. The DLQ entry is removed."""
        return self.resume_many([dlq_id], **overrides)[0]

    def restart(self, dlq_id: str, **overrides: Any) -> RunHandle:
        """Like :meth:`resume`, but the fresh run starts from the first step: nothing is kept."""
        return self.restart_many([dlq_id], **overrides)[0]

    def resume_many(self, dlq_ids: list[str], **overrides: Any) -> list[RunHandle]:
        """:meth:`resume` for each id, in order. Every id is checked first: NotFoundError (naming the
        unknown ids) or UnknownWorkflow before any run starts."""
        return self._from_dlq(dlq_ids, keep_steps=True, **overrides)

    def restart_many(self, dlq_ids: list[str], **overrides: Any) -> list[RunHandle]:
        """:meth:`restart` for each id, in order, checked first like :meth:`resume_many`."""
        return self._from_dlq(dlq_ids, keep_steps=False, **overrides)

    def _from_dlq(self, dlq_ids: list[str], *, keep_steps: bool, retries: int | None = None,
                  run_id: str | None = None, flow_control_key: str | None = None,
                  flow_control_value: str | None = None) -> list[RunHandle]:
        found: dict[str, Any] = {}
        for dlq_id in dict.fromkeys(dlq_ids):
            found[dlq_id] = self.store.query(
                "SELECT r.* FROM dlq d JOIN runs r ON r.seq = d.run_seq WHERE d.dlq_id = ?", (dlq_id,))
        missing = [dlq_id for dlq_id, rows in found.items() if not rows]
        if missing:
            raise NotFoundError(f"no DLQ entry {', '.join(repr(m) for m in missing)}")
        failed_runs = [(dlq_id, rows[0]) for dlq_id, rows in found.items()]
        for _, failed in failed_runs:
            if failed["url"] not in self._workflows:
                raise UnknownWorkflow(f"the workflow of this run ({failed['url']!r}) is not registered in this "
                                      "sandbox process; register it with runner.register(url, fn) first")
            self._check_message(failed["body"])
        made = []
        with self.store.transaction():  # one write: every run starts, or none (a disk that refused it)
            for dlq_id, failed in failed_runs:
                replay = self._succeeded_steps(failed["seq"]) if keep_steps else {}
                row = self._insert_run(
                    run_id=run_id or failed["run_id"], url=failed["url"], label=failed["label"], body=failed["body"],
                    retries=failed["retries"] if retries is None else retries,
                    flow_control_key=flow_control_key if flow_control_key is not None else failed["flow_control_key"],
                    flow_control_value=(flow_control_value if flow_control_value is not None
                                        else failed["flow_control_value"]),
                    resumed_from=dlq_id, consume_dlq=dlq_id, caller_ip=failed["caller_ip"])
                made.append((row, replay))
        return [self._start(row, replay) for row, replay in made]

    def _check_message(self, body_json: str | None) -> None:
        if self.message_limit is None or body_json is None:
            return
        limit, size = self.message_limit(), message_size(body_json)
        if size > limit:
            raise MessageTooLarge(limit, size)

    def delete_dlq(self, dlq_ids: list[str]) -> int:
        """Remove DLQ entries (their runs stay RUN_FAILED, no longer resumable); returns how many
        existed. Unknown ids are skipped."""
        with self.store.transaction() as db:
            deleted = 0
            for dlq_id in dict.fromkeys(dlq_ids):
                if db.execute("DELETE FROM dlq WHERE dlq_id = ?", (dlq_id,)).rowcount == 1:
                    db.execute("UPDATE runs SET dlq_id = NULL WHERE dlq_id = ?", (dlq_id,))
                    deleted += 1
            return deleted

    def cancel(self, run_id: str) -> int:
        """Cancel every in-progress run with ``run_id``; returns how many. NotFoundError when no run has
        that id, InvalidState when none of them is in progress."""
        with self.store.transaction() as db:
            rows = db.execute("SELECT seq, state FROM runs WHERE run_id = ?", (run_id,)).fetchall()
            if not rows:
                raise NotFoundError(f"no workflow run {run_id!r}")
            started = [r["seq"] for r in rows if r["state"] == RunState.RUN_STARTED.value]
            if not started:
                raise InvalidState(f"workflow run {run_id!r} is not in progress "
                                   f"(state {', '.join(sorted({r['state'] for r in rows}))})")
            return self._cancel_runs(db, started)

    def cancel_many(self, *, run_ids: list[str] | None = None, url_prefix: str | None = None,
                    where: Sequence[str] = (), args: Sequence[Any] = (), limit: int | None = None) -> int:
        """Cancel the in-progress runs with one of ``run_ids``, whose URL starts with ``url_prefix`` and
        that match the SQL clauses ``where`` (over ``runs r``, with ``args``; the route's filters), at
        most ``limit`` of them, newest first; none of these given: every run in progress. Returns how
        many. Runs that are not in progress, and ids no run has, are skipped: the count says what was
        canceled."""
        clauses, values = ["r.state = ?", *where], [RunState.RUN_STARTED.value, *args]
        if run_ids is not None:
            clauses.append(f"r.run_id IN ({','.join('?' * len(run_ids))})")
            values += run_ids
        if url_prefix is not None:
            clauses.append("instr(r.url, ?) = 1")
            values.append(url_prefix)
        sql = f"SELECT r.seq FROM runs r WHERE {' AND '.join(clauses)} ORDER BY r.created_at DESC, r.seq DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self.store.transaction() as db:
            return self._cancel_runs(db, [r["seq"] for r in db.execute(sql, values).fetchall()])

    def _cancel_runs(self, db: Any, seqs: list[int]) -> int:
        """Mark runs canceled and their steps in flight STEP_CANCELED (inside ``db``'s transaction),
        then stop their workers at the next step boundary."""
        now = now_ms()
        for seq in seqs:
            db.execute("UPDATE runs SET state = ?, completed_at = ? WHERE seq = ?",
                       (RunState.RUN_CANCELED.value, now, seq))
            self._finish_steps(db, "run_seq = ? AND state = ?", (seq, StepState.STEP_PROGRESS.value),
                               StepState.STEP_CANCELED, None, now)
        with self._lock:
            for seq in seqs:
                active = self._active.get(seq)
                if active is not None:
                    self._abort(active)
        return len(seqs)

    def _abort(self, active: _ActiveRun) -> None:
        """Stop a run at its next step boundary; one still waiting for a worker never starts."""
        active.abort.set()
        if active.task is not None and active.task.cancel():
            self._retire(active)

    def _retire(self, active: _ActiveRun) -> None:
        with self._lock:
            self._active.pop(active.seq, None)
        active.done.set()

    def handle(self, run_id: str, created_at: int) -> RunHandle:
        """The handle of a run known by id and creation time (e.g. from a resume over HTTP)."""
        rows = self.store.query("SELECT seq FROM runs WHERE run_id = ? AND created_at = ?", (run_id, created_at))
        if not rows:
            raise NotFoundError(f"no workflow run {run_id!r} created at {created_at}")
        return RunHandle(run_id, created_at, rows[0]["seq"])

    def wait(self, handle: RunHandle, timeout: float = 30.0) -> str:
        """Block until the run finished (or ``timeout``); returns its state. For tests, the demo and
        notebooks: the HTTP interface has no blocking wait."""
        with self._lock:
            active = self._active.get(handle.seq)
        if active is not None:
            active.done.wait(timeout)
        rows = self.store.query("SELECT state FROM runs WHERE seq = ?", (handle.seq,))
        return rows[0]["state"]

    def wait_for_step(self, handle: RunHandle, name: str, state: str = StepState.STEP_PROGRESS.value,
                      timeout: float = 30.0) -> bool:
        """Block until step ``name`` of the run reached ``state`` (polls the store)."""
        event = threading.Event()
        for _ in range(int(timeout / 0.01)):
            rows = self.store.query("SELECT 1 FROM steps WHERE run_seq = ? AND step_name = ? AND state = ?",
                                    (handle.seq, name, state))
            if rows:
                return True
            event.wait(0.01)
        return False

    # -- lifecycle ---------------------------------------------------------------------------
    def recover(self) -> list[str]:
        """Fail the runs a previous process left in ``RUN_STARTED`` and put them in the DLQ (resumable).
        Returns their DLQ ids. Call before starting any run."""
        dlq_ids = []
        now = now_ms()
        with self.store.transaction() as db:
            self._fail_interrupted_callbacks(db)
            for run in db.execute("SELECT seq FROM runs WHERE state = ? AND kind IS NULL",
                                  (RunState.RUN_STARTED.value,)).fetchall():
                self._finish_steps(db, "run_seq = ? AND state = ?", (run["seq"], StepState.STEP_PROGRESS.value),
                                   StepState.STEP_FAILED, json.dumps({"error": INTERRUPTED}), now,
                                   error=INTERRUPTED)
                dlq_ids.append(self._fail_run(db, run["seq"], now, "interrupted: the sandbox stopped mid-run"))
        if dlq_ids:
            log.warning("%d interrupted workflow run(s) marked RUN_FAILED and moved to the DLQ", len(dlq_ids))
        return dlq_ids

    def close(self) -> None:
        """Stop every run at its next step boundary, without waiting (a step function may block).
        Runs still waiting for a worker never start (the next start recovers them)."""
        with self._lock:
            self._closing.set()
            for active in list(self._active.values()):
                self._abort(active)
        self._pool.close()

    # -- execution ---------------------------------------------------------------------------
    def _insert_run(self, *, run_id: str, url: str, label: str | None, body: str | None, retries: int,
                    flow_control_key: str | None, flow_control_value: str | None, resumed_from: str | None,
                    consume_dlq: str | None = None, caller_ip: str | None = None) -> dict[str, Any]:
        if self._closing.is_set():
            raise StoreClosed("the sandbox is stopping")
        with self.store.transaction() as db:
            if consume_dlq is not None:
                if db.execute("DELETE FROM dlq WHERE dlq_id = ?", (consume_dlq,)).rowcount != 1:
                    raise NotFoundError(f"no DLQ entry {consume_dlq!r}")  # resumed concurrently
                db.execute("UPDATE runs SET dlq_id = NULL WHERE dlq_id = ?", (consume_dlq,))
            # (run id, creation ms) must identify one run, so a run id reused within a millisecond
            # gets the next millisecond.
            last = db.execute("SELECT MAX(created_at) AS m FROM runs WHERE run_id = ?", (run_id,)).fetchone()["m"]
            created = max(now_ms(), (last or 0) + 1)
            cur = db.execute(
                "INSERT INTO runs (run_id, url, state, created_at, label, body, retries, flow_control_key, "
                "flow_control_value, resumed_from, caller_ip) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, url, RunState.RUN_STARTED.value, created, label, body, retries, flow_control_key, flow_control_value, resumed_from,
                 caller_ip))
            seq = cur.lastrowid
            initial = db.execute(
                "INSERT INTO steps (run_seq, group_no, group_type, step_id, step_name, step_type, call_type, "
                "message_id, out, concurrent, state, created_at) VALUES (?, 0, 'sequential', NULL, 'init', "
                "'Initial', 'step', ?, ?, 1, ?, ?)",
                (seq, _message_id(), body, StepState.STEP_SUCCESS.value, created)).lastrowid
            self._record_events(db, "seq = ?", (initial,), StepState.STEP_SUCCESS, created)
            return dict(db.execute("SELECT * FROM runs WHERE seq = ?", (seq,)).fetchone())

    def _start(self, row: dict[str, Any], replay: dict[tuple[str, int], dict[str, Any]]) -> RunHandle:
        active = _ActiveRun(row, replay)
        with self._lock:  # a cancel or close sees the run only with its task
            self._active[active.seq] = active
            if self._closing.is_set():  # closed since the run was made: RUN_STARTED, recovered next start
                self._retire(active)
            else:
                active.task = self._pool.submit(functools.partial(self._execute_run, active))
        return RunHandle(active.run_id, active.created_at, active.seq)

    def _execute_run(self, active: _ActiveRun) -> None:
        try:
            if active.abort.is_set():
                return  # canceled while it waited for a worker (already recorded)
            context = WorkflowContext(self, active)
            try:
                self._workflows[active.url](context)
            except RunAborted:
                return  # canceled (already recorded) or the sandbox stopped (recovered on next start)
            except StepFailed as exc:
                self._finish(active, failure=str(exc))
            except Exception as exc:  # noqa: BLE001 - an error in workflow code outside any step
                self._finish(active, failure=f"workflow code failed outside a step: {_error_text(exc)}")
            else:
                self._finish(active, failure=None)
        except (StoreClosed, RunAborted):
            pass  # the sandbox stopped under us (while a write waited for the disk too); recovered next start
        finally:
            self._retire(active)

    def _finish(self, active: _ActiveRun, failure: str | None) -> None:
        # No abort check here: a run whose last step finished is recorded even while the sandbox stops.
        def finish(db: Any) -> bool:
            state = db.execute("SELECT state FROM runs WHERE seq = ?", (active.seq,)).fetchone()["state"]
            if state != RunState.RUN_STARTED.value:
                return False  # canceled meanwhile
            if failure is None:
                db.execute("UPDATE runs SET state = ?, completed_at = ? WHERE seq = ?",
                           (RunState.RUN_SUCCESS.value, now_ms(), active.seq))
            else:
                self._fail_run(db, active.seq, now_ms(), failure)
            return True

        if self._write(f"workflow run {active.run_id}: its outcome", finish) and failure is not None:
            self._failed(active.seq, active.url, failure)

    @staticmethod
    def _fail_run(db: Any, seq: int, now: int, reason: str) -> str:
        # The DLQ entry holds the message of the step that failed (its first attempt was deliverable
        # from notBefore on); a run that failed outside any step gets a message of its own.
        failed = db.execute(
            "SELECT s.message_id, (SELECT MIN(created_at) FROM steps a WHERE a.run_seq = s.run_seq AND "
            "a.message_id = s.message_id) AS not_before FROM steps s WHERE s.run_seq = ? AND s.state = ? "
            "ORDER BY s.seq DESC LIMIT 1", (seq, StepState.STEP_FAILED.value)).fetchone()
        message_id, not_before = (failed["message_id"], failed["not_before"]) if failed else (_message_id(), now)
        dlq_id = f"dlq_{uuid.uuid4().hex}"
        db.execute("UPDATE runs SET state = ?, completed_at = ?, dlq_id = ? WHERE seq = ?",
                   (RunState.RUN_FAILED.value, now, dlq_id, seq))
        db.execute("INSERT INTO dlq (dlq_id, run_seq, created_at, message_id, response_status, response_body, "
                   "not_before) VALUES (?, ?, ?, ?, 500, ?, ?)", (dlq_id, seq, now, message_id, reason, not_before))
        return dlq_id
