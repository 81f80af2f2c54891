"""``waitForEvent`` and ``notify`` of served runs (the JS workflow SDK's; the Python SDK has neither).

- ``POST /v2/wait/{eventId}`` (the app, inside a run): the run waits for the event until its
  ``timeout``. The wait is a ``waiters`` row, and its end a message of the run due at the deadline:
  if no notification came first, that message's delivery (to ``timeoutUrl``, with ``timeoutHeaders``)
  carries the wait's step with ``waitTimeout: true``.
- ``POST /v2/notify/{eventId}`` (anyone; ``/v2/notify/{workflowRunId}/{eventId}`` for one run): every
  run waiting for the event gets the notification's body as the wait's result (base64 in ``out``),
  delivered to the wait's URL with its headers; the answer lists the waiters notified. A
  notification nobody waits for is lost, as on the hosted service.
- ``GET /v2/waiters/{eventId}``: who waits.
"""

from __future__ import annotations

import json
from typing import Any

from svckit.sandbox.delivery.options import OptionError, duration, forwarded_headers
from svckit.sandbox.delivery.records import NewMessage, Waiting, cancel_waiting, header_map, insert_message
from svckit.sandbox.http import ApiError
from svckit.sandbox.workflow import steps
from svckit.sandbox.workflow.history import append_entry
from svckit.sandbox.workflow.wire import RUN_ID, header_pairs, wait_result

STARTED = "RUN_STARTED"


def _options(config: dict[str, Any]) -> dict[str, Any]:
    return {"failure_callback": config["options"].get("failure_callback") or {}}


def wait(db: Any, event_id: str, body: Any, headers: dict[str, str], now: int) -> list[Waiting]:
    """A run's app waits for ``event_id`` (``body``: the wait's url, timeout, timeoutUrl,
    timeoutHeaders and step); the message of its timeout, for the delivery engine."""
    if not isinstance(body, dict) or not isinstance(body.get("url"), str) or not isinstance(body.get("step"), dict):
        raise ApiError(400, "a wait is a JSON object with url, step and timeout (what waitForEvent sends)")
    run = db.execute("SELECT * FROM runs WHERE run_id = ? AND kind = 'served' AND state = ? ORDER BY created_at DESC "
                     "LIMIT 1", (headers.get(RUN_ID, ""), STARTED)).fetchone()
    if run is None:
        raise ApiError(404, f"no workflow run {headers.get(RUN_ID)!r} in progress to wait for {event_id!r}")
    timeout = str(body.get("timeout") or "7d")
    try:
        seconds = duration("service-timeout", timeout)
    except OptionError as exc:
        raise ApiError(400, f"timeout: {exc}") from None
    step = {**body["step"], "timeout": timeout}
    config = json.loads(run["config"])
    timeout_url = body.get("timeoutUrl") or body["url"]
    ending = NewMessage(url=timeout_url, body=b"", headers=list(forwarded_headers(dict(header_pairs(body.get("timeoutHeaders"))))),
                        options={**_options(config), "waiter": event_id}, max_retries=run["retries"],
                        not_before=now + int(seconds * 1000), run_seq=run["seq"], call_type="step",
                        step_name=str(step.get("stepName") or "") or None)
    waiting = insert_message(db, ending, now)
    db.execute("INSERT INTO waiters (event_id, run_seq, url, deadline, timeout_url, headers, timeout_headers, step, "
               "timeout_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (event_id, run["seq"], body["url"], ending.not_before, timeout_url,
                json.dumps(forwarded_headers(headers)), json.dumps(ending.headers), json.dumps(step), waiting[0], now))
    steps.known(db, run["seq"], step, ending.message_id, now)
    return [waiting]


def time_out(db: Any, job: dict[str, Any]) -> bool:
    """Before the delivery of a wait's end: its step joins the history as timed out, unless the wait was
    notified meanwhile (False: nothing to deliver)."""
    waiter = db.execute("SELECT * FROM waiters WHERE timeout_seq = ?", (job["seq"],)).fetchone()
    if waiter is None:
        return False
    db.execute("DELETE FROM waiters WHERE seq = ?", (waiter["seq"],))
    body = wait_result(json.loads(waiter["step"]), waiter["event_id"], None)
    job["history_no"] = append_entry(db, waiter["run_seq"], job["message_id"], body, job["created_at"], delayed=False)
    db.execute("UPDATE messages SET history_no = ? WHERE seq = ?", (job["history_no"], job["seq"]))
    return True


def _waiter_wire(row: Any) -> dict[str, Any]:
    return {"url": row["url"], "deadline": row["deadline"] // 1000, "headers": header_map(json.loads(row["headers"])),
            "timeoutUrl": row["timeout_url"], "timeoutHeaders": header_map(json.loads(row["timeout_headers"]))}


def notify(db: Any, event_id: str, data: bytes, run_id: str | None, now: int) -> tuple[list[dict[str, Any]], list[Waiting], list[int]]:
    """Notify the runs waiting for ``event_id`` (only run ``run_id``'s, if given): their answers, the
    messages to deliver and the timeouts to forget."""
    where, args = "w.event_id = ?", [event_id]
    if run_id is not None:
        where, args = where + " AND r.run_id = ?", [event_id, run_id]
    rows = db.execute(f"SELECT w.*, r.run_id, r.retries, r.config FROM waiters w JOIN runs r ON r.seq = w.run_seq "
                      f"WHERE {where} AND r.state = ? ORDER BY w.seq", (*args, STARTED)).fetchall()
    answers, waiting, forgotten = [], [], []
    for row in rows:
        db.execute("DELETE FROM waiters WHERE seq = ?", (row["seq"],))
        forgotten += cancel_waiting(db, "seq = ?", [row["timeout_seq"]], now)
        body = wait_result(json.loads(row["step"]), event_id, data)
        message = NewMessage(url=row["url"], body=body, headers=json.loads(row["headers"]),
                             options=_options(json.loads(row["config"])), max_retries=row["retries"],
                             run_seq=row["run_seq"], call_type="step", step_name=json.loads(row["step"]).get("stepName"))
        message.history_no = append_entry(db, row["run_seq"], message.message_id, body, now, delayed=False)
        waiting.append(insert_message(db, message, now))
        answers.append({"waiter": _waiter_wire(row), "messageId": message.message_id, "error": "",
                        "workflowRunId": row["run_id"]})
    return answers, waiting, forgotten


def waiters(db: Any, event_id: str) -> list[dict[str, Any]]:
    return [_waiter_wire(r) for r in db.execute("SELECT * FROM waiters WHERE event_id = ? ORDER BY seq", (event_id,))]
