"""Runs of workflows served by the vendor's ``serve()`` (or any app that speaks its protocol), kept on
the local QStash: how their messages are admitted, delivered and recorded, and how a run ends, is
resumed or restarted from the DLQ.

- **Admitted** (in the publisher's transaction, :meth:`ServedRuns.admit`): an Init message makes the
  run (``runs`` row, kind ``served``, its first payload and the configuration later messages inherit:
  retries, flow control, failure callback, the trigger's own headers); another run with that id in
  progress makes it a duplicate. A later message of the run is appended to its ``history`` and
  delivered to the workflow URL, or (``toCallback``) goes to the third party of a ``context.call``.
- **Delivered** (the engine's hooks, in its transactions): a delivery to the workflow URL carries the
  run's history up to its own message (:func:`.wire.history_body`) and the run's headers; one of an
  ended run is dropped. The outcome writes the run's log (:mod:`.steps`); a delivery whose retries are
  spent fails the run (``RUN_FAILED``, its DLQ entry, its failure callback).
- **Ended** by the app (``DELETE /v2/workflows/runs/{id}?cancel=false``: ``RUN_SUCCESS``, its
  response kept) or canceled (``cancel=true``: ``RUN_CANCELED``, its waiting messages and waits dropped).
- **Resumed** from the DLQ: a new run (the same id unless told otherwise) keeps the steps that
  succeeded, and the failed message is delivered again; **restarted**: a new run from the first payload.

Waits (``waitForEvent``) and notifications are :mod:`.events`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from svckit.queue.models import RunState
from svckit.sandbox.delivery.records import NewMessage, cancel_waiting, insert_message, new_message_id
from svckit.sandbox.http import ApiError
from svckit.sandbox.workflow import steps
from svckit.sandbox.workflow.events import time_out
from svckit.sandbox.workflow.history import append_entry
from svckit.sandbox.workflow.wire import (
    NON_WORKFLOW,
    OWN,
    VERSION,
    WorkflowMessage,
    history_body,
    merge,
    step_of,
    user_forwards,
)

STARTED = RunState.RUN_STARTED.value
CALLBACK_INPROGRESS, CALLBACK_SUCCESS, CALLBACK_FAIL = "CALLBACK_INPROGRESS", "CALLBACK_SUCCESS", "CALLBACK_FAIL"
#: what a workflow's app answers a failure callback with when the workflow has no failure function
NO_FAILURE_FUNCTION = "upstash-workflow-failure-callback-notfound"


def run_of(db: Any, run_id: str) -> Any:
    """The newest served run with this id (several runs may share one: a resumed run keeps it)."""
    return db.execute("SELECT * FROM runs WHERE run_id = ? AND kind = 'served' ORDER BY created_at DESC, seq DESC "
                      "LIMIT 1", (run_id,)).fetchone()


def new_created_at(db: Any, run_id: str, now: int) -> int:
    """(run id, creation ms) identify one run: a run id reused within a millisecond gets the next one."""
    last = db.execute("SELECT MAX(created_at) AS m FROM runs WHERE run_id = ?", (run_id,)).fetchone()["m"]
    return max(now, (last or 0) + 1)


class ServedRuns:
    """The served runs of one sandbox's local QStash (module docstring); ``forget`` and ``submit`` are
    the delivery engine's."""

    def __init__(self, forget: Any, submit: Any) -> None:
        self.forget, self.submit = forget, submit

    # -- admitting a published message ----------------------------------------------------------
    def admit(self, db: Any, workflow: WorkflowMessage, message: NewMessage, options: Any, now: int) -> bool:
        """Tie ``message`` (not yet inserted) to its run; False: a duplicate Init, keep nothing."""
        message.headers = merge(message.headers)  # the Python SDK forwards Content-Type twice
        run = None if workflow.init else run_of(db, workflow.run_id)
        if workflow.init or (not workflow.init_given and run is None):
            if db.execute("SELECT 1 FROM runs WHERE run_id = ? AND state = ?", (workflow.run_id, STARTED)).fetchone():
                return False
            self._new_run(db, workflow, message, options, now)
            return True
        if run is None:
            raise ApiError(404, f"no workflow run {workflow.run_id!r}: a run starts with a message that carries "
                                "Upstash-Workflow-Init: true")
        if run["state"] != STARTED:
            raise ApiError(400, f"workflow run {workflow.run_id!r} has ended ({run['state']}): it takes no more steps")
        config = json.loads(run["config"])
        message.run_seq = run["seq"]
        self._inherit(message, options, config, run)
        if workflow.call_type == "toCallback":  # a context.call: to the third party, with the run's callback
            message.call_type = "toCallback"
            message.max_retries = options.retries or 0
            message.options["callback"]["headers"] = [*workflow.callback_headers,
                                                      ("upstash-workflow-runid", workflow.run_id)]
            step = dict(workflow.call_step)
            message.step_name = step.get("stepname")
            if step.get("stepid", "").isdigit():
                steps.known(db, run["seq"], {"stepId": int(step["stepid"]), "stepName": step.get("stepname"),
                                             "stepType": step.get("steptype", "Call")}, message.message_id, now)
            return True
        self.append(db, run["seq"], message, now)
        return True

    def _new_run(self, db: Any, workflow: WorkflowMessage, message: NewMessage, options: Any, now: int) -> None:
        config = {"init_headers": message.headers, "method": message.method, "options": message.options,
                  "forward": user_forwards(message.headers), "retries": message.max_retries,
                  "failure_headers": workflow.failure_headers, "init_id": message.message_id}
        created = new_created_at(db, workflow.run_id, now)
        seq = db.execute(
            "INSERT INTO runs (run_id, url, state, created_at, label, body, retries, flow_control_key, "
            "flow_control_value, caller_ip, kind, config, initial) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'served', ?, ?)",
            (workflow.run_id, workflow.url or message.url, STARTED, created, message.label,
             message.body.decode("utf-8", "replace"), message.max_retries, message.flow_control_key,
             message.flow_control_value, message.caller_ip, json.dumps(config), message.body)).lastrowid
        steps.add_initial(db, seq, message.message_id, message.body.decode("utf-8", "replace"), created)
        message.run_seq, message.history_no, message.call_type, message.step_name = seq, 0, "step", "init"
        self._failure_headers(message, workflow.failure_headers, workflow.run_id)

    @staticmethod
    def _failure_headers(message: NewMessage, headers: Any, run_id: str) -> None:
        failure = message.options.get("failure_callback") or {}
        if failure.get("url"):
            failure["headers"] = [*headers, ("upstash-workflow-runid", run_id)]

    def _inherit(self, message: NewMessage, options: Any, config: dict[str, Any], run: Any) -> None:
        """What the trigger set holds for every message of the run (the JS SDK sends it once)."""
        if options.retries is None:
            message.max_retries = int(run["retries"])
        if message.label is None:
            message.label = run["label"]
        if message.caller_ip is None:  # published in process (the sandbox's own workflows)
            message.caller_ip = run["caller_ip"]
        if message.flow_control_key is None:
            message.flow_control_key, message.flow_control_value = run["flow_control_key"], run["flow_control_value"]
        if message.options.get("retry_delay") is None:
            message.options["retry_delay"] = config["options"].get("retry_delay")
        if not (message.options.get("failure_callback") or {}).get("url"):
            message.options["failure_callback"] = config["options"].get("failure_callback") or {}
        self._failure_headers(message, config["failure_headers"], run["run_id"])

    def append(self, db: Any, run_seq: int, message: NewMessage, now: int) -> None:
        """``message`` (a step the app published, or a notified wait's end) joins the run's history."""
        message.run_seq, message.call_type, message.step_name = run_seq, "step", step_name(message.body)
        message.history_no = append_entry(db, run_seq, message.message_id, message.body, now,
                                          delayed=message.not_before > now)

    # -- the delivery engine's hooks ------------------------------------------------------------
    def prepare(self, db: Any, job: dict[str, Any]) -> bool:
        """Before an attempt: the body and headers of a run's delivery; False when its run has ended."""
        run = db.execute("SELECT * FROM runs WHERE seq = ?", (job["run_seq"],)).fetchone()
        if run["state"] != STARTED and job["kind"] != "failure_callback":
            return False
        config = json.loads(run["config"])
        own = [("upstash-workflow-runid", run["run_id"])]
        if run["label"]:
            own.append(("upstash-label", run["label"]))
        if job["call_type"] == "step":
            if job["history_no"] is None and not time_out(db, job):  # a wait's timeout ends it now
                return False
            entries = db.execute("SELECT message_id, body FROM history WHERE run_seq = ? AND no <= ? ORDER BY no",
                                 (run["seq"], job["history_no"])).fetchall()
            job["body"] = history_body(run["initial"], config["init_id"], [(e["message_id"], e["body"]) for e in entries])
            own += [("upstash-workflow-url", run["url"]), ("upstash-workflow-createdat", str(run["created_at"])),
                    (VERSION, "1"), ("content-type", "application/json")]  # a run this sandbox made too
            job["headers"] = merge(config["forward"], _not_own(job["headers"]), own)
        elif job["call_type"] != "toCallback":  # its callback or failure callback: never the version header
            own.append(("content-type", "application/json"))
            job["headers"] = merge(config["forward"], [p for p in _not_own(job["headers"]) if p[0] != VERSION], own)
        return True

    def callback(self, db: Any, job: dict[str, Any], message: NewMessage, report: dict[str, Any], now: int) -> None:
        """A callback or failure callback of a run's message belongs to the run; a failure callback
        tells the run's first payload, id and creation time."""
        run = db.execute("SELECT * FROM runs WHERE seq = ?", (job["run_seq"],)).fetchone()
        message.run_seq, message.step_name = run["seq"], job["step_name"]
        message.call_type = "fromCallback" if message.kind == "callback" else "failureCall"
        if message.kind == "failure_callback":
            report.update(url=run["url"], sourceBody=base64.b64encode(run["initial"]).decode(),
                          workflowRunId=run["run_id"], workflowCreatedAt=run["created_at"])
            message.body = json.dumps({k: v for k, v in report.items() if v is not None}).encode()
            db.execute("INSERT OR REPLACE INTO failure_callbacks (run_seq, message_id, state, fail_status, "
                       "fail_response, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                       (run["seq"], message.message_id, CALLBACK_INPROGRESS, report.get("status") or 0,
                        _text(report.get("body")), now))

    def recorded(self, db: Any, job: dict[str, Any], status: int | None, headers: Mapping[str, str], body: bytes,
                 error: str | None, state: str, dlq_id: str | None, now: int) -> None:
        """After an attempt's outcome (``state``: DELIVERED, RETRY or FAILED) was written."""
        run_seq = job["run_seq"]
        if job["kind"] == "failure_callback":
            if state == "DELIVERED" and headers.get(NO_FAILURE_FUNCTION) == "true":
                # the app has no failure function (the JS SDK's trigger names the workflow's URL as the
                # failure callback of every run): the run has none to show, or to retry
                db.execute("DELETE FROM failure_callbacks WHERE run_seq = ?", (run_seq,))
            elif state != "RETRY":
                db.execute("UPDATE failure_callbacks SET state = ?, response_status = ?, response_body = ?, "
                           "updated_at = ? WHERE run_seq = ?", (CALLBACK_SUCCESS if state == "DELIVERED" else
                                                                CALLBACK_FAIL, status, body.decode("utf-8", "replace"),
                                                                now, run_seq))
            return
        if job["call_type"] == "toCallback":
            return  # a call's failure is its result, not the run's
        if state == "DELIVERED":
            if job["history_no"] == 0 and VERSION not in headers:
                self._fail(db, run_seq, NON_WORKFLOW, None, now)
            steps.delivered(db, run_seq, job["message_id"])
            return
        failing, reason = headers.get("upstash-error-step-name"), _reason(status, body, error)
        # the attempt's event tells what failed: the step the app names, and its error
        db.execute("UPDATE events SET step_name = COALESCE(?, step_name), error = ? WHERE message_seq = ? AND "
                   "state IN ('ERROR', 'FAILED') AND time = ?", (failing, reason, job["seq"], now))
        steps.failed_attempt(db, run_seq, failing, reason, job["retried"] + 1, job["message_id"], now,
                             final=state == "FAILED")
        if state == "FAILED":
            self._fail(db, run_seq, error or "", dlq_id, now)

    def _fail(self, db: Any, run_seq: int, reason: str, dlq_id: str | None, now: int) -> None:
        db.execute("UPDATE runs SET state = ?, completed_at = ?, dlq_id = ?, response = ? WHERE seq = ? AND state = ?",
                   (RunState.RUN_FAILED.value, now, dlq_id, reason if dlq_id is None else None, run_seq, STARTED))
        if dlq_id is not None:
            db.execute("UPDATE dlq SET run_seq = ? WHERE dlq_id = ?", (run_seq, dlq_id))
        # what waits is cut (delivered again on a resume); a delivery in flight goes on: it may have done
        # its work already (an Init that published the step that then failed), and if it fails, the
        # engine records it cut (:meth:`ended`)
        self._stop(db, run_seq, steps.CANCELED, now, in_flight=False)

    @staticmethod
    def ended(db: Any, job: Mapping[str, Any]) -> bool:
        """Whether the run of a step message being delivered has ended (failed or canceled) meanwhile."""
        if job["kind"] != "message" or job["call_type"] != "step":
            return False
        run = db.execute("SELECT state FROM runs WHERE seq = ?", (job["run_seq"],)).fetchone()
        return run is not None and run["state"] != STARTED

    def _stop(self, db: Any, run_seq: int, step_state: str, now: int, *, in_flight: bool = True) -> None:
        """The run ended: its steps in progress end with ``step_state``, its waits and waiting messages
        are dropped (``in_flight``: the delivery being made too, unless it is the one that ended it)."""
        steps.stop_progress(db, run_seq, step_state)
        db.execute("DELETE FROM waiters WHERE run_seq = ?", (run_seq,))
        where = "run_seq = ? AND kind = 'message'" + ("" if in_flight else " AND state != 'ACTIVE'")
        self.forget(cancel_waiting(db, where, [run_seq], now))

    # -- the run's end, and the DLQ -------------------------------------------------------------
    def end(self, db: Any, run: Any, *, cancel: bool, response: str | None, now: int) -> None:
        """``DELETE /v2/workflows/runs/{id}``: the app finished the run, or someone canceled it (an
        ended run stays as it ended)."""
        if run["state"] != STARTED:
            return
        state = RunState.RUN_CANCELED if cancel else RunState.RUN_SUCCESS
        db.execute("UPDATE runs SET state = ?, completed_at = ?, response = ? WHERE seq = ?",
                   (state.value, now, None if cancel else response, run["seq"]))
        self._stop(db, run["seq"], steps.CANCELED, now, in_flight=cancel)

    def from_dlq(self, db: Any, entry: Any, *, keep: bool, overrides: Mapping[str, Any], now: int) -> tuple[str, int]:
        """Resume (``keep``: the steps that succeeded stay done) or restart the failed run of a DLQ
        entry, as a new run; the entry is consumed. Returns the new run's id and creation time."""
        old = db.execute("SELECT * FROM runs WHERE seq = ?", (entry["run_seq"],)).fetchone()
        failed = db.execute("SELECT * FROM messages WHERE seq = ?", (entry["message_seq"],)).fetchone()
        db.execute("DELETE FROM dlq WHERE dlq_id = ?", (entry["dlq_id"],))
        db.execute("UPDATE runs SET dlq_id = NULL WHERE dlq_id = ?", (entry["dlq_id"],))
        config = json.loads(old["config"])
        run_id = overrides.get("run_id") or old["run_id"]
        created = new_created_at(db, run_id, now)
        retries = old["retries"] if overrides.get("retries") is None else overrides["retries"]
        flow_key = overrides.get("flow_control_key") or old["flow_control_key"]
        flow_value = overrides.get("flow_control_value") or old["flow_control_value"]
        init_id = new_message_id()
        seq = db.execute(
            "INSERT INTO runs (run_id, url, state, created_at, label, body, retries, flow_control_key, "
            "flow_control_value, caller_ip, kind, config, initial, resumed_from) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'served', ?, ?, ?)",
            (run_id, old["url"], STARTED, created, old["label"], old["body"], retries, flow_key, flow_value,
             old["caller_ip"], json.dumps({**config, "init_id": init_id if not keep else config["init_id"]}),
             old["initial"], old["run_id"])).lastrowid
        steps.add_initial(db, seq, init_id if not keep else config["init_id"], old["body"], created)
        message = NewMessage(url=old["url"], body=old["initial"], method=config["method"],
                             headers=config["init_headers"], options=config["options"], max_retries=retries,
                             label=old["label"], flow_control_key=flow_key, flow_control_value=flow_value,
                             caller_ip=old["caller_ip"], run_seq=seq, history_no=0, call_type="step",
                             message_id=init_id, step_name="init")
        again = [message]
        if keep and failed["call_type"] == "step" and failed["history_no"]:
            # the whole history: a parallel step's sibling branches may have finished after the failed one
            db.execute("INSERT INTO history (run_seq, no, message_id, body) SELECT ?, no, message_id, body "
                       "FROM history WHERE run_seq = ?", (seq, old["seq"]))
            db.execute("INSERT INTO steps (run_seq, group_no, group_type, step_id, step_name, step_type, call_type, "
                       "message_id, out, concurrent, state, created_at) SELECT ?, group_no, group_type, step_id, "
                       "step_name, step_type, call_type, message_id, out, concurrent, state, created_at FROM steps "
                       "WHERE run_seq = ? AND step_id IS NOT NULL AND state = ?", (seq, old["seq"], steps.SUCCESS))
            # delivered again: the failed message, and those the failure cut short (sibling branches)
            cut = db.execute("SELECT * FROM messages WHERE run_seq = ? AND call_type = 'step' AND history_no IS NOT NULL "
                             "AND (seq = ? OR state = 'CANCELED') ORDER BY seq", (old["seq"], failed["seq"])).fetchall()
            again = [replace(message, body=row["body"], headers=json.loads(row["headers"]),
                             options=json.loads(row["options"]), history_no=row["history_no"],
                             message_id=new_message_id(), step_name=row["step_name"]) for row in cut]
        self.submit([insert_message(db, m, now) for m in again])
        return run_id, created

    def history(self, db: Any, run_id: str) -> list[dict[str, Any]] | None:
        """``GET /v2/workflows/runs/{id}``: the run's history as its deliveries carry it (None: no such
        run in progress)."""
        run = run_of(db, run_id)
        if run is None or run["state"] != STARTED:
            return None
        entries = db.execute("SELECT message_id, body FROM history WHERE run_seq = ? ORDER BY no", (run["seq"],))
        return json.loads(history_body(run["initial"], json.loads(run["config"])["init_id"],
                                       [(e["message_id"], e["body"]) for e in entries]))


def step_name(body: bytes) -> str | None:
    step = step_of(body)
    return None if step is None else str(step.get("stepName") or "") or None


def _reason(status: int | None, body: bytes, error: str | None) -> str:
    """Why a delivery failed, as the SDKs' 500 bodies tell it (``{"error": "TypeError", "message":
    "..."}``: ``TypeError: ...``), else the body, else the engine's words."""
    try:
        told = json.loads(body) if status is not None and body else None
    except (ValueError, UnicodeDecodeError, RecursionError):  # as :func:`.wire.step_of`
        told = None
    if isinstance(told, dict) and isinstance(told.get("message"), str):
        return f"{told['error']}: {told['message']}" if isinstance(told.get("error"), str) else told["message"]
    return body.decode("utf-8", "replace") if status is not None and body else error or ""


def _not_own(headers: Any) -> list[tuple[str, str]]:
    return [(n, v) for n, v in headers if n.lower() not in OWN]


def _text(b64: Any) -> str | None:
    if not isinstance(b64, str):
        return None
    return base64.b64decode(b64).decode("utf-8", "replace")

