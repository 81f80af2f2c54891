"""A served run's history: the step messages its app published, in order (the ``history`` table)."""

from __future__ import annotations

from typing import Any

from svckit.sandbox.workflow import steps
from svckit.sandbox.workflow.wire import step_of


def append_entry(db: Any, run_seq: int, message_id: str, body: bytes, now: int, *, delayed: bool) -> int:
    """A step message joins the run's history (and its log, :mod:`.steps`); its place in the history."""
    no = db.execute("SELECT COALESCE(MAX(no), 0) + 1 AS n FROM history WHERE run_seq = ?", (run_seq,)).fetchone()["n"]
    db.execute("INSERT INTO history (run_seq, no, message_id, body) VALUES (?, ?, ?, ?)", (run_seq, no, message_id, body))
    step = step_of(body)
    if step is not None:
        steps.result(db, run_seq, step, message_id, now, delayed=delayed)
    return int(no)
