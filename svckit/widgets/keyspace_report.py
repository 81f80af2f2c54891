"""Keyspace report: memory and key count per prefix, biggest keys, TTLs and big values, sampled or complete.

``KeyspaceReport(kv)`` shows a pattern, a sample size (or "complete"), Run with a progress bar and
Cancel; the pass runs in a thread (:func:`svckit.kv.analyze_keyspace` does the work) and its result
lands in ``report`` and the ``has_report`` / ``running`` / ``message`` traits, then in tables and two
figures (a treemap of memory by prefix, a histogram of TTLs) under a line stating the sample size
and the error of the estimates.

Public methods (``run()``, ``cancel()``, ``wait()``) are separate from the button handlers, so tests
drive the widget without a browser.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit.kv.analysis import KeyspaceReport as Report
from svckit.kv.analysis import analyze_keyspace
from svckit.kv.formats import format_bytes
from svckit.widgets._chart import Chart
from svckit.widgets._common import MessageBar, frame_html, muted_html, positive, style_widget
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets._plots import memory_treemap_figure, ttl_histogram_figure
from svckit.widgets._static import StaticView


def _bytes_cell(value: Any) -> str:
    return '<span class="svc-muted">—</span>' if value is None or pd.isna(value) else html.escape(format_bytes(value))


def _count_cell(value: Any) -> str:
    return '<span class="svc-muted">—</span>' if value is None or pd.isna(value) else f"{value:,.0f}"


def _share_cell(value: Any) -> str:
    return '<span class="svc-muted">—</span>' if value is None or pd.isna(value) else f"{value:.1%}"


#: figure widths in pixels: the two figures side by side
TREEMAP_WIDTH, HISTOGRAM_WIDTH = 600, 460
FORMATTERS: dict[str, Callable[[Any], str]] = {"memory": _bytes_cell, "memory ±": _bytes_cell, "bytes": _bytes_cell, "keys": _count_cell,
              "keys ±": _count_cell, "share": _share_cell, "share ±": _share_cell, "length": _count_cell}


class KeyspaceReport(StaticView, W.VBox):
    """Analyse a keyspace: ``KeyspaceReport(kv)`` (an ``svckit.kv.KV`` client)."""

    pattern = T.Unicode("*")
    sample = T.Int(10_000, help="keys described in a sampled pass")
    complete = T.Bool(False, help="describe every key instead of a sample")
    seed = T.Int(0)
    running = T.Bool(False)
    has_report = T.Bool(False)
    message = T.Unicode("")
    message_kind = T.Unicode("info")

    @T.validate("sample")
    def _positive(self, proposal: Any) -> int:
        return positive(proposal)

    def __init__(self, kv: Any, *, pattern: str = "*", sample: int = 10_000, complete: bool = False,
                 **options: Any) -> None:
        self.kv = kv
        #: extra keyword arguments of analyze_keyspace (delimiter, depth, top, big_value_bytes ...)
        self.options = options
        self.report: Report | None = None
        self.cancelled_report: Report | None = None  # the partial figures of the last cancelled pass
        self.pattern_box = W.Text(description="pattern", layout=W.Layout(width="260px"))
        self.sample_box = W.BoundedIntText(description="sample", min=2, max=10_000_000, step=1000,
                                           layout=W.Layout(width="200px"))
        self.complete_box = W.Checkbox(description="complete pass (every key)", indent=False,
                                       layout=W.Layout(width="220px"))
        self.run_button = W.Button(description="Run", button_style="primary", icon="play", layout=W.Layout(width="90px"))
        self.cancel_button = W.Button(description="Cancel", icon="stop", disabled=True, layout=W.Layout(width="90px"))
        self.controls = W.HBox([self.pattern_box, self.sample_box, self.complete_box, self.run_button,
                                self.cancel_button], layout=W.Layout(align_items="center", flex_flow="row wrap"))
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="320px"))
        self.progress_label = W.HTML(muted_html("not run yet"))
        self.progress_row = W.HBox([self.progress, self.progress_label], layout=W.Layout(align_items="center"))
        self.message_view = MessageBar()
        self.summary_view = W.HTML()
        self.treemap = Chart(memory_treemap_figure(pd.DataFrame(
            columns=["level", "prefix", "parent", "keys", "memory", "memory ±"])).update_layout(width=TREEMAP_WIDTH))
        self.histogram = Chart(ttl_histogram_figure(pd.DataFrame(columns=["ttl", "keys", "keys ±"]))
                               .update_layout(width=HISTOGRAM_WIDTH))
        self.figures = W.HBox([self.treemap, self.histogram], layout=W.Layout(flex_flow="row wrap"))
        self.table_views = {name: W.HTML() for name in ("by prefix", "by type", "TTL", "biggest", "big values")}
        self.tables = W.Tab(children=list(self.table_views.values()), titles=list(self.table_views))
        self.job = BackgroundJob(self.progress, self.progress_label, name="svckit-keyspace-report")
        super().__init__([style_widget(), self.controls, self.progress_row, self.message_view, self.summary_view,
                          self.figures, self.tables])
        self.add_class("svc-keyspace-report")
        for name, value in (("pattern", pattern), ("sample", sample), ("complete", complete)):
            setattr(self, name, value)
        T.link((self, "pattern"), (self.pattern_box, "value"))
        T.link((self, "sample"), (self.sample_box, "value"))
        T.link((self, "complete"), (self.complete_box, "value"))
        T.link((self, "message"), (self.message_view, "message"))
        T.link((self, "message_kind"), (self.message_view, "message_kind"))
        self.run_button.on_click(lambda _b: self.run())
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.observe(self._on_complete, names=["complete"])
        self.observe(self._on_running, names=["running"])
        self._on_complete()

    # ------------------------------------------------------------------ public

    def run(self, *, background: bool = True) -> None:
        """Start a pass with the current settings (a background job unless ``background=False``)."""
        if self.running:
            return
        self.running = True
        self.message = ""
        pattern, sample, seed = self.pattern or "*", None if self.complete else self.sample, self.seed

        def work(progress: Any, cancel: threading.Event) -> Report:
            return analyze_keyspace(self.kv, pattern, sample=sample, seed=seed, progress=progress, cancel=cancel,
                                    **self.options)

        self.job.start(work, on_done=self._done, on_error=self._failed, background=background)

    def cancel(self) -> None:
        """Stop the running pass at its next request; the previous report stays shown."""
        self.job.cancel()

    def close(self) -> None:
        """Drop a pass under way (its report is never drawn), then close the widget."""
        self.job.close()
        super().close()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background pass; True when none is running any more."""
        self.job.wait(timeout)
        return not self.running

    def show(self, report: Report) -> None:
        """Draw a report (also one computed outside the widget)."""
        self.running = False
        self.report = report
        self.summary_view.value = (f'<div class="svc-msg info" style="font-size:13px">{html.escape(report.summary())}'
                                   "</div>")
        done = report.sample_size
        self.progress.max, self.progress.value = max(done, 1), done
        self.progress_label.value = muted_html(f"done: {done:,} keys described")
        self.treemap.show(memory_treemap_figure(report.by_prefix).update_layout(width=TREEMAP_WIDTH))
        self.histogram.show(ttl_histogram_figure(report.ttl).update_layout(width=HISTOGRAM_WIDTH))
        sampled = not report.complete
        prefix = report.by_prefix.drop(columns=["parent"] + ([] if sampled else ["keys ±", "memory ±", "sampled"]))
        ttl = report.ttl if sampled else report.ttl.drop(columns=["keys ±", "sampled"])
        by_type = report.by_type if sampled else report.by_type.drop(columns=["keys ±", "memory ±", "sampled"])
        views = {"by prefix": prefix, "by type": by_type, "TTL": ttl, "biggest": report.biggest,
                 "big values": report.warnings}
        for name, frame in views.items():
            body = frame_html(frame, max_rows=100, formatters=FORMATTERS) if len(frame) else \
                '<div class="svc-muted">none</div>'
            self.table_views[name].value = f'<div style="max-height:320px;overflow-y:auto">{body}</div>'
        self.has_report = True

    # ------------------------------------------------------------------ handlers

    def _done(self, report: Report) -> None:
        if report.cancelled:  # partial figures: the last whole report stays shown
            self.running, self.cancelled_report = False, report
            self.message_kind, self.message = "info", report.summary()
        else:
            self.show(report)

    def _failed(self, exc: BaseException) -> None:
        self.running = False
        self.message_kind, self.message = "error", f"The analysis failed: {exc}"

    def _on_running(self, _change: Any = None) -> None:
        self.run_button.disabled, self.cancel_button.disabled = self.running, not self.running

    def _on_complete(self, _change: Any = None) -> None:
        self.sample_box.disabled = self.complete
