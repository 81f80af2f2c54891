"""The explorer's Bulk tab: act on every key under a pattern or a key-tree node. A dry run counts and
samples what an action will touch (:func:`svckit.kv.plan_bulk`); the run (delete, set or clear TTL,
export) asks first, then works in pipelines as a background job with a progress bar and Cancel
(:func:`svckit.kv.run_bulk`). A Read Only token may do neither.

As a console would: the default action writes nothing (an export to a DataFrame), **Run…** stays
disabled until a dry run of the current pattern, type and action has been made (and is disabled
again when one of them changes), the dry run counts in the browser's words (the same pattern, and
"so far" only where the walk stopped early), and exported values are shown as JSON."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._units import plural
from svckit.errors import SvcError
from svckit.kv.bulk import BulkPlan, BulkSummary, pattern_for_prefix, plan_bulk, run_bulk
from svckit.kv.keyspace import describe_keys
from svckit.widgets._common import ConfirmBar, error_text, frame_html, message_html, muted_html, positive
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets.kv_explorer.listing import keys_table_html, scan_text

BULK_READONLY_REFUSAL = ("Bulk actions are disabled: the Read Only token may not SCAN the keyspace nor write keys. "
                         "Connect with the Standard token (SVC_KV_TOKEN) to use them.")
#: The tab's actions: label -> (bulk action, export format)
BULK_ACTIONS: dict[str, tuple[str, str | None]] = {
    "delete": ("delete", None), "set TTL": ("expire", None), "clear TTL": ("persist", None),
    "export CSV": ("export", "csv"), "export JSON lines": ("export", "jsonl"), "export DataFrame": ("export", "frame"),
}


def json_cell(value: Any) -> str:
    """An exported value as JSON text (a string as it is), cut like any cell."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return html.escape(text if len(text) <= 300 else text[:300] + "…")


#: the Run button's colour by what the action does: red where it removes keys, amber where it changes them
RUN_STYLE = {"delete": "danger", "expire": "warning", "persist": "warning", "export": "primary"}
#: what each state's text is drawn as
STATE_KIND = {"failed": "error", "cancelled": "error", "done": "ok"}


class BulkState(T.HasTraits):
    """The Bulk tab's target, action and state (the explorer shows the same traits)."""

    bulk_pattern = T.Unicode("*", help="pattern the tab acts on: the current pattern or a key-tree node")
    bulk_action = T.Unicode("export DataFrame", help="a key of BULK_ACTIONS (the default writes nothing)")
    bulk_ttl = T.Int(3600)
    bulk_batch = T.Int(500, help="keys per pipeline")
    bulk_state = T.Unicode("idle", help="idle, planning, planned, running, done, cancelled or failed")
    bulk_text = T.Unicode("", help="the dry run's or the run's summary, as shown")

    @T.validate("bulk_action")
    def _known_action(self, proposal: Any) -> str:
        if proposal["value"] not in BULK_ACTIONS:
            raise T.TraitError(f"unknown bulk action {proposal['value']!r}: choose one of {', '.join(BULK_ACTIONS)}")
        return proposal["value"]

    @T.validate("bulk_ttl", "bulk_batch")
    def _positive(self, proposal: Any) -> int:
        return positive(proposal)


class BulkPanel(BulkState, W.VBox):
    """``bulk_dry_run()`` then ``bulk_run()`` (the Run button asks first); ``on_deleted()`` is called
    after a delete run, so the key list can be refreshed."""

    readonly = T.Bool(False)
    type_filter = T.Unicode("")
    scan_count = T.Int(10_000)

    def __init__(self, kv: Any, **kwargs: Any) -> None:
        self.kv = kv
        self.bulk_plan: BulkPlan | None = None
        self._planned_for: tuple[Any, ...] | None = None  # (pattern, type, action) the dry run was made for
        self.bulk_summary: BulkSummary | None = None
        self.bulk_frame: pd.DataFrame | None = None
        self.bulk_error = ""
        self.on_deleted: Callable[[], Any] = lambda: None
        lay = W.Layout
        self.bulk_target = W.HTML()
        self.bulk_action_box = W.Dropdown(options=list(BULK_ACTIONS), value="export DataFrame", description="Action",
                                          layout=lay(width="250px"))
        self.bulk_ttl_box = W.BoundedIntText(value=3600, min=1, max=10**9, description="TTL (s)",
                                             layout=lay(width="170px", display="none"))
        self.bulk_path_box = W.Text(value="kv-export.csv", description="File", layout=lay(width="280px", display="none"))
        self.bulk_dry_button = W.Button(description="Dry run", icon="search", layout=lay(width="100px"))
        self.bulk_run_button = W.Button(description="Run…", icon="play", button_style=RUN_STYLE["export"],
                                        layout=lay(width="90px"))
        self.bulk_cancel_button = W.Button(description="Cancel", icon="stop", disabled=True, layout=lay(width="90px"))
        self.bulk_progress = W.IntProgress(value=0, min=0, max=1, layout=lay(width="260px"))
        self.bulk_progress_label = W.HTML()
        self.bulk_confirm = ConfirmBar()
        self.bulk_sample = W.HTML()
        self.bulk_result = W.HTML()
        for w, css in ((self.bulk_target, "svc-bulk-target"), (self.bulk_sample, "svc-bulk-sample"),
                       (self.bulk_result, "svc-bulk-result")):
            w.add_class(css)
        self.job = BackgroundJob(self.bulk_progress, self.bulk_progress_label, name="svckit-bulk")
        row = lay(flex_flow="row wrap", align_items="center")
        super().__init__([self.bulk_target,
                          W.HBox([self.bulk_action_box, self.bulk_ttl_box, self.bulk_path_box], layout=row),
                          W.HBox([self.bulk_dry_button, self.bulk_run_button, self.bulk_cancel_button,
                                  self.bulk_progress, self.bulk_progress_label], layout=row),
                          self.bulk_confirm, self.bulk_result,
                          W.Box([self.bulk_sample], layout=lay(max_height="300px", overflow="auto"))], **kwargs)
        self.add_class("svc-bulk")
        T.link((self.bulk_action_box, "value"), (self, "bulk_action"))
        T.link((self.bulk_ttl_box, "value"), (self, "bulk_ttl"))
        self.bulk_dry_button.on_click(lambda _b: self.bulk_dry_run(background=True))
        self.bulk_run_button.on_click(lambda _b: self._ask())
        self.bulk_cancel_button.on_click(lambda _b: self.bulk_cancel())
        self.observe(self._on_pattern, names=["bulk_pattern", "type_filter"])
        self.observe(self._on_state, names=["bulk_state", "readonly"])
        self.observe(self._on_text, names="bulk_text")
        self._on_pattern()
        self._on_state()

    # -- public ---------------------------------------------------------------------------------------
    @property
    def bulk_running(self) -> bool:
        return self.job.running

    @property
    def bulk_ready(self) -> bool:
        """True when a complete dry run of the current pattern, type and action has been made."""
        return self.bulk_plan is not None and self._planned_for == self._selection()

    def bulk_node(self, prefix: str, delimiter: str = ":") -> None:
        """Aim the tab at a key-tree node: every key under ``prefix`` (glob characters escaped)."""
        self.bulk_pattern = pattern_for_prefix(prefix, delimiter)

    def bulk_wait(self, timeout: float | None = None) -> bool:
        """Wait for a background dry run or run; True when none is running any more."""
        return self.job.wait(timeout)

    def bulk_cancel(self) -> None:
        """Stop the dry run or run in progress between two SCAN calls or batches."""
        self.job.cancel()

    def bulk_dry_run(self, background: bool = False) -> BulkPlan | None:
        """Count and sample the keys matching ``bulk_pattern`` (SCAN in bounded steps, progress on the
        bar); writes nothing. ``background=True`` runs it as a background job (the button does)."""
        if self._refused():
            return None
        pattern, key_type = self.bulk_pattern, self.type_filter or None
        self.bulk_state, self.bulk_error, self.bulk_plan, self._planned_for = "planning", "", None, None
        selection = self._selection()
        self.bulk_text = f"Dry run: scanning for {pattern}…"
        self.bulk_sample.value = ""

        def work(progress: Any, cancel: threading.Event) -> tuple[BulkPlan, list[Any]]:
            plan = plan_bulk(self.kv, pattern, type=key_type, sample=20, scan_count=self.scan_count, cancel=cancel,
                             progress=progress)
            return plan, describe_keys(self.kv, plan.sample, lengths=False)

        self.job.start(work, on_done=lambda result: self._planned(result, selection), on_error=self._failed,
                       background=background)
        return self.bulk_plan

    def bulk_run(self, background: bool = False) -> BulkSummary | None:
        """Run ``bulk_action`` on every key matching ``bulk_pattern`` in pipelines of ``bulk_batch`` keys
        (``bulk_cancel()`` stops between batches). The result lands in ``bulk_summary`` / ``bulk_text``
        (and ``bulk_frame`` for a DataFrame export). Not confirmed here: the Run button asks first."""
        if self._refused():
            return None
        action, fmt = BULK_ACTIONS[self.bulk_action]
        plan = self.bulk_plan if self.bulk_plan is not None and self.bulk_plan.pattern == self.bulk_pattern else None
        target: str | BulkPlan = plan if plan is not None else self.bulk_pattern
        key_type = None if plan is not None else self.type_filter or None
        path = self.bulk_path_box.value if fmt in ("csv", "jsonl") else None
        self.bulk_state, self.bulk_error, self.bulk_summary = "running", "", None
        self.bulk_text = f"Running {self.bulk_action} on {self.bulk_pattern}…"

        def work(progress: Any, cancel: threading.Event) -> BulkSummary:
            return run_bulk(self.kv, action, target, type=key_type, seconds=self.bulk_ttl, format=fmt or "jsonl",
                            path=path, batch=self.bulk_batch, scan_count=self.scan_count, cancel=cancel,
                            progress=progress)

        self.job.start(work, on_done=lambda summary: self._ran(action, summary), on_error=self._failed,
                       background=background)
        return self.bulk_summary

    # -- results ----------------------------------------------------------------------------------------
    def _selection(self) -> tuple[Any, ...]:
        return (self.bulk_pattern, self.type_filter, self.bulk_action)

    def _planned(self, result: tuple[BulkPlan, list[Any]], selection: tuple[Any, ...]) -> None:
        plan, infos = result
        self.bulk_plan = plan
        if plan.complete:
            self.bulk_progress.value = self.bulk_progress.max
            self._planned_for = selection
        self.bulk_sample.value = (muted_html("Sample of the keys it will touch")
                                  + keys_table_html(frames.keys_frame(infos), drop=["length"]))
        total = plan.total or 0
        counted = scan_text(plan.count, plan.pattern, total, total, plan.complete) if plan.complete and total else (
            f"{plural(plan.count, 'key')} matching {plan.pattern}")
        self.bulk_progress_label.value = muted_html(counted)
        stopped = "" if plan.complete else " so far (cancelled before the end: at least that many)"
        calls = plural(plan.calls, "SCAN call")
        self.bulk_state = "planned" if plan.complete else "cancelled"
        self.bulk_text = (f"Dry run: {counted}{stopped} · {calls} in {plan.elapsed:.1f} s. "
                          + ("Run… is enabled: it asks before it acts." if plan.complete else "Dry run again to Run."))

    def _ran(self, action: str, summary: BulkSummary) -> None:
        self.bulk_summary, self.bulk_frame = summary, summary.frame
        if summary.frame is not None:
            self.bulk_sample.value = muted_html("Exported (first rows)") + frame_html(
                summary.frame, max_rows=20, formatters={"value": json_cell})
        self.bulk_plan, self._planned_for = None, None  # the keyspace may have changed: dry run again
        self.bulk_state = "cancelled" if summary.cancelled else "done"
        self.bulk_text = summary.text()
        errors = "".join(f"<br>{html.escape(str(k))}: {html.escape(v)}" for k, v in list(summary.errors.items())[:5])
        if errors:
            self.bulk_result.value += f'<div class="svc-msg error">First errors:{errors}</div>'
        if action == "delete":
            self.on_deleted()

    def _failed(self, exc: BaseException) -> None:
        self.bulk_error = error_text(exc) if isinstance(exc, SvcError) else f"{type(exc).__name__}: {error_text(exc)}"
        what = "Dry run" if self.bulk_state == "planning" else self.bulk_action
        self.bulk_state = "failed"
        self.bulk_text = f"{what} failed: {self.bulk_error}"

    # -- asking and refusing ----------------------------------------------------------------------------
    def _refused(self) -> bool:
        if self.readonly:
            self.bulk_state, self.bulk_error = "failed", BULK_READONLY_REFUSAL
            self.bulk_text = BULK_READONLY_REFUSAL
            return True
        if self.bulk_running:
            self.bulk_result.value = message_html("A bulk dry run or run is already in progress: wait for it or "
                                                  "cancel it.", "error")
            return True
        return False

    def _question(self) -> str:
        action, fmt = BULK_ACTIONS[self.bulk_action]
        n = f"{self.bulk_plan.count:,}" if self.bulk_plan is not None else "every"
        what = {"delete": f"Delete {n} keys", "expire": f"Set a TTL of {self.bulk_ttl:,} s on {n} keys",
                "persist": f"Clear the TTL of {n} keys", "export": f"Export {n} keys"}[action]
        where = f" to {self.bulk_path_box.value}" if fmt in ("csv", "jsonl") else ""
        undo = " This cannot be undone." if action == "delete" else ""
        return f"{what} matching {self.bulk_pattern}{where}?{undo}"

    def _ask(self) -> None:
        if self._refused():
            return
        if not self.bulk_ready:
            self.bulk_text = "Run a dry run first: it counts and samples what the action will touch."
            return
        self.bulk_confirm.ask(self._question(), lambda: self.bulk_run(background=True), "Run")

    # -- handlers -----------------------------------------------------------------------------------------
    def _on_pattern(self, _change: Any = None) -> None:
        # a dry run counted another pattern: it says nothing about this one
        self.bulk_plan, self._planned_for = None, None
        if self.bulk_state in ("planned", "done", "cancelled", "failed"):
            self.bulk_state, self.bulk_text = "idle", ""
            self.bulk_sample.value = self.bulk_result.value = ""
        self.bulk_target.value = (f"<div>Bulk actions on every key matching <code>{html.escape(self.bulk_pattern)}"
                                  "</code> <span class='svc-muted'>(the pattern above, or the node picked in the "
                                  "Key tree). Dry run first: it counts and samples what will be touched.</span></div>")

    @T.observe("bulk_action")
    def _action_changed(self, change: Any) -> None:
        action, fmt = BULK_ACTIONS[change["new"]]
        self.bulk_run_button.button_style = RUN_STYLE[action]
        if self.bulk_state == "planned":  # the dry run was made for another action: make it again
            self.bulk_state = "idle"
            self.bulk_text = f"The action is now {change['new']}: make a dry run of it, then Run…"
        self.bulk_ttl_box.layout.display = "flex" if action == "expire" else "none"
        self.bulk_path_box.layout.display = "flex" if fmt in ("csv", "jsonl") else "none"
        if fmt in ("csv", "jsonl"):
            self.bulk_path_box.value = str(Path(self.bulk_path_box.value or "kv-export").with_suffix(f".{fmt}"))

    def _on_state(self, _change: Any = None) -> None:
        busy = self.bulk_state in ("planning", "running")
        for b in (self.bulk_dry_button, self.bulk_run_button):
            b.disabled = self.readonly or busy
            b.tooltip = BULK_READONLY_REFUSAL if self.readonly else ""
        if not self.readonly and not busy and not self.bulk_ready:
            self.bulk_run_button.disabled = True
            self.bulk_run_button.tooltip = "Make a dry run of this pattern and action first"
        self.bulk_action_box.disabled = busy
        self.bulk_cancel_button.disabled = not busy
        if self.readonly:  # a note on what this token may do, not an error
            self.bulk_result.value = message_html(BULK_READONLY_REFUSAL, "info")

    def _on_text(self, _change: Any = None) -> None:
        kind = STATE_KIND.get(self.bulk_state, "info")
        if self.bulk_summary is not None and self.bulk_state == "done" and self.bulk_summary.failed:
            kind = "error"
        self.bulk_result.value = message_html(self.bulk_text, kind)
