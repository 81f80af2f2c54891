"""Deliveries: follow the messages the queue delivers, as they are delivered. One row per message
(destination, state, attempts, the destination's answers, the next retry, whether it is in the DLQ), a
chart with a lane per message and a marker per state it went through, and counts by state.

It reads the newest page of the events log (``GET /v2/events``, up to ``count`` events: one request),
filtered as given (``label``, ``url``, ``queue_name``, ``topic_name``, ``schedule_id``), and folds it by
message (:func:`svckit.frames.deliveries_frame`). ``follow()`` (the Follow toggle) reads it again every
``interval`` seconds on a background job until ``stop()``; ``refresh()`` reads it once.
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.errors import SvcError
from svckit.widgets._chart import Chart
from svckit.widgets._common import MessageBar, badge, frame_html, positive, style_widget
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets._plots import deliveries_figure
from svckit.widgets._plots.deliveries import EVENT_STYLE
from svckit.widgets._static import StaticView

#: the table's columns, in order
COLUMNS = ["message_id", "url", "state", "attempts", "statuses", "next_retry_at", "in_dlq", "label", "error"]


class Deliveries(StaticView, W.VBox):
    """``Deliveries(queue, label="billing")`` with an ``svckit.queue.Queue`` client."""

    following = T.Bool(False)
    interval = T.Float(2.0, help="seconds between two reads while following")
    count = T.Int(1000, help="events read at a time (the newest)")
    message = T.Unicode("")
    message_kind = T.Unicode("info")
    refreshed = T.Int(0)

    @T.validate("interval", "count")
    def _positive(self, proposal: Any) -> Any:
        return positive(proposal)

    def __init__(self, queue: Any, *, autorefresh: bool = True, **filters: Any) -> None:
        self.queue = queue
        self.filters = filters
        self.events = pd.DataFrame()
        self.frame = pd.DataFrame()
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.follow_toggle = W.ToggleButton(description="Follow", icon="play", layout=W.Layout(width="100px"))
        self.summary = W.HTML()
        self.msg = MessageBar()
        self.figure = Chart().add_class("svc-deliveries-chart")
        self.table = W.HTML()
        self.table.add_class("svc-deliveries-table")
        self.painter = BackgroundJob(name="svckit-deliveries")
        self.loader = BackgroundJob(name="svckit-deliveries-read")  # one read: the Refresh button's
        super().__init__([style_widget(), W.HBox([self.refresh_button, self.follow_toggle, self.summary],
                                                 layout=W.Layout(align_items="center", flex_flow="row wrap")),
                          self.msg, self.figure, self.table])
        self.add_class("svc-deliveries")
        T.link((self, "message"), (self.msg, "message"))
        T.link((self, "message_kind"), (self.msg, "message_kind"))
        self.refresh_button.on_click(lambda _b: self.refresh(background=True))
        self.follow_toggle.observe(self._on_toggle, names="value")
        if autorefresh:
            self.refresh()

    # -- public -------------------------------------------------------------------------------------
    def refresh(self, background: bool = False) -> pd.DataFrame:
        """Read the newest events again and redraw; in a background job with ``background`` (what the
        Refresh button does). Returns the frame by message (the one shown until then, when the read
        runs in the background or another is under way)."""
        if not self.loader.running:
            self.loader.start(lambda _progress, _cancel: self._read(), on_done=self._took, background=background)
        return self.frame

    def wait(self, timeout: float | None = 60) -> bool:
        """Wait for a read under way to be shown; True once none is running."""
        return self.loader.wait(timeout)

    def _read(self) -> Any:
        """The newest events (in the job's thread), or why they were not read."""
        try:
            return self.queue.events(count=self.count, **self.filters)
        except SvcError as exc:
            return exc

    def _took(self, page: Any) -> None:
        if isinstance(page, SvcError):
            self.message_kind, self.message = "error", f"Reading the events log failed: {page}"
            return
        self.events = frames.events_frame(page)
        self.frame = frames.deliveries_frame(page)
        self.refreshed += 1
        if self.message_kind == "error":
            self.message = ""
        self._draw()

    def follow(self) -> None:
        """Read and redraw every ``interval`` seconds, until :meth:`stop`."""
        if self.following:
            return
        self.painter.start(self._paint)
        self.following = True
        self.follow_toggle.value, self.follow_toggle.description, self.follow_toggle.icon = True, "Stop", "stop"

    def close(self) -> None:
        """Stop following and drop a read under way, then close the widget."""
        self.painter.close()
        self.loader.close()
        super().close()

    def stop(self, timeout: float = 5.0) -> bool:
        self.painter.cancel()
        ended = self.painter.wait(timeout)
        self.following = False
        self.follow_toggle.value, self.follow_toggle.description, self.follow_toggle.icon = False, "Follow", "play"
        return ended

    # -- drawing ------------------------------------------------------------------------------------
    def _draw(self) -> None:
        frame = self.frame
        counts = frame["state"].value_counts() if len(frame) else pd.Series(dtype=int)
        parts = [badge(f"{state.lower()} {int(n):,}", EVENT_STYLE.get(state, ("#4b5563", ""))[0])
                 for state, n in counts.items() if n]
        in_dlq = int(frame["in_dlq"].sum()) if len(frame) else 0
        what = f"{len(frame):,} message{'s' if len(frame) != 1 else ''}"
        self.summary.value = f'<span class="svc-muted">{what}</span> ' + " ".join(parts) + (
            f' <span class="svc-muted">· {in_dlq:,} in the DLQ</span>' if in_dlq else "")
        self.figure.show(deliveries_figure(self.events))
        shown = frame[COLUMNS] if len(frame) else frame
        self.table.value = frame_html(shown, max_rows=100) if len(frame) else \
            '<div class="svc-muted">no deliveries yet: publish a message, or widen the filters</div>'

    def _paint(self, _progress: Any, cancel: threading.Event) -> None:
        while not cancel.wait(self.interval):
            try:
                self.refresh()
            except Exception as exc:  # noqa: BLE001 - keep following; say what failed
                self.message_kind, self.message = "error", f"Redraw failed: {exc}"

    def _on_toggle(self, change: Any) -> None:
        if change["new"] and not self.following:
            self.follow()
        elif not change["new"] and self.following:
            self.stop()
