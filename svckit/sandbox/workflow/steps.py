"""What a served run's log shows (the ``steps`` rows ``GET /v2/workflows/logs`` reads), written as its
messages come and go, inside the caller's transaction.

A step is shown from the moment it is known: a sleep from the message that waits out its delay, a
``context.call`` from the message to the third party, a ``waitForEvent`` from its wait, a parallel
step from its plan: each ``STEP_PROGRESS`` until its result (or its delivery, for a sleep) makes it
``STEP_SUCCESS``. A ``context.run`` is known only by its result, so it is shown from the start of the
delivery it ran in. A delivery the app failed is ``STEP_RETRY`` while a retry follows and ``STEP_FAILED``
at the end, under the name the JS SDK gives in ``Upstash-Error-Step-Name`` (the Python SDK names none:
the step's name is filled in when it succeeds).
"""

from __future__ import annotations

import json
from typing import Any

from svckit.queue.models import StepState
from svckit.sandbox.workflow.wire import STEP_TYPES_WITH_DELAY

PROGRESS, SUCCESS = StepState.STEP_PROGRESS.value, StepState.STEP_SUCCESS.value
RETRY, FAILED, CANCELED = StepState.STEP_RETRY.value, StepState.STEP_FAILED.value, StepState.STEP_CANCELED.value


def add_initial(db: Any, run_seq: int, message_id: str, out: str, now: int) -> None:
    db.execute("INSERT INTO steps (run_seq, group_no, group_type, step_id, step_name, step_type, call_type, "
               "message_id, out, concurrent, state, created_at) VALUES (?, 0, 'sequential', NULL, 'init', "
               "'Initial', 'step', ?, ?, 1, ?, ?)", (run_seq, message_id, out, SUCCESS, now))


def _last_attempt(db: Any, run_seq: int, now: int) -> int:
    """When the run's latest delivery started: a ``context.run`` step ran during it."""
    row = db.execute("SELECT MAX(e.time) AS t FROM events e JOIN messages m ON m.seq = e.message_seq "
                     "WHERE m.run_seq = ? AND e.state = 'ACTIVE'", (run_seq,)).fetchone()
    return row["t"] or now


def _group(db: Any, run_seq: int, step_id: int, concurrent: int) -> tuple[int, str]:
    """The group a step joins: its own earlier attempts', or a parallel group still filling up that
    holds a step of its group, or a new one."""
    row = db.execute("SELECT group_no, group_type FROM steps WHERE run_seq = ? AND step_id = ? ORDER BY seq LIMIT 1",
                     (run_seq, step_id)).fetchone()
    if row is not None:
        return row["group_no"], row["group_type"]
    if concurrent > 1:  # a group of ``concurrent`` steps holds consecutive ids: a neighbour's group
        row = db.execute("SELECT group_no, COUNT(DISTINCT step_id) AS n FROM steps WHERE run_seq = ? AND "
                         "group_type = 'parallel' AND concurrent = ? AND ABS(step_id - ?) < ? GROUP BY group_no "
                         "ORDER BY group_no DESC LIMIT 1", (run_seq, concurrent, step_id, concurrent)).fetchone()
        if row is not None and row["n"] < concurrent:
            return row["group_no"], "parallel"
    row = db.execute("SELECT MAX(group_no) AS g FROM steps WHERE run_seq = ?", (run_seq,)).fetchone()
    return (row["g"] or 0) + 1, "parallel" if concurrent > 1 else "sequential"


def _insert(db: Any, run_seq: int, step: dict[str, Any], step_id: int, state: str, message_id: str | None,
            out: str | None, created: int) -> None:
    concurrent = int(step.get("concurrent") or 1)
    group, kind = _group(db, run_seq, step_id, concurrent)
    db.execute("INSERT INTO steps (run_seq, group_no, group_type, step_id, step_name, step_type, call_type, "
               "message_id, out, concurrent, state, created_at) VALUES (?, ?, ?, ?, ?, ?, 'step', ?, ?, ?, ?, ?)",
               (run_seq, group, kind, step_id, str(step.get("stepName") or f"step {step_id}"),
                str(step.get("stepType") or "Run"), message_id, out, concurrent, state, created))


def _out(step: dict[str, Any]) -> str | None:
    out = step.get("out")
    return out if out is None or isinstance(out, str) else json.dumps(out)


def known(db: Any, run_seq: int, step: dict[str, Any], message_id: str, now: int) -> None:
    """A step the app announced (a plan, a wait, a call) or will see done on delivery (a sleep)."""
    step_id = int(step.get("targetStep") or step.get("stepId") or 0)
    if step_id and not db.execute("SELECT 1 FROM steps WHERE run_seq = ? AND step_id = ? AND state IN (?, ?)",
                                  (run_seq, step_id, PROGRESS, SUCCESS)).fetchone():
        _insert(db, run_seq, step, step_id, PROGRESS, message_id, None, now)


def result(db: Any, run_seq: int, step: dict[str, Any], message_id: str, now: int, *, delayed: bool) -> None:
    """A step message the app published: a result, or a plan of a parallel step."""
    if not step.get("stepId"):  # a plan (stepId 0, targetStep N)
        known(db, run_seq, step, message_id, now)
        return
    step_id = int(step["stepId"])
    if delayed and step.get("stepType") in STEP_TYPES_WITH_DELAY:
        known(db, run_seq, step, message_id, now)  # done when its delayed message is delivered
        return
    name = str(step.get("stepName") or f"step {step_id}")
    db.execute("UPDATE steps SET step_name = ? WHERE run_seq = ? AND step_id = ? AND state = ?",
               (name, run_seq, step_id, RETRY))  # the Python SDK names no failing step
    _went(db, run_seq, step, step_id, SUCCESS, message_id, _out(step), now, name=name)


def _went(db: Any, run_seq: int, step: dict[str, Any], step_id: int, state: str, message_id: str, out: str | None,
          now: int, *, name: str | None = None) -> None:
    """How step ``step_id`` went (``state``, ``out``): the row shown in progress for it (a parallel
    branch, a sleep ...) says so (under ``name``, if given), else a row is added, from the start of the
    delivery it ran in."""
    shown = db.execute("SELECT seq FROM steps WHERE run_seq = ? AND step_id = ? AND state = ?",
                       (run_seq, step_id, PROGRESS)).fetchone()
    if shown is not None:
        db.execute("UPDATE steps SET state = ?, out = ?, message_id = ?, step_name = COALESCE(?, step_name) "
                   "WHERE seq = ?", (state, out, message_id, name, shown["seq"]))
    else:
        _insert(db, run_seq, step, step_id, state, message_id, out, _last_attempt(db, run_seq, now))


def delivered(db: Any, run_seq: int, message_id: str) -> None:
    """A step message was delivered: a sleep it waited out is done."""
    db.execute("UPDATE steps SET state = ? WHERE run_seq = ? AND message_id = ? AND state = ?",
               (SUCCESS, run_seq, message_id, PROGRESS))


def failed_attempt(db: Any, run_seq: int, name: str | None, error: str, attempt: int, message_id: str, now: int, *,
                   final: bool) -> None:
    """A delivery the app failed (500, a timeout ...): the step it was running (named, or the one after
    the last that succeeded), retried or failed, with the error and which attempt it was."""
    known = None if name is None else db.execute(
        "SELECT step_id, step_type, concurrent FROM steps WHERE run_seq = ? AND step_name = ? AND state IN (?, ?) "
        "ORDER BY seq DESC LIMIT 1", (run_seq, name, PROGRESS, RETRY)).fetchone()
    if known is not None:
        step_id, step_type, concurrent = known["step_id"], known["step_type"], known["concurrent"]
    else:
        row = db.execute("SELECT MAX(step_id) AS last FROM steps WHERE run_seq = ? AND state = ?",
                         (run_seq, SUCCESS)).fetchone()
        step_id, step_type, concurrent = (row["last"] or 0) + 1, "Run", 1
    _went(db, run_seq, {"stepName": name, "stepType": step_type, "concurrent": concurrent}, step_id,
          FAILED if final else RETRY, message_id, json.dumps({"error": error, "attempt": attempt}), now)


def stop_progress(db: Any, run_seq: int, state: str) -> None:
    """The run ended (canceled, failed): its steps still in progress end with it."""
    db.execute("UPDATE steps SET state = ? WHERE run_seq = ? AND state = ?", (state, run_seq, PROGRESS))
