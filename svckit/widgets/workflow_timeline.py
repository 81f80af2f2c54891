"""Workflow-run timeline: filter the workflow logs, see the runs as a Gantt, drill into a run's steps,
resume a failed run from its DLQ entry, act on several DLQ entries at once (delete, resume, restart)
and cancel a running run, each behind a confirmation.

>>> from svckit.widgets.workflow_timeline import WorkflowTimeline     # doctest: +SKIP
>>> WorkflowTimeline(svckit.connect().queue)                         # doctest: +SKIP

Public methods (``refresh()``, ``select_run()``, ``resume_selected()``, ``load_dlq()``,
``dlq_action()``, ``cancel_selected()``) do the work; the button and
click handlers only translate UI events into those calls, so tests and scripts drive the widget the
same way a user does. What the widget shows is mirrored in traits (``run_count``, ``selected_run``,
``status``, ...).

Drawing frames: the widget draws what :func:`svckit.frames.runs_frame` (newest first) and
:func:`svckit.frames.steps_frame` return; the run and step bar rules ("from createdAt to the next
event") live there, not in the widget or the plot.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime, time, timezone
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import traitlets as T

from svckit import frames
from svckit._http import paginate
from svckit.errors import SvcError
from svckit.queue.client import WorkflowRuns
from svckit.queue.models import RunState
from svckit.widgets import _plots

#: what the DLQ panel can do to the ticked entries, and the past tense its messages use.
DLQ_ACTIONS = {"delete": "deleted", "resume": "resumed", "restart": "restarted"}
#: logs pages hold at most 10 runs (spec, Limits); the widget stops after ``max_runs``.
PAGE_SIZE = 10


def _value(x: Any) -> Any:
    """Enum members -> their value (the queue models keep unknown states as plain str)."""
    return getattr(x, "value", x)


def _day_ms(d: date | None, *, end_of_day: bool) -> int | None:
    if d is None:
        return None
    t = time(23, 59, 59, 999000) if end_of_day else time(0)
    return int(datetime.combine(d, t, tzinfo=timezone.utc).timestamp() * 1000)


class WorkflowTimeline(W.VBox):
    """Filters, a Gantt of runs, the selected run's steps with a detail panel, and Resume."""

    # filters (every filter of the logs operation)
    state = T.Unicode("")
    workflow_url = T.Unicode("")
    workflow_run_id = T.Unicode("")
    label = T.Unicode("")
    from_date = T.Any(None)  # datetime.date or None
    to_date = T.Any(None)
    max_runs = T.Int(1000)
    # what is shown
    run_count = T.Int(0)
    pages_loaded = T.Int(0)
    selected_run = T.Unicode(None, allow_none=True)
    status = T.Unicode("")
    error = T.Unicode("")
    # the DLQ panel
    dlq_count = T.Int(0)
    dlq_selected = T.Tuple()  # the DLQ ids ticked in the list
    dlq_pending = T.Unicode(None, allow_none=True)  # the action waiting for its confirmation

    def __init__(self, queue: WorkflowRuns, *, max_runs: int = 1000, now: Callable[[], datetime] | None = None,
                 autoload: bool = True, **kwargs: Any) -> None:
        self.queue = queue
        self._now = now or (lambda: datetime.now(timezone.utc))
        self.runs: list[Any] = []
        self.frame = frames.runs_frame([])
        self.steps_frame = frames.steps_frame([])
        self.last_resume: Any = None
        self.dlq_entries: list[Any] = []
        self.last_dlq_result: Any = None

        self.w_state = W.Dropdown(options=[("any state", "")] + [(s.value, s.value) for s in RunState],
                                  description="state", layout=W.Layout(width="210px"))
        self.w_url = W.Text(placeholder="workflow URL", description="URL", layout=W.Layout(width="320px"))
        self.w_run_id = W.Text(placeholder="run id", description="run id", layout=W.Layout(width="260px"))
        self.w_label = W.Text(placeholder="label", description="label", layout=W.Layout(width="200px"))
        self.w_from = W.DatePicker(description="from", layout=W.Layout(width="210px"))
        self.w_to = W.DatePicker(description="to", layout=W.Layout(width="210px"))
        self.w_max = W.BoundedIntText(value=max_runs, min=PAGE_SIZE, max=100_000, step=100,
                                      description="max runs", layout=W.Layout(width="180px"))
        self.w_load = W.Button(description="Load runs", icon="refresh", button_style="primary")
        self.w_progress = W.IntProgress(value=0, min=0, max=max_runs, layout=W.Layout(width="220px"))
        self.w_progress_label = W.Label("")
        self.w_status = W.HTML("")
        self.gantt = go.FigureWidget()
        self.steps_fig = go.FigureWidget()
        self.detail = W.HTML("<i>Click a run in the chart (or pick it below) to see its steps.</i>")
        self.w_pick = W.Dropdown(options=[], description="run", layout=W.Layout(width="520px"))
        self.w_resume = W.Button(description="Resume…", icon="play", disabled=True,
                                 tooltip="Resume the selected failed run from its DLQ entry")
        self.w_fc_key = W.Text(description="flow key", placeholder="(keep)", layout=W.Layout(width="240px"))
        self.w_fc_value = W.Text(description="flow value", placeholder="(keep)", layout=W.Layout(width="240px"))
        self.w_retries = W.Text(description="retries", placeholder="(keep)", layout=W.Layout(width="160px"))
        self.w_new_run_id = W.Text(description="new run id", placeholder="(keep)", layout=W.Layout(width="280px"))
        self.w_confirm_text = W.HTML("")
        self.w_confirm = W.Button(description="Confirm resume", button_style="danger", icon="check")
        self.w_cancel = W.Button(description="Cancel")
        self.confirm_box = W.VBox(
            [self.w_confirm_text, W.HBox([self.w_fc_key, self.w_fc_value]),
             W.HBox([self.w_retries, self.w_new_run_id]), W.HBox([self.w_confirm, self.w_cancel])],
            layout=W.Layout(display="none", border="1px solid #d62728", padding="6px"))
        self.w_resume_msg = W.HTML("")
        # cancel of a running run, behind a confirmation
        self.w_cancel_run = W.Button(description="Cancel run…", icon="stop", disabled=True,
                                     tooltip="Cancel the selected run while it is in progress")
        self.w_cancel_run_text = W.HTML("")
        self.w_cancel_run_confirm = W.Button(description="Confirm cancel", button_style="danger", icon="check")
        self.w_cancel_run_back = W.Button(description="Back")
        self.cancel_run_box = W.VBox(
            [self.w_cancel_run_text, W.HBox([self.w_cancel_run_confirm, self.w_cancel_run_back])],
            layout=W.Layout(display="none", border="1px solid #d62728", padding="6px"))
        # the DLQ panel: several entries at once, behind a confirmation
        self.w_dlq_load = W.Button(description="Load DLQ", icon="inbox")
        self.w_dlq = W.SelectMultiple(options=[], rows=6, description="DLQ", layout=W.Layout(width="720px"))
        self.w_dlq_buttons = {
            action: W.Button(description=f"{action.capitalize()} selected…", disabled=True,
                             button_style="danger" if action == "delete" else "",
                             tooltip=f"{action} the ticked DLQ entries")
            for action in DLQ_ACTIONS}
        self.w_dlq_confirm_text = W.HTML("")
        self.w_dlq_confirm = W.Button(description="Confirm", button_style="danger", icon="check")
        self.w_dlq_back = W.Button(description="Back")
        self.dlq_confirm_box = W.VBox(
            [self.w_dlq_confirm_text, W.HBox([self.w_dlq_confirm, self.w_dlq_back])],
            layout=W.Layout(display="none", border="1px solid #d62728", padding="6px"))
        self.w_dlq_msg = W.HTML("")

        # links: the controls and the traits are one state
        T.link((self.w_state, "value"), (self, "state"))
        T.link((self.w_url, "value"), (self, "workflow_url"))
        T.link((self.w_run_id, "value"), (self, "workflow_run_id"))
        T.link((self.w_label, "value"), (self, "label"))
        T.link((self.w_from, "value"), (self, "from_date"))
        T.link((self.w_to, "value"), (self, "to_date"))
        T.link((self.w_max, "value"), (self, "max_runs"))
        self.w_load.on_click(lambda _b: self.refresh())
        self.w_pick.observe(self._on_pick, names="value")
        self.w_resume.on_click(lambda _b: self._open_confirm())
        self.w_confirm.on_click(lambda _b: self._on_confirm())
        self.w_cancel.on_click(lambda _b: self._close_confirm())
        self.w_cancel_run.on_click(lambda _b: self._open_cancel_run())
        self.w_cancel_run_confirm.on_click(lambda _b: self._on_cancel_run_confirm())
        self.w_cancel_run_back.on_click(lambda _b: self._close_cancel_run())
        T.link((self.w_dlq, "value"), (self, "dlq_selected"))
        self.observe(self._on_dlq_selected, names="dlq_selected")
        self.w_dlq_load.on_click(lambda _b: self.load_dlq())
        for action, button in self.w_dlq_buttons.items():
            button.on_click(lambda _b, action=action: self._open_dlq_confirm(action))
        self.w_dlq_confirm.on_click(lambda _b: self._on_dlq_confirm())
        self.w_dlq_back.on_click(lambda _b: self._close_dlq_confirm())

        filters = W.VBox([W.HBox([self.w_state, self.w_url, self.w_run_id]),
                          W.HBox([self.w_label, self.w_from, self.w_to, self.w_max]),
                          W.HBox([self.w_load, self.w_progress, self.w_progress_label])])
        resume = W.VBox([W.HBox([self.w_resume, self.w_cancel_run, self.w_resume_msg]), self.confirm_box,
                         self.cancel_run_box])
        dlq = W.VBox([W.HTML("<b>Dead-letter queue</b>"), W.HBox([self.w_dlq_load, *self.w_dlq_buttons.values()]),
                      self.w_dlq, self.dlq_confirm_box, self.w_dlq_msg])
        super().__init__(
            [W.HTML("<h3 style='margin:4px 0'>Workflow runs</h3>"), filters, self.w_status, self.gantt,
             self.w_pick, resume, self.steps_fig, self.detail, dlq],
            **kwargs)
        self.add_class("svckit-workflow-timeline")
        # stable hooks for the browser tests and for user CSS
        for w, css in ((self.w_status, "svckit-run-status"), (self.gantt, "svckit-gantt"),
                       (self.w_pick, "svckit-run-pick"), (self.steps_fig, "svckit-steps-chart"),
                       (self.detail, "svckit-run-detail"), (self.w_resume_msg, "svckit-resume-msg"),
                       (self.confirm_box, "svckit-resume-confirm"), (self.w_dlq, "svckit-dlq-list"),
                       (self.dlq_confirm_box, "svckit-dlq-confirm"), (self.w_dlq_msg, "svckit-dlq-msg"),
                       (self.cancel_run_box, "svckit-cancel-confirm"), (self.w_resume, "svckit-run-resume")):
            w.add_class(css)
        if autoload:
            self.refresh()

    # -- public -----------------------------------------------------------------------------------
    def filters(self) -> dict[str, Any]:
        """The current filters as keyword arguments of ``Queue.workflow_logs``."""
        return {
            "state": self.state or None,
            "workflow_url": self.workflow_url.strip() or None,
            "workflow_run_id": self.workflow_run_id.strip() or None,
            "label": self.label.strip() or None,
            "from_date": _day_ms(self.from_date, end_of_day=False),
            "to_date": _day_ms(self.to_date, end_of_day=True),
        }

    def refresh(self) -> pd.DataFrame:
        """Fetch the runs that match the filters, page by page by cursor (up to ``max_runs``), and
        redraw. Returns the runs frame. Errors are shown in the widget, not raised."""
        filters = {k: v for k, v in self.filters().items() if v is not None}
        runs: list[Any] = []
        cursor = None
        self.pages_loaded = 0
        self.w_progress.max = max(self.max_runs, 1)
        self.w_progress.value = 0
        self.w_progress.bar_style = "info"
        self.error = ""
        try:
            while True:
                page = self.queue.workflow_logs(cursor=cursor, count=PAGE_SIZE, **filters)
                runs.extend(page.runs)
                self.pages_loaded += 1
                self.w_progress.value = min(len(runs), self.max_runs)
                self.w_progress_label.value = f"{len(runs):,} runs, {self.pages_loaded} page(s)"
                cursor = page.cursor
                if not cursor or len(runs) >= self.max_runs:
                    break
        except SvcError as exc:
            self.error = str(exc)
            self.w_progress.bar_style = "danger"
        else:
            self.w_progress.bar_style = "success"
        self.runs = runs[: self.max_runs]
        self.frame = frames.runs_frame(self.runs, newest_first=True)
        self.run_count = len(self.frame)
        more = " (capped: raise max runs to see more)" if cursor and len(runs) >= self.max_runs else ""
        self.status = f"{self.run_count:,} run(s){more}" if not self.error else f"error: {self.error}"
        self.w_status.value = (f"<span style='color:#d62728'>{html.escape(self.status)}</span>" if self.error
                               else html.escape(self.status))
        self.w_pick.unobserve(self._on_pick, names="value")
        self.w_pick.options = [("", None)] + [
            (f"{r.workflow_run_id} · {r.state} · {r.created_at:%Y-%m-%d %H:%M:%S}", r.key)
            for r in self.frame.itertuples()][:5000]
        self.w_pick.observe(self._on_pick, names="value")
        keep = self.selected_run if self.selected_run in set(self.frame["key"]) else None
        self._draw_gantt()
        self.select_run(keep) if keep else self._clear_selection()
        return self.frame

    def select_run(self, run_id: str | None, created_at: int | None = None) -> pd.DataFrame:
        """Select a run by its key (``id@createdAtMs``) or by workflowRunId (plus ``created_at`` in ms
        when several runs share the id; without it the newest is taken). Returns its steps frame."""
        if run_id is None:
            self._clear_selection()
            return self.steps_frame
        row = self._row_of(run_id, created_at)
        if row is None:
            raise KeyError(f"run {run_id!r} is not among the {self.run_count} loaded run(s); adjust the filters")
        key = self.frame.at[row, "key"]
        run = next(r for r in self.runs if frames.run_key(r) == key)
        self.selected_run = key
        self.steps_frame = frames.steps_frame(run, now=self._now())
        self._draw_steps(run)
        self._draw_gantt(selected=row)
        self.w_pick.unobserve(self._on_pick, names="value")
        if key in {v for _, v in self.w_pick.options}:
            self.w_pick.value = key
        self.w_pick.observe(self._on_pick, names="value")
        self._update_resume(run)
        self._close_confirm()
        self.w_cancel_run.disabled = _value(run.workflow_state) != RunState.RUN_STARTED.value
        self._close_cancel_run()
        return self.steps_frame

    def _update_resume(self, run: Any) -> None:
        """Resume is offered only for a failed run that still has a DLQ entry (a resumed run's entry
        is consumed; an old one may have expired)."""
        self.w_resume_msg.value = ""
        if _value(run.workflow_state) != RunState.RUN_FAILED.value:
            self.w_resume.disabled, self.w_resume.tooltip = True, "Only failed runs can be resumed"
            return
        try:
            self.dlq_id_of(run)
        except (LookupError, SvcError) as exc:
            self.w_resume.disabled, self.w_resume.tooltip = True, str(exc)
            self.w_resume_msg.value = f"<span style='color:#6b7280'>{html.escape(str(exc))}</span>"
            return
        self.w_resume.disabled, self.w_resume.tooltip = False, "Resume this run from its DLQ entry"

    @property
    def selected(self) -> Any | None:
        """The selected run model, or None."""
        return next((r for r in self.runs if frames.run_key(r) == self.selected_run), None)

    def dlq_id_of(self, run: Any) -> str:
        """The DLQ id holding a failed run: the run's own ``dlq_id`` when the service sends one, else
        the DLQ entry whose run id and creation time match (paging through ``q.dlq()``)."""
        if getattr(run, "dlq_id", None):
            return run.dlq_id
        for msg in self._iter_dlq():
            if msg.workflow_run_id == run.workflow_run_id and msg.workflow_created_at in (
                    None, run.workflow_run_created_at):
                return msg.dlq_id
        raise LookupError(f"no DLQ entry holds run {run.workflow_run_id} (already resumed, or expired)")

    def _iter_dlq(self) -> Iterator[Any]:
        return paginate(lambda cursor: self.queue.dlq(cursor=cursor), "messages")

    def load_dlq(self) -> pd.DataFrame:
        """Fetch every DLQ entry (page by page) into the DLQ list; ticked entries that are still there
        stay ticked. Returns :func:`svckit.frames.dlq_frame` of them. Errors are shown, not raised."""
        try:
            self.dlq_entries = list(self._iter_dlq())
        except SvcError as exc:
            self.w_dlq_msg.value = f"<span style='color:#d62728'>{html.escape(str(exc))}</span>"
        self.dlq_count = len(self.dlq_entries)
        present = {m.dlq_id for m in self.dlq_entries}
        keep = tuple(d for d in self.dlq_selected if d in present)
        self.w_dlq.options = [(self._dlq_text(m), m.dlq_id) for m in self.dlq_entries]
        self.dlq_selected = keep
        self._on_dlq_selected()
        return frames.dlq_frame(self.dlq_entries)

    @staticmethod
    def _dlq_text(m: Any) -> str:
        entered = f"{m.created:%Y-%m-%d %H:%M:%S}" if getattr(m, "created_at", None) is not None else "?"
        return (f"{m.workflow_run_id or m.message_id} · {m.workflow_url or m.url} · entered {entered}"
                + (f" · {m.label}" if m.label else ""))

    def dlq_action(self, action: str, dlq_ids: Sequence[str] | None = None) -> Any:
        """Delete, resume or restart DLQ entries (``dlq_ids``, default: the ticked ones) in one request
        (no confirmation: calling this IS the confirmation), then reload the runs and the DLQ. Returns
        the service's answer: the number deleted, or the fresh runs."""
        if action not in DLQ_ACTIONS:
            raise ValueError(f"action must be one of {', '.join(DLQ_ACTIONS)}, got {action!r}")
        ids = list(self.dlq_selected if dlq_ids is None else dlq_ids)
        if not ids:
            raise LookupError("tick at least one DLQ entry first")
        if action == "delete":
            result = self.queue.delete_dlq_many(ids)
            text = f"deleted {result} DLQ entr{'y' if result == 1 else 'ies'}"
        else:
            result = getattr(self.queue, f"{action}_many")(ids)
            runs = ", ".join(html.escape(r.workflow_run_id) for r in result)
            text = f"{DLQ_ACTIONS[action]} {len(result)} run(s): <b>{runs}</b>"
        self.last_dlq_result = result
        self.refresh()
        self.load_dlq()
        self.w_dlq_msg.value = f"<span style='color:#2ca02c'>{text}</span>"
        return result

    def cancel_selected(self) -> None:
        """Cancel the selected run, which must be in progress (no confirmation: calling this IS the
        confirmation), then reload the runs and keep it selected."""
        run = self.selected
        if run is None:
            raise LookupError("select a running run first")
        if _value(run.workflow_state) != RunState.RUN_STARTED.value:
            raise ValueError(f"run {run.workflow_run_id} is {_value(run.workflow_state)}; only a run in progress "
                             "can be canceled")
        self.queue.cancel(run.workflow_run_id)
        key = frames.run_key(run)
        self.refresh()
        if self._row_of(key) is not None:
            self.select_run(key)
        self.w_resume_msg.value = (f"<span style='color:#2ca02c'>canceled run "
                                   f"<b>{html.escape(run.workflow_run_id)}</b></span>")

    def resume_selected(self, *, flow_control_key: str | None = None, flow_control_value: str | None = None,
                        retries: int | None = None, run_id: str | None = None) -> Any:
        """Resume the selected failed run (no confirmation: calling this IS the confirmation), then
        refresh and select the new run. Returns the service's ResumeResult."""
        run = self.selected
        if run is None:
            raise LookupError("select a failed run first")
        if _value(run.workflow_state) != RunState.RUN_FAILED.value:
            raise ValueError(f"run {run.workflow_run_id} is {_value(run.workflow_state)}; only failed runs resume")
        dlq_id = self.dlq_id_of(run)
        result = self.queue.resume(dlq_id, flow_control_key=flow_control_key or None,
                                   flow_control_value=flow_control_value or None, retries=retries,
                                   run_id=run_id or None)
        self.last_resume = result
        self.refresh()
        new_key = f"{result.workflow_run_id}@{result.workflow_created_at}"
        found = self._row_of(new_key)
        if found is None:  # the filters hide it (e.g. state=RUN_FAILED): show it anyway
            self.workflow_run_id, self.state = result.workflow_run_id, ""
            self.refresh()
            found = self._row_of(new_key) if self._row_of(new_key) is not None else self._row_of(result.workflow_run_id)
        if found is not None:
            self.select_run(self.frame.at[found, "key"])
        self.w_resume_msg.value = (f"<span style='color:#2ca02c'>resumed from DLQ {html.escape(dlq_id)} as run "
                                   f"<b>{html.escape(result.workflow_run_id)}</b></span>")
        return result

    # -- drawing ----------------------------------------------------------------------------------
    def _row_of(self, run_id: str, created_at: int | None = None) -> int | None:
        if self.frame.empty:
            return None
        if "@" in run_id and created_at is None:
            hits = np.flatnonzero((self.frame["key"] == run_id).to_numpy())
        else:
            mask = (self.frame["workflow_run_id"] == run_id).to_numpy(dtype=bool)
            if created_at is not None:
                mask &= (self.frame["key"] == f"{run_id}@{created_at}").to_numpy()
            hits = np.flatnonzero(mask)
        return int(hits[0]) if len(hits) else None  # frame is newest first

    def _replace(self, target: go.FigureWidget, fig: go.Figure) -> None:
        _plots.show_in(target, fig)

    def _draw_gantt(self, selected: int | None = None) -> None:
        fig = _plots.runs_gantt_figure(self.frame, now=self._now(), selected=selected)
        self._replace(self.gantt, fig)
        for trace in self.gantt.data:
            trace.on_click(self._on_gantt_click)

    def _draw_steps(self, run: Any) -> None:
        title = f"Steps of {run.workflow_run_id} ({_value(run.workflow_state)})"
        self._replace(self.steps_fig, _plots.steps_figure(self.steps_frame, title=title))
        self.detail.value = self._detail_html(run)

    def _detail_html(self, run: Any) -> str:
        e = html.escape
        head = (f"<b>{e(run.workflow_run_id)}</b> · {e(_value(run.workflow_state))} · {e(run.workflow_url)}"
                f"<br>created {run.created_at:%Y-%m-%d %H:%M:%S.%f}"[:-3] + " UTC")
        if run.workflow_run_completed_at is not None:
            head += f" · completed {run.completed_at:%Y-%m-%d %H:%M:%S} UTC"
        if getattr(run, "label", None):
            head += f" · label <code>{e(run.label)}</code>"
        if getattr(run, "dlq_id", None):
            head += f" · DLQ <code>{e(run.dlq_id)}</code>"
        rows = []
        for s in self.steps_frame.itertuples():
            out = "" if s.out is None or pd.isna(s.out) else str(s.out)
            dur = (s.end - s.start).total_seconds()
            rows.append(
                f"<tr><td>{s.group}{'∥' if s.group_type == 'parallel' else ''}</td><td>{s.lane}</td>"
                f"<td>{e(str(s.step_name))}</td><td>{e(str(s.step_type))}</td><td>{e(str(s.state))}</td>"
                f"<td>{s.start:%H:%M:%S.%f}"[:-3] + f"</td><td>{dur:.2f} s{' ⏵ running' if s.running else ''}</td>"
                f"<td>{s.retries}</td><td><code>{e(out[:300])}{'…' if len(out) > 300 else ''}</code></td></tr>")
        table = ("<table class='svckit-steps'><thead><tr><th>group</th><th>lane</th><th>step</th><th>type</th>"
                 "<th>state</th><th>start</th><th>to next event</th><th>retries</th><th>out</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table>")
        return f"<div style='font-size:12px'>{head}{table}</div>"

    def _clear_selection(self) -> None:
        self.selected_run = None
        self.steps_frame = frames.steps_frame([])
        self._replace(self.steps_fig, _plots.steps_figure(self.steps_frame))
        self.detail.value = "<i>Click a run in the chart (or pick it above) to see its steps.</i>"
        self.w_resume.disabled = True
        self.w_cancel_run.disabled = True
        self._close_confirm()
        self._close_cancel_run()

    # -- handlers: UI events -> public methods --------------------------------------------------------
    def _on_gantt_click(self, trace: Any, points: Any, _state: Any) -> None:
        if not points.point_inds:
            return
        row = int(np.asarray(trace.customdata)[points.point_inds[0]])
        self.select_run(self.frame.at[row, "key"])

    def _on_pick(self, change: dict) -> None:
        if change["new"]:
            self.select_run(change["new"])

    def _open_confirm(self) -> None:
        run = self.selected
        if run is None:
            return
        try:
            dlq_id = self.dlq_id_of(run)
        except (LookupError, SvcError) as exc:
            self.w_resume_msg.value = f"<span style='color:#d62728'>{html.escape(str(exc))}</span>"
            return
        self.w_confirm_text.value = (
            f"Resume run <b>{html.escape(run.workflow_run_id)}</b> from DLQ entry <code>{html.escape(dlq_id)}"
            "</code>? Steps that already succeeded keep their results and are not run again. "
            "Leave an override empty to keep the original configuration.")
        self.confirm_box.layout.display = "flex"

    def _close_confirm(self) -> None:
        self.confirm_box.layout.display = "none"

    def _on_dlq_selected(self, _change: Any = None) -> None:
        for button in self.w_dlq_buttons.values():
            button.disabled = not self.dlq_selected
        self._close_dlq_confirm()

    def _open_dlq_confirm(self, action: str) -> None:
        if not self.dlq_selected:
            return
        self.dlq_pending = action
        n = len(self.dlq_selected)
        what = {"delete": "They are removed for good; their runs stay failed and can no longer be resumed.",
                "resume": "Each failed run continues as a fresh run; steps that succeeded are not run again.",
                "restart": "Each failed run starts again from its first step; nothing is kept."}[action]
        self.w_dlq_confirm_text.value = f"{action.capitalize()} <b>{n}</b> DLQ entr{'y' if n == 1 else 'ies'}? {what}"
        self.w_dlq_confirm.description = f"Confirm {action}"
        self.dlq_confirm_box.layout.display = "flex"

    def _close_dlq_confirm(self) -> None:
        self.dlq_pending = None
        self.dlq_confirm_box.layout.display = "none"

    def _on_dlq_confirm(self) -> None:
        action = self.dlq_pending
        if action is None:
            return
        try:
            self.dlq_action(action)
        except (SvcError, LookupError, ValueError) as exc:
            self.w_dlq_msg.value = f"<span style='color:#d62728'>{action} failed: {html.escape(str(exc))}</span>"
        finally:
            self._close_dlq_confirm()

    def _open_cancel_run(self) -> None:
        run = self.selected
        if run is None:
            return
        self.w_cancel_run_text.value = (f"Cancel run <b>{html.escape(run.workflow_run_id)}</b>? The step in "
                                        "flight is marked canceled and no further step runs.")
        self.cancel_run_box.layout.display = "flex"

    def _close_cancel_run(self) -> None:
        self.cancel_run_box.layout.display = "none"

    def _on_cancel_run_confirm(self) -> None:
        try:
            self.cancel_selected()
        except (SvcError, LookupError, ValueError) as exc:
            self.w_resume_msg.value = f"<span style='color:#d62728'>cancel failed: {html.escape(str(exc))}</span>"
        finally:
            self._close_cancel_run()

    def _on_confirm(self) -> None:
        retries_text = self.w_retries.value.strip()
        if retries_text and not retries_text.isdigit():
            self.w_resume_msg.value = "<span style='color:#d62728'>retries must be a whole number</span>"
            return
        try:
            self.resume_selected(flow_control_key=self.w_fc_key.value.strip() or None,
                                 flow_control_value=self.w_fc_value.value.strip() or None,
                                 retries=int(retries_text) if retries_text else None,
                                 run_id=self.w_new_run_id.value.strip() or None)
        except (SvcError, LookupError, ValueError) as exc:
            self.w_resume_msg.value = f"<span style='color:#d62728'>resume failed: {html.escape(str(exc))}</span>"
        finally:
            self._close_confirm()

