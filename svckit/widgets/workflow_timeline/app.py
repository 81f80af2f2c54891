"""The workflow-run timeline: filter the workflow logs, see the runs as a Gantt, drill into a run's
steps, resume a failed run from its DLQ entry, cancel a running one (each behind a confirmation), and
see the failures of the runs shown in the DLQ panel (:mod:`.dlq_panel`), loaded beside the runs and
following the selected run, acting on several entries at once.

Drawing frames: the widget draws what :func:`svckit.frames.runs_frame` (newest first) and
:func:`svckit.frames.steps_frame` return; the run and step bar rules ("from createdAt to the next
event", a resumed run's kept steps) and the runs' names live there, not in the widget or the plot."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._inflight import InFlight
from svckit._progress import Progress
from svckit.errors import SvcError
from svckit.queue.client import WorkflowRuns
from svckit.queue.models import RunState
from svckit.widgets._chart import Chart
from svckit.widgets._common import ConfirmBar, MessageBar, Quiet, message_html, style_widget
from svckit.widgets._plots import runs_gantt_figure, steps_figure
from svckit.widgets._static import StaticView
from svckit.widgets.workflow_timeline.dlq_panel import DlqPanel
from svckit.widgets.workflow_timeline.run_detail import run_detail_html, state_of

#: logs pages hold at most 10 runs (spec, Limits); the widget stops after ``max_runs``
PAGE_SIZE = 10
NO_SELECTION = "<i>Click a run in the chart (or pick it below) to see its steps.</i>"


def _day_ms(d: date | None, *, end_of_day: bool) -> int | None:
    if d is None:
        return None
    t = time(23, 59, 59, 999000) if end_of_day else time(0)
    return int(datetime.combine(d, t, tzinfo=UTC).timestamp() * 1000)


class WorkflowTimeline(StaticView, W.VBox):
    """Filters, a Gantt of runs, the selected run's steps with a detail panel, Resume and Cancel, and the
    DLQ panel. Public methods (``refresh()``, ``select_run()``, ``resume_selected()``, ``load_dlq()``,
    ``dlq_action()``, ``dlq_id_of()``, ``cancel_selected()``) do the work; what is shown is mirrored in
    traits."""

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
    dlq_selected = T.Tuple()
    dlq_pending = T.Unicode(None, allow_none=True)

    def __init__(self, queue: WorkflowRuns, *, max_runs: int = 1000, now: Callable[[], datetime] | None = None,
                 autoload: bool = True, **kwargs: Any) -> None:
        self.queue = queue
        self._now = now or (lambda: datetime.now(UTC))
        self._quiet = Quiet()
        self.runs: list[Any] = []
        self.frame = frames.runs_frame([])
        self.steps_frame = frames.steps_frame([])
        self.last_resume: Any = None
        lay = W.Layout
        self.w_state = W.Dropdown(options=[("any state", "")] + [(s.value, s.value) for s in RunState],
                                  description="state", layout=lay(width="210px"))
        self.w_url = W.Text(placeholder="workflow URL", description="URL", layout=lay(width="320px"))
        self.w_run_id = W.Text(placeholder="run id", description="run id", layout=lay(width="260px"))
        self.w_label = W.Text(placeholder="label", description="label", layout=lay(width="200px"))
        self.w_from = W.DatePicker(description="from", layout=lay(width="210px"))
        self.w_to = W.DatePicker(description="to", layout=lay(width="210px"))
        self.w_max = W.BoundedIntText(value=max_runs, min=PAGE_SIZE, max=100_000, step=100, description="max runs",
                                      layout=lay(width="180px"))
        self.w_load = W.Button(description="Load runs", icon="refresh", button_style="primary",
                               tooltip="Load the runs that match the filters, and their DLQ entries")
        self.w_progress = W.IntProgress(value=0, min=0, max=max_runs, layout=lay(width="220px"))
        self.w_progress_label = W.Label("")
        self.w_status = W.HTML("")
        self.gantt = Chart().add_class("svckit-gantt")
        self.steps_fig = Chart().add_class("svckit-steps-chart")
        self.detail = W.HTML(NO_SELECTION)
        self.w_pick = W.Dropdown(options=[], description="run", layout=lay(width="520px"))
        self.w_resume = W.Button(description="Resume…", icon="play", disabled=True,
                                 tooltip="Resume the selected failed run from its DLQ entry")
        self.w_fc_key = W.Text(description="flow key", placeholder="(keep)", layout=lay(width="240px"))
        self.w_fc_value = W.Text(description="flow value", placeholder="(keep)", layout=lay(width="240px"))
        self.w_retries = W.Text(description="retries", placeholder="(keep)", layout=lay(width="160px"))
        self.w_new_run_id = W.Text(description="new run id", placeholder="(keep)", layout=lay(width="280px"))
        self.confirm_box = ConfirmBar([W.HBox([self.w_fc_key, self.w_fc_value]),
                                       W.HBox([self.w_retries, self.w_new_run_id])])
        self.w_confirm, self.w_cancel = self.confirm_box.confirm_button, self.confirm_box.cancel_button
        self.w_confirm_text = self.confirm_box.question
        self.w_resume_msg = MessageBar()
        self.w_cancel_run = W.Button(description="Cancel run…", icon="stop", disabled=True,
                                     tooltip="Cancel the selected run while it is in progress")
        self.cancel_run_box = ConfirmBar(cancel_label="Back")
        self.w_cancel_run_confirm, self.w_cancel_run_back = (self.cancel_run_box.confirm_button,
                                                             self.cancel_run_box.cancel_button)
        self.w_cancel_run_text = self.cancel_run_box.question
        self.dlq_panel = DlqPanel(queue)
        self.dlq_panel.on_changed = self.refresh
        for w, css in ((self.w_status, "svckit-run-status"), (self.w_pick, "svckit-run-pick"),
                       (self.detail, "svckit-run-detail"), (self.w_resume_msg, "svckit-resume-msg"),
                       (self.confirm_box, "svckit-resume-confirm"), (self.cancel_run_box, "svckit-cancel-confirm"),
                       (self.w_resume, "svckit-run-resume")):
            w.add_class(css)
        filters = W.VBox([W.HBox([self.w_state, self.w_url, self.w_run_id]),
                          W.HBox([self.w_label, self.w_from, self.w_to, self.w_max]),
                          W.HBox([self.w_load, self.w_progress, self.w_progress_label])])
        actions = W.VBox([W.HBox([self.w_resume, self.w_cancel_run, self.w_resume_msg]), self.confirm_box,
                          self.cancel_run_box])
        super().__init__([style_widget(), W.HTML("<h3 style='margin:4px 0'>Workflow runs</h3>"), filters,
                          self.w_status, self.gantt, self.w_pick, actions, self.steps_fig, self.detail, self.dlq_panel],
                         **kwargs)
        self.add_class("svckit-workflow-timeline")
        for w, name in ((self.w_state, "state"), (self.w_url, "workflow_url"), (self.w_run_id, "workflow_run_id"),
                        (self.w_label, "label"), (self.w_from, "from_date"), (self.w_to, "to_date"),
                        (self.w_max, "max_runs")):
            T.link((w, "value"), (self, name))
        for name in ("dlq_count", "dlq_selected", "dlq_pending"):
            T.link((self, name), (self.dlq_panel, name))
        self.w_load.on_click(lambda _b: self.refresh())
        self.w_pick.observe(self._on_pick, names="value")
        self.gantt.on_click(self._on_gantt_click)
        self.w_resume.on_click(lambda _b: self._ask_resume())
        self.w_cancel_run.on_click(lambda _b: self._ask_cancel())
        if autoload:
            self.refresh()

    # -- loading and selecting -------------------------------------------------------------------
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

    def dlq_filters(self) -> dict[str, Any]:
        """The filters of the runs that the DLQ takes too (URL, run id, label): its entries of the runs
        shown."""
        f = self.filters()
        return {k: f[k] for k in ("workflow_url", "workflow_run_id", "label") if f[k] is not None}

    def refresh(self) -> pd.DataFrame:
        """Fetch the runs that match the filters, page by page by cursor (up to ``max_runs``), and
        their DLQ entries, and redraw. Returns the runs frame. Errors are shown in the widget, not raised.

        The pages are a cursor chain (``Queue.iter_runs``), one round trip each (1,000 runs are 100
        requests, the fewest the spec's 10 runs a page allow); the DLQ's pages (100 entries each) are
        read beside it, on a worker, so they add no round trip of their own."""
        filters = {k: v for k, v in self.filters().items() if v is not None}
        self._aim_dlq()
        runs: list[Any] = []
        self.pages_loaded, self.error = 0, ""
        self.w_progress.max, self.w_progress.value, self.w_progress.bar_style = max(self.max_runs, 1), 0, "info"
        # no total: the logs operation does not say how many runs match
        listed = self.queue.iter_runs(self._show_progress, limit=self.max_runs, count=PAGE_SIZE, **filters)
        with InFlight(limit=1) as beside:
            dlq = beside.submit(self.dlq_panel.fetch)
            try:
                runs.extend(listed)  # what was read before a refusal stays in ``runs``
            except SvcError as exc:
                self.error = str(exc)
        self.w_progress.bar_style = "danger" if self.error else "success"
        self.runs = runs
        self.frame = frames.runs_frame(self.runs, newest_first=True)
        self.run_count = len(self.frame)
        more = "" if self.error or listed.complete else " (capped: raise max runs to see more)"
        self.status = f"error: {self.error}" if self.error else f"{self.run_count:,} run(s){more}"
        self.w_status.value = message_html(self.status, "error" if self.error else "info")
        self.dlq_panel.show(*dlq.result(), runs=self.frame)
        with self._quiet:
            self.w_pick.options = [("", None)] + [
                (f"{r.run_name} · {r.state} · {r.created_at:%Y-%m-%d %H:%M:%S}", r.key)
                for r in self.frame.itertuples()][:5000]
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
        key, name = self.frame.at[row, "key"], self.frame.at[row, "run_name"]
        run = next(r for r in self.runs if frames.run_key(r) == key)
        changed, self.selected_run = key != self.selected_run, key
        self.steps_frame = frames.steps_frame(run, now=self._now())
        self.steps_fig.show(steps_figure(self.steps_frame, title=f"Steps of {name} ({state_of(run.workflow_state)})"))
        self.detail.value = run_detail_html(run, self.steps_frame, name)
        self._draw_gantt(selected=row)
        self.dlq_panel.follow(key, tick=changed)  # a refresh keeps the entries ticked by hand
        with self._quiet:
            if key in {v for _, v in self.w_pick.options}:
                self.w_pick.value = key
        self._update_resume(run)
        self.confirm_box.cancel()
        self.w_cancel_run.disabled = state_of(run.workflow_state) != RunState.RUN_STARTED.value
        self.cancel_run_box.cancel()
        return self.steps_frame

    @property
    def selected(self) -> Any | None:
        """The selected run model, or None."""
        return next((r for r in self.runs if frames.run_key(r) == self.selected_run), None)

    # -- acting on the selected run ---------------------------------------------------------------
    def resume_selected(self, *, flow_control_key: str | None = None, flow_control_value: str | None = None,
                        retries: int | None = None, run_id: str | None = None) -> Any:
        """Resume the selected failed run (no confirmation: calling this IS the confirmation), then
        refresh and select the new run. Returns the service's ResumeResult."""
        run = self.selected
        if run is None:
            raise LookupError("select a failed run first")
        if state_of(run.workflow_state) != RunState.RUN_FAILED.value:
            raise ValueError(f"run {run.workflow_run_id} is {state_of(run.workflow_state)}; only failed runs resume")
        dlq_id = self.dlq_panel.dlq_id_of(run)
        result = self.queue.resume(dlq_id, flow_control_key=flow_control_key or None,
                                   flow_control_value=flow_control_value or None, retries=retries,
                                   run_id=run_id or None)
        self.last_resume = result
        # the old run is not selected again by the refresh: its DLQ entry is consumed, so selecting it
        # would page through the whole DLQ (to offer Resume) only to select the new run right after
        self.selected_run = None
        self.refresh()
        new_key = f"{result.workflow_run_id}@{result.workflow_created_at}"
        found = self._row_of(new_key)
        if found is None:  # the filters hide it (e.g. state=RUN_FAILED): show it anyway
            self.workflow_run_id, self.state = result.workflow_run_id, ""
            self.refresh()
            found = self._row_of(new_key) if self._row_of(new_key) is not None else self._row_of(result.workflow_run_id)
        if found is not None:
            self.select_run(self.frame.at[found, "key"])
        self.w_resume_msg.say(f"resumed from DLQ {dlq_id} as run {result.workflow_run_id}", "ok")
        return result

    def cancel_selected(self) -> None:
        """Cancel the selected run, which must be in progress (no confirmation: calling this IS the
        confirmation), then reload the runs and keep it selected."""
        run = self.selected
        if run is None:
            raise LookupError("select a running run first")
        if state_of(run.workflow_state) != RunState.RUN_STARTED.value:
            raise ValueError(f"run {run.workflow_run_id} is {state_of(run.workflow_state)}; only a run in progress "
                             "can be canceled")
        self.queue.cancel(run.workflow_run_id)
        key = frames.run_key(run)
        self.refresh()
        if self._row_of(key) is not None:
            self.select_run(key)
        self.w_resume_msg.say(f"canceled run {run.workflow_run_id}", "ok")

    # -- the DLQ panel -------------------------------------------------------------------------------
    def load_dlq(self) -> pd.DataFrame:
        """Reload the DLQ entries of the runs that match the filters (``refresh()`` loads them too)."""
        self._aim_dlq()
        return self.dlq_panel.load_dlq()

    def dlq_action(self, action: str, dlq_ids: Any = None) -> Any:
        return self.dlq_panel.dlq_action(action, dlq_ids)

    def _aim_dlq(self) -> None:
        """The DLQ panel lists the entries of the runs that match the filters, as many as the runs."""
        self.dlq_panel.filters, self.dlq_panel.limit = self.dlq_filters(), self.max_runs

    def close(self) -> None:
        """Drop a DLQ look-up under way, then close the widget."""
        self.dlq_panel.lookup_job.close()
        super().close()

    # -- drawing ----------------------------------------------------------------------------------------
    def _show_progress(self, step: Progress) -> None:
        self.pages_loaded = step.round_trips or 0
        self.w_progress.value = step.done
        self.w_progress_label.value = " · ".join([f"{step.done:,} runs", *step.notes()])

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

    def _draw_gantt(self, selected: int | None = None) -> None:
        self.gantt.show(runs_gantt_figure(self.frame, now=self._now(), selected=selected))

    def _update_resume(self, run: Any) -> None:
        """Resume is offered only for a failed run that still has a DLQ entry (a resumed run's entry
        is consumed; an old one may have expired). An entry not among those loaded is looked up on a
        background job (:meth:`DlqPanel.look_up`): the click that selected the run returns at once."""
        self.w_resume_msg.say("")
        if state_of(run.workflow_state) != RunState.RUN_FAILED.value:
            self.w_resume.disabled, self.w_resume.tooltip = True, "Only failed runs can be resumed"
            return
        key = frames.run_key(run)
        if self.dlq_panel.known_dlq_id(run) is not None or self.dlq_panel.complete:
            self._offer_resume(key, self.dlq_panel.known_dlq_id(run))
            return
        self.w_resume.disabled, self.w_resume.tooltip = True, "looking for its DLQ entry…"
        self.w_resume_msg.say("looking for its DLQ entry among those not loaded…")
        self.dlq_panel.look_up(run, lambda dlq_id, error: self._offer_resume(key, dlq_id, error))

    def _offer_resume(self, key: str, dlq_id: str | None, error: str = "") -> None:
        """Enable Resume for run ``key`` (if it is still the one selected) when its entry was found."""
        if key != self.selected_run:
            return
        if dlq_id is None:
            run_id = key.rsplit("@", 1)[0]
            why = error or f"no DLQ entry holds run {run_id} (already resumed, or expired)"
            self.w_resume.disabled, self.w_resume.tooltip = True, why
            self.w_resume_msg.say(why)
            return
        self.w_resume_msg.say("")
        self.w_resume.disabled, self.w_resume.tooltip = False, "Resume this run from its DLQ entry"

    def _clear_selection(self) -> None:
        self.selected_run = None
        self.steps_frame = frames.steps_frame([])
        self.steps_fig.show(steps_figure(self.steps_frame))
        self.detail.value = NO_SELECTION
        self.dlq_panel.follow(None)
        self.w_resume.disabled = self.w_cancel_run.disabled = True
        self.confirm_box.cancel()
        self.cancel_run_box.cancel()

    # -- handlers: UI events -> public methods ----------------------------------------------------------
    def _on_gantt_click(self, trace: Any, points: Any, _state: Any) -> None:
        if not points.point_inds:
            return
        row = int(np.asarray(trace.customdata)[points.point_inds[0]])
        self.select_run(self.frame.at[row, "key"])

    def _on_pick(self, change: dict) -> None:
        if not self._quiet and change["new"]:
            self.select_run(change["new"])

    def _ask_resume(self) -> None:
        run = self.selected
        if run is None:
            return
        try:
            dlq_id = self.dlq_panel.dlq_id_of(run)
        except (LookupError, SvcError) as exc:
            self.w_resume_msg.say(str(exc), "error")
            return
        self.confirm_box.ask(
            f"Resume run <b>{html.escape(run.workflow_run_id)}</b> from DLQ entry <code>{html.escape(dlq_id)}</code>? "
            "Steps that already succeeded keep their results and are not run again. Leave an override empty to keep "
            "the original configuration.", self._resume_confirmed, "Confirm resume", html_question=True)

    def _resume_confirmed(self) -> None:
        retries_text = self.w_retries.value.strip()
        if retries_text and not retries_text.isdigit():
            self.w_resume_msg.say("retries must be a whole number", "error")
            return
        try:
            self.resume_selected(flow_control_key=self.w_fc_key.value.strip() or None,
                                 flow_control_value=self.w_fc_value.value.strip() or None,
                                 retries=int(retries_text) if retries_text else None,
                                 run_id=self.w_new_run_id.value.strip() or None)
        except (SvcError, LookupError, ValueError) as exc:
            self.w_resume_msg.say(f"resume failed: {exc}", "error")

    def _ask_cancel(self) -> None:
        run = self.selected
        if run is not None:
            self.cancel_run_box.ask(f"Cancel run <b>{html.escape(run.workflow_run_id)}</b>? The step in flight is "
                                    "marked canceled and no further step runs.", self._cancel_confirmed,
                                    "Confirm cancel", html_question=True)

    def _cancel_confirmed(self) -> None:
        try:
            self.cancel_selected()
        except (SvcError, LookupError, ValueError) as exc:
            self.w_resume_msg.say(f"cancel failed: {exc}", "error")
