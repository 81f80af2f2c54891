"""The sandbox's workflow runner: Python workflows registered by URL (:mod:`.local`, svckit's own
``serve()``), and the calls a test, the demo or a notebook makes on runs without HTTP. It is a thin
shell over the local QStash: a trigger is an Init message published to the workflow's URL, a resume a
DLQ entry handed to :meth:`ServedRuns.from_dlq`, a cancel the end of a run, exactly as the routes and
the vendor's SDKs do it; every run, registered or served by the user's own app, is one kind of run.

    runner.register("https://shop.example.com/api/workflows/order", order)
    handle = runner.trigger("https://shop.example.com/api/workflows/order", {"id": 42})
    runner.wait(handle)                                          # -> "RUN_SUCCESS"

A registered URL needs no server: the delivery engine delivers to it in process (:attr:`app`, through
httpx's ASGI transport), so it may name any host (the demo's ``shop.example.com``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from svckit.queue.models import RunState, StepState
from svckit.sandbox.area import new_token
from svckit.sandbox.delivery.publish import Publisher
from svckit.sandbox.delivery.records import copy_of, insert_message
from svckit.sandbox.delivery.routes import publish_of
from svckit.sandbox.http import ApiError
from svckit.sandbox.store import Store, now_ms
from svckit.sandbox.workflow.local import FailureFunction, Registered, Workflow, WorkflowApp
from svckit.sandbox.workflow.runs import CALLBACK_FAIL, STARTED, run_of

DEFAULT_WORKERS = 16


class NotFoundError(LookupError):
    """No such run or DLQ entry."""


class InvalidState(RuntimeError):
    """The run is not in a state that allows the operation (e.g. cancel a finished run)."""


class MessageTooLarge(ValueError):
    """A run's first message (its payload as compact UTF-8 JSON) is larger than the queue account's
    ``max_message_size``."""

    def __init__(self, limit: int, size: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(f"message too large: {size} bytes (the body as compact JSON), over the queue "
                         f"account's max_message_size of {limit} bytes; send a smaller body, or move to a "
                         "plan with a larger max_message_size (POST /devapi/v2/queue-upgrade)")


class CallbackError(RuntimeError):
    """The DLQ entry's failure callback cannot be retried (none, or it has not failed)."""


@dataclass(frozen=True)
class RunHandle:
    """What trigger and resume return: the run's id and creation time (Unix ms) identify it."""

    workflow_run_id: str
    workflow_created_at: int
    seq: int


def _headers(run_id: str, url: str, *, init: bool) -> dict[str, str]:
    """The headers an SDK publishes a run's message with (neutral names, :mod:`svckit.sandbox.headers`)."""
    return {"service-workflow-runid": run_id, "service-workflow-init": "true" if init else "false",
            "service-workflow-url": url, "service-forward-upstash-workflow-sdk-version": "1",
            "content-type": "application/json"}


class WorkflowRunner:
    """Registered workflows and their runs (module docstring). ``retry_delay``: seconds between a failed
    step's attempts (the runs' ``Upstash-Retry-Delay``)."""

    def __init__(self, store: Store, publisher: Publisher, *, workers: int = DEFAULT_WORKERS,
                 retry_delay: float = 0.05) -> None:
        self.store, self.publisher, self.runs = store, publisher, publisher.runs
        self.retry_delay = retry_delay
        self.app = WorkflowApp(workers, self._publish_steps, self._first_call, self._end)
        with store.transaction() as db:  # an earlier svckit ran runs in threads: one it left running ended with it
            db.execute("UPDATE runs SET state = ?, completed_at = ? WHERE state = ? AND kind IS NULL",
                       (RunState.RUN_FAILED.value, now_ms(), STARTED))

    # -- registry ----------------------------------------------------------------------------
    def register(self, url: str, fn: Workflow, *, failure_function: FailureFunction | None = None) -> Workflow:
        """Serve workflow ``fn`` at ``url``; ``failure_function`` is called when one of its runs fails."""
        if not url:
            raise ValueError("url: must not be empty")
        self.app.workflows[url] = Registered(fn, failure_function)
        return fn

    def workflow(self, url: str, *, failure_function: FailureFunction | None = None) -> Callable[[Workflow], Workflow]:
        """Decorator form of :meth:`register`."""
        return lambda fn: self.register(url, fn, failure_function=failure_function)

    def serves(self, url: str) -> bool:
        """Whether ``url`` is a registered workflow's (delivered in process)."""
        return url.partition("?")[0] in self.app.workflows

    # -- starting runs -----------------------------------------------------------------------
    def trigger(self, url: str, body: Any = None, *, run_id: str | None = None, label: str | None = None,
                retries: int | None = None, flow_control_key: str | None = None,
                flow_control_value: str | None = None, caller_ip: str | None = None) -> RunHandle:
        """Start a run of the workflow at ``url`` (registered, or an app's on loopback): its Init message.
        A run id already in progress gives that run's handle. MessageTooLarge over ``max_message_size``."""
        (handle,) = self.trigger_many([{
            "url": url, "body": body, "run_id": run_id, "label": label, "retries": retries,
            "flow_control_key": flow_control_key, "flow_control_value": flow_control_value, "caller_ip": caller_ip}])
        return handle

    def trigger_many(self, runs: Sequence[Mapping[str, Any]]) -> list[RunHandle]:
        """:meth:`trigger` for each of ``runs`` (its arguments by name): every run starts, or none."""
        items, ids = [], []
        limit = int(self.store.queue_account()["max_message_size"])
        for run in runs:
            run_id = run.get("run_id") or f"wfr_{new_token(15)}"
            headers = _headers(run_id, run["url"], init=True)
            headers["service-retry-delay"] = str(int(self.retry_delay * 1000))
            for name, key in (("label", "label"), ("retries", "retries"), ("flow-control-key", "flow_control_key"),
                              ("flow-control-value", "flow_control_value")):
                if run.get(key) is not None:
                    headers["service-" + name] = str(run[key])
            registered = self.app.workflows.get(run["url"])
            if registered is not None and registered.failure_function is not None:
                headers.update({"service-failure-callback": run["url"], "service-failure-callback-retries": "0",
                                "service-failure-callback-forward-upstash-workflow-is-failure": "true"})
            body = b"" if run.get("body") is None else json.dumps(
                run["body"], ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
            if len(body) > limit:
                raise MessageTooLarge(limit, len(body))
            items.append(publish_of(run["url"], "", headers, body))
            ids.append(run_id)
        self.publisher.publish(items, runs[0].get("caller_ip") if runs else None)
        return [self._newest(run_id) for run_id in ids]

    def _newest(self, run_id: str) -> RunHandle:
        row = self.store.query("SELECT seq, created_at FROM runs WHERE run_id = ? ORDER BY created_at DESC, seq DESC "
                               "LIMIT 1", (run_id,))[0]
        return RunHandle(run_id, row["created_at"], row["seq"])

    # -- the app's calls (on its worker threads) ---------------------------------------------
    def _publish_steps(self, url: str, run_id: str, steps: list[dict[str, Any]], delay: float) -> None:
        headers = _headers(run_id, url, init=False)
        if delay:
            headers["service-delay"] = f"{delay:g}"
        try:
            self.publisher.publish([publish_of(url, "", headers, json.dumps(s).encode()) for s in steps], None)
        except ApiError as exc:
            if exc.status != 400:  # 400: the run ended meanwhile (canceled): nothing more to do
                raise

    def _first_call(self, url: str, body: Any) -> str:
        return self.trigger(url, body).workflow_run_id

    def _end(self, run_id: str, response: str) -> None:
        with self.store.transaction() as db:
            run = run_of(db, run_id)
            if run is not None:
                self.runs.end(db, run, cancel=False, response=response, now=now_ms())

    # -- the DLQ -----------------------------------------------------------------------------
    def resume(self, dlq_id: str, **overrides: Any) -> RunHandle:
        """A new run from DLQ entry ``dlq_id`` that keeps the steps that succeeded; each override
        (``retries``, ``run_id``, ``flow_control_key``, ``flow_control_value``) replaces the failed
        run's setting when given. The entry is consumed."""
        return self.resume_many([dlq_id], **overrides)[0]

    def restart(self, dlq_id: str, **overrides: Any) -> RunHandle:
        """Like :meth:`resume`, but from the first step: nothing is kept."""
        return self.restart_many([dlq_id], **overrides)[0]

    def resume_many(self, dlq_ids: list[str], **overrides: Any) -> list[RunHandle]:
        """:meth:`resume` for each id, in order; every id is checked first (NotFoundError naming the
        unknown ones, MessageTooLarge) before any run starts."""
        return self._from_dlq(dlq_ids, keep=True, overrides=overrides)

    def restart_many(self, dlq_ids: list[str], **overrides: Any) -> list[RunHandle]:
        return self._from_dlq(dlq_ids, keep=False, overrides=overrides)

    def _from_dlq(self, dlq_ids: list[str], *, keep: bool, overrides: Mapping[str, Any]) -> list[RunHandle]:
        ids = list(dict.fromkeys(dlq_ids))
        limit = int(self.store.queue_account()["max_message_size"])
        with self.store.transaction() as db:
            entries = {r["dlq_id"]: r for r in db.execute(
                f"SELECT d.*, r.initial, r.kind, r.url, r.run_id FROM dlq d JOIN runs r ON r.seq = d.run_seq WHERE d.dlq_id IN "
                f"({','.join('?' * len(ids))})", ids)}
            missing = [i for i in ids if i not in entries]
            if missing:
                raise NotFoundError(f"no DLQ entry {', '.join(repr(m) for m in missing)}")
            for entry in entries.values():
                if entry["kind"] != "served":
                    raise InvalidState(f"DLQ entry {entry['dlq_id']!r} is of a run an earlier svckit ran; "
                                       "trigger its workflow again instead")
                refused = self.publisher.refusal(entry["url"])  # None for a registered workflow's URL too
                if refused is not None:
                    raise InvalidState(f"the run of DLQ entry {entry['dlq_id']!r} cannot be delivered: {refused}")
                if len(entry["initial"] or b"") > limit:
                    raise MessageTooLarge(limit, len(entry["initial"]))
            targets = [overrides.get("run_id") or entries[i]["run_id"] for i in ids]
            for target in dict.fromkeys(targets):
                if targets.count(target) > 1 or db.execute("SELECT 1 FROM runs WHERE run_id = ? AND state = ?",
                                                           (target, STARTED)).fetchone():
                    raise InvalidState(f"workflow run id {target!r} would name two runs in progress: a run id names "
                                       "one run at a time (its messages carry only the id); give each another id "
                                       "(Service-Workflow-RunId), one by one")
            made = [self.runs.from_dlq(db, entries[i], keep=keep, overrides=overrides, now=now_ms()) for i in ids]
        return [self.handle(run_id, created) for run_id, created in made]

    def delete_dlq(self, dlq_ids: list[str]) -> int:
        """Remove DLQ entries (their runs stay RUN_FAILED, no longer resumable); how many existed."""
        with self.store.transaction() as db:
            deleted = 0
            for dlq_id in dict.fromkeys(dlq_ids):
                if db.execute("DELETE FROM dlq WHERE dlq_id = ?", (dlq_id,)).rowcount == 1:
                    db.execute("UPDATE runs SET dlq_id = NULL WHERE dlq_id = ?", (dlq_id,))
                    deleted += 1
            return deleted

    def retry_failure_function(self, dlq_id: str) -> RunHandle:
        """Call the failure function of a DLQ entry's run again, when its call failed (the workflow
        SDK's ``dlq.retryFailureFunction``); the entry stays."""
        with self.store.transaction() as db:
            row = db.execute("SELECT r.run_id, r.created_at, r.seq, f.state FROM dlq d JOIN runs r ON r.seq = d.run_seq "
                             "LEFT JOIN failure_callbacks f ON f.run_seq = r.seq WHERE d.dlq_id = ?", (dlq_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no DLQ entry {dlq_id!r}")
            if row["state"] is None:
                raise CallbackError(f"the run of DLQ entry {dlq_id!r} has no failure callback: nothing to retry")
            if row["state"] != CALLBACK_FAIL:
                raise CallbackError(f"the failure function of DLQ entry {dlq_id!r} has not failed "
                                    f"({row['state']}): nothing to retry")
            last = db.execute("SELECT * FROM messages WHERE run_seq = ? AND kind = 'failure_callback' "
                              "ORDER BY seq DESC LIMIT 1", (row["seq"],)).fetchone()
            again = copy_of(last)
            waiting = insert_message(db, again, now_ms())
            db.execute("UPDATE failure_callbacks SET state = 'CALLBACK_INPROGRESS', message_id = ? WHERE run_seq = ?",
                       (again.message_id, row["seq"]))
        self.publisher.engine.submit([waiting])
        return RunHandle(row["run_id"], row["created_at"], row["seq"])

    # -- canceling ---------------------------------------------------------------------------
    def cancel(self, run_id: str) -> int:
        """Cancel every run in progress with ``run_id``; how many. NotFoundError when no run has that
        id, InvalidState when none of them is in progress."""
        rows = self.store.query("SELECT seq, state FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise NotFoundError(f"no workflow run {run_id!r}")
        started = [r["seq"] for r in rows if r["state"] == STARTED]
        if not started:
            raise InvalidState(f"workflow run {run_id!r} is not in progress "
                               f"(state {', '.join(sorted({r['state'] for r in rows}))})")
        return self._cancel(started)

    def cancel_many(self, *, run_ids: list[str] | None = None, url_prefix: str | None = None,
                    where: Sequence[str] = (), args: Sequence[Any] = (), limit: int | None = None) -> int:
        """Cancel the runs in progress with one of ``run_ids``, whose URL starts with ``url_prefix`` and
        that match the SQL clauses ``where`` (over ``runs r``, with ``args``), at most ``limit``,
        newest first; none given: every run in progress. How many were canceled."""
        clauses, values = ["r.state = ?", *where], [STARTED, *args]
        if run_ids is not None:
            clauses.append(f"r.run_id IN ({','.join('?' * len(run_ids))})")
            values += run_ids
        if url_prefix is not None:
            clauses.append("instr(r.url, ?) = 1")
            values.append(url_prefix)
        sql = f"SELECT r.seq FROM runs r WHERE {' AND '.join(clauses)} ORDER BY r.created_at DESC, r.seq DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._cancel([r["seq"] for r in self.store.query(sql, values)])

    def _cancel(self, seqs: list[int]) -> int:
        with self.store.transaction() as db:
            for seq in seqs:
                run = db.execute("SELECT * FROM runs WHERE seq = ?", (seq,)).fetchone()
                self.runs.end(db, run, cancel=True, response=None, now=now_ms())
        return len(seqs)

    # -- waiting (tests, the demo, notebooks: the HTTP interface has no blocking wait) ---------
    def handle(self, run_id: str, created_at: int) -> RunHandle:
        """The handle of a run known by id and creation time (e.g. from a resume over HTTP)."""
        rows = self.store.query("SELECT seq FROM runs WHERE run_id = ? AND created_at = ?", (run_id, created_at))
        if not rows:
            raise NotFoundError(f"no workflow run {run_id!r} created at {created_at}")
        return RunHandle(run_id, created_at, rows[0]["seq"])

    def wait(self, handle: RunHandle, timeout: float = 30.0) -> str:
        """Block until the run ended (or ``timeout``); its state."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.store.query("SELECT state FROM runs WHERE seq = ?", (handle.seq,))[0]["state"]
            if state != STARTED or time.monotonic() > deadline:
                return state
            time.sleep(0.01)

    def wait_for_step(self, handle: RunHandle, name: str, state: str = StepState.STEP_PROGRESS.value,
                      timeout: float = 30.0) -> bool:
        """Block until step ``name`` of the run reached ``state`` (a sleep is in progress from the moment
        it is published); False after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.store.query("SELECT 1 FROM steps WHERE run_seq = ? AND step_name = ? AND state = ?",
                                (handle.seq, name, state)):
                return True
            time.sleep(0.01)
        return False
