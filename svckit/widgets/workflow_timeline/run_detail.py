"""What the timeline says about one run: its header and its steps as a table."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from svckit._units import duration_text
from svckit.queue.models import RunState
from svckit.widgets._common import badge
from svckit.widgets._plots import STATE_COLORS
from svckit.widgets._plots.runs import KEPT

#: the badge of the step still running: the Gantt's colour of a started run
RUNNING_COLOR = STATE_COLORS[RunState.RUN_STARTED]
#: the badge of a kept step: a darker green than its mark in the chart, so its white text reads
KEPT_BADGE = "#3f7d20"


def state_of(x: Any) -> Any:
    """Enum members -> their value (the queue models keep unknown states as plain str)."""
    return getattr(x, "value", x)


def run_detail_html(run: Any, steps: pd.DataFrame, name: str | None = None) -> str:
    """The run's name (``name``: the Gantt's) and id, state, URL, times, label and DLQ id, then one row
    per step (``steps`` is :func:`svckit.frames.steps_frame` of the run). A step kept from the run this
    one was resumed from shows when it ran there, and a "kept" badge where a duration would be."""
    e = html.escape
    title = f"<b>{e(name)}</b> · {e(run.workflow_run_id)}" if name else f"<b>{e(run.workflow_run_id)}</b>"
    head = (f"{title} · {e(state_of(run.workflow_state))} · {e(run.workflow_url)}"
            f"<br>created {run.created_at:%Y-%m-%d %H:%M:%S.%f}"[:-3] + " UTC")
    if run.workflow_run_completed_at is not None:
        head += f" · completed {run.completed_at:%Y-%m-%d %H:%M:%S} UTC"
    if getattr(run, "label", None):
        head += f" · label <code>{e(run.label)}</code>"
    if getattr(run, "dlq_id", None):
        head += f" · DLQ <code>{e(run.dlq_id)}</code>"
    rows = []
    for s in steps.itertuples():
        out = "" if s.out is None or pd.isna(s.out) else str(s.out)
        dur = badge("kept", KEPT_BADGE, title=f"{KEPT}: not run again") if s.kept else \
            duration_text((s.end - s.start).total_seconds())
        running = " " + badge("running", RUNNING_COLOR) if s.running else ""
        rows.append(
            f"<tr><td>{s.group}{' parallel' if s.group_type == 'parallel' else ''}</td><td>{s.lane}</td>"
            f"<td>{e(str(s.step_name))}</td><td>{e(str(s.step_type))}</td><td>{e(str(s.state))}</td>"
            f"<td>{s.created_at:%H:%M:%S.%f}"[:-3] + f"</td><td style='white-space:nowrap'>{dur}{running}</td>"
            f"<td>{s.retries}</td><td style='white-space:normal;overflow-wrap:anywhere'>"
            f"<code>{e(out[:300])}{'…' if len(out) > 300 else ''}</code></td></tr>")
    table = ("<table class='svckit-steps svc-table'><thead><tr><th>group</th><th>lane</th><th>step</th><th>type</th>"
             "<th>state</th><th>start</th><th>to next event</th><th>retries</th><th>out</th></tr></thead>"
             f"<tbody>{''.join(rows)}</tbody></table>")
    return f"<div style='font-size:12px'>{head}{table}</div>"
